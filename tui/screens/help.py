"""``?`` / F1 — the help screen: keys, what each pane shows and where its facts come from, the verdict
ladder, and terminal tips. Scrollable (it must fit an 80×24 SSH window); Esc, q or ? closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from core.rules import RULES
from core.verdicts import TITLES

KEYS = """\
| key | does |
|---|---|
| `?` / `F1` | this help (scroll with ↑ ↓ PgUp PgDn) |
| `r` | re-probe now (fast probes + the 3–6 s `openclaw` CLI probes) |
| `c` | plant / rotate the synthetic canary (asks first; writes only the canary file) |
| `a` | next agent (`A` previous) |
| `s` | save the receipt to the history (user data dir, `CLAWPROBE_DATA_DIR`) |
| `1`–`6` | focus a pane; ↑ ↓ scroll it (pane 2: move the cell cursor) |
| `Enter` | on pane 6: open the repair walkthrough |
| `y` | on pane 6: copy the command (OSC 52) |
| `n` / `p` (`]` / `[`) | demo: next / previous scenario |
| `Ctrl+P` or `:` | command palette |
| `Tab` / `Shift+Tab` | move focus |
| `q` | quit |
"""

TIPS = """\
## Reading the screen without colour
Every state is spelled out: `✓ ok`, `✗ FAIL`, `n/a` (not needed by this mode), `? unproven` (not measured
— never counted as passing). The banner starts with `✓ HEALTHY`, `⚠ WARNING`, `✗ FAILING` or `? UNPROVEN`.
`EXPIRED` means the receipt's lease ended or an input changed: the verdict held at check time, not now.

## Terminals
- `NO_COLOR=1` and `TEXTUAL_COLOR_SYSTEM=standard` (16 colours) keep every state readable.
- `clawprobe --no-mouse` leaves the mouse to the terminal, so its own text selection works.
- Copy (`y`) uses OSC 52; under tmux set `set -g set-clipboard on`. macOS Terminal.app ignores it.
- `TEXTUAL_LOG=/tmp/clawprobe-tui.log` writes the Textual log to a file (no second terminal needed).
- On NFS / containers where file events do not arrive: `WATCHFILES_FORCE_POLLING=1`.
"""


def ladder() -> str:
    """The verdict precedence ladder as a Markdown list (from ``core.rules.RULES``)."""
    return "\n".join(f"{i}. `{v.value}` — {TITLES[v]}" for i, (v, _fn) in enumerate(RULES, start=1))


def help_markdown(panes: list[tuple[int, str, str]]) -> str:
    """The whole help text; ``panes`` = ``(number, title, HELP)`` of each pane."""
    pane_md = "\n".join(f"**{n} · {t}** — {h}\n" for n, t, h in panes)
    return (f"# clawprobe — keys\n\n{KEYS}\n## The panes\n\n{pane_md}\n"
            f"## Verdicts, highest precedence first\n\nThe first rule that fires wins; the banner names it "
            f"(`rule N/13`).\n\n{ladder()}\n\n{TIPS}")


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
            yield Markdown(help_markdown(self._panes), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)
