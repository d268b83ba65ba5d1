"""Bad SQLite states give clear facts, never tracebacks, and reading never writes next to the index.

Every state is made from a COPY of a real QMD index written by the real qmd 2.8.3: corrupt pages, a
truncated file, a writer holding a lock, content only in an uncheckpointed WAL (with and without ``-shm``),
a 0-byte file, a directory in its place, a text file, a missing file.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawprobe.core.probes.qmd_index import managed_collection_names, qmd_paths, read_qmd_index, to_vectors
from clawprobe.core.probes.sqlite_ro import inspect_header, open_ro
from tests.testbed import run_qmd

WAL_ONLY_WRITER = """
import os, sqlite3, sys
src = sqlite3.connect(sys.argv[1]); dst = sqlite3.connect(sys.argv[2])
dst.execute("PRAGMA journal_mode=wal"); dst.execute("PRAGMA wal_autocheckpoint=0")
src.backup(dst)
os._exit(0)  # killed before any checkpoint: the content lives only in the -wal
"""

LOCK_HOLDER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive-wal":
    con.execute("PRAGMA locking_mode=EXCLUSIVE")
    con.execute("BEGIN EXCLUSIVE"); con.execute("UPDATE documents SET title = title"); con.execute("COMMIT")
    con.execute("SELECT count(*) FROM documents").fetchone()
else:
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(30)
"""


@pytest.fixture(scope="module")
def real_index(oc_home_factory, testbed) -> Path:
    """A clean, checkpointed real QMD index (3 documents)."""
    home = oc_home_factory(name="sqlite-src")
    root, mem = managed_collection_names(home.agent_id)
    home.write_memory_md()
    home.write_memory("a.md", "# A\n\nalpha\n")
    home.write_memory("b.md", "# B\n\nbeta\n")
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        assert run_qmd(home, None, *args, testbed=testbed).rc == 0
    return home.qmd_index()


def _state_with(tmp_path: Path, make) -> tuple[Path, object]:
    """A state dir whose agent index is produced by ``make(db_path)``; returns (index dir, QmdPaths)."""
    paths = qmd_paths(tmp_path / "state", "main")
    db = Path(paths.db)
    db.parent.mkdir(parents=True)
    make(db)
    return db.parent, paths


def _listing(d: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in d.iterdir()}


def test_clean_wal_index_is_read_immutable_without_creating_sidecars(tmp_path, real_index):
    d, paths = _state_with(tmp_path, lambda db: shutil.copyfile(real_index, db))
    before = _listing(d)
    f = read_qmd_index(paths, {})
    assert f.open.state == "ok" and f.open.method == "immutable" and f.documents_active == 3
    assert _listing(d) == before, "no -wal/-shm may appear next to the index"


def test_corrupt_pages(tmp_path, real_index):
    def make(db: Path) -> None:
        shutil.copyfile(real_index, db)
        data = bytearray(db.read_bytes())
        mid = len(data) // 3
        data[mid:2 * mid] = b"\xde\xad\xbe\xef" * ((2 * mid - mid) // 4) + b"\x00" * ((2 * mid - mid) % 4)
        db.write_bytes(bytes(data))
    _, paths = _state_with(tmp_path, make)
    f = read_qmd_index(paths, {})
    assert f.open.state == "corrupt" and "malformed" in (f.open.detail or "")
    assert not f.readable and to_vectors(f).pending is None


def test_truncated_file(tmp_path, real_index):
    _, paths = _state_with(tmp_path, lambda db: db.write_bytes(real_index.read_bytes()[: 8192 + 100]))
    f = read_qmd_index(paths, {})
    assert f.open.state == "truncated" and "header declares" in f.open.detail
    assert "truncated" in to_vectors(f).detail


def _hold(paths, mode: str, busy_timeout_s: float = 0.2):
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, paths.db, mode], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        f = read_qmd_index(paths, {}, busy_timeout_s=busy_timeout_s)
        return f, time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()


def test_writer_holding_an_exclusive_lock_is_reported_locked_quickly(tmp_path, real_index):
    """A rollback-journal store (E1/E2 builtin style) with a writer inside BEGIN EXCLUSIVE."""
    _, paths = _state_with(tmp_path, lambda db: shutil.copyfile(real_index, db))
    f, took = _hold(paths, "rollback")
    assert f.open.state == "locked" and "locked" in f.open.detail
    assert took < 5, "a short busy timeout, not qmd's 120 s"


