"""Open an OpenClaw/QMD SQLite file strictly read-only, and say plainly why it cannot be read.

SQLite's ``mode=ro`` is not enough on its own: on a WAL database with no ``-shm`` file it *creates*
``-wal`` and ``-shm`` next to the index (seen with Python's sqlite3 3.40 on a QMD index), which would
write into OpenClaw's state. So the open method depends on what is on disk (source: ``os.stat`` of the
file and its ``-wal``/``-shm`` sidecars, and the 100-byte SQLite header):

* no WAL frames (``-wal`` missing or 0 bytes): ``immutable=1`` — no locks, no sidecar files;
  a rollback-journal database (E1/E2 builtin stores) is opened ``mode=ro`` instead, so a writer holding
  an exclusive lock is reported as ``locked`` after a short busy timeout;
* WAL frames and a ``-shm`` that a live connection holds (``/proc/locks``,
  :mod:`clawprobe.core.probes.file_locks`) — a gateway that built an index and has not checkpointed it: the
  file and its ``-wal`` are copied privately while neither changes (:func:`_stable_copy`: their size, mtime and
  inode the same before and after the copy, else again; the database file once per version, kept for the
  process, so a writer committing into its ``-wal`` costs a copy of the ``-wal`` only) and the copy is read —
  a ``mode=ro`` open would set a read mark in the writer's ``-shm`` (measured: one 4-byte slot at offset 104). Above
  :data:`LIVE_COPY_MAX_BYTES`, or when the writer never pauses for a copy, ``mode=ro`` (the way any qmd reader
  does it: only that read mark changes);
* WAL frames nobody holds (a writer that died before its checkpoint), with or without a ``-shm``: the
  file and its ``-wal`` are copied into a private temp dir and the copy is read, then deleted — a ``mode=ro``
  open would rebuild the stale wal-index in the agent's ``-shm``.

Never raises for a bad file: :class:`SqliteOpen` carries ``state`` and a one-line ``detail``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.probes.file_locks import connection_pids
from clawprobe.core.probes.fileinfo import owner_mode

SQLITE_MAGIC = b"SQLite format 3\x00"
DEFAULT_BUSY_TIMEOUT_S = 0.25
PRIVATE_COPY_MAX_BYTES = 2 * 1024**3
#: a live writer's database and ``-wal`` are copied privately up to this size (read ``mode=ro`` above it)
LIVE_COPY_MAX_BYTES = 256 * 1024**2
STABLE_COPY_TRIES = 3

OpenState = Literal["ok", "missing", "empty", "not_sqlite", "truncated", "wal_only", "corrupt", "locked",
                    "unreadable", "error"]


class SqliteOpen(BaseModel):
    """How a SQLite file was opened, or why it could not be.

    ``state``: ``ok``; ``missing`` (no file — never created); ``empty`` (0 bytes); ``not_sqlite`` (no SQLite
    header); ``truncated`` (shorter than the page count its header declares); ``wal_only`` (the content
    lives only in an uncheckpointed ``-wal`` that no live connection holds: the writer was killed before its first
    checkpoint — with a live writer holding it, the same files are ``ok``: its database, read through the ``-wal``);
    ``corrupt`` ("database disk image is malformed"); ``locked`` (a writer holds a lock longer than the
    busy timeout); ``unreadable`` (permissions, a directory); ``error`` (anything else, message kept).
    ``method``: ``immutable``, ``mode=ro`` or ``private copy``. Sizes are bytes (``None`` when absent).
    ``lock_pids``: other processes holding a lock on the file or its ``-shm`` (a live connection; from
    ``/proc/locks``) — a ``-wal`` with content and no such process was left by a writer that died before
    its checkpoint; ``wal_has_commit`` whether that ``-wal`` holds anything committed.
    """

    model_config = ConfigDict(extra="forbid")

    path: str
    state: OpenState
    detail: str | None = None
    method: str | None = None
    journal: Literal["wal", "rollback"] | None = None
    db_bytes: int | None = None
    wal_bytes: int | None = None
    shm_exists: bool = False
    page_size: int | None = None
    header_pages: int | None = None
    lock_pids: list[int] = Field(default_factory=list)
    #: whether the ``-wal`` holds a commit frame of its current generation (:func:`wal_has_commit`); ``False``:
    #: only a transaction a writer never committed (killed mid-way), which no checkpoint applies
    wal_has_commit: bool | None = None

    @property
    def ok(self) -> bool:
        """True when a connection was opened (the state may still carry a ``wal_only`` note)."""
        return self.state in ("ok", "wal_only") and self.method is not None


def _size(p: str) -> int | None:
    try:
        return os.stat(p).st_size
    except OSError:
        return None


def classify_error(exc: BaseException) -> tuple[OpenState, str]:
    """Map a sqlite3/OS error to a state and a one-line detail (pure)."""
    msg = str(exc).strip() or type(exc).__name__
    low = msg.lower()
    if isinstance(exc, PermissionError) or "permission denied" in low or "readonly" in low and "attempt" in low:
        return "unreadable", msg
    if "malformed" in low or "corrupt" in low:
        return "corrupt", msg
    if "not a database" in low or "file is encrypted" in low:
        return "not_sqlite", msg
    if "locked" in low or "busy" in low:
        return "locked", msg
    if "unable to open" in low or isinstance(exc, IsADirectoryError | FileNotFoundError):
        return "unreadable", msg
    return "error", msg


WAL_MAGIC = (0x377F0682, 0x377F0683)  #: a ``-wal`` header's first word (SQLite's WAL format; the low bit: checksum order)
WAL_FRAMES_READ = 250_000  #: frame headers :func:`wal_has_commit` reads at most (≈ 1 GB of 4 KiB pages)


def wal_has_commit(wal_path: str) -> bool | None:
    """Whether the ``-wal`` at ``wal_path`` holds a commit frame of its current generation: a frame whose salts
    equal the WAL header's and whose "database size after commit" is non-zero (SQLite's WAL format: a 32-byte
    header — magic, version, page size at 8, checkpoint sequence, salts at 16 and 20 — then frames of a 24-byte
    header and one page). ``False``: the frames after the header belong to no committed transaction (a writer
    killed mid-transaction whose cache spilled: SQLite's recovery ignores them, so opening the database applies
    nothing) — or there are none. ``None``: not a WAL file, unreadable, or more than :data:`WAL_FRAMES_READ`
    frames before the answer (treat as committed). Reads frame headers only (checksums are not verified: a
    frame that only looks committed makes the answer ``True``, the careful side). Never raises."""
    try:
        with open(wal_path, "rb") as f:
            head = f.read(32)
            if len(head) < 32 or int.from_bytes(head[:4], "big") not in WAL_MAGIC:
                return None
            page_size = int.from_bytes(head[8:12], "big")
            if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
                return None
            salts = head[16:24]
            for i in range(WAL_FRAMES_READ):
                f.seek(32 + i * (24 + page_size))
                frame = f.read(24)
                if len(frame) < 24 or frame[8:16] != salts:
                    return False  # the end of this generation's frames: none of them committed
                if frame[4:8] != b"\0\0\0\0":
                    return True
    except OSError:
        return None
    return None


def inspect_header(path: str) -> SqliteOpen:
    """Stat the file and its sidecars and parse the SQLite header; no connection is opened.

    Source: ``os.stat`` and the first 100 bytes (magic, page size at offset 16, write version at 18,
    page count at 28 — valid when the version-valid-for number at 92 equals the change counter at 24).
    """
    st = SqliteOpen(path=path, state="ok", wal_bytes=_size(path + "-wal"), shm_exists=os.path.exists(path + "-shm"),
                    lock_pids=connection_pids(path))
    try:
        if os.path.isdir(path):
            return st.model_copy(update={"state": "unreadable", "detail": "is a directory"})
        st.db_bytes = os.stat(path).st_size
    except FileNotFoundError:
        if st.wal_bytes:
            return st.model_copy(update={"state": "wal_only", "detail": f"no database file, only a {st.wal_bytes}-byte -wal"})
        return st.model_copy(update={"state": "missing", "detail": "file does not exist"})
    except OSError as e:
        return st.model_copy(update={"state": "unreadable", "detail": str(e)})
    if st.db_bytes == 0:
        if st.wal_bytes:
            return st.model_copy(update={"state": "wal_only", "detail": f"0-byte database, content only in a {st.wal_bytes}-byte -wal"})
        return st.model_copy(update={"state": "empty", "detail": "0-byte file"})
    try:
        with open(path, "rb") as f:
            head = f.read(100)
    except OSError as e:
        state, detail = classify_error(e)
        if state == "unreadable":
            detail += f" ({mode})" if (mode := owner_mode(path)) else ""
        return st.model_copy(update={"state": state, "detail": detail})
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        return st.model_copy(update={"state": "not_sqlite", "detail": "no SQLite header (not a database file)"})
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    st.page_size = page_size
    st.journal = "wal" if head[18] == 2 else "rollback"
    change_counter, pages, valid_for = (int.from_bytes(head[o:o + 4], "big") for o in (24, 28, 92))
    if pages and valid_for == change_counter:
        st.header_pages = pages
        if st.db_bytes < pages * page_size:
            return st.model_copy(update={
                "state": "truncated",
                "detail": f"{st.db_bytes} bytes on disk, header declares {pages} pages × {page_size} = {pages * page_size} bytes"})
    if st.wal_bytes and st.wal_bytes > 32:
        st.wal_has_commit = wal_has_commit(path + "-wal")
    if st.journal == "wal" and st.wal_bytes and st.db_bytes <= page_size and not st.lock_pids:
        # only a writer that is gone: a live connection (the gateway that built the index on its first search)
        # keeps its content in the -wal until a checkpoint — that database exists and is read through its -wal
        st.state = "wal_only"
        st.detail = f"database holds only its header page; {st.wal_bytes} bytes of content are in the uncheckpointed -wal"
    return st


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class _BaseCopy:
    """One private copy of a live writer's database file, kept for this process while that file stays the same
    (:func:`_identity`): a writer that keeps committing into its ``-wal`` without a checkpoint leaves its database
    file untouched, so each later read copies only the ``-wal`` and hard-links this copy (read ``mode=ro``, so
    never written). Removed with the process (``TemporaryDirectory``'s finalizer)."""

    def __init__(self, path: str, identity: tuple[int, int, int]) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="clawprobe-ro-base-")
        self.path = os.path.join(self.dir.name, Path(path).name)
        self.identity = identity


