"""Temporary files an interrupted clawprobe write left behind, and their sweep.

Every file clawprobe replaces is first written to a hidden temp file next to it — ``.<name>.<8 random
chars>.tmp`` (:func:`clawprobe.core.history.atomic_write` through ``mkstemp``: ``[a-z0-9_]``; the canary writer,
:mod:`clawprobe.core.canary_write`: hex) — and the writer holds an exclusive ``flock`` on it while it is
open. A ``kill -9`` between the create and the rename leaves that file for good (``.receipts.jsonl.x8k2_q1a.tmp``
in the data dir, ``.clawprobe-canary.md.1f2e3d4c.tmp`` in the workspace's memory dir).

:func:`sweep` removes exactly those: a name of that pattern for one of the given target names, a regular file
(never a symlink, never followed), owned by this user, and not locked by a live writer (a non-blocking
``flock`` succeeds). Callers run it under the lock that serializes their own writes to that directory, so a
writer that has created its temp file but not yet locked it cannot be raced. Anything else is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

_RANDOM = r"[a-z0-9_]{8}"
SUFFIX = ".tmp"


def temp_pattern(name: str) -> re.Pattern[str]:
    """The names of clawprobe's own temp files for target ``name``: ``.<name>.<8 of [a-z0-9_]>.tmp``."""
    return re.compile(rf"\.{re.escape(name)}\.{_RANDOM}{re.escape(SUFFIX)}")


def _stale(path: Path) -> bool:
    """True when ``path`` is a regular file of this user that no live writer holds (flock free)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        return True
    finally:
        os.close(fd)


def sweep(directory: str | os.PathLike[str], names: Iterable[str]) -> list[Path]:
    """Remove the stale temp files of targets ``names`` in ``directory`` (see the module docstring); returns
    the paths removed (``[]`` when the directory is missing or unreadable — a sweep never fails a run)."""
    d = Path(directory)
    patterns = [temp_pattern(n) for n in names]
    try:
        entries = sorted(os.listdir(d))
    except OSError:
        return []
    removed: list[Path] = []
    for entry in entries:
        if not any(p.fullmatch(entry) for p in patterns):
            continue
        p = d / entry
        if _stale(p):
            with contextlib.suppress(OSError):
                os.unlink(p)
                removed.append(p)
    return removed


__all__ = ["SUFFIX", "sweep", "temp_pattern"]
