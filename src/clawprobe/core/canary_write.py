"""Writing the canary: :func:`plant`, :func:`rotate` and :func:`remove`, each all or nothing.

The record and the canary are first staged as fsynced temp files (hidden names ending in ``.tmp``, so no
indexer picks them up), then the record is put in place (``os.replace``) and the workspace is touched
last, by one atomic step (``os.replace`` over clawprobe's own earlier canary, or a ``link`` that never
overwrites a file that appeared meanwhile; ``unlink`` for remove). A failure at any step undoes the
earlier ones (:class:`_Txn`): the workspace and the record end exactly as before, and the message says
which step failed, where, why in plain words, and one repair. A file at the canary path that clawprobe did
not write, cannot read, or that is a symlink is never overwritten or deleted. (A crash between the two
``os.replace`` calls leaves a record one token ahead of the file: ``canary show`` then says ``modified`` or
``missing`` and the next plant/rotate repairs it.)

**Mode.** The canary is readable like the operator's other notes: it takes the most common permission bits
of the memory dir's ``*.md`` files (else of ``MEMORY.md``, else ``0644`` minus the umask), always with owner
read/write (:func:`_note_mode`). Its owner is the user clawprobe runs as — run it as the gateway's user.

What a canary is, its record and how a search for it is judged: :mod:`clawprobe.core.canary`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import secrets
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Self

from clawprobe.core.canary import (
    _CANARY_NAME,
    CANARY_REL,
    MAX_RETIRED,
    CanaryError,
    CanaryFile,
    CanaryRecord,
    RetiredToken,
    _hint,
    _inspect,
    _load,
    canary_text,
    describe_os_error,
    file_state,
    moved_dir,
    new_script_token,
    new_token,
    record_path,
    sha256_text,
    shared_record,
)
from clawprobe.core.history import replace_problem
from clawprobe.core.shell import move_to_free_name
from clawprobe.core.shell import word as shell_word
from clawprobe.core.stale_temps import sweep


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

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: object) -> Literal[False]:
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
            self._undo.append((f"remove the new dir {p}", functools.partial(_rmdir_quiet, p)))

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
        ``data``, fsynced, with exactly ``mode``, kept open and ``flock``-ed until the action ends; the undo
        removes it (one a ``kill -9`` left is swept by the next action, :func:`sweep_stale`)."""
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
        self._fds.append(fd)  # held (and flock-ed) until the action ends: a sweep never takes a live temp file
        self._undo.append((f"remove the temp file {tmp}", lambda: _unlink_quiet(tmp, dir_fd)))
        fcntl.flock(fd, fcntl.LOCK_EX)
        _write_all(fd, data, mode)
        return tmp

    def commit_record(self, dir_fd: int, name: str, tmp: str, old: bytes | None) -> None:
        """Put the staged record in place; the undo puts the old one back (a copy staged first, so the undo
        is a rename that needs no space) or removes the new one when there was none. A record path that is
        not a regular file (a symlink, FIFO, device…) is refused, never replaced."""
        if problem := replace_problem(name, dir_fd=dir_fd, shown=f"clawprobe's canary record {name}"):
            raise CanaryError(problem)
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


def _write_all(fd: int, data: bytes, mode: int) -> None:
    """Give the open file ``fd`` its ``mode``, write all of ``data`` and fsync it."""
    os.fchmod(fd, mode)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def _create_exclusive(dir_fd: int, name: str, where: Path, data: bytes, mode: int) -> None:
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    except FileExistsError:
        raise CanaryError(f"{where} appeared while clawprobe was planting: not overwriting it") from None
    try:
        _write_all(fd, data, mode)
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


def _root_rel(ws: str, managed_root: str | None) -> str:
    """The workspace-relative dir the canary goes into: ``memory`` (default) or a managed root given as a
    path (absolute, or relative to the workspace; an extra path may lie outside it: ``../shared``)."""
    if not managed_root:
        return os.path.dirname(CANARY_REL)
    p = managed_root if os.path.isabs(managed_root) else os.path.join(ws, managed_root)
    rel = os.path.relpath(os.path.normpath(p), ws)
    if rel in (".", "") or rel.endswith(".md"):
        raise CanaryError(f"{managed_root} is not a memory root directory: the canary goes into a managed dir "
                          "(memory/ or an extra path that is a directory)")
    return rel


