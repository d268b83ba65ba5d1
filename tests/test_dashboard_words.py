"""The dashboard's words match the verdict's meaning, data never breaks the markup, durations are human,
the banner always shows rule and exit code, commands are shown whole, and narrow terminals keep every
column — pure tests on the embedded demo scenarios plus Pilot tests where only the running App proves it."""

from __future__ import annotations

import argparse
import itertools
import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from textual.content import Content
from textual.widgets import DataTable

from clawprobe.cli.dashboard import build_app
from clawprobe.core.diagnosis import claim_exit_code
from clawprobe.core.durations import human_ages
from clawprobe.core.replay import load_receipts
from clawprobe.core.rules import RULES
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.help import KEYS, body_markup
from clawprobe.tui.state import build_report, reevaluate
from clawprobe.tui.widgets.action_pane import BREAK_AFTER, INDENT, PROMPT, fold_command
from clawprobe.tui.widgets.canary_pane import returned_line, steps
from clawprobe.tui.widgets.fmt import LEVEL_WORD, ago, dur, e, level
from clawprobe.tui.widgets.header import header_lines
from clawprobe.tui.widgets.modes_pane import headers_for, ready_line, shown_rows
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0, Clock, text

REPLAY = Path(__file__).parent / "data" / "replay"
ALL = [s.name for s in demo.scenarios()]


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain.replace("\u200b", "")


def report_for(name: str, now: datetime = T0):
    rs, _ = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    return build_report(rs, now, source="demo")



# ------------------------------------------------------------------------------------- markup is data-safe
def test_escape_keeps_every_string_literal_next_to_tags():
    rnd = random.Random(20261130)
    for _ in range(5000):
        s = "".join(rnd.choice("[]\\/$@#=:ab ") for _ in range(rnd.randint(0, 10)))
        assert plain(f"[b]{e(s)}[/b][$accent]{e(s)}[/]!") == s + s + "!", repr(s)
    for s in ("] / [", "[$accent]x", "C:\\dir\\", "[/b]", "\\[x]"):
        assert plain(f"[b]{e(s)}[/b]") == s


def test_help_markup_shows_data_as_text_and_no_tag():
    out = plain(body_markup([(1, "T [x]", "help with [brackets] and $vars")]))
    assert "[/b]" not in out and "[b]" not in out and "T [x]" in out and "help with [brackets] and $vars" in out


async def test_pilot_help_lists_every_key_as_plain_text_in_its_own_column():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        keys = [str(w.render()) for w in app.screen.query(".help-key")]
        whats = [str(w.render()) for w in app.screen.query(".help-what")]
        assert list(zip(keys, whats, strict=True)) == list(KEYS)  # "n / p  ] / [" whole, no "[/b]"
        c = app.screen.query(".help-what")[2]
        assert c.region.x > app.screen.query(".help-key")[2].region.x and c.region.height == 2  # wraps in place


def test_help_tips_are_not_hard_wrapped_and_live_only_keys_are_marked():
    from clawprobe.tui.screens.help import TIPS

    paragraph = next(line for line in TIPS.splitlines() if line.startswith("Every state is spelled out"))
    assert paragraph.endswith("dimmed: · not used.")  # one source line per paragraph: the widget wraps it
    keys = dict(KEYS)
    assert keys["c"].startswith("live only:") and keys["s"].startswith("live only:")


# ------------------------------------------------------------------------------------- human durations
@pytest.mark.parametrize("seconds, words", [(0, "0 s"), (42, "42 s"), (60, "1 min"), (297, "4 min 57 s"),
                                            (1021, "17 min"), (3725, "1 h 2 min"), (104123, "1 d 4 h"),
                                            (-5, "0 s")])
def test_durations_are_human(seconds, words):
    assert dur(seconds) == words


def test_ago_and_core_sentences_read_in_human_durations():
    assert ago(T0 - timedelta(seconds=17), T0) == "17 s ago"
    assert ago(T0 + timedelta(minutes=3), T0) == "in 3 min"
    assert human_ages("last proven current 721 s ago (mtime) > lease 420 s") == \
        "last proven current 12 min ago (mtime) > lease 420 s"


