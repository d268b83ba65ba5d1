"""``?`` / F1 — the help screen: keys, what each pane shows and where its facts come from, the verdict
ladder, and terminal tips. Scrollable (it must fit an 80×24 SSH window); Esc, q or ? closes it.

The keys are a two-column table of plain-text cells (a key such as ``] / [`` is never parsed as markup; a
long description wraps inside its column). Every text put into markup (pane help, verdict titles) goes
through ``clawprobe.tui.widgets.fmt.e``; paragraphs are single lines, so the widget wraps them to the window's width."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from clawprobe.core.rules import RULES
from clawprobe.core.verdicts import TITLES
from clawprobe.tui.widgets.fmt import e

KEYS: tuple[tuple[str, str], ...] = (
    ("? / F1", "this help (scroll with ↑ ↓ PgUp PgDn)"),
    ("r", "re-probe now (fast probes + the 3–6 s openclaw CLI probes); demo: restart the scenario clock"),
    ("c", "live only: plant / rotate the synthetic canary (asks first; writes only the canary file)"),
    ("a / A", "next / previous agent"),
    ("o", "agents overview (worst first; opens first with several agents); Enter opens an agent"),
    ("s", "live only: save the receipt to the history (user data dir, $CLAWPROBE_DATA_DIR)"),
    ("1 – 6", "focus a pane; ↑ ↓ scroll it (pane 2: move the cell cursor)"),
    ("j k g G", "in a focused pane or the overview: down / up / top / bottom"),
    ("/ · Esc", "overview: filter the agents by id or reason · Esc clears the filter (or closes a screen)"),
    ("Enter", "on pane 6: open the repair walkthrough"),
    ("y", "on pane 6: copy the exact command (OSC 52)"),
    ("n / p  ] / [", "demo: next / previous scenario"),
    ("Ctrl+P or :", "command palette"),
    ("Tab / Shift+Tab", "move focus"),
    ("q", "quit (exit code = the worst verdict shown)"),
)
"""(key, what it does); "live only" keys tell in demo and replay why they do nothing there."""

TIPS = (
    "[b]Reading the screen without colour[/b]\n"
    "Every state is spelled out: ✓ ok, ✗ FAIL, n/a (not needed by this mode), ? unproven (not measured or "
    "not provable, e.g. a canary denied by scope — never counted as passing, never as failed). The banner "
    "starts with ✓ HEALTHY, ⚠ WARNING, ✗ FAILING or ? UNPROVEN and always names the rule and the exit code. "
    "EXPIRED means the receipt's lease ended or an input changed: the verdict held at check time, not now "
    "(the banner then reads ⚠ EXPIRED, never ✓). A mode that is not configured is dimmed: · not used.\n"
    "\n"
    "[b]Terminals[/b]\n"
    "• NO_COLOR=1 and TEXTUAL_COLOR_SYSTEM=standard (16 colours) keep every state readable.\n"
    "• clawprobe --no-mouse leaves the mouse to the terminal, so its own text selection works.\n"
    "• Copy (y) uses OSC 52; under tmux set `set -g set-clipboard on`. macOS Terminal.app ignores it.\n"
    "• TEXTUAL_LOG=/tmp/clawprobe-clawprobe.tui.log writes the Textual log to a file (no second terminal needed).\n"
    "• Where file events do not arrive (NFS, some containers): WATCHFILES_FORCE_POLLING=1.\n"
)
"""Terminal tips (markup): one line per paragraph or bullet — the Static wraps them to the width."""

KEY_WIDTH = max(len(k) for k, _ in KEYS) + 2  #: the key column of the help's key table (cells)


def ladder() -> str:
    """The verdict precedence ladder, one line per rule (from ``clawprobe.core.rules.RULES``)."""
    return "\n".join(f"{i:2d}. {v.value:<19} {e(TITLES[v])}" for i, (v, _fn) in enumerate(RULES, start=1))


def body_markup(panes: list[tuple[int, str, str]]) -> str:
    """The help below the key table as Textual markup: the panes (``panes`` = ``(number, title, HELP)``),
    the verdict ladder and the tips."""
    pane_txt = "\n\n".join(f"[b]{n} · {e(t)}[/b] — {e(h)}" for n, t, h in panes)
    return (f"[b]The panes[/b]\n{pane_txt}\n\n"
            f"[b]Verdicts, highest precedence first[/b] (the first rule that fires wins; the banner names it, "
            f"rule N/{len(RULES)})\n{ladder()}\n\n{TIPS}")


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
            yield Static("[b]clawprobe — keys[/b]", id="help-keys-title")
            with Grid(id="help-keys"):  # two columns: a description wraps inside its own column
                for key, what in KEYS:
                    yield Static(Content(key), classes="help-key")
                    yield Static(Content(what), classes="help-what")
            yield Static(body_markup(self._panes), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-keys", Grid).styles.grid_columns = f"{KEY_WIDTH} 1fr"
        self.query_one("#help-scroll").focus()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)
