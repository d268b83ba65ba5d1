"""Pane 5 — canary trace: planted → indexed → embedded → retrieved, each with its time and source, and the
expected vs returned path.

Sources per step: planted = the canary file in the workspace (its sha256); indexed = the backend's store
(QMD ``index.sqlite`` ``documents`` / builtin ``openclaw-agent.sqlite``, read-only); embedded = QMD
``content_vectors`` (n/a in ``search`` mode); retrieved = ``openclaw memory search TOKEN --json`` (its outcome; the
result's shape tells QMD from builtin), with the latency next to the search deadline.
"""

from __future__ import annotations

from datetime import datetime

from core.receipt import Receipt
from tui.state import AgentView, DashboardReport
from tui.widgets.fmt import e, hms, mark
from tui.widgets.pane import Pane


def _store(r: Receipt) -> str:
    if r.config.configured_backend == "qmd" and r.backend.effective != "builtin":
        return "QMD index"
    return "builtin index"


def steps(r: Receipt, now: datetime) -> list[str]:
    """The four trace lines, each ``glyph step time source`` (pure)."""
    c = r.canary

    def step(done: bool, name: str, at: datetime | None, source: str) -> str:
        return mark("ok" if done else "unknown", f"{name:<9}") + f" {hms(at, now)} [$foreground-muted]{source}[/]"

    out = [step(c.planted_at is not None, "planted", c.planted_at, "workspace file"),
           step(c.indexed_at is not None, "indexed", c.indexed_at, _store(r))]
    if r.config.configured_backend != "qmd" or r.config.search_mode == "search":
        out.append(mark("na", f"{'embedded':<9}") + " n/a in this mode")
    else:
        out.append(step(c.embedded_at is not None, "embedded", c.embedded_at, "content_vectors"))
    if c.outcome is None:
        out.append(mark("unknown", f"{'retrieved':<9}") + " not searched yet")
    else:
        state = "ok" if c.outcome == "found" else ("unknown" if c.outcome == "denied" else "fail")
        why = f" ({e(c.reason)})" if c.reason else ""
        out.append(mark(state, f"{'retrieved':<9}") + f" {hms(c.retrieved_at, now)} [b]{e(c.outcome)}[/b]{why}"
                   " [$foreground-muted]openclaw[/]")
    return out


class CanaryPane(Pane):
    """The canary's path through ingestion and retrieval."""

    NUMBER = 5
    TITLE = "Canary"
    HELP = ("A synthetic, safe canary file with a unique token is planted in a managed collection (c plants "
            "or rotates it, after confirmation). Its trace: planted (file + hash) → indexed (the store) → "
            "embedded (vectors; n/a in search mode) → retrieved through OpenClaw itself. A hit through the "
            "builtin engine (its result shape) is not QMD. Expected vs returned path are compared.")

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        r = view.receipt
        c = r.canary
        lines = steps(r, now)
        lines.append(f"expected {e(c.expected_path or '?')}")
        if c.outcome is not None:
            got = e(c.returned_path or "nothing")
            same = c.returned_path is not None and c.returned_path == c.expected_path
            shape = f" ({e(c.result_shape)} shape)" if c.result_shape else ""
            lines.append("returned " + (mark("ok", got) if same else mark("fail", got)) + shape)
        if c.direct_qmd_found is not None:
            lines.append("direct qmd (agent XDG dirs): " + (mark("ok", "finds it") if c.direct_qmd_found
                                                             else mark("fail", "does not find it")))
        facts = []
        if c.latency_s is not None:
            facts.append(f"latency {c.latency_s:.1f} s" + (f" / deadline {c.deadline_s:.1f} s" if c.deadline_s else ""))
        if c.content_sha256:
            facts.append(f"sha {e(c.content_sha256[:8])}")
        if facts:
            lines.append("[$foreground-muted]" + " · ".join(facts) + "[/]")
        if c.detail:
            lines.append(e(c.detail))
        return "\n".join(lines)
