"""The agents overview: one row per agent, worst first — verdict glyph and word, sub-reason, lease left,
pending embeddings, canary. It opens first when the report holds more than one agent (a failing agent is
never hidden behind ``a``) — unless ``--agent`` named one. The highlighted row is the report's selected agent:
moving the cursor selects it, so Enter (its panes), ``c``, ``s`` and ``r`` all act on the row you see; ``o``
on the panes comes back with the cursor on the agent shown. The overview that opens by itself keeps its cursor
on the worst row (row 0) while the order changes under it (live, the lanes prove one agent after another)
until the operator moves it; from then on it follows their choice. The lease cells follow the App's 1 s tick.
Column widths: ``clawprobe.tui.screens.agents_cols``; below 80×24 the same notice as the panes.
``/`` filters the rows (type: agent id, verdict or reason contain the text, case-insensitive; Enter goes
back to the list; Esc clears the filter).

Every cell is a fact of :func:`clawprobe.tui.state.overview` (``clawprobe.core.view``): nothing is judged
here. The line above the table says the worst verdict and how many agents share it, naming the agent when
it is the only one (the terminal title says the same, see ``ClawprobeApp.set_report``).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from clawprobe.core.view import Fact, OverviewRow
from clawprobe.styles import style_file
from clawprobe.tui.screens.agents_cols import LABELS, lease_words, widths
from clawprobe.tui.state import DashboardReport, overview, worst_line
from clawprobe.tui.too_small import COMMAND, too_small
from clawprobe.tui.widgets.fit import clip, clip_middle
from clawprobe.tui.widgets.fmt import COLOR, GLYPH, e
from clawprobe.tui.widgets.verdict_banner import CHECKING

HINT = "[$foreground-muted]Enter opens the agent's panes · o comes back here · j/k move · / filters[/]"


def matches(row: OverviewRow, text: str) -> bool:
    """Whether ``row`` passes the ``/`` filter: its agent id, verdict word or reason contains ``text``
    (case-insensitive; an empty filter passes every row)."""
    needle = text.strip().casefold()
    return not needle or any(needle in part.casefold() for part in (row.agent_id, row.word, row.tag))


def fact(f: Fact, width: int, words: str | None = None) -> str:
    """One fact cell as markup: coloured by its own state, glyph first, its words (default ``f.words``) cut to
    ``width`` (gap included)."""
    return f"[{COLOR[f.state]}]{GLYPH[f.state]} {e(clip(f.words if words is None else words, width - 3))}[/]"


def lease_cell(f: Fact, width: int) -> str:
    """The lease cell (a row's and each tick's): :func:`fact` with ``left`` dropped when the column gave way."""
    return fact(f, width, lease_words(f, width))


def cells(row: OverviewRow, w: dict[str, int]) -> list[str]:
    """The row's cells as markup, in :data:`LABELS` order (every cell cut to its column's width ``w``)."""
    return [f"[{COLOR[row.level]}][b]{e(row.word)}[/b][/]", e(clip_middle(row.agent_id, w["agent"] - 1)),
            e(clip(row.tag, w["tag"] - 1)), lease_cell(row.lease, w["lease"]), fact(row.pending, w["pending"]),
            fact(row.canary, w["canary"])]


class AgentsScreen(Screen[None]):
    """The overview of every agent (see the module docstring)."""

    CSS_PATH = [style_file("agents.tcss")]
    BINDINGS = [
        Binding("enter", "open", "Open agent"),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
        Binding("g", "edge(0)", "Top", show=False),
        Binding("G", "edge(1)", "Bottom", show=False),
        # priority (checked by the App before it routes the next key): the focus moves to the filter line, or
        # back to the list, before the keys that came in the same read are routed (a paste, a laggy SSH link)
        Binding("slash", "filter", "Filter", key_display="/", show=False, priority=True),  # the hint line says it
        Binding("escape", "clear_filter", "Clear filter", show=False, priority=True),
        Binding("enter", "filter_done", "Back to the list", show=False, priority=True),
        Binding("enter", "open_now", "Open agent", show=False, priority=True),  # the row under the cursor now
    ]

    def __init__(self, *, follow_worst: bool = False) -> None:
        super().__init__()
        self._follow_worst = follow_worst  # the cursor stays on the worst row until the operator moves it
        self._ids: list[str] = []
        self._w: dict[str, int] = {}
        self._built: tuple[object, ...] = ()  # what the table was last built from (rows, widths, checking)
        self._lease: dict[str, str] = {}  # agent id -> the lease cell shown (the 1 s tick updates only these)
        self._filter = ""

    def compose(self) -> ComposeResult:
        yield Static(id="overview-banner")
        table: DataTable = DataTable(id="agents-table", cursor_type="row", zebra_stripes=False, cell_padding=0)
        yield table
        yield Input(placeholder="filter: agent, verdict or reason (Esc clears)", id="agents-filter")
        yield Static(HINT, id="overview-hint")
        yield Static(id="too-small")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#agents-filter", Input).display = False
        self._fit(self.app.size.width, self.app.size.height)
        self.watch(self.app, "report", self.show, init=True)

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width, event.size.height)
        self.show(self.app.report)  # type: ignore[attr-defined]

    def _fit(self, width: int, height: int) -> None:
        """Below ``clawprobe.tui.too_small.MIN_SIZE`` the table gives way to the same notice as the panes."""
        note = too_small(width, height, getattr(self.app, "plain_command", COMMAND))
        self.query_one("#too-small", Static).update(note or "")
        self.set_class(note is not None, "-small")

    def show(self, report: DashboardReport | None) -> None:
        """Re-render from the App's report (the cursor follows its selected agent); closes itself when one
        agent or none is left. The table is rebuilt only when what it shows changed."""
        parts = self._parts()
        if report is None or parts is None:
            return
        banner, hint_line, table = parts
        if len(report.agents) < 2:
            if self.app.screen is self:
                self.dismiss(None)
            return
        now = self.app.clock()  # type: ignore[attr-defined]
        lv, words = worst_line(report, now)
        checking = {a.agent_id for a in report.agents if a.checking}  # no verdict yet: it may flip
        if checking:
            lv, words = "unknown", f"{CHECKING} — {len(checking)} of {len(report.agents)} agents still proving"
        banner.update(f"[b]{e(words)}[/b]  [dim]worst first · {len(report.agents)} agents[/]")
        for name in ("ok", "warn", "unknown", "fail"):
            banner.set_class(name == lv, f"-{name}")
        every = overview(report, now)
        rows = [r for r in every if matches(r, self._filter)]
        hint = HINT if not self._filter else (
            f"[$foreground-muted]filter [b]{e(self._filter)}[/b]: {len(rows)} of {len(every)} agents · Esc clears[/]")
        hint_line.update(hint)
        w = widths(every, self.size.width - 5)  # the table's padding, a scrollbar's room and the last gap
        built = (tuple(rows), tuple(w.items()), frozenset(checking))
        with self.prevent(DataTable.RowHighlighted):  # only the operator's moves select an agent
            if built != self._built:
                self._built = built
                self._build(table, rows, w, checking)
            self._follow(table, report.current.agent_id if report.current else None)

    def _build(self, table: DataTable, rows: list[OverviewRow], w: dict[str, int], checking: set[str]) -> None:
        if w != self._w:
            self._w = w
            table.clear(columns=True)
            for key, label in LABELS.items():
                table.add_column(Text(label), key=key, width=w[key])  # Text: no markup parse
        table.clear()
        self._ids = [r.agent_id for r in rows]
        self._lease = {}
        for r in rows:
            row = cells(r, w)
            if r.agent_id in checking:  # no verdict and no reason yet: both may change when the lanes end
                row[0] = f"[$foreground-muted][b]{e(CHECKING.lower())}[/b][/]"
                row[2] = "[$foreground-muted]…[/]"
            self._lease[r.agent_id] = row[3]
            table.add_row(*(Content.from_markup(c) for c in row), key=r.agent_id)

    def _follow(self, table: DataTable, current: str | None) -> None:
        """The cursor on the selected agent; when the filter hides it, the row under the cursor is selected
        instead (so Enter, c, s and r always act on the highlighted row). Until the operator moves the cursor of
        an overview that follows the worst, row 0 (worst first, as core orders it) is the selected agent."""
        if self._follow_worst and self._ids and current != self._ids[0]:
            if table.cursor_row != 0:
                table.move_cursor(row=0)
            self.app.open_agent(self._ids[0])  # type: ignore[attr-defined]
        elif current in self._ids:
            row = self._ids.index(current)
            if table.cursor_row != row:
                table.move_cursor(row=row)
        elif self._ids:
            self.app.open_agent(self._ids[max(0, min(table.cursor_row, len(self._ids) - 1))])  # type: ignore[attr-defined]

    def tick(self) -> None:
        """The App's 1 s tick: each lease cell shown follows the clock (only cells whose text changed are
        updated; the table is not rebuilt)."""
        report = self.app.report  # type: ignore[attr-defined]
        parts = self._parts()
        if report is None or not self._lease or parts is None:
            return
        table = parts[2]
        for r in overview(report, self.app.clock()):  # type: ignore[attr-defined]
            cell = lease_cell(r.lease, self._w["lease"])
            if self._lease.get(r.agent_id, cell) != cell:
                self._lease[r.agent_id] = cell
                table.update_cell(r.agent_id, "lease", Content.from_markup(cell))

    def _parts(self) -> tuple[Static, Static, DataTable] | None:
        """(banner, hint line, agents table); ``None`` before this screen is composed or while it is torn down
        (a report or the 1 s tick can arrive then — measured under load: the table was already gone)."""
        if not self.is_mounted:
            return None
        found = [next(self.query(f"#{i}").results(t), None)
                 for i, t in (("overview-banner", Static), ("overview-hint", Static), ("agents-table", DataTable))]
        banner, hint, table = found
        if not isinstance(banner, Static) or not isinstance(hint, Static) or not isinstance(table, DataTable):
            return None
        return banner, hint, table

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` is a key of the list (typed into the filter line it is text); Enter is the filter line's only
        while it has the focus; Esc only while there is a filter to clear. "Has the focus" is the screen's
        ``focused`` (set at once by :meth:`action_filter`), not ``box.has_focus``, which follows a Focus event
        that the keys of the same read overtake."""
        box = self.query_one("#agents-filter", Input)
        typing = self.focused is box
        if action == "filter":
            return not typing
        if action == "filter_done":
            return typing
        if action == "open_now":  # Enter on the list opens the row it is on, before j/k of the same read move it
            return not typing and self.app.screen is self
        if action == "clear_filter":
            return bool(box.display or self._filter)
        return True

    def action_filter(self) -> None:
        """``/``: show the filter line and type into it (the rows narrow as you type). The focus moves at
        once, so every key after ``/`` — also those that came in the same read — goes into the filter."""
        box = self.query_one("#agents-filter", Input)
        box.display = True
        self.set_focus(box)

    def action_clear_filter(self) -> None:
        """Esc: clear and hide the filter; every agent is listed again."""
        box = self.query_one("#agents-filter", Input)
        box.value = ""
        box.display = False
        self._filter = ""
        self.set_focus(self.query_one(DataTable))  # at once: the next keys move the cursor
        self.show(self.app.report)  # type: ignore[attr-defined]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._filter = event.value
        self.show(self.app.report)  # type: ignore[attr-defined]

    def action_filter_done(self) -> None:
        """Enter in the filter line: back to the (filtered) list, at once (the next keys move the cursor)."""
        self.set_focus(self.query_one(DataTable))

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

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The operator moved the cursor: that agent is the selected one (its panes, ``c``, ``s``, ``r``), and
        the cursor follows it from now on (no longer the worst row)."""
        event.stop()
        self._follow_worst = False
        agent = self.highlighted
        if agent is not None:
            self.app.open_agent(agent)  # type: ignore[attr-defined]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open_now(self) -> None:
        """Enter as a priority key: :meth:`action_open` before the App routes the next key of the same read."""
        self.action_open()

    def action_open(self) -> None:
        """Enter: show the highlighted agent's panes."""
        agent = self.highlighted
        if agent is not None:
            self.app.open_agent(agent)  # type: ignore[attr-defined]
        self.dismiss(None)
