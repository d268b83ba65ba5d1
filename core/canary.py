"""The synthetic canary: plant, rotate, remove, and judge what a search for it returned.

The canary is a Markdown file ``memory/clawprobe-canary.md`` in the agent's workspace — inside the
default managed collection (``memory-dir-<id>`` / the builtin ``memory/`` tree), not hidden, not dated
(no recency decay) — holding one synthetic token ``CLAWPROBE-CANARY-<16 base32 chars>`` and no real data.
It is written only when the operator asks (``clawprobe canary plant|rotate|remove``), and each action is
all or nothing (:class:`_Txn`): the record and the canary are first staged as fsynced temp files (hidden
names ending in ``.tmp``, so no indexer picks them up), then the record is put in place (``os.replace``)
and the workspace is touched last, by one atomic step (``os.replace`` over clawprobe's own earlier canary,
or a ``link`` that never overwrites a file that appeared meanwhile; ``unlink`` for remove). A failure at
any step undoes the earlier ones: the workspace and the record end exactly as before, and the message says
which step failed, where, why in plain words, and one repair. A file at the canary path that clawprobe did
not write, cannot read, or that is a symlink is never overwritten or deleted. (A crash between the two
``os.replace`` calls leaves a record one token ahead of the file: ``canary show`` then says ``modified`` or
``missing`` and the next plant/rotate repairs it.)

**Mode.** The canary is readable like the operator's other notes: it takes the most common permission bits
of the memory dir's ``*.md`` files (else of ``MEMORY.md``, else ``0644`` minus the umask), always with owner
read/write (:func:`_note_mode`). Its owner is the user clawprobe runs as — run it as the gateway's user.

clawprobe's own record of it (token, token sha256, relative path, content sha256, planted time, tokens
retired by rotation) lives under clawprobe's data dir (``$CLAWPROBE_DATA_DIR`` or the platform user data
dir, :func:`core.history.data_dir`), never in OpenClaw's state.

Retrieval is judged by :func:`core.probe.canary_facts` from the parsed ``openclaw memory search TOKEN
--json``; the helpers here (:func:`token_found`, :func:`token_hits`) read raw result lists (OpenClaw's
``{"results": [...]}`` or a direct ``qmd search TOKEN --json`` ``[...]``), and :func:`trace` adds planted → indexed (``content.created_at``) → embedded (``embedded_at``) times from the
index facts. A retired token that is still found is a staleness signal (``old_token_found``).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.history import data_dir
from core.receipt import Canary

CANARY_REL = "memory/clawprobe-canary.md"
_CANARY_NAME = os.path.basename(CANARY_REL)
TOKEN_PREFIX = "CLAWPROBE-CANARY-"
HEADER = "# clawprobe canary"
MAX_RETIRED = 10
_TOKEN_RX = re.compile(r"CLAWPROBE-CANARY-[A-Z2-7]{16}")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class CanaryError(Exception):
    """A canary action that must not happen (a foreign file in the way, nothing to rotate…); the message is
    shown to the operator as is."""


class RetiredToken(BaseModel):
    """A token replaced by :func:`rotate` or :func:`remove`: if a search still finds it, the index is stale."""

    model_config = ConfigDict(extra="forbid")
    token: str
    token_sha256: str
    planted_at: datetime
    retired_at: datetime


class CanaryRecord(BaseModel):
    """clawprobe's record of one agent's canary (source: ``<data dir>/canary/<agent>-<ws hash>.json``).

    ``rel_path`` is workspace-relative; ``content_sha256`` hashes the whole planted file (QMD's
    ``documents.hash`` and the builtin ``hash`` use the same sha256, so the index can be matched to it);
    ``removed_at`` is set after :func:`remove` (the record stays to watch retired tokens).
    """

    model_config = ConfigDict(extra="forbid")
    agent_id: str
    workspace: str
    token: str
    token_sha256: str
    rel_path: str = CANARY_REL
    content_sha256: str
    planted_at: datetime
    removed_at: datetime | None = None
    retired: list[RetiredToken] = Field(default_factory=list)

    @property
    def active(self) -> bool:
        """True while the canary is planted (not removed)."""
        return self.removed_at is None


def sha256_text(text: str) -> str:
    """sha256 hex of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh synthetic token: ``CLAWPROBE-CANARY-`` + 16 base32 characters (80 random bits)."""
    return TOKEN_PREFIX + base64.b32encode(secrets.token_bytes(10)).decode("ascii")


def canary_text(token: str) -> str:
    """The canary file's full text (synthetic, no real data; the token on its own line)."""
    return (f"{HEADER}\n\nA synthetic health-check note written by clawprobe. It holds no real data and proves\n"
            "only that this memory file is indexed and can be retrieved. Safe to keep; remove it with\n"
            "`clawprobe canary remove`.\n\n"
            f"Canary token: {token}\n")


