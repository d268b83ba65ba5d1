"""What an operator needs to fix a permission fault: a file's mode and owner, and who is asking (pure read).

Used by the QMD store check, clawprobe's read-only SQLite opener and the workspace scan, so a permission
fault reads the same wherever it is found.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


def path_text(path: str) -> str:
    """``path`` as UTF-8 text for evidence and receipts: a name that is not UTF-8 (``os.fsdecode`` made its bad
    bytes lone surrogates, which no JSON or pydantic model can hold) gets U+FFFD for each bad byte, as
    ``ls`` draws it. Use the original ``path`` for every file operation."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words, for a file that is not the regular file expected: ``a
    symlink`` (from ``lstat``), ``a directory``, ``a FIFO``, ``a socket``, ``a device``, else ``not a file``. Pure."""
    return ("a symlink" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "a FIFO"
            if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
            if stat.S_ISBLK(mode) or stat.S_ISCHR(mode) else "not a file")


def file_identity(path: str) -> tuple[int, int, int, int, int] | None:
    """``(dev, inode, size, mtime_ns, ctime_ns)`` of ``path`` (symlinks followed), ``None`` when it cannot be
    stat'ed: the key of a fact that holds while the file is the same file, unchanged."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def owner_mode(path: str, *, follow: bool = True) -> str | None:
    """``mode 0000, owner uid 0; this process uid 1000`` for ``path`` (``os.stat``, or ``os.lstat`` with
    ``follow=False``); ``None`` when it cannot be stat-ed."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    me = f"; this process uid {os.geteuid()}" if hasattr(os, "geteuid") else ""
    return f"mode {st.st_mode & 0o7777:04o}, owner uid {st.st_uid}{me}"


def permission_detail(path: str) -> str:
    """Why this process may not reach or read ``path``, for a permission error's message: ``" — the
    directory /s is not searchable by this user (mode 0000, owner uid 0; this process uid 65534)"`` for the
    first ancestor that blocks the way (no search permission), else ``" (mode …, owner …)"`` of ``path``
    itself, else ``""``. Source: ``os.access`` and ``os.stat`` of each ancestor (pure read)."""
    absolute = os.path.abspath(path)
    parts = absolute.split(os.sep)[1:-1]
    cur = os.sep
    for part in parts:
        cur = os.path.join(cur, part)
        if os.path.isdir(cur) and not os.access(cur, os.X_OK):
            om = owner_mode(cur)
            return f" — the directory {cur} is not searchable by this user" + (f" ({om})" if om else "")
    om = owner_mode(absolute)
    return f" ({om})" if om else ""


def open_regular_fd(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """``os.open(path, flags, mode)`` for a regular file only (symlinks followed): a FIFO, socket, device or
    directory raises ``OSError`` (``EINVAL``, "not a regular file") instead of blocking forever — a
    ``memory/inbox.md`` pipe once hung every check, a FIFO at clawprobe's own ``.lock`` every ``check --save``.
    The open itself never blocks (``O_NONBLOCK``, which a regular file ignores); the descriptor returned
    blocks as usual."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file only (:func:`open_regular_fd`)."""
    return os.fdopen(open_regular_fd(path), "rb")
