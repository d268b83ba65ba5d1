"""Pilot tests for every dashboard key, on the embedded demo scenarios (no OpenClaw needed), plus the
injectable clock (countdown → stale, header → EXPIRED without a re-probe), replay and "no install" entry
points. The live keys that write (c, s) and live re-probing run against the real test bed in
tests/test_dashboard_live.py."""

from __future__ import annotations

import argparse
import html
import re
from datetime import timedelta
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable

from clawprobe.cli.dashboard import build_app, run
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.demo import find, scenarios
from clawprobe.tui.screens.help import HelpScreen
from clawprobe.tui.sources import LiveSource
from clawprobe.tui.widgets.modes_pane import shown_rows
from tests.dashboard_support import T0, Clock, text, wait_for

REPLAY = Path(__file__).parent / "data" / "replay"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))



def demo_app(name: str, clock=None) -> ClawprobeApp:
    return ClawprobeApp(demo_index=find(name), clock=clock or Clock())


def footer_keys(app: ClawprobeApp) -> list[str]:
    return [b.key for (_n, b, enabled, _t) in app.screen.active_bindings.values() if b.show and enabled]


async def test_first_frame_shows_verdict_rule_evidence_and_all_six_panes():
    app = demo_app("spec-2")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        line = text(app, "#verdict-line")
        assert "✗ FAILING" in line and "QMD unavailable" in line and "rule 4/13" in line and "qmd not on gateway PATH" in line
        assert "evidence: qmd command 'qmd'" in text(app, "#verdict-evidence")
        assert "DEMO 2/18" in text(app, "#header-1") and "OpenClaw 2026.7.35 (QMD era)" in text(app, "#header-1")
        assert "valid until 03:05:00Z" in text(app, "#header-2")
        assert "✗ builtin (FALLBACK)" in text(app, "#pane-1-body")
        assert text(app, "#countdown-live").startswith("· QMD is not serving · age 2 min")  # no lease countdown
        action = app.report.current.diagnosis.next_action
        assert "▶ " + action.title in text(app, "#pane-6-body")
        assert app.focused is app.query_one("#pane-6")
        assert footer_keys(app) == ["question_mark", "r", "n", "q"]  # ≤ 5 at 80 columns


async def test_help_opens_scrolls_and_closes():
    app = demo_app("spec-1")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("#help-scroll")
        assert scroll.max_scroll_y > 0  # it does not fit 80×24, so it must scroll
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("q")  # q closes help, it does not quit the app
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen) and app.is_running


async def test_number_keys_focus_panes_and_modes_cursor_shows_reasons():
    app = demo_app("spec-5")  # query mode, 14 pending
    async with app.run_test(size=(80, 24)) as pilot:
        for n in (1, 3, 4, 5, 6):
            await pilot.press(str(n))
            assert app.focused is app.query_one(f"#pane-{n}")
        await pilot.press("2")
        table = app.query_one(DataTable)
        assert app.focused is table
        assert "query* vectors" in text(app, "#modes-reason") and "14 of 41" in text(app, "#modes-reason")
        await pilot.press("up", "up")  # to search: vectors are n/a for BM25
        await pilot.pause()
        assert "search (not used) vectors" in text(app, "#modes-reason") and "n/a" in text(app, "#modes-reason")
        await pilot.press("left")
        await pilot.pause()
        assert "search (not used) fresh" in text(app, "#modes-reason")
        assert "ready: query* ✗ not ready · search, vsearch not used" in text(app, "#modes-ready")


async def test_enter_opens_the_walkthrough_and_y_copies_the_command(tmp_path):
    app = demo_app("spec-4")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6", "y")
        assert app.clipboard == "openclaw memory index --agent main"
        await pilot.press("enter")
        await pilot.pause()
        from clawprobe.tui.screens.walkthrough import WalkthroughScreen

        assert isinstance(app.screen, WalkthroughScreen)
        assert app.screen.walk.verdict.value == "stale_index"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WalkthroughScreen)
    assert not (tmp_path / "data").exists()  # a demo walk is not written to the operator's history


