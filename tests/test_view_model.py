"""The diagnosis is the only view model: ``check`` text and the dashboard say the same thing per fact
(modes, pending, canary, expiry), because both render :func:`clawprobe.core.view.agent_facts`.

The three disagreements of issue 12 each have a test: the builtin row (rw34), partly embedded documents
with 0 pending, and an expired healthy receipt next to a stale countdown."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from textual.content import Content
from textual.widgets import DataTable

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.report import to_text
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.state import build_report, reevaluate
from clawprobe.tui.widgets.countdown_pane import live_line
from clawprobe.tui.widgets.modes_pane import shown_rows
from clawprobe.tui.widgets.pending_pane import PendingPane
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0, Clock

ALL = [s.name for s in demo.scenarios()]
GLYPH_STATE = {"✓": "ok", "✗": "fail", "–": "na", "n/a": "na", "?": "unknown", "·": "idle"}


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain.replace("\u200b", "")


def receipts(name: str):
    rs, _ = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    return rs


def check_text(name: str) -> str:
    return to_text([(r, diagnose(r)) for r in receipts(name)])


def text_facts(text: str) -> dict[str, dict[str, object]]:
    """Per agent, what ``check`` text says: ``rows`` {label: (state words, {cell: state})}, ``pending``,
    ``canary`` (the state word of each line)."""
    out: dict[str, dict[str, object]] = {}
    agent = None
    for line in text.splitlines():
        if m := re.match(r"agent (\S+): ", line):
            agent = m.group(1)
            out[agent] = {"rows": {}}
            continue
        assert agent is not None
        if m := re.match(r"  ([ *])(\w+)\s+(ready|not ready|unproven|not used)\b(.*)$", line):
            cells = dict(re.findall(r"(\w+)=(\w+)", m.group(4)))
            out[agent]["rows"][m.group(2)] = (m.group(3), cells)
        elif m := re.match(r"  (pending|canary): (\w+) — ", line):
            out[agent][m.group(1)] = m.group(2)
    return out


# ------------------------------------------------------------------------------ the three disagreements
def test_rw34_check_text_and_pane_2_show_the_same_builtin_row():
    """rw34: check printed ``*search ready … vectors=na`` while pane 2 showed ``builtin: vectors fail``."""
    facts = text_facts(check_text("rw34-auto-provider-keyword-only"))["main"]
    assert list(facts["rows"]) == ["builtin"]
    words, cells = facts["rows"]["builtin"]
    assert words == "not ready" and cells["vectors"] == "fail" and cells["models"] == "na"
    view = build_report(receipts("rw34-auto-provider-keyword-only"), T0, source="demo").current
    (row,) = shown_rows(view)
    assert (row.label, row.state, row.cells[1].state) == ("builtin", "fail", "fail")


def test_zero_pending_with_partly_embedded_documents_is_not_a_green_tick():
    """``✓ 0 / 40 pending`` was shown while ``core.modes`` said vectors fail (3 documents partly embedded)."""
    (r,) = receipts("spec-5-query-14-pending")
    r = r.model_copy(update={"vectors": r.vectors.model_copy(update={"pending": 0, "documents": 40,
                                                                       "partial_documents": 3})})
    view = build_report([r], T0, source="demo").current
    own = next(m for m in view.diagnosis.modes if m.configured)
    assert own.vectors.state == "fail"
    head = plain(PendingPane().head(view))
    assert head == "✗ 0 / 40 pending · 3 partly embedded"
    assert text_facts(to_text([(r, view.diagnosis)]))["main"]["pending"] == "fail"


def test_an_expired_healthy_receipt_never_reads_healthy_beside_a_stale_countdown():
    """At lease end + 6 s the banner read ``EXPIRED ✓ HEALTHY`` while pane 3 read ``✗ STALE for 6 s``."""
    rep = build_report(receipts("spec-1-bm25-pending-healthy"), T0, source="demo")
    later = rep.current.diagnosis.expires_at + timedelta(seconds=6)
    rep = reevaluate(rep, later)
    line, _, lv = banner_lines(rep)
    shown = plain(line)
    assert shown.startswith("⚠ EXPIRED  was Healthy at check") and "✓" not in shown and lv == "warn"
    live, stale = live_line(rep.current.receipt, later)
    assert stale and plain(live).startswith("✗ STALE for 6 s")


# ------------------------------------------------------------------------------ every scenario, per fact
def _table_rows(app: ClawprobeApp) -> dict[str, tuple[str, ...]]:
    table = app.query_one("#modes-table", DataTable)
    if not table.display:
        return {}
    out = {}
    for i in range(table.row_count):
        label, *cells = (str(c).strip() for c in table.get_row_at(i))
        out[label.lstrip("*")] = tuple(GLYPH_STATE[c] for c in cells)
    return out


def _head_state(app: ClawprobeApp, selector: str) -> str:
    shown = str(app.query_one(selector).render()).strip()
    return GLYPH_STATE[shown.split(" ", 1)[0]]


async def test_check_text_and_the_dashboard_say_the_same_per_fact_in_every_scenario():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(120, 40)) as pilot:
        for name in ALL:
            await pilot.pause()
            assert app.report.scenario.endswith(name)
            said = text_facts(check_text(name))
            for _ in app.report.agents:
                agent = app.report.current.agent_id
                facts = said[agent]
                rows = _table_rows(app)
                assert list(rows) == list(facts["rows"]), (name, agent)
                for label, (words, cells) in facts["rows"].items():
                    if words == "not used":  # dimmed, no state claimed in either place
                        assert set(rows[label]) == {"idle"}, (name, label)
                    else:
                        shown = rows[label]
                        said_cells = tuple(cells[k] for k in ("fresh", "vectors", "models", "canary"))
                        # a passing cell of an engine that is not serving is dimmed on screen and "blocked" in check (no ok)
                        assert all(s == t or (s == "idle" and t == "blocked") for s, t in zip(shown, said_cells,
                                                                                        strict=True)), (name, label)
                assert _head_state(app, "#pending-head") == {"idle": "idle"}.get(facts["pending"],
                                                                                 facts["pending"]), name
                trace = str(app.query_one("#pane-5-body").render()).splitlines()
                retrieved = next(x for x in trace if "retrieved" in x)
                assert GLYPH_STATE[retrieved.split(" ", 1)[0]] == facts["canary"], (name, agent)
                if len(app.report.agents) > 1:
                    await pilot.press("a")
                    await pilot.pause()
            await pilot.press("n")
