"""``clawprobe replay FILE… [--json] [--now T]``: diagnose normalized receipts (headless, no textual)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from core.diagnosis import diagnose
from core.replay import ReplayError, load_receipts
from core.report import to_json, to_text
from core.verdicts import worst_exit_code


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    if value == "now":
        return datetime.now(timezone.utc)
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ReplayError(f"--now {value!r} is not an ISO-8601 time (e.g. 2026-11-30T03:00:00Z) or 'now'") from None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def run(args: argparse.Namespace) -> int:
    """Print the diagnoses; exit with the worst exit code, or 3 with a message on unusable input."""
    try:
        now = _parse_now(args.now)
        receipts = [r for f in args.files for r in load_receipts(f)]
    except ReplayError as e:
        print(f"clawprobe: {e}", file=sys.stderr)
        return 3
    pairs = [(r, diagnose(r, now)) for r in receipts]
    print(to_json(pairs) if args.json else to_text(pairs, now))
    return worst_exit_code([d.exit_code for _, d in pairs])
