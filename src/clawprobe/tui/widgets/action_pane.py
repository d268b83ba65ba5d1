"""Pane 6 — the next repair action: one line, the command, what not to do. ``Enter`` opens the walkthrough,
``y`` copies the command to the clipboard with OSC 52 (works over SSH; not in macOS Terminal.app).

Source: ``diagnosis.next_action`` (``clawprobe.core.repairs.repair_for``: one narrow action per verdict and
sub-reason; never "rebuild everything" by default).

The command is one line, never wrapped (:func:`command_line`: fitted to the pane's width keeping the program
and verb readable, so a mouse selection over SSH never picks up a broken command); ``y`` copies it whole. With no command of its
own the action shows the first walkthrough step's command (:func:`clawprobe.core.view.shown_command`).
:func:`fold_command` (folding at spaces and after ``/ = , :``) is kept for plain-text renderings.
"""

from __future__ import annotations

from datetime import datetime

from rich.cells import cell_len
from textual.binding import Binding
from textual.events import Resize

from clawprobe.core.diagnosis import claim_action
from clawprobe.core.durations import human_ages
from clawprobe.core.view import reason_words, shown_command, verdict_words
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fit import fit_command
from clawprobe.tui.widgets.fmt import e, hms
from clawprobe.tui.widgets.pane import Pane
from clawprobe.tui.widgets.verdict_banner import checking_lines

PROMPT = "$ "
INDENT = "  "
BREAK_AFTER = "/=,:"
MIN_FOLD = 12  #: narrower than this the command is not folded (the Static wraps it)


def _cut(word: str, room: int) -> int:
    """Where to split ``word`` so its head fits ``room`` cells: after the last of :data:`BREAK_AFTER`
    within it, else at ``room`` (a hard cut). Always ≥ 1."""
    head = ""
    for ch in word:
        if cell_len(head + ch) > room:
            break
        head += ch
    best = max(head.rfind(c) for c in BREAK_AFTER) + 1
    return best if best > 0 else max(1, len(head))


def fold_command(command: str, width: int | None) -> list[str]:
    """``$ command`` as lines of at most ``width`` cells (``None`` or < :data:`MIN_FOLD`: one line).

    Lines break at spaces first; a word wider than a line breaks after ``/ = , :``. Continuation lines
    start with two spaces. Joining the lines (without the prompt and indents) with the separators removed
    at each break gives back ``command`` exactly.
    """
    if width is None or width < MIN_FOLD:
        return [PROMPT + command]
    lines: list[str] = []
    cur = PROMPT
    fresh = True  # nothing but the prompt/indent on cur yet
    for word in command.split(" "):
        sep = "" if fresh else " "
        if cell_len(cur + sep + word) <= width:
            cur, fresh = cur + sep + word, False
            continue
        if not fresh:
            lines.append(cur)
            cur, fresh = INDENT, True
        while cell_len(cur + word) > width:
            n = _cut(word, width - cell_len(cur))
            lines.append(cur + word[:n])
            cur, word = INDENT, word[n:]
        cur, fresh = cur + word, False
    lines.append(cur)
    return lines


def command_line(command: str, width: int | None) -> str:
    """``$ command`` on one line of ``width`` cells, never wrapped, its program and verb kept readable
    (:func:`clawprobe.tui.widgets.fit.fit_command`: assignments' values, then paths, cut before the tail);
    ``y`` copies the whole command."""
    if width is None:
        return PROMPT + command
    return PROMPT + fit_command(command, max(1, width - cell_len(PROMPT)))


def early_width(terminal: int) -> int:
    """A lower bound of the command's width in pane 6 on a ``terminal``-column screen, for a frame drawn
    before layout: half the columns less the gutter, the pane's left padding, the scrollbar column and one
    cell for rounding (≥ 150 columns the pane gets 3/5, more than half)."""
    return (terminal - 1) // 2 - 3