def record_path(workspace: str | os.PathLike[str], agent_id: str, root: str | os.PathLike[str] | None = None) -> Path:
    """Where the record for (workspace, agent) lives: ``<data dir>/canary/<agent>-<sha256(ws)[:12]>.json``."""
    ws = os.path.realpath(os.fspath(workspace))
    base = Path(root) if root is not None else data_dir()
    return base / "canary" / f"{_SAFE.sub('_', agent_id) or '_'}-{sha256_text(ws)[:12]}.json"


# ---------------------------------------------------------------------------------------------------
# the record
# ---------------------------------------------------------------------------------------------------

def _load(p: Path) -> tuple[CanaryRecord | None, bytes | None]:
    """(record, its raw bytes) at ``p``, ``(None, None)`` when there is none. Raises :class:`CanaryError`."""
    try:
        _, raw = _read_regular(str(p), follow=True)
    except FileNotFoundError:
        return None, None
    except _NotRegular as e:  # a FIFO would block the read
        raise CanaryError(f"the canary record {p} is not a regular file ({_kind(e.st)}); remove it and plant again") from None
    except OSError as e:
        raise CanaryError(f"cannot read the canary record {p}: {describe_os_error(e)} — "
                          f"{_hint(e, p.parent, ours=True)}") from None
    if len(raw) > _MAX_READ:
        raise CanaryError(f"the canary record {p} is damaged (over {_MAX_READ} bytes); delete it and plant again")
    try:
        return CanaryRecord.model_validate_json(raw), raw
    except ValidationError as e:
        raise CanaryError(f"the canary record {p} is damaged ({e.error_count()} errors); delete it and plant again") from None


def load(workspace: str | os.PathLike[str], agent_id: str, *, root: str | os.PathLike[str] | None = None
         ) -> CanaryRecord | None:
    """The saved record of (workspace, agent) in clawprobe's data dir, or ``None`` when there is none. Raises
    :class:`CanaryError` (a plain-words message) for an unreadable, non-regular or damaged one."""
    return _load(record_path(workspace, agent_id, root))[0]


# ---------------------------------------------------------------------------------------------------
# the file on disk (read-only)
# ---------------------------------------------------------------------------------------------------

FileState = Literal["present", "missing", "modified", "foreign", "unreadable"]
_MAX_READ = 1 << 20  # a canary is ~300 bytes: a bigger file at its path is not the one clawprobe planted

_WHY = {errno.EACCES: "permission denied", errno.EPERM: "operation not permitted", errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
        errno.ENOENT: "no such file or directory", errno.ENOTDIR: "a part of the path is not a directory",
        errno.EISDIR: "it is a directory", errno.EEXIST: "it already exists", errno.EIO: "input/output error",
        errno.ELOOP: "too many levels of symlinks", errno.ENAMETOOLONG: "file name too long",
        errno.ENOTEMPTY: "directory not empty", errno.EBUSY: "device or resource busy",
        errno.EMLINK: "too many links", errno.EXDEV: "not on the same file system"}


def describe_os_error(e: OSError) -> str:
    """An ``OSError`` in plain words (``permission denied``, ``read-only file system``, ``no space left on
    device`` …), without the exception's class name, errno number or repr'd path."""
    return _WHY.get(e.errno or 0) or (e.strerror or str(e) or "unknown error").lower()


def _hint(e: OSError, where: Path | str, *, ours: bool) -> str:
    """One repair for a failed file operation in ``where`` (empty when there is none to give)."""
    tail = ", or set CLAWPROBE_DATA_DIR to a writable directory" if ours else ""
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"check the owner and mode of {where} (ls -ld {where}) and run clawprobe as its owner{tail}"
    if e.errno == errno.EROFS:
        return f"remount it read-write{tail}"
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free some space on that file system{tail}"
    return "set CLAWPROBE_DATA_DIR to a writable directory" if ours else ""


class _NotRegular(Exception):
    def __init__(self, st: os.stat_result) -> None:
        super().__init__("not a regular file")
        self.st = st


