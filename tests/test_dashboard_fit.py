"""Fit 80×24: every pane's key line is above its fold in every demo scenario, pane 3's ticking line is never
cut mid-word (its narrower forms instead), commands are one line (cut
with ``…``, their program and verb kept: tests/test_fit_command.py; copied whole with ``y``), scroll
positions never carry over to another scenario, and below
80×24 a plain notice replaces the panes."""

from __future__ import annotations

import argparse
import json

import pytest
from textual.content import Content
from textual.widgets import Static

from clawprobe.cli.dashboard import build_app
from clawprobe.core.view import shown_command
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.dashboard_support import T0, Clock, demo_panes, wait_for


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def key_lines(app: ClawprobeApp) -> dict[int, list[str]]:
    """Per pane, the lines an operator must see without scrolling (a text each starts with)."""
    view = app.report.current
    r = view.receipt
    keys: dict[int, list[str]] = {1: ["configured", "effective"], 5: ["retrieved"]}
    if r.config.error is None and r.config.configured_backend == "qmd":
        keys[1].append("qmd")
    elif r.config.error is None:
        keys[1].append("provider")
    command, _ = shown_command(view.diagnosis.next_action)
    keys[6] = ["▶"] + (["$ "] if command else [])
    return keys


def row_of(app: ClawprobeApp, n: int, start: str) -> int | None:
    """The screen row (within the pane's viewport, 0 = first) of the first wrapped body line of pane ``n``
    that starts with ``start`` (leading glyphs and spaces ignored); ``None`` when absent."""
    pane = app.query_one(f"#pane-{n}")
    static = pane.query_one(".pane-body", Static)
    width = static.content_size.width
    lines = Content.from_markup(static._clawprobe_text).wrap(width)  # type: ignore[attr-defined]
    offset = static.region.y - pane.scrollable_content_region.y
    for i, line in enumerate(lines):
        text = line.plain.lstrip("✓✗?–· ")
        if text.startswith(start) or line.plain.startswith(start):
            return offset + i
    return None


async def test_every_key_line_is_above_its_pane_fold_at_80x24_in_every_scenario():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    below = []
    async with app.run_test(size=(80, 24)) as pilot:
        async for s in demo_panes(app, pilot):
            for n, starts in key_lines(app).items():
                height = app.query_one(f"#pane-{n}").scrollable_content_region.height
                for start in starts:
                    row = row_of(app, n, start)
                    if row is None or row >= height:
                        below.append((s.name, n, start, row, height))
    assert below == [], "\n".join(map(str, below))


async def test_pane_3s_ticking_line_is_never_cut_at_80x24_in_every_scenario():
    """The ticking line (lease left, then the age) is wider than pane 3 at 80 columns: it was cut mid-unit
    (``✓ fresh · 4 min 56 s left · age 2 mi…``). A narrower form is shown instead (the age in one unit, then no
    age: the body's first line says when the index was proven current), and the lease left is never cut."""
    from datetime import timedelta

    from clawprobe.tui.widgets.countdown_pane import CountdownPane, LiveLine

    clock = Clock()
    app = ClawprobeApp(demo_index=0, clock=clock)
    cut = []
    async with app.run_test(size=(80, 24)) as pilot:
        async for s in demo_panes(app, pilot):
            clock.t += timedelta(seconds=3)  # a scenario is shown as of now: 3 s later "4 min 57 s left · age 2 min 3 s"
            app.query_one(CountdownPane).tick()
            await pilot.pause()
            line = app.query_one(LiveLine)
            shown = line.render()
            if "…" in shown.plain or shown.cell_length > line.size.width:
                cut.append((s.name, shown.plain, line.size.width))
            whole = line.text.split("\n")[0]
            if "left" in whole:
                assert " left" in shown.plain and "STALE" not in shown.plain, (s.name, shown.plain)
    assert cut == [], "\n".join(map(str, cut))


