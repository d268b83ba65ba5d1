"""A builtin store a live gateway wrote and has not checkpointed is an index, read through its ``-wal`` — and left
exactly as found (breaker round 21, finding 4).

OpenClaw 2026.9.6 builds a second agent's index on that agent's first ``memory_search`` inside the running gateway:
the database file stays at its 4096-byte header page and the index (≈ 900 KB) sits in the ``-wal`` the gateway
keeps open. clawprobe called that ``wal_only`` (a writer killed before its first checkpoint) → "never indexed",
and told the operator to build an index that existed. ``wal_only`` is only for a ``-wal`` no live connection
holds; a held one is the writer's database, read from a private copy of the file and its ``-wal`` taken while
neither changes (a ``mode=ro`` open would set a read mark in the writer's ``-shm``).

The live writer here is a Python process holding its connection open (auto-checkpoint off), so the held ``-wal``
and ``-shm`` are real SQLite files with a real lock in ``/proc/locks``; each layout (E3+ agent database, E1/E2
sidecar) and agent id gets its own store.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.core.probes.builtin_index import builtin_store_candidates, read_builtin_index
from clawprobe.core.probes.sqlite_ro import inspect_header

#: writes a builtin store in WAL mode and keeps the connection open, never checkpointing (the gateway's shape)
LIVE_WRITER = """
import json, sqlite3, sys, time
db, layout = sys.argv[1], sys.argv[2]
n = {"agent-db": ("memory_index_meta", "memory_index_sources", "memory_index_chunks"),
     "legacy-sidecar": ("meta", "files", "chunks")}[layout]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode = wal")
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("BEGIN")
con.execute(f"CREATE TABLE {n[0]} (key TEXT PRIMARY KEY, value TEXT)")
con.execute(f"CREATE TABLE {n[1]} (path TEXT PRIMARY KEY, source TEXT, hash TEXT, mtime INTEGER, size INTEGER)")
con.execute(f"CREATE TABLE {n[2]} (id TEXT PRIMARY KEY, path TEXT, source TEXT, start_line INTEGER, end_line INTEGER,"
            " hash TEXT, model TEXT, text TEXT, embedding TEXT, updated_at INTEGER)")
con.execute(f"INSERT INTO {n[0]} VALUES ('memory_index_meta_v1', ?)",
            (json.dumps({"provider": "none", "model": "fts-only", "sources": ["memory"], "ftsTokenizer": "unicode61"}),))
for i, path in enumerate(("MEMORY.md", "memory/clawprobe-canary.md")):
    con.execute(f"INSERT INTO {n[1]} VALUES (?, 'memory', ?, 1796600000000, 120)", (path, f"h{i}"))
    for c in range(40):  # enough pages that the -wal, not the 4096-byte file, holds the index
        con.execute(f"INSERT INTO {n[2]} VALUES (?, ?, 'memory', 1, 8, ?, 'fts-only', ?, '[]', 1796600000000)",
                    (f"{i}-{c}", path, f"c{i}{c}", "note text " * 60))
