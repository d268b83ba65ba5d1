"""The header's line 1 fits 80 columns keeping the agent, its place and both versions (hint, ``ran`` and era give
way first); it never cuts the one path that matters: line 2 keeps the config path whole while it can drop
``checked …`` and cut the lease state's explanation for it, else cuts it in the middle
(``/tmp/…/.openclaw/openclaw.json``); an input change takes its own line; a parse error's ``:line:col``
survives any width in the banner's evidence line. Pure (header_lines / banner_lines on demo receipts)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.content import Content

from clawprobe.tui.demo import at_now, find, scenarios
from clawprobe.tui.state import build_report, make_view, place, reevaluate, replace_agent
from clawprobe.tui.widgets.fit import cut_path, fit_paths
from clawprobe.tui.widgets.header import header_lines
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0

LONG = "/tmp/brk-screen/h2/home/.openclaw/openclaw.json"


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain


def report(name: str, path: str | None = None, source: str = "live"):
    receipts, _ = at_now(scenarios()[find(name)], T0)
    if path is not None:
        for r in receipts:
            r.config.path = path
    return build_report(receipts, T0, source=source)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["spec-4-stale-721s", "rw02-config-parse-error", "spec-1-bm25-pending-healthy"])
@pytest.mark.parametrize("width", [78, 118])
def test_the_demo_config_path_is_whole(name, width):
    line = plain(header_lines(report(name, source="demo"), T0, width)[1])
    assert line.endswith("config ~/.openclaw/openclaw.json") and len(line) <= width, line


@pytest.mark.parametrize("name", ["spec-4-stale-721s", "rw02-config-parse-error", "spec-1-bm25-pending-healthy"])
def test_a_long_live_path_is_cut_in_the_middle_beside_the_state_word(name):
    for width in (78, 60, 50):  # (below 80×24 the panes give way to a notice)
        line = plain(header_lines(report(name, LONG), T0, width)[1])
        assert len(line) <= width and line.endswith("/openclaw.json"), line
        assert width < 60 or line.endswith("/.openclaw/openclaw.json"), line
        assert line.split()[0] in ("no", "lease", "valid"), line
    assert plain(header_lines(report("rw02-config-parse-error", LONG), T0, 78)[1]).startswith("no lease")
    assert LONG in plain(header_lines(report("spec-1-bm25-pending-healthy", LONG), T0, 118)[1])


def test_an_expired_receipt_keeps_its_word_and_the_path():
    later = T0 + timedelta(hours=3)
    line = plain(header_lines(reevaluate(report("spec-1-bm25-pending-healthy", LONG), later), later, 78)[1])
    assert line.startswith(" EXPIRED  the lease ended") and line.endswith("/.openclaw/openclaw.json"), line


def test_cut_path_keeps_the_name_and_its_parent():
    assert cut_path(LONG, 60) == LONG
    assert cut_path(LONG, 31) == "/tmp/…/.openclaw/openclaw.json"
    assert cut_path(LONG, 26) == "/…/.openclaw/openclaw.json"
    assert cut_path(LONG, 16) == "…/openclaw.json"


def test_a_change_takes_its_own_line_and_the_path_stays():
    rep = report("spec-1-bm25-pending-healthy", LONG)
    old = rep.current
    new = old.receipt.model_copy(deep=True)
    new.checked_at, new.config.hash = T0 + timedelta(seconds=5), "9" * 64
    rep = replace_agent(rep, make_view(new, T0, prev=old), T0)
    l1, l2, change, _ = header_lines(rep, T0 + timedelta(seconds=6), 78)
    assert plain(change).startswith(" CHANGED  03:00:05Z config hash ") and "CHANGED" not in plain(l2)
    assert plain(l2).endswith("/.openclaw/openclaw.json")


@pytest.mark.parametrize("width", [118, 78, 60])
def test_a_parse_error_keeps_its_line_and_column(width):
    rep = report("rw02-config-parse-error", LONG)
    ev = rep.current.diagnosis.evidence
    ev[0] = ev[0].replace("~/.openclaw/openclaw.json", LONG)
    line = plain(banner_lines(rep, width)[1])
    assert "/openclaw.json:15:28" in line and len(line) <= width, line


def test_fit_paths_cuts_the_path_before_the_message():
    text = f"parse error at {LONG}:2:5: raw newline inside a string literal"
    assert fit_paths(text, 80) == "parse error at /tmp/…/.openclaw/openclaw.json:2:5: raw newline inside a string …"
    assert fit_paths(text, 50) == "parse error at /tmp/…/.openclaw/openclaw.json:2:5…"
    assert fit_paths(text, 40).startswith("parse error at …/openclaw.json:2:5")


def _views(rep):
    for i in range(len(rep.agents)):
        yield rep.model_copy(update={"selected": i})


@pytest.mark.parametrize("source", ["demo", "live"])
def test_line_1_fits_80_columns_in_every_scenario_and_keeps_agent_place_and_versions(source):
    """Line 1 (78 cells inside the header at 80 columns) was cut at its end for the two agents' scenario
    (``… · qmd 2…``): it now gives up the ``a: next`` hint first, then the era, and keeps the agent, its place
    (i/N), the CLI lane's time (live) and both versions whole."""
    for i, s in enumerate(scenarios(), start=1):
        receipts, _ = at_now(s, T0)
        whole = build_report(receipts, T0, source=source, scenario=f"{i}/{len(scenarios())} {s.name}")  # type: ignore[arg-type]
        for rep in _views(whole):
            view = rep.current
            r = view.receipt
            if source == "live":
                rep.current.slow_at = T0
            line = plain(header_lines(rep, T0, 78)[0])
            assert Content(line).cell_length <= 78, (s.name, line)
            assert f"agent {r.agent_id}" in line and f"OpenClaw {r.openclaw.version or '?'}" in line, line
            assert not r.qmd.version or line.endswith(f" · qmd {r.qmd.version}"), line
            assert len(rep.agents) == 1 or f"({place(rep, T0)}/{len(rep.agents)}" in line, line  # worst first
            assert source == "demo" or "CLI ran 03:00:00Z" in line or "CLI 03:00:00Z" in line, line


