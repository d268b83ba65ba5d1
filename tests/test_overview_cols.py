"""The agents overview's columns at 80 columns: when the fact columns give way, the lease drops its
``left`` (never a digit) before ``why`` is squeezed, so ``why`` gets the spare width."""

from __future__ import annotations

from clawprobe.core.view import Fact, OverviewRow
from clawprobe.tui.screens.agents_cols import LEASE_W, MIN_TAG, lease_words, widths

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
