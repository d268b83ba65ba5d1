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

import pytest

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


def _gateway_search(home, gw, testbed, agent: str, query: str) -> dict:
    """The running gateway's own memory_search (the payload the agent gets)."""
    params = json.dumps({"name": "memory_search", "args": {"query": query}, "agentId": agent})
    r = run_openclaw(home, OC_QMD, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                     "--token", gw.token, "--json", timeout=120, path_dirs=[testbed.bin_dir], testbed=testbed)
    assert r.rc == 0, r.stderr[-2000:]
    return json.loads(r.stdout[r.stdout.index("{"):])["output"]["details"]


def _logged(home, text: str, seconds: float = 60) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(text in m for m in home.log_messages()):
            return True
        time.sleep(1)
    return False


@pytest.mark.timeout(900)  # a gateway, two checks, four CLI runs; on a loaded 2-core host each may take a minute
def test_an_update_timeout_no_update_fits_is_stale_now_and_the_timeout_is_raised(oc_home_factory, testbed, tmp_path):
    """Breaker round 23 (r23q): ``memory.qmd.update.updateTimeoutMs: 1`` — the real 2026.7.35 gateway kills every
    ``qmd update`` (boot, session-start, interval, watcher: "qmd update timed out after 1ms"), its memory_search
    never finds a note written after the last index run, and clawprobe said HEALTHY (the note was inside the
    lease). The log's timeout with no completed sync since is the measured fact: stale now, and the action raises
    the timeout (not ``memory index``, which times out the same way — measured); done, the index run takes the note
    in and the check leaves ``stale_index``."""
    from tests.testbed import gateway

    agent = "night-shift"
    home = oc_home_factory(qmd_config(), name="updtimeout", agent_id=agent)
    home.update_config({"agents": {"list": [{"id": agent, "default": True}]}})
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data, agent=agent, version=OC_QMD)
    home.update_config({"memory": {"qmd": {"update": {"updateTimeoutMs": 1}}}})
    home.write_memory("2026-03-03.md", "# Ferry\n\nThe ferry leaves at quokkaferry nine.\n")  # inside the lease
    env = check_env(home, testbed, data)
    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir], testbed=testbed) as gw:
        missed = _gateway_search(home, gw, testbed, agent, "quokkaferry")
        assert _logged(home, "qmd update timed out after 1ms")
        rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    assert missed["results"] == [] and missed.get("provider") == "qmd", missed  # the ground truth
    got = json.loads(out)["receipts"][0]
    d = got["diagnosis"]
    assert (rc, d["verdict"]) == (1, "stale_index"), (d["evidence"], err[-300:])
    assert "timed out after 1ms" in " ".join(d["evidence"]) and "2026-03-03.md" in " ".join(d["evidence"])
    assert d["next_action"]["command"].endswith("config set memory.qmd.update.updateTimeoutMs 120000"), d
    same = run_openclaw(home, OC_QMD, "memory", "index", "--agent", agent, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed)
    assert same.rc != 0 and "timed out after 1ms" in same.stderr + same.stdout  # why the action is not the index run
    raised = run_openclaw(home, OC_QMD, *d["next_action"]["command"].split()[-4:], path_dirs=[testbed.bin_dir],
                          testbed=testbed)
    assert raised.rc == 0, raised.stderr
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", agent, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed).rc == 0  # the walk's next step, now within the timeout
    found = run_openclaw(home, OC_QMD, "memory", "search", "quokkaferry", "--agent", agent, "--json",
                         path_dirs=[testbed.bin_dir], testbed=testbed)
    assert "2026-03-03.md" in found.stdout, found.stdout + found.stderr
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    after = json.loads(out)["receipts"][0]
    assert after["verdict"] != "stale_index" and after["receipt"]["freshness"]["update_timeout"] is None, after
