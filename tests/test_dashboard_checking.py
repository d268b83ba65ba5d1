"""While a live start's proving lanes run (the qmd binary check, the ``openclaw`` CLI), the screen shows no
verdict that may flip when they end: the banner, the overview's verdict cells and the terminal title say
checking, with each lane's elapsed time counting up on the clock. (The live lanes themselves:
``tests/test_dashboard_live.py``.)"""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import DataTable

from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.agents import AgentsScreen
from clawprobe.tui.state import build_report
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0, Clock


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def checking_report(name: str, lanes: dict[str, int]):
    rs, _ = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    rep = build_report(rs, T0, source="replay")
    started = {lane: T0 - timedelta(seconds=s) for lane, s in lanes.items()}
    return rep.model_copy(update={"agents": [a.model_copy(update={"checking": started}) for a in rep.agents]})


def plain(markup: str) -> str:
    from textual.content import Content

    return Content.from_markup(markup).plain


@pytest.mark.parametrize("name", ["spec-1-bm25-pending-healthy", "spec-2-qmd-missing"])
def test_the_banner_says_checking_with_elapsed_times_and_no_verdict(name):
    rep = checking_report(name, {"qmd binary": 2, "openclaw CLI": 5})
    line, note, lv = banner_lines(rep, 78, T0)
    text = plain(line)
    assert text.startswith("… CHECKING  openclaw CLI 5 s · qmd binary 2 s")  # the longest-running first
    assert lv == "unknown" and "rule" not in text and not any(w in text for w in ("HEALTHY", "FAILING", "✓", "✗"))
    assert plain(note) == "panes: what the config and the index say; the verdict waits for these lanes"
    done = rep.model_copy(update={"agents": [a.model_copy(update={"checking": {}}) for a in rep.agents]})
    assert "rule" in plain(banner_lines(done, 78, T0)[0])  # the lanes ended: the verdict is shown


async def test_elapsed_time_counts_up_and_the_overview_and_title_say_checking():
    clock = Clock()
    app = ClawprobeApp(report=checking_report("two-agents", {"openclaw CLI": 1}), clock=clock)
    titles: list[str] = []
    title = app.set_terminal_title
    app.set_terminal_title = lambda text: (titles.append(text), title(text))[1]  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.terminal_title == "clawprobe — checking…"
        app.set_report(app.report)  # a repaint while the lanes run (the 1 s tick) sets no verdict title either
        assert set(titles) == {"clawprobe — checking…"}, "the title flipped to a verdict that may change"
        screen = app.screen
        assert isinstance(screen, AgentsScreen)
        assert str(screen.query_one("#overview-banner").render()).startswith("… CHECKING — 2 of 2 agents still proving")
        table = screen.query_one(DataTable)
        assert {str(table.get_row_at(i)[0]) for i in range(table.row_count)} == {"… checking"}
        assert {str(table.get_row_at(i)[2]) for i in range(table.row_count)} == {"…"}, "no provisional reason"
        await pilot.press("enter")
        await pilot.pause()
        assert str(app.query_one("#verdict-line").render()).startswith("… CHECKING  openclaw CLI 1 s")
        clock.t += timedelta(seconds=3)
        app._lanes = {"ops": {"openclaw CLI": T0}}  # a lane the App is running (the tick repaints while any runs)
        app._tick()
        await pilot.pause()
        assert str(app.query_one("#verdict-line").render()).startswith("… CHECKING  openclaw CLI 4 s")


@pytest.mark.parametrize(("name", "agent"), [("spec-6-vsearch-no-canary", "main"), ("spec-2-qmd-missing", "ops-bot")])
async def test_while_a_lane_runs_pane_6_and_the_header_say_so_never_press_r_or_valid_until(name, agent):
    clock = Clock()
    rep = checking_report(name, {"openclaw CLI": 2})
    rep = rep.model_copy(update={"agents": [a.model_copy(update={"receipt": a.receipt.model_copy(
        update={"agent_id": agent}), "diagnosis": a.diagnosis.model_copy(update={"agent_id": agent})})
        for a in rep.agents]})
    app = ClawprobeApp(report=rep, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        pane6 = str(app.query_one("#pane-6-body").render())
        assert pane6.startswith("… CHECKING  openclaw CLI 2 s") and "no need to press r" in pane6
        assert "r in the dashboard" not in pane6 and "▶" not in pane6  # no action while its verdict is withheld
        header2 = str(app.query_one("#header-2").render())
        assert header2.startswith("not valid yet") and "valid until" not in header2
        clock.t += timedelta(seconds=5)
        app._lanes = {agent: {"openclaw CLI": T0}}
        app._tick()
        await pilot.pause()
        assert str(app.query_one("#pane-6-body").render()).startswith("… CHECKING  openclaw CLI 7 s")
        done = app.report.model_copy(update={"agents": [a.model_copy(update={"checking": {}}) for a in app.report.agents]})
        app.set_report(done)  # the lanes ended: the action and the lease are shown
        await pilot.pause()
        assert str(app.query_one("#pane-6-body").render()).startswith("▶ ")
        assert str(app.query_one("#header-2").render()).startswith(("valid until", "lease ended", "no lease"))
