"""Who holds POSIX locks on a SQLite file — read from ``/proc/locks``, without opening the file.

SQLite locks byte ranges of the database file (``PENDING_BYTE`` = 0x40000000, ``RESERVED`` = +1, the
510-byte ``SHARED`` range = +2…; ``os_unix.c``) and, in WAL mode, of the ``-shm`` file. A process that holds
a *write* lock on the PENDING byte or the SHARED range of the database is a writer that blocks every
reader (``SQLITE_BUSY`` for a store command): an exclusive transaction, or WAL with ``locking_mode=EXCLUSIVE``.
Any lock on the database or its ``-shm`` means a live connection: a ``-wal`` nobody holds was left by a
writer that died before its checkpoint.

Reading ``/proc/locks`` is what makes this read-only in fact: no descriptor of the database is opened,
so none is closed either (closing one would drop the POSIX locks this process's own SQLite connections hold).
Linux only; elsewhere every answer is empty (``None`` from :func:`proc_locks`).
"""

from __future__ import annotations

import os
from typing import NamedTuple

PROC_LOCKS = "/proc/locks"
PENDING_BYTE = 0x40000000
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510
MAX_PROC_LOCKS_BYTES = 8 * 1024 * 1024  # a host with a million locks is read this far


class FileLock(NamedTuple):
    """One line of ``/proc/locks``: ``pid`` (``-1`` when the kernel shows none), ``kind`` (``POSIX``,
    ``OFDLCK``, ``FLOCK``), ``write`` (a WRITE lock, else READ), byte range ``start``..``end`` inclusive
    (``end`` ``None``: to end of file), and the file's ``(dev major, dev minor, inode)``."""

    pid: int
    kind: str
    write: bool
    start: int
    end: int | None
    file: tuple[int, int, int]


def parse_proc_locks(text: str) -> list[FileLock]:
    """Parse ``/proc/locks`` text (pure). Lines look like ``1: POSIX  ADVISORY  WRITE 4242 08:01:1234 1073741824
    1073741825`` (``->`` lines are blocked waiters: skipped); a line that does not parse is skipped."""
    out: list[FileLock] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 8 or parts[1] == "->":
            continue
        try:
            major, minor, inode = parts[5].split(":")
            end = None if parts[7] == "EOF" else int(parts[7])
            out.append(FileLock(pid=int(parts[4]), kind=parts[1], write=parts[3] == "WRITE", start=int(parts[6]),
                                end=end, file=(int(major, 16), int(minor, 16), int(inode))))
        except ValueError:
            continue
    return out


def proc_locks() -> list[FileLock] | None:
    """Every lock the kernel lists (``/proc/locks``, read at most :data:`MAX_PROC_LOCKS_BYTES`); ``None``
    when it cannot be read (not Linux)."""
    try:
        with open(PROC_LOCKS, "rb") as f:
            return parse_proc_locks(f.read(MAX_PROC_LOCKS_BYTES).decode("ascii", "replace"))
    except OSError:
        return None


def _file_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.major(st.st_dev), os.minor(st.st_dev), st.st_ino


def locks_on(path: str, locks: list[FileLock] | None = None) -> list[FileLock]:
    """The locks on ``path`` (matched by device and inode) held by processes other than this one."""
    key = _file_key(path)
    if key is None:
        return []
    locks = proc_locks() if locks is None else locks
    me = os.getpid()
    return [lk for lk in locks or [] if lk.file == key and lk.pid != me]


def _overlaps(lk: FileLock, start: int, end: int) -> bool:
    return lk.start <= end and (lk.end is None or lk.end >= start)


def blocking_writer(db: str, locks: list[FileLock] | None = None) -> FileLock | None:
    """The write lock another process holds on ``db``'s PENDING byte or SHARED range — a writer that makes
    every reader wait (``SQLITE_BUSY``) — else ``None``. Source: ``/proc/locks``."""
    for lk in locks_on(db, locks):
        if lk.write and (_overlaps(lk, PENDING_BYTE, PENDING_BYTE)
                         or _overlaps(lk, SHARED_FIRST, SHARED_FIRST + SHARED_SIZE - 1)):
            return lk
    return None


#: the ``-shm`` byte a WAL writer locks for its whole write transaction (``WALINDEX_LOCK_OFFSET`` 120 + lock 0,
#: ``wal.c``; measured: ``BEGIN EXCLUSIVE`` + a write in ``sqlite3`` holds a WRITE lock on exactly 120..120)
WAL_WRITE_LOCK = 120


def wal_writer(db: str, locks: list[FileLock] | None = None) -> FileLock | None:
    """The WAL write lock another process holds on ``db``'s ``-shm`` — an open write transaction: readers go on,
    every other writer (``qmd update``) waits — else ``None``. Source: ``/proc/locks``."""
    for lk in locks_on(db + "-shm", locks):
        if lk.write and _overlaps(lk, WAL_WRITE_LOCK, WAL_WRITE_LOCK):
            return lk
    return None


def connection_pids(db: str) -> list[int]:
    """PIDs of other processes holding any lock on ``db`` or its ``-shm`` (a live SQLite connection),
    sorted; ``[]`` when none does or ``/proc/locks`` cannot be read."""
    locks = proc_locks()
    pids = {lk.pid for p in (db, db + "-shm") for lk in locks_on(p, locks) if lk.pid > 0}
    return sorted(pids)
