"""Who holds a SQLite file, read from /proc/locks (real SQLite connections in real processes): a live WAL
connection is seen on the file or its -shm; an exclusive writer is a blocking writer; nobody → nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from clawprobe.core.probes.file_locks import blocking_writer, connection_pids, parse_proc_locks
from clawprobe.core.probes.sqlite_ro import inspect_header

HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    con.execute("PRAGMA locking_mode=EXCLUSIVE")
    con.execute("BEGIN EXCLUSIVE")
    con.execute("INSERT INTO t VALUES (2)")
else:
    con.execute("SELECT count(*) FROM t").fetchone()
    con.execute("BEGIN")
    con.execute("SELECT count(*) FROM t").fetchone()
print("held", flush=True)
sys.stdin.read()
"""


def _db(tmp_path):
    db = tmp_path / "index.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    return str(db)


def _holder(db: str, how: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLD, db, how], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_nobody_holds_a_closed_database(tmp_path):
    db = _db(tmp_path)
    assert connection_pids(db) == [] and blocking_writer(db) is None and inspect_header(db).lock_pids == []


def test_a_live_reader_is_a_connection_but_not_a_blocking_writer(tmp_path):
    db = _db(tmp_path)
    p = _holder(db, "reader")
    try:
        assert connection_pids(db) == [p.pid] and inspect_header(db).lock_pids == [p.pid]
        assert blocking_writer(db) is None
    finally:
        p.communicate("", timeout=30)


def test_an_exclusive_writer_blocks_readers_and_is_named(tmp_path):
    db = _db(tmp_path)
    p = _holder(db, "exclusive")
    try:
        w = blocking_writer(db)
        assert w is not None and w.pid == p.pid and w.write
    finally:
        p.communicate("", timeout=30)


def test_proc_locks_lines_parse():
    text = ("1: POSIX  ADVISORY  WRITE 4242 08:01:1234 1073741824 1073741824\n"
            "1: -> POSIX  ADVISORY  WRITE 4343 08:01:1234 1073741824 1073741824\n"
            "2: OFDLCK ADVISORY  READ  -1 fd:00:99 128 EOF\n"
            "garbage\n")
    a, b = parse_proc_locks(text)
    assert a.pid == 4242 and a.write and a.file == (8, 1, 1234) and a.start == a.end == 1 << 30
    assert b.pid == -1 and not b.write and b.end is None and b.file == (0xfd, 0, 99)
