"""RW46 on the real OpenClaw 2026.9.6 builtin engine: a real indexed state, three real copies of its DB
named ``*.memory-reindex-<uuid>`` with 64 MiB (sparse) ``-wal`` files next to it, and the aborted-rebuild
lines in the log ``logging.file`` points at — through ``clawprobe.core.probe`` + ``refine_live``."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta

from clawprobe.core import probe
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.runrecord import record_run
from tests.rw_support import check, context, live, plant
from tests.testbed import OC_LATEST, builtin_config

RACE = ("sync failed (search): Error: Memory index changed while full reindex was building (expected revision {0}, "
        "found {1}); retry the full reindex.")


def test_rw46_variant_real_96_orphans(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="rw46")
    home.write_memory_md()
    spec = plant(home)
    ctx = context(home, testbed, OC_LATEST)
    now = datetime.now(UTC)
    # the builtin search syncs the index, so a real DB exists afterwards (a generous deadline: the shared host is slow)
    env = probe._cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
    run = record_run(oc.run_search(ctx.openclaw, spec.token, "main", env, cwd=env.get("HOME"), timeout_s=240),
                     keep=(spec.token,))
    ev = probe.SlowEvidence(taken_at=now, agent_id="main", canary=spec, search_run=run)
    assert oc.search_of_run(run).hits, run
    db = home.builtin_db()
    for i in range(3):
        copy = db.with_name(f"{db.name}.memory-reindex-{i}c1e5f0a-8d2b-4e6f-a1b3-7c9d0e2f4a6{i}")
        shutil.copy(db, copy)
        with open(f"{copy}-wal", "wb") as f:
            f.truncate(64 * 2**20)
    now = datetime.now(UTC)  # after the search (OpenClaw may have rewritten its config meanwhile)
    with open(home.log_file, "a", encoding="utf-8") as f:
        for i in range(3):
            at = (now - timedelta(seconds=3 - i)).isoformat().replace("+00:00", "Z")
            f.write(json.dumps({"0": json.dumps({"subsystem": "memory"}), "1": RACE.format(40 + i, 41 + i),
                                "_meta": {"date": at, "logLevelName": "WARN"}, "time": at}) + "\n")
    r = live(ctx, "main", ev, now + timedelta(seconds=1))
    d = check("RW46-real-96", r, evidence="real 2026.9.6 builtin index, three real DB copies + log lines")
    w = next(f for f in d.warnings if f.tag == "reindex_orphans")
    assert w.message.startswith("3 orphaned reindex copies (19") and "3 aborted full reindex" in w.message
    assert db.exists()  # clawprobe never touches the live index
