"""``clawprobe walk [--agent ID] [--json]``: the repair walkthrough as plain text (headless, no textual).

For each agent (or ``--agent``), worst first as in the dashboard overview: probe
(``clawprobe.core.probe.collect``, the same probes as ``clawprobe check``), diagnose, and print the current
verdict's steps — what to check, the exact command for this agent and install, whether clawprobe may run it,
and the condition that proves it worked — plus the model downloads and the walks the previous operators
recorded. ``clawprobe --replay FILE walk`` walks saved receipts instead of probing (a history ``receipts.jsonl``:
the newest receipt per agent, ``clawprobe.core.replay.latest_per_agent``). The install and ``--agent`` pass the
shared front door first (``clawprobe.cli.main.preflight``). An agent whose probe raises is reported (``errors`` in
JSON) and the others are still walked.
Exit code: the worst verdict's (0 healthy … 2 failure), 3 when nothing (or an agent) could not be probed.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from typing import Any

from clawprobe.cli.main import EXIT_CANNOT_RUN, emit, preflight, warn
from clawprobe.core import __version__
from clawprobe.core.diagnosis import Diagnosis, diagnose
from clawprobe.core.downloads import format_downloads
from clawprobe.core.locate import command_lines, recorded_repair_words
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import ProbeFailure, dumps, exit_code_of, failure_text
from clawprobe.core.view import agent_facts, overview_row, worst_first
from clawprobe.core.walk import Walk, start_walk, walk_text
from clawprobe.core.walk_log import load_walks


class CannotWalk(Exception):
    """Nothing to walk (no install, unreadable replay file…); ``str()`` is the operator message."""


def _probe_all(args: argparse.Namespace, now: datetime
               ) -> tuple[list[tuple[Receipt, Diagnosis]], list[ProbeFailure], list[str] | None]:
    """Receipts + diagnoses for the agents to walk, the agents whose probe failed, and the OpenClaw CLI
    argv prefix (allow-list). Raises :class:`CannotWalk` when nothing can be walked."""
    replay = getattr(args, "replay", None)
    if replay:
        from clawprobe.core.replay import ReplayError, latest_per_agent, load_receipts

        try:
            receipts = latest_per_agent(load_receipts(replay))
        except ReplayError as e:
            raise CannotWalk(str(e)) from None
        agent = getattr(args, "agent", None)
        receipts = [r for r in receipts if agent is None or r.agent_id == agent]
        if not receipts:
            raise CannotWalk(f"{replay}: no receipt for agent {agent!r}")
        # a saved receipt is judged at its own check time; its commands reach the install it names
        return [(r, diagnose(r, **recorded_repair_words(r.config.path, os.environ))) for r in receipts], [], None
    problem = preflight(args)
    if problem:
        raise CannotWalk(problem)
    try:
        from clawprobe.core import probe
    except ImportError as e:
        raise CannotWalk(f"the local probes are not available in this build ({e})") from None
    try:
        ctx = probe.discover(state_dir=getattr(args, "state_dir", None), config=getattr(args, "config", None))
    except Exception as e:
        raise CannotWalk(f"cannot locate the install: {type(e).__name__}: {e}") from None
    if not getattr(ctx, "installed", False):
        raise CannotWalk(getattr(ctx, "reason", None) or "no OpenClaw install found")
    agent = getattr(args, "agent", None)
    if why := probe.refused(ctx, agent):
        raise CannotWalk(why)
    agents = [agent] if agent else list(ctx.agents or [ctx.default_agent])
    lines = command_lines(ctx.openclaw, ctx.state_dir, ctx.config_path)  # the commands reach the probed install
    pairs, failures = [], []
    for a in agents:
        try:
            r = probe.collect(ctx, a, now)
            pairs.append((r, diagnose(r, now, openclaw=lines.openclaw, state_dir=ctx.state_dir.path,
                                        clawprobe=lines.clawprobe)))
        except Exception as e:
            failures.append(ProbeFailure(agent_id=a, reason=f"probing failed: {type(e).__name__}: {e}"))
    return pairs, failures, ctx.openclaw


def _worst_first(pairs: list[tuple[Receipt, Diagnosis]]) -> list[tuple[Receipt, Diagnosis]]:
    """The agents in the dashboard overview's worst-first order (:func:`clawprobe.core.view.worst_first`, each
    judged at its check time), so the first walkthrough printed is the worst agent's."""
    rows = worst_first([overview_row(agent_facts(r, d), d.rule) for r, d in pairs])
    place = {row.agent_id: i for i, row in enumerate(rows)}
    return sorted(pairs, key=lambda p: place[p[1].agent_id])


