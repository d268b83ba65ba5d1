"""The verdict banner: the verdict in words and colour, the rule that fired (its place in the precedence
ladder), the sub-reason, and one evidence line — readable without colour (glyph + words).

Source: ``core.diagnosis.diagnose`` (``verdict``, ``title``, ``rule``, ``reason``, ``evidence``,
``warnings``). An expired receipt is prefixed EXPIRED: the verdict held at check time, not now.
"""

from __future__ import annotations

from core.rules import RULES
from tui.state import DashboardReport
from tui.widgets.fmt import LEVEL_WORD, e, level
from tui.widgets.pane import ReportLines

LEVELS = ("ok", "warn", "unknown", "fail")


def banner_lines(report: DashboardReport) -> tuple[str, str, str]:
    """(verdict line, evidence line, level) as markup — pure, from the report alone."""
    view = report.current
    if view is None:
        return "? UNPROVEN  no agent to diagnose", e(report.note or ""), "unknown"
    d = view.diagnosis
    lv = level(d.verdict)
    reason = f" · {e(d.reason)}" if d.reason else ""
    expired = "[reverse] EXPIRED [/] " if d.expired else ""
    l1 = (f"{expired}[b]{LEVEL_WORD[lv]}  {e(d.title)}[/b]{reason}  "
          f"[dim]rule {d.rule}/{len(RULES)} {d.verdict.value} · exit {d.exit_code}[/]")
    ev = d.evidence[0] if d.evidence else ""
    if d.warnings and d.verdict.value == "healthy":
        ev = f"⚠ {d.warnings[0].tag}: {d.warnings[0].message}"
    more = f" (+{len(d.evidence) - 1} more in pane 6)" if len(d.evidence) > 1 else ""
    return l1, f"evidence: {e(ev)}{more}", lv


class VerdictBanner(ReportLines):
    """The verdict in two lines; CSS class ``-ok``/``-warn``/``-unknown``/``-fail`` sets its colour."""

    LINE_IDS = ("verdict-line", "verdict-evidence")

    def lines(self, report: DashboardReport | None) -> tuple[str, ...]:
        return banner_lines(report)[:2] if report is not None else ("? UNPROVEN  probing…", "")

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        lv = banner_lines(report)[2] if report is not None else "unknown"
        out = {f"-{name}": name == lv for name in LEVELS}
        out["-expired"] = bool(report and report.current and report.current.diagnosis.expired)
        return out
