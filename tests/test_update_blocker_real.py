"""Another process holds the agent's QMD index inside a write transaction (a backup tool, an ``sqlite3`` shell left
in ``BEGIN``; breaker round 10, s05), on the real OpenClaw 2026.7.35 with qmd 2.8.3. Searches still answer from the
old index, but every ``qmd update`` waits on the WAL write lock: the printed ``openclaw memory index`` hung. Now the
holder is read from ``/proc/locks`` (the ``-shm``'s write byte), a change on disk is stale at once — no update can
write — and the action names the holder; with it stopped, one index run makes the check fresh. Real: two index runs,
one full check, one ``check --no-openclaw``."""

from __future__ import annotations

import json
import subprocess
import sys

from clawprobe.core.probes.file_locks import wal_writer
from tests.hardening_helpers import check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

HOLD = ("import sqlite3, sys, time\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('BEGIN IMMEDIATE')\n"
        "con.execute(\"INSERT INTO documents_fts(documents_fts) VALUES('optimize')\")\n"
        "print('held', flush=True)\n"
        "time.sleep(300)\n")


def test_a_foreign_write_lock_on_the_qmd_index_is_named_and_the_change_is_stale_now(oc_home_factory, testbed,
                                                                                     tmp_path):
    home = oc_home_factory(qmd_config(), name="walheld")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data, version=OC_QMD)
    home.write_memory("heron.md", "# Heron\n\nThe locked word is lockedheron.\n")  # seconds old: inside the lease
    db = str(home.qmd_index())
    # the index path early on its command line, as `sqlite3 <db>` has it (round 11, s12: "/qmd/" in it hid the holder)
    holder = subprocess.Popen([sys.executable, "-", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdin is not None
        holder.stdin.write(HOLD)
        holder.stdin.close()
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert wal_writer(db) is not None and wal_writer(db).pid == holder.pid
        rc, out, err = run_clawprobe(["check", "--json"], check_env(home, testbed, data), timeout=300)
        got = json.loads(out)["receipts"][0]
        assert (rc, got["verdict"]) == (1, "stale_index"), (got["diagnosis"]["evidence"], err[-300:])
        assert got["receipt"]["freshness"]["write_holder"]["pid"] == holder.pid
        assert got["next_command"] == f"ps -o pid,etime,args -p {holder.pid}"
        assert f"pid {holder.pid}" in got["next_action"]
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data), timeout=200)
    fresh = json.loads(out)["receipts"][0]["receipt"]["freshness"]
    assert fresh["stale_reason"] is None and fresh["write_holder"] is None
