"""GATHER helpers shared by the live probe and the bundle loader: non-regular memory sources, per-extra-path
file counts, why a canary path would not be indexed, host load and memory, transcripts' tool results.

Read-only, bounded (lstat/scandir, never following symlinks; at most :data:`MAX_SCAN_ENTRIES` entries and
:data:`MAX_TRANSCRIPT_LINES` transcript lines).
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_mod
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from clawprobe.core.evidence import HostRecord
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.fileinfo import open_regular, path_text

MAX_TRANSCRIPT_LINES = 5000
MAX_SCAN_ENTRIES = 5000


def non_regular_files(workspace: str | None, extra_paths: Iterable[str] = ()) -> list[str]:
    """Non-regular files among the memory sources (root ``*.md``, ``memory/**``, extra paths) as
    ``"rel -> target"`` (symlinks) or ``"rel (not a regular file)"``; at most 20, bounded scan."""
    if not workspace or not os.path.isdir(workspace):
        return []
    out: list[str] = []
    seen = 0

    def note(p: str) -> None:
        rel = path_text(os.path.relpath(p, workspace))
        try:
            st = os.lstat(p)
        except OSError:
            return
        if stat_mod.S_ISLNK(st.st_mode):
            try:
                out.append(f"{rel} -> {path_text(os.readlink(p))}")
            except OSError:
                out.append(f"{rel} -> ?")
        elif not (stat_mod.S_ISREG(st.st_mode) or stat_mod.S_ISDIR(st.st_mode)):
            out.append(f"{rel} (not a regular file)")

    with os.scandir(workspace) as it:
        for e in it:
            if e.name.lower().endswith(".md") or e.name == "memory":
                note(e.path)
    stack = [os.path.join(workspace, "memory")] + [p if os.path.isabs(p) else os.path.join(workspace, p)
                                                  for p in extra_paths]
    while stack and seen < MAX_SCAN_ENTRIES and len(out) < 20:
        d = stack.pop()
        if os.path.islink(d) or not os.path.isdir(d):
            continue
        try:
            with os.scandir(d) as it:
                for e in it:
                    seen += 1
                    if e.is_symlink() or not (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False)):
                        note(e.path)
                    elif e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return list(dict.fromkeys(out))[:20]


def extra_path_counts(workspace: str, extra_paths: Iterable[str], home: str | None) -> tuple[int, dict[str, int]]:
    """(files the builtin engine would index under MEMORY.md + memory/, {extra path: its files}) — the
    builtin scanner's own rules (:func:`clawprobe.core.probes.workspace.scan_builtin`)."""
    from clawprobe.core.probes.workspace import scan_builtin

    base = len(scan_builtin(workspace, [], home=home, max_files=MAX_SCAN_ENTRIES).files)
    out = {}
    for p in extra_paths:
        out[p] = max(0, len(scan_builtin(workspace, [p], home=home, max_files=MAX_SCAN_ENTRIES).files) - base)
    return base, out


def explain_canary(expected_path: str, workspace: str, engine: str, agent_id: str, extra_paths: Iterable[str],
                   state_dir: str | None = None, collections: Sequence[Any] = (), *,
                   home: str | None = None) -> list[tuple[str, str]]:
    """Why the canary path would not be indexed (:func:`clawprobe.core.probes.workspace.explain_path`), as
    ``(tag, message)``: for QMD with ``collections`` (the index's own), else ``index.yml`` when present, else
    OpenClaw's defaults. ``missing`` (the file is not on disk) only when nothing else explains it. The extra paths
    are resolved as OpenClaw resolves them (``~`` from ``home``, else this process's; relative to the workspace):
    a ``~/kb`` extra path was "not an extra path" (breaker round 13, N5)."""
    from clawprobe.core.probes import qmd_index as qi
    from clawprobe.core.probes import workspace as wsm

    cols = list(collections)
    if engine == "qmd":
        if not cols and state_dir:
            cols = qi.read_qmd_yml(qi.qmd_paths(state_dir, agent_id).yml).collections
        cols = cols or wsm.default_qmd_collections(agent_id, workspace)
    found = wsm.explain_path(expected_path, workspace, engine="qmd" if engine == "qmd" else "builtin",
                             collections=cols, extra_paths=[wsm.extra_path_abs(x, workspace, home) for x in extra_paths])
    return [(e.tag, e.message) for e in ([e for e in found if e.tag != "missing"] or found)]


def _free(v: os.statvfs_result) -> int:
    """Bytes a writer may still use: blocks a non-root writer may use; for root, every free block."""
    return (v.f_bfree if os.geteuid() == 0 else v.f_bavail) * v.f_frsize


def host_facts(state_dir: str | None = None, index_dir: str | None = None, store_dir: str | None = None) -> HostRecord:
    """CPU count, load average and memory of this host (source: ``os``, ``/proc/meminfo``), and with
    ``state_dir`` its file system's read-only flag and free bytes (``statvfs``); with ``index_dir`` (the agent's
    QMD index dir, when it exists) that dir when its own file system is read-only and the state dir's is not;
    with ``store_dir`` (the agent's builtin store dir) and ``index_dir``, each one's free bytes when it is on a
    file system other than the state dir's (``st_dev`` differs). Never raises."""
    h = HostRecord(cpus=os.cpu_count())
    state_dev = None
    if state_dir:
        try:
            v = os.statvfs(state_dir)
            h.state_read_only = bool(v.f_flag & os.ST_RDONLY)
            h.state_free_bytes = _free(v)
            state_dev = os.stat(state_dir).st_dev
        except OSError:
            pass
    if index_dir and h.state_read_only is False:
        with contextlib.suppress(OSError):
            if os.statvfs(index_dir).f_flag & os.ST_RDONLY:
                h.index_read_only = index_dir
    for which, d in (("store", store_dir), ("index", index_dir)):
        with contextlib.suppress(OSError):
            if d and state_dev is not None and os.stat(d).st_dev != state_dev:
                setattr(h, f"{which}_dir", d)
                setattr(h, f"{which}_free_bytes", _free(os.statvfs(d)))
    try:
        h.loadavg = list(os.getloadavg())
    except OSError:
        pass
    try:
        with open("/proc/meminfo", encoding="utf-8", errors="replace") as f:
            text = f.read(8192)
        info = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        h.mem_total_bytes = int(info["MemTotal"].split()[0]) * 1024
        h.mem_available_bytes = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        pass
    return h


def tool_results(paths: Iterable[str]) -> list[tr.ToolResult]:
    """memory_search tool results from session transcripts (the tail of each file), oldest first, each with
    its chat kind from the ``sessions.json`` next to the transcript (:func:`tool_results.session_kinds`)."""
    out: list[tr.ToolResult] = []
    kinds: dict[str, dict[str, tr.ChatKind]] = {}
    for p in paths:
        folder = os.path.dirname(p)
        if folder not in kinds:
            try:
                with open_regular(os.path.join(folder, "sessions.json")) as f:
                    kinds[folder] = tr.session_kinds(f.read(4 * 1024 * 1024).decode("utf-8", errors="replace"))
            except OSError:
                kinds[folder] = {}
        kind = kinds[folder].get(os.path.basename(p).removesuffix(".jsonl"))
        found = tr.parse_lines(oclog.tail_file(p, 2 * 1024 * 1024)[-MAX_TRANSCRIPT_LINES:])
        out += [t.model_copy(update={"chat_kind": kind}) if kind else t for t in found]
    return sorted(out, key=lambda t: t.at or datetime.min.replace(tzinfo=UTC))
