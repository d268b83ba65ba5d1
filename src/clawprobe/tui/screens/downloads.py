"""The model-download screen: the download pane full-size, opened by itself when a download starts.

The App calls :func:`on_receipt` with every new receipt of the agent on screen; it pushes
:class:`DownloadsScreen` when a model download has just started (``clawprobe.core.downloads.download_started``) and
keeps an open one up to date. Esc goes back; the screen never closes itself.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from clawprobe.core.downloads import download_started
from clawprobe.core.receipt import Receipt, Vectors
from clawprobe.styles import style_file
from clawprobe.tui.widgets.download_pane import DownloadPane
from clawprobe.tui.widgets.fmt import e


class DownloadsScreen(Screen[None]):
    """Per model: name, role, state, live progress bar. ``clock`` gives UTC now (injectable)."""

    CSS_PATH = [style_file("downloads.tcss")]
    BINDINGS = [Binding("escape", "back", "Back"), Binding("q", "back", "Back", show=False)]

    def __init__(self, receipt: Receipt, *, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        self.receipt = receipt
        self.clock = clock or (lambda: datetime.now(UTC))

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="downloads-title")
        yield DownloadPane(id="downloads-pane")
        yield Static(self._note(), id="downloads-note")
        yield Footer()

    def _title(self) -> str:
        r = self.receipt
        return (f"[b]Model downloads[/b] · agent {e(r.agent_id)} · {e(r.config.search_mode)} mode"
                f" · {e(r.vectors.download_status or 'not inspected')}")

    def _note(self) -> str:
        return ("qmd fetches ~2 GB of GGUF models on the first semantic run. Progress inside the warm-up window "
                "is waiting, not failure; no growth for the stall time is a stall. Never `qmd pull` to probe.")

    def on_mount(self) -> None:
        self.query_one(DownloadPane).show(self.receipt.vectors, self.clock())

    def update_receipt(self, receipt: Receipt) -> None:
        """Show a newer receipt of the same agent."""
        self.receipt = receipt
        if self.is_mounted:
            self.query_one("#downloads-title", Static).update(self._title())
            self.query_one(DownloadPane).show(receipt.vectors, self.clock())

    def action_back(self) -> None:
        self.dismiss(None)


def on_receipt(app: App, previous: Vectors | None, receipt: Receipt,
               clock: Callable[[], datetime] | None = None) -> bool:
    """Call from the App after each probe of the agent on screen.

    Updates an open :class:`DownloadsScreen` for that agent; otherwise pushes one when a download has just
    started (``previous`` → ``receipt.vectors``). Returns True when it opened the screen.
    """
    screen = app.screen
    if isinstance(screen, DownloadsScreen):
        if screen.receipt.agent_id == receipt.agent_id:
            screen.update_receipt(receipt)
        return False
    if download_started(previous, receipt.vectors):
        app.push_screen(DownloadsScreen(receipt, clock=clock))
        return True
    return False
