"""The model-download pane: one row per model the configured search mode needs — role, file name, state
(complete / downloading x% · rate · ETA / stalled since … / missing) and a live progress bar.

It only renders ``Receipt.vectors.downloads`` (filled by ``clawprobe.core.downloads``); it measures nothing.
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from clawprobe.core.downloads import describe, percent
from clawprobe.core.receipt import ModelDownload, Vectors
from clawprobe.tui.widgets.fmt import e as escape

STATE_STYLE = {
    "complete": "$success", "downloading": "$accent", "starting": "$warning", "stalled": "$error",
    "missing": "$error", "corrupt": "$error", "size_mismatch": "$error",
}
STATUS_WORDS = {
    "ready": "all models complete",
    "waiting": "downloading — waiting is expected inside the warm-up window",
    "stalled": "STALLED — no progress for the stall time (a failure, with evidence)",
    "failed": "FAILED — past the warm-up window, or a broken model file",
    "missing": "models missing and nothing is downloading",
}


def row_markup(m: ModelDownload, now: datetime) -> str:
    """One model's label line (markup): ``role  name  state``; the detail line when it explains a problem."""
    style = STATE_STYLE.get(m.state, "$foreground")
    text = f"[b]{escape(f'{m.role:<8}')}[/b] {escape(m.name)}\n  [{style}]{escape(describe(m, now))}[/]"
    if m.state in ("stalled", "missing", "corrupt", "size_mismatch", "starting") and m.detail:
        text += f"\n  [$foreground-muted]{escape(m.detail)}[/]"
    return text


class DownloadRow(Vertical):
    """A model's label and its progress bar (indeterminate while the total is unknown)."""

    def __init__(self, model: ModelDownload, now: datetime, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="download-row")
        self._model, self._now = model, now

    def compose(self) -> ComposeResult:
        yield Static(row_markup(self._model, self._now), classes="download-label")
        yield ProgressBar(total=100, show_eta=False, classes="download-bar")

    def on_mount(self) -> None:
        self._paint(self._model, self._now)

    def show(self, model: ModelDownload, now: datetime) -> None:
        """Repaint this row for a newer reading of the same model."""
        self._model, self._now = model, now
        if self.is_mounted:
            self._paint(model, now)

    def _paint(self, model: ModelDownload, now: datetime) -> None:
        self.query_one(".download-label", Static).update(row_markup(model, now))
        bar = self.query_one(ProgressBar)
        pct = percent(model)
        if pct is None and model.state in ("downloading", "starting"):
            bar.update(total=None)  # indeterminate: bytes are moving, total unknown
        else:
            bar.update(total=100, progress=pct or 0.0)
        self.set_class(model.state == "stalled", "-stalled")
        self.set_class(model.state == "complete", "-complete")


class DownloadPane(Vertical):
    """All models of the configured mode; call :meth:`show` with the receipt's ``vectors`` and the time."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="download-pane")
        self.border_title = "Model downloads"
        self._names: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static("[$foreground-muted]model cache not inspected yet[/]", id="download-status")
        yield Vertical(id="download-rows")

    def show(self, vectors: Vectors, now: datetime) -> None:
        """Render ``vectors.downloads``: rows are rebuilt only when the set of models changes."""
        status = self.query_one("#download-status", Static)
        models = vectors.downloads
        if models is None:
            status.update("[$foreground-muted]model cache not inspected[/]")
            return
        words = STATUS_WORDS.get(vectors.download_status or "", vectors.download_status or "")
        status.update(f"[b]{escape(vectors.download_status or '?')}[/b] · {escape(words)}" if models
                      else "[$foreground-muted]this search mode loads no model[/]")
        names = tuple(f"{m.role}:{m.name}" for m in models)
        rows = self.query_one("#download-rows", Vertical)
        if names != self._names:
            self._names = names
            rows.remove_children()
            rows.mount_all([DownloadRow(m, now, id=f"download-{m.role}") for m in models])
            return
        for m in models:
            self.query_one(f"#download-{m.role}", DownloadRow).show(m, now)