@pytest.mark.parametrize("name", ["spec-1", "rw21"])
async def test_enter_on_an_expired_healthy_claim_walks_from_what_pane_6_says(name):
    """Once a healthy receipt's lease has ended, pane 6 gives the lapsed action (re-prove the stale index):
    Enter walks from that verdict and its command, never from the check-time "Nothing to repair"."""
    from clawprobe.core.diagnosis import claim_action
    from clawprobe.tui.screens.walkthrough import WalkthroughScreen

    clock = Clock()
    app = demo_app(name, clock=clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.report.current.diagnosis.verdict.value == "healthy"
        clock.t = T0 + timedelta(minutes=30)
        await pilot.pause(1.3)
        shown = claim_action(app.report.current.diagnosis)
        assert shown.command and "Nothing to repair" not in shown.title and "EXPIRED" in text(app, "#header-2")
        await pilot.press("6", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, WalkthroughScreen), 10, "the walkthrough")
        walk = app.screen.walk
        assert walk.verdict.value == "stale_index" and walk.status != "resolved", walk.verdict
        assert walk.title == shown.title and shown.command in [st.command for st in walk.steps]


async def test_agent_keys_switch_every_pane():
    app = demo_app("two-agents")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("j", "enter")  # the overview opens first, worst (ops) on top: open main
        await pilot.pause()
        assert "agent main (2/2" in text(app, "#header-1") and "HEALTHY" in text(app, "#verdict-line")
        assert "a" in footer_keys(app)
        await pilot.press("a")
        await pilot.pause()
        assert "agent ops (1/2" in text(app, "#header-1")  # numbered worst first, as a walks
        assert "QMD unavailable" in text(app, "#verdict-line") and "qmd command missing" in text(app, "#verdict-line")
        assert "/opt/qmd/bin/qmd does not exist" in text(app, "#pane-1-body")
        assert "disagreement" in text(app, "#pane-1-body") and "the verdict follows the measurement" in text(app, "#pane-1-body")
        await pilot.press("A")
        await pilot.pause()
        assert "agent main (2/2" in text(app, "#header-1")


async def test_scenario_keys_and_r_restamp_the_demo():
    clock = Clock()
    app = demo_app("spec-1", clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        assert app.report.scenario.endswith("spec-2-qmd-missing")
        await pilot.press("right_square_bracket")
        assert app.report.scenario.endswith("spec-3-fallback-canary-found")
        await pilot.press("p", "left_square_bracket")
        assert app.report.scenario.endswith("spec-1-bm25-pending-healthy")
        await pilot.press("p")
        assert app.report.scenario.startswith(f"{len(scenarios())}/")  # wraps around
        clock.t = T0 + timedelta(seconds=90)
        await pilot.press("r")
        assert app.report.current.receipt.checked_at == clock.t  # times shifted to the new "now"


async def test_c_and_s_write_nothing_in_the_demo_and_say_why():
    app = demo_app("spec-1")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        before = app.report
        await pilot.press("c", "s")
        await pilot.pause()
        assert app.report is before and app.screen is app.screen_stack[0]  # no confirmation, nothing written
        assert "c" not in footer_keys(app)
        msgs = [n.message for n in app._notifications]
        assert msgs == ["demo: the canary is planted only on a live install (clawprobe, or clawprobe canary plant)",
                        "demo: nothing to save — receipts are saved only on a live install (clawprobe check --save)"]


async def test_palette_by_key_and_by_colon_runs_commands():
    app = demo_app("spec-1")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("colon")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"bloat")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.report.scenario.endswith("rw43-index-bloat")
        assert "index bloated" in text(app, "#verdict-line")
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press("escape")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Quit" in titles and "Screenshot" not in titles  # it saved on the server, and failed there


async def test_q_quits_with_the_worst_exit_code():
    app = demo_app("spec-4")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 1  # stale_index is a warning