def test_the_lease_ended_age_is_computed_at_render_time():
    rep = report_for("spec-1")  # the lease ends at T0 + 300 s
    flipped = reevaluate(rep, T0 + timedelta(seconds=300, microseconds=1))  # the flip is noticed at once
    assert "the lease ended 0 s ago" in plain(header_lines(flipped)[1])
    later = T0 + timedelta(seconds=317)
    assert "the lease ended 17 s ago" in plain(header_lines(flipped, later)[1])  # not frozen at the flip
    assert "the lease ended 1 d 4 h ago" in plain(header_lines(flipped, T0 + timedelta(seconds=300 + 104123))[1])


# ------------------------------------------------------------------------------------- glyphs = meaning
def _cell(name: str, mode: str, col: int):
    view = report_for(name).current
    row = next(r for r in shown_rows(view) if r.label == mode)
    return row.cells[col]


def test_scope_denied_canary_is_unproven_everywhere():
    view = report_for("rw27-scope-denied").current
    cell = _cell("rw27-scope-denied", "search", 3)
    assert cell.state == "unknown" and cell.reason.startswith("denied by scope (unproven)")
    trace = plain(steps(view.receipt, T0)[3])
    assert trace.startswith("? retrieved") and "denied by scope (unproven, probe ran in another context)" in trace
    assert plain(returned_line(view.receipt)) == "returned ? nothing: the probe was denied"
    assert plain(ready_line(view, shown_rows(view))).startswith("ready: search* ? unproven · ")  # unproven, not failed


@pytest.mark.parametrize("name", ["spec-2-qmd-missing", "spec-3-fallback-canary-found"])
def test_a_canary_served_by_the_fallback_never_reads_ok_for_qmd(name):
    view = report_for(name).current
    cell = _cell(name, "search", 3)
    assert cell.state == "fail" and "served by the builtin fallback" in cell.reason
    assert plain(steps(view.receipt, T0)[3]).startswith("✗ retrieved")
    assert plain(returned_line(view.receipt)).startswith("returned ✗ memory/clawprobe-canary.md (builtin")
    rows = shown_rows(view)
    # QMD does not answer: the configured mode fails whatever its cells; the others are not used, never red
    assert [r.state for r in rows] == ["fail", "idle", "idle"]
    assert "no QMD mode" in plain(ready_line(view, rows))


def test_two_agents_ops_without_qmd_has_no_ready_mode():
    rep = report_for("two-agents")
    ops = next(a for a in rep.agents if a.agent_id == "ops")
    assert not any(r.ready for r in shown_rows(ops))
    main = next(a for a in rep.agents if a.agent_id == "main")
    assert [r.ready for r in shown_rows(main)] == [True, False, False]  # search* healthy, others lack vectors


@pytest.mark.parametrize("name", [n for n in ALL if demo.scenarios()[demo.find(n)].receipts[0]
                                  .config.configured_backend == "builtin"])
def test_builtin_scenarios_use_no_qmd_wording(name):
    view = report_for(name).current
    rows = shown_rows(view)
    assert [r.label for r in rows] == ["builtin"]  # no QMD search modes
    words = " ".join(plain(x) for x in steps(view.receipt, T0)) + plain(returned_line(view.receipt))
    assert "qmd" not in words.lower() and "search mode" not in words and "content_vectors" not in words


def test_builtin_keyword_only_reads_as_a_fault_and_none_by_choice_as_na():
    view = report_for("rw34-auto-provider-keyword-only").current
    vec = shown_rows(view)[0].cells[1]
    assert vec.state == "fail" and "keyword-only" in vec.reason
    r = view.receipt.model_copy(update={"config": view.receipt.config.model_copy(update={"provider": "none"})})
    chosen = build_report([r], T0, source="demo").current
    assert shown_rows(chosen)[0].cells[1].state == "na"


def test_a_config_that_does_not_load_claims_no_backend_mode_or_lease():
    view = report_for("rw02-config-parse-error").current
    assert shown_rows(view) == ()
    from clawprobe.tui.widgets.backend_pane import BackendPane
    from clawprobe.tui.widgets.countdown_pane import CountdownPane
    from clawprobe.tui.widgets.pending_pane import PendingPane

    rep = report_for("rw02-config-parse-error")
    b1 = plain(BackendPane().body(view, rep, T0))
    assert b1.startswith("configured ? unknown: the config does not load") and "mode search" not in b1
    assert "lease not known" in plain(CountdownPane().body(view, rep, T0))
    assert plain(PendingPane().head(view)).startswith("? not judged")
    assert "search mode" not in " ".join(plain(x) for x in steps(view.receipt, T0))