def _kind(st: os.stat_result) -> str:
    m = st.st_mode
    return ("a symlink" if stat.S_ISLNK(m) else "a directory" if stat.S_ISDIR(m) else "a FIFO" if stat.S_ISFIFO(m)
            else "a socket" if stat.S_ISSOCK(m) else "a device" if stat.S_ISBLK(m) or stat.S_ISCHR(m) else "not a file")


def _read_regular(path: str, *, dir_fd: int | None = None, follow: bool = False) -> tuple[os.stat_result, bytes]:
    """(fstat, up to ``_MAX_READ + 1`` bytes) of a regular file, opened non-blocking (a FIFO swapped in never
    blocks) and, unless ``follow``, without following a symlink at ``path`` itself. Raises ``OSError`` or
    :class:`_NotRegular`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegular(st)
        chunks, left = [], _MAX_READ + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 16))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return st, b"".join(chunks)
    finally:
        os.close(fd)


class CanaryFile(BaseModel):
    """What is at the canary path now (source: ``lstat`` and one read of ``<workspace>/<rel_path>``; a symlink
    at the file itself is never followed).

    ``state``: ``present`` (exactly the planted content) · ``modified`` (clawprobe's header and a token, other
    content: edited, or planted under another record) · ``foreign`` (not clawprobe's: other content, a
    symlink, a directory/FIFO) · ``unreadable`` (something is there but cannot be read — permission denied,
    I/O error — so whose it is is unknown) · ``missing``. ``detail`` says why in plain words; ``mode`` is the
    permission bits (``0o644``) when something is there, else ``None``.
    """

    model_config = ConfigDict(extra="forbid")
    path: str
    state: FileState
    detail: str
    mode: int | None = None


def _inspect(name: str, dir_fd: int | None, content_sha256: str, where: Path) -> tuple[CanaryFile, os.stat_result | None]:
    """Classify ``name`` (relative to ``dir_fd``, or a full path when it is ``None``) against the planted
    content hash; also returns its ``lstat`` (``None`` when nothing is there or it cannot be looked at)."""
    def out(state: FileState, detail: str, st: os.stat_result | None = None) -> tuple[CanaryFile, os.stat_result | None]:
        mode = stat.S_IMODE(st.st_mode) if st is not None else None
        return CanaryFile(path=str(where), state=state, detail=detail, mode=mode), st

    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        parent = where.parent
        return out("missing", "no file there" if parent.is_dir() else f"no file there ({parent} does not exist)")
    except NotADirectoryError:
        return out("missing", f"{where.parent} is not a directory")
    except OSError as e:
        return out("unreadable", f"cannot look into {where.parent}: {describe_os_error(e)}")
    if stat.S_ISLNK(st.st_mode):
        try:
            to = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            to = "?"
        return out("foreign", f"a symlink to {to}, not the regular file clawprobe plants (symlinks are not indexed)", st)
    if not stat.S_ISREG(st.st_mode):
        return out("foreign", f"{_kind(st)}, not a regular file: not clawprobe's", st)
    try:
        st, data = _read_regular(name, dir_fd=dir_fd)
    except _NotRegular as e:
        return out("foreign", f"{_kind(e.st)}, not a regular file: not clawprobe's", e.st)
    except OSError as e:
        return out("unreadable", f"{describe_os_error(e)}: clawprobe cannot read it, so it cannot tell whether it is "
                                 f"its canary, and OpenClaw may not read it either (ls -l {where})", st)
    if len(data) <= _MAX_READ and hashlib.sha256(data).hexdigest() == content_sha256:
        return out("present", "exactly the planted content", st)
    if _ours(data[:_MAX_READ].decode("utf-8", errors="replace")):
        return out("modified", "clawprobe's canary header and a token, but not the planted content", st)
    return out("foreign", "another file: not written by clawprobe", st)


def check_file(rec: CanaryRecord) -> CanaryFile:
    """What is at ``rec``'s canary path now (read-only; see :class:`CanaryFile`). Never raises for the disk."""
    p = Path(rec.workspace) / rec.rel_path
    return _inspect(str(p), None, rec.content_sha256, p)[0]


def file_state(rec: CanaryRecord) -> FileState:
    """``present``, ``modified``, ``foreign``, ``unreadable`` or ``missing`` (:func:`check_file`'s state)."""
    return check_file(rec).state


def _ours(text: str) -> bool:
    return text.startswith(HEADER) and bool(_TOKEN_RX.search(text))


