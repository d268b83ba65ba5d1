"""The clawprobe dashboard App: one report in one reactive, a header, a verdict banner and six panes.

Data flow (thread → UI only through ``post_message``):

* **first look** — started before Textual is imported (``clawprobe.tui.first_look``): a forked child
  locates the install and takes each agent's first fast receipt on the other core; when it is in at mount
  the first frame is painted from it, and the lanes below start once that frame is on screen.
* **fast lane** — ``clawprobe.core.probe.fast`` (config, gateway env, qmd binary, indexes read-only, workspace vs
  index, model cache, log tail; ≤ 80 ms) in a thread worker per agent (group ``fast:<agent>``). At most one
  runs per agent; a request while it runs is remembered and served right after (never overlapping, at most
  a few per second however many file events arrive).
* **slow lane** — ``clawprobe.core.probe.slow`` (the 3–6 s ``openclaw`` CLI probes and the canary retrieval) in its
  own thread workers (group ``slow:<agent>``), one at a time across agents (each costs 3–6 s of CPU on a
  2-core host). It never blocks the UI or the fast lane; its ``SlowEvidence`` is merged by the next fast
  probe. It runs at start, on ``r``, after a config change and after a canary plant — never on a timer.
* **file watcher** — ``clawprobe.tui.watch`` over ``clawprobe.core.probe.watch_targets`` in an app-level async worker
  (group ``watch``); a change re-probes only the agent (and lane) it affects.
* **clock** — injectable (``clock=``); one 1 s interval makes the countdown pane recompute its live line
  (it repaints only itself, only when the text changes) and, at the moment a receipt's lease ends,
  re-evaluates the report so the header and banner flip to EXPIRED — no re-probe needed.

Sources: ``live`` (the local install), ``demo`` (embedded scenarios, ``clawprobe.tui.demo``), ``replay`` (a saved
receipt file). Demo and replay need no OpenClaw.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from threading import Lock
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.events import Resize
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Footer, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from clawprobe.core.diagnosis import claim_action, claim_diagnosis
from clawprobe.core.gc_pause import end_startup
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import printable
from clawprobe.core.verdicts import EXIT_CANNOT_RUN
from clawprobe.styles import style_file
from clawprobe.styles.theme import use_theme
from clawprobe.tui.messages import (
    ActionDone,
    FastProbed,
    FilesChanged,
    ProbeFailed,
    QmdChecked,
    SlowProbed,
    SourceReady,
    WatchFailed,
)
from clawprobe.tui.state import (
    LOCATING,
    READING,
    DashboardReport,
    build_report,
    make_view,
    next_expiry,
    overview,
    reevaluate,
    replace_agent,
    select,
    select_next,
    worst_line,
)
from clawprobe.tui.too_small import COMMAND, too_small
from clawprobe.tui.widgets.action_pane import ActionPane
from clawprobe.tui.widgets.backend_pane import BackendPane
from clawprobe.tui.widgets.canary_pane import CanaryPane
from clawprobe.tui.widgets.countdown_pane import TICK_S, CountdownPane
from clawprobe.tui.widgets.header import ReceiptHeader
from clawprobe.tui.widgets.modes_pane import ModesPane
from clawprobe.tui.widgets.pane import Pane
from clawprobe.tui.widgets.pending_pane import PendingPane
from clawprobe.tui.widgets.verdict_banner import VerdictBanner

if TYPE_CHECKING:
    from textual.screen import Screen

    from clawprobe.tui.screens.agents import AgentsScreen
    from clawprobe.tui.sources import LiveSource

Clock = Callable[[], datetime]
MIN_FAST_GAP_S = 0.25  #: at most ~4 fast probes per second per agent, however many file events arrive
STALL_S = 5.0  #: a clock tick this late (process stopped or starved) forgets the live workspace caches
EXIT_TERMINATED = 128 + signal.SIGTERM  #: the exit code after a SIGTERM (the terminal restored first)
FAST_REFRESH_S = 60.0  #: live: re-run the cheap fast probe this long after the last one (gateway, log tail)
LOG_DELAY_S = 2.0  #: a change of the gateway log alone re-probes at most this often
PROBE_LOG_MAX = 1000  #: finished probes kept in ``ClawprobeApp.probe_log`` (4/s for hours would grow without end)
FOOTER_WIDE = 120  #: from this width the footer also shows the pane keys (below it: the essential keys only)
PANE_KEYS = Binding.Group("Panes")
PANES: tuple[type[Pane], ...] = (BackendPane, ModesPane, CountdownPane, PendingPane, CanaryPane, ActionPane)


def _palette_provider():
    """The palette provider, imported on first use (keeps ``textual.command`` off the start-up path)."""
    from clawprobe.tui.commands import DashboardCommands

    return DashboardCommands


def utc_now() -> datetime:
    """The real clock (UTC, timezone-aware)."""
    return datetime.now(UTC)


#: the lanes that prove a first fast receipt; until they end its verdict cell says checking
PROVING_LANES = ("qmd binary", "openclaw CLI")


class ClawprobeApp(App[int]):
    """The dashboard. Give exactly one of ``live`` (a :class:`clawprobe.tui.sources.LiveSource`), ``demo_index``
    (a ``clawprobe.tui.demo`` scenario index) or ``report`` (a replayed :class:`clawprobe.tui.state.DashboardReport`).

    ``clock`` is the injectable time source (frozen in snapshot tests); ``watch`` switches the file
    watcher (tests of keys switch it off); ``fast_refresh_s`` the live re-probe cadence of the fast lane.
    The return value (``App.return_value``) is the worst exit code of the report on quit.
    """

    CSS_PATH = [style_file("app.tcss")]
    TITLE = "clawprobe"
    COMMANDS = App.COMMANDS | {_palette_provider}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (150, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]

    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help", show=False),
        Binding("r", "reprobe", "Re-probe"),
        Binding("c", "canary", "Canary"),
        Binding("c", "live_only('canary')", "Canary", show=False),  # demo/replay: says why c does nothing
        Binding("a", "next_agent", "Agent"),
        Binding("o", "agents", "Agents"),
        Binding("A", "prev_agent", "Prev agent", show=False),
        Binding("n", "scenario(1)", "Next demo"),
        Binding("right_square_bracket", "scenario(1)", "Next demo", show=False),
        Binding("p", "scenario(-1)", "Prev demo", show=False),
        Binding("left_square_bracket", "scenario(-1)", "Prev demo", show=False),
        Binding("s", "save", "Save receipt", show=False),
        Binding("s", "live_only('save')", "Save receipt", show=False),
        # priority (run before the App routes the next key): the keys after a pane key in the same read (a
        # paste, a laggy SSH link) go to that pane
        *(Binding(str(i), f"focus_pane({i})", f"Pane {i}", show=False, priority=True) for i in range(1, 7)),
        # the same keys, shown in the footer when it has room (check_action keeps one of each pair active)
        *(Binding(str(i), f"pane({i})", f"Pane {i}", group=PANE_KEYS, priority=True) for i in range(1, 7)),
        # the same for the keys that open a screen: it is on top before the next key of the read is routed
        # (``o`` then ``j`` moves the overview's cursor, ``?`` then ``q`` closes the help, never quits)
        # (shown in the footer in place of the plain binding while active: the same key, words and place)
        Binding("question_mark", "now('help')", "Help", key_display="?", priority=True),
        Binding("o", "now('agents')", "Agents", priority=True),
        Binding("c", "now('canary')", "Canary", priority=True),
        Binding("ctrl+p,colon", "command_palette", "Commands", show=False, priority=True),
        Binding("q", "quit", "Quit"),
    ]

    report: reactive[DashboardReport | None] = reactive(None, always_update=True, repaint=False)

    def __init__(self, *, live: LiveSource | None = None, demo_index: int | None = None,
                 report: DashboardReport | None = None, clock: Clock | None = None, watch: bool = True,
                 fast_refresh_s: float | None = FAST_REFRESH_S, select_agent: str | None = None) -> None:
        super().__init__()
        use_theme(self)  # colours that stay distinct on a 16-colour terminal (clawprobe.styles.theme)
        self.clock: Clock = clock or utc_now
        self.live = live
        self.demo_index = demo_index
        #: the too-small notice's way out: the plain-text form of what this dashboard shows (the live one's own
        #: flags; the demo has none; a replay's is set by its caller, who knows the file)
        self.plain_command: str | None = (live.check_command() if live is not None
                                          else None if demo_index is not None else COMMAND)
        self._initial = report
        self._watch_enabled = watch and live is not None
        self._watch_failed = False  # the watcher died; r retries it
        self._last_tick = time.monotonic()
        self._fast_refresh_s = fast_refresh_s
        self._sigterm = False  # a SIGTERM handler is installed (live only): removed on unmount
        self._mounted_once = False  # on_mount ran (an exit before it would leave the App half-built)
        self._interrupted: int | None = None  # a SIGINT came before on_mount: the exit code it asked for
        self._select_agent = select_agent
        self.refused: str | None = None  #: why the live ``--agent`` was refused (the App left at once, exit 3)
        self._order: list[str] = []
        self._slow: dict[str, object] = {}
        self._fast_busy: set[str] = set()
        self._fast_again: dict[str, str] = {}
        self._fast_last: dict[str, float] = {}
        self._slow_pending: set[str] = set()
        self._slow_lock = Lock()
        self._qmd_lock = Lock()
        self._lanes: dict[str, dict[str, datetime]] = {}  # agent -> proving lane still running -> started at
        self._banner: VerdictBanner | None = None
        self._refresh_timers: dict[str, Timer] = {}
        self._next_flip: datetime | None = None
        self._countdown: CountdownPane | None = None
        self._action: ActionPane | None = None
        self._header: ReceiptHeader | None = None
        self._slow_after_fast: list[str] = []
        self._log_armed: set[str] = set()
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._overview_opened = False  # the agents overview opened once for this scenario / session
        self._overview: AgentsScreen | None = None  # the overview last pushed (the 1 s tick reaches its lease cells)
        self._shown_key: tuple[str | None, str | None] | None = None  # (scenario, agent) on screen
        self.terminal_title = ""
        #: (lane, agent, seconds) of the last PROBE_LOG_MAX finished probes (bounded: a session runs for hours)
        self.probe_log: deque[tuple[str, str, float]] = deque(maxlen=PROBE_LOG_MAX)

    # ------------------------------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield ReceiptHeader(id="header").data_bind(ClawprobeApp.report)
        yield VerdictBanner(id="banner").data_bind(ClawprobeApp.report)
        with Grid(id="panes"):  # two columns (odd panes left, even right): each sizes its panes by content
            for column in (1, 2):
                with Vertical(id=f"panes-{column}", classes="pane-column"):
                    for i, cls in enumerate(PANES, start=1):
                        if i % 2 == column % 2:
                            yield cls(id=f"pane-{i}").data_bind(ClawprobeApp.report)
        yield Static(id="too-small")
        yield Footer(id="footer", show_command_palette=False)

    def on_resize(self, event: Resize) -> None:
        """Below ``clawprobe.tui.too_small.MIN_SIZE`` the panes give way to a plain notice (the banner keeps the verdict)."""
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        text = too_small(width, height, self.plain_command)
        with contextlib.suppress(Exception):  # not composed yet / being torn down
            note = self.query_one("#too-small", Static)
            note.update(text or "")
            note.display = text is not None
            self.query_one("#panes").display = text is None
        self.refresh_bindings()  # the footer's hints follow the width (FOOTER_WIDE)

    def on_mount(self) -> None:
        self.query_one("#pane-6").focus()  # Enter opens the walkthrough straight away
        self._fit(self.size.width, self.size.height)
        self._countdown = self.query_one(CountdownPane)  # the 1 s tick reaches them without a query
        self._action = self.query_one(ActionPane)
        self._header = self.query_one(ReceiptHeader)
        self._banner = self.query_one(VerdictBanner)
        self.set_interval(TICK_S, self._tick, name="clock")
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGTERM, self.exit, EXIT_TERMINATED)
            loop.add_signal_handler(signal.SIGHUP, self._hung_up)
            self._sigterm = True
        self._mounted_once = True
        if self._interrupted is not None:  # Ctrl-C while the App was starting: leave before anything starts
            self.exit(self._interrupted)
            return
        if self.live is not None:
            self._start_live()
        elif self.demo_index is not None:
            self._load_scenario(self.demo_index)
        elif self._initial is not None:
            self.set_report(reevaluate(self._initial, self.clock()))
        self.call_after_refresh(end_startup)  # the first frame is on screen: the collector runs again

    # ------------------------------------------------------------------------------------------ report
    def set_report(self, report: DashboardReport) -> None:
        """Replace the one report (every pane repaints from it) and note when a receipt expires next. With
        more than one agent the agents overview opens first (once per scenario or live session), and the
        terminal title says the worst verdict and how many agents share it. Then the worst agent is selected —
        unless ``select_agent`` (``--agent``) names one of the report's agents: its panes open directly."""
        first = len(report.agents) > 1 and not self._overview_opened
        pinned = any(a.agent_id == self._select_agent for a in report.agents)
        if first:
            self._overview_opened = True
            report = select(report, self._select_agent if pinned else overview(report, self.clock())[0].agent_id)
        key = (report.scenario, report.current.agent_id if report.current else None)
        moved = key != self._shown_key
        self._shown_key = key
        if moved and self.is_running:  # another agent or scenario: no scroll or cursor carries over
            for pane in self.query(Pane):
                pane.reset_position()
        if (report.missing is None) != (self.report is None or self.report.missing is None):
            self.refresh_bindings()  # found or lost the install: the agent actions' keys come or go
        self.report = report
        self._next_flip = next_expiry(report, self.clock())
        if len(report.agents) > 1 and first and not pinned:
            self._push_overview(follow_worst=True)  # the worst row stays selected until the operator moves
        if any(a.checking for a in report.agents):  # no verdict in the title either while lanes prove it
            self.set_terminal_title("clawprobe — checking…")  # one title per report: never verdict, then checking
        elif report.agents:
            worst = worst_line(report, self.clock())[1]
            self.set_terminal_title("clawprobe — " + (worst if len(report.agents) > 1 else worst.split(" — ")[0]))

    def set_terminal_title(self, text: str) -> None:
        """Set the terminal's title (OSC 2; control characters escaped); kept in ``terminal_title``."""
        text = printable(text)
        if text == self.terminal_title:
            return
        self.terminal_title = text
        driver = getattr(self, "_driver", None)
        if driver is not None and not self.is_headless:
            driver.write(f"\x1b]2;{text.replace(chr(7), '')}\x07")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The toolkit's palette commands less ``Screenshot``: it saves an SVG on the host clawprobe runs on —
        over SSH, not the operator's — and failed outright without a Downloads dir there."""
        return (c for c in super().get_system_commands(screen) if c.title != "Screenshot")

    def action_agents(self) -> None:
        """``o``: the agents overview (worst first); Enter there opens an agent's panes."""
        self._push_overview(follow_worst=False)  # the cursor on the agent shown

    def _push_overview(self, *, follow_worst: bool) -> None:
        from clawprobe.tui.screens.agents import AgentsScreen

        if not isinstance(self.screen, AgentsScreen) and self.report and len(self.report.agents) > 1:
            self._overview = AgentsScreen(follow_worst=follow_worst)
            self.push_screen(self._overview)

    def open_agent(self, agent_id: str) -> None:
        """Select ``agent_id``: its panes show it and every agent-scoped key (``c``, ``s``, ``r``, ``y``) acts
        on it (the overview's highlighted row); each pane starts scrolled to its top. Nothing happens when it
        is selected already."""
        if self.report is not None and (new := select(self.report, agent_id)) is not self.report:
            self.set_report(new)

    def _tick(self) -> None:
        """Once a second: the countdown pane recomputes its one live line; the report is re-evaluated
        only at the moment a receipt's lease ends (then header and banner flip to EXPIRED). A tick that
        comes :data:`STALL_S` late means the process was stopped or starved: inotify may have dropped
        events meanwhile (watchfiles does not say), so the live workspace caches are forgotten."""
        mono = time.monotonic()
        if self.live is not None and mono - self._last_tick > STALL_S:
            self.live.rescan()
        self._last_tick = mono
        if self._countdown is None or self._header is None or not self.screen_stack:  # not built, or torn down
            return
        self._countdown.tick()
        if self._overview is not None and self.screen is self._overview:
            self._overview.tick()  # its lease cells count down with the panes' countdown
        self._header.tick()  # "the lease ended 17 min ago" keeps its age (a line repaints only on change)
        if self._banner is not None and self._lanes_running():
            self._banner.tick()  # "checking… qmd binary 2 s" counts up
            if self._action is not None:
                self._action.tick()  # so does pane 6's (never "press r" while the lane runs)
        if self.report is not None and self._next_flip is not None and self.clock() >= self._next_flip:
            self.set_report(reevaluate(self.report, self.clock()))

    @property
    def panes(self) -> list[Pane]:
        """The six panes, in number order."""
        return [self.query_one(f"#pane-{i}", Pane) for i in range(1, 7)]

    # ------------------------------------------------------------------------------------------ demo
    def _load_scenario(self, index: int) -> None:
        from clawprobe.tui import demo as demo_pkg

        total = demo_pkg.count()
        self.demo_index = index % total
        self._overview_opened = False
        s = demo_pkg.scenario(self.demo_index)
        now = self.clock()
        receipts, history = demo_pkg.at_now(s, now)
        report = build_report(receipts, now, source="demo", note=s.story, select_agent=self._select_agent,
                              scenario=f"{self.demo_index + 1}/{total} {s.name}", scenario_title=s.title)
        for old in history:  # earlier receipts give the pending-embedding rate
            idx = next((i for i, a in enumerate(report.agents) if a.agent_id == old.agent_id), None)
            if idx is not None:
                prev = make_view(old, now)
                view = make_view(report.agents[idx].receipt, now, prev=prev)
                report = replace_agent(report, view, now)
        self.set_report(report)

    def action_scenario(self, step: int) -> None:
        """Demo: show the next (``1``) or previous (``-1``) scenario."""
        if self.demo_index is not None:
            self._load_scenario(self.demo_index + step)

    # ------------------------------------------------------------------------------------------ live
    def _start_live(self) -> None:
        assert self.live is not None
        if self.live.prefetched():  # the forked child's first look is in: no "locating" frame before it
            self._source_ready(self._located())
            return
        self.set_report(DashboardReport(source="live", evaluated_at=self.clock(), note=LOCATING))
        self.run_worker(self._discover_job, name="discover", group="discover", thread=True,
                        exclusive=True, exit_on_error=False, description="locate the OpenClaw install")

    def _discover_job(self) -> None:
        self.post_message(self._located())

    def _located(self) -> SourceReady:
        """Locate the install (blocks while a prefetch is in flight) and say what was found."""
        assert self.live is not None
        self.live.discover()
        return SourceReady(list(self.live.agent_ids), self.live.installed, self.live.reason, self.live.refused)

    @property
    def _locating(self) -> bool:
        """A discovery worker is running (``r`` then starts no second one)."""
        return any(w.group == "discover" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
                   for w in self.workers)

    @on(SourceReady)
    def _source_ready(self, msg: SourceReady) -> None:
        self._order = msg.agent_ids
        now = self.clock()
        if msg.refused:  # `--agent` names no agent this OpenClaw knows: leave with the reason, exit 3 (as check)
            self.refused = msg.refused
            self.exit(EXIT_CANNOT_RUN)
            return
        if not msg.installed:  # no agent is made up: the screen says so plainly and offers the demo
            self.set_report(DashboardReport(source="live", evaluated_at=now, missing=msg.reason or "unknown reason"))
            return
        first = self.live.first_receipts() if self.live is not None else {}
        if not first:
            self.set_report(DashboardReport(source="live", evaluated_at=now, note=READING))
        # the first frame paints from the config and the index (no qmd process); the qmd check runs in its
        # own lane at once, the CPU-heavy openclaw CLI lane once that frame is on screen; until both end
        # the verdict cell says checking (the verdict may flip when they end)
        self._slow_after_fast = sorted(msg.agent_ids, key=lambda a: a != self._select_agent)
        for agent in self._slow_after_fast:
            self._lanes[agent] = dict.fromkeys(PROVING_LANES, now)
            if agent in first:  # taken by the prefetch child (clawprobe.tui.first_look): painted at once
                self._fast_last[agent] = time.monotonic()
                self._apply_receipt(agent, first[agent], dict(self._lanes[agent]))
            else:
                self.request_fast(agent, "start")
        agents = list(self._slow_after_fast)
        if first:  # the lanes (and the probes' imports they need) start once that frame is on screen
            self.call_after_refresh(self._start_lanes, agents, True)
        else:
            self._start_lanes(agents, False)

    def _follow_agents(self) -> None:
        """The config a lane re-read names other agents than at start: a new one is probed as at start (all
        lanes), one no longer configured leaves the report and its lanes' bookkeeping."""
        if self.live is None or not self.live.installed or list(self.live.agent_ids) == self._order:
            return
        ids = list(self.live.agent_ids)
        new = [a for a in ids if a not in self._order]
        self._order = ids
        for gone in [a for a in self._lanes if a not in ids]:
            del self._lanes[gone]
        if self.report is not None and any(a.agent_id not in ids for a in self.report.agents):
            current = self.report.current.agent_id if self.report.current else None
            kept = [a for a in self.report.agents if a.agent_id in ids]
            sel = next((i for i, a in enumerate(kept) if a.agent_id == current), 0)
            self.set_report(self.report.model_copy(update={"agents": kept, "selected": sel}))
        now = self.clock()
        for agent in new:
            self._lanes[agent] = dict.fromkeys(PROVING_LANES, now)
            self.request_fast(agent, "config: a new agent")
            self.request_slow(agent)
        self._start_lanes(new, False)

    def _start_lanes(self, agents: list[str], painted: bool) -> None:
        """The qmd lane of each of ``agents``, the watcher and — when the first frame is ``painted`` already —
        the openclaw CLI lane (otherwise the first fast receipt starts it)."""
        for agent in agents:
            self.run_worker(partial(self._qmd_job, agent), name=f"qmd {agent}", group=f"qmd:{agent}",
                            description=f"qmd binary + store check for agent {agent}", thread=True,
                            exclusive=True, exit_on_error=False)
        if self._watch_enabled:
            self.start_watching()
        if painted:
            self._start_slow_lanes()

    def _qmd_job(self, agent: str) -> None:
        assert self.live is not None
        with self._qmd_lock:  # two Node starts each: one agent at a time
            t0 = time.perf_counter()
            self.live.check_qmd(agent)
            self.post_message(QmdChecked(agent, time.perf_counter() - t0))

    @on(QmdChecked)
    def _qmd_checked(self, msg: QmdChecked) -> None:
        self._lane_ended(msg.agent_id, "qmd binary")
        self.probe_log.append(("qmd", msg.agent_id, msg.seconds))
        self.request_fast(msg.agent_id, "qmd lane finished")

    def _lane_ended(self, agent: str, lane: str) -> None:
        self._lanes.get(agent, {}).pop(lane, None)

    def _lanes_running(self) -> bool:
        return any(self._lanes.values())

    def request_fast(self, agent: str, trigger: str) -> None:
        """Run the fast lane for ``agent`` now, or right after the one in flight (never two at once)."""
        if self.live is None or not self.live.installed:
            return
        if agent in self._fast_busy:
            self._fast_again[agent] = trigger
            return
        gap = time.monotonic() - self._fast_last.get(agent, 0.0)
        if gap < MIN_FAST_GAP_S:
            self._fast_busy.add(agent)
            self.set_timer(MIN_FAST_GAP_S - gap, partial(self._launch_fast, agent, trigger))
            return
        self._fast_busy.add(agent)
        self._launch_fast(agent, trigger)

    def _launch_fast(self, agent: str, trigger: str) -> None:
        self._fast_last[agent] = time.monotonic()
        lanes = dict(self._lanes.get(agent, {}))  # still running now: this receipt will not hold their results
        self.run_worker(partial(self._fast_job, agent, trigger, lanes), name=f"fast {agent}", group=f"fast:{agent}",
                        description=f"fast probes for agent {agent} ({trigger})", thread=True, exclusive=True,
                        exit_on_error=False)

    def _fast_job(self, agent: str, trigger: str, lanes: dict[str, datetime]) -> None:
        assert self.live is not None
        t0 = time.perf_counter()
        receipt = self.live.fast(agent, self._slow.get(agent), self.clock(), qmd_check="qmd binary" not in lanes)
        if not get_current_worker().is_cancelled:
            self.post_message(FastProbed(agent, receipt, time.perf_counter() - t0, trigger, lanes))

    @on(FastProbed)
    def _fast_done(self, msg: FastProbed) -> None:
        self._fast_busy.discard(msg.agent_id)
        self.probe_log.append(("fast", msg.agent_id, msg.seconds))
        self._apply_receipt(msg.agent_id, msg.receipt, msg.checking)
        if msg.agent_id in self._slow and self.live is not None and self.live.slow_outdated(msg.agent_id):
            self._config_changed(msg.agent_id)  # the config moved before the watcher watched: re-run the CLI lane
        self._follow_agents()
        if self._slow_after_fast:
            self.call_after_refresh(self._start_slow_lanes)
        again = self._fast_again.pop(msg.agent_id, None)
        if again is not None:
            self.request_fast(msg.agent_id, again)
        elif self._fast_refresh_s:
            old = self._refresh_timers.pop(msg.agent_id, None)
            if old is not None:
                old.stop()
            self._refresh_timers[msg.agent_id] = self.set_timer(
                self._fast_refresh_s, partial(self.request_fast, msg.agent_id, "timer"), name=f"refresh {msg.agent_id}")

    def _apply_receipt(self, agent: str, receipt: Receipt, checking: dict[str, datetime] | None = None) -> None:
        now = self.clock()
        report = self.report or DashboardReport(source="live", evaluated_at=now)
        prev = next((a for a in report.agents if a.agent_id == agent), None)
        slow = self._slow.get(agent)
        oc, cp = self.live.command_lines() if self.live else (None, None)
        sd = self.live.state_dir() if self.live else None
        view = make_view(receipt, now, prev=prev, slow_at=getattr(slow, "taken_at", None), openclaw=oc, state_dir=sd,
                         clawprobe=cp)
        lanes = dict(self._lanes.get(agent, {})) if checking is None else checking
        view = view.model_copy(update={"checking": lanes})
        if prev is not None and view.embed_rate is None and prev.embed_rate and receipt.vectors.embed_running_pid:
            view = view.model_copy(update={"embed_rate": prev.embed_rate})
        current_id = report.current.agent_id if report.current else self._select_agent
        if current_id in (None, agent):
            self._downloads_hook(prev.receipt if prev else None, receipt)
        new = replace_agent(report, view, now)
        order = {a: i for i, a in enumerate(self._order)}
        agents = sorted(new.agents, key=lambda a: order.get(a.agent_id, len(order)))
        sel = next((i for i, a in enumerate(agents) if a.agent_id == current_id), 0)
        self.set_report(new.model_copy(update={"agents": agents, "selected": sel}))

    def _start_slow_lanes(self) -> None:
        """Queue the openclaw CLI lane for every agent, the shown one first (once, after the first frame)."""
        agents, self._slow_after_fast = self._slow_after_fast, []
        for agent in agents:
            self.request_slow(agent)

    def _downloads_hook(self, prev: Receipt | None, receipt: Receipt) -> None:
        """Open / update the model-download screen when a download starts (``clawprobe.tui.screens.downloads``)."""
        if "clawprobe.tui.screens.downloads" not in sys.modules and not receipt.vectors.downloading:
            return  # nothing on its way and the screen never opened: its module and the model probes stay unloaded
        try:
            from clawprobe.tui.screens.downloads import on_receipt
        except ImportError:
            return
        on_receipt(self, prev.vectors if prev else None, receipt, clock=self.clock)

    def walk_reprobe(self, agent_id: str) -> tuple[Receipt, object]:
        """A fresh receipt and diagnosis for the walkthrough's Verify (blocking: called from its thread
        worker). Live: the slow and fast lanes in sequence; demo/replay: the shown receipt re-diagnosed."""
        from clawprobe.core.diagnosis import diagnose

        if self.live is not None and self.live.installed:
            ev = self.live.slow(agent_id, self.clock())
            self.post_message(SlowProbed(agent_id, ev, 0.0))
            r = self.live.fast(agent_id, ev, self.clock())
            self.post_message(FastProbed(agent_id, r, 0.0, "walkthrough verify"))
            oc, cp = self.live.command_lines()
            return r, diagnose(r, openclaw=oc, state_dir=self.live.state_dir(), clawprobe=cp)
        view = next((a for a in (self.report.agents if self.report else []) if a.agent_id == agent_id), None)
        if view is None:
            raise LookupError(f"no receipt for agent {agent_id}")
        if self.report is not None and self.report.source == "replay":  # the commands of the install it names
            from clawprobe.core.locate import recorded_repair_words

            return view.receipt, diagnose(view.receipt, **recorded_repair_words(view.receipt.config.path, os.environ))
        return view.receipt, diagnose(view.receipt)

    def request_slow(self, agent: str) -> None:
        """Queue the slow lane (the ``openclaw`` CLI) for ``agent``; lanes of different agents run one by one."""
        if self.live is None or not self.live.installed or agent in self._slow_pending:
            return
        self._slow_pending.add(agent)
        self.run_worker(partial(self._slow_job, agent), name=f"slow {agent}", group=f"slow:{agent}",
                        description=f"openclaw CLI probes for agent {agent}", thread=True, exclusive=True,
                        exit_on_error=False)

    def _slow_job(self, agent: str) -> None:
        assert self.live is not None
        with self._slow_lock:  # 3–6 s of CPU each: never two agents' CLI probes at once
            if get_current_worker().is_cancelled:
                return
            t0 = time.perf_counter()
            evidence = self.live.slow(agent, self.clock())
            self.post_message(SlowProbed(agent, evidence, time.perf_counter() - t0))

    @on(SlowProbed)
    def _slow_done(self, msg: SlowProbed) -> None:
        self._slow_pending.discard(msg.agent_id)
        if self.live is not None and self.live.slow_outdated(msg.agent_id):  # the config changed while it ran:
            self._overtaken(msg.agent_id)  # its answers are for the old one
            return
        self._lane_ended(msg.agent_id, "openclaw CLI")
        self._slow[msg.agent_id] = msg.evidence
        self.probe_log.append(("slow", msg.agent_id, msg.seconds))
        self.request_fast(msg.agent_id, "slow lane finished")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place for worker failures: the lane is freed and the operator told — never a traceback."""
        w = event.worker
        if event.state is not WorkerState.ERROR:
            return
        group = w.group or ""
        lane, _, agent = group.partition(":")
        err = w.error
        text = f"{type(err).__name__}: {err}" if err is not None else "unknown error"
        self.post_message(ProbeFailed(agent or "-", lane or group, text))

    @on(ProbeFailed)
    def _probe_failed(self, msg: ProbeFailed) -> None:
        if msg.lane == "fast":
            self._fast_busy.discard(msg.agent_id)
        if msg.lane == "slow" and self.live is not None and self.live.slow_outdated(msg.agent_id):
            self._slow_pending.discard(msg.agent_id)  # it failed while the config changed: run it under the new one
            self._overtaken(msg.agent_id)
        elif msg.lane == "slow":
            self._slow_pending.discard(msg.agent_id)
            self._lane_ended(msg.agent_id, "openclaw CLI")
            self.request_fast(msg.agent_id, "slow lane failed")
        if msg.lane == "qmd":
            self._lane_ended(msg.agent_id, "qmd binary")
            self.request_fast(msg.agent_id, "qmd lane failed")
        if msg.lane == "fast" and self._slow_after_fast:
            self._start_slow_lanes()  # the CLI lane may still prove what the fast lane could not
        if msg.lane in ("fast", "discover") and self.live is not None:
            known = self.report and any(a.agent_id == msg.agent_id for a in self.report.agents)
            if known and self.report is not None:  # no newer receipt will come: checking only what still runs
                lanes = dict(self._lanes.get(msg.agent_id, {}))
                agents = [a.model_copy(update={"checking": lanes}) if a.agent_id == msg.agent_id else a
                          for a in self.report.agents]
                self.set_report(self.report.model_copy(update={"agents": agents}))
            if not known:
                now = self.clock()
                agent = msg.agent_id if msg.agent_id != "-" else (self._select_agent or "main")
                r = Receipt(agent_id=agent, checked_at=now, probe_errors=[f"{msg.lane} probe failed: {msg.error}"])
                self._apply_receipt(agent, r)
        self.notify(printable(f"{msg.lane} probe for {msg.agent_id} failed: {msg.error}"), severity="error", timeout=8,
                    markup=False)

    # ------------------------------------------------------------------------------------------ watching
    def start_watching(self) -> None:
        """(Re)start the file watcher over every agent's watch targets (group ``watch``, exclusive)."""
        self._watch_job()

    @work(exclusive=True, group="watch", exit_on_error=False, description="watch memory files, config, index")
    async def _watch_job(self) -> None:
        import asyncio

        from clawprobe.tui.watch import plan, targets_from, watch

        live = self.live
        if live is None:
            return

        def on_change(agent: str, kinds: frozenset[str], paths: list[str]) -> None:
            self.post_message(FilesChanged(agent, kinds, paths, len(paths), self.clock()))

        while True:
            def collect() -> list:
                out = []
                for a in list(self._order):
                    out += targets_from(a, live.watch_targets(a))
                return out

            targets = await asyncio.to_thread(collect)
            wplan = plan(targets)
            if wplan.empty:
                return
            live.watching([str(p) for p in wplan.recursive])
            try:
                await watch(wplan, on_change, on_paths=live.files_changed)
            except Exception as exc:
                self._watch_failed = True
                while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # anyio wraps watchfiles' error
                    exc = exc.exceptions[0]
                self.post_message(WatchFailed(f"file watching stopped: {type(exc).__name__}: {exc}"))
                return
            finally:
                live.watching(None)

    @on(FilesChanged)
    def _files_changed(self, msg: FilesChanged) -> None:
        if msg.kinds <= {"log"}:
            # a busy gateway log must not drive the probe rate: one fast probe per LOG_DELAY_S at most
            if msg.agent_id not in self._log_armed:
                self._log_armed.add(msg.agent_id)
                self.set_timer(LOG_DELAY_S, partial(self._log_fire, msg.agent_id))
            return
        if "config" in msg.kinds:
            self._config_changed(msg.agent_id)
        self.request_fast(msg.agent_id, "files: " + ",".join(sorted(msg.kinds)))
        if "config" in msg.kinds and self._watch_enabled:
            self.set_timer(1.0, self.start_watching)  # the workspace or index dir may have moved

    def _config_changed(self, agent: str) -> None:
        """The config file changed: the CLI's answers were given under the old one (a canary searched in the old
        mode is no proof for the new), so they are set aside — the lane reads checking until it has run under
        the new config — and a run in flight is run again when it ends, answered or failed (the effective
        backend may change too): ``LiveSource.slow_outdated`` decides that then, from the config files' identity
        when it started."""
        self._slow.pop(agent, None)
        if agent in self._lanes:
            self._lanes[agent]["openclaw CLI"] = self.clock()
        if agent not in self._slow_pending:
            self.request_slow(agent)

    def _overtaken(self, agent: str) -> None:
        """The CLI lane that just ended (answered or failed) ran while the config changed
        (``LiveSource.slow_outdated``): handled as a config change the watcher reported — the lane runs again
        under the new config and reads checking until then — and the fast lane paints the new config now
        (the watcher may not have seen the edit: one made before it watched, or while it was down)."""
        self._config_changed(agent)
        self.request_fast(agent, "config changed while the CLI lane ran")

    def _log_fire(self, agent: str) -> None:
        self._log_armed.discard(agent)
        self.request_fast(agent, "files: log")

    @on(WatchFailed)
    def _on_watch_failed(self, msg: WatchFailed) -> None:
        self.notify(printable(f"{msg.error} — full scans until it runs again; r re-probes and retries the watcher"),
                    severity="warning", timeout=10, markup=False)

    # ------------------------------------------------------------------------------------------ keys
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show only keys that do something here (keeps the footer to ≤ 5 bindings at 80 columns); from
        :data:`FOOTER_WIDE` columns the footer also shows the pane keys and the "previous" keys."""
        wide = self.size.width >= FOOTER_WIDE
        if action in ("pane", "focus_pane") and self.screen is not self.screen_stack[0]:
            return False  # the panes are not on screen (overview, help, walkthrough: a digit is theirs)
        if action == "now":  # a screen key at once: from the panes (help also from the overview's list)
            (what,) = parameters
            from clawprobe.tui.screens.agents import AgentsScreen

            on_list = isinstance(self.screen, AgentsScreen) and not isinstance(self.focused, Input)
            if not (self.screen is self.screen_stack[0] or (what == "help" and on_list)):
                return False
            return self.check_action(str(what), ())
        if action == "pane":
            return wide
        if action == "focus_pane":
            return not wide
        if action == "scenario":
            return self.demo_index is not None
        if action in ("canary", "save"):  # nothing to plant into or save without an install
            return self.live is not None and not (self.report is not None and self.report.missing)
        if action == "live_only":  # the hidden c/s of demo and replay, which only explain themselves
            return self.live is None and not (self.report is not None and self.report.missing)
        if action == "reprobe":
            return self.live is not None or self.demo_index is not None
        if action in ("next_agent", "prev_agent", "agents"):
            return bool(self.report and len(self.report.agents) > 1)
        return True

    def action_live_only(self, what: str) -> None:
        """``c``/``s`` in demo and replay: nothing is written there — say so instead of doing nothing."""
        src = self.report.source if self.report else ("demo" if self.demo_index is not None else "replay")
        if what == "canary":
            msg = f"{src}: the canary is planted only on a live install (clawprobe, or clawprobe canary plant)"
        elif src == "replay":
            msg = "replay: nothing new to save — this receipt was read from a file"
        else:
            msg = "demo: nothing to save — receipts are saved only on a live install (clawprobe check --save)"
        self.notify(printable(msg), timeout=5, markup=False)

    def action_now(self, what: str) -> None:
        """``?``, ``o``, ``c`` as priority keys (checked before the App routes the next key of the same read):
        the screen they open is on top at once, so the keys after them go to it, as one by one."""
        {"help": self.action_help, "agents": self.action_agents, "canary": self.action_canary}[what]()

    def action_help(self) -> None:
        """``?``: the scrollable help screen."""
        from clawprobe.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen([(p.NUMBER, p.TITLE, p.HELP) for p in PANES]))

    def action_reprobe(self) -> None:
        """``r``: live — the slow and fast lanes for the shown agent; demo — re-stamp the scenario to now."""
        if self.live is not None:
            if not self.live.installed:
                if not self._locating:  # a discovery in flight is not started twice
                    self._start_live()
                return
            agent = self.report.current.agent_id if self.report and self.report.current else None
            self.live.rescan()
            if self._watch_enabled and self._watch_failed:
                self._watch_failed = False
                self.start_watching()  # r also retries a watcher that stopped
            for a in [agent] if agent else self._order:
                self.request_slow(a)
                self.request_fast(a, "key r")
            self.notify("re-probing (the openclaw CLI takes 3–6 s)", timeout=3)
        elif self.demo_index is not None:
            self._load_scenario(self.demo_index)

    def action_next_agent(self) -> None:
        """``a``: show the next agent, in the overview's worst-first order."""
        if self.report:
            self.set_report(select_next(self.report, 1, self.clock()))

    def action_prev_agent(self) -> None:
        """``A``: show the previous agent (worst-first order)."""
        if self.report:
            self.set_report(select_next(self.report, -1, self.clock()))

    def action_pane(self, n: int) -> None:
        """``1``–``6`` while the footer shows them (the same as :meth:`action_focus_pane`)."""
        self.action_focus_pane(n)

    def action_focus_pane(self, n: int) -> None:
        """``1``–``6``: focus a pane (pane 2 focuses its table) at once, so the keys that came in the same
        read as the pane key (``3jjjj``) already scroll it."""
        pane = self.query_one(f"#pane-{n}", Pane)
        target = pane.focus_target() if hasattr(pane, "focus_target") else pane
        self.screen.set_focus(target)

    def _current_action(self):
        view = self.report.current if self.report else None
        return claim_action(view.diagnosis) if view else None  # what pane 6 shows (an expired claim's too)

    def action_walkthrough(self) -> None:
        """Enter on pane 6: the repair walkthrough (``clawprobe.tui.screens.walkthrough``; a plain step list if
        absent), started from what pane 6 shows (:func:`clawprobe.core.diagnosis.claim_diagnosis`: once a
        healthy claim's lease has ended, the lapsed verdict, never "nothing to repair")."""
        view = self.report.current if self.report else None
        if view is None:
            return
        try:
            from clawprobe.tui.screens.walkthrough import WalkthroughScreen  # owned by the walkthrough engineer
        except ImportError:
            from clawprobe.tui.screens.repair_steps import RepairStepsScreen

            self.push_screen(RepairStepsScreen(claim_action(view.diagnosis)))
            return
        oc = self.live.openclaw_path() if self.live else None
        kw = {} if self.live is not None else {"data_root": self._scratch_dir()}  # demo walks are not history
        d = claim_diagnosis(view.diagnosis)  # an expired healthy claim walks from what pane 6 says now
        self.push_screen(WalkthroughScreen(d, view.receipt, openclaw=oc, clock=self.clock, **kw))

    def _scratch_dir(self) -> str:
        """A per-run temp dir for records of demo/replay walks (removed when the App exits)."""
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="clawprobe-demo-")
        return self._scratch.name

    def interrupt(self, code: int) -> None:
        """A SIGINT arrived (``clawprobe.cli.dashboard.sigint_exits``, on the event loop): leave with ``code``.
        Before :meth:`on_mount` an exit would leave the App half-built (its panes not mounted), so the code is
        kept and :meth:`on_mount` leaves with it before starting any lane."""
        if self._mounted_once:
            self.exit(code)
        else:
            self._interrupted = code

    def _hung_up(self) -> None:
        """SIGHUP: the terminal is gone (a lost SSH session) and nothing can be drawn or restored — a graceful
        exit would block writing to it. The lanes' process trees and a first look in flight are killed, then
        the process ends at once with 128 + 1 (no receipt is pending: saving is the operator's ``s``); the
        demo's scratch dir (its walk records) is removed first, as on a normal exit."""
        self._end_children()
        if self._scratch is not None:
            self._scratch.cleanup()
        os._exit(128 + signal.SIGHUP)

    def _end_children(self) -> None:
        """Kill the process trees of the lanes still running and a first look still being taken."""
        from clawprobe.core.proc import kill_running

        kill_running()
        if self.live is not None:
            self.live.close()

    def on_unmount(self) -> None:
        self._end_children()  # a lane still waiting on openclaw/qmd: its tree goes with the App
        if self._sigterm:
            with contextlib.suppress(Exception):
                for sig in (signal.SIGTERM, signal.SIGHUP):
                    asyncio.get_running_loop().remove_signal_handler(sig)
        if self._scratch is not None:
            self._scratch.cleanup()

    def action_copy_command(self) -> None:
        """``y`` on pane 6: copy the next action's command with OSC 52."""
        from clawprobe.core.view import shown_command

        action = self._current_action()
        command, step = shown_command(action) if action is not None else (None, None)
        if command is None:
            self.notify("no command to copy for this verdict", timeout=3)
            return
        self.copy_to_clipboard(command)
        self.notify(f"command{f' of step {step}' if step else ''} copied (OSC 52)", timeout=3)

    def action_canary(self) -> None:
        """``c``: plant or rotate the canary — only after the operator confirms."""
        if self.live is None or not self.report or not self.report.current:
            return
        if not self.live.installed:
            self.notify("no OpenClaw install found: nothing to plant a canary into (r looks again)", timeout=5,
                        markup=False)
            return
        agent = self.report.current.agent_id
        detail = ("Writes one synthetic Markdown file (a unique token, no real data) into the agent's managed "
                  "memory/ collection, then re-probes. Nothing else is changed.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._canary_job(agent)

        from clawprobe.tui.screens.confirm import ConfirmScreen

        self.push_screen(ConfirmScreen(f"Plant a canary for agent {agent}?", detail), answered)

    @work(thread=True, group="canary", exclusive=True, exit_on_error=False, description="plant the canary")
    def _canary_job(self, agent: str) -> None:
        from clawprobe.core import canary as cn  # not needed for the first frame

        assert self.live is not None
        try:
            msg = self.live.plant_canary(agent, self.clock())
            self.post_message(ActionDone("canary", agent, True, msg))
        except cn.CanaryError as exc:  # plain words already (what, where, why, one repair)
            self.post_message(ActionDone("canary", agent, False, str(exc)))
        except OSError as exc:
            self.post_message(ActionDone("canary", agent, False, f"cannot plant the canary: {cn.describe_os_error(exc)}"))
        except Exception as exc:
            self.post_message(ActionDone("canary", agent, False, f"{type(exc).__name__}: {exc}"))

    def action_save(self) -> None:
        """``s``: append the shown receipt to the history (``clawprobe.core.history``)."""
        if self.live is None or not self.report or not self.report.current:
            return
        self._save_job(self.report.current.receipt, self.report.current.diagnosis.verdict.value)

    @work(thread=True, group="save", exclusive=True, exit_on_error=False, description="save the receipt")
    def _save_job(self, receipt: Receipt, verdict: str) -> None:
        assert self.live is not None
        try:
            where = self.live.save(receipt, verdict)
            self.post_message(ActionDone("save", receipt.agent_id, True, f"receipt saved: {where}"))
        except Exception as exc:
            self.post_message(ActionDone("save", receipt.agent_id, False, f"{type(exc).__name__}: {exc}"))

    @on(ActionDone)
    def _action_done(self, msg: ActionDone) -> None:
        self.notify(printable(msg.message), severity="information" if msg.ok else "error", timeout=6, markup=False)
        if msg.ok and msg.what == "canary":
            self.request_slow(msg.agent_id)
            self.request_fast(msg.agent_id, "canary planted")

    def action_quit(self) -> None:  # type: ignore[override]
        """``q``: quit; the return value is the worst exit code shown."""
        if self.report and self.report.agents:
            self.exit(self.report.exit_code)
        else:  # nothing diagnosed: live without an install could not run (3, as `check`); demo/replay 0
            self.exit(EXIT_CANNOT_RUN if self.live is not None else 0)
