"""Pane 6 — the next repair action: one line, the command, what not to do. ``Enter`` opens the walkthrough,
``y`` copies the command to the clipboard with OSC 52 (works over SSH; not in macOS Terminal.app).

Source: ``diagnosis.next_action`` (``core.repairs.repair_for``: one narrow action per verdict and
sub-reason; never "rebuild everything" by default).
"""

from __future__ import annotations

from datetime import datetime

from textual.binding import Binding

from tui.state import AgentView, DashboardReport
from tui.widgets.fmt import e
from tui.widgets.pane import Pane


class ActionPane(Pane):
    """The next action for the shown verdict."""

    NUMBER = 6
    TITLE = "Next action"
    HELP = ("One narrow next step for the verdict and its sub-reason, the command to run, and what not to do. "
            "Enter opens the step-by-step walkthrough; y copies the command (OSC 52 — in tmux set "
            "`set -g set-clipboard on`).")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = f"{self.NUMBER} {self.TITLE} · Enter steps · y copy"

    BINDINGS = [
        Binding("enter", "app.walkthrough", "Walkthrough", show=False),
        Binding("y", "app.copy_command", "Copy command", show=False),
    ]

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        a = view.diagnosis.next_action
        lines = [f"▶ [b]{e(a.title)}[/b]"]
        if a.command:
            lines.append(f"[$accent]$ {e(a.command)}[/]")
        if a.dont:
            lines.append(f"[$warning]don't:[/] {e(a.dont)}")
        lines.append(f"[$foreground-muted]why: {e(a.why)}[/]")
        d = view.diagnosis
        if d.evidence:
            lines.append(f"evidence (rule {d.rule}, {e(d.verdict.value)}):")
            lines += [f" • {e(x)}" for x in d.evidence]
        for w in d.warnings:
            lines.append(f"⚠ {e(w.tag)}: {e(w.message)}")
        return "\n".join(lines)
