"""What ``clawprobe_up`` means, the bounded labels and the escaping of the textfile (clawprobe.core.prometheus),
on the recorded demo receipts; read back with prometheus_client's own parser."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.prometheus import (
    LEDGER_CLASSES,
    UNPROVEN_TAGS,
    coverage_source,
    coverage_totals,
    render,
    tag_label,
    unproven,
    version_label,
)
from clawprobe.core.receipt import Coverage, LedgerEntry, SourceCoverage
from clawprobe.core.replay import load_receipts
from clawprobe.core.report import ProbeFailure
from tests.promtext import samples

SCENARIOS = Path(__file__).resolve().parent.parent / "src" / "clawprobe" / "tui" / "demo" / "scenarios"
NOW = datetime(2026, 11, 30, 3, 10, tzinfo=UTC)


def _one(name: str):
    (r,) = load_receipts(next(SCENARIOS.glob(f"*{name}*.json")))
    return r


def test_up_is_1_only_when_every_verdict_was_proved_by_probes_that_ran():
    r = _one("bm25-pending-healthy")
    assert unproven(r, diagnose(r)) is None and samples(render([(r, diagnose(r))], {}, NOW))["clawprobe_up"] == 1
    # the same receipt with OpenClaw gone: no version measured, the CLI probe could not run
    gone = r.model_copy(deep=True, update={"agent_id": "work"})
    gone.openclaw.version = None
    gone.probe_errors = ["no `openclaw` executable found (gateway, PATH, $CLAWPROBE_OPENCLAW)"]
    d = diagnose(gone)
    assert (d.verdict.value, d.reason) == ("unverified", "openclaw_not_found")
    m = samples(render([(r, diagnose(r)), (gone, d)], {}, NOW))
    assert m["clawprobe_up"] == 0 and m['clawprobe_agent_up{agent="main"}'] == 1 and m['clawprobe_agent_up{agent="work"}'] == 0


def test_an_earlier_verdict_with_a_failing_openclaw_is_not_proven():
    """qmd_unavailable fires before unverified, but the `openclaw memory status` call failed: up 0, and why."""
    r = _one("qmd-missing").model_copy(deep=True)
    r.probe_errors = ["openclaw memory status: exit 1"]
    d = diagnose(r)
    assert d.verdict.value == "qmd_unavailable"
    text = render([(r, d)], {}, NOW)
    assert samples(text)["clawprobe_up"] == 0
    assert "# clawprobe: agent main: openclaw_failed: openclaw memory status: exit 1\n" in text


def test_a_probe_error_that_is_not_the_cli_keeps_an_earlier_verdict_proven():
    r = _one("qmd-missing").model_copy(deep=True)
    r.probe_errors = ["openclaw memory search not run (no index): agent main has no QMD index yet, and the search would build it"]
    d = diagnose(r)
    assert d.reason not in UNPROVEN_TAGS and unproven(r, d) is None


def test_failures_and_cannot_run_are_down():
    r = _one("bm25-pending-healthy")
    m = samples(render([(r, diagnose(r))], {"main": 1.0}, NOW, [ProbeFailure(agent_id="work", reason="boom")]))
    assert m["clawprobe_up"] == 0 and m['clawprobe_exit_code{agent="work"}'] == 3
    assert samples(render([], {}, NOW, cannot_run="no install"))["clawprobe_up"] == 0
    assert samples(render([], {}, NOW))["clawprobe_up"] == 0  # no agent at all: nothing proven


def test_labels_are_bounded_and_escaped():
    assert tag_label(None) == "" and tag_label("not_on_path") == "not_on_path"
    assert tag_label('x"} 1\nclawprobe_up 1') == "other" and tag_label("A" * 10) == "other" and tag_label("a" * 65) == "other"
    v = version_label("2026.7.35\n\x1b[31m" + "9" * 100)
    assert v.startswith("2026.7.35 ") and len(v) == 64 and v.isprintable()
    r = _one("bm25-pending-healthy").model_copy(update={"agent_id": 'we"ird\\agent'})
    m = samples(render([(r, diagnose(r))], {}, NOW))
    assert m['clawprobe_exit_code{agent="we"ird\\agent"}'] == 0  # the parser undid prometheus_client's escaping
    series = [k for k in m if k.startswith("clawprobe_verdict{")]
    assert len(series) == 13  # one per verdict id, whatever the tag


def test_every_series_of_one_agent_is_bounded():
    pairs = [(x, diagnose(x)) for x in load_receipts(next(SCENARIOS.glob("*two-agents*.json")))]
    m = samples(render(pairs, {p[0].agent_id: 1.0 for p in pairs}, NOW))
    per_agent = [k for k in m if 'agent="main"' in k]
    assert 13 < len(per_agent) <= 13 + 3 + 10


def _ledger(*kinds: str) -> list[LedgerEntry]:
    return [LedgerEntry(source="gateway log (file)", line=f"memory signal {i}", kind=k,  # type: ignore[arg-type]
                        tag="qmd_timeout" if k == "explained" else None, why="listed" if k == "benign" else None)
            for i, k in enumerate(kinds)]


def test_ledger_counts_per_class_are_exported_for_every_agent():
    """clawprobe_ledger_signals{agent,class}: the receipt's ledger counted by class; all three classes are
    always written (0 when none), so an alert on unrecognized > 0 never sees an absent series."""
    quiet = _one("bm25-pending-healthy").model_copy(deep=True, update={"agent_id": "quiet"})
    quiet.ledger = []
    noisy = _one("bm25-pending-healthy").model_copy(deep=True, update={"agent_id": "noisy"})
    noisy.ledger = _ledger("unrecognized", "unrecognized", "benign", "explained", "explained", "explained")
    d = diagnose(noisy)
    assert d.verdict.value == "unverified"  # an unrecognized signal is never healthy: the metric says why
    m = samples(render([(quiet, diagnose(quiet)), (noisy, d)], {}, NOW))
    got = {k: v for k, v in m.items() if k.startswith("clawprobe_ledger_signals{")}
    assert got == {'clawprobe_ledger_signals{agent="quiet",class="explained"}': 0,
                   'clawprobe_ledger_signals{agent="quiet",class="benign"}': 0,
                   'clawprobe_ledger_signals{agent="quiet",class="unrecognized"}': 0,
                   'clawprobe_ledger_signals{agent="noisy",class="explained"}': 3,
                   'clawprobe_ledger_signals{agent="noisy",class="benign"}': 1,
                   'clawprobe_ledger_signals{agent="noisy",class="unrecognized"}': 2}
    assert LEDGER_CLASSES == tuple(LedgerEntry.model_fields["kind"].annotation.__args__)  # every class, no other


def test_ledger_counts_of_a_failed_probe_are_absent_not_zero():
    """An agent whose probe raised has no ledger: no series (0 would claim 'no unrecognized signal')."""
    r = _one("bm25-pending-healthy")
    m = samples(render([(r, diagnose(r))], {}, NOW, [ProbeFailure(agent_id="work", reason="boom")]))
    assert not [k for k in m if k.startswith("clawprobe_ledger_signals{") and 'agent="work"' in k]
    assert len([k for k in m if k.startswith("clawprobe_ledger_signals{") and 'agent="main"' in k]) == 3


def _with_coverage(rows: list[SourceCoverage]):
    r = _one("bm25-pending-healthy").model_copy(deep=True)
    r.coverage = Coverage(sources=rows, measured="before_probe")
    return r


def test_coverage_is_summed_per_memory_source_with_openclaws_source_names_as_labels():
    """Every disk-scanned root (MEMORY.md, memory/, an extra path, a QMD collection) is OpenClaw's ``memory``
    source; session transcripts counted by ``memory status`` are ``sessions``; a root's path is never a label."""
    r = _with_coverage([
        SourceCoverage(source="MEMORY.md", measured_by="disk_scan", expected=1, indexed=1),
        SourceCoverage(source="/srv/team kb/notes", measured_by="disk_scan", expected=40, indexed=37, missing=3,
                       skipped={"hidden_path": 2, "empty_file": 1}),
        SourceCoverage(source="sessions", measured_by="status", expected=12, indexed=9, missing=3),
    ])
    text = render([(r, diagnose(r))], {}, NOW)
    m = samples(text)
    mem, ses = 'agent="main",source="memory"', 'agent="main",source="sessions"'
    assert m[f"clawprobe_coverage_expected_files{{{mem}}}"] == 41 and m[f"clawprobe_coverage_indexed_files{{{mem}}}"] == 38
    assert m[f"clawprobe_coverage_missing_files{{{mem}}}"] == 3 and m[f"clawprobe_coverage_skipped_notes{{{mem}}}"] == 3
    assert (m[f"clawprobe_coverage_expected_files{{{ses}}}"], m[f"clawprobe_coverage_indexed_files{{{ses}}}"]) == (12, 9)
    assert "team kb" not in text and "MEMORY.md" not in text
    assert coverage_source(SourceCoverage(source="/odd path", measured_by="status")) == "other"


def test_coverage_not_compared_with_an_index_has_no_indexed_series_and_no_coverage_none():
    """A root whose scan was not compared with an index (none yet, a capped scan) gives no ``indexed`` figure for
    its source — not 0, which would read as "nothing indexed"; a receipt without coverage gives no series."""
    r = _with_coverage([SourceCoverage(source="memory/", measured_by="disk_scan", expected=5, indexed=5),
                        SourceCoverage(source="kb", measured_by="disk_scan", expected=7, indexed=None)])
    m = samples(render([(r, diagnose(r))], {}, NOW))
    assert m['clawprobe_coverage_expected_files{agent="main",source="memory"}'] == 12
    assert not any(k.startswith("clawprobe_coverage_indexed_files") for k in m)
    bare = _one("bm25-pending-healthy")
    assert coverage_totals(bare.coverage) == {}
    assert not any(k.startswith("clawprobe_coverage_") for k in samples(render([(bare, diagnose(bare))], {}, NOW)))
