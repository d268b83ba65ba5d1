"""Which OpenClaw release wrote the state database ``<state>/state/openclaw.sqlite`` (read-only).

2026.9.6 records itself in the ``schema_meta`` row ``meta_key = 'primary'`` (``schema_version`` 18, ``app_version``
``"2026.9.6"``); 2026.7.35 writes schema version 1 and leaves ``app_version`` empty (both measured). An older build
refuses a newer database ("uses newer schema version 18; this build supports 1"), whatever its config says.
"""

from __future__ import annotations

import os
import sqlite3

from clawprobe.core.probes.fileinfo import file_identity
from clawprobe.core.probes.sqlite_ro import column_names, open_ro, table_names


def state_db_path(state_dir: str) -> str:
    """``<state_dir>/state/openclaw.sqlite``: OpenClaw's own state database (2026.7+)."""
    return os.path.join(state_dir, "state", "openclaw.sqlite")


#: path -> (stat identity of the file and its -wal, the answer): every probe asks, the file rarely changes
_SEEN: dict[str, tuple[tuple, str | None]] = {}


def writer_version(state_dir: str) -> str | None:
    """GATHER: the ``app_version`` of the state database's ``schema_meta`` primary row — the release that created or
    last migrated it — or ``None`` (no file, no such table or row, an empty value, or a file SQLite cannot read).
    Opened with ``mode=ro``/``immutable`` (:func:`clawprobe.core.probes.sqlite_ro.open_ro`), once per stat identity of
    the file and its ``-wal`` (the dashboard probes often; the answer changes only with the file); never raises."""
    path = state_db_path(state_dir)
    if not os.path.isfile(path):
        return None
    ident = (file_identity(path), file_identity(path + "-wal"))
    hit = _SEEN.get(path)
    if hit is not None and hit[0] == ident:
        return hit[1]
    value = _read_writer(path)
    _SEEN[path] = (ident, value)
    return value


def _read_writer(path: str) -> str | None:
    try:
        with open_ro(path) as (con, _):
            if con is None or "schema_meta" not in table_names(con) or \
                    not {"meta_key", "app_version"} <= set(column_names(con, "schema_meta")):
                return None
            row = con.execute("SELECT app_version FROM schema_meta WHERE meta_key = 'primary'").fetchone()
    except (sqlite3.Error, OSError):
        return None
    value = str(row[0]).strip() if row is not None and row[0] is not None else ""
    return value[:40] or None