def placement_notes(workspace: str | os.PathLike[str]) -> list[str]:
    """Plain-words warnings about where the canary lands (source: ``lstat`` of ``<workspace>/memory``): a
    symlinked memory dir is written through (that is where the agent's notes are), but only QMD indexes it
    (its collection root is resolved); the builtin scanner skips symlinked dirs, so there the canary is
    never found (``retrieval_failed`` · ``symlink``)."""
    memdir = Path(os.fspath(workspace)) / os.path.dirname(CANARY_REL)
    if not memdir.is_symlink():
        return []
    try:
        to = os.readlink(memdir)
    except OSError:
        to = "?"
    return [(f"{memdir} is a symlink to {to}: the canary is written there. QMD indexes it (the collection root is "
             "resolved), but the builtin engine skips symlinked dirs, so with the builtin backend the canary will "
             "not be found (retrieval_failed · symlink)")]


# ---------------------------------------------------------------------------------------------------
# writing: all or nothing
# ---------------------------------------------------------------------------------------------------

def _umask() -> int:
    """The process umask, read without changing it (``/proc/self/status``; else set and restored at once)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    m = os.umask(0o022)
    os.umask(m)
    return m


_MODE_SAMPLE = 2000  # directory entries looked at, at most


def _note_mode(memory_fd: int, workspace: str) -> int:
    """Permission bits for a new canary note, like the operator's other notes: the most common read/write bits
    of the regular ``*.md`` files directly in the memory dir (the canary, hidden names and symlinks skipped;
    at most ``_MODE_SAMPLE`` entries looked at; a tie goes to the more restrictive mode), else those of the
    workspace's ``MEMORY.md``, else ``0o644`` minus the process umask. The owner's read/write bits are always
    kept (clawprobe reads the file back to check it); execute, setuid and sticky bits never are."""
    counts: Counter[int] = Counter()
    with contextlib.suppress(OSError), os.scandir(memory_fd) as it:
        for i, entry in enumerate(it):
            if i >= _MODE_SAMPLE:
                break
            n = entry.name
            if n == _CANARY_NAME or n.startswith(".") or not n.lower().endswith(".md"):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    counts[stat.S_IMODE(st.st_mode) & 0o666] += 1
    if counts:
        mode = max(counts, key=lambda m: (counts[m], -m.bit_count(), -m))
    else:
        try:
            st = os.lstat(os.path.join(workspace, "MEMORY.md"))
            mode = stat.S_IMODE(st.st_mode) & 0o666 if stat.S_ISREG(st.st_mode) else 0o644 & ~_umask()
        except OSError:
            mode = 0o644 & ~_umask()
    return mode | 0o600


class _StepFailed(CanaryError):
    """A file operation of a canary action failed (the message says which, where and why)."""


def _unlink_quiet(name: str, dir_fd: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)


def _fsync_dir(fd: int) -> None:
    with contextlib.suppress(OSError):  # best effort: some file systems cannot fsync a directory
        os.fsync(fd)


class _Txn:
    """One all-or-nothing canary action. Every step that changes the disk registers how to take itself back;
    on any failure they are undone newest first, so the workspace and clawprobe's record end exactly as
    before (or the message says what could not be undone). Directories are held open and every change is
    made relative to them (a symlink swapped in mid-way cannot redirect a write); clawprobe's record dir is
    ``flock``-ed for the whole action (the dashboard and the command line never interleave)."""

    def __init__(self, verb: str) -> None:
        self.verb = verb
        self.committed = False
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._after: list[Callable[[], None]] = []
        self._fds: list[int] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: object) -> bool:
        failed: list[str] = []
        try:
            if ev is None:
                for fn in self._after:
                    with contextlib.suppress(OSError):
                        fn()
                return False
            for what, fn in reversed(self._undo):
                try:
                    fn()
                except OSError as e:
                    failed.append(f"{what} ({describe_os_error(e)})")
        finally:
            for fd in reversed(self._fds):
                with contextlib.suppress(OSError):
                    os.close(fd)
        if isinstance(ev, CanaryError):
            msg = str(ev)
        elif isinstance(ev, OSError):
            msg = f"cannot {self.verb} the canary: {describe_os_error(ev)}"
        else:
            return False  # a bug: undone above, then raised as it is
        if failed:
            msg += ("; undoing it failed too: " + "; ".join(failed)
                    + " — run `clawprobe canary show` to see what is on disk")
        elif isinstance(ev, (_StepFailed, OSError)) or self.committed:
            msg += "; nothing was changed (the workspace and clawprobe's record are as before)"
        raise CanaryError(msg) from None

    @contextlib.contextmanager
    def step(self, what: str, where: Path, *, ours: bool = False) -> Iterator[None]:
        """Turn an ``OSError`` inside into a :class:`_StepFailed` naming the step, the place and one repair."""
        try:
            yield
        except OSError as e:
            hint = _hint(e, where, ours=ours)
            raise _StepFailed(f"cannot {self.verb} the canary: cannot {what} in {where}: {describe_os_error(e)}"
                              f"{' — ' + hint if hint else ''}") from None

    def open_dir(self, d: Path) -> int:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._fds.append(fd)
        return fd

    def mkdir(self, d: Path) -> None:
        """Create ``d`` (and missing parents); the undo removes the ones created here, if still empty."""
        todo = []
        cur = d
        while not os.path.lexists(cur) and cur != cur.parent:
            todo.append(cur)
            cur = cur.parent
        for p in reversed(todo):
            os.mkdir(p)
            self._undo.append((f"remove the new dir {p}", lambda p=p: _rmdir_quiet(p)))

    def record_dir(self, d: Path) -> int:
        """clawprobe's record dir, created if missing, opened and locked."""
        with self.step("create clawprobe's record dir", d.parent, ours=True):
            self.mkdir(d)
        with self.step("open clawprobe's record dir", d, ours=True):
            fd = self.open_dir(d)
            fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def stage(self, dir_fd: int, name: str, data: bytes, mode: int) -> str:
        """A hidden temp file ``.<name>.<random>.tmp`` next to ``name`` (no indexer picks it up) holding
        ``data``, fsynced, with exactly ``mode``; the undo removes it."""
        for _ in range(100):
            tmp = f".{name}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=dir_fd)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free temp name")
        self._undo.append((f"remove the temp file {tmp}", lambda: _unlink_quiet(tmp, dir_fd)))
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        return tmp

    def commit_record(self, dir_fd: int, name: str, tmp: str, old: bytes | None) -> None:
        """Put the staged record in place; the undo puts the old one back (a copy staged first, so the undo
        is a rename that needs no space) or removes the new one when there was none."""
        aside = self.stage(dir_fd, name, old, 0o600) if old is not None else None
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        self.committed = True
        if aside is not None:
            self._undo.append(("restore clawprobe's record",
                               lambda: os.replace(aside, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)))
            self._after.append(lambda: _unlink_quiet(aside, dir_fd))
        else:
            self._undo.append(("remove the new record", lambda: _unlink_quiet(name, dir_fd)))
        _fsync_dir(dir_fd)


