"""Pane 2 — per-mode readiness: rows search/vsearch/query × fresh/vectors/models/canary (QMD), or one
``builtin`` row (the builtin engine has no QMD search modes).

Cells come from ``clawprobe.core.modes.mode_readiness`` (via the diagnosis): ``✓`` ok, ``✗`` fail, ``n/a`` not
needed by that mode, ``?`` not measured or unproven. The configured mode is marked ``*``. Moving the cell
cursor (it keeps the cell's state colour: only its background marks it) shows that cell's reason — so an
operator sees what a mode switch would need (e.g. ``search``
ready on a CPU-only host while ``query`` lacks models).

What is shown is :func:`shown_rows`, which keeps every cell's glyph true to the verdict's meaning: a
canary the scope policy refused is ``? denied by scope (unproven)``, never a failure (rule 10); a canary
the builtin fallback answered is ``✗`` for QMD, never ok (rule 5); and no QMD mode reads *ready* while
QMD itself is not what answers (:func:`clawprobe.core.modes.qmd_not_serving`) — rules that live in ``clawprobe.core.modes``, so
``clawprobe check`` and ``replay`` say the same. On a builtin install the single ``builtin``
row reads its facts from ``receipt.builtin`` (provider, keyword-only). With a config that does not load
nothing is judged. The column headers shorten with the pane's width, so every column stays visible.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.events import Resize
from textual.widgets import DataTable, Static

from clawprobe.core.durations import human_ages
from clawprobe.core.view import ModeRow, mode_rows, qmd_not_serving
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fmt import COLOR, GLYPH, WORD, e, mark
from clawprobe.tui.widgets.pane import Pane, set_text

COLUMNS = ("fresh", "vectors", "models", "canary")
_CELL = {"ok": "✓", "fail": "✗", "na": "n/a", "unknown": "?", "idle": "·"}
#: header sets by the width they need (mode column 8 + each header + 1 space): the widest that fits is used
HEADERS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (36, ("fresh", "vectors", "models", "canary")),
    (26, ("frsh", "vec", "mdl", "cnry")),
    (0, ("f", "v", "m", "c")),
)


def shown_rows(view: AgentView) -> tuple[ModeRow, ...]:
    """The rows pane 2 shows: :func:`clawprobe.core.view.mode_rows` (the same rows ``check`` prints)."""
    return mode_rows(view.receipt, view.diagnosis)


def headers_for(width: int) -> tuple[str, ...]:
    """The widest header set of :data:`HEADERS` that fits ``width`` cells."""
    return next(h for need, h in HEADERS if width >= need)


def ready_line(view: AgentView, rows: tuple[ModeRow, ...]) -> str:
    """``ready: search* ✓ · vsearch · not used`` (one state per mode, said once), or why no QMD mode can
    be ready (markup)."""
    why = qmd_not_serving(view.receipt) if view.receipt.config.configured_backend == "qmd" else None
    if why is not None:
        return "ready: " + mark("fail", "no QMD mode") + f" — {e(why)} (pane 1)"
    own = [m for m in rows if m.configured]
    idle = [m.label for m in rows if m.state == "idle"]
    parts = [f"{e(m.label)}* " + mark(m.state, m.words) for m in own]
    if idle:
        parts.append(f"[$foreground-muted]{e(', '.join(idle))} not used[/]")
    return "ready: " + " · ".join(parts)


class ModesPane(Pane):
    """Readiness per search mode; the DataTable cursor picks the cell whose reason is shown."""

    NUMBER = 2
    TITLE = "Modes"
    HELP = ("Readiness of each QMD search mode. search = BM25 only (no vectors, no models); vsearch needs "
            "vectors and the embed+generate models; query also the reranker. ✓ ok · ✗ fail · n/a not needed "
            "· ? not measured or unproven (a canary denied by scope is unproven, not failed). * marks the "
            "configured mode; the canary is probed in that mode only, and a canary the builtin fallback "
            "answered never counts for QMD. No mode is ready while QMD is not what answers. The builtin engine "
            "has one row (its provider's embeddings under vectors). Narrow terminals shorten the column "
            "headers (frsh vec mdl cnry, or f v m c). Move the cursor (arrows) to read a cell's reason.")

    def compose(self) -> ComposeResult:
        table: DataTable = DataTable(id="modes-table", cursor_type="cell", zebra_stripes=False,
                                     cell_padding=0, show_cursor=True,
                                     cursor_foreground_priority="renderable")  # the cell keeps its state colour
        self._headers: tuple[str, ...] = ()
        self._columns(table, COLUMNS)
        yield table
        yield Static(id="modes-reason", classes="pane-body")
        yield Static(id="modes-ready", classes="pane-body")

    def _columns(self, table: DataTable, headers: tuple[str, ...]) -> None:
        self._headers = headers
        table.clear(columns=True)
        table.add_column(Text("mode"), key="mode", width=8)  # Text: a str label is parsed as markup (and emoji)
        for c, h in zip(COLUMNS, headers, strict=True):
            table.add_column(Text(f" {h}"), key=c, width=len(h) + 1)
        self._shape = None

    def on_resize(self, event: Resize) -> None:
        want = headers_for(self.scrollable_content_region.width)
        if want != self._headers:
            table = self.query_one(DataTable)
            keep = table.cursor_coordinate if table.row_count else None
            self._columns(table, want)
            self.refresh_body()
            if keep is not None and table.row_count:
                table.cursor_coordinate = keep

    def reset_position(self) -> None:
        """Back to the top and the configured mode's first interesting cell (another agent or scenario)."""
        super().reset_position()
        self._reset_cursor = True

    def focus_target(self) -> DataTable:
        """``2`` focuses the table itself (arrow keys move the cell cursor)."""
        return self.query_one(DataTable)

    def _rows(self) -> tuple[ModeRow, ...]:
        view = self.report.current if self.report else None
        return shown_rows(view) if view else ()

    def refresh_body(self) -> None:
        if not self.is_mounted:
            return
        table = self.query_one(DataTable)
        rows = self._rows()
        keep = table.cursor_coordinate if table.row_count and not getattr(self, "_reset_cursor", False) else None
        self._reset_cursor = False
        shape = tuple((m.label, m.configured, *(m.shown(i) for i in range(len(m.cells)))) for m in rows)
        if shape != getattr(self, "_shape", None):
            self._shape = shape
            table.clear()
            for m in rows:
                label = ("*" if m.configured else " ") + m.label
                table.add_row(Text(label, style="bold" if m.configured else self._muted()),
                              *(self._cell(m.shown(i)) for i in range(len(m.cells))), key=m.label)
        view = self.report.current if self.report else None
        table.display = bool(rows)
        if not rows:
            empty = self.empty_body()
            if view is not None and view.receipt.config.error is not None:
                empty = mark("unknown", "no mode can be judged") + ": the config does not load (pane 6)"
            set_text(self.query_one("#modes-reason", Static), empty)
            set_text(self.query_one("#modes-ready", Static), "")
            return
        if keep is None or keep.row >= len(rows):
            keep = self._first_interesting(rows)
        if table.cursor_coordinate != keep:
            table.cursor_coordinate = keep
        self._show_reason(keep)
        assert view is not None
        set_text(self.query_one("#modes-ready", Static), ready_line(view, rows))

    def _muted(self) -> str:
        return self.app.theme_variables.get("foreground-muted", "")

    def _cell(self, state: str) -> Text:
        var = self.app.theme_variables.get(COLOR[state].lstrip("$"), "")
        glyph = _CELL[state] if self._headers != HEADERS[-1][1] else GLYPH[state]
        return Text(f" {glyph}", style=var)

    @staticmethod
    def _first_interesting(rows: tuple[ModeRow, ...]) -> Coordinate:
        for i, m in enumerate(rows):
            if m.configured:
                for j, c in enumerate(m.cells, start=1):
                    if c.state in ("fail", "unknown"):
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
            return f"{e(m.label)}{star}: " + mark(m.state, m.words)
        col = min(coord.column, len(COLUMNS)) - 1
        cell = m.cell_shown(col)  # a passing cell of a row nothing serves says "blocked", dimmed (core.view)
        reason = human_ages(cell.words)
        if m.state == "idle":  # what a switch to this mode would need: said, never coloured as a failure
            return f"[$foreground-muted]{e(m.label)} (not used) {COLUMNS[col]}: {e(WORD[cell.state])} — {e(reason)}[/]"
        head = f"{e(m.label)}{star} {COLUMNS[col]}: "
        if WORD[cell.state] in reason or cell.state == "idle":  # "denied by scope (unproven)": the word is already there
            return head + mark(cell.state, reason)
        return head + mark(cell.state) + f" — {e(reason)}"

    def _show_reason(self, coord: Coordinate) -> None:
        set_text(self.query_one("#modes-reason", Static), self.reason_for(coord))

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        self._show_reason(event.coordinate)

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:  # pragma: no cover
        return ""
