"""``clawprobe`` (live), ``clawprobe demo [--scenario N|NAME | --list]`` and ``clawprobe --replay FILE``.

Bad input ends with one clear line and exit 3 — never a traceback: an unknown scenario (a number from
``--list``, an exact name or a unique part of one), an unreadable receipt file, a ``--replay --agent``
with no receipt, and for the live view the shared front door (``clawprobe.cli.main.preflight``: an explicit state
dir/config that does not exist, an unknown ``--agent``). The dashboard needs a terminal on stdin and
stdout: started from cron, with output to a file or ``</dev/null``, it refuses at once (exit 3) instead
of writing escape codes forever. ``--replay`` of a history ``receipts.jsonl`` shows the newest receipt
per agent. The dashboard returns the worst exit code of what it showed when the operator quits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from clawprobe.cli.main import EXIT_CANNOT_RUN, EXIT_INTERRUPTED, emit, preflight, warn
from clawprobe.core.gc_pause import end_startup, hold_startup

if TYPE_CHECKING:  # textual is imported only when the dashboard starts
    from clawprobe.tui.app import ClawprobeApp

NEEDS_A_TERMINAL = "the dashboard needs a terminal; use `clawprobe check` for scripts/cron"
CRASHED = "the dashboard stopped on an internal error (above); `clawprobe check` gives the verdict as plain text"


def _list_scenarios() -> int:
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.tui.demo import scenarios

    lines = []
    for i, s in enumerate(scenarios(), start=1):
        verdicts = ", ".join(f"{r.agent_id}: {diagnose(r).verdict.value}" for r in s.receipts)
        lines.append(f"{i:2d}  {s.name:<36} {verdicts}")
        lines.append(f"    {s.title} — {s.story}")
    emit("\n".join(lines))
    return 0


def build_app(args: argparse.Namespace, *, clock: Callable[[], datetime] | None = None) -> ClawprobeApp:
    """The App for these arguments (no terminal needed; used by ``run`` and by tests/bench/screenshots).

    ``clock`` overrides the real UTC clock (a callable returning an aware datetime). Raises
    ``clawprobe.tui.demo.ScenarioError`` / ``clawprobe.core.replay.ReplayError`` with an operator-facing message.
    """
    live = None
    if getattr(args, "command", None) != "demo" and not getattr(args, "replay", None):
        from clawprobe.tui.sources import LiveSource

        live = LiveSource(state_dir=getattr(args, "state_dir", None), config=getattr(args, "config", None),
                          agent=getattr(args, "agent", None))
        live.prefetch()  # locating the install (openclaw --version) overlaps importing the toolkit
    try:
        from clawprobe.tui.app import ClawprobeApp, utc_now
    except BaseException:  # Ctrl-C while the toolkit is imported: the first look's child goes too
        if live is not None:
            live.close()
        raise

    if live is not None:
        return ClawprobeApp(live=live, select_agent=getattr(args, "agent", None), clock=clock)
    if getattr(args, "command", None) == "demo":
        from clawprobe.tui.demo import find

        index = find(args.scenario) if getattr(args, "scenario", None) else 0
        return ClawprobeApp(demo_index=index, select_agent=getattr(args, "agent", None), clock=clock)
    from clawprobe.core.replay import ReplayError, latest_per_agent, load_receipts  # --replay FILE
    from clawprobe.tui.state import build_report

    receipts = latest_per_agent(load_receipts(args.replay))
    agent = getattr(args, "agent", None)
    if agent is not None and agent not in {r.agent_id for r in receipts}:
        have = ", ".join(r.agent_id for r in receipts)
        raise ReplayError(f"{args.replay}: no receipt for agent {agent!r} (it has: {have})")
    report = build_report(receipts, (clock or utc_now)(), source="replay", note=f"replayed from {args.replay}",
                          select_agent=agent, env=os.environ)  # its commands reach the install it names
    from clawprobe.tui.too_small import replay_command

    app = ClawprobeApp(report=report, clock=clock, select_agent=agent)  # --agent: that agent's panes first
    app.plain_command = replay_command([args.replay])
    return app


def has_terminal(stdin: TextIO | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> bool:
    """Whether stdin, stdout and stderr are all terminals: the dashboard reads keys on stdin, and the toolkit
    paints on stderr (``2>/dev/null`` was a blank screen that still ran); output to a file is a script's job."""
    for stream in (stdin or sys.stdin, stdout or sys.stdout, stderr or sys.__stderr__):
        try:
            if stream is None or not stream.isatty():
                return False
        except (ValueError, OSError):  # closed
            return False
    return True


