"""Pane 3 — freshness countdown: the lease, its three parts with their sources, the age of the last proof
of currency, and the time left before the index counts as stale.

The time left is computed each second by pure core functions (``clawprobe.core.lease.seconds_left`` /
``age_seconds``) from the App's injectable clock; the App's one-second timer calls :meth:`CountdownPane.tick`,
which updates only the single live line of this pane (nothing else repaints), and only when its text changes. At 0 the
line turns into a stale warning by itself — no re-probe needed to stop showing a stale index as fresh.
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from clawprobe.core.durations import human_ages
from clawprobe.core.lease import proven_words
from clawprobe.core.receipt import Receipt
from clawprobe.core.view import agent_facts, detail_kinds, live_fact, oldest_named
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fmt import dur, e, hms, mark
from clawprobe.tui.widgets.pane import Pane, set_text

TICK_S = 1.0


def live_line(r: Receipt, now: datetime, *, narrow: bool = False) -> tuple[str, bool]:
    """The ticking line and whether the index is stale at ``now`` (pure): markup of
    :func:`clawprobe.core.view.live_fact` (the one decision; ``check`` and pane 2 read the same facts);
    ``narrow``: its forms for a pane too narrow for the whole line, one per line, narrowest last (the age in
    one unit, then no age: the body's first line says when it was proven current)."""
    f = live_fact(r, now)
    head = mark(f.state, f.head)
    if not narrow:
        return head + (f" · {e(f.tail)}" if f.tail else ""), f.stale
    return (f"{head} · {e(f.short_tail)}\n" if f.short_tail else "") + head, f.stale


class LiveLine(Widget):
    """One line, repainted in place: changing ``text`` never triggers a layout pass (height is fixed at 1),
    so the per-second tick costs one line of rendering and ~130 bytes to the terminal. ``text`` holds the
    whole line, then narrower forms of it, one per line: the first that fits is shown (80 columns:
    ``✓ fresh · 4 min 57 s left`` rather than ``… age 2 m…``); only a form that never fits is cut."""

    DEFAULT_CSS = "LiveLine { height: 1; width: 1fr; text-style: bold; }"
    text: reactive[str] = reactive("", layout=False)

    def render(self) -> Content:
        width = self.size.width
        forms = [Content.from_markup(t) for t in self.text.split("\n")]
        line = next((c for c in forms if not width or c.cell_length <= width), forms[-1])
        return line.truncate(width, ellipsis=True) if width and line.cell_length > width else line


class CountdownPane(Pane):
    """Lease, its parts, last proven current, and the live time-left line."""

    NUMBER = 3
    TITLE = "Freshness"
    HELP = ("The freshness lease = update interval + normal update duration + margin, each with its source. "
            "'Last proven current' is derived from evidence (the index reflects every file on disk, an "
            "update-completed log line, or the canary's ingest time), never from QMD's own 'Updated' text. "
            "The countdown ticks each second; at 0 the index is shown STALE until a new proof arrives.")

    def compose(self) -> ComposeResult:
        yield LiveLine(id="countdown-live")
        yield Static(id="countdown-body", classes="pane-body")

    def refresh_body(self) -> None:
        if not self.is_mounted:
            return
        view = self.report.current if self.report else None
        body = self.query_one("#countdown-body", Static)
        set_text(body, self.body(view, self.report, self.now()) if view and self.report else self.empty_body())
        for live in self.query(LiveLine):  # no agent (no OpenClaw here): no blank ticking line above the words
            live.display = view is not None
        self._last_live = ""
        self.tick()

    def tick(self) -> None:
        """Recompute the live line at the clock's ``now``; touch the screen only when its text changes."""
        view = self.report.current if self.report else None
        if view is None:
            return
        live = self.query(LiveLine)
        if not live:  # the app's timer can tick before this pane's children are mounted: the next tick paints
            return
        now = self.now()
        whole, stale = live_line(view.receipt, now)
        text = f"{whole}\n{live_line(view.receipt, now, narrow=True)[0]}"
        if text != getattr(self, "_last_live", None):
            self._last_live = text
            live.first().text = text
            self.set_class(stale, "-stale")

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        r = view.receipt
        ls = r.lease
        f = r.freshness
        lines = []
        listed = [*f.unindexed_files[:3], *f.ghost_files[:3]]
        kind_of, rest = detail_kinds(f.detail, set(listed))
        if f.last_proven_current is not None:
            method = oldest_named(f.method, set(listed)) if f.method else None
            # never indexed: the time is the notes' (they start the lease), nothing proved the index current
            said = proven_words(f.stale_reason, last=False)
            lines.append(f"{said} {hms(f.last_proven_current, now)}" + (f": {e(human_ages(method))}" if method else ""))
        for label, files, count in (("not indexed", f.unindexed_files, f.unindexed_count),
                                    ("deleted, still indexed", f.ghost_files, f.ghost_count)):
            for name in files[:3]:
                lines.append(mark("fail", kind_of.get(name, label)) + f" {e(name)}")
            if count is not None and count > 3:
                lines.append(f"  … {count - 3} more {label}")
        if rest:
            lines.append(e(human_ages(rest)))
        cov = agent_facts(r, view.diagnosis).coverage
        if cov.state != "unknown":
            lines.append(mark(cov.state, "coverage") + f" {e(cov.words)}")
        if r.config.error is not None:  # the lease's parts come from the config: a default would be a guess
            lines.append(mark("unknown", "lease not known") + ": the config does not load")
            return "\n".join(lines)
        lines += [
            f"lease {dur(ls.seconds)} = {ls.interval_s:.0f} + {ls.update_duration_s:.0f} + {ls.margin_s:.0f} s:",
            f"[$foreground-muted] {ls.interval_s:.0f} s interval: {e(ls.interval_source)}[/]",
            f"[$foreground-muted] {ls.update_duration_s:.0f} s update: {e(ls.duration_source)}[/]",
            f"[$foreground-muted] {ls.margin_s:.0f} s margin: {e(ls.margin_source)}[/]",
        ]
        return "\n".join(lines)
