"""Memory notes another user re-wrote with mode 0600 (a sync tool running as uid 1001; breaker round 7, w17), on the
real OpenClaw 2026.9.6 builtin engine (agent ``night-ops``, provider ``none``). The index still matches them by
size and mtime, but every sync now stops at the first one it cannot open ("sync failed (search): Error: EACCES"),
so nothing changed since is ever indexed. clawprobe said ``unverified · unrecognized_signal`` with ``coverage: ok
3/3``; the measured fact is the disk scan's (mode, owner, confirmed by ``access``), so it is ``stale_index ·
unreadable`` at once — waiting out the lease changes nothing — and the repair is a chown to the gateway's user (this
user's chmod cannot change another user's file). The printed command is run here, then the check is healthy.

clawprobe and OpenClaw run without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (the tests run as root): they stand in for
the gateway's non-root user. Real: one index run, two checks (each a status and a search)."""

from __future__ import annotations

import json
import os
import subprocess

from tests.hardening_helpers import check_env, drop_file_permission_override, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config

AGENT = "night-ops"
OTHER_UID = 1001


def _check(home, testbed, data) -> tuple[int, dict]:
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST))
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300, preexec=drop_file_permission_override)
    assert "Traceback" not in err, err
    doc = json.loads(out)
    (entry,) = doc["receipts"]
    return rc, entry


def test_notes_another_user_made_private_freeze_the_builtin_index_and_a_chown_repairs_it(oc_home_factory, testbed,
                                                                                          tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents={"list": [{"id": AGENT, "default": True}]}),
                           name="foreign", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    synced = home.write_memory("sync/ferry.md", "# sync\n\nThe ferry leaves at OTTER-GATE-19.\n")
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data, AGENT)
    canary = home.workspace / "memory" / "clawprobe-canary.md"
    for note in (synced, canary):
        os.chown(note, OTHER_UID, OTHER_UID)
        note.chmod(0o600)

    rc, entry = _check(home, testbed, data)
    d = entry["diagnosis"]
    assert (rc, d["verdict"], d["reason"]) == (1, "stale_index", "unreadable"), d["evidence"]
    fresh = entry["receipt"]["freshness"]
    assert sorted(fresh["unreadable_files"]) == ["memory/clawprobe-canary.md", "memory/sync/ferry.md"]
    assert fresh["unreadable_foreign"] is True
    assert any(f"owner uid {OTHER_UID}" in e for e in d["evidence"]), d["evidence"]
    cmd = d["next_action"]["command"]
    assert cmd.startswith('sudo chown "$(id -un)" ') and str(synced) in cmd and str(canary) in cmd, cmd

    subprocess.run(["bash", "-c", cmd.removeprefix("sudo ")], check=True, timeout=30)  # the tests already run as root
    rc, entry = _check(home, testbed, data)
    assert (rc, entry["diagnosis"]["verdict"]) == (0, "healthy"), entry["diagnosis"]["evidence"]