def _rmdir_quiet(p: Path) -> None:
    try:
        os.rmdir(p)
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):  # someone else's file in it now: keep the dir
            raise


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_mode) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns, b.st_mode)


def _unchanged(dir_fd: int, name: str, before: os.stat_result, where: Path, doing: str) -> None:
    """Refuse when the file changed since it was checked (an operator's write racing the action)."""
    try:
        now = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        now = None
    if now is None or not _same(now, before):
        raise CanaryError(f"{where} changed while clawprobe was {doing} it: not touching it")


def _put_canary(dir_fd: int, name: str, tmp: str, prior: os.stat_result | None, where: Path,
                data: bytes, mode: int) -> None:
    """The last step of plant/rotate: replace clawprobe's own earlier canary (unchanged since it was checked),
    or create the file without ever overwriting one that appeared meanwhile (``link``; where the file system
    has no hard links, an exclusive create)."""
    if prior is not None:
        _unchanged(dir_fd, name, prior, where, "replacing")
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        _fsync_dir(dir_fd)
        return
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise CanaryError(f"{where} appeared while clawprobe was planting: not overwriting it") from None
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        _create_exclusive(dir_fd, name, where, data, mode)
    _unlink_quiet(tmp, dir_fd)
    _fsync_dir(dir_fd)


def _create_exclusive(dir_fd: int, name: str, where: Path, data: bytes, mode: int) -> None:
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except FileExistsError:
        raise CanaryError(f"{where} appeared while clawprobe was planting: not overwriting it") from None
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quiet(name, dir_fd)
        raise
    os.close(fd)


def _memory_dir(t: _Txn, memdir: Path) -> int:
    """The memory dir held open (created if missing: the undo removes it again)."""
    if not os.path.lexists(memdir):
        with t.step("create the memory dir", memdir.parent):
            t.mkdir(memdir)
    if not os.path.isdir(memdir):
        what = (f"a symlink to {os.readlink(memdir)} that is not a directory" if memdir.is_symlink()
                else "not a directory")
        raise CanaryError(f"{memdir} is {what}: the canary goes into the workspace's memory dir; fix that first")
    with t.step("open the memory dir", memdir):
        return t.open_dir(memdir)


