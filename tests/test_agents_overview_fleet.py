"""The agents overview with a fleet of long, similar ids (a replayed receipt file): the agent column is
as wide as the ids need and cuts them in the middle when it must (``prod-eu-west-1`` stays apart from
``-2``); the lease column shows its whole value and ticks with the panes' 1 s clock; the cursor is the
selected agent (Enter, ``c``, ``s``, ``r`` act on the row you see); ``--agent`` opens that agent's panes;
below 80×24 the overview shows the same notice as the panes; ``a`` walks agents worst first."""

from __future__ import annotations

import argparse
import json
from datetime import timedelta

import pytest
from textual.widgets import DataTable

from clawprobe.cli.dashboard import build_app
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from tests.dashboard_support import T0, Clock, text, wait_for

FLEET = ["research-assistant", "research-archive", "prod-eu-west-1", "prod-eu-west-2"]


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def fleet_file(tmp_path, ids: list[str], failing: str) -> str:
    """A receipt file (as ``clawprobe check --json`` lists them) of the two-agents demo's receipts renamed:
    ``failing`` gets the failing agent's receipt, every other id the healthy one's."""
    (healthy, bad), _ = demo.at_now(demo.scenarios()[demo.find("two-agents")], T0)
    receipts = [(bad if i == failing else healthy).model_copy(update={"agent_id": i}) for i in ids]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps([r.model_dump(mode="json") for r in receipts]))
    return str(path)


def replay(path: str, agent: str | None = None, clock: Clock | None = None) -> ClawprobeApp:
    return build_app(argparse.Namespace(command=None, replay=path, agent=agent), clock=clock or Clock())


def column(screen: AgentsScreen, key: str) -> list[str]:
    table = screen.query_one(DataTable)
    idx = list(table.columns).index(key)
    return [str(table.get_row_at(i)[idx]) for i in range(table.row_count)]


async def test_long_ids_get_the_room_they_need_and_stay_apart_when_cut(tmp_path):
    app = replay(fleet_file(tmp_path, FLEET, "research-archive"))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        assert column(screen, "agent") == ["research-archive", "prod-eu-west-1", "prod-eu-west-2",
                                           "research-assistant"]
        table = screen.query_one(DataTable)
        w = {k.value: c.width for k, c in table.columns.items()}
        assert w["agent"] == len("research-assistant") + 1 and sum(w.values()) <= 200
        assert column(screen, "lease")[1] == "✓ 5 min left" and w["lease"] >= len("✓ 9 min 59 s left") + 1
        assert text(screen, "#overview-banner").startswith("✗ FAILING — research-archive (1 of 4 agents)")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        agents = column(screen, "agent")
        assert len(set(agents)) == 4 and all(len(a) < 16 for a in agents), agents
        assert agents[1].endswith("west-1") and agents[2].endswith("west-2") and "…" in agents[0]
        assert column(screen, "tag")[0].startswith("qmd command m")  # the why column keeps room at 80 columns
        assert column(screen, "canary")[0] == "✗ fallback"  # no column pushed off the screen


async def test_the_lease_cells_tick_with_the_clock_without_a_new_report(tmp_path):
    clock = Clock()
    app = replay(fleet_file(tmp_path, FLEET[:2], "research-archive"), clock=clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        report = app.report
        assert column(screen, "lease")[1] == "✓ 5 min left"
        clock.t = T0 + timedelta(seconds=1)
        await wait_for(pilot, lambda: column(screen, "lease")[1] == "✓ 4 min 59 s", 5, "the lease tick")  # 80 columns: "left" gave way
        clock.t = T0 + timedelta(seconds=62)
        await wait_for(pilot, lambda: column(screen, "lease")[1] == "✓ 3 min 58 s", 5, "the next tick")
        assert app.report is report  # cells updated in place: no re-probe, no new report


async def test_the_cursor_is_the_selected_agent_so_every_key_acts_on_the_highlighted_row():
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "ops"  # the worst row
        await pilot.press("j")
        await pilot.pause()
        assert app.screen.highlighted == "main" and app.report.current.agent_id == "main"  # what c/s/r act on
        await pilot.press("k")
        await pilot.pause()
        assert app.report.current.agent_id == "ops"
        await pilot.press("j", "enter", "o")  # back on the overview: the cursor on the agent just shown
        await pilot.pause()
        assert app.screen.highlighted == "main" and app.report.current.agent_id == "main"


async def test_replay_with_agent_opens_that_agents_panes(tmp_path):
    path = fleet_file(tmp_path, FLEET, "research-archive")
    app = replay(path, agent="prod-eu-west-2")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "prod-eu-west-2"
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen) and app.screen.highlighted == "prod-eu-west-2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.report.current.agent_id == "prod-eu-west-2"


async def test_demo_with_agent_opens_that_agents_panes():
    app = ClawprobeApp(demo_index=demo.find("two-agents"), select_agent="main", clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "main"


async def test_below_80x24_the_overview_says_the_terminal_is_too_small():
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        assert screen.query_one("#too-small").display and not screen.query_one(DataTable).display
        assert text(screen, "#too-small").startswith("terminal too small: 60×20 — clawprobe needs 80×24")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not screen.query_one("#too-small").display and screen.query_one(DataTable).display


async def test_a_walks_the_agents_worst_first(tmp_path):
    app = replay(fleet_file(tmp_path, ["alpha", "beta", "gamma"], "beta"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.highlighted == "beta"
        await pilot.press("enter", "a")
        await pilot.pause()
        assert app.report.current.agent_id == "alpha"  # the overview's order: beta (failing), alpha, gamma
        await pilot.press("a")
        await pilot.pause()
        assert app.report.current.agent_id == "gamma"
        await pilot.press("A", "A")
        await pilot.pause()
        assert app.report.current.agent_id == "beta"


@pytest.mark.parametrize("gone", ["#agents-table", "#overview-banner"])
async def test_a_tick_or_report_reaching_an_overview_being_torn_down_is_a_no_op(gone):
    """Under load the App's 1 s tick reached the overview while it was torn down (its table already removed) and
    raised ``NoMatches`` (measured: 5 of 18 parallel runs of this module). It now paints nothing then."""
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        await screen.query_one(gone).remove()
        screen.tick()
        screen.show(app.report)
        app._tick()
        await pilot.pause()


async def test_a_tick_after_the_screens_are_gone_is_a_no_op():
    """The same race at the App: a tick that arrived once the screen stack was emptied (quit under load) read
    ``App.screen`` and raised ``ScreenStackError`` (measured: 1 of 6 parallel runs of this module)."""
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, AgentsScreen)
    assert not app.screen_stack
    app._tick()