# ------------------------------------------------------------------------------------- the banner fits
@pytest.mark.parametrize("width", [77, 57, 40])
@pytest.mark.parametrize("name", ALL)
def test_banner_keeps_level_rule_and_exit_at_every_width(name, width):
    for expired in (False, True):
        now = T0 + timedelta(hours=2) if expired else T0
        rep = reevaluate(report_for(name), now)
        for i, view in enumerate(rep.agents):
            d = view.diagnosis
            l1, l2, _ = banner_lines(rep.model_copy(update={"selected": i}), width)
            p1 = plain(l1)
            assert Content(p1).cell_length <= width and Content(plain(l2)).cell_length <= width
            lv = level(d.verdict)
            word = "⚠ EXPIRED" if d.expired and lv != "fail" else LEVEL_WORD[lv]  # never ✓ beside EXPIRED
            assert word in p1 and f"{d.rule}/{len(RULES)} " in p1
            # the banner's exit code is what q exits with (an expired healthy claim: stale, 1 — as replay --now)
            assert p1.endswith(f" · exit {claim_exit_code(d)}")
            if d.expired and d.exit_code == 0:
                assert claim_exit_code(d) == 1 and p1.endswith(" · exit 1"), p1
            assert ("EXPIRED" in p1) == d.expired
            assert not (d.expired and "✓" in p1)
            if width >= 57:
                assert f"rule {d.rule}/{len(RULES)}" in p1


def test_banner_shortens_the_title_before_dropping_anything():
    rep = report_for("spec-3-fallback-canary-found")
    assert plain(banner_lines(rep)[0]).startswith("✗ FAILING  Fallback active (builtin answers, not QMD)")
    assert plain(banner_lines(rep, 77)[0]) == "✗ FAILING  Fallback active · memory manager failed  rule 5/13 · exit 2"
    ev = plain(banner_lines(rep, 77)[1])
    assert ev.endswith("… (+1 more in pane 6)") and len(ev) <= 77


# ------------------------------------------------------------------------------------- commands shown whole
LONG = ("XDG_CONFIG_HOME=~/.openclaw/agents/main/qmd/xdg-config QMD_CONFIG_DIR=~/.openclaw/agents/main/qmd/"
        "xdg-config/qmd XDG_CACHE_HOME=~/.openclaw/agents/main/qmd/xdg-cache qmd search <canary token> --json")


@pytest.mark.parametrize("width", [14, 20, 37, 57, 120])
def test_fold_command_keeps_every_character_and_breaks_only_where_it_may(width):
    lines = fold_command(LONG, width)
    assert all(len(x) <= width for x in lines)
    assert lines[0].startswith(PROMPT) and all(x.startswith(INDENT) for x in lines[1:])
    parts = [lines[0][len(PROMPT):]] + [x[len(INDENT):] for x in lines[1:]]
    rebuilt = parts[0]
    for prev, part in itertools.pairwise(parts):
        if LONG.startswith(rebuilt + " " + part):
            rebuilt += " " + part  # a break at a space
            continue
        assert LONG.startswith(rebuilt + part), (rebuilt, part)
        # a break inside a word: after a separator, or a word wider than a whole line (a hard cut)
        assert prev[-1] in BREAK_AFTER or len(prev) == width - len(INDENT), (prev, part)
        rebuilt += part
    assert rebuilt == LONG


def test_fold_command_never_cuts_a_word_that_fits_on_a_line():
    lines = fold_command("openclaw config set memory.qmd.command /absolute/path/to/qmd", 37)
    assert lines == ["$ openclaw config set", "  memory.qmd.command", "  /absolute/path/to/qmd"]
    assert fold_command("openclaw gateway restart", None) == ["$ openclaw gateway restart"]