#: a database file written less than this long ago is copied for one read only (a write within the same mtime
#: tick would leave its identity unchanged)
BASE_QUIET_NS = 2_000_000_000
_BASE_COPIES: dict[str, _BaseCopy] = {}  #: a live writer's database path → its kept private copy
_BASE_LOCK = threading.Lock()


def _place_base(path: str, identity: tuple[int, int, int], copy: str) -> None:
    """Put the database file at ``path`` (whose identity is ``identity``) at ``copy``: a hard link to the kept
    copy while the file is unchanged, else a fresh copy kept for the next read. Raises ``OSError``."""
    if time.time_ns() - identity[1] < BASE_QUIET_NS:  # written just now: a write in the same mtime tick would hide
        shutil.copyfile(path, copy)
        return
    with _BASE_LOCK:
        base = _BASE_COPIES.get(path)
        if base is None or base.identity != identity or _identity(base.path) is None:
            if base is not None:
                base.dir.cleanup()
            base = _BASE_COPIES[path] = _BaseCopy(path, identity)
            shutil.copyfile(path, base.path)
            os.chmod(base.path, 0o444)
        try:
            os.link(base.path, copy)
        except OSError:  # another filesystem for TMPDIR's copies: copy the kept one
            shutil.copyfile(base.path, copy)


