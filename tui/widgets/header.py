"""The header: where the receipt comes from, which agent, OpenClaw version and era, QMD version, config path,
and the receipt's check time and expiry — an expired receipt reads EXPIRED, never as current.

Sources: ``openclaw`` (``openclaw --version``; era from ``has_qmd_backend``), ``qmd.version``
(``qmd --version``), ``config.path``, ``diagnosis.checked_at/expires_at/expired``. The header changes only
when the report changes (the expiry flip is a one-shot timer in the App, not a per-second repaint).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from tui.state import AgentView, DashboardReport, claim
from tui.widgets.fmt import e, hms
from tui.widgets.pane import set_text


def era(view: AgentView) -> str:
    """``QMD era`` (≤ 2026.7.x, has the QMD backend), ``builtin-only era`` (2026.8.1+), or ``era ?``."""
    has = view.receipt.openclaw.has_qmd_backend
    return "QMD era" if has else ("builtin-only era" if has is False else "era ?")


def line_source(report: DashboardReport) -> str:
    """Left part of line 1: LIVE / DEMO n/N name / REPLAY."""
    if report.source == "demo":
        num = (report.scenario or "").split(" ")[0]
        return f"[reverse] DEMO {e(num)} [/]"
    if report.source == "replay":
        return "[reverse] REPLAY [/]"
    return "[reverse] LIVE [/]"


def header_lines(report: DashboardReport) -> tuple[str, str, str]:
    """(line 1, line 2, note) as markup — pure, from the report alone."""
    view = report.current
    if view is None:
        return line_source(report) + " no agent", "", e(report.note or "")
    r, d = view.receipt, view.diagnosis
    n = len(report.agents)
    agent = f"agent [b]{e(r.agent_id)}[/b]" + (f" ({report.selected % n + 1}/{n}, a: next)" if n > 1 else "")
    oc = f"OpenClaw {e(r.openclaw.version or '?')} ({era(view)})"
    qmd = f"qmd {e(r.qmd.version)}" if r.qmd.version else ("qmd ?" if r.config.configured_backend == "qmd" else "")
    l1 = " · ".join(x for x in (line_source(report) + " " + agent, oc, qmd) if x)
    now = report.evaluated_at
    kind = claim(d)
    if d.expired:
        why = d.expired_because[0] if d.expired_because else "expired"
        state = f"[reverse] EXPIRED [/] {e(why)}"
    elif kind == "none":
        state = "no lease: nothing proved the index current"
    elif kind == "ended":
        state = f"lease ended {hms(d.expires_at, now)}, before the check"
    else:
        state = f"valid until {hms(d.expires_at, now)}"
    l2 = f"{state} · checked {hms(d.checked_at, now)} · config {e(r.config.path or '?')}"
    note = report.note or ""
    if report.source == "demo" and report.scenario:
        name = report.scenario.split(" ", 1)[-1]
        note = f"{name}: {report.scenario_title or ''} — {note}"
    return l1, l2, e(note)


class ReceiptHeader(Vertical):
    """Two lines (plus an optional note line) at the top of the dashboard."""

    report: reactive[DashboardReport | None] = reactive(None, always_update=True)

    def compose(self) -> ComposeResult:
        yield Static(id="header-1")
        yield Static(id="header-2")
        yield Static(id="header-note")

    def watch_report(self, report: DashboardReport | None) -> None:
        if not self.is_mounted:
            return
        if report is None:
            l1, l2, note = "[reverse] clawprobe [/] probing…", "", ""
        else:
            l1, l2, note = header_lines(report)
        set_text(self.query_one("#header-1", Static), l1)
        set_text(self.query_one("#header-2", Static), l2)
        nb = self.query_one("#header-note", Static)
        set_text(nb, note)
        nb.set_class(not note, "-empty")
        expired = bool(report and report.current and report.current.diagnosis.expired)
        self.set_class(expired, "-expired")

    def on_mount(self) -> None:
        self.watch_report(self.report)
