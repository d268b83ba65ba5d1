"""The real agent's retrieval per chat kind: its recent ``memory_search`` tool results (session transcripts)
grouped into direct / group / channel chats, with the searches the gateway's log says QMD's scope policy
refused (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.openclaw_log import Event, scope_denial_fields
from clawprobe.core.receipt import ChatRetrieval

_ORDER = ("direct", "group", "channel", "unknown")
#: a transcript's empty result this close to a scope-denial record of the same chat kind is that denial's payload
#: (OpenClaw 2026.7.35 answers a denied QMD search with ``results: []`` and no error)
SAME_SEARCH_S = 120.0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _denied_searches(results: Sequence[tr.ToolResult], denials: Sequence[Event]) -> list[tr.ToolResult]:
    """``results`` with the gateway log's scope denials folded in: each denial marks the transcript's empty
    result of the same chat kind it answered (within :data:`SAME_SEARCH_S`) as denied, or is one more search.
    A denial of the ``cli`` channel is left out: that is an ``openclaw memory search`` (clawprobe's own probe
    among them), judged from the CLI's own output."""
    out = list(results)
    used: set[int] = set()
    for d in denials:
        channel, chat_type, session = scope_denial_fields(d.detail)
        if channel == "cli":
            continue
        kind = tr.chat_kind_of_key(session or "", chat_type)
        near = next((i for i, t in enumerate(out) if i not in used and t.outcome == "empty" and t.chat_kind == kind
                     and t.at is not None and d.at is not None
                     and abs((t.at - d.at).total_seconds()) <= SAME_SEARCH_S), None)
        if near is not None:
            used.add(near)
            out[near] = out[near].model_copy(update={"error": d.detail})
        else:
            out.append(tr.ToolResult(error=d.detail, chat_kind=kind, at=d.at))
    return sorted(out, key=lambda t: t.at or _EPOCH) if denials else out


def chat_retrieval(results: Sequence[tr.ToolResult], denials: Sequence[Event] = ()) -> list[ChatRetrieval]:
    """One :class:`~clawprobe.core.receipt.ChatRetrieval` per chat kind seen in ``results`` and the log's scope
    ``denials`` (:func:`_denied_searches`; oldest first), in the order direct, group, channel, unknown; outcomes
    from :attr:`tool_results.ToolResult.outcome`."""
    by: dict[str, ChatRetrieval] = {}
    for t in _denied_searches(results, denials):
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