def long_home(root) -> str:
    """A home directory whose state dir (``<home>/.openclaw``) is a 150-character path."""
    base = root / "srv"
    middle = ("customers-eu/" * 20)[:150 - len(str(base)) - len("//operators/.openclaw")]
    home = base / (middle[:-1] + "x" if middle.endswith("/") else middle) / "operators"
    assert len(str(home / ".openclaw")) == 150
    home.mkdir(parents=True)
    return str(home)


async def test_no_install_with_a_150_character_state_dir_keeps_pane_1_above_its_fold(tmp_path):
    """No OpenClaw here and the home is deep: pane 1 says why whole, its state dir cut in the middle (its parent
    and name kept), so every fact discovery checked is above the fold and the pane does not scroll at 80×24."""
    home = long_home(tmp_path)
    env = {"HOME": home, "PATH": "/usr/bin:/bin"}  # no state dir under it, no openclaw on PATH, no gateway
    app = ClawprobeApp(live=LiveSource(env=env), clock=Clock(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.report is not None and app.report.missing is not None, 60, "discovery")
        await pilot.pause()
        pane = app.query_one("#pane-1")
        static = pane.query_one(".pane-body", Static)
        height = pane.scrollable_content_region.height

        def wrapped() -> list[str]:
            return [x.plain for x in Content.from_markup(static._clawprobe_text).wrap(static.content_size.width)]

        # the body is re-fitted once the pane has its width (on_resize, after the layout pass)
        await wait_for(pilot, lambda: len(wrapped()) <= height and pane.max_scroll_y == 0, 5,
                       f"pane 1 to fit its {height} rows: {wrapped()}")
        lines = wrapped()
        shown = " ".join(x.strip() for x in lines[:height])
        for fact in ("no OpenClaw install found", "no state dir at /", "/operators/.openclaw (~/.openclaw)",
                     "no config", "no running gateway", "no `openclaw` on PATH"):
            assert fact in shown, (fact, lines, height)


async def test_commands_are_one_line_cut_with_an_ellipsis_and_y_copies_them_whole():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in demo.scenarios():
            await pilot.pause()
            command, _ = shown_command(app.report.current.diagnosis.next_action)
            body = app.query_one("#pane-6-body", Static)
            shown = [x for x in str(body.render()).splitlines() if x.startswith("$ ") or x.startswith("  ")]
            if command:
                (line,) = [x for x in shown if x.startswith("$ ")]
                assert Content(line).cell_length <= body.content_size.width
                assert line == "$ " + command or "…" in line  # a preview (tests/test_fit_command.py); y copies it whole
                assert not [x for x in shown if x.startswith("  ") and x.strip() and x.strip() in command]
            await pilot.press("n")


async def test_y_copies_a_command_for_qmd_unavailable():
    app = ClawprobeApp(demo_index=demo.find("spec-2-qmd-missing"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6", "y")
        assert app.clipboard == "PATH=/usr/bin:/bin command -v qmd"  # step 1 of the walkthrough, the gateway PATH shown


async def test_scroll_positions_do_not_carry_over_to_the_next_scenario():
    app = ClawprobeApp(demo_index=demo.find("spec-2-qmd-missing"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6", "end")
        await pilot.pause()
        pane = app.query_one("#pane-6")
        assert pane.scroll_y > 0
        await pilot.press("n")
        await pilot.pause()
        assert pane.scroll_y == 0


async def test_below_80x24_a_notice_replaces_the_panes():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(79, 24)) as pilot:
        await pilot.pause()
        assert not app.query_one("#panes").display
        note = str(app.query_one("#too-small").render())
        assert note.startswith("terminal too small: 79×24 — clawprobe needs 80×24")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.query_one("#panes").display and not app.query_one("#too-small").display


async def test_vim_keys_scroll_the_focused_pane():
    app = ClawprobeApp(demo_index=demo.find("spec-2-qmd-missing"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one("#pane-6")
        await pilot.press("6", "j")
        await pilot.pause()
        assert pane.scroll_y == 1
        await pilot.press("G")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y > 1
        await pilot.press("k")
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y - 1
        await pilot.press("g")
        await pilot.pause()
        assert pane.scroll_y == 0


@pytest.mark.parametrize("size", [(80, 23), (79, 24), (60, 20), (40, 12)])
async def test_the_too_small_notice_never_wraps_its_command(size):
    app = ClawprobeApp(demo_index=0, clock=Clock())
    app.plain_command = "clawprobe check"  # a live dashboard's without flags (the demo's notice has none)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        note = app.query_one("#too-small", Static)
        shown = [x.plain for x in Content.from_markup(str(note.render())).wrap(note.content_size.width)]
        assert any("clawprobe check" in x for x in shown), shown  # the command whole on one line, never split


def test_the_too_small_notice_names_the_install_the_dashboard_probes():
    """Below 80×24 the notice offered ``$ clawprobe check`` whatever the dashboard showed: a live dashboard
    started with ``--state-dir``/``--config``/``--agent`` would have its operator probe another install (the
    default one), the demo's would probe the real host, a replay's the host instead of the file (breaker
    round 24). The way out is the plain-text form of what is on the screen, or none for the demo."""
    from clawprobe.tui.too_small import too_small

    for kw, words in [({"state_dir": "/srv/oc a/state", "agent": "ops-bot"},
                       "$ clawprobe --state-dir '/srv/oc a/state' check --agent ops-bot"),
                      ({"config": "/etc/openclaw/prod.json"}, "$ clawprobe --config /etc/openclaw/prod.json check"),
                      ({}, "$ clawprobe check")]:
        app = ClawprobeApp(live=LiveSource(**kw), clock=Clock())
        note = too_small(60, 20, app.plain_command)
        assert note is not None and note.endswith("\n" + words), (kw, note)
    demo_note = too_small(60, 20, ClawprobeApp(demo_index=0, clock=Clock()).plain_command)
    assert demo_note is not None and "clawprobe check" not in demo_note and "resize" in demo_note


async def test_a_replays_too_small_notice_replays_its_file(tmp_path):
    rs, _ = demo.at_now(demo.scenarios()[demo.find("two-agents")], T0)
    path = tmp_path / "saved receipts.json"
    path.write_text(json.dumps([r.model_dump(mode="json") for r in rs]))
    app = build_app(argparse.Namespace(command=None, replay=str(path), agent="ops"), clock=Clock())
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert str(app.query_one("#too-small").render()).endswith(f"$ clawprobe replay '{path}'")

def test_cut_paths_cuts_only_a_path_wider_than_the_width_and_keeps_the_words():
    from clawprobe.tui.widgets.fit import cut_paths

    why = "no state dir at /a/b/c/d/e/.openclaw (~/.openclaw), no config"
    assert cut_paths(why, 16) == "no state dir at /a/…/e/.openclaw (~/.openclaw), no config"
    assert cut_paths(why, 40) == why and cut_paths(why, None) == why
    assert cut_paths("bad /srv/x/y/z/openclaw.json:2:5 here", 20) == "bad …/openclaw.json:2:5 here"


async def test_two_agents_header_line_1_is_whole_at_80x24():
    """The demo's two agents at 80 columns: line 1 was cut at its end (``… · qmd 2…``); it now fits, each
    agent's place and both versions whole."""
    app = ClawprobeApp(demo_index=demo.find("two-agents"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("enter")  # the overview opens first: the worst agent's panes
        await pilot.pause()
        seen = []
        for _ in app.report.agents:
            header = app.query_one("#header-1", Static)
            line = str(header.render())
            seen.append(line)
            assert "…" not in line and Content(line).cell_length <= header.content_size.width, line
            assert "OpenClaw 2026.7.35" in line and line.endswith(("qmd 2.8.3", "qmd ?")), line
            await pilot.press("a")
            await pilot.pause()
    assert sorted(s.split(" (")[0] for s in seen) == [" DEMO 18/18  agent main", " DEMO 18/18  agent ops"], seen
