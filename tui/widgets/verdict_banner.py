"""The verdict banner: the verdict in words and colour, the rule that fired (its place in the precedence
ladder), the sub-reason, and one evidence line — readable without colour (glyph + words).

Source: ``core.diagnosis.diagnose`` (``verdict``, ``title``, ``rule``, ``reason``, ``evidence``,
``warnings``). An expired receipt is prefixed EXPIRED: the verdict held at check time, not now.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from core.rules import RULES
from tui.state import DashboardReport
from tui.widgets.fmt import LEVEL_WORD, e, level
from tui.widgets.pane import set_text

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


class VerdictBanner(Vertical):
    """The verdict in two lines; CSS class ``-ok``/``-warn``/``-unknown``/``-fail`` sets its colour."""

    report: reactive[DashboardReport | None] = reactive(None, always_update=True)

    def compose(self) -> ComposeResult:
        yield Static(id="verdict-line")
        yield Static(id="verdict-evidence")

    def watch_report(self, report: DashboardReport | None) -> None:
        if not self.is_mounted:
            return
        if report is None:
            l1, l2, lv = "? UNPROVEN  probing…", "", "unknown"
        else:
            l1, l2, lv = banner_lines(report)
        set_text(self.query_one("#verdict-line", Static), l1)
        set_text(self.query_one("#verdict-evidence", Static), l2)
        for name in LEVELS:
            self.set_class(name == lv, f"-{name}")
        self.set_class(bool(report and report.current and report.current.diagnosis.expired), "-expired")

    def on_mount(self) -> None:
        self.watch_report(self.report)