def action_markup(view: AgentView, width: int | None = None) -> str:
    """The pane's markup (pure): title, the command folded to ``width``, don't, why, evidence, warnings."""
    d = view.diagnosis
    a = claim_action(d)  # once a healthy claim's lease ended: the action replay --now gives (core.diagnosis)
    lines = [f"▶ [b]{e(a.title)}[/b]"]
    command, step = shown_command(a)
    if command:
        lines.append(f"[$accent]{e(command_line(command, width))}[/]")
        if step is not None:
            lines.append(f"[$foreground-muted](step {step} of the walkthrough; y copies it)[/]")
    if a.dont:
        lines.append(f"[$warning]don't:[/] {e(a.dont)}")
    lines.append(f"[$foreground-muted]why: {e(a.why)}[/]")
    if a is not d.next_action and d.lapsed is not None and d.expiry.lease_ends_at is not None:
        lines.append(f"evidence ({e(verdict_words(d.lapsed.verdict))} since the lease ended):")
        lines.append(f" • the lease ended at {hms(d.expiry.lease_ends_at)}; nothing re-proved the index since")
    elif d.evidence:
        lines.append(f"evidence (rule {d.rule}, {e(verdict_words(d.verdict))}):")
        lines += [f" • {e(human_ages(x))}" for x in d.evidence]
    for w in d.warnings:
        lines.append(f"⚠ {e(reason_words(w.tag) or '')}: {e(w.message)}")
    return "\n".join(lines)


def checking_markup(lanes: dict[str, datetime], now: datetime, width: int | None = None) -> str:
    """While the proving lanes run (``AgentView.checking``): which ones and for how long (the banner's words,
    :func:`clawprobe.tui.widgets.verdict_banner.checking_lines`) and that the next action comes with their
    verdict — never an action that says to press ``r`` for a lane that is already running."""
    line = checking_lines(lanes, now, width)[0]
    return f"{line}\n[$foreground-muted]running now: no need to press r — the next action comes with the verdict[/]"


class ActionPane(Pane):
    """The next action for the shown verdict."""

    NUMBER = 6
    TITLE = "Next action"
    HELP = ("One narrow next step for the verdict and its sub-reason, the command to run (one line, cut "
            "with … when the pane is narrower — y copies it whole), and what not to do. Enter opens the "
            "step-by-step walkthrough; y copies the exact command (OSC 52 — in tmux set "
            "`set -g set-clipboard on`).")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = f"{self.NUMBER} {self.TITLE} · Enter steps · y copy"

    BINDINGS = [
        Binding("enter", "app.walkthrough", "Walkthrough", show=False),
        Binding("y", "app.copy_command", "Copy command", show=False),
    ]

    def fold_width(self) -> int | None:
        """Cells a command line may take: the pane's content width less the scrollbar column (reserved,
        so a scrollbar that appears later does not re-wrap the folded lines). Before layout (an early frame
        on a busy host) the narrowest this pane can be in the terminal, :func:`early_width`, so even that
        frame never wraps the command; ``None`` with no terminal size yet."""
        w = super().fold_width()
        if w is None and self.is_attached:
            w = early_width(self.app.size.width) or None
        return w

    def missing_body(self, why: str) -> str:
        """No OpenClaw here: nothing to repair; ``r`` looks again (the banner says where else to look)."""
        return "[$foreground-muted]– nothing to repair: no OpenClaw here[/]\nr looks again once it is installed"

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        if view.checking:  # the verdict is withheld (the banner says checking): so is the action that follows it
            return checking_markup(view.checking, now, self.fold_width())
        return action_markup(view, self.fold_width())

    def tick(self) -> None:
        """Re-render at the clock's now (the App's 1 s tick while lanes are checking: their elapsed time)."""
        self.refresh_body()

    def on_resize(self, event: Resize) -> None:
        # after the layout pass that sent this event: a text changed inside it keeps the body at the height
        # of the old text (its layout request is dropped), and G would stop short of the real end
        self.call_after_refresh(self.refresh_body)
