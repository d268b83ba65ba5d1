"""``clawprobe replay FILE… [--json] [--now T] [--textfile FILE]``: diagnose saved receipts (headless, no textual).

Each FILE may be a receipt, a list of receipts, the ``check --json`` contract, or clawprobe's history
``receipts.jsonl`` (``clawprobe.core.replay``); every receipt in every file is diagnosed, in order. Without ``--now``
each receipt is judged at its own check time, and the text says so and how old it is at the clock;
``--now now`` judges them at the clock, ``--now T`` at an ISO time. Whether each receipt has expired is
decided once (``clawprobe.core.expiry``), at the clock (or ``T``), and the text and ``--json`` both state that
decision: the lease ended (at what time), or an input changed compared with the newest receipt of the same
agent among the files (a history: every older receipt is compared with the newest). Exit: the worst verdict's code, 3 with
one message line (naming the file and, for JSON lines, the line) on unusable input — with ``--json``
also a document with no receipts and the message in ``errors``. ``--textfile FILE`` also writes the
Prometheus metrics of the diagnoses (``clawprobe.core.prometheus``, as ``check --textfile``).
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from clawprobe.cli.main import EXIT_CANNOT_RUN, emit, warn
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import recorded_repair_words
from clawprobe.core.replay import ReplayError, latest_per_agent, load_receipts
from clawprobe.core.report import ProbeFailure, exit_code_of, to_json, to_text


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    if value == "now":
        return datetime.now(UTC)
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ReplayError(f"--now {value!r} is not an ISO-8601 time (e.g. 2026-11-30T03:00:00Z) or 'now'") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def run(args: argparse.Namespace) -> int:
    """Print the diagnoses; exit with the worst exit code, or 3 with a message on unusable input."""
    try:
        now = _parse_now(args.now)
        receipts = [r for f in args.files for r in load_receipts(f)]
    except ReplayError as e:
        warn(str(e))
        if args.json:  # --json is always one document (as check --json): no receipts, the reason in errors
            emit(to_json([], [ProbeFailure(agent_id=None, reason=str(e))]), utf8=True)
        return EXIT_CANNOT_RUN
    clock = now or datetime.now(UTC)
    newest = {r.agent_id: r for r in latest_per_agent(receipts)}
    pairs = [(r, diagnose(r, now, clock=clock, current=newest[r.agent_id],  # commands reach the install it names
                          **recorded_repair_words(r.config.path, os.environ))) for r in receipts]
    if getattr(args, "textfile", None):  # the metrics check --textfile would write for these receipts
        from clawprobe.core.prometheus import render, textfile_problem, write_textfile

        problem = textfile_problem(args.textfile)
        try:
            if problem:
                raise OSError(problem)
            write_textfile(args.textfile, render(pairs, {}, clock))
        except OSError as e:
            warn(problem or f"cannot write {args.textfile}: {e.strerror or e}")
            return EXIT_CANNOT_RUN
    emit(to_json(pairs) if args.json else to_text(pairs, now, clock=clock), utf8=bool(args.json))
    return exit_code_of(pairs)
