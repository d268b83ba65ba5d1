"""``clawprobe check``: probe the local OpenClaw install, print the diagnosis (headless, no textual).

Exit codes (core.verdicts): 0 healthy, 1 warning, 2 failure, 3 unverified or could not run — several
agents: the worst. With no OpenClaw installed: a plain message, exit 3.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone

from core import history
from core.diagnosis import diagnose
from core.locate import normalize_agent_id
from core.probe import collect, discover
from core.probes.config import memory_settings
from core.report import to_json, to_text
from core.verdicts import worst_exit_code


def _fmt(args: argparse.Namespace) -> str:
    if getattr(args, "format", None):
        return args.format
    return "json" if getattr(args, "json", False) else "text"


def run(args: argparse.Namespace) -> int:
    """Run every probe for the selected agents and print text, the JSON contract or Prometheus metrics."""
    fmt = _fmt(args)
    ctx = discover(getattr(args, "state_dir", None), getattr(args, "config", None), os.environ)
    if not ctx.installed:
        print(f"clawprobe: OpenClaw is not installed here — {ctx.reason}", file=sys.stderr)
        print("  (point clawprobe at an install with --state-dir DIR or --config FILE)", file=sys.stderr)
        return 3
    agents = [normalize_agent_id(args.agent)] if getattr(args, "agent", None) else ctx.agents
    oc_cmd = " ".join(ctx.openclaw) if ctx.openclaw else "openclaw"
    pairs, durations = [], {}
    for agent in agents:
        t0 = time.monotonic()
        now = datetime.now(timezone.utc)
        baseline = history.load_baseline(ctx.state_dir.path, agent)
        if getattr(args, "accept_baseline", False) and ctx.config.error is None:
            h = memory_settings(ctx.config.tree, agent).hash
            history.accept_baseline(ctx.state_dir.path, agent, h, now=now)
            baseline = h
        try:
            r = collect(ctx, agent, now, run_slow=not getattr(args, "no_openclaw", False), baseline_hash=baseline)
        except Exception as e:  # a probe bug: say which, never a traceback  # noqa: BLE001
            print(f"clawprobe: probing agent {agent} failed: {type(e).__name__}: {e}", file=sys.stderr)
            return 3
        durations[agent] = time.monotonic() - t0
        d = diagnose(r, openclaw=oc_cmd, state_dir=ctx.state_dir.path)
        pairs.append((r, d))
        if getattr(args, "save", False):
            try:
                history.append(r, d.verdict.value, ctx.state_dir.path)
            except OSError as e:
                print(f"clawprobe: could not save the receipt: {e}", file=sys.stderr)
    code = worst_exit_code([d.exit_code for _, d in pairs])
    if fmt == "prometheus":
        from core.prometheus import render, write_textfile

        text = render(pairs, durations, datetime.now(timezone.utc))
        if getattr(args, "textfile", None):
            try:
                write_textfile(args.textfile, text)
            except OSError as e:
                print(f"clawprobe: cannot write {args.textfile}: {e}", file=sys.stderr)
                return 3
        else:
            sys.stdout.write(text)
    elif fmt == "json":
        print(to_json(pairs))
    else:
        if ctx.gateway is not None and ctx.gateway.process is None:
            print(f"(no running gateway for {ctx.state_dir.path}; environment from "
                  f"{'a service file' if ctx.gateway.service else 'this shell'})")
        print(to_text(pairs))
    return code
