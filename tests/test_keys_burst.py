"""Keys that arrive in one read (a paste, a laggy SSH link batching keystrokes) go where they would go one by
one: every key after ``/`` into the overview's filter (never an action: ``p`` is no scenario switch, ``s``
no save), every key after a pane key ``1``–``6`` to that pane, every key after Enter on the overview to the
agent it opened, after ``o`` to the overview. The keys are posted to the App in one go, with
no pause between them — as the driver does for one read."""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input

from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from tests.dashboard_support import Clock

NAMES = {"/": "slash", "\r": "enter"}


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def burst(app: ClawprobeApp, keys: str) -> None:
    """Post ``keys`` to the App at once (one read of the terminal), no pause in between."""
    for ch in keys:
        app.post_message(events.Key(NAMES.get(ch, ch), None if ch == "\r" else ch))


@pytest.mark.parametrize("typed", ["ops", "main", "sp"])
async def test_a_burst_after_slash_goes_into_the_filter_and_fires_no_action(typed):
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        scenario = app.report.scenario
        burst(app, "/" + typed)
        await pilot.pause()
        await pilot.pause()
        assert screen.query_one("#agents-filter", Input).value == typed
        assert app.screen is screen and app.report.scenario == scenario  # p switched no scenario, o no screen
        assert notes == []  # s saved nothing (in the demo it says why), a walked no agent


async def test_a_burst_after_a_pane_key_scrolls_that_pane():
    app = ClawprobeApp(demo_index=demo.find("rw43"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane3, pane6 = app.query_one("#pane-3"), app.query_one("#pane-6")
        assert pane3.max_scroll_y >= 2 and pane6.scroll_y == 0
        burst(app, "3jj")
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert app.focused is pane3 and pane3.scroll_y == 2 and pane3.scroll_target_y == 2 and pane6.scroll_y == 0


async def settle(pilot) -> None:
    for _ in range(4):
        await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


@pytest.mark.parametrize("first", ["", "o"])
async def test_a_burst_after_enter_on_the_overview_goes_to_the_agent_it_opened(first):
    """``Enter j j`` on the overview (worst row: ``ops``) opens ``ops`` and scrolls its pane 6 — the j's never
    move the overview's cursor to ``main`` first (it used to open ``main``, or lose the j's). Also straight
    after ``o`` from the panes."""
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        if first:
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is app.screen_stack[0]
        burst(app, first + "\rjj")
        await settle(pilot)
        pane6 = app.query_one("#pane-6")
        assert app.screen is app.screen_stack[0] and app.report.current.agent_id == "ops"
        assert pane6.max_scroll_y > 2 and app.focused is pane6 and pane6.scroll_target_y == 2


async def test_a_burst_after_enter_in_the_filter_moves_the_list():
    """``/ Enter j``: Enter leaves the filter line at once, the ``j`` moves the list's cursor (to ``main``),
    never typed into the filter."""
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        burst(app, "/\rj")
        await settle(pilot)
        assert app.screen is screen and screen.query_one("#agents-filter", Input).value == ""
        assert app.report.current.agent_id == "main"