def test_wal_writer_in_exclusive_locking_mode_is_read_from_a_private_copy(tmp_path, real_index):
    """An exclusive-mode WAL writer keeps no -shm: opening mode=ro would block or create one, so the
    committed content is read from a private copy of the file and its -wal."""
    d, paths = _state_with(tmp_path, lambda db: shutil.copyfile(real_index, db))
    f, took = _hold(paths, "exclusive-wal")
    assert f.open.state == "ok" and f.open.method == "private copy" and f.documents_active == 3
    assert not Path(paths.db + "-shm").exists()
    assert took < 5


def test_wal_only_index_is_read_through_its_wal(tmp_path, real_index):
    def make(db: Path) -> None:
        subprocess.run([sys.executable, "-c", WAL_ONLY_WRITER, str(real_index), str(db)], check=True)
    d, paths = _state_with(tmp_path, make)
    assert Path(paths.db).stat().st_size <= 4096 and os.path.getsize(paths.db + "-wal") > 0
    before = _listing(d)
    f = read_qmd_index(paths, {})
    # the writer is gone (no process holds the files, /proc/locks): its -shm may be stale, and a mode=ro open
    # would rebuild it in place — so the files are read through a private copy and left as found (issue 15)
    assert f.open.state == "wal_only" and f.open.method == "private copy" and f.open.lock_pids == []
    assert f.documents_active == 3, "the content in the WAL is what counts"
    assert _listing(d) == before


def test_wal_without_shm_is_read_from_a_private_copy(tmp_path, real_index):
    def make(db: Path) -> None:
        subprocess.run([sys.executable, "-c", WAL_ONLY_WRITER, str(real_index), str(db)], check=True)
        os.unlink(str(db) + "-shm")
    d, paths = _state_with(tmp_path, make)
    before = _listing(d)
    f = read_qmd_index(paths, {})
    assert f.open.method == "private copy" and f.documents_active == 3
    assert _listing(d) == before, "mode=ro would have created -shm here"


@pytest.mark.parametrize("kind,state", [("empty", "empty"), ("dir", "unreadable"), ("text", "not_sqlite"),
                                        ("wal0", "wal_only"), ("missing", "missing")])
def test_unusable_files(tmp_path, real_index, kind, state):
    def make(db: Path) -> None:
        if kind == "empty":
            db.write_bytes(b"")
        elif kind == "dir":
            db.mkdir()
        elif kind == "text":
            db.write_text("<html>not a database</html>\n" * 10)
        elif kind == "wal0":
            db.write_bytes(b"")
            Path(str(db) + "-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 60)
    d, paths = _state_with(tmp_path, make)
    before = _listing(d)
    f = read_qmd_index(paths, {})
    assert f.open.state == state and f.open.detail
    assert not f.readable
    assert _listing(d) == before


def test_header_inspection_is_pure_stat(tmp_path, real_index):
    db = tmp_path / "x.sqlite"
    shutil.copyfile(real_index, db)
    h = inspect_header(str(db))
    assert h.state == "ok" and h.journal == "wal" and h.page_size == 4096
    assert h.header_pages * h.page_size == db.stat().st_size
    with open_ro(db) as (con, info):
        assert con is not None and info.ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.sqlite"]


_KILLED_WRITER = """
import os, signal, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("PRAGMA cache_size = 5")  # pages of an open transaction spill into the -wal
if sys.argv[2] == "committed":
    con.execute("INSERT INTO t VALUES (randomblob(500))")
con.execute("BEGIN")
for _ in range(2000):
    con.execute("INSERT INTO t VALUES (randomblob(500))")
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("kind,expected", [("uncommitted", False), ("committed", True)])
def test_a_killed_writers_wal_says_whether_anything_was_committed(tmp_path, kind, expected):
    """Breaker round 8, n19: a writer killed mid-transaction leaves a -wal of spilled pages and no commit frame —
    nothing any open would apply, so it is no "crashed writer's -wal to checkpoint" (the CLI was not run for it)."""
    from clawprobe.core.probes.qmd_index import index_file_findings
    from clawprobe.core.probes.sqlite_ro import wal_has_commit

    db = tmp_path / "store.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = wal")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()  # the last connection checkpoints and removes the -wal
    p = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(db), kind], capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    wal = f"{db}-wal"
    assert os.path.getsize(wal) > 100_000, "the open transaction spilled into the -wal"
    assert wal_has_commit(wal) is expected
    o = inspect_header(str(db))
    assert o.wal_has_commit is expected
    assert [f.tag for f in index_file_findings(o)] == (["index_wal_pending"] if expected else [])


def test_wal_has_commit_of_what_is_no_wal(tmp_path):
    from clawprobe.core.probes.sqlite_ro import wal_has_commit

    (tmp_path / "zeros").write_bytes(bytes(4096))
    assert wal_has_commit(str(tmp_path / "zeros")) is None
    assert wal_has_commit(str(tmp_path / "absent")) is None