def _refusal(f: CanaryFile, doing: str) -> str:
    if f.state == "unreadable":
        why = f.detail if f.detail.startswith("cannot look into") else f"cannot read {f.path} ({f.detail.split(':')[0]})"
        return f"{why}: not {doing} a file clawprobe cannot check"
    if f.detail.startswith("a symlink"):
        return f"{f.path} is a symlink: the canary must be a regular file (symlinks are not indexed); not {doing} it"
    if "not a regular file" in f.detail:
        return f"{f.path} exists and is not a regular file: not {doing} it"
    return f"{f.path} exists and was not written by clawprobe: not {doing} it"


def _plant(workspace: str | os.PathLike[str], agent_id: str, now: datetime | None,
           root: str | os.PathLike[str] | None, verb: Literal["plant", "rotate"]) -> CanaryRecord:
    ws = os.fspath(workspace)
    try:
        if not stat.S_ISDIR(os.stat(ws).st_mode):
            raise CanaryError(f"workspace {ws} is not a directory")
    except FileNotFoundError:
        raise CanaryError(f"workspace {ws} does not exist") from None
    except OSError as e:
        raise CanaryError(f"cannot look at workspace {ws}: {describe_os_error(e)}") from None
    now = now or datetime.now(timezone.utc)
    rp = record_path(ws, agent_id, root)
    memdir = Path(ws) / os.path.dirname(CANARY_REL)
    target = memdir / _CANARY_NAME
    with _Txn(verb) as t:
        rfd = t.record_dir(rp.parent)
        old, old_raw = _load(rp)
        if verb == "plant" and old is not None and old.active and file_state(old) == "present":
            raise CanaryError(f"a canary is already planted in {Path(ws) / old.rel_path} (planted "
                              f"{old.planted_at:%Y-%m-%d %H:%M}Z); use `clawprobe canary rotate` for a new token")
        token = new_token()
        data = canary_text(token).encode("utf-8")
        rec = CanaryRecord(agent_id=agent_id, workspace=os.path.realpath(ws), token=token,
                           token_sha256=sha256_text(token), content_sha256=hashlib.sha256(data).hexdigest(),
                           planted_at=now, retired=_retire(old, now) if old is not None else [])
        mfd = _memory_dir(t, memdir)
        found, prior = _inspect(_CANARY_NAME, mfd, old.content_sha256 if old else "", target)
        if found.state in ("foreign", "unreadable"):
            raise CanaryError(_refusal(found, "overwriting"))
        prior = prior if found.state in ("present", "modified") else None
        mode = _note_mode(mfd, ws)
        with t.step("write clawprobe's record", rp.parent, ours=True):
            rtmp = t.stage(rfd, rp.name, rec.model_dump_json(indent=2).encode("utf-8"), 0o600)
        with t.step("write the canary file", memdir):
            ctmp = t.stage(mfd, _CANARY_NAME, data, mode)
        with t.step("save clawprobe's record", rp.parent, ours=True):
            t.commit_record(rfd, rp.name, rtmp, old_raw)
        with t.step("put the canary file in place", memdir):
            _put_canary(mfd, _CANARY_NAME, ctmp, prior, target, data, mode)
    return rec


def plant(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
          root: str | os.PathLike[str] | None = None) -> CanaryRecord:
    """Write a new canary file ``<workspace>/memory/clawprobe-canary.md`` (the memory dir is created if
    missing) and record it — all or nothing: both are staged as fsynced temp files first, then the record is
    put in place and the canary last; any failure undoes what was done, so the workspace and the record stay
    exactly as before. The file gets the mode of the workspace's other notes (:func:`_note_mode`).

    Raises :class:`CanaryError` with a plain-words message when one is already planted (use :func:`rotate`),
    a file clawprobe did not write (or cannot read, or a symlink) is in the way — it is never overwritten —,
    or a write fails (permission denied, read-only file system, disk full…)."""
    return _plant(workspace, agent_id, now, root, "plant")


def _retire(old: CanaryRecord, now: datetime) -> list[RetiredToken]:
    out = list(old.retired)
    if old.active or not any(r.token == old.token for r in out):
        out.append(RetiredToken(token=old.token, token_sha256=old.token_sha256, planted_at=old.planted_at, retired_at=now))
    return out[-MAX_RETIRED:]


