"""A builtin store cut short (a disk that filled mid-write, a copy that stopped): OpenClaw 2026.9.6 cannot
rebuild it in place — ``memory index --force`` and ``doctor --fix`` open the old file first and fail
"database disk image is malformed" (breaker round 5). The repair moves it aside with its -wal/-shm; the
next check after OpenClaw's index run is healthy, not held red by the "malformed" lines its log kept from
before the repair. Real 2026.9.6: one index run, a check, the suggested command run as printed, another index
run, a check."""

from __future__ import annotations

import os
import subprocess

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, builtin_config, run_openclaw


def test_a_truncated_store_is_moved_aside_and_the_next_check_is_healthy(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="truncated")
    spec = indexed(home, testbed, OC_LATEST)
    db = home.builtin_db()
    os.truncate(db, os.path.getsize(db) // 2)
    ctx = context(home, testbed, OC_LATEST)
    r = probe.collect(ctx, "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "index_corrupt"), (d.evidence, r.probe_errors)
    assert r.builtin.store_damage == "truncated" and "--force" not in d.next_action.command
    assert any("malformed" in e.line for e in r.ledger) or "truncated" in d.evidence[0]

    moved = subprocess.run(d.next_action.command, shell=True, capture_output=True, text=True, timeout=30)
    assert moved.returncode == 0, moved.stderr
    assert not db.exists() and any(p.name.startswith("set-aside-") for p in db.parent.iterdir())
    again = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed)
    assert again.rc == 0, again.stderr
    ctx = context(home, testbed, OC_LATEST)
    r = probe.collect(ctx, "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("healthy", None), (d.evidence, r.probe_errors)
    assert r.builtin.store_sound is True and r.canary.outcome == "found"
