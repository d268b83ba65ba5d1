"""Pane 5 — canary trace: planted → indexed → embedded → retrieved, each with its time and source, and the
expected vs returned path.

Sources per step: planted = the canary file in the workspace (its sha256); indexed = the backend's store
(QMD ``index.sqlite`` ``documents`` / builtin ``openclaw-agent.sqlite``, read-only); embedded = QMD
``content_vectors`` (n/a in ``search`` mode); retrieved = ``openclaw memory search TOKEN --json`` (its outcome; the
result's shape tells QMD from builtin), with the latency next to the search deadline.

Glyphs follow the verdict's meaning: a hit the builtin fallback served is ✗ for QMD (rule 5), a probe the
scope policy denied is ``? denied by scope (unproven)`` (rule 10), and the builtin engine is never described
in QMD terms (no search modes, no ``content_vectors``).
"""

from __future__ import annotations

from datetime import datetime

from clawprobe.core.durations import human_ages
from clawprobe.core.receipt import Receipt
from clawprobe.core.view import (
    agent_facts,
    canary_awaiting_update,
    canary_steps,
    fallback_served,
    reason_words,
    retrieval_fact,
)
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fmt import e, hms, mark
from clawprobe.tui.widgets.pane import Pane

SHAPE_WORD = {"qmd": "QMD result shape", "builtin": "builtin result shape", "unknown": "result shape unknown"}


def retrieved_state(r: Receipt) -> tuple[str, str]:
    """(state, words) of the retrieval step (:func:`clawprobe.core.view.retrieval_fact`)."""
    f = retrieval_fact(r)
    return f.state, f.words


def steps(r: Receipt, now: datetime) -> list[str]:
    """The four trace lines, each ``glyph step time source`` (markup of :func:`clawprobe.core.view.canary_steps`)."""
    c = r.canary
    out = []
    for s in canary_steps(r):
        name = mark(s.state, f"{s.name:<9}")
        if s.name == "retrieved":
            if c.outcome is None:
                out.append(name + f" {e(s.words)}")
                continue
            said = c.reason and c.outcome != "denied" and c.reason != c.outcome  # "timeout (timeout)": said once
            why = f" ({e(reason_words(c.reason) or '')})" if said else ""
            out.append(name + f" {hms(s.at, now)} [b]{e(s.words)}[/b]{why} [$foreground-muted]{e(s.source)}[/]")
        elif s.words:
            out.append(name + f" {e(s.words)}")
        else:
            out.append(name + f" {hms(s.at, now)} [$foreground-muted]{e(s.source)}[/]")
    return out


def returned_line(r: Receipt) -> str:
    """``returned ✓ PATH (QMD result shape)``: ✓ only for the expected path through the configured engine;
    the shape is named only when a hit came back; a denied probe returned nothing, unproven (markup)."""
    c = r.canary
    if c.outcome == "denied":
        return "returned " + mark("unknown", "nothing: the probe was denied")
    if c.returned_path is None:  # nothing yet from a canary no update has indexed is unproven, not failed
        return "returned " + (mark("unknown", "nothing: not indexed yet") if canary_awaiting_update(r, r.checked_at)
                              else mark("fail", "nothing"))
    same = c.returned_path == c.expected_path and not fallback_served(r)
    shape = f" ({SHAPE_WORD[c.result_shape]})" if c.result_shape else ""
    state = canary_steps(r)[-1].state if same else "fail"  # the retrieval step's state: dimmed while nothing serves
    return "returned " + mark(state, c.returned_path) + shape


class CanaryPane(Pane):
    """The canary's path through ingestion and retrieval."""

    NUMBER = 5
    TITLE = "Canary"
    HELP = ("A synthetic, safe canary file with a unique token is planted in a managed collection (c plants "
            "or rotates it, after confirmation). Its trace: planted (file + hash) → indexed (the store) → "
            "embedded (vectors; n/a in search mode) → retrieved through OpenClaw itself. A hit through the "
            "builtin engine (its result shape) is not QMD, and a probe denied by scope is unproven, not failed. "
            "Expected vs returned path are compared.")

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        r = view.receipt
        c = r.canary
        lines = steps(r, now)
        lines.append(f"expected {e(c.expected_path or '?')}")
        if c.outcome is not None:
            lines.append(returned_line(r))
        if c.direct_qmd_found is not None:  # not found before any update could index it: unproven, as the verdict
            missing = mark("unknown", "not indexed yet") if canary_awaiting_update(r, r.checked_at) else \
                mark("fail", "does not find it")
            lines.append("direct qmd (agent XDG dirs): " + (mark("ok", "finds it") if c.direct_qmd_found else missing))
        facts = []
        if c.latency_s is not None:
            facts.append(f"latency {c.latency_s:.1f} s" + (f" / deadline {c.deadline_s:.1f} s" if c.deadline_s else ""))
        if c.content_sha256:
            facts.append(f"sha {e(c.content_sha256[:8])}")
        if facts:
            lines.append("[$foreground-muted]" + " · ".join(facts) + "[/]")
        if c.detail:
            lines.append(e(human_ages(c.detail)))
        chats = agent_facts(r, view.diagnosis).chats  # the real agent's own memory_search, per chat kind
        if chats:
            lines.append("agent searches: " + " · ".join(mark(f.state, f.words) for f in chats))
        return "\n".join(lines)
