"""The agents overview's columns at 80 columns: when the fact columns give way, the lease drops its
``left`` (never a digit) before ``why`` is squeezed, so ``why`` gets the spare width."""

from __future__ import annotations

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.view import Fact, OverviewRow, agent_facts, overview_row
from clawprobe.tui import demo
from clawprobe.tui.screens.agents_cols import COMPACT, LEASE_W, MIN_TAG, lease_words, widths
from clawprobe.tui.state import build_report, overview
from clawprobe.tui.widgets.fit import cells_plain
from tests.dashboard_support import T0

TABLE_80 = 75  #: the table's width on an 80-column screen (AgentsScreen: padding, scrollbar, last gap)


def row(agent: str, tag: str, lease: str, pending: str, canary: str) -> OverviewRow:
    return OverviewRow(agent, "fail", "✗ FAILING", tag, Fact("ok", lease), Fact("unknown", pending),
                       Fact("fail", canary), 2, 5)


ROWS = [row("main", "notes changed since the last index run", "4 min 58 s left", "? not measured", "? not searched"),
        row("ops-bot", "no canary planted", "9 min 59 s left", "✓ 0/41 pending", "✗ fallback answered")]


def test_at_80_columns_why_gets_the_width_the_lease_can_spare():
    w = widths(ROWS, TABLE_80)
    assert sum(w.values()) <= TABLE_80
    assert w["lease"] == LEASE_W - len(" left") and w["tag"] >= MIN_TAG >= len("no canary planted"), w
    for r in ROWS:  # the lease keeps every digit of its time, only "left" goes
        shown = lease_words(r.lease, w["lease"])
        assert shown == r.lease.words.removesuffix(" left") and len(shown) <= w["lease"] - 3


def test_with_room_the_lease_keeps_its_left_and_why_still_takes_the_rest():
    w = widths(ROWS, 120)
    assert w["lease"] == LEASE_W and lease_words(ROWS[1].lease, w["lease"]) == "9 min 59 s left"
    assert sum(w.values()) == 120


def test_a_why_longer_than_the_minimum_is_shown_whole_when_the_lease_can_spare_its_left():
    """Demo scenario 18 at 80×24 showed ``qmd command miss…`` while the lease kept ``4 min 59 s left``: the
    fact columns gave way only to :data:`MIN_TAG`, not to the ``why`` the rows need. They now give way
    (down to their compact widths) until the longest ``why`` fits; agent ids are not cut for it."""
    for tag in ("qmd command missing", "embeddings pending", "stale memory manager"):
        rows = [OverviewRow("ops", "fail", "✗ FAILING", tag, Fact("unknown", "4 min 59 s left"),
                            Fact("unknown", "n/a"), Fact("fail", "fallback"), 2, 2),
                OverviewRow("main-agent", "ok", "✓ HEALTHY", "healthy", Fact("ok", "9 min 59 s left"),
                            Fact("unknown", "n/a"), Fact("ok", "found"), 0, 13)]
        w = widths(rows, TABLE_80)
        assert sum(w.values()) <= TABLE_80 and w["agent"] >= len("main-agent") + 1, (tag, w)
        assert w["tag"] - 1 >= len(tag), (tag, w)  # whole, one gap after it
        assert lease_words(rows[1].lease, w["lease"]) == "9 min 59 s", (tag, w)


def test_a_why_that_fits_anyway_leaves_the_lease_its_left():
    rows = [row("main", "healthy", "9 min 59 s left", "– n/a", "✓ found")]
    w = widths(rows, TABLE_80)
    assert w["lease"] == LEASE_W and lease_words(rows[0].lease, w["lease"]) == "9 min 59 s left", w


def test_every_canary_cell_fits_the_compact_column_whole():
    """A live install with an agent nobody planted a canary for showed ``? not searc…`` in the overview at 80
    columns (the column gives way to :data:`COMPACT`, the pane-5 words are longer): the overview says every
    retrieval outcome in words that fit the compact column whole, in every demo scenario and for every outcome."""
    room = COMPACT["canary"] - 3  # glyph, space, gap
    too_long = []
    for s in demo.scenarios():
        rs, _ = demo.at_now(s, T0)
        rows = overview(build_report(rs, T0, source="demo"), T0)
        too_long += [(s.name, r.agent_id, r.canary.words) for r in rows if cells_plain(r.canary.words) > room]
        for r in rs:  # every outcome the receipt can carry, on this scenario's install
            for outcome in (None, "found", "miss", "wrong_source", "timeout", "denied", "error"):
                c = r.model_copy(update={"canary": r.canary.model_copy(update={"outcome": outcome})})
                row_ = overview_row(agent_facts(c, diagnose(c, c.checked_at)), 1)
                if cells_plain(row_.canary.words) > room:
                    too_long.append((s.name, str(outcome), row_.canary.words))
    assert too_long == [], sorted(set(too_long))[:20]
