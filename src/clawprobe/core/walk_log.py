"""Where walkthroughs are recorded: one JSON file per walk, rewritten atomically after every event, under
clawprobe's data dir next to the receipt history, so the next operator sees what was tried.

Layout: ``<data dir>/walks/<agent id>/<UTC start>-<walk id>.json``. The data dir is ``$CLAWPROBE_DATA_DIR``
when set, else ``platformdirs.user_data_dir("clawprobe")`` (the same rule as the receipt history). Writes go
to a temp file in the same directory, are fsynced, then ``os.replace``d — a reader never sees half a walk.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from clawprobe.core import history
from clawprobe.core.history import data_dir
from clawprobe.core.probes.fileinfo import open_regular

if TYPE_CHECKING:  # pragma: no cover
    from clawprobe.core.walk import Walk

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


#: a recorded walk larger than this is skipped (one walk is a few kB)
MAX_WALK_BYTES = 16 * 1024 * 1024


def walks_dir(agent_id: str, root: str | os.PathLike[str] | None = None) -> Path:
    """``<data dir>/walks/<agent id>`` (the agent id made file-name safe)."""
    base = Path(root) if root is not None else data_dir()
    return base / "walks" / (_SAFE.sub("_", agent_id) or "_")


def walk_path(walk: Walk, root: str | os.PathLike[str] | None = None) -> Path:
    """The file one walk is recorded in."""
    stamp = walk.started_at.strftime("%Y%m%dT%H%M%SZ")
    return walks_dir(walk.agent_id, root) / f"{stamp}-{walk.walk_id}.json"


def save_walk(walk: Walk, root: str | os.PathLike[str] | None = None) -> Path:
    """Write ``walk`` atomically (``clawprobe.core.history.atomic_write``: temp file + fsync + ``os.replace``); returns
    its path. Raises ``OSError`` when the data dir cannot be written (the caller reports it; the walk goes on)."""
    path = walk_path(walk, root)
    history.atomic_write(path, walk.model_dump_json(indent=2))
    return path


def load_walks(agent_id: str, root: str | os.PathLike[str] | None = None, limit: int = 5) -> list[Walk]:
    """The agent's most recent recorded walks, newest first. Unreadable files — not a regular file, larger than
    :data:`MAX_WALK_BYTES`, not JSON, nested too deeply, not a walk — are skipped, never raised."""
    from clawprobe.core.walk import Walk

    d = walks_dir(agent_id, root)
    if not d.is_dir():
        return []
    out: list[Walk] = []
    for p in sorted(d.glob("*.json"), reverse=True):
        try:
            with open_regular(p) as f:  # a FIFO here once blocked `clawprobe walk` forever
                raw = f.read(MAX_WALK_BYTES + 1)
            if len(raw) > MAX_WALK_BYTES:
                continue
            out.append(Walk.model_validate(json.loads(raw.decode("utf-8"))))
        except (OSError, ValueError, ValidationError, RecursionError):
            continue
        if len(out) >= limit:
            break
    return out
