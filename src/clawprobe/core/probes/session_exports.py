"""Session transcripts the QMD backend has not exported yet (OpenClaw ≤ 2026.7.35, ``memory.qmd.sessions.enabled``).

QMD never reads ``agents/<id>/sessions/*.jsonl``: OpenClaw's update cycle (and ``openclaw memory index``) first
writes each transcript as ``<export dir>/<session>.md`` — ``memory.qmd.sessions.exportDir``, else
``agents/<id>/qmd/sessions`` — and the ``sessions-<id>`` collection indexes those. A transcript with no export,
or one written after its export, is therefore not in the index whatever the collection scan says (measured with
2026.7.35: a third transcript stayed unfound until ``openclaw memory index`` exported it; breaker round 8, n04).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from clawprobe.core.probes.fileinfo import path_text
from clawprobe.core.probes.workspace import Change, extra_path_abs

MAX_TRANSCRIPTS = 10_000  #: transcripts looked at per agent (a sessions dir is one flat directory)
PEEK_BYTES = 65_536  #: how much of a transcript is read to see whether it holds a message at all


def export_dir(state_dir: str, agent_id: str, configured: str | None, workspace: str, home: str | None) -> str:
    """Where OpenClaw writes the agent's session exports: ``configured`` (``memory.qmd.sessions.exportDir``,
    ``~`` from ``home``, relative to the workspace), else ``<state>/agents/<id>/qmd/sessions``."""
    if configured:
        return extra_path_abs(configured, workspace, home)
    return os.path.join(state_dir, "agents", agent_id, "qmd", "sessions")


def sharing_agents(mine: str, others: Mapping[str, str]) -> list[str]:
    """The ids (sorted) of the other agents whose export dir (``others``: id → dir, from :func:`export_dir`) is
    ``mine`` — compared after ``realpath`` (a symlink to the same dir is the same dir); ``[]`` when none.

    Each agent's export run (2026.7.35 ``exportSessions``) deletes every ``*.md`` in its export dir that is not one
    of its own transcripts, so agents sharing one dir (an absolute ``memory.qmd.sessions.exportDir``) delete each
    other's exports: every index run of one agent drops the other's transcripts from that agent's index, a
    running gateway (which rewrites an export only when its transcript changed) loses both, and ``openclaw memory
    index`` of one undoes the other (measured, breaker round 26)."""
    real = os.path.realpath(mine)
    return sorted(a for a, d in others.items() if os.path.realpath(d) == real)


def unexported(sessions_dir: str, exports: str, now: datetime, retention_days: int | None = None) -> list[Change]:
    """GATHER: one ``new`` change per transcript (``*.jsonl``, a regular file holding a ``"message"`` record in
    its first :data:`PEEK_BYTES`) whose ``<stem>.md`` is missing from ``exports`` or older than the transcript;
    ``at`` is the transcript's mtime. Transcripts older than ``retention_days`` are not exported by design and
    are left out. ``lstat``/``scandir`` plus that peek; never raises (an unreadable dir gives ``[]``)."""
    out: list[Change] = []
    oldest = now - timedelta(days=retention_days) if retention_days else None
    try:
        with os.scandir(sessions_dir) as it:
            entries = [e for _, e in zip(range(MAX_TRANSCRIPTS), it, strict=False) if e.name.endswith(".jsonl")]
    except OSError:
        return []
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            at = datetime.fromtimestamp(st.st_mtime_ns / 1e9, tz=UTC)
            if oldest is not None and at < oldest:
                continue
            md = os.path.join(exports, e.name[:-len(".jsonl")] + ".md")
            try:
                if os.stat(md).st_mtime_ns >= st.st_mtime_ns:
                    continue
                why = "written after its export"
            except FileNotFoundError:
                why = "not exported"
            with open(e.path, "rb") as f:
                if b'"message"' not in f.read(PEEK_BYTES):
                    continue  # no message yet: nothing to export
        except OSError:
            continue
        out.append(Change(rel=f"sessions/{path_text(e.name)}", kind="new", at=at, evidence=(
            f"session transcript {why} to {path_text(exports)} (QMD indexes the export, not the transcript)")))
    return out
