"""``/`` filters the agents overview as you type (Esc clears it), and the footer's hints follow the
width: the essential keys at 80 columns, the pane keys too from ``FOOTER_WIDE`` (120) columns."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input
from textual.widgets._footer import FooterKey

from clawprobe.tui import demo
from clawprobe.tui.app import FOOTER_WIDE, ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from tests.dashboard_support import Clock


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def listed(screen: AgentsScreen) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


def footer_keys(app: ClawprobeApp) -> list[str]:
    return [k.key_display or k.key for k in app.screen.query(FooterKey)]


async def test_slash_filters_the_overview_and_escape_clears_it():
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen) and listed(screen) == ["ops", "main"]
        await pilot.press("slash")
        box = screen.query_one("#agents-filter", Input)
        assert box.display and box.has_focus
        await pilot.press("m", "a", "i")  # typed into the filter, not taken as keys (a = next agent)
        await pilot.pause()
        assert box.value == "mai" and listed(screen) == ["main"]
        assert "1 of 2 agents" in str(screen.query_one("#overview-hint").render())
        await pilot.press("backspace", "backspace", "backspace", *"failing")  # the verdict word matches too
        await pilot.pause()
        assert listed(screen) == ["ops"]
        await pilot.press("enter")  # back to the list; Enter there opens the one agent left
        await pilot.pause()
        assert screen.query_one(DataTable).has_focus and isinstance(app.screen, AgentsScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert listed(screen) == ["ops", "main"] and not box.display and box.value == ""
        await pilot.press("slash", *"nobody")
        await pilot.pause()
        assert listed(screen) == []
        await pilot.press("escape", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, AgentsScreen) and app.report.current.agent_id == "ops"


@pytest.mark.parametrize(("size", "panes_shown"), [((80, 24), False), ((120, 40), True)])
async def test_the_footer_shows_the_pane_keys_only_when_there_is_room(size, panes_shown):
    app = ClawprobeApp(demo_index=demo.find("spec-2-qmd-missing"), clock=Clock())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        keys = footer_keys(app)
        assert {"?", "r", "n", "q"} <= set(keys)
        assert ({"1", "2", "3", "4", "5", "6"} <= set(keys)) is panes_shown
        assert (size[0] >= FOOTER_WIDE) is panes_shown
        await pilot.press("2")  # the key works either way
        await pilot.pause()
        assert app.focused is not None and app.focused.id in ("pane-2", "modes-table")
        await pilot.press("6")
        await pilot.pause()
        assert app.focused is app.query_one("#pane-6")


async def test_the_footer_follows_a_resize():
    app = ClawprobeApp(demo_index=demo.find("spec-2-qmd-missing"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "1" not in footer_keys(app)
        await pilot.resize_terminal(130, 40)
        await pilot.pause()
        assert "1" in footer_keys(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "1" not in footer_keys(app)
