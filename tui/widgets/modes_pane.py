"""Pane 2 — per-mode readiness: rows search/vsearch/query × fresh/vectors/models/canary.

Cells come from ``core.modes.mode_readiness`` (via the diagnosis): ``✓`` ok, ``✗`` fail, ``n/a`` not
needed by that mode, ``?`` not measured. The configured mode is marked ``*``. Moving the cell cursor shows
that cell's reason — so an operator sees what a mode switch would need (e.g. ``search`` ready on a
CPU-only host while ``query`` lacks models).
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from core.modes import ModeReadiness
from tui.state import AgentView, DashboardReport
from tui.widgets.fmt import COLOR, e, mark
from tui.widgets.pane import Pane, set_text

COLUMNS = ("fresh", "vectors", "models", "canary")
_CELL = {"ok": "✓", "fail": "✗", "na": "n/a", "unknown": "?"}


class ModesPane(Pane):
    """Readiness per search mode; the DataTable cursor picks the cell whose reason is shown."""

    NUMBER = 2
    TITLE = "Modes"
    HELP = ("Readiness of each QMD search mode. search = BM25 only (no vectors, no models); vsearch needs "
            "vectors and the embed+generate models; query also the reranker. ✓ ok · ✗ fail · n/a not needed "
            "· ? not measured. * marks the configured mode; the canary is probed in that mode only. Move the "
            "cursor (arrows) to read a cell's reason.")

    def compose(self) -> ComposeResult:
        table: DataTable = DataTable(id="modes-table", cursor_type="cell", zebra_stripes=False,
                                     cell_padding=0, show_cursor=True)
        table.add_column("mode", key="mode", width=8)
        for c in COLUMNS:
            table.add_column(f" {c}", key=c, width=len(c) + 1)
        yield table
        yield Static(id="modes-reason", classes="pane-body")
        yield Static(id="modes-ready", classes="pane-body")

    def focus_target(self) -> DataTable:
        """``2`` focuses the table itself (arrow keys move the cell cursor)."""
        return self.query_one(DataTable)

    def _rows(self) -> list[ModeReadiness]:
        view = self.report.current if self.report else None
        return view.diagnosis.modes if view else []

    def refresh_body(self) -> None:
        if not self.is_mounted:
            return
        table = self.query_one(DataTable)
        rows = self._rows()
        keep = table.cursor_coordinate if table.row_count else None
        shape = tuple((m.mode, m.configured, *(getattr(m, c).state for c in COLUMNS)) for m in rows)
        if shape != getattr(self, "_shape", None):
            self._shape = shape
            table.clear()
            for m in rows:
                label = ("*" if m.configured else " ") + m.mode
                cells = [self._cell(getattr(m, c).state) for c in COLUMNS]
                table.add_row(Text(label, style="bold" if m.configured else ""), *cells, key=m.mode)
        if not rows:
            set_text(self.query_one("#modes-reason", Static), self.empty_body())
            set_text(self.query_one("#modes-ready", Static), "")
            return
        if keep is None or keep.row >= len(rows):
            keep = self._first_interesting(rows)
        if table.cursor_coordinate != keep:
            table.cursor_coordinate = keep
        self._show_reason(keep)
        ready = " · ".join(f"{m.mode}{'*' if m.configured else ''} {'✓' if m.ready else '✗'}" for m in rows)
        set_text(self.query_one("#modes-ready", Static), f"ready: {ready}")

    def _cell(self, state: str) -> Text:
        var = self.app.theme_variables.get(COLOR[state].lstrip("$"), "")
        return Text(f" {_CELL[state]}", style=var)

    @staticmethod
    def _first_interesting(rows: list[ModeReadiness]) -> Coordinate:
        for i, m in enumerate(rows):
            if m.configured:
                for j, c in enumerate(COLUMNS, start=1):
                    if getattr(m, c).state in ("fail", "unknown"):
                        return Coordinate(i, j)
                return Coordinate(i, 1)
        return Coordinate(0, 1)

    def reason_for(self, coord: Coordinate) -> str:
        """The markup line for the cell at ``coord`` (row = mode, column 0 = the mode's readiness)."""
        rows = self._rows()
        if not rows or coord.row >= len(rows):
            return ""
        m = rows[coord.row]
        star = "*" if m.configured else ""
        if coord.column == 0:
            state = "ok" if m.ready else "fail"
            return f"{m.mode}{star}: " + mark(state, "ready" if m.ready else "not ready")
        col = COLUMNS[min(coord.column, len(COLUMNS)) - 1]
        cell = getattr(m, col)
        return f"{m.mode}{star} {col}: " + mark(cell.state) + f" — {e(cell.reason)}"

    def _show_reason(self, coord: Coordinate) -> None:
        set_text(self.query_one("#modes-reason", Static), self.reason_for(coord))

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        self._show_reason(event.coordinate)

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:  # pragma: no cover
        return ""
