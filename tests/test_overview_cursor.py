"""The overview that opens by itself keeps its cursor on the worst row while the order changes under it (live:
the lanes prove one agent after another and the rows re-sort), so Enter opens the worst agent; once the
operator moves the cursor it follows their choice. ``o`` comes back with the cursor on the agent shown."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from clawprobe.tui.state import AgentView, DashboardReport, build_report
from tests.dashboard_support import T0, Clock


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def _view(scenario: str, agent: str) -> AgentView:
    """The first receipt of a demo scenario as agent ``agent`` (its verdict as core decides it)."""
    rs, _ = demo.at_now(demo.scenarios()[demo.find(scenario)], T0)
    r = rs[0].model_copy(update={"agent_id": agent})
    return build_report([r], T0, source="replay").agents[0]


HEALTHY, FAILING, WARNING = "spec-1", "spec-2", "spec-4"  # healthy, qmd missing (exit 2), stale (exit 1)


def _report(verdicts: dict[str, str]) -> DashboardReport:
    return build_report([_view(s, a).receipt for a, s in verdicts.items()], T0, source="replay")


def _with(app: ClawprobeApp, verdicts: dict[str, str]) -> DashboardReport:
    """The App's report with each agent's receipt replaced (the selection stays on the same id)."""
    views = {a: _view(s, a) for a, s in verdicts.items()}
    agents = [views[a.agent_id] for a in app.report.agents]
    return app.report.model_copy(update={"agents": agents})


def _cursor(screen: AgentsScreen) -> str:
    table = screen.query_one(DataTable)
    return str(table.get_row_at(table.cursor_row)[1])


async def test_the_first_overview_keeps_the_worst_row_selected_while_the_order_changes():
    # config order: the healthy agent first (as live, where the rows start in config order)
    app = ClawprobeApp(report=_report({"main": HEALTHY, "research": WARNING, "ops-bot": HEALTHY}), clock=Clock())
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen) and _cursor(screen) == "research"
        app.set_report(_with(app, {"main": HEALTHY, "research": WARNING, "ops-bot": FAILING}))  # a lane ended
        await pilot.pause()
        assert _cursor(screen) == "ops-bot" and app.report.current.agent_id == "ops-bot"
        app.set_report(_with(app, {"main": WARNING, "research": HEALTHY, "ops-bot": HEALTHY}))
        await pilot.pause()
        assert _cursor(screen) == "main" and app.report.current.agent_id == "main"
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "main"


async def test_once_the_operator_moves_the_cursor_it_follows_their_choice():
    app = ClawprobeApp(report=_report({"main": HEALTHY, "research": WARNING, "ops-bot": FAILING}), clock=Clock())
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen) and _cursor(screen) == "ops-bot"
        await pilot.press("j")  # the operator chooses research
        await pilot.pause()
        assert _cursor(screen) == "research"
        app.set_report(_with(app, {"main": FAILING, "research": WARNING, "ops-bot": HEALTHY}))
        await pilot.pause()
        assert _cursor(screen) == "research" and app.report.current.agent_id == "research"
        await pilot.press("enter")
        await pilot.pause()
        assert app.report.current.agent_id == "research"
        await pilot.press("o")  # back with the cursor on the agent shown, not the worst
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen) and _cursor(app.screen) == "research"
