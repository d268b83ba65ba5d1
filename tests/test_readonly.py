"""clawprobe never writes OpenClaw's or QMD's state.

Every file and directory under the state dir and the workspace is hashed (content, size, mtime) before and
after a full ``clawprobe check`` (the real command line, including the ``openclaw`` CLI probes, the canary
search and the direct qmd cross-check) and after a live dashboard session (fast + slow lanes, file watcher,
keys). Only these may differ (also listed in docs/readonly.md):

* clawprobe's canary file ``memory/clawprobe-canary.md`` — planted before the first snapshot, on request;
* what OpenClaw's own CLI writes whenever it runs (``OPENCLAW_BOOKKEEPING``): its state DB and the builtin
  store it opens, with their ``-wal``/``-shm``;
* SQLite's housekeeping on the QMD index's sidecars (``SQLITE_SIDECARS``): a reader closing the index
  removes an empty ``-wal``/``-shm`` the writer left. The index file itself stays byte-identical.

And SQLite is only ever opened read-only (every ``sqlite3.connect`` a probe makes is recorded), and a
missing database is never created — neither by the fast probes nor by ``clawprobe check --no-openclaw``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from clawprobe.core.probe import clear_caches, discover, fast
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.hardening_helpers import changed, check_env, run_clawprobe, snapshot
from tests.test_probes_env_real import OPENCLAW_BOOKKEEPING, SQLITE_SIDECARS
from tests.testbed import OpenClawHome, builtin_config, qmd_config

CANARY = "memory/clawprobe-canary.md"
ALLOWED = {f"state/{p}" for p in OPENCLAW_BOOKKEEPING + SQLITE_SIDECARS}


@pytest.fixture(scope="module")
def installed(qmd_canary_home, testbed, tmp_path_factory):
    """The indexed 2026.7.35 QMD home plus clawprobe's own canary (planted through ``clawprobe canary plant``,
    indexed by OpenClaw's ``memory index`` so the canary search really runs)."""
    home = qmd_canary_home
    data = tmp_path_factory.mktemp("clawprobe-data")
    env = check_env(home, testbed, data)
    rc, out, err = run_clawprobe(["canary", "plant", "--yes"], env)
    assert rc == 0, err
    assert (home.workspace / CANARY).is_file()
    return home, env


def _roots(home: OpenClawHome) -> tuple[Path, Path]:
    return home.state_dir, home.workspace


def test_clawprobe_check_leaves_state_and_workspace_byte_identical(installed):
    home, env = installed
    before = snapshot(*_roots(home), skip={f"workspace/{CANARY}"})
    rc, out, err = run_clawprobe(["check", "--json", "--save"], env)
    after = snapshot(*_roots(home), skip={f"workspace/{CANARY}"})
    doc = json.loads(out)
    (entry,) = doc["receipts"]
    r = entry["receipt"]
    assert r["canary"]["outcome"] is not None and r["canary"]["expected_path"] == CANARY, r["canary"]
    assert r["backend"]["effective"] == "qmd" and r["qmd"]["store_ok"] is True
    assert changed(before, after) <= ALLOWED, sorted(changed(before, after) - ALLOWED)
    index = f"state/{SQLITE_SIDECARS[0].removesuffix('-wal')}"
    assert before[index] == after[index], "the QMD index itself is byte-identical (content and mtime)"


async def test_dashboard_session_leaves_state_and_workspace_byte_identical(installed, monkeypatch):
    home, env = installed
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", env["CLAWPROBE_DATA_DIR"])
    clear_caches()
    before = snapshot(*_roots(home), skip={f"workspace/{CANARY}"})
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    async with app.run_test(size=(100, 30)) as pilot:
        end = time.monotonic() + 120
        while not (app.report and app.report.current and app.report.current.slow_at):
            assert time.monotonic() < end, "the slow lane never finished"
            await pilot.pause(0.1)
        for key in ("question_mark", "escape", "1", "2", "3", "6"):
            await pilot.press(key)
        await pilot.pause(0.5)
        assert app.report.current.receipt.backend.effective == "qmd"
    after = snapshot(*_roots(home), skip={f"workspace/{CANARY}"})
    assert changed(before, after) <= ALLOWED, sorted(changed(before, after) - ALLOWED)


