"""``?`` / F1 — the help screen: keys, what each pane shows and where its facts come from, the verdict
ladder, and terminal tips. Scrollable (it must fit an 80×24 SSH window); Esc, q or ? closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.markup import escape
from textual.widgets import Static

from core.rules import RULES
from core.verdicts import TITLES

KEYS: tuple[tuple[str, str], ...] = (
    ("? / F1", "this help (scroll with ↑ ↓ PgUp PgDn)"),
    ("r", "re-probe now (fast probes + the 3–6 s openclaw CLI probes); demo: restart the scenario clock"),
    ("c", "plant / rotate the synthetic canary (asks first; writes only the canary file)"),
    ("a / A", "next / previous agent"),
    ("s", "save the receipt to the history (user data dir, $CLAWPROBE_DATA_DIR)"),
    ("1 – 6", "focus a pane; ↑ ↓ scroll it (pane 2: move the cell cursor)"),
    ("Enter", "on pane 6: open the repair walkthrough"),
    ("y", "on pane 6: copy the command (OSC 52)"),
    ("n / p  ] / [", "demo: next / previous scenario"),
    ("Ctrl+P or :", "command palette"),
    ("Tab / Shift+Tab", "move focus"),
    ("q", "quit (exit code = the worst verdict shown)"),
)

TIPS = """\
[b]Reading the screen without colour[/b]
Every state is spelled out: ✓ ok, ✗ FAIL, n/a (not needed by this mode), ? unproven (not measured — never
counted as passing). The banner starts with ✓ HEALTHY, ⚠ WARNING, ✗ FAILING or ? UNPROVEN. EXPIRED means
the receipt's lease ended or an input changed: the verdict held at check time, not now.

[b]Terminals[/b]
• NO_COLOR=1 and TEXTUAL_COLOR_SYSTEM=standard (16 colours) keep every state readable.
• clawprobe --no-mouse leaves the mouse to the terminal, so its own text selection works.
• Copy (y) uses OSC 52; under tmux set `set -g set-clipboard on`. macOS Terminal.app ignores it.
• TEXTUAL_LOG=/tmp/clawprobe-tui.log writes the Textual log to a file (no second terminal needed).
• Where file events do not arrive (NFS, some containers): WATCHFILES_FORCE_POLLING=1.
"""


def ladder() -> str:
    """The verdict precedence ladder, one line per rule (from ``core.rules.RULES``)."""
    return "\n".join(f"{i:2d}. {v.value:<19} {escape(TITLES[v])}" for i, (v, _fn) in enumerate(RULES, start=1))


def help_markup(panes: list[tuple[int, str, str]]) -> str:
    """The whole help text as Textual markup; ``panes`` = ``(number, title, HELP)`` of each pane."""
    keys = "\n".join(f"[b]{escape(k):<16}[/b] {escape(v)}" for k, v in KEYS)
    pane_txt = "\n\n".join(f"[b]{n} · {escape(t)}[/b] — {escape(h)}" for n, t, h in panes)
    return (f"[b]clawprobe — keys[/b]\n{keys}\n\n[b]The panes[/b]\n{pane_txt}\n\n"
            f"[b]Verdicts, highest precedence first[/b] (the first rule that fires wins; the banner names it, "
            f"rule N/13)\n{ladder()}\n\n{TIPS}")


class HelpScreen(ModalScreen[None]):
    """Scrollable help over the dashboard."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("f1", "dismiss", "Close", show=False),
    ]

    def __init__(self, panes: list[tuple[int, str, str]]) -> None:
        super().__init__()
        self._panes = panes

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll"):
            yield Static(help_markup(self._panes), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)
