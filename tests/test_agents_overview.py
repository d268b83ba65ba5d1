"""The agents overview: with more than one agent it opens first, worst first; the line above it and the
terminal title say the worst verdict and how many agents share it; Enter opens an agent's panes, ``o``
comes back; ``q`` exits with the worst exit code."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from clawprobe.tui.state import build_report, overview, worst_line
from tests.dashboard_support import T0, Clock


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("NO_COLOR", raising=False)


def two_agents():
    rs, _ = demo.at_now(demo.scenarios()[demo.find("two-agents")], T0)
    return build_report(rs, T0, source="demo")


def test_overview_rows_are_worst_first_with_words_not_ids():
    rep = two_agents()
    assert [a.agent_id for a in rep.agents] == ["main", "ops"]  # the scenario's own order: healthy first
    rows = overview(rep, T0)
    assert [(r.agent_id, r.word, r.tag) for r in rows] == [("ops", "✗ FAILING", "qmd command missing"),
                                                          ("main", "✓ HEALTHY", "healthy")]
    assert (rows[0].canary.state, rows[0].canary.words) == ("fail", "fallback")
    assert rows[0].lease.state != "ok"  # time left on a failing agent's lease is no green tick
    assert (rows[1].lease.state, rows[1].lease.words) == ("ok", "5 min left")
    assert worst_line(rep, T0) == ("fail", "✗ FAILING — ops (1 of 2 agents)")


def test_worst_line_counts_every_agent_sharing_the_worst_level():
    rep = two_agents()
    ops = next(a for a in rep.agents if a.agent_id == "ops")
    both = rep.model_copy(update={"agents": [ops, ops.model_copy(update={"receipt": ops.receipt.model_copy(
        update={"agent_id": "ops2"}), "diagnosis": ops.diagnosis.model_copy(update={"agent_id": "ops2"})})]})
    assert worst_line(both, T0)[1] == "✗ FAILING — 2 of 2 agents"


async def test_two_agents_open_on_the_overview_worst_first_and_enter_opens_that_agent():
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen)
        assert app.terminal_title == "clawprobe — ✗ FAILING — ops (1 of 2 agents)"
        assert str(app.screen.query_one("#overview-banner").render()).startswith("✗ FAILING — ops (1 of 2 agents)")
        table = app.screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(table.row_count)] == ["ops", "main"]
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "ops"
        assert "FAILING" in str(app.query_one("#verdict-line").render())
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen)
        await pilot.press("j", "enter")
        await pilot.pause()
        assert app.report.current.agent_id == "main"
        await pilot.press("q")
    assert app.return_value == 2  # the worst agent's exit code, whichever one is shown


async def test_one_agent_opens_on_its_panes_and_o_does_nothing():
    app = ClawprobeApp(demo_index=demo.find("spec-1"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen)
        assert app.terminal_title == "clawprobe — ✓ HEALTHY"


def test_overview_snapshot_80x24(snap_compare):
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    assert snap_compare(app, terminal_size=(80, 24))