def _previous(w: Walk) -> dict[str, Any]:
    last = w.events[-1] if w.events else None
    return {"walk_id": w.walk_id, "started_at": w.started_at.isoformat(), "operator": w.operator,
            "start_verdict": w.start_verdict.value, "verdict": w.verdict.value, "status": w.status,
            "transitions": [f"{t.from_verdict.value} → {t.to_verdict.value}" for t in w.transitions],
            "runs": [{"command": e.command, "confirmed_by": e.confirmed_by, "result": e.result,
                      "exit_code": e.exit_code, "at": e.at.isoformat()} for e in w.events if e.kind == "run"],
            "last_event": f"{last.kind} {last.step_title or ''} {last.result or ''}".strip() if last else None}


def _previous_text(w: Walk) -> str:
    p = _previous(w)
    path = " → ".join([p["start_verdict"]] + [t.split(" → ")[1] for t in p["transitions"]])
    runs = f", {len(p['runs'])} command run(s)" if p["runs"] else ""
    return f"  {p['started_at'][:19]}Z by {p['operator']}: {path} ({p['status']}{runs}; last: {p['last_event']})"


def run(args: argparse.Namespace) -> int:
    """Print the walkthrough for each agent; returns the worst exit code (3: nothing to walk)."""
    now = datetime.now(UTC)
    try:
        pairs, failures, openclaw = _probe_all(args, now)
    except CannotWalk as e:
        warn(str(e), "clawprobe walk")
        if getattr(args, "json", False):  # --json is always one document, also when nothing could be walked
            emit(dumps({"clawprobe": __version__, "exit_code": EXIT_CANNOT_RUN, "walks": [],
                        "errors": [ProbeFailure(agent_id=None, reason=str(e)).model_dump(mode="json")]}), utf8=True)
        return EXIT_CANNOT_RUN
    as_json = getattr(args, "json", False)
    docs, lines = [], []
    for r, d in _worst_first(pairs):
        w = start_walk(d, now=now, openclaw=openclaw)
        previous = load_walks(d.agent_id)
        if as_json:
            docs.append({"agent_id": d.agent_id, "verdict": d.verdict.value, "reason": d.reason,
                         "title": d.next_action.title, "why": d.next_action.why, "dont": d.next_action.dont,
                         "evidence": d.evidence,
                         "steps": [s.model_dump(mode="json", include={"index", "title", "check", "command", "verify_text",
                                                                       "runnable", "allowed", "refused", "conditions"})
                                   for s in w.steps],
                         "downloads": r.vectors.model_dump(mode="json", include={"download_status", "downloads",
                                                                                  "missing_models"}),
                         "previous_walks": [_previous(p) for p in previous]})
            continue
        lines += walk_text(w)
        if d.next_action.dont:
            lines.append(f"  don't: {d.next_action.dont}")
        dl = format_downloads(r.vectors, r.checked_at)
        lines += [f"  {x}" for x in dl]
        if previous:
            lines.append("  previous walks:")
            lines += [_previous_text(p) for p in previous]
        lines.append("")
    code = exit_code_of(pairs, failures)
    if as_json:
        emit(dumps({"clawprobe": __version__, "exit_code": code, "walks": docs,
                    "errors": [f.model_dump(mode="json") for f in failures]}), utf8=True)
    else:
        lines += [failure_text(f) for f in failures]
        emit("\n".join(lines).rstrip())
    return code
