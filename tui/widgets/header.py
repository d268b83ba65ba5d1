"""The header: where the receipt comes from, which agent, OpenClaw version and era, QMD version, config path,
and the receipt's check time and expiry — an expired receipt reads EXPIRED, never as current.

Sources: ``openclaw`` (``openclaw --version``; era from ``has_qmd_backend``), ``qmd.version``
(``qmd --version``), ``config.path``, ``diagnosis.checked_at/expires_at/expired``. The header changes only
when the report changes (the expiry flip is a one-shot timer in the App, not a per-second repaint).
"""

from __future__ import annotations

from tui.state import AgentView, DashboardReport, claim
from tui.widgets.fmt import e, hms
from tui.widgets.pane import ReportLines


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


class ReceiptHeader(ReportLines):
    """Two lines (plus an optional note line) at the top of the dashboard."""

    LINE_IDS = ("header-1", "header-2", "header-note")

    def lines(self, report: DashboardReport | None) -> tuple[str, ...]:
        return header_lines(report) if report is not None else ("[reverse] clawprobe [/] probing…", "", "")

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        return {"-expired": bool(report and report.current and report.current.diagnosis.expired)}