def test_line_1_of_two_agents_drops_the_hint_before_anything_else_and_is_whole_when_wide():
    receipts, _ = at_now(scenarios()[find("two-agents")], T0)
    rep = build_report(receipts, T0, source="demo", scenario="18/18 two-agents")
    assert plain(header_lines(rep, T0, None)[0]) == \
        " DEMO 18/18  agent main (2/2, a: next) · OpenClaw 2026.7.35 (QMD era) · qmd 2.8.3"  # ops is worse: 1/2
    assert plain(header_lines(rep, T0, 78)[0]) == " DEMO 18/18  agent main (2/2) · OpenClaw 2026.7.35 (QMD era) · qmd 2.8.3"
    live = report("two-agents", source="live")
    live.current.slow_at = T0
    assert plain(header_lines(live, T0, 78)[0]) == \
        " LIVE  agent main (2/2) · CLI 03:00:00Z · OpenClaw 2026.7.35 · qmd 2.8.3"  # then "ran", then the era
    one = build_report(receipts[:1], T0, source="live")
    one.current.slow_at = T0
    assert plain(header_lines(one, T0, 78)[0]) == \
        " LIVE  agent main · CLI 03:00:00Z · OpenClaw 2026.7.35 (QMD era) · qmd 2.8.3"  # "ran" alone is enough


def test_line_1_cuts_a_long_agent_id_in_its_middle_keeping_its_tail():
    receipts, _ = at_now(scenarios()[find("two-agents")], T0)
    receipts[0].agent_id = "support"
    rep = build_report(receipts, T0, source="live", select_agent="support")
    rep.current.slow_at = T0
    assert plain(header_lines(rep, T0, 78)[0]) == \
        " LIVE  agent support (2/2) · CLI 03:00:00Z · OpenClaw 2026.7.35 · qmd 2.8.3"  # "ran" gave way, not the id
    receipts[0].agent_id = "prod-eu-west-1-assistant"
    rep = build_report(receipts, T0, source="live", select_agent=receipts[0].agent_id)
    rep.current.slow_at = T0
    line = plain(header_lines(rep, T0, 78)[0])
    assert line == " LIVE  agent pro…istant (2/2) · CLI 03:00:00Z · OpenClaw 2026.7.35 · qmd 2.8.3", line


@pytest.mark.parametrize("index", range(len(scenarios())))
def test_the_demo_note_names_the_scenario_in_words_never_its_slug(index):
    """Breaker round 21 (#12): the note line (from 30 rows) said ``spec-2-qmd-missing: QMD binary missing — …``."""
    s = scenarios()[index]
    receipts, _ = at_now(s, T0)
    rep = build_report(receipts, T0, source="demo", scenario=f"{index + 1}/{len(scenarios())} {s.name}",
                       scenario_title=s.title)
    note = plain(header_lines(rep, T0, None)[3])
    assert note.startswith(s.title) and s.name not in note, note


@pytest.mark.parametrize("path", [LONG, "/tmp/wt-r24s-scratch/homes/qmdfail-k5muonfi/state/openclaw.json"])
def test_line_2s_explanation_is_cut_at_a_word_never_inside_one(path):
    """A live dashboard while its lanes run, at 80 columns: ``not valid yet: checking, the verdict is n… ·
    config /tmp/…/state/openclaw.json`` (breaker round 24). The explanation gives way a whole word at a time."""
    rep = report("spec-1-bm25-pending-healthy", path)
    view = rep.current.model_copy(update={"checking": {"openclaw CLI": T0}})
    rep = rep.model_copy(update={"agents": [view, *rep.agents[1:]]})
    whole = "not valid yet: checking, the verdict is not proven"
    for width in range(40, 120):
        line = plain(header_lines(rep, T0, width)[1])
        shown = line.split(" · config ")[0]
        assert len(line) <= width and shown.startswith("not valid yet"), (width, line)
        if shown.endswith("…"):
            assert whole.startswith(shown[:-1]) and whole[len(shown) - 1] == " ", (width, line)
        else:
            assert shown in (whole, "not valid yet"), (width, line)
