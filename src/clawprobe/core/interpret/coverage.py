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
    r.coverage = Coverage(sources=sources, measured=("before_probe" if early else "after_probe") if sources else None,
                          probe_side_effect=effect)
    if effect is not None:
        r.findings.append(Finding(tag="probe_side_effect", source="clawprobe's own probe", message=effect))


__all__ = ["measured_stores", "merge_coverage"]