@contextlib.contextmanager
def ascii_terminal(stream: TextIO | None = None) -> Iterator[None]:
    """While the block runs, characters the terminal stream (``sys.__stderr__``: the toolkit paints there) cannot
    encode are drawn as one ASCII character per cell (:data:`clawprobe.core.ascii_text.CELL`: ``─`` → ``-``,
    ``✓`` → ``v``) — not Python's ``\\u2500`` escapes, six cells wide, that pushed every row out of its column
    (``LC_ALL=POSIX PYTHONUTF8=0``). A stream that holds them (UTF-8) is left as it is; so is one that cannot be
    reconfigured."""
    from clawprobe.core.ascii_text import CELL

    out = stream or sys.__stderr__
    encoding = getattr(out, "encoding", None) or "utf-8"
    try:
        "─✓·—".encode(encoding)
        holds = True
    except (UnicodeEncodeError, LookupError):
        holds = False
    if holds:  # the block runs outside the probe's ``try``: its own KeyError or UnicodeEncodeError is its own
        yield
        return
    before = getattr(out, "errors", None)
    try:
        out.reconfigure(errors=CELL)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            out.reconfigure(errors=before)  # type: ignore[union-attr]


@contextlib.contextmanager
def sigint_exits(interrupt: Callable[[int], None]) -> Iterator[threading.Event]:
    """While the block runs (``App.run``), SIGINT ends the dashboard with :data:`EXIT_INTERRUPTED`; the event
    it yields says whether one arrived.

    Without it, ``asyncio.run`` turns a SIGINT into a cancel of the App's task, which the toolkit absorbs and
    returns ``None`` — exit 0, "healthy" — for a Ctrl-C typed before the first frame (the terminal is not yet
    raw, so the key is a signal). With the event loop running, ``interrupt(130)`` is scheduled on it
    (``ClawprobeApp.interrupt``: the App leaves, restoring the terminal and killing its children as it
    unmounts); outside the loop, the default ``KeyboardInterrupt`` (``clawprobe.cli.main.main`` → 130). A
    SIGINT that is ignored (a background job) or a block not in the main thread is left as it is."""
    seen = threading.Event()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield seen
        return

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        seen.set()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # the App's loop is not running (yet, or any more)
            raise KeyboardInterrupt from None
        with contextlib.suppress(RuntimeError):  # the loop is closing: the App is leaving already
            loop.call_soon_threadsafe(interrupt, EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def run(args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Start the dashboard; returns the process exit code (3 with one line on bad input or no terminal).

    ``stdin``/``stdout`` default to the process's (tests pass others)."""
    from clawprobe.core.replay import ReplayError
    from clawprobe.tui.demo import ScenarioError

    if getattr(args, "command", None) == "demo" and getattr(args, "list", False):
        return _list_scenarios()
    live = getattr(args, "command", None) is None and not getattr(args, "replay", None)
    if live:
        problem = preflight(args) or (None if has_terminal(stdin, stdout) else NEEDS_A_TERMINAL)
        if problem:  # before build_app: it starts locating the install (a forked child)
            warn(problem)
            return EXIT_CANNOT_RUN
    hold_startup()  # no collection pass until the first frame is on screen (the App ends the hold then)
    try:
        try:
            app = build_app(args)
        except (ScenarioError, ReplayError) as exc:
            warn(str(exc))
            return EXIT_CANNOT_RUN
        if not has_terminal(stdin, stdout):
            warn(NEEDS_A_TERMINAL)
            return EXIT_CANNOT_RUN
        no_mouse = bool(getattr(args, "no_mouse", False) or getattr(args, "demo_no_mouse", False))
        try:
            with sigint_exits(app.interrupt) as interrupted, ascii_terminal():
                result = app.run(mouse=not no_mouse)
        finally:
            if app.live is not None:  # however it ended (an App that never mounted did not close it)
                app.live.close()
        if interrupted.is_set():  # whatever the App returned: it was stopped, not judged
            return EXIT_INTERRUPTED
        if app.refused:  # `--agent` names no agent the discovered OpenClaw knows (as `check` refuses it)
            warn(app.refused)
            return EXIT_CANNOT_RUN
        if app.return_code:  # it crashed (the toolkit printed the traceback): never the exit code of "healthy"
            warn(CRASHED)
            return EXIT_CANNOT_RUN
        return int(result) if isinstance(result, int) else 0
    finally:
        end_startup()
