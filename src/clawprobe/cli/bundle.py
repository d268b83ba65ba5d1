"""``clawprobe bundle [--agent ID] [-o FILE]``: write the evidence of one check as a support bundle.

The same probes as ``clawprobe check`` (``--no-openclaw`` skips the slow CLI probes), but instead of the
diagnosis the gathered :class:`~clawprobe.core.evidence.Evidence` of each agent is written, redacted, as one
versioned JSON document (:mod:`clawprobe.core.bundle`; its schema: ``clawprobe schema --bundle``).
``clawprobe check --bundle FILE`` diagnoses it. Exit 0 when written, 3 when nothing could be probed or the
file could not be written.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from clawprobe.cli.main import EXIT_CANNOT_RUN, emit, preflight, warn
from clawprobe.core import __version__, history


def run(args: argparse.Namespace) -> int:
    """Probe the selected agents, write the bundle, print its path."""
    from clawprobe.core.bundle import make_bundle, write_bundle
    from clawprobe.core.probe import discover, gather, measure_before, refused, slow

    problem = preflight(args)
    if problem:
        warn(problem, "clawprobe bundle")
        return EXIT_CANNOT_RUN
    try:
        ctx = discover(getattr(args, "state_dir", None), getattr(args, "config", None), os.environ)
    except Exception as e:  # discovery must not end in a traceback
        warn(f"cannot locate the install: {type(e).__name__}: {e}", "clawprobe bundle")
        return EXIT_CANNOT_RUN
    if not ctx.installed:
        warn(f"OpenClaw is not installed here — {ctx.reason}", "clawprobe bundle")
        return EXIT_CANNOT_RUN
    if why := refused(ctx, getattr(args, "agent", None)):  # as `check` refuses it: nothing probed or written
        warn(why, "clawprobe bundle")
        return EXIT_CANNOT_RUN
    agents = [args.agent] if getattr(args, "agent", None) else ctx.agents
    evidence = []
    for agent in agents:
        try:
            run_cli = not getattr(args, "no_openclaw", False)
            before = measure_before(ctx, agent) if run_cli else None  # the builtin search syncs the index
            s = slow(ctx, agent, datetime.now(UTC)) if run_cli else None
            evidence.append(gather(ctx, agent, s, datetime.now(UTC), stores_before=before,
                                   baseline_hash=history.load_baseline(ctx.state_dir.path, agent)))
        except Exception as e:  # a probe bug: say which agent and why, keep the others
            warn(f"probing agent {agent} failed: {type(e).__name__}: {e}", "clawprobe bundle")
    if not evidence:
        return EXIT_CANNOT_RUN
    now = datetime.now(UTC)
    path = args.output or f"clawprobe-bundle-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    try:
        write_bundle(make_bundle(evidence, now, __version__), path)
    except OSError as e:
        warn(f"cannot write {path}: {e.strerror or e}", "clawprobe bundle")
        return EXIT_CANNOT_RUN
    emit(f"wrote {path} ({len(evidence)} agent{'s' if len(evidence) != 1 else ''}; redacted: no secrets, no service "
         "environment, note text only where it holds the canary token)")
    return 0