async def test_clock_drives_countdown_to_stale_and_header_to_expired_without_reprobe():
    clock = Clock()
    app = demo_app("spec-1", clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        probed = app.report
        assert "5 min left" in text(app, "#countdown-live")
        clock.t = T0 + timedelta(seconds=299)
        await pilot.pause(1.3)
        assert "1 s left" in text(app, "#countdown-live") and "EXPIRED" not in text(app, "#header-2")
        clock.t = T0 + timedelta(seconds=305)
        await pilot.pause(1.3)
        assert "STALE for 5 s" in text(app, "#countdown-live")
        assert app.query_one("#pane-3").has_class("-stale")
        assert "EXPIRED" in text(app, "#header-2") and "the lease ended 5 s ago" in text(app, "#header-2")
        # the claim no longer holds: EXPIRED, never a ✓ HEALTHY beside it (pane 3 says STALE)
        assert "⚠ EXPIRED" in text(app, "#verdict-line") and "was Healthy" in text(app, "#verdict-line")
        assert "✓" not in text(app, "#verdict-line")
        assert app.report.current.receipt is probed.current.receipt  # nothing was re-probed
        # nor in pane 2: the fresh cell that was ok at check time fails now, and the mode is not ready
        row = next(m for m in shown_rows(app.report.current) if m.configured)
        assert row.cells[0].state == "fail" and "the lease ended at 03:05:00Z" in row.cells[0].reason
        assert "✓" not in text(app, "#modes-ready")
        # the banner's exit code is q's, and pane 6 gives replay --now's action (stale index), not "Nothing to repair"
        assert text(app, "#verdict-line").rstrip().endswith("exit 1")
        assert "Nothing to repair" not in text(app, "#pane-6-body")
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 1, "an expired healthy claim is no longer healthy: what replay --now says (stale)"


async def test_replay_shows_a_saved_receipt_and_no_probe_keys():
    args = argparse.Namespace(command=None, replay=str(REPLAY / "spec-3-fallback-canary-found.json"), agent=None)
    app = build_app(args, clock=Clock(T0 + timedelta(hours=2)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "REPLAY" in text(app, "#header-1")
        assert "Fallback active" in text(app, "#verdict-line")
        # a receipt from 03:00 read two hours later: its lease ended, so it must not read as current
        assert "EXPIRED" in text(app, "#header-2") and "the lease ended 1 h 55 min ago" in text(app, "#header-2")
        assert footer_keys(app) == ["question_mark", "q"]


def test_bad_replay_file_and_unknown_scenario_give_one_line_and_exit_3(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text("{not json")
    assert run(argparse.Namespace(command=None, replay=str(bad), agent=None)) == 3
    assert run(argparse.Namespace(command="demo", scenario="nope", list=False, agent=None)) == 3
    err = capsys.readouterr().err
    assert "not JSON (line 1" in err and "'nope' is not a demo scenario" in err and "Traceback" not in err


def test_demo_list_prints_every_scenario_with_its_verdicts(capsys):
    assert run(argparse.Namespace(command="demo", scenario=None, list=True, agent=None)) == 0
    out = capsys.readouterr().out
    assert "spec-4-stale-721s" in out and "main: stale_index" in out and "ops: qmd_unavailable" in out


def screen_text(app: ClawprobeApp) -> str:
    """What the terminal shows, as plain text (the SVG screenshot without its markup)."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]*>", "", svg.split("</style>")[-1])).replace("\xa0", " ")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_no_install_still_opens_and_says_so(tmp_path, size):
    (tmp_path / "home").mkdir()
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}  # nothing: no state dir, no openclaw
    app = ClawprobeApp(live=LiveSource(env=env), clock=Clock(), watch=False)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.report is not None and app.report.missing is not None, 60, "discovery")
        await wait_for(pilot, lambda: all(w in screen_text(app) for w in ("nothing to repair", "--state-dir", "Quit")),
                       30, "the panes, banner and footer")  # a busy host paints later
        assert app.report.agents == [] and "no state dir at" in app.report.missing  # no made-up agent
        assert text(app, "#verdict-line").startswith("? NO OPENCLAW  nothing to probe on this host")
        shown = screen_text(app)
        assert "probing" not in shown  # nothing is waited for
        for i in (2, 3, 4, 5):
            assert "nothing to probe: no OpenClaw here" in str(app.query_one(f"#pane-{i}").query("Static").first().render())
        pane3 = app.query_one("#pane-3")  # it says so on its first row: no blank ticking line above (breaker round 24)
        assert pane3.query_one("#countdown-body").region.y == pane3.scrollable_content_region.y
        assert "nothing to repair" in shown
        # the reason (pane 1, whole) and where else to look (the banner) are said once, and fit
        assert shown.count("no OpenClaw install found") == 1 and shown.count("--state-dir") == 1
        pane1 = app.query_one("#pane-1")
        assert "no running gateway" in str(pane1.query("Static").first().render())
        assert shown.count("clawprobe demo") == 1
        assert text(app, "#verdict-evidence") == "elsewhere: clawprobe --state-dir DIR / --config FILE · or: clawprobe demo"
        # the agent actions cannot work here: neither offered nor bound
        assert [k for k in footer_keys(app) if not k.isdigit()] == ["question_mark", "r", "q"]
        assert not app.check_action("canary", ()) and not app.check_action("save", ())
        await pilot.press("c", "s")
        await pilot.pause()
        assert app.screen is app.screen_stack[0] and not app._notifications
        await pilot.press("q")
    assert app.return_value == 3  # could not run, as `clawprobe check` says


class _CrashingProbe(LiveSource):
    """A located install whose probe code raises (a bug in a probe must not take the dashboard down)."""

    def discover(self) -> None:
        self.installed, self.agent_ids = True, ["main"]

    def fast(self, agent_id, slow, now, *, qmd_check=True):
        raise RuntimeError("index.sqlite: database disk image is malformed")

    def slow(self, agent_id, now):
        raise TimeoutError("openclaw memory status timed out after 30 s")


async def test_a_crashing_probe_lane_becomes_a_verdict_not_a_traceback():
    app = ClawprobeApp(live=_CrashingProbe(), clock=Clock(), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        # both lanes' failures notified *and* painted (the slow lane's notice can come a frame before its verdict)
        await wait_for(pilot, lambda: len(app._notifications) >= 2 and "UNPROVEN" in text(app, "#verdict-line"),
                       timeout=60, what="both crashed lanes shown as an unproven verdict")
        assert app.is_running
        # the banner's evidence line is cut to the width (keeping "+N more"); pane 6 has it whole
        assert text(app, "#verdict-evidence").startswith("evidence: probe could not run: fast probe failed")
        assert "fast probe failed: RuntimeError: index.sqlite: database disk image is malformed" in text(
            app, "#pane-6-body").replace("\n", " ")
        msgs = [n.message for n in app._notifications]
        assert any("slow probe for main failed: TimeoutError" in m for m in msgs), msgs
        await pilot.press("r")  # the lanes are free again: r re-runs them instead of hanging
        await pilot.pause(0.5)
        assert sum(1 for m in app._notifications if "fast probe" in m.message) >= 2


class _CountingRescans(LiveSource):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.rescans = 0

    def rescan(self) -> None:
        self.rescans += 1
        super().rescan()


async def test_a_late_clock_tick_forgets_the_workspace_caches(tmp_path):
    """A tick STALL_S late (the process was SIGSTOPped or starved; inotify may have dropped events and
    watchfiles does not say so) makes the next probe scan the whole tree; on-time ticks do not."""
    from clawprobe.tui.app import STALL_S

    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "OPENCLAW_STATE_DIR": str(tmp_path / "none")}
    live = _CountingRescans(env=env)
    app = ClawprobeApp(live=live, watch=False, fast_refresh_s=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(1.2)
        assert live.rescans == 0  # ticks on time
        app._last_tick -= STALL_S + 1  # as if the process had been stopped that long before this tick
        app._tick()
        assert live.rescans == 1
        app._tick()
        assert live.rescans == 1


@pytest.mark.parametrize("name", ["rw22-model-download", "embedding-in-progress", "rw43-index-bloat"])
async def test_G_reaches_the_real_end_of_a_pane(name):
    """At 80×24, a focused pane's body is as tall as its text once laid out (never the height of an earlier
    text), so ``G`` shows the last line of text at the bottom — no bare ``•``, nothing left for ``j``."""
    from textual.geometry import Region

    app = ClawprobeApp(demo_index=find(name), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("6", "G")
        await pilot.pause()
        pane = app.focused
        body = pane.query_one(".pane-body")
        shown = [s.text.rstrip() for s in body.render_lines(
            Region(0, round(pane.scroll_y), body.size.width, pane.scrollable_content_region.height))]
        whole = [s.text.rstrip() for s in body.render_lines(Region(0, 0, body.size.width, body.size.height))]
        text_lines = [t for t in whole if t]
        assert body.size.height == len(whole) and whole[-1], whole  # no blank tail, no hidden tail
        assert shown[-1] == text_lines[-1] and shown[-1].strip() != "•", shown
        y = pane.scroll_y
        await pilot.press("j", "j")
        await pilot.pause()
        assert pane.scroll_y == y  # nothing below