def rotate(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
           root: str | os.PathLike[str] | None = None) -> CanaryRecord:
    """Replace the token (the old one is retired: still finding it later means a stale index); without a
    planted canary this plants one. All or nothing, like :func:`plant`; same errors, except that an existing
    canary is not one."""
    return _plant(workspace, agent_id, now, root, "rotate")


def remove(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
           root: str | os.PathLike[str] | None = None) -> CanaryRecord | None:
    """Delete the canary file (only if clawprobe wrote it and it is unchanged since checked) and mark the
    record removed; its token is retired. ``None`` when nothing was planted. All or nothing: the record is
    saved first and put back if the delete fails. Raises :class:`CanaryError` for a foreign, symlinked or
    unreadable file (never deleted) or a failed write."""
    ws = os.fspath(workspace)
    rp = record_path(ws, agent_id, root)
    if _load(rp)[0] is None:  # nothing planted: create no dirs just to find that out
        return None
    now = now or datetime.now(timezone.utc)
    with _Txn("remove") as t:
        rfd = t.record_dir(rp.parent)
        rec, raw = _load(rp)
        if rec is None or not rec.active:
            return None
        target = Path(rec.workspace) / rec.rel_path
        f, st = _inspect(str(target), None, rec.content_sha256, target)
        if f.state in ("foreign", "unreadable"):
            raise CanaryError(_refusal(f, "deleting"))
        mfd = _memory_dir(t, target.parent) if f.state in ("present", "modified") else None
        out = rec.model_copy(update={"removed_at": now, "retired": _retire(rec, now)})
        with t.step("write clawprobe's record", rp.parent, ours=True):
            rtmp = t.stage(rfd, rp.name, out.model_dump_json(indent=2).encode("utf-8"), 0o600)
        with t.step("save clawprobe's record", rp.parent, ours=True):
            t.commit_record(rfd, rp.name, rtmp, raw)
        if mfd is not None and st is not None:
            with t.step("delete the canary file", target.parent):
                _unchanged(mfd, target.name, st, target, "deleting")
                os.unlink(target.name, dir_fd=mfd)
                _fsync_dir(mfd)
    return out


# ---------------------------------------------------------------------------------------------------
# judging a search (pure)
# ---------------------------------------------------------------------------------------------------

def parse_results(text: str) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Search output → ``(results, error)``. Accepts OpenClaw's ``{"results": [...]}``, qmd's bare list,
    and OpenClaw's ``{"ok": false, "error": {...}}``; ``(None, message)`` when it is not that."""
    s = (text or "").strip()
    if not s:
        return None, "no output"
    try:
        doc = json.loads(s)
    except ValueError:
        start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
        try:
            doc = json.loads(s[start:]) if start > 0 else None
        except ValueError:
            doc = None
        if doc is None:
            return None, "output is not JSON"
    if isinstance(doc, list):
        return [r for r in doc if isinstance(r, dict)], None
    if isinstance(doc, dict):
        if isinstance(doc.get("results"), list):
            return [r for r in doc["results"] if isinstance(r, dict)], None
        if doc.get("ok") is False:
            err = doc.get("error")
            msg = err.get("message") if isinstance(err, dict) else err
            return None, str(msg or "ok: false")
    return None, "unexpected JSON shape"


def _default_collection_dir(name: str) -> str | None:
    if name.startswith("memory-root-"):
        return ""
    if name.startswith("memory-dir-"):
        return "memory/"
    return None


def result_path(r: Mapping[str, Any], collection_dirs: Mapping[str, str] | None = None) -> str:
    """A result's workspace-relative path: OpenClaw's ``path``, or qmd's ``file`` ``qmd://<coll>/<rel>``
    mapped through ``collection_dirs`` (default: ``memory-root-*`` → ``""``, ``memory-dir-*`` → ``memory/``)."""
    p = str(r.get("path") or r.get("file") or "")
    if p.startswith("qmd://"):
        rest = p[len("qmd://"):].split("?", 1)[0]
        coll, _, rel = rest.partition("/")
        base = (collection_dirs or {}).get(coll)
        base = _default_collection_dir(coll) if base is None else base
        return f"{base}{rel}" if base is not None else p
    return p


def token_hits(results: Sequence[Mapping[str, Any]], token: str) -> list[Mapping[str, Any]]:
    """Results whose snippet/body contains ``token`` exactly (case-insensitive). A result without any text
    cannot be checked and counts as a hit."""
    t = token.lower()
    out = []
    for r in results:
        text = f"{r.get('snippet') or ''}\n{r.get('body') or ''}"
        if not text.strip() or t in text.lower():
            out.append(r)
    return out


