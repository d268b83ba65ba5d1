"""The base of the six dashboard panes (a focusable, scrollable box bound to the App's one report) and of
the header and banner (:class:`ReportLines`: fixed one-line Statics bound to the same report).

A pane gets the report through ``data_bind`` (``report`` reactive) and renders markup from it with a
pure method, :meth:`Pane.body`; it repaints only when the report object changes. ``1``–``6`` focus the
panes; a focused pane scrolls with the arrow keys, so nothing is cut at 80×24.
"""

from __future__ import annotations

from datetime import datetime

from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from clawprobe.tui.state import AgentView, DashboardReport


def set_text(static: Static, text: str) -> None:
    """Update ``static`` only when its markup changes (an unchanged update would still repaint it, and
    over SSH every repaint is bytes on the wire), and skip the layout pass when the new text wraps to the
    same height — then only that widget's lines are redrawn, not the whole screen."""
    if getattr(static, "_clawprobe_text", None) == text:
        return
    static._clawprobe_text = text  # type: ignore[attr-defined]
    width, height = static.content_size
    layout = True
    if static.is_mounted and width > 0 and static.styles.height is not None and static.styles.height.is_auto:
        layout = Content.from_markup(text).get_height(static.styles, width) != height
    elif static.is_mounted and width > 0:
        layout = False  # a fixed height (the header and banner lines) never changes with the text
    static.update(text, layout=layout)


class Pane(VerticalScroll, can_focus=True):
    """A numbered pane. Subclasses set ``NUMBER``/``TITLE``/``HELP`` and implement :meth:`body`."""

    NUMBER = 0
    TITLE = ""
    HELP = ""
    #: vim-style scrolling in a focused pane (k9s, lazygit): j/k a line, g/G top/bottom
    BINDINGS = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]

    report: reactive[DashboardReport | None] = reactive(None, always_update=True, repaint=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="pane")
        self.border_title = f"{self.NUMBER} {self.TITLE}"

    def compose(self) -> ComposeResult:
        yield Static(id=f"{self.id}-body", classes="pane-body", markup=True)

    def action_scroll_down(self) -> None:
        """``j`` / ↓: one line down, decided at once — Textual defers it to the next frame, and each of the
        keys of one read (``jjjj`` pasted, or batched by a laggy SSH link) would add 1 to the same old target."""
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self.scroll_down(immediate=True)

    def action_scroll_up(self) -> None:
        """``k`` / ↑: one line up, decided at once (as :meth:`action_scroll_down`)."""
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self.scroll_up(immediate=True)

    def fold_width(self) -> int | None:
        """Cells a body line may take: the pane's content width less the scrollbar column (reserved, so a
        scrollbar that appears later does not re-wrap what was fitted); ``None`` before layout."""
        w = self.content_region.width - 1 if self.is_mounted else 0
        return w if w > 0 else None

    def now(self) -> datetime:
        """The App's injectable clock (``ClawprobeApp.clock``)."""
        return self.app.clock()  # type: ignore[attr-defined]

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        """Markup for this pane (pure: from the report and ``now`` only)."""
        raise NotImplementedError

    def empty_body(self) -> str:
        """Shown while the report holds no agent: ``probing…`` before the first probe result arrives, or — no
        OpenClaw install here (``DashboardReport.missing``) — :meth:`missing_body`, never a wait."""
        if self.report is not None and self.report.missing is not None:
            return self.missing_body(self.report.missing)
        return "[$foreground-muted]probing…[/]"

    def missing_body(self, why: str) -> str:
        """What this pane says when there is no OpenClaw to probe (``why``: discovery's reason)."""
        return "[$foreground-muted]– nothing to probe: no OpenClaw here[/]"

    def watch_report(self, report: DashboardReport | None) -> None:
        self.refresh_body()

    def reset_position(self) -> None:
        """Scroll back to the top (another agent or scenario is about to be shown)."""
        self.scroll_home(animate=False, immediate=True)

    def refresh_body(self) -> None:
        """Re-render from the current report (used on report change, and by panes with extra state)."""
        statics = self.query(".pane-body").results(Static) if self.is_mounted else iter(())
        static = next(statics, None)
        if static is None:  # not composed yet (a clock tick may come first): on_mount renders it
            return
        view = self.report.current if self.report else None
        set_text(static, self.body(view, self.report, self.now()) if view and self.report else self.empty_body())

    def on_mount(self) -> None:
        self.refresh_body()


class ReportLines(Vertical):
    """One-line Statics (ids in ``LINE_IDS``) rendered from the report by the pure :meth:`lines`; CSS
    classes on the container from :meth:`classes_for`. An empty line gets the class ``-empty``."""

    LINE_IDS: tuple[str, ...] = ()

    report: reactive[DashboardReport | None] = reactive(None, always_update=True, repaint=False)

    def compose(self) -> ComposeResult:
        for line_id in self.LINE_IDS:
            yield Static(id=line_id)

    def lines(self, report: DashboardReport | None) -> tuple[str, ...]:
        """Markup per line, in ``LINE_IDS`` order (``report`` is ``None`` before the first probe)."""
        raise NotImplementedError

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        """CSS classes to switch on (True) or off (False) on the container."""
        return {}

    def watch_report(self, report: DashboardReport | None) -> None:
        if not self.is_mounted:
            return
        statics = {w.id: w for w in self.query_children(Static)}
        if len(statics) < len(self.LINE_IDS):  # being torn down (quit): the 1 s tick may still arrive
            return
        for line_id, text in zip(self.LINE_IDS, self.lines(report), strict=True):
            static = statics[line_id]
            set_text(static, text)
            static.set_class(not text, "-empty")
        for name, on in self.classes_for(report).items():
            self.set_class(on, name)

    def on_mount(self) -> None:
        self.watch_report(self.report)