def _plant(workspace: str | os.PathLike[str], agent_id: str, now: datetime | None,
           root: str | os.PathLike[str] | None, verb: Literal["plant", "rotate"], managed_root: str | None = None,
           script: str | None = None) -> CanaryRecord:
    ws = os.fspath(workspace)
    try:
        if not stat.S_ISDIR(os.stat(ws).st_mode):
            raise CanaryError(f"workspace {ws} is not a directory")
    except FileNotFoundError:
        raise CanaryError(f"workspace {ws} does not exist: the canary goes among the agent's notes — fix the "
                          "configured workspace path, or restore the notes there first") from None
    except OSError as e:
        raise CanaryError(f"cannot look at workspace {ws}: {describe_os_error(e)}") from None
    now = now or datetime.now(UTC)
    rp = record_path(ws, agent_id, root)
    with _Txn(verb) as t:
        rfd = t.record_dir(rp.parent)
        old, old_raw = _load(rp)
        if verb == "rotate" and old is not None and managed_root is None and script is None:
            managed_root, script = os.path.dirname(old.rel_path), old.script  # a rotation keeps root and script
        rel_dir = _root_rel(ws, managed_root)
        if old is not None and old.active and os.path.dirname(old.rel_path) != rel_dir and file_state(old) == "present":
            raise CanaryError(f"the canary is planted in {Path(ws) / old.rel_path}: remove it first "
                              "(`clawprobe canary remove`), then plant it in the other root")
        # only a canary planted into the gone dir recreates it; one planted where the notes went (`--root notes`,
        # the move meant) recreates nothing
        if old is not None and old.active and (moved := moved_dir(old)) is not None \
                and os.path.normpath(moved[0]) == os.path.normpath(rel_dir):
            back = move_to_free_name(shell_word(str(Path(ws) / moved[1])), shell_word(str(Path(ws) / moved[0])))
            raise CanaryError(f"{Path(ws) / moved[0]} is gone and the planted canary is in {Path(ws) / moved[1]}: the "
                              "notes directory was renamed or moved, with its notes; a new canary would recreate an "
                              f"empty {moved[0]}/ beside them. Move it back first ("
                              f"{back}); if the move is "
                              f"meant, index {moved[1]}/ and plant the canary there (--root {shell_word(moved[1])})")
        memdir = Path(ws) / rel_dir
        target = memdir / _CANARY_NAME
        if rel_dir != os.path.dirname(CANARY_REL) and not memdir.is_dir():
            raise CanaryError(f"{memdir} is not a directory: a canary goes only into an existing managed root "
                              "(clawprobe creates memory/ only)")
        try:
            stoken = new_script_token(script) if script else None
        except ValueError as e:
            raise CanaryError(str(e)) from None
        if verb == "plant" and old is not None and old.active and file_state(old) == "present":
            raise CanaryError(f"a canary is already planted in {Path(ws) / old.rel_path} (planted "
                              f"{old.planted_at:%Y-%m-%d %H:%M}Z); use `clawprobe canary rotate` for a new token")
        other = shared_record(ws, agent_id, root=root) if old is None or not old.active or file_state(old) != "present" \
            else None
        if other is not None and other.rel_path == os.path.join(rel_dir, _CANARY_NAME):
            raise CanaryError(f"{Path(ws) / other.rel_path} is agent {other.agent_id}'s canary, and agents "
                              f"{other.agent_id} and {agent_id} share this workspace: that canary proves {agent_id}'s "
                              f"path too (clawprobe check searches it for {agent_id}); nothing written. For a new "
                              f"token: clawprobe canary rotate --agent {other.agent_id}")
        token = new_token()
        data = canary_text(token, stoken).encode("utf-8")
        rec = CanaryRecord(agent_id=agent_id, workspace=os.path.realpath(ws), token=token,
                           token_sha256=sha256_text(token), content_sha256=hashlib.sha256(data).hexdigest(),
                           planted_at=now, retired=_retire(old, now) if old is not None else [],
                           rel_path=os.path.join(rel_dir, _CANARY_NAME), script=script, script_token=stoken)
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
          root: str | os.PathLike[str] | None = None, managed_root: str | None = None,
          script: str | None = None) -> CanaryRecord:
    """Write a new canary file ``<workspace>/memory/clawprobe-canary.md`` (the memory dir is created if
    missing) and record it — all or nothing: both are staged as fsynced temp files first, then the record is
    put in place and the canary last; any failure undoes what was done, so the workspace and the record stay
    exactly as before. The file gets the mode of the workspace's other notes (:func:`_note_mode`).

    Raises :class:`CanaryError` with a plain-words message when one is already planted (use :func:`rotate`),
    a file clawprobe did not write (or cannot read, or a symlink) is in the way — it is never overwritten —,
    or a write fails (permission denied, read-only file system, disk full…).

    ``managed_root``: another managed root to plant in (an extra path directory, absolute or
    workspace-relative; it must exist) instead of ``memory/``. ``script``: also write a token in that script
    (``Han``, ``Thai``…: :data:`~clawprobe.core.canary.SCRIPT_ALPHABETS`), the one the probe then searches."""
    return _plant(workspace, agent_id, now, root, "plant", managed_root, script)


def _retire(old: CanaryRecord, now: datetime) -> list[RetiredToken]:
    out = list(old.retired)
    if old.active or not any(r.token == old.token for r in out):
        out.append(RetiredToken(token=old.token, token_sha256=old.token_sha256, planted_at=old.planted_at, retired_at=now))
    return out[-MAX_RETIRED:]


def rotate(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
           root: str | os.PathLike[str] | None = None, managed_root: str | None = None,
           script: str | None = None) -> CanaryRecord:
    """Replace the token (the old one is retired: still finding it later means a stale index); without a
    planted canary this plants one. All or nothing, like :func:`plant`; same errors, except that an existing
    canary is not one. Without ``managed_root``/``script`` the rotated canary keeps the old one's root and script."""
    return _plant(workspace, agent_id, now, root, "rotate", managed_root, script)


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
    now = now or datetime.now(UTC)
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


def sweep_stale(workspace: str | os.PathLike[str], agent_id: str, *,
                root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the temp files an interrupted canary action (``kill -9`` mid ``canary plant``) left: staged
    canaries ``.clawprobe-canary.md.<hex>.tmp`` in the workspace's memory dir and staged records in
    clawprobe's record dir — only clawprobe's own names, not held by a live writer, under the record dir's
    lock that every canary action holds (:mod:`clawprobe.core.stale_temps`). Returns the paths removed;
    creates nothing (``[]`` when there is no record dir)."""
    rp = record_path(os.fspath(workspace), agent_id, root)
    try:
        fd = os.open(rp.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        memdir = Path(workspace) / os.path.dirname(CANARY_REL)
        return sweep(memdir, (_CANARY_NAME,)) + sweep(rp.parent, (rp.name,))
    finally:
        os.close(fd)
