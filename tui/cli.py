"""The ``clawprobe`` command line: argument parsing and dispatch only.

Headless commands (``check``, ``replay``, ``schema``, ``canary``, ``walk``) never import textual; the
dashboard (no sub-command, ``demo``, ``--replay``) imports it lazily. Bad input ends with a clear message
and exit 3, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from core import __version__

EXIT_CANNOT_RUN = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawprobe",
        description="Is this OpenClaw agent's memory search really healthy? (QMD or builtin)",
        epilog="Exit codes: 0 healthy · 1 warning (stale_index, vector_not_ready, keyword_only, scope_denied) · "
        "2 failure · 3 unverified or could not run. Several agents: the worst.",
    )
    p.add_argument("--version", action="store_true", help="print versions and exit")
    p.add_argument("--agent", help="agent id (default: all agents)")
    p.add_argument("--state-dir", help="OpenClaw state dir (default: $OPENCLAW_STATE_DIR or ~/.openclaw)")
    p.add_argument("--config", help="OpenClaw config file (default: as OpenClaw locates it)")
    p.add_argument("--replay", metavar="FILE", help="show a saved receipt in the dashboard")
    p.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal (native text selection)")
    sub = p.add_subparsers(dest="command")

    demo = sub.add_parser("demo", help="the dashboard on embedded scenarios (no OpenClaw needed)")
    demo.add_argument("--scenario", help="start on this scenario (see --list)")
    demo.add_argument("--list", action="store_true", help="list the scenarios and exit")
    demo.add_argument("--no-mouse", action="store_true", dest="demo_no_mouse")

    rp = sub.add_parser("replay", help="diagnose saved/normalized receipt files")
    rp.add_argument("files", nargs="+", metavar="FILE")
    rp.add_argument("--json", action="store_true", help="print the JSON contract")
    rp.add_argument("--now", help="evaluate at this ISO time instead of each receipt's check time ('now' = the clock)")

    sc = sub.add_parser("schema", help="print the JSON Schema of the receipt (or the diagnosis)")
    sc.add_argument("--diagnosis", action="store_true")

    ck = sub.add_parser("check", help="probe the local install and print the diagnosis")
    ck.add_argument("--json", action="store_true")
    ck.add_argument("--save", action="store_true", help="append the receipt to the history (user data dir)")
    ck.add_argument("--format", choices=["text", "json", "prometheus"], default=None)
    ck.add_argument("--accept-baseline", action="store_true", help="accept the current memory config as the baseline")
    ck.add_argument("--no-openclaw", action="store_true", help="skip the slow openclaw CLI probes (fast probes only)")
    ck.add_argument("--agent", default=argparse.SUPPRESS, help="agent id (default: all agents)")
    ck.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir")
    ck.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file")
    ck.add_argument("--textfile", metavar="FILE", help="with --format prometheus: write the metrics to FILE "
                    "atomically (node_exporter textfile collector) instead of stdout")

    cn = sub.add_parser("canary", help="plant, rotate or remove the synthetic canary")
    cn.add_argument("action", choices=["plant", "rotate", "remove", "show"])
    cn.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    cn.add_argument("--agent", default=argparse.SUPPRESS, help="this agent (default: the default agent)")
    cn.add_argument("--state-dir", default=argparse.SUPPRESS, help="OpenClaw state dir (same as the global option)")
    cn.add_argument("--config", default=argparse.SUPPRESS, help="OpenClaw config file (same as the global option)")

    wk = sub.add_parser("walk", help="the repair walkthrough as plain text")
    wk.add_argument("--json", action="store_true")
    wk.add_argument("--agent", default=argparse.SUPPRESS, help="only this agent (same as the global --agent)")
    return p


def _versions() -> str:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        tv = version("textual")
    except PackageNotFoundError:
        tv = "not installed"
    return f"clawprobe {__version__} (textual {tv}, python {platform.python_version()})"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``clawprobe`` console script; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.version:
        print(_versions())
        return 0
    handlers: dict[str | None, Callable[[argparse.Namespace], int]] = {}

    def run_replay(a: argparse.Namespace) -> int:
        from tui.cmd_replay import run

        return run(a)

    def run_schema(a: argparse.Namespace) -> int:
        from tui.cmd_schema import run

        return run(a)

    def run_check(a: argparse.Namespace) -> int:
        from tui.cmd_check import run

        return run(a)

    def run_canary(a: argparse.Namespace) -> int:
        from tui.cmd_canary import run

        return run(a)

    def run_walk(a: argparse.Namespace) -> int:
        from tui.cmd_walk import run

        return run(a)

    def run_dashboard(a: argparse.Namespace) -> int:
        from tui.cmd_dashboard import run

        return run(a)

    handlers.update({"replay": run_replay, "schema": run_schema, "check": run_check, "canary": run_canary,
                     "walk": run_walk, "demo": run_dashboard, None: run_dashboard})
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
