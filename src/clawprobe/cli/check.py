"""``clawprobe check``: probe the local OpenClaw install, print the diagnosis (headless, no textual).

Exit codes (clawprobe.core.verdicts): 0 healthy, 1 warning, 2 failure, 3 unverified or could not run — several
agents: the worst. Could not run = no install, an explicit ``--state-dir``/``--config`` that does not
exist, an unknown ``--agent`` (``clawprobe.cli.main.preflight``), an unwritable ``--textfile``: a plain message, exit 3.
An agent whose probe raises is reported (text line, JSON ``errors`` entry, ``clawprobe_exit_code`` 3) and
the other agents are still probed and printed.

``--bundle FILE`` diagnoses a support bundle (``clawprobe bundle``) instead of probing: the same interpret and
diagnose as the live check, nothing is run; an unusable file is "could not run" (exit 3).

Formats: text (default), ``--json`` / ``--format json`` (the contract of ``clawprobe.core.report``, always a valid
document, also when nothing could run), ``--format prometheus`` (``clawprobe.core.prometheus``; always complete,
with ``clawprobe_up 0`` when the check could not run). ``--textfile FILE`` implies ``--format prometheus``
and writes FILE atomically instead of stdout; combining it (or ``--json``) with another format is a usage
error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from clawprobe.cli.main import EXIT_CANNOT_RUN, emit, preflight, stdout_gone, warn
from clawprobe.core import history
from clawprobe.core.diagnosis import Diagnosis, diagnose
from clawprobe.core.receipt import Receipt
from clawprobe.core.redaction import redact_text
from clawprobe.core.report import ProbeFailure, exit_code_of, to_json, to_text

if TYPE_CHECKING:  # the probe module is imported only when a check runs
    from clawprobe.core.locate import CommandLines
    from clawprobe.core.probe import ProbeContext


class FormatConflict(ValueError):
    """Output options that contradict each other; ``str()`` is the usage message."""


def output_format(args: argparse.Namespace) -> str:
    """``text``, ``json`` or ``prometheus`` from ``--format``, ``--json`` and ``--textfile``.

    ``--textfile`` implies ``prometheus``; ``--json`` means ``json``. Raises :class:`FormatConflict` for
    ``--json`` with ``--format text|prometheus`` and ``--textfile`` with ``--json``/``--format text|json``.
    """
    fmt = getattr(args, "format", None)
    as_json = bool(getattr(args, "json", False))
    textfile = getattr(args, "textfile", None)
    if as_json and fmt not in (None, "json"):
        raise FormatConflict(f"--json conflicts with --format {fmt} (pick one output format)")
    if textfile:
        if as_json or fmt in ("json", "text"):
            raise FormatConflict(f"--textfile writes Prometheus metrics; it cannot be combined with "
                                 f"{'--json' if as_json else '--format ' + str(fmt)}")
        return "prometheus"
    return fmt or ("json" if as_json else "text")


def _prometheus(args: argparse.Namespace, text: str) -> int | None:
    """Write the metrics to ``--textfile`` or stdout; an exit code when the textfile could not be written."""
    from clawprobe.core.prometheus import write_textfile

    if getattr(args, "textfile", None):
        try:
            write_textfile(args.textfile, text)
        except OSError as e:
            warn(f"cannot write {args.textfile}: {e.strerror or e}")
            return EXIT_CANNOT_RUN
        return None
    emit(text.rstrip("\n"))
    return None


def _cannot_run(args: argparse.Namespace, fmt: str, reason: str, hint: str | None = None) -> int:
    """The whole check produced no verdict: say why on stderr and still emit a complete document."""
    warn(reason)
    if hint:
        warn(f"  {hint}", None)
    if fmt == "prometheus":
        from clawprobe.core.prometheus import render

        _prometheus(args, render([], {}, datetime.now(UTC), cannot_run=reason))
    elif fmt == "json":
        emit(to_json([], [ProbeFailure(agent_id=None, reason=reason)]), utf8=True)
    return EXIT_CANNOT_RUN


MAX_PARALLEL_AGENTS = 4  # agents probed at once (each runs up to 3 openclaw/qmd calls at once: 12 children)


def _baseline(ctx: ProbeContext, agent: str, args: argparse.Namespace, now: datetime) -> str | None:
    """The agent's accepted memory-config hash (``--accept-baseline`` accepts the current one first). A data dir
    clawprobe cannot write (read-only, full, a file in its place) keeps the baseline as it was, said on stderr:
    the check still runs and judges against what is really accepted."""
    from clawprobe.core.probes.config import memory_settings

    baseline = history.load_baseline(ctx.state_dir.path, agent)
    if getattr(args, "accept_baseline", False) and ctx.config.error is None:
        h = memory_settings(ctx.config.tree, agent).hash
        try:
            history.accept_baseline(ctx.state_dir.path, agent, h, now=now)
        except OSError as e:
            warn(f"could not accept the baseline of agent {agent} (the previous one stays): "
                 f"{e.strerror or e}: {e.filename or history.data_dir()}")
            return baseline
        baseline = h
    return baseline


def _probe_one(ctx: ProbeContext, agent: str, args: argparse.Namespace, lines: CommandLines, baseline: str | None
               ) -> tuple[Receipt, Diagnosis]:
    """Probes and diagnosis for one agent (may raise: the caller turns it into a ProbeFailure); ``lines`` start
    the repair commands (they reach the probed install)."""
    from clawprobe.core.probe import collect

    # no `now`: the check is dated when its probes ended, so what the CLI wrote meanwhile (a search syncing the
    # index) is never "newer than the check" and the receipt reads back (replay)
    r = collect(ctx, agent, None, run_slow=not getattr(args, "no_openclaw", False), baseline_hash=baseline)
    return r, diagnose(r, openclaw=lines.openclaw, state_dir=ctx.state_dir.path, clawprobe=lines.clawprobe)


def _from_bundle(path: str) -> tuple[list[tuple[Receipt, Diagnosis]], str | None]:
    """(receipt, diagnosis) of every agent in a support bundle, through the live check's own interpret and
    diagnose; or ``([], why)`` for an unusable file."""
    from clawprobe.core.bundle import BundleFileError, read_bundle
    from clawprobe.core.interpret import interpret
    from clawprobe.core.locate import recorded_repair_words

    try:
        b = read_bundle(path)
    except BundleFileError as e:
        return [], str(e)
    pairs = []
    for ev in b.agents:
        r = interpret(ev)
        # the commands reach the install the bundle names (its state dir carried where this shell reaches another)
        pairs.append((r, diagnose(r, **recorded_repair_words(r.config.path, os.environ, ev.openclaw, ev.state_dir))))
    return pairs, None if pairs else f"{path}: the bundle holds no agent"


def _timed(ctx: ProbeContext, agent: str, args: argparse.Namespace, lines: CommandLines, baseline: str | None
           ) -> tuple[tuple[Receipt, Diagnosis] | Exception, float]:
    t0 = time.monotonic()
    try:
        return _probe_one(ctx, agent, args, lines, baseline), time.monotonic() - t0
    except Exception as e:  # a probe bug: reported for this agent, the others are still probed
        return e, time.monotonic() - t0


def _interrupted(e: BaseException) -> str:
    """The ``# clawprobe:`` reason for a run stopped by a signal (``SystemExit(128+N)`` from the SIGTERM
    handler of ``clawprobe.cli.main``, or Ctrl-C)."""
    code = e.code if isinstance(e, SystemExit) else 128 + 2
    name = "SIGINT" if isinstance(e, KeyboardInterrupt) else (
        signal.Signals(code - 128).name if isinstance(code, int) and 128 < code < 128 + 65 else "exit")
    return f"interrupted by {name} before every agent had a verdict: nothing proven by this run"


def run(args: argparse.Namespace, *, sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] | None = None) -> int:
    """Run the check once, or with ``--watch N`` every N seconds in a plain terminal loop (each round
    headed by its time; Ctrl-C ends it, the exit code is then 130; so does stdout going away — ``| head``, a full
    disk — after the round it happened in). Returns the last round's exit code."""
    every = getattr(args, "watch", None)
    if every is None:
        return run_once(args)
    if not every > 0:  # 0 (was one silent run), a negative number, nan
        warn("error: --watch needs a positive number of seconds")
        return EXIT_CANNOT_RUN
    try:
        fmt = output_format(args)
    except FormatConflict as e:
        warn(f"error: {e}")
        return EXIT_CANNOT_RUN
    if fmt != "text" and not getattr(args, "textfile", None):  # rounds headed by text lines are no JSON/metrics
        warn(f"error: --watch prints rounds for a terminal; {'--json' if fmt == 'json' else '--format ' + fmt} "
             "output is one document per run: run `clawprobe check` from a timer instead "
             "(or --watch N --textfile FILE to rewrite a textfile)")
        return EXIT_CANNOT_RUN
    clock = clock or (lambda: datetime.now(UTC))
    while True:
        emit(f"── clawprobe check · {clock().strftime('%Y-%m-%d %H:%M:%SZ')} · every {every:g} s (Ctrl-C ends)")
        code = run_once(args)
        emit(f"── exit {code}")
        if stdout_gone():  # nobody reads the rounds any more: stop (the exit code says why, see main)
            return code
        sleep(every)