def _stable_copy(path: str, copy: str) -> bool:
    """Copy ``path`` and its ``-wal`` to ``copy`` (and ``copy-wal``) while a live writer may write them: a copy
    counts only when both files' size, mtime and inode are the same before and after it (no write fell inside
    it, so the pair is one consistent moment; the copy's WAL recovery keeps the committed frames). The database
    file is copied once per version (:func:`_place_base`), the ``-wal`` each time. Tried
    :data:`STABLE_COPY_TRIES` times; ``False`` when the writer never paused (or a file vanished)."""
    for _ in range(STABLE_COPY_TRIES):
        before = (_identity(path), _identity(path + "-wal"))
        if before[0] is None or before[1] is None:
            return False
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(copy)
            _place_base(path, before[0], copy)
            shutil.copyfile(path + "-wal", copy + "-wal")
        except OSError:
            return False
        if (_identity(path), _identity(path + "-wal")) == before:
            return True
    return False


def _uri(path: str, **params: str) -> str:
    q = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(os.path.abspath(path))}?{q}"


@contextlib.contextmanager
def open_ro(path: str | os.PathLike[str], busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
            ) -> Iterator[tuple[sqlite3.Connection | None, SqliteOpen]]:
    """Context manager yielding ``(connection or None, SqliteOpen)``; never writes next to ``path``.

    The connection is closed (and any private copy deleted) when the block ends. A first ``SELECT`` on
    ``sqlite_master`` is run so that a locked, corrupt or not-a-database file is classified here.
    Errors from later queries are the caller's to classify with :func:`classify_error`.
    """
    p = os.fspath(path)
    info = inspect_header(p)
    if info.state not in ("ok", "wal_only") or info.db_bytes is None or info.db_bytes == 0:
        yield None, info
        return
    tmp: tempfile.TemporaryDirectory[str] | None = None
    con: sqlite3.Connection | None = None
    try:
        if not info.wal_bytes:
            if info.journal == "wal":
                uri, method = _uri(p, mode="ro", immutable="1"), "immutable"
            else:
                uri, method = _uri(p, mode="ro"), "mode=ro"
        elif info.shm_exists and info.lock_pids:  # a live writer keeps its -shm current
            if (info.db_bytes or 0) + (info.wal_bytes or 0) <= LIVE_COPY_MAX_BYTES:
                tmp = tempfile.TemporaryDirectory(prefix="clawprobe-ro-")
                copy = os.path.join(tmp.name, Path(p).name)
                if _stable_copy(p, copy):
                    uri, method = _uri(copy, mode="ro"), "private copy (live writer)"
                else:
                    tmp.cleanup()
                    tmp = None
            if tmp is None:
                uri, method = _uri(p, mode="ro"), "mode=ro"
        else:
            if (info.db_bytes or 0) + (info.wal_bytes or 0) > PRIVATE_COPY_MAX_BYTES:
                yield None, info.model_copy(update={"state": "error", "detail": "-wal without -shm and too large to copy privately"})
                return
            tmp = tempfile.TemporaryDirectory(prefix="clawprobe-ro-")
            copy = os.path.join(tmp.name, Path(p).name)
            shutil.copyfile(p, copy)
            shutil.copyfile(p + "-wal", copy + "-wal")
            uri, method = _uri(copy, mode="ro"), "private copy"
        con = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, check_same_thread=False)
        con.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, OSError) as e:
        state, detail = classify_error(e)
        if con is not None:
            con.close()
            con = None
        if tmp is not None:
            tmp.cleanup()
        yield None, info.model_copy(update={"state": state, "detail": detail, "method": None})
        return
    try:
        yield con, info.model_copy(update={"method": method})
    finally:
        con.close()
        if tmp is not None:
            tmp.cleanup()


def table_names(con: sqlite3.Connection) -> dict[str, str]:
    """``{name: CREATE sql}`` for every table/virtual table (source: ``sqlite_master``)."""
    return {n: (s or "") for n, s in con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}


def column_names(con: sqlite3.Connection, table: str) -> set[str]:
    """Column names of ``table`` (source: ``pragma_table_info``); empty when the table is absent."""
    return {r[0] for r in con.execute("SELECT name FROM pragma_table_info(?)", (table,))}