con.execute("COMMIT")
print("ready", flush=True)
time.sleep(120)
"""


def _files(d: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``d``: name → (sha256 of its bytes, mtime) — the writer's ``-shm`` too: a ``mode=ro``
    reader would set a read mark in it."""
    return {str(p.relative_to(d)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def live_store(tmp_path):
    procs = []

    def start(layout: str, agent_id: str) -> tuple[Path, Path]:
        state = tmp_path / f"state-{layout}-{agent_id}"
        db = Path(dict(builtin_store_candidates(state, agent_id))[layout])
        db.parent.mkdir(parents=True)
        p = subprocess.Popen([sys.executable, "-c", LIVE_WRITER, str(db), layout], stdout=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        return state, db

    yield start
    for p in procs:
        p.kill()
        p.wait()


@pytest.mark.parametrize("layout,agent_id", [("agent-db", "helper"), ("legacy-sidecar", "ops-2")])
def test_a_store_a_live_writer_keeps_in_its_wal_is_read_not_never_indexed(live_store, layout, agent_id):
    state, db = live_store(layout, agent_id)
    assert db.stat().st_size <= 4096 and Path(f"{db}-wal").stat().st_size > 50_000, "the index lives in the -wal"
    before = _files(state)
    f = read_builtin_index(state, agent_id)
    assert f.open is not None and f.open.lock_pids, "the live writer is seen in /proc/locks"
    assert f.open.state == "ok" and f.open.method == "private copy (live writer)", f.open
    assert not f.never_written and not f.memory_never_indexed
    assert f.memory_files == 2 and f.chunks == 80 and f.meta is not None and f.meta.fts_only
    assert _files(state) == before, "reading a live writer's store changed their files"


def test_the_same_files_with_the_writer_gone_are_still_wal_only(live_store, tmp_path):
    """The other side of the rule: copied out of the writer's hands (no process holds them), the same bytes are a
    writer that died before its checkpoint — read through a private copy, the files left as found."""
    state, db = live_store("agent-db", "main")
    orphan = tmp_path / "orphan"
    orphan.mkdir()
    for suffix in ("", "-wal", "-shm"):
        (orphan / f"x.sqlite{suffix}").write_bytes(Path(f"{db}{suffix}").read_bytes())
    before = _files(orphan)
    info = inspect_header(str(orphan / "x.sqlite"))
    assert info.lock_pids == [] and info.state == "wal_only", info
    assert _files(orphan) == before



#: a writer that keeps committing into its ``-wal`` (auto-checkpoint off) on command: ``add N`` commits N rows,
#: ``ckpt`` checkpoints them into the database file (PASSIVE: the ``-wal`` keeps its size)
COMMITTING_WRITER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA journal_mode = wal")
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
print("ready", flush=True)
for line in sys.stdin:
    verb, *arg = line.split()
    if verb == "add":
        con.execute("BEGIN")
        con.executemany("INSERT INTO notes (text) VALUES (?)", [("note text " * 40,)] * int(arg[0]))
        con.execute("COMMIT")
    elif verb == "ckpt":
        con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    print("ok", flush=True)
"""


def test_a_writer_committing_into_its_wal_costs_a_copy_of_the_wal_only(tmp_path, monkeypatch):
    """Each read of a live writer's store used to copy its database file and ``-wal`` again (up to 256 MiB per
    fast probe while an embed run writes). The database file is unchanged until a checkpoint, so it is copied
    once per version and each read copies the ``-wal`` — and still sees every commit, before and after a
    checkpoint; the writer's files are left as found."""
    from clawprobe.core.probes import sqlite_ro

    db = tmp_path / "index.sqlite"
    writer = subprocess.Popen([sys.executable, "-c", COMMITTING_WRITER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdin is not None and writer.stdout is not None
    copied: list[str] = []
    real_copyfile = sqlite_ro.shutil.copyfile

    def measured_copyfile(src, dst):
        copied.append(Path(src).name)
        return real_copyfile(src, dst)

    monkeypatch.setattr(sqlite_ro.shutil, "copyfile", measured_copyfile)

    def tell(line: str) -> None:
        writer.stdin.write(line + "\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "ok"

    def rows() -> int:
        copied.clear()
        with sqlite_ro.open_ro(db) as (con, info):
            assert con is not None and info.method == "private copy (live writer)", info
            return int(con.execute("SELECT count(*) FROM notes").fetchone()[0])

    def settle() -> None:  # a database file written 10 s ago (a copy is kept only of one that is quiet)
        t = db.stat().st_mtime - 10
        os.utime(db, (t, t))

    try:
        assert writer.stdout.readline().strip() == "ready"
        tell("add 300")
        settle()
        before = _files(tmp_path)
        assert rows() == 300 and copied == ["index.sqlite", "index.sqlite-wal"]
        tell("add 200")
        assert rows() == 500 and copied == ["index.sqlite-wal"], "the unchanged database file was copied again"
        tell("ckpt")
        tell("add 7")
        settle()
        assert rows() == 507 and copied == ["index.sqlite", "index.sqlite-wal"], "a checkpointed file is new"
        assert rows() == 507 and copied == ["index.sqlite-wal"]
        assert set(_files(tmp_path)) == set(before), "reading left a file next to the writer's"
    finally:
        writer.kill()
        writer.wait()