def run_once(args: argparse.Namespace) -> int:
    """Run every probe for the selected agents (or read ``--bundle``) and print text, the JSON contract or Prometheus metrics.

    A run stopped by SIGTERM/Ctrl-C while probing still rewrites ``--textfile``, with ``clawprobe_up 0``
    and why (never the last good verdict), and then exits 143/130 as before."""
    try:
        fmt = output_format(args)
    except FormatConflict as e:
        warn(f"error: {e}")
        return EXIT_CANNOT_RUN
    if fmt != "prometheus" or not getattr(args, "textfile", None):
        return _run(args, fmt)
    try:
        return _run(args, fmt)
    except (SystemExit, KeyboardInterrupt) as e:
        from clawprobe.core.proc import stop
        from clawprobe.core.prometheus import render, write_textfile

        stop()  # the probe threads' children die now and no new one starts: their waits end, not at their timeouts
        with contextlib.suppress(OSError):
            write_textfile(args.textfile, render([], {}, datetime.now(UTC), cannot_run=_interrupted(e)))
        raise


def _run(args: argparse.Namespace, fmt: str) -> int:
    if fmt == "prometheus" and getattr(args, "textfile", None):
        from clawprobe.core.prometheus import textfile_problem

        problem = textfile_problem(args.textfile) or history.replace_problem(args.textfile)
        if problem:
            warn(problem)
            return EXIT_CANNOT_RUN
    if getattr(args, "bundle", None):  # nothing is probed: the front door of an install does not apply
        bundled, why = _from_bundle(args.bundle)
        if why:
            return _cannot_run(args, fmt, why)
        return _emit(args, fmt, bundled, [], {}, None)
    problem = preflight(args)
    if problem:
        return _cannot_run(args, fmt, problem)
    try:
        from clawprobe.core.probe import discover

        ctx = discover(getattr(args, "state_dir", None), getattr(args, "config", None), os.environ)
    except Exception as e:  # discovery must not end in a traceback
        return _cannot_run(args, fmt, redact_text(f"cannot locate the install: {type(e).__name__}: {e}"))
    if not ctx.installed:
        return _cannot_run(args, fmt, f"OpenClaw is not installed here — {ctx.reason}",
                           "(point clawprobe at an install with --state-dir DIR or --config FILE)")
    from clawprobe.core.probe import refused

    if why := refused(ctx, getattr(args, "agent", None)):
        return _cannot_run(args, fmt, why)
    agents = [args.agent] if getattr(args, "agent", None) else ctx.agents
    if why := history.read_baselines()[1]:
        warn(why)
    if getattr(args, "save", False):
        for p in history.sweep_stale():
            warn(f"removed {p}: a temp file an interrupted `check --save` left behind")
    from clawprobe.core.locate import command_lines

    lines = command_lines(ctx.openclaw, ctx.state_dir, ctx.config_path)
    pairs: list[tuple[Receipt, Diagnosis]] = []
    failures: list[ProbeFailure] = []
    durations: dict[str, float] = {}
    baselines = {a: _baseline(ctx, a, args, datetime.now(UTC)) for a in agents}  # file writes: one at a time
    pool = ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_AGENTS, len(agents))), thread_name_prefix="clawprobe-agent")
    try:
        results = list(pool.map(lambda a: _timed(ctx, a, args, lines, baselines[a]), agents))
    except (KeyboardInterrupt, SystemExit):  # SIGTERM: the probe threads' children die now, none starts
        from clawprobe.core.proc import stop

        stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for agent, (result, seconds) in zip(agents, results, strict=True):  # reported in the configured order
        durations[agent] = seconds
        if isinstance(result, Exception):
            bug = redact_text(f"{type(result).__name__}: {result}")
            failures.append(ProbeFailure(agent_id=agent, reason=f"probing failed: {bug}"))
            warn(f"probing agent {agent} failed: {bug}")
            continue
        r, d = result
        pairs.append((r, d))
        if getattr(args, "save", False):
            try:
                history.append(r, d.verdict.value, ctx.state_dir.path)
            except OSError as e:
                warn(f"could not save the receipt: {e}")
    return _emit(args, fmt, pairs, failures, durations, ctx)


def _emit(args: argparse.Namespace, fmt: str, pairs: list[tuple[Receipt, Diagnosis]], failures: list[ProbeFailure],
          durations: dict[str, float], ctx: ProbeContext | None) -> int:
    """Print the result in ``fmt``; the exit code of the check (or of a textfile that could not be written)."""
    code = exit_code_of(pairs, failures)
    if fmt == "prometheus":
        from clawprobe.core.prometheus import render

        failed = _prometheus(args, render(pairs, durations, datetime.now(UTC), failures))
        return failed if failed is not None else code
    if fmt == "json":
        emit(to_json(pairs, failures), utf8=True)
    else:
        if ctx is not None and ctx.gateway is not None and ctx.gateway.process is None:
            emit(f"(no running gateway for {ctx.state_dir.path}; environment from "
                 f"{'a service file' if ctx.gateway.service else 'this shell'})")
        emit(to_text(pairs, failures=failures))
    return code
