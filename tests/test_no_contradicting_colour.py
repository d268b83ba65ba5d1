"""No contradicting colour, over every demo scenario and agent: no ✓/green for a gate the diagnosis fails,
no ✗/red for a mode that is not configured (it is dimmed "not used"), nothing green for a backend that is
not serving — checked on the facts every screen renders and on the running dashboard's cells."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, ProgressBar

from clawprobe.core.verdicts import Verdict
from clawprobe.core.view import agent_facts
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.state import DashboardReport, build_report
from clawprobe.tui.widgets.backend_pane import BackendPane
from clawprobe.tui.widgets.countdown_pane import live_line
from tests.dashboard_support import T0, Clock

CASES = [(s.name, i) for s in demo.scenarios() for i in range(len(s.receipts))]
#: the verdicts whose gate is a fact of one pane: that fact must never read ok
GATE = {
    Verdict.STALE_INDEX: ("fresh",),
    Verdict.VECTOR_NOT_READY: ("vectors", "models"),  # pending embeddings or a model still missing
    Verdict.KEYWORD_ONLY: ("vectors",),
    Verdict.RETRIEVAL_FAILED: ("canary",),
    Verdict.FALLBACK_ACTIVE: ("canary",),
}


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("NO_COLOR", raising=False)


def view_of(name: str, i: int):
    rs, _ = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    return build_report(rs, T0, source="demo").agents[i]


@pytest.mark.parametrize(("name", "i"), CASES)
def test_no_fact_contradicts_the_diagnosis(name, i):
    view = view_of(name, i)
    r, d = view.receipt, view.diagnosis
    f = agent_facts(r, d, T0)
    for row in f.rows:
        shown = [row.shown(c) for c in range(4)]
        if not row.configured:  # not used: dimmed, never a failure (nor a green tick)
            assert set(shown) == {"idle"}, (row.label, shown)
        if f.not_serving:  # QMD configured but not answering: nothing green
            assert "ok" not in shown, (row.label, shown)
    if f.not_serving:
        assert f.pending.state != "ok" and f.canary.state != "ok"
        assert not live_line(r, T0)[0].startswith("[$success]")
        rep = DashboardReport(source="demo", agents=[view], evaluated_at=T0)
        qmd_lines = [ln for ln in BackendPane().body(view, rep, T0).splitlines() if ln.startswith("qmd")]
        assert all("$success" not in ln for ln in qmd_lines), qmd_lines  # a binary that works proves nothing
    gate = GATE.get(d.verdict)
    own = f.configured_row
    if gate and own is not None:
        cols = [("fresh", "vectors", "models", "canary").index(g) for g in gate]
        assert not all(own.shown(c) == "ok" for c in cols), (d.verdict, gate)
    if d.verdict is Verdict.VECTOR_NOT_READY and own is not None and own.cells[1].state != "ok":
        assert f.pending.state != "ok"
    if d.verdict is Verdict.HEALTHY:  # nothing red beside a healthy verdict (files behind inside the lease: warn)
        assert f.coverage.state != "fail" and f.canary.state != "fail", (f.coverage, f.canary)
    if d.verdict in (Verdict.RETRIEVAL_FAILED, Verdict.FALLBACK_ACTIVE):
        assert f.canary.state != "ok"
    if d.verdict is Verdict.STALE_INDEX:
        assert not live_line(r, T0)[0].startswith("[$success]")
    if d.verdict is Verdict.CONFIG_DRIFT and r.gateway.drift and own is not None:
        # the running gateway serves another config: the file's mode proves nothing it serves (scenario 9)
        assert "ok" not in [own.shown(c) for c in range(4)] and own.state == "fail", own
    if d.verdict is Verdict.UNVERIFIED and d.reason == "canary_not_indexed" and own is not None:
        assert own.cells[3].state == "unknown" and f.canary.state == "unknown"  # awaiting its update, not failed


async def test_the_running_dashboard_colours_no_cell_against_the_diagnosis():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(120, 40)) as pilot:
        success = app.theme_variables["success"]
        error = app.theme_variables["error"]
        for _ in demo.scenarios():
            await pilot.pause()
            if len(app.report.agents) > 1:
                await pilot.press("enter")  # leave the overview for the worst agent's panes
                await pilot.pause()
            view = app.report.current
            f = agent_facts(view.receipt, view.diagnosis, T0)
            table = app.query_one("#modes-table", DataTable)
            for idx, row in enumerate(f.rows):
                styles = [str(c.style) for c in table.get_row_at(idx)[1:]]
                glyphs = [c.plain.strip() for c in table.get_row_at(idx)[1:]]
                if not row.configured:
                    assert error not in styles and "✗" not in glyphs, (app.report.scenario, row.label)
                    assert success not in styles
                if f.not_serving:
                    assert success not in styles, (app.report.scenario, row.label)
            bar = app.query_one("#pending-bar", ProgressBar)
            if bar.display:  # the bar is green only when the diagnosis calls the vectors ready
                assert bar.has_class("-na") == (f.pending.state != "ok"), app.report.scenario
            await pilot.press("n")
