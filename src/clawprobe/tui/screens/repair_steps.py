"""A minimal walkthrough used only while ``clawprobe.tui.screens.walkthrough.WalkthroughScreen`` (owned by the
downloads+walkthrough engineer) is not available: it lists ``diagnosis.next_action.steps`` read-only."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from clawprobe.core.repairs import RepairAction


def steps_markdown(action: RepairAction) -> str:
    """The action and its ordered steps as Markdown (title, check, command, how to verify)."""
    out = [f"# {action.title}", "", action.why, ""]
    if action.dont:
        out += [f"**Don't:** {action.dont}", ""]
    for i, s in enumerate(action.steps, start=1):
        out += [f"## {i}. {s.title}", "", s.check, ""]
        if s.command:
            out += ["```sh", s.command, "```", ""]
        out += [f"*Proves it worked:* {s.verify}", ""]
    if not action.steps:
        out.append("Nothing to do.")
    return "\n".join(out)


class RepairStepsScreen(ModalScreen[None]):
    """Read-only list of the repair steps; Esc or q closes it."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("q", "close", "Close", show=False)]

    def __init__(self, action: RepairAction) -> None:
        super().__init__()
        self._action = action

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="steps-scroll"):
            yield Markdown(steps_markdown(self._action))

    def on_mount(self) -> None:
        self.query_one("#steps-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
