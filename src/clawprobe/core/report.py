"""The JSON contract and the plain-text rendering shared by every command that prints diagnoses.

JSON (``--json``)::

    {"clawprobe": "0.1.0", "schema_version": 1, "exit_code": <worst>,
     "receipts": [{"agent_id", "verdict", "reason", "exit_code", "next_action", "next_command", "expires_at",
                   "expired", "expired_because", "diagnosis": {...}, "receipt": {...}}],
     "errors": [{"agent_id", "exit_code": 3, "reason"}]}

``errors`` lists the agents whose probe could not run at all (no verdict; exit 3 each), so one agent's
failure never discards the other agents' receipts; ``agent_id`` is ``null`` when the whole check could not
run (then ``receipts`` is empty). ``exit_code`` is the worst over both lists. ``expired`` and
``expired_because`` are ``diagnosis.expiry``'s decision (:mod:`clawprobe.core.expiry`) — the same one the
text's ``receipt:`` line states.

Every human-readable line clawprobe prints goes through :func:`printable` (C0/C1 control characters from
receipts, configs or file names are shown as ``\\x1b``-style escapes, never sent to the terminal);
:func:`dumps` is the JSON writer (``json.dumps`` plus escapes for DEL and C1, which JSON allows raw).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from clawprobe.core import __version__
from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.durations import human_ages, human_duration
from clawprobe.core.expiry import Expiry
from clawprobe.core.ledger_shown import shown as ledger_shown
from clawprobe.core.receipt import SCHEMA_VERSION, Receipt
from clawprobe.core.verdicts import worst_exit_code
from clawprobe.core.view import COLUMNS, AgentFacts, agent_facts, reason_words

JUST_NOW_S = 60.0  #: a receipt checked at most this long before the clock reads as "just checked"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_JSON_RAW = re.compile(r"[\x7f-\x9f\ud800-\udfff]")


class ProbeFailure(BaseModel):
    """A probe that produced no receipt: ``agent_id`` is the agent whose probe raised (``reason``: the
    exception's type and text), or ``None`` when the whole check could not run (no install, bad input)."""

    model_config = ConfigDict(extra="forbid")
    agent_id: str | None = None
    reason: str
    exit_code: int = 3


def printable(text: str) -> str:
    """``text`` safe for a terminal: every C0 control character except newline and tab, DEL, and every
    C1 control character (U+0080–U+009F) becomes a visible ``\\xNN`` escape (so ``ESC]52;…BEL`` cannot
    write the clipboard and ``ESC[2J`` cannot clear the screen). A lone surrogate — how Python decodes a
    file name that is not UTF-8 (``os.fsdecode``: byte 0xE9 → U+DCE9) — becomes the byte it stands for,
    ``\\xe9``, as ``ls -b`` shows it (other lone surrogates ``\\udNNN``): it can be written in any encoding
    and never reaches the terminal as a raw byte. Everything else is kept as is."""
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def dumps(doc: Any) -> str:
    """``doc`` as pretty JSON (UTF-8 kept readable); C0 is escaped by ``json`` itself, DEL, C1 and lone
    surrogates (a non-UTF-8 file name, ``os.fsdecode``) here as ``\\uNNNN`` (they can only occur inside
    strings, so the value is unchanged: ``json.loads`` gives back the same ``str``, ``os.fsencode`` the same
    bytes). The text is therefore always encodable as UTF-8."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
        "expired_because": list(d.expired_because),
        "diagnosis": d.model_dump(mode="json"),
        "receipt": r.model_dump(mode="json"),
    }


def exit_code_of(pairs: Sequence[tuple[Receipt, Diagnosis]], failures: Sequence[ProbeFailure] = ()) -> int:
    """The process exit code: the worst of every diagnosis and every failed probe (3 when there is none)."""
    return worst_exit_code([d.exit_code for _, d in pairs] + [f.exit_code for f in failures])


def to_json(pairs: Sequence[tuple[Receipt, Diagnosis]], failures: Sequence[ProbeFailure] = ()) -> str:
    """The whole contract as pretty JSON text (see the module docstring)."""
    doc = {
        "clawprobe": __version__,
        "schema_version": SCHEMA_VERSION,
        "exit_code": exit_code_of(pairs, failures),
        "receipts": [entry(r, d) for r, d in pairs],
        "errors": [f.model_dump(mode="json") for f in failures],
    }
    return dumps(doc)


def _expiry(d: Diagnosis, at: datetime) -> Expiry:
    """``d``'s expiry as decided at ``at`` (the diagnosis' own decision when it was made at ``at``)."""
    return d.expiry if d.expiry.judged_at == at else d.expiry.at(at)


def _changed(e: Expiry) -> str:
    return "; ".join(c.line for c in e.changes)


def _validity(d: Diagnosis, at: datetime) -> str:
    """``valid until E (N left)`` / ``EXPIRED at E (…)`` / ``EXPIRED: config hash changed …`` as decided at ``at``
    by :mod:`clawprobe.core.expiry` (never re-judged here)."""
    e = _expiry(d, at)
    if e.lease_ended and e.lease_ends_at is not None:
        also = f"; {_changed(e)}" if e.changes else ""
        return (f"EXPIRED at {_iso(e.lease_ends_at)} (the lease ended "
                f"{human_duration((at - e.lease_ends_at).total_seconds())} earlier){also}")
    if e.expired:
        seen = f" (measured {_iso(e.compared_with)})" if e.compared_with else ""
        return f"EXPIRED: {_changed(e)}{seen}"
    if e.claim == "none":
        return "no lease: nothing proved the index current"
    if e.claim == "ended":
        return (f"the lease had ended at {_iso(d.expires_at)}, "
                f"{human_duration((d.checked_at - d.expires_at).total_seconds())} before the check")
    return f"valid until {_iso(d.expires_at)} ({human_duration((d.expires_at - at).total_seconds())} left)"


def receipt_line(d: Diagnosis, now: datetime | None = None, clock: datetime | None = None) -> str:
    """The ``receipt:`` line: which time the verdict was judged at, how old the receipt is, its expiry.

    ``now``: the time the diagnosis was judged at (``None``: the receipt's own check time, as
    :func:`clawprobe.core.diagnosis.diagnose` does by default). ``clock``: the wall clock when printing (``None``:
    unknown, so the age is not stated) — with ``now=None`` and a receipt older than :data:`JUST_NOW_S`,
    the line says it was judged at the check time, how old it is at the clock and whether it has expired
    at the clock, and points at ``--now now``. Whether it expired is ``diagnosis.expiry``'s decision (at the
    clock). Pure: durations are human (``1 d 4 h``, ``17 min``, ``42 s``).
    """
    checked = _iso(d.checked_at)
    if now is not None:
        ago = (now - d.checked_at).total_seconds()
        when = f"{human_duration(ago)} before" if ago >= 0 else f"{human_duration(ago)} after"
        return f"receipt: judged at {_iso(now)}; checked {checked}, {when}; {_validity(d, now)}"
    age = (clock - d.checked_at).total_seconds() if clock is not None else 0.0
    if clock is None or abs(age) <= JUST_NOW_S:
        return f"receipt: checked {checked}, {_validity(d, d.checked_at)}"
    if age < 0:
        return (f"receipt: judged at the receipt's check time {checked}, {human_duration(age)} in the future "
                f"of this clock; {_validity(d, d.checked_at)}")
    e = _expiry(d, clock)
    old = f"receipt: judged at the receipt's check time {checked}; it is now {human_duration(age)} old and"
    if e.expired:
        why = [f"valid until {_iso(e.lease_ends_at)}"] if e.lease_ended and e.lease_ends_at is not None else []
        why += [c.line for c in e.changes]
        return f"{old} expired ({'; '.join(why)}) — use --now now to judge it at the clock"
    if e.claim == "lease":
        return (f"{old} still valid until {_iso(d.expires_at)} "
                f"({human_duration((d.expires_at - clock).total_seconds())} left)")
    return f"receipt: judged at the receipt's check time {checked}; it is now {human_duration(age)} old; " \
           f"{_validity(d, d.checked_at)}"


def failure_text(f: ProbeFailure) -> str:
    """One line for an agent whose probe could not run (or for the whole check, ``agent_id=None``)."""
    who = f"agent {f.agent_id}: COULD NOT PROBE" if f.agent_id is not None else "clawprobe check could not run"
    return printable(f"{who} — {f.reason} (exit {f.exit_code})")


def fact_lines(f: AgentFacts) -> list[str]:
    """The per-fact lines of one agent (mode rows, pending, canary) — the same facts the dashboard's panes
    show (:func:`clawprobe.core.view.agent_facts`)."""
    lines = []
    for m in f.rows:
        star = "*" if m.configured else " "
        if m.state == "idle":
            lines.append(f"  {star}{m.label:<8} {m.words}")
            continue
        cells = "  ".join(f"{k}={m.said(i)}" for i, k in enumerate(COLUMNS))  # blocked: never ok (pane 2)
        lines.append(f"  {star}{m.label:<8} {m.words:<9}  {cells}")
    if f.not_serving:
        lines.append(f"  modes: no QMD mode is ready — {f.not_serving}")
    if f.gates:
        lines.append("  gates:  " + "  ".join(f"{g.name}={g.state}" for g in f.gates))
        lines += [f"    {g.name}: {g.state} — {g.words}" for g in f.gates if g.state == "fail"]
    if f.chats:
        lines.append("  agent searches: " + " · ".join(f"{c.words} ({c.state})" for c in f.chats))
    lines.append(f"  pending: {f.pending.state} — {f.pending.words}")
    lines.append(f"  canary: {f.canary.state} — {f.canary.words}")
    lines.append(f"  coverage: {f.coverage.state} — {f.coverage.words}")
    return lines


def to_text(pairs: Sequence[tuple[Receipt, Diagnosis]], now: datetime | None = None, *,
            clock: datetime | None = None, failures: Sequence[ProbeFailure] = ()) -> str:
    """Plain text for a terminal where the dashboard cannot run: verdict, evidence, the evidence ledger's
    unrecognized and benign entries (with their source and why), modes, next action, and
    the receipt line (:func:`receipt_line` with ``now``/``clock``); then one line per failed probe.
    Passed through :func:`printable`."""
    lines: list[str] = []
    for r, d in pairs:
        tag = f" · {reason_words(d.reason, d.verdict)}" if d.reason else ""  # words: the ids are in --json
        lines.append(f"agent {d.agent_id}: {d.title}{tag} (exit {d.exit_code})")
        for ev in d.evidence:  # ages in words (``12 min ago``); --json keeps the seconds
            lines.append(f"  evidence: {human_ages(ev)}")
        for c in d.disagreements:
            lines.append(f"  {c.tool} says {c.claim!r}, measured {c.measured!r} — clawprobe follows the measurement")
        for w in d.warnings:
            lines.append(f"  warning ({reason_words(w.tag)}): {w.message}")
        for e in ledger_shown(r):
            if e.kind == "unrecognized":
                lines.append(f"  ledger [unrecognized] {e.where}: {e.line}{e.count} — read this; clawprobe cannot judge it")
            else:
                lines.append(f"  ledger [benign] {e.where}: {e.line}{e.count} — {e.why}")
        lines += fact_lines(agent_facts(r, d, now or d.checked_at))
        lines.append(f"  next: {d.next_action.title}")
        if d.next_action.command:
            lines.append(f"        $ {d.next_action.command}")
        if d.next_action.dont:
            lines.append(f"  don't: {d.next_action.dont}")
        lines.append(f"  {receipt_line(d, now, clock)}")
    lines += [failure_text(f) for f in failures]
    return printable("\n".join(lines))
