"""What an operator needs to fix a permission fault: a file's mode and owner, and who is asking (pure read).

Used by the QMD store check, clawprobe's read-only SQLite opener and the workspace scan, so a permission
fault reads the same wherever it is found.
"""

from __future__ import annotations

import os


def owner_mode(path: str, *, follow: bool = True) -> str | None:
    """``mode 0000, owner uid 0; this process uid 1000`` for ``path`` (``os.stat``, or ``os.lstat`` with
    ``follow=False``); ``None`` when it cannot be stat-ed."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None
    me = f"; this process uid {os.geteuid()}" if hasattr(os, "geteuid") else ""
    return f"mode {st.st_mode & 0o7777:04o}, owner uid {st.st_uid}{me}"
