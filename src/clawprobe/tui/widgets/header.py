"""The header: where the receipt comes from, which agent, OpenClaw version and era, QMD version, config path,
and the receipt's check time and expiry — an expired receipt reads EXPIRED, never as current.

Sources: ``openclaw`` (``openclaw --version``; era from ``has_qmd_backend``), ``qmd.version``
(``qmd --version``), ``config.path``, ``diagnosis.checked_at/expires_at/expired``. The header is rendered
from the report and the App's clock: the App's one-second tick calls :meth:`ReceiptHeader.tick`, which
repaints a line only when its text changes — so "the lease ended 17 min ago" keeps its age true (a human
duration, never raw seconds) and costs one line per tick at most.
"""

from __future__ import annotations

from datetime import datetime

from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fmt import dur, e, hms
from clawprobe.tui.widgets.pane import ReportLines


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


def expired_text(view: AgentView, now: datetime) -> str:
    """Why the receipt expired, decided at ``now`` by :meth:`clawprobe.core.expiry.Expiry.at` (its age is
    computed now, not when the flip was noticed): the lease end and any input change, joined by ``; ``."""
    x = view.diagnosis.expiry.at(now)
    why = [c.line for c in x.changes]
    if x.lease_ended and x.lease_ends_at is not None:
        why.insert(0, f"the lease ended {dur((now - x.lease_ends_at).total_seconds())} ago")
    return "; ".join(why) or "expired"


def change_text(view: AgentView, now: datetime) -> str:
    """The input change a re-probe measured against the receipt shown before (``view.superseded``, decided by
    :func:`clawprobe.core.expiry.superseded`): ``01:02:03Z config hash 3f2a1b9c… → 9c1d2e3f…: the receipt
    before expired then`` — the time first, so 80 columns show when and what; empty before any change."""
    x = view.superseded
    if x is None or not x.changes:
        return ""
    return f"{hms(x.compared_with, now)} {'; '.join(c.brief for c in x.changes)}: the receipt before expired then"


def header_lines(report: DashboardReport, now: datetime | None = None) -> tuple[str, str, str]:
    """(line 1, line 2, note) as markup — pure, from the report and ``now`` (default: the time the report was
    evaluated at)."""
    view = report.current
    if view is None:
        return line_source(report) + " no agent", "", e(report.note or "")
    r, d = view.receipt, view.diagnosis
    n = len(report.agents)
    agent = f"agent [b]{e(r.agent_id)}[/b]" + (f" ({report.selected % n + 1}/{n}, a: next)" if n > 1 else "")
    oc = f"OpenClaw {e(r.openclaw.version or '?')} ({era(view)})"
    qmd = f"qmd {e(r.qmd.version)}" if r.qmd.version else ("qmd ?" if r.config.configured_backend == "qmd" else "")
    lane = ""
    if report.source == "live":  # the openclaw CLI lane, at the top where it is visible at 80×24
        lane = f"CLI ran {hms(view.slow_at, now or report.evaluated_at)}" if view.slow_at else "CLI checking…"
    l1 = " · ".join(x for x in (line_source(report) + " " + agent, lane, oc, qmd) if x)
    now = now or report.evaluated_at
    kind = d.expiry.claim
    if d.expired:
        state = f"[reverse] EXPIRED [/] {e(expired_text(view, now))}"
    elif kind == "none":
        state = "no lease: nothing proved the index current"
    elif kind == "ended":
        state = f"lease ended {hms(d.expires_at, now)}, before the check"
    else:
        state = f"valid until {hms(d.expires_at, now)}"
    changed = change_text(view, now)
    if changed:  # first, where 80 columns still show it: the shown receipt replaced one of other inputs
        state = f"[reverse] CHANGED [/] {e(changed)} · {state}"
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
        if report is None:
            return "[reverse] clawprobe [/] probing…", "", ""
        return header_lines(report, self.app.clock() if self.is_attached else None)  # type: ignore[attr-defined]

    def tick(self) -> None:
        """Re-render at the clock's now (the App's 1 s tick); unchanged lines are not repainted."""
        self.watch_report(self.report)

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        return {"-expired": bool(report and report.current and report.current.diagnosis.expired)}
