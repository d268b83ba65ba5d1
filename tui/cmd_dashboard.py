"""``clawprobe`` (live), ``clawprobe demo [--scenario NAME | --list]`` and ``clawprobe --replay FILE``.

Bad input (unknown scenario, unreadable receipt file) ends with one clear line and exit 3 — never a
traceback. The dashboard returns the worst exit code of what it showed when the operator quits.
"""

from __future__ import annotations

import argparse
import sys

EXIT_CANNOT_RUN = 3


def _list_scenarios() -> int:
    from core.diagnosis import diagnose
    from tui.demo import scenarios

    for i, s in enumerate(scenarios(), start=1):
        verdicts = ", ".join(f"{r.agent_id}: {diagnose(r).verdict.value}" for r in s.receipts)
        print(f"{i:2d}  {s.name:<36} {verdicts}")
        print(f"    {s.title} — {s.story}")
    return 0


def build_app(args: argparse.Namespace, *, clock=None):
    """The App for these arguments (no terminal needed; used by ``run`` and by tests/bench/screenshots).

    ``clock`` overrides the real UTC clock (a callable returning an aware datetime). Raises ``tui.demo.ScenarioError`` / ``core.replay.ReplayError`` with an operator-facing message.
    """
    from tui.app import ClawprobeApp, utc_now

    if getattr(args, "command", None) == "demo":
        from tui.demo import find

        index = find(args.scenario) if getattr(args, "scenario", None) else 0
        return ClawprobeApp(demo_index=index, select_agent=getattr(args, "agent", None), clock=clock)
    if getattr(args, "replay", None):
        from core.replay import load_receipts
        from tui.state import build_report

        receipts = load_receipts(args.replay)
        report = build_report(receipts, (clock or utc_now)(), source="replay", note=f"replayed from {args.replay}",
                              select_agent=getattr(args, "agent", None))
        return ClawprobeApp(report=report, clock=clock)
    from tui.sources import LiveSource

    live = LiveSource(state_dir=getattr(args, "state_dir", None), config=getattr(args, "config", None),
                      agent=getattr(args, "agent", None))
    return ClawprobeApp(live=live, select_agent=getattr(args, "agent", None), clock=clock)


def run(args: argparse.Namespace) -> int:
    """Start the dashboard; returns the process exit code."""
    from core.replay import ReplayError
    from tui.demo import ScenarioError

    if getattr(args, "command", None) == "demo" and getattr(args, "list", False):
        return _list_scenarios()
    try:
        app = build_app(args)
    except (ScenarioError, ReplayError) as exc:
        print(f"clawprobe: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    no_mouse = bool(getattr(args, "no_mouse", False) or getattr(args, "demo_no_mouse", False))
    result = app.run(mouse=not no_mouse)
    return int(result) if isinstance(result, int) else 0
