"""The agents overview: one row per agent, worst first — verdict glyph and word, sub-reason, lease left,
pending embeddings, canary. It opens first when the report holds more than one agent (a failing agent is
never hidden behind ``a``); Enter opens the highlighted agent's panes, ``o`` on the panes comes back.
``/`` filters the rows (type: agent id, verdict or reason contain the text, case-insensitive; Enter goes
back to the list; Esc clears the filter).

Every cell is a fact of :func:`clawprobe.tui.state.overview` (``clawprobe.core.view``): nothing is judged
here. The line above the table says the worst verdict and how many agents share it (the terminal title
says the same, see ``ClawprobeApp.set_report``).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from clawprobe.core.view import OverviewRow
from clawprobe.styles import style_file
from clawprobe.tui.state import DashboardReport, overview, worst_line
from clawprobe.tui.widgets.fmt import COLOR, GLYPH, e
from clawprobe.tui.widgets.verdict_banner import CHECKING

HINT = "[$foreground-muted]Enter opens the agent's panes · o comes back here · j/k move · / filters[/]"
#: fixed column widths (cells); the tag column takes what the terminal has beyond them
WIDTHS = {"verdict": 11, "agent": 9, "lease": 13, "pending": 12, "canary": 13}
MIN_TAG = 16


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with ``…``."""
    c = Content(text)
    return text if c.cell_length <= width else c.truncate(width, ellipsis=True).plain


def tag_width(total: int) -> int:
    """The tag column's width at a table ``total`` cells wide."""
    return max(MIN_TAG, total - sum(WIDTHS.values()) - 1)


def matches(row: OverviewRow, text: str) -> bool:
    """Whether ``row`` passes the ``/`` filter: its agent id, verdict word or reason contains ``text``
    (case-insensitive; an empty filter passes every row)."""
    needle = text.strip().casefold()
    return not needle or any(needle in part.casefold() for part in (row.agent_id, row.word, row.tag))


def cells(row: OverviewRow, tag_w: int) -> list[str]:
    """The row's cells as markup (each fact coloured by its own state; every cell cut to its width)."""

    def fact(state: str, words: str, width: int) -> str:
        return f"[{COLOR[state]}]{GLYPH[state]} {e(clip(words, width - 3))}[/]"

    return [f"[{COLOR[row.level]}][b]{e(row.word)}[/b][/]", e(clip(row.agent_id, WIDTHS["agent"] - 1)),
            e(clip(row.tag, tag_w - 1)), fact(row.lease.state, row.lease.words, WIDTHS["lease"]),
            fact(row.pending.state, row.pending.words, WIDTHS["pending"]),
            fact(row.canary.state, row.canary.words, WIDTHS["canary"])]


class AgentsScreen(Screen[None]):
    """The overview of every agent (see the module docstring)."""

    CSS_PATH = [style_file("agents.tcss")]
    BINDINGS = [
        Binding("enter", "open", "Open agent"),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
        Binding("g", "edge(0)", "Top", show=False),
        Binding("G", "edge(1)", "Bottom", show=False),
        Binding("slash", "filter", "Filter", key_display="/", show=False),  # the hint line says it (80 columns are full)
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static(id="overview-banner")
        table: DataTable = DataTable(id="agents-table", cursor_type="row", zebra_stripes=False, cell_padding=0)
        yield table
        yield Input(placeholder="filter: agent, verdict or reason (Esc clears)", id="agents-filter")
        yield Static(HINT, id="overview-hint")
        yield Footer()

    def on_mount(self) -> None:
        self._ids: list[str] = []
        self._tag_w = 0
        self._filter = ""
        self.query_one("#agents-filter", Input).display = False
        self.watch(self.app, "report", self.show, init=True)

    def on_resize(self, event: Resize) -> None:
        self.show(self.app.report)  # type: ignore[attr-defined]

    def show(self, report: DashboardReport | None) -> None:
        """Re-render from the App's report; closes itself when one agent or none is left."""
        if report is None or not self.is_mounted:
            return
        if len(report.agents) < 2:
            if self.app.screen is self:
                self.dismiss(None)
            return
        now = self.app.clock()  # type: ignore[attr-defined]
        lv, words = worst_line(report, now)
        checking = {a.agent_id for a in report.agents if a.checking}  # no verdict yet: it may flip
        if checking:
            lv, words = "unknown", f"{CHECKING} — {len(checking)} of {len(report.agents)} agents still proving"
        banner = self.query_one("#overview-banner", Static)
        banner.update(f"[b]{e(words)}[/b]  [dim]worst first · {len(report.agents)} agents[/]")
        for name in ("ok", "warn", "unknown", "fail"):
            banner.set_class(name == lv, f"-{name}")
        every = overview(report, now)
        rows = [r for r in every if matches(r, self._filter)]
        hint = HINT if not self._filter else (
            f"[$foreground-muted]filter [b]{e(self._filter)}[/b]: {len(rows)} of {len(every)} agents · Esc clears[/]")
        self.query_one("#overview-hint", Static).update(hint)
        table = self.query_one(DataTable)
        tag_w = tag_width(self.size.width - 4)  # the table's padding and a scrollbar's room
        if tag_w != self._tag_w:
            self._tag_w = tag_w
            table.clear(columns=True)
            for key, label in (("verdict", "verdict"), ("agent", "agent"), ("tag", "why"), ("lease", "lease"),
                               ("pending", "pending"), ("canary", "canary")):
                table.add_column(Text(label), key=key, width=WIDTHS.get(key, tag_w))  # Text: no markup parse
        keep = self._ids[table.cursor_row] if self._ids and 0 <= table.cursor_row < len(self._ids) else None
        table.clear()
        self._ids = [r.agent_id for r in rows]
        for r in rows:
            row = cells(r, tag_w)
            if r.agent_id in checking:
                row[0] = f"[$foreground-muted][b]{e(CHECKING.lower())}[/b][/]"
            table.add_row(*(Content.from_markup(c) for c in row), key=r.agent_id)
        if keep in self._ids:
            table.move_cursor(row=self._ids.index(keep))

    def action_filter(self) -> None:
        """``/``: show the filter line and type into it (the rows narrow as you type)."""
        box = self.query_one("#agents-filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        """Esc: clear and hide the filter; every agent is listed again."""
        box = self.query_one("#agents-filter", Input)
        if not box.display and not self._filter:
            return
        box.value = ""
        box.display = False
        self._filter = ""
        self.query_one(DataTable).focus()
        self.show(self.app.report)  # type: ignore[attr-defined]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter = event.value
        self.show(self.app.report)  # type: ignore[attr-defined]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter line: back to the (filtered) list."""
        event.stop()
        self.query_one(DataTable).focus()

    @property
    def highlighted(self) -> str | None:
        """The agent id under the cursor."""
        table = self.query_one(DataTable)
        return self._ids[table.cursor_row] if self._ids and 0 <= table.cursor_row < len(self._ids) else None

    def action_move(self, step: int) -> None:
        """``j``/``k``: the next / previous agent."""
        table = self.query_one(DataTable)
        table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def action_edge(self, end: int) -> None:
        """``g``/``G``: the first / last agent."""
        table = self.query_one(DataTable)
        table.move_cursor(row=(table.row_count - 1) if end else 0)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        """Enter: show the highlighted agent's panes."""
        agent = self.highlighted
        if agent is not None:
            self.app.open_agent(agent)  # type: ignore[attr-defined]
        self.dismiss(None)