def token_found(search_text: str, token: str) -> bool:
    """True when a search output (OpenClaw or qmd JSON) has a result holding ``token``."""
    results, _ = parse_results(search_text)
    return bool(results and token_hits(results, token))


def trace(canary: Canary, record: CanaryRecord | None, *, qmd_docs: Sequence[Any] = (),
          builtin_indexed_at: Mapping[str, datetime] | None = None, builtin_hashes: Mapping[str, str] | None = None,
          retrieved_at: datetime | None = None) -> Canary:
    """Add the planted → indexed → embedded → retrieved trace to ``canary`` (pure).

    ``qmd_docs`` are :class:`core.probes.qmd_index.IndexedDoc` rows: the doc whose hash equals the record's
    ``content_sha256`` gives ``indexed_at`` (``content.created_at``) and, when all its chunks exist for the
    current fingerprint, ``embedded_at``. For builtin, ``builtin_hashes`` (path → hash) and
    ``builtin_indexed_at`` (path → newest chunk ``updated_at``) do the same by path.
    """
    if record is None:
        return canary
    upd: dict[str, Any] = {"token_sha256": record.token_sha256, "expected_path": canary.expected_path or record.rel_path,
                           "content_sha256": record.content_sha256, "planted_at": record.planted_at}
    doc = next((d for d in qmd_docs if getattr(d, "hash", None) == record.content_sha256), None)
    if doc is not None:
        upd["indexed_at"] = doc.ingested_at
        if doc.embedded_at is not None and doc.expected_chunks and doc.chunks >= doc.expected_chunks:
            upd["embedded_at"] = doc.embedded_at
    elif builtin_hashes and builtin_hashes.get(record.rel_path) == record.content_sha256:
        upd["indexed_at"] = (builtin_indexed_at or {}).get(record.rel_path)
    if canary.outcome == "found" and retrieved_at is not None:
        upd["retrieved_at"] = retrieved_at
    return canary.model_copy(update=upd)


def old_token_found(search_texts: Mapping[str, str]) -> bool | None:
    """``search_texts`` maps each retired token to the output of a search for it; True when any is still
    found (a stale index: RW15), ``None`` when nothing was searched."""
    if not search_texts:
        return None
    return any(token_found(text, tok) for tok, text in search_texts.items())


def current_spec(state_dir: str | None, agent_id: str, workspace: str | os.PathLike[str], *,
                 root: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """What :func:`core.probe.slow` searches for: ``{token, expected_path, content_sha256, planted_at}`` of
    the planted canary of (workspace, agent), or ``None`` when none is planted. ``state_dir`` is unused
    (the record lives in clawprobe's data dir, keyed by workspace and agent)."""
    rec = load(workspace, agent_id, root=root)
    if rec is None or not rec.active:
        return None
    return {"token": rec.token, "expected_path": rec.rel_path, "content_sha256": rec.content_sha256,
            "planted_at": rec.planted_at}


def explain(canary: Canary, workspace: str, *, engine: Literal["qmd", "builtin"], collections: Sequence[Any] = (),
            extra_paths: Sequence[str] = (), lowercase_root_indexed: bool = False,
            wrong_store_detail: str | None = None) -> Canary:
    """Narrow a failed retrieval (``miss``/``wrong_source``) with the first explainer for the expected
    path — ``hidden_path``, ``case_mismatch``, ``symlink``, ``pattern_excluded``, ``not_in_collection``,
    ``empty_file`` (:func:`core.probes.workspace.explain_path`) — or ``wrong_store`` when the managed QMD
    index lacks its default collections (RW14). An existing ``reason`` is kept."""
    from core.probes.workspace import explain_path

    if canary.outcome not in ("miss", "wrong_source") or canary.reason not in (None, "wrong_source") \
            or not canary.expected_path:
        return canary
    found = explain_path(canary.expected_path, workspace, engine=engine, collections=collections,
                         extra_paths=extra_paths, lowercase_root_indexed=lowercase_root_indexed)
    found = [e for e in found if e.tag != "missing"] or found
    if wrong_store_detail and (not found or found[0].tag == "not_in_collection"):
        return canary.model_copy(update={"reason": "wrong_store", "detail": wrong_store_detail})
    if found:
        detail = "; ".join(e.message for e in found[:2])
        return canary.model_copy(update={"reason": found[0].tag,
                                         "detail": f"{canary.detail}; {detail}" if canary.detail else detail})
    return canary
