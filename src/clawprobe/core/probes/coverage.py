"""Per-root coverage: for each root OpenClaw indexes for the agent, the files its rules claim vs what the index
reflects (issue 13 "coverage, measured").

Consumes the results of :mod:`clawprobe.core.probes.workspace` — a :class:`~clawprobe.core.probes.workspace.DiskScan`
taken by the engine's own scanner rules (QMD: each collection's path, pattern and qmd's skips; builtin:
``MEMORY.md``, ``memory/**/*.md``, each extra path) and the disk-vs-index
:class:`~clawprobe.core.probes.workspace.Comparison` — and never scans itself, so a cache underneath (the
dashboard's incremental :class:`~clawprobe.core.probes.workspace_cache.WorkspaceCache`) stays the scanner's
business. Pure.

Per root: ``expected`` files the rules index; ``missing`` those the index does not reflect (new, changed,
unreadable — never explained: stale); ``indexed`` the rest; ``skipped`` the Markdown notes under the root
that a rule skips, by reason (explained gaps, but notes the operator put where memory is searched). Files
that no root's pattern claims are outside the question and are not counted.

``status_sources`` adds the roots only OpenClaw's status measures — session transcripts: ``memory status
--json`` ``sourceCounts[].files`` (indexed) vs ``scan.sources[].totalFiles`` (on disk).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from clawprobe.core.probes.workspace import Comparison, DiskScan
from clawprobe.core.receipt import SourceCoverage

MISSING_LISTED = 5
#: change kinds that leave a file the root claims unreflected by the index (``deleted`` is a ghost: the index
#: holds more than disk, a freshness fact, not a coverage gap)
MISSING_KINDS = frozenset({"new", "changed", "unreadable"})
#: sources the disk scan measures itself; status counts for them are a weaker hint (a QMD collection's
#: pattern may exclude files the status scan counts) and are not used
DISK_SOURCES = frozenset({"memory"})


def _root_of(abs_path: str, roots: Mapping[str, str]) -> str | None:
    """The label of the longest root that holds ``abs_path`` (a root may be a file: ``MEMORY.md``)."""
    best: tuple[int, str] | None = None
    for label, root in roots.items():
        if abs_path == root or abs_path.startswith(root.rstrip(os.sep) + os.sep):
            if best is None or len(root) > best[0]:
                best = (len(root), label)
    return best[1] if best else None


def from_scan(scan: DiskScan, cmp: Comparison | None) -> list[SourceCoverage]:
    """One :class:`SourceCoverage` per root of ``scan`` (root order), measured by ``disk_scan``.

    ``cmp`` is the comparison of the same scan with the index; without it (no index to compare with) or
    when it is partial, ``indexed`` stays ``None`` (not measured) and ``missing`` 0."""
    files: dict[str, int] = dict.fromkeys(scan.roots, 0)
    owner: dict[str, str] = {}
    for f in scan.files:
        label = f.collection if f.collection in files else _root_of(f.abs_path, scan.roots)
        if label is None:
            continue
        files[label] += 1
        owner[f.rel] = label
    return assemble(files, owner, cmp if not scan.capped else None, scan.root_notes, scan.root_notes_listed)


def assemble(expected: Mapping[str, int], owner: Mapping[str, str], cmp: Comparison | None,
             notes: Mapping[str, Mapping[str, int]], listed: Mapping[str, Sequence[str]]) -> list[SourceCoverage]:
    """The :class:`SourceCoverage` rows, one per label of ``expected`` (its order): ``expected[label]`` files the
    engine's rules take under that root, ``owner`` maps a file's display path to its root label (at least for
    every file ``cmp`` lists as new/changed/unreadable), ``cmp`` the comparison with the index (``None`` or
    partial: not measured), ``notes``/``listed`` the Markdown notes a rule skips per label (counts by reason,
    examples). Shared by a full scan (:func:`from_scan`) and the dashboard's incremental cache
    (:meth:`clawprobe.core.probes.workspace_cache.WorkspaceCache.coverage`), so both say the same."""
    missing: dict[str, list[str]] = {label: [] for label in expected}
    measured = cmp is not None and not cmp.partial
    if measured and cmp is not None:
        for ch in cmp.changes:
            if ch.kind in MISSING_KINDS and ch.rel in owner and owner[ch.rel] in missing:
                missing[owner[ch.rel]].append(ch.rel)
    out = []
    for label, n in expected.items():
        miss = missing[label]
        out.append(SourceCoverage(
            source=label, measured_by="disk_scan", expected=n,
            indexed=max(n - len(miss), 0) if measured else None, missing=len(miss),
            missing_examples=miss[:MISSING_LISTED], skipped=dict(notes.get(label, {})),
            skipped_notes=list(listed.get(label, []))))
    return out


def status_sources(indexed: Mapping[str, int], on_disk: Mapping[str, int],
                   measured: Sequence[str] = ()) -> list[SourceCoverage]:
    """The roots only ``memory status`` measures (pure): per source in ``on_disk`` (``scan.sources[].totalFiles``)
    that is not among ``measured`` labels nor a disk-scanned source (:data:`DISK_SOURCES`), the indexed count
    ``indexed`` (``sourceCounts[].files``; absent = 0 indexed) and the gap, by ``status``."""
    out = []
    for source, total in on_disk.items():
        if source in DISK_SOURCES or source in measured:
            continue
        got = indexed.get(source, 0)
        out.append(SourceCoverage(source=source, measured_by="status", expected=total, indexed=min(got, total),
                                  missing=max(total - got, 0)))
    return out


def side_effect(before: Comparison | None, after: Comparison | None) -> str | None:
    """What changed in the index between the measurement before clawprobe's ``openclaw`` CLI probes and the
    one after (pure): the files unreflected before and reflected after (a sync the probe caused), or
    ``None`` when nothing moved or either is missing."""
    if before is None or after is None:
        return None
    was = {c.rel: c.kind for c in before.changes}
    now = {c.rel for c in after.changes}
    synced = sorted(r for r in was if r not in now)
    if not synced:
        return None

    def listed(rels: list[str]) -> str:
        return ", ".join(rels[:3]) + (f" and {len(rels) - 3} more" if len(rels) > 3 else "")

    dropped = [r for r in synced if was[r] == "deleted"]
    added = [r for r in synced if was[r] != "deleted"]
    what = [f"{len(added)} file(s) unindexed before `openclaw memory search` ran were indexed after it "
            f"({listed(added)})"] if added else []
    what += [f"{len(dropped)} file(s) gone from disk were dropped from the index ({listed(dropped)})"] if dropped else []
    return (f"the index changed during clawprobe's own probe: {'; '.join(what)} — the coverage and freshness "
            "shown are the measurement taken before")


__all__ = ["DISK_SOURCES", "MISSING_KINDS", "assemble", "from_scan", "side_effect", "status_sources"]
