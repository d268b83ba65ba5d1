"""The receipt's per-root :class:`~clawprobe.core.receipt.Coverage` from the evidence (pure).

The disk-scan roots come from the store measurement taken *before* clawprobe's own ``openclaw`` CLI probes
(``Evidence.stores_before``, RW48: a builtin ``memory search`` syncs the index) when there is one, else from
the one store measurement; on builtin, the roots only OpenClaw's status measures (session transcripts) from
``memory status --json`` (``sourceCounts`` vs ``scan.sources``, RW51) — on QMD every root is a collection the
disk scan measures, and status counts are only a weak hint there (a pattern may exclude what its scan
counts). Where the index changed between the two store measurements, ``probe_side_effect`` says so (and a
``probe_side_effect`` finding shows it as a warning).
"""

from __future__ import annotations

from clawprobe.core.evidence import Evidence, SlowEvidence, StoreEvidence
from clawprobe.core.probes import coverage as cov
from clawprobe.core.receipt import Coverage, Finding, Receipt
from clawprobe.core.rules import WORKSPACE_WORDS, unset_reference, workspace_gone


def measured_stores(ev: Evidence) -> StoreEvidence | None:
    """The store measurement freshness and coverage are read from: the one before the CLI probes when it
    compared disk with an index, else ``ev.stores``."""
    before = ev.stores_before
    if before is not None and before.comparison is not None:
        return before
    return ev.stores


def merge_coverage(r: Receipt, ev: Evidence, slow: SlowEvidence | None) -> None:
    """Fill ``r.coverage`` (see the module doc); ``slow`` is the CLI probes with their parsed facts
    (:func:`clawprobe.core.interpret.runs.slow_facts`), ``None`` when none ran."""
    st = measured_stores(ev)
    sources = list(st.coverage) if st is not None else []
    early = st is not None and st is ev.stores_before
    entry = slow.status.entry(r.agent_id) if slow is not None and slow.status is not None else None
    if entry is not None and r.config.configured_backend != "qmd":  # QMD: every collection is disk-scanned
        sources += cov.status_sources(entry.source_files, entry.scan_source_files, [c.source for c in sources])
    after = ev.stores.comparison if ev.stores is not None else None
    effect = cov.side_effect(ev.stores_before.comparison, after) if early and ev.stores_before is not None else None
    legacy = ev.extra.legacy_transcripts if entry is not None and "sessions" in entry.source_files else None
    r.coverage = Coverage(sources=sources, measured=("before_probe" if early else "after_probe") if sources else None,
                          probe_side_effect=effect, workspace=st.workspace_state if st is not None else None,
                          legacy_transcripts=legacy or None, notes_nearby=st.notes_nearby if st is not None else None,
                          missing_roots=st.missing_roots if st is not None else [],
                          emptied_roots=st.emptied_roots if st is not None else {},
                          linked_roots=st.linked_roots if st is not None else {},
                          rename_clashes=st.rename_clashes if st is not None else {},
                          glob_roots=st.glob_roots if st is not None else {},
                          hollow_notes=st.hollow_notes if st is not None else [])
    if effect is not None:
        r.findings.append(Finding(tag="probe_side_effect", source="clawprobe's own probe", message=effect))
    if r.coverage.workspace in ("missing", "not_dir") and workspace_gone(r) is None:
        r.findings.append(Finding(tag="workspace_missing", source="disk (workspace)",
                                  message=f"the workspace {r.config.workspace} {WORKSPACE_WORDS[r.coverage.workspace]}: "
                                          "nothing there can be indexed or searched — fix the configured workspace "
                                          "path, or create it" + unset_reference(r.config.workspace)
                                          + (f"; notes are at {r.coverage.notes_nearby} (MEMORY.md or memory/): set "
                                             "the agent's workspace there" if r.coverage.notes_nearby else "")))


def store_mark(st: StoreEvidence | None) -> tuple | None:
    """What identifies the state one store measurement saw (pure): files matched, every unreflected change
    (path, kind, time), and the index file's identity (bytes of the database and its ``-wal``, the newest
    chunk update of a builtin index). ``None`` when nothing was compared."""
    if st is None or st.comparison is None:
        return None
    cmp = st.comparison
    index = st.builtin_index or st.qmd_index
    opened = index.open if index is not None else None
    return (cmp.matched, tuple(sorted((c.rel, c.kind, c.at.isoformat()) for c in cmp.changes)),
            opened.db_bytes if opened else None, opened.wal_bytes if opened else None,
            st.builtin_index.last_chunk_update_at if st.builtin_index is not None else None)


class BeforeHold:
    """The live dashboard's hold on the store measurement taken before its own ``openclaw`` CLI probes, so its
    verdict is the one ``clawprobe check`` gives (RW48: a builtin ``memory search`` syncs the index, and every
    probe after it would find the index current and call a dead watcher healthy).

    ``slow`` is the CLI evidence the measurement ``before`` preceded. :meth:`apply` attaches ``before`` to the
    evidence of each later fast probe merging that same ``slow`` — but only when the probe changed the index
    (:func:`clawprobe.core.probes.coverage.side_effect` of before vs the first measurement after) and only
    while every later measurement sees the state that first one saw (:func:`store_mark`): an edit, a new
    note or another program's index run ends the hold, and so does the next CLI probe (a new hold). Pure."""

    def __init__(self, slow: SlowEvidence, before: StoreEvidence | None) -> None:
        self.slow, self.before = slow, before
        self.mark: tuple | None = None

    def apply(self, ev: Evidence) -> bool:
        """Set ``ev.stores_before`` when the hold stands for ``ev``; False when it has ended (drop it)."""
        before = self.before
        if ev.slow is not self.slow or before is None or before.comparison is None:
            return False
        mark = store_mark(ev.stores)
        if self.mark is None:
            after = ev.stores.comparison if ev.stores is not None else None
            if mark is None or cov.side_effect(before.comparison, after) is None:
                return False  # the probe changed nothing: later probes measure as usual
            self.mark = mark
        elif mark != self.mark:
            return False
        ev.stores_before = before
        return True


__all__ = ["BeforeHold", "measured_stores", "merge_coverage", "store_mark"]
