"""Layouts that use 120×40 and 200×50: in every demo scenario the repair pane (6) needs no scrollbar and
panes 1–4 take the rows their content needs (none stands half empty while pane 6 scrolls); at 200×50 pane 6
shows the next action's command whole where one line can hold it. (80×24: ``tests/test_dashboard_fit.py``.)"""

from __future__ import annotations

import pytest
from textual.widgets import Static

from clawprobe.core.view import shown_command
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from tests.dashboard_support import Clock, demo_panes


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def content_rows(app: ClawprobeApp, n: int) -> int:
    """Rows pane ``n``'s content takes (its shown children, wrapped at the pane's width)."""
    pane = app.query_one(f"#pane-{n}")
    return sum(child.outer_size.height for child in pane.children if child.display)


@pytest.mark.parametrize("size", [(120, 40), (200, 50)])
async def test_the_repair_pane_needs_no_scrollbar_and_panes_1_to_4_fit_their_content(size):
    app = ClawprobeApp(demo_index=0, clock=Clock())
    problems = []
    async with app.run_test(size=size) as pilot:
        for s in demo.scenarios():
            await pilot.pause()
            if len(app.report.agents) > 1:
                await pilot.press("enter")
                await pilot.pause()
            six = app.query_one("#pane-6")
            if six.show_vertical_scrollbar or content_rows(app, 6) > six.scrollable_content_region.height:
                problems.append((s.name, 6, content_rows(app, 6), six.scrollable_content_region.height))
            for n in (1, 2, 3, 4):
                view = app.query_one(f"#pane-{n}").scrollable_content_region.height
                if view != content_rows(app, n):  # neither cut nor padded with blank rows
                    problems.append((s.name, n, content_rows(app, n), view))
            await pilot.press("n")
    assert problems == [], "\n".join(map(str, problems))


async def test_at_200x50_the_repair_pane_shows_each_command_whole_that_a_line_can_hold():
    # pane 6 gets the wider column (≥ 110 cells): every command up to that is shown whole; the few longer
    # ones (env-prefixed qmd calls, 200–290 characters) stay one line cut with … and y copies them whole
    app = ClawprobeApp(demo_index=0, clock=Clock())
    seen = 0
    async with app.run_test(size=(200, 50)) as pilot:
        async for _ in demo_panes(app, pilot):
            command, _ = shown_command(app.report.current.diagnosis.next_action)
            body = app.query_one("#pane-6-body", Static)
            assert body.content_size.width >= 110
            if command and len(command) + 2 <= body.content_size.width - 1:
                lines = str(body.render()).splitlines()
                assert "$ " + command in lines, command
                seen += 1
    assert seen >= 5  # the scenarios do show commands
