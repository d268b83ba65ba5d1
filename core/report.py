"""The JSON contract and the plain-text rendering shared by every command that prints diagnoses.

JSON (``--json``)::

    {"clawprobe": "0.1.0", "schema_version": 1, "exit_code": <worst>,
     "receipts": [{"agent_id", "verdict", "reason", "exit_code", "next_action", "expires_at",
                   "diagnosis": {...}, "receipt": {...}}]}
"""

from __future__ import annotations

import json
from datetime import datetime

from core import __version__
from core.diagnosis import Diagnosis
from core.receipt import SCHEMA_VERSION, Receipt
from core.verdicts import worst_exit_code


def entry(r: Receipt, d: Diagnosis) -> dict:
    """One agent's entry in the JSON contract."""
    return {
        "agent_id": d.agent_id,
        "verdict": d.verdict.value,
        "reason": d.reason,
        "exit_code": d.exit_code,
        "next_action": d.next_action.title,
        "next_command": d.next_action.command,
        "expires_at": d.expires_at.isoformat(),
        "expired": d.expired,
        "diagnosis": d.model_dump(mode="json"),
        "receipt": r.model_dump(mode="json"),
    }


def to_json(pairs: list[tuple[Receipt, Diagnosis]]) -> str:
    """The whole contract as pretty JSON text."""
    doc = {
        "clawprobe": __version__,
        "schema_version": SCHEMA_VERSION,
        "exit_code": worst_exit_code([d.exit_code for _, d in pairs]),
        "receipts": [entry(r, d) for r, d in pairs],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _age(at: datetime, now: datetime) -> str:
    s = (now - at).total_seconds()
    return f"{s:.0f} s ago" if s >= 0 else f"in {-s:.0f} s"


def to_text(pairs: list[tuple[Receipt, Diagnosis]], now: datetime | None = None) -> str:
    """Plain text for a terminal where the dashboard cannot run: verdict, evidence, modes, next action."""
    lines: list[str] = []
    for r, d in pairs:
        at = now or d.checked_at
        tag = f" · {d.reason}" if d.reason else ""
        lines.append(f"agent {d.agent_id}: {d.verdict.value.upper()}{tag} — {d.title} (exit {d.exit_code})")
        for ev in d.evidence:
            lines.append(f"  evidence: {ev}")
        for c in d.disagreements:
            lines.append(f"  {c.tool} says {c.claim!r}, measured {c.measured!r} — clawprobe follows the measurement")
        for w in d.warnings:
            lines.append(f"  warning [{w.tag}]: {w.message}")
        for m in d.modes:
            mark = "*" if m.configured else " "
            cells = "  ".join(f"{k}={getattr(m, k).state}" for k in ("fresh", "vectors", "models", "canary"))
            lines.append(f"  {mark}{m.mode:<8} {'ready' if m.ready else 'not ready':<9}  {cells}")
        lines.append(f"  next: {d.next_action.title}")
        if d.next_action.command:
            lines.append(f"        $ {d.next_action.command}")
        if d.next_action.dont:
            lines.append(f"  don't: {d.next_action.dont}")
        state = "EXPIRED at" if d.expired else "valid until"
        lines.append(f"  receipt: checked {_age(d.checked_at, at)}, {state} {d.expires_at.isoformat()}")
    return "\n".join(lines)