# ------------------------------------------------------------------------------------- demo --scenario N
def test_scenario_lookup_takes_the_listed_number_a_name_or_a_unique_prefix():
    assert demo.find("3") == 2 and demo.scenarios()[2].name == "spec-3-fallback-canary-found"
    assert demo.find(str(len(ALL))) == len(ALL) - 1
    assert demo.find("rw27") == demo.find("rw27-scope-denied") == ALL.index("rw27-scope-denied")
    assert demo.find("first-run") == ALL.index("first-run-no-canary")
    for bad in ("0", str(len(ALL) + 1)):
        with pytest.raises(demo.ScenarioError, match=f"choose 1–{len(ALL)}"):
            demo.find(bad)


def test_headers_shorten_with_the_width():
    assert headers_for(37) == ("fresh", "vectors", "models", "canary")
    assert headers_for(27) == ("frsh", "vec", "mdl", "cnry")
    assert headers_for(20) == ("f", "v", "m", "c")


# ------------------------------------------------------------------------------------- Pilot
async def test_pilot_scope_denied_shows_the_unproven_glyph_in_pane_2_and_5():
    app = ClawprobeApp(demo_index=demo.find("rw27"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.query_one(DataTable)
        assert str(table.get_cell_at(table.cursor_coordinate)).strip() == "?"  # the configured row's canary
        assert text(app, "#modes-reason").startswith("search* canary: ? denied by scope (unproven)")
        assert "? retrieved" in text(app, "#pane-5-body") and "✗" not in text(app, "#pane-5-body")


async def test_pilot_c_and_s_in_replay_say_why_and_write_nothing():
    args = argparse.Namespace(command=None, replay=str(REPLAY / "spec-1-bm25-pending-healthy.json"), agent=None)
    app = build_app(args, clock=Clock())
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("c", "s")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert [n.message for n in app._notifications] == [
            "replay: the canary is planted only on a live install (clawprobe, or clawprobe canary plant)",
            "replay: nothing new to save — this receipt was read from a file"]


async def test_pilot_every_scenario_shows_verdict_rule_and_exit_at_80x24_and_the_whole_command():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in ALL:
            await pilot.pause()
            for _agent in app.report.agents:
                d = app.report.current.diagnosis
                line = app.query_one("#verdict-line")
                shown = text(app, "#verdict-line")
                assert Content(shown).cell_length <= line.content_size.width, shown  # nothing cut off
                assert f"rule {d.rule}/{len(RULES)}" in shown and f"exit {d.exit_code}" in shown
                assert LEVEL_WORD[level(d.verdict)] in shown
                cmd = d.next_action.command
                if cmd:
                    pane = app.query_one("#pane-6")
                    body = text(app, "#pane-6-body").splitlines()
                    (line,) = [x for x in body if x.startswith(PROMPT)]  # one line, never wrapped
                    assert Content(line).cell_length < pane.content_region.width
                    assert line == PROMPT + cmd or "…" in line  # a preview: program and verb kept (test_fit_command)
                    await pilot.press("6", "y")
                    assert app.clipboard == cmd  # the exact command, unfolded
                await pilot.press("a")
            await pilot.press("n")


async def test_pilot_60x20_says_too_small_keeps_the_verdict_word_and_80x24_keeps_every_modes_column():
    app = ClawprobeApp(demo_index=demo.find("spec-5"), clock=Clock())
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert text(app, "#verdict-line").startswith("⚠ WARNING  Vectors not ready")
        assert text(app, "#too-small").startswith("terminal too small: 60×20") and not app.query_one("#panes").display
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        table = app.query_one(DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width  # no hidden column
        assert table.scroll_x == 0 and str(table.get_cell_at(table.cursor_coordinate)).strip() == "✗"
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert [str(c.label).strip() for c in table.columns.values()][1] == "fresh"


async def test_pilot_header_ages_the_ended_lease_and_replay_reads_days():
    clock = Clock()
    app = ClawprobeApp(demo_index=demo.find("spec-1"), clock=clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        clock.t = T0 + timedelta(seconds=300, milliseconds=500)
        await pilot.pause(1.3)
        assert "EXPIRED" in text(app, "#header-2")
        clock.t = T0 + timedelta(seconds=317)
        await pilot.pause(1.3)
        assert "the lease ended 17 s ago" in text(app, "#header-2")
        clock.t = T0 + timedelta(seconds=300 + 17 * 60)
        await pilot.pause(1.3)
        assert "the lease ended 17 min ago" in text(app, "#header-2")
    (r,) = load_receipts(REPLAY / "spec-3-fallback-canary-found.json")
    args = argparse.Namespace(command=None, replay=str(REPLAY / "spec-3-fallback-canary-found.json"), agent=None)
    old = build_app(args, clock=Clock(r.checked_at + timedelta(seconds=300 + 104123)))
    async with old.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "EXPIRED  the lease ended 1 d 4 h ago" in text(old, "#header-2")


def test_pane_texts_from_core_read_ages_in_human_durations():
    from clawprobe.tui.widgets.countdown_pane import CountdownPane

    view = report_for("spec-1").current
    f = view.receipt.freshness.model_copy(update={"method": "watcher-driven, last full scan 420 s ago"})
    r = view.receipt.model_copy(update={"freshness": f})
    body = plain(CountdownPane().body(build_report([r], T0, source="demo").current, report_for("spec-1"), T0))
    assert "watcher-driven, last full scan 7 min ago" in body and "420 s ago" not in body


async def test_pilot_a_crafted_replay_cannot_drive_the_terminal(tmp_path):
    """Control codes in a receipt (agent id, config path, a file name) are drawn as visible \\xNN escapes:
    no ESC]2; (window title), ESC]52; (clipboard) or colour reaches the terminal."""
    import json

    doc = json.loads((REPLAY / "spec-4-stale-721s.json").read_text())
    doc["agent_id"] = "evil\x1b]2;PWNED\x07x"
    doc["config"]["path"] = "/tmp/\x1b[31mRED\x1b[0m/openclaw.json"
    doc["freshness"]["unindexed_files"] = ["memory/\x1b]52;c;aGVsbG8=\x07red.md"]
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(doc))
    app = build_app(argparse.Namespace(command=None, replay=str(crafted), agent=None), clock=Clock())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.report.current.agent_id == doc["agent_id"]  # the data is kept, only its drawing escaped
        svg = app.export_screenshot()
        assert not any(c in svg for c in "\x1b\x07\x9b")
        assert "evil\\x1b]2;PWNED\\x07x" in plain(e(doc["agent_id"]))
        shown = "".join(str(w.render()) for w in app.query("Static"))
        assert "\x1b" not in shown and "\\x1b]2;PWNED" in shown and "red.md" in shown


@pytest.mark.parametrize(("news", "changed", "gone"), [
    (["memory/2026-12-07-fresh-idea.md"], [], []),
    (["notes/ops bot/a.md", "memory/b.md"], ["MEMORY.md"], ["memory/old.md"]),
])
def test_pane_3_names_each_unindexed_file_once(news, changed, gone):
    """A note the index does not reflect is named once in pane 3 — on its ``✗`` line, with its kind (new,
    changed, deleted) — not again in the method's ``oldest new … at <ISO time>`` and the detail's
    ``new, not indexed: …`` (the comparison from ``core.probes.workspace``, as a live check writes it)."""
    from clawprobe.core.probes.workspace import Change, Comparison, finish_comparison, to_freshness
    from clawprobe.tui.widgets.countdown_pane import CountdownPane

    at = T0 - timedelta(seconds=40)
    changes = [Change(rel=n, kind=k, at=at + timedelta(seconds=i), evidence="mtime")
               for i, (n, k) in enumerate([*((n, "new") for n in news), *((n, "changed") for n in changed),
                                           *((n, "deleted") for n in gone)])]
    cmp = finish_comparison(Comparison(engine="qmd", checked_at=T0, matched=3, changes=changes), T0, 3 + len(changes))
    view = report_for("spec-1").current
    r = view.receipt.model_copy(update={"freshness": to_freshness(cmp)})
    body = plain(CountdownPane().body(build_report([r], T0, source="demo").current, report_for("spec-1"), T0))
    for n in [*news, *changed, *gone]:
        assert body.count(n) == 1, (n, body)
    assert f"✗ new, not indexed {news[0]}" in body and "+00:00" not in body
    if changed:
        assert f"✗ changed since indexed {changed[0]}" in body and f"✗ deleted but still indexed {gone[0]}" in body
