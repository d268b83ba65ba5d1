"""The real agent's retrieval per chat kind: its recent ``memory_search`` tool results (session transcripts)
grouped into direct / group / channel chats (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from clawprobe.core.probes import tool_results as tr
from clawprobe.core.receipt import ChatRetrieval

_ORDER = ("direct", "group", "channel", "unknown")


def chat_retrieval(results: Sequence[tr.ToolResult]) -> list[ChatRetrieval]:
    """One :class:`~clawprobe.core.receipt.ChatRetrieval` per chat kind seen in ``results`` (oldest first), in
    the order direct, group, channel, unknown; outcomes from :attr:`tool_results.ToolResult.outcome`."""
    by: dict[str, ChatRetrieval] = {}
    for t in results:
        kind = t.chat_kind or "unknown"
        c = by.setdefault(kind, ChatRetrieval.model_validate({"kind": kind}))
        o = t.outcome
        c.searches += 1
        if o == "found":
            c.found += 1
        elif o == "empty":
            c.empty += 1
        elif o == "denied":
            c.denied += 1
        elif o == "disabled":
            c.disabled += 1
        else:
            c.errors += 1
        c.last_outcome, c.last_at, c.last_error = o, t.at, t.error
    return [by[k] for k in _ORDER if k in by]