def test_the_snapshot_sees_every_kind_of_write(tmp_path):
    """The comparison above is only as good as the snapshot: a rewrite with the same bytes (mtime), a new
    empty dir, a new symlink and a removed file are all seen."""
    (tmp_path / "f").write_text("x")
    (tmp_path / "g").write_text("y")
    before = snapshot(tmp_path)
    time.sleep(0.01)
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to("f")
    (tmp_path / "g").unlink()
    name = tmp_path.name
    assert changed(before, snapshot(tmp_path)) == {f"{name}/f", f"{name}/d", f"{name}/l", f"{name}/g"}


# ------------------------------------------------------------------------------------------ missing stores

@pytest.mark.parametrize("backend", ["qmd", "builtin"])
def test_a_missing_database_is_never_created(tmp_path, testbed, backend):
    home = OpenClawHome.create(tmp_path)
    home.write_config(qmd_config("qmd", "search") if backend == "qmd" else builtin_config("none"))
    home.write_memory_md()
    home.write_memory("a.md", "# a\n\nalpha\n")
    env = check_env(home, testbed, tmp_path / "data")
    before = snapshot(*_roots(home))
    clear_caches()
    r = fast(discover(env=env), "main", None)
    assert r.probe_errors == [] or all("not available" not in e for e in r.probe_errors), r.probe_errors
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env)
    assert json.loads(out)["receipts"][0]["verdict"]
    assert snapshot(*_roots(home)) == before
    assert not home.qmd_index().exists() and not home.qmd_index().parent.exists()
    assert not home.builtin_db().exists() and not (home.state_dir / "agents").exists()


def test_every_sqlite_open_is_read_only(installed, monkeypatch):
    """Record every ``sqlite3.connect`` the fast probes make on a real QMD install (index, model cache…)."""
    home, env = installed
    opened: list[tuple[str, bool]] = []
    real_connect = sqlite3.connect

    def spy(database, *args, **kwargs):
        opened.append((str(database), bool(kwargs.get("uri"))))
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", spy)
    clear_caches()
    r = fast(discover(env=env), "main", None)
    assert r.vectors.documents is not None, r.vectors  # the index really was read
    assert opened, "the QMD index is read through sqlite3"
    for db, uri in opened:
        assert uri and db.startswith("file:") and ("mode=ro" in db or "immutable=1" in db), db


# ------------------------------------------------------------------------------------------ a live writer's -wal

@pytest.mark.parametrize("agent_id", ["helper"])
def test_a_store_a_live_writer_holds_in_its_wal_is_read_and_left_as_found(tmp_path, testbed, agent_id):
    """Breaker round 21, #4: the gateway built the agent's index on its first search and holds it in an
    uncheckpointed ``-wal`` (a 4096-byte database file). ``clawprobe check`` reads a private copy taken while the
    writer pauses — the database, its ``-wal`` and ``-shm`` (no read mark) and the workspace are left exactly as
    found — and calls it an index, not "never indexed"."""
    import subprocess
    import sys

    from tests.test_builtin_live_wal import LIVE_WRITER

    home = OpenClawHome.create(tmp_path, agent_id=agent_id)
    home.write_config(builtin_config("none", agents={"list": [{"id": agent_id, "default": True}]}))
    home.write_memory_md()
    home.write_memory("clawprobe-canary.md", "# canary\n")
    db = home.builtin_db(agent_id)
    db.parent.mkdir(parents=True)
    writer = subprocess.Popen([sys.executable, "-c", LIVE_WRITER, str(db), "agent-db"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        assert db.stat().st_size <= 4096 and Path(f"{db}-wal").stat().st_size > 50_000
        env = check_env(home, testbed, tmp_path / "data")
        before = snapshot(*_roots(home))
        rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw", "--agent", agent_id], env)
        assert changed(before, snapshot(*_roots(home))) == set(), "clawprobe check changed a live writer's store"
    finally:
        writer.kill()
        writer.wait()
    (entry,) = json.loads(out)["receipts"]
    assert entry["diagnosis"]["reason"] != "never_indexed", entry["diagnosis"]
    assert entry["receipt"]["builtin"]["store_path"] == str(db), entry["receipt"]["builtin"]
