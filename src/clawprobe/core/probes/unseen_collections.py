"""Configured QMD roots the agent's index has no collection for yet (OpenClaw ≤ 2026.7.35).

OpenClaw turns ``memory.qmd.paths`` and ``memorySearch.extraPaths`` into QMD collections only when its manager
next runs ``ensureCollections`` — at the gateway's next update, or inside any CLI ``memory search`` (measured with
2026.7.35: the canary search added the collections, indexed their notes and rewrote ``index.yml``; breaker round
9, p11). Until then nothing under such a root is searchable, yet a scan of the index's own collections matches
perfectly. So: the roots are compared with the collections by path; their notes are unreflected changes, dated
no earlier than the config file's last change (the moment the root could first be known); and a check withholds
its canary search, which would write the index.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from clawprobe.core.probes.fileinfo import path_text
from clawprobe.core.probes.qmd_yml import QmdCollection
from clawprobe.core.probes.workspace import Change, extra_path_abs

MAX_NOTES = 10_000  #: notes listed per check under roots the index has no collection for
_SKIP_DIRS = {"node_modules", ".git", ".venv", "__pycache__"}


def unseen_roots(configured: Iterable[str], collections: Sequence[QmdCollection], workspace: str,
                 home: str | None) -> list[str]:
    """The configured roots (raw ``memory.qmd.paths`` / ``extraPaths`` values, resolved as OpenClaw resolves them)
    that are existing directories no collection's path covers (at or above them), in order, without repeats.
    ``lstat``/``isdir`` only."""
    have = [os.path.realpath(c.path) for c in collections if c.path]  # symlinks, "~", "..": compared resolved
    out: list[str] = []
    for raw in configured:
        p = os.path.normpath(extra_path_abs(raw, workspace, home))
        real = os.path.realpath(p)
        if p in out or not os.path.isdir(p):
            continue
        if not any(real == h or real.startswith(h.rstrip(os.sep) + os.sep) for h in have):
            out.append(p)
    return out


def unseen_notes(roots: Sequence[str], workspace: str, not_before: datetime | None) -> list[Change]:
    """GATHER: one ``new`` change per Markdown note under ``roots`` (hidden and dependency dirs skipped, symlinks
    not followed, at most :data:`MAX_NOTES`), dated by its mtime but never before ``not_before`` (the config
    file's mtime). Never raises."""
    out: list[Change] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
            for n in sorted(filenames):
                if not n.endswith(".md") or n.startswith("."):
                    continue
                p = os.path.join(dirpath, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                at = datetime.fromtimestamp(st.st_mtime_ns / 1e9, tz=UTC)
                rel = os.path.relpath(p, workspace)
                rel = p if rel.startswith("..") else rel  # outside the workspace: named by its own path
                out.append(Change(rel=path_text(rel), kind="new", at=max(at, not_before) if not_before else at,
                                  evidence=f"under {path_text(root)}, which the config names and the agent's QMD "
                                           "index has no collection for yet"))
                if len(out) >= MAX_NOTES:
                    return out
    return out
