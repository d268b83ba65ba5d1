"""The agents overview's column widths and cell cuts (pure: rows and a width in, numbers and text out).

The agent column is as wide as the longest id needs (up to :data:`AGENT_SHARE` of the table); the lease
column always holds its longest ticking value; ``why`` takes the rest. When the table is short of room the
fact columns give way to their compact widths first — the lease then drops its ``left`` (the column's
header says it: :func:`lease_words`), never a digit, as long as the longest ``why`` does not fit whole —
then the agent column (only for :data:`MIN_TAG`), whose ids are then cut in the
middle, keeping the tail that tells ``prod-eu-west-1`` from ``prod-eu-west-2``. So at 80 columns ``why``
gets every spare cell.
"""

from __future__ import annotations

from collections.abc import Sequence

from clawprobe.core.view import Fact, OverviewRow
from clawprobe.tui.widgets.fit import cells_plain

VERDICT_W = 11  #: "? UNPROVEN" and a gap
LEASE_W = 18  #: glyph, "9 min 59 s left" (the longest a lease under 10 h reads while it ticks) and a gap
LEFT = " left"
#: the fact columns' widths when room is short; the lease's holds "9 min 59 s" without its " left"
COMPACT = {"pending": 12, "canary": 13, "lease": LEASE_W - len(LEFT)}
AGENT_MIN = 9
AGENT_SHARE = 0.4
MIN_TAG = 17  #: "why" at 80 columns: "no canary planted" whole; the other columns give way to it
LABELS = {"verdict": "verdict", "agent": "agent", "tag": "why", "lease": "lease", "pending": "pending",
          "canary": "canary"}  #: the columns, in order, with their header labels


def fact_width(f: Fact) -> int:
    """Cells a fact cell needs: glyph, space, words and a gap."""
    return 2 + cells_plain(f.words) + 1


def widths(rows: Sequence[OverviewRow], total: int) -> dict[str, int]:
    """Each column's width (gap included) for ``rows`` in a table ``total`` cells wide (see the module
    docstring); below 80 columns the sum may exceed ``total`` (the screen then shows its too-small notice)."""
    w = {"verdict": VERDICT_W, "lease": LEASE_W,
         "pending": max([fact_width(r.pending) for r in rows] + [len(LABELS["pending"]) + 1]),
         "canary": max([fact_width(r.canary) for r in rows] + [len(LABELS["canary"]) + 1])}
    need = max([cells_plain(r.agent_id) + 1 for r in rows] + [AGENT_MIN])
    w["agent"] = min(need, max(AGENT_MIN, int(total * AGENT_SHARE)))
    # short of room: the fact columns give way (to their compact widths) until the longest ``why`` fits whole,
    # then the agent column, only down to MIN_TAG's need
    want = max([cells_plain(r.tag) + 1 for r in rows] + [MIN_TAG])
    for key in ("pending", "canary", "lease", "agent"):
        over = sum(w.values()) + (MIN_TAG if key == "agent" else want) - total
        if over <= 0:
            break
        floor = AGENT_MIN if key == "agent" else min(w[key], COMPACT[key])
        w[key] = max(floor, w[key] - over)
    w["tag"] = max(MIN_TAG, total - sum(w.values()))
    return w


def lease_words(f: Fact, width: int) -> str:
    """The lease cell's words for a column ``width`` cells wide (glyph, space and gap included): ``4 min 57 s
    left``, or without ``left`` when the column gave way (:data:`COMPACT`)."""
    if f.words.endswith(LEFT) and cells_plain(f.words) > width - 3:
        return f.words[: -len(LEFT)]
    return f.words
