"""node_exporter textfile-collector metrics for ``clawprobe check --format prometheus [--textfile FILE]``.

Every run produces a complete file, also when the check could not run — so a dashboard never keeps
showing the last good verdict. The exposition text comes from ``prometheus_client`` (a registry of one
collector + ``generate_latest``: its format, number rendering and label escaping). Metrics (all gauges
but the info metric; per-agent ones carry the label ``agent``):

``clawprobe_up``                                  1 when every selected agent got a verdict proved by probes
                                                  that ran (:func:`unproven` is None for each); 0 when the check
                                                  could not run, an agent's probe raised, OpenClaw's executable
                                                  is missing or fails, or a probe could not run
``clawprobe_last_run_timestamp_seconds``          unix time this run finished (alert on staleness with it)
``clawprobe_agent_up{agent}``                     the same as ``clawprobe_up``, for one agent
``clawprobe_verdict{agent,verdict,tag}``          1 for the agent's current verdict, 0 for every other verdict
                                                  id; ``tag`` is the verdict's sub-reason on the current series
                                                  (``""`` on the others and when there is none)
``clawprobe_exit_code{agent}``                    the agent's exit code (0 ok, 1 warn, 2 fail, 3 unverified or
                                                  its probe failed)
``clawprobe_lease_seconds_left{agent}``           seconds until the freshness lease ends (absent: nothing proved
                                                  freshness)
``clawprobe_pending_embeddings{agent}``           documents pending embedding (absent: not measured, or QMD's
                                                  ``search`` mode, which never embeds)
``clawprobe_canary_found{agent}``                 1 when this run retrieved the canary from its expected source,
                                                  0 when the retrieval ran and did not (absent: it did not run)
``clawprobe_canary_age_seconds{agent}``           seconds since the canary was last retrieved from its expected
                                                  source (absent otherwise)
``clawprobe_probe_duration_seconds{agent}``       wall time of the agent's probe run
``clawprobe_checked_timestamp_seconds{agent}``    unix time of the agent's receipt (its check time)
``clawprobe_ledger_signals{agent,class}``         the evidence ledger's signals by ``class`` (``explained``,
                                                  ``benign``, ``unrecognized``: always all three, 0 when none);
                                                  the ledger keeps at most 40 entries, unrecognized first
``clawprobe_versions_info{agent,clawprobe,openclaw,qmd}``  1; the versions measured (``""``: not measured)
``clawprobe_coverage_expected_files{agent,source}``  files on disk that the engine's rules index, summed over the
                                                  roots of one ``source`` (:func:`coverage_source`)
``clawprobe_coverage_indexed_files{agent,source}``   those of them the index reflects (absent: not compared with an
                                                  index — none yet, or a capped scan)
``clawprobe_coverage_missing_files{agent,source}``   those the index does not reflect (new, changed, unreadable)
``clawprobe_coverage_skipped_notes{agent,source}``   Markdown notes under the roots that a rule of the engine
                                                  skips (hidden, symlinked, excluded, empty…: explained gaps)

Coverage comes from the receipt's :class:`~clawprobe.core.receipt.SourceCoverage` rows (a disk scan by the
engine's own rules vs the index, or ``memory status`` for session transcripts); absent when nothing was measured.

Cardinality is bounded: per agent at most 13 verdict series + 3 ledger series + 10 others + 4 coverage series per
source (``memory`` and ``sessions``: OpenClaw's own source names, never a path); ``tag`` takes one value per
agent, from the fixed vocabulary of the rules (anything else is written as ``other``); versions are cut
to :data:`MAX_LABEL_CHARS` printable characters. Why a run or an agent produced no proven verdict is
written as a ``# clawprobe: …`` comment line (never a label: no secrets, no cardinality).
:func:`write_textfile` writes atomically (temp file + ``os.replace``, as the collector requires), keeps
the mode of the file it replaces (``0644`` for a new file, so node_exporter — another user — can read it)
and never creates a missing directory.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from clawprobe import __version__
from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.history import atomic_write
from clawprobe.core.receipt import Coverage, Receipt, SourceCoverage
from clawprobe.core.report import ProbeFailure, printable
from clawprobe.core.rules import PROBE_ERROR_TAGS, probe_error_tag
from clawprobe.core.verdicts import Verdict

NEW_FILE_MODE = 0o644
MAX_LABEL_CHARS = 64
#: the sub-reasons that mean "a probe could not run": a verdict carrying one is not proven (``never_indexed``
#: is: the search was withheld because the missing index was measured)
UNPROVEN_TAGS: frozenset[str] = frozenset({"probe_failed", *(tag for _, tag in PROBE_ERROR_TAGS)}) - {"never_indexed"}
_TAG_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")

_HELP = {
    "clawprobe_up": "1 when every selected agent got a verdict proved by probes that ran; 0 when the check could "
                    "not run, OpenClaw is missing or fails, or a probe could not run",
    "clawprobe_last_run_timestamp_seconds": "unix time the clawprobe check run finished",
    "clawprobe_agent_up": "1 when the agent's verdict was proved by probes that ran, 0 otherwise",
    "clawprobe_verdict": "1 for the agent's current verdict (tag: its sub-reason), 0 for the others",
    "clawprobe_exit_code": "clawprobe check exit code for the agent (0 ok, 1 warn, 2 fail, 3 unverified/no verdict)",
    "clawprobe_lease_seconds_left": "seconds until the freshness lease ends",
    "clawprobe_pending_embeddings": "documents pending embedding in the agent's index",
    "clawprobe_canary_found": "1 when this run retrieved the canary from its expected source, 0 when it did not",
    "clawprobe_canary_age_seconds": "seconds since the canary was last retrieved from its expected source",
    "clawprobe_probe_duration_seconds": "wall time of the probe run for the agent",
    "clawprobe_checked_timestamp_seconds": "unix time of the agent's receipt (check time)",
    "clawprobe_versions": "versions measured for the agent (empty: not measured)",
    "clawprobe_ledger_signals": "memory signals of the agent's evidence ledger in the lease window, by class "
                                "(explained, benign, unrecognized; at most 40 kept, unrecognized first)",
}
#: the coverage families (name → help), each a :class:`SourceCoverage` figure summed over the roots of one source
_COVERAGE = {
    "clawprobe_coverage_expected_files": "files on disk that the engine's rules index, by memory source",
    "clawprobe_coverage_indexed_files": "files of them the agent's index reflects, by memory source",
    "clawprobe_coverage_missing_files": "files of them the agent's index does not reflect (new, changed, unreadable)",
    "clawprobe_coverage_skipped_notes": "Markdown notes under the roots that a rule of the engine skips, by memory source",
}
#: the evidence ledger's classes (:class:`clawprobe.core.receipt.LedgerEntry` ``kind``): one series each per agent
LEDGER_CLASSES = ("explained", "benign", "unrecognized")


def _comment(text: str) -> str:
    return "# clawprobe: " + printable(" ".join(text.split()))


def tag_label(tag: str | None) -> str:
    """The ``tag`` label value for a sub-reason: ``""`` for none, the tag when it is a rule identifier
    (lower-case, ``[a-z0-9_]``, ≤ 64 chars), else ``other`` — never free text (pure)."""
    if not tag:
        return ""
    return tag if _TAG_RE.fullmatch(tag) else "other"


def version_label(version: str | None) -> str:
    """A version as a label value: printable, at most :data:`MAX_LABEL_CHARS` characters, ``""`` when unknown."""
    return printable(" ".join((version or "").split()))[:MAX_LABEL_CHARS]


def coverage_source(row: SourceCoverage) -> str:
    """The ``source`` label of a coverage row (pure): ``memory`` for every root clawprobe's disk scan measured
    (``MEMORY.md``, ``memory/``, extra paths, QMD collections — OpenClaw's ``memory`` source), else the
    source ``memory status`` named (``sessions``) as a label identifier (:func:`tag_label`: never a path)."""
    return "memory" if row.measured_by == "disk_scan" else (tag_label(row.source) or "other")


def coverage_totals(coverage: Coverage) -> dict[str, dict[str, int]]:
    """Per ``source`` label, the coverage families' values (pure): ``{"memory": {"clawprobe_coverage_expected_files":
    12, …}}``. A figure is present only when every row of that source measured it (``expected``/``indexed`` are
    ``None`` where not measured); ``missing`` and ``skipped`` are counted for every row with an ``expected``."""
    rows: dict[str, list[SourceCoverage]] = {}
    for row in coverage.sources:
        if row.expected is not None:
            rows.setdefault(coverage_source(row), []).append(row)
    out: dict[str, dict[str, int]] = {}
    for source, group in rows.items():
        figures = {"clawprobe_coverage_expected_files": sum(r.expected or 0 for r in group),
                   "clawprobe_coverage_missing_files": sum(r.missing for r in group),
                   "clawprobe_coverage_skipped_notes": sum(sum(r.skipped.values()) for r in group)}
        if all(r.indexed is not None for r in group):
            figures["clawprobe_coverage_indexed_files"] = sum(r.indexed or 0 for r in group)
        out[source] = figures
    return out


def unproven(r: Receipt, d: Diagnosis) -> str | None:
    """Why the agent's verdict is not proved by probes that ran, or ``None`` (pure).

    Not proven: the verdict's sub-reason says a probe could not run (:data:`UNPROVEN_TAGS`), OpenClaw's
    executable is missing or its ``--version`` failed (no version measured), or a probe error names the
    ``openclaw`` CLI (``openclaw_not_found``/``openclaw_failed``) whatever verdict an earlier rule gave.
    """
    if d.reason in UNPROVEN_TAGS:
        return f"agent {d.agent_id}: verdict {d.verdict.value} · {d.reason}: a probe could not run"
    tag = probe_error_tag(r.probe_errors)
    if tag in UNPROVEN_TAGS and tag != "probe_failed":
        return f"agent {d.agent_id}: {tag}: {r.probe_errors[0]}"
    if r.openclaw.version is None:
        return f"agent {d.agent_id}: openclaw_not_found: no OpenClaw version measured (executable missing or failing)"
    return None


class _Run(Collector):
    """One check run as metric families (only families with samples are yielded)."""

    def __init__(self, pairs: Sequence[tuple[Receipt, Diagnosis]], durations: Mapping[str, float], now: datetime,
                 failures: Sequence[ProbeFailure], cannot_run: str | None) -> None:
        self.pairs, self.durations, self.now, self.failures, self.cannot_run = pairs, durations, now, failures, cannot_run

    def collect(self) -> Iterator[Metric]:
        g = {name: GaugeMetricFamily(name, text, labels=None if name in _GLOBAL else ["agent"])
             for name, text in _HELP.items()
             if name not in ("clawprobe_verdict", "clawprobe_versions", "clawprobe_ledger_signals")}
        verdict = GaugeMetricFamily("clawprobe_verdict", _HELP["clawprobe_verdict"], labels=["agent", "verdict", "tag"])
        info = InfoMetricFamily("clawprobe_versions", _HELP["clawprobe_versions"], labels=["agent"])
        ledger = GaugeMetricFamily("clawprobe_ledger_signals", _HELP["clawprobe_ledger_signals"], labels=["agent", "class"])
        coverage = {n: GaugeMetricFamily(n, text, labels=["agent", "source"]) for n, text in _COVERAGE.items()}
        ok = self.cannot_run is None and not self.failures and bool(self.pairs)
        for r, d in self.pairs:
            a = d.agent_id
            proven = unproven(r, d) is None
            ok = ok and proven
            g["clawprobe_agent_up"].add_metric([a], 1 if proven else 0)
            for v in Verdict:
                current = v is d.verdict
                verdict.add_metric([a, v.value, tag_label(d.reason) if current else ""], 1 if current else 0)
            g["clawprobe_exit_code"].add_metric([a], d.exit_code)
            if d.lease_seconds_left is not None:
                g["clawprobe_lease_seconds_left"].add_metric([a], d.lease_seconds_left)
            if r.vectors.pending is not None and not (r.config.configured_backend == "qmd"
                                                      and r.config.search_mode == "search"):  # BM25 never embeds
                g["clawprobe_pending_embeddings"].add_metric([a], r.vectors.pending)
            if r.canary.outcome is not None:
                g["clawprobe_canary_found"].add_metric([a], 1 if r.canary.outcome == "found" else 0)
            if r.canary.outcome == "found" and r.canary.retrieved_at is not None:
                g["clawprobe_canary_age_seconds"].add_metric([a], max(0.0, (self.now - r.canary.retrieved_at).total_seconds()))
            if a in self.durations:
                g["clawprobe_probe_duration_seconds"].add_metric([a], self.durations[a])
            g["clawprobe_checked_timestamp_seconds"].add_metric([a], r.checked_at.timestamp())
            for kind in LEDGER_CLASSES:
                ledger.add_metric([a, kind], sum(1 for e in r.ledger if e.kind == kind))
            info.add_metric([a], {"clawprobe": version_label(__version__), "openclaw": version_label(r.openclaw.version),
                                  "qmd": version_label(r.qmd.version)})
            for source, figures in coverage_totals(r.coverage).items():
                for name, value in figures.items():
                    coverage[name].add_metric([a, source], value)
        for f in self.failures:
            a = f.agent_id or ""
            g["clawprobe_agent_up"].add_metric([a], 0)
            g["clawprobe_exit_code"].add_metric([a], f.exit_code)
            if f.agent_id is not None and f.agent_id in self.durations:
                g["clawprobe_probe_duration_seconds"].add_metric([a], self.durations[f.agent_id])
        g["clawprobe_up"].add_metric([], 1 if ok else 0)
        g["clawprobe_last_run_timestamp_seconds"].add_metric([], self.now.timestamp())
        order = ["clawprobe_up", "clawprobe_last_run_timestamp_seconds", "clawprobe_agent_up"]
        families = [*(g[n] for n in order), verdict, *(m for n, m in g.items() if n not in order), ledger,
                    *coverage.values(), info]
        yield from (m for m in families if m.samples)  # an absent metric is absent, not an empty family


_GLOBAL = ("clawprobe_up", "clawprobe_last_run_timestamp_seconds")


def render(pairs: Sequence[tuple[Receipt, Diagnosis]], durations: Mapping[str, float], now: datetime,
           failures: Sequence[ProbeFailure] = (), cannot_run: str | None = None) -> str:
    """The metrics text (Prometheus text exposition format 0.0.4, from ``prometheus_client``; pure).

    ``pairs``: the diagnosed agents; ``durations``: seconds per agent id; ``now``: the run's end (aware);
    ``failures``: agents whose probe raised (``clawprobe_exit_code`` 3, no verdict series);
    ``cannot_run``: why the whole check produced nothing (then only ``clawprobe_up 0`` and the timestamp).
    The ``# clawprobe:`` lines first: why the run, or an agent, has no proven verdict.
    """
    comments = [_comment(cannot_run)] if cannot_run else []
    comments += [_comment(f"agent {f.agent_id}: {f.reason}") for f in failures]
    comments += [_comment(why) for r, d in pairs if (why := unproven(r, d)) is not None]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Run(pairs, durations, now, failures, cannot_run))
    return "".join(c + "\n" for c in comments) + generate_latest(registry).decode("utf-8")


def textfile_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot take the metrics file, or ``None``: its directory is missing (never created
    here) or not writable, or ``path`` itself is a directory. Checked before probing, so a typo costs
    no probe run. I/O: ``stat`` and ``access`` only."""
    p = Path(path)
    parent = p.parent
    if not parent.is_dir():
        return f"cannot write {p}: the directory {parent} does not exist (clawprobe does not create it)"
    if p.is_dir():
        return f"cannot write {p}: it is a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write {p}: no permission to create files in {parent}"
    return None


def write_textfile(path: str | Path, text: str) -> Path:
    """Write the metrics atomically (the collector must never read a half-written file).

    Mode: that of the file being replaced, else :data:`NEW_FILE_MODE` (``0644``; the temp file's ``0600``
    would hide it from node_exporter). A missing directory raises ``FileNotFoundError`` (not created).
    """
    p = Path(path)
    try:
        st = p.stat()
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else NEW_FILE_MODE
    except OSError:
        mode = NEW_FILE_MODE
    atomic_write(p, text, mode=mode, make_parents=False)
    return p
