"""Receipt expiry (spec §7): a receipt stops being current when the freshness lease it rests on ends, or when
any input it rests on changes — config hash, QMD version, effective backend, search mode, canary hash, lease.

This module is the one place that decides it. :func:`decide` gives an :class:`Expiry` (the facts and the
verdict "expired or not"); :meth:`Expiry.at` re-decides the same receipt at a later clock reading (the
dashboard's flip, ``replay`` judged at the check time but printed now). Every view — ``check``/``replay``
text and ``--json``, the dashboard header and banner — renders ``Diagnosis.expiry`` and never compares
times itself.

What can expire by time is the *lease claim* (:data:`LeaseClaim`):

* ``lease`` — the index was proven current and the lease was still running at check time; the receipt
  expires the moment ``judged_at`` passes ``lease_ends_at`` (strictly later: at the end itself it holds);
* ``ended`` — the lease had already ended at check time (a stale index): the verdict already says so and
  there is no freshness claim left to expire;
* ``none`` — nothing proved the index current: no claim either.

An input change expires any receipt, whatever its claim.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.durations import human_duration
from clawprobe.core.lease import lease_ends
from clawprobe.core.receipt import Receipt

ExpiryInput = Literal["config hash", "qmd version", "effective backend", "search mode", "memory tool", "canary hash",
                      "lease seconds"]
LeaseClaim = Literal["lease", "ended", "none"]


class InputChange(BaseModel):
    """One input that differs between the receipt (``saved``) and a newer measurement of the same agent
    (``current``, checked at ``current_checked_at``). ``None`` is an unmeasured value."""

    model_config = ConfigDict(extra="forbid")
    input: ExpiryInput
    saved: str | None
    current: str | None
    current_checked_at: datetime

    @property
    def line(self) -> str:
        """``config hash changed: 3f2a… → 9c1d…``"""
        return f"{self.input} changed: {self.saved} → {self.current}"

    @property
    def brief(self) -> str:
        """The same change in few columns (a header line): ``config hash 3f2a1b9c… → 9c1d2e3f…`` — a hash cut
        to 8 characters, an unmeasured value as ``?``."""
        return f"{self.input} {_short(self.saved)} → {_short(self.current)}"


def _short(value: str | None) -> str:
    if value is None:
        return "?"
    return value[:8] + "…" if len(value) > 12 and all(c in "0123456789abcdef" for c in value) else value


class Expiry(BaseModel):
    """Whether a receipt is still current at ``judged_at``, and why not.

    ``lease_ends_at`` is when the lease running at check time ends (``None`` unless ``claim == "lease"``);
    ``lease_ended`` is true once ``judged_at`` is past it. ``changes`` are the inputs that changed compared
    with a newer receipt of the same agent (empty when none was available: ``compared_with`` is ``None``).
    ``expired`` = ``lease_ended`` or any change; ``reasons`` are the same facts as lines, the lease first:
    ``the lease ended at 2026-11-30T03:05:00Z, 1 d 17 h ago``, ``config hash changed: a → b``.
    """

    model_config = ConfigDict(extra="forbid")
    judged_at: datetime
    claim: LeaseClaim
    lease_ends_at: datetime | None = None
    lease_ended: bool = False
    compared_with: datetime | None = None
    changes: list[InputChange] = Field(default_factory=list)
    expired: bool = False
    reasons: list[str] = Field(default_factory=list)

    def at(self, clock: datetime) -> Expiry:
        """The same receipt's expiry decided at ``clock`` instead (the input changes are kept)."""
        return _build(clock, self.claim, self.lease_ends_at, self.compared_with, self.changes)


def inputs(r: Receipt) -> dict[ExpiryInput, str | None]:
    """The inputs a receipt's claim rests on (field → value), all taken from the receipt itself — in the order
    a change is said: the ones in words first, the config hash (which any config edit changes) last."""
    return {
        "effective backend": r.backend.effective,
        "search mode": r.config.search_mode,
        "memory tool": memory_tool(r),
        "qmd version": r.qmd.version,
        "canary hash": r.canary.content_sha256,
        "lease seconds": f"{r.lease.seconds:g}",
        "config hash": r.config.hash,
    }


def memory_tool(r: Receipt) -> str | None:
    """Whether the agent's tool policy gives it ``memory_search``, as the receipt measured it (source: the config's
    tool policy, :mod:`clawprobe.core.probes.tool_policy`): ``available``, the key that takes it, or ``not
    evaluated``; ``None`` when the config could not be read. A receipt saved before the policy was measured reads
    ``available`` (what it then proved with the CLI's search). The policy is outside the memory-config hash, so an
    edit that takes the tool expires a saved claim through this input alone."""
    c = r.config
    if c.hash is None:
        return None
    return c.tool_off or ("not evaluated" if c.tool_unknown else "available")


def changes(saved: Receipt, current: Receipt) -> list[InputChange]:
    """Every input that differs between a saved receipt and a newer measurement, in :func:`inputs` order."""
    a, b = inputs(saved), inputs(current)
    return [InputChange(input=k, saved=a[k], current=b[k], current_checked_at=current.checked_at)
            for k in a if a[k] != b[k]]


def input_changes(saved: Receipt, current: Receipt) -> list[str]:
    """Human lines naming every input that differs between a saved receipt and a fresh measurement."""
    return [c.line for c in changes(saved, current)]


def lease_claim(r: Receipt) -> tuple[LeaseClaim, datetime | None]:
    """What time-bound claim ``r`` makes (module doc) and, for ``lease``, when it ends."""
    lpc = r.freshness.last_proven_current
    if lpc is None:
        return "none", None
    ends = lease_ends(lpc, r.lease)
    return ("lease", ends) if ends > r.checked_at else ("ended", None)


def decide(r: Receipt, judged_at: datetime, current: Receipt | None = None) -> Expiry:
    """Is ``r`` still current at ``judged_at``? ``current``: a newer receipt of the same agent to compare the
    inputs with (ignored when it is ``r`` itself, another agent's, or not newer). Pure."""
    claim, ends = lease_claim(r)
    compare = (current is not None and current is not r and current.agent_id == r.agent_id
               and current.checked_at > r.checked_at)
    found = changes(r, current) if compare and current is not None else []
    return _build(judged_at, claim, ends, current.checked_at if compare and current is not None else None, found)


def superseded(shown: Receipt, new: Receipt) -> Expiry | None:
    """The expiry of ``shown`` (the receipt a view showed) once ``new``, a newer receipt of the same agent,
    measured different inputs: decided at ``new.checked_at`` — the moment ``shown`` stopped being current —
    with ``compared_with`` set to it and the changed inputs in ``changes``. ``None`` when no input changed,
    or ``new`` is not a newer receipt of the same agent. A value ``shown`` had not measured (``None``: the
    ``openclaw`` CLI lane had not run yet, no canary was planted) is new evidence, not a changed input; once the
    config cannot be read (its hash ``→ ?``), what ``new`` could not measure because of it is not said either
    (``qmd version 2.8.3 → ?`` while qmd did not change): the config is the change.
    Pure; the live dashboard's header renders it (``clawprobe.tui.state.AgentView.superseded``)."""
    e = decide(shown, new.checked_at, new)
    unreadable = shown.config.hash is not None and new.config.hash is None
    found = [c for c in e.changes if c.saved is not None
             and not (unreadable and c.current is None and c.input != "config hash")]
    if not found:
        return None
    return _build(new.checked_at, e.claim, e.lease_ends_at, e.compared_with, found)


def in_effect(baseline: Receipt, new: Receipt, kept: Expiry | None = None) -> Expiry | None:
    """The input change in effect once ``new`` is measured: ``new`` compared with ``baseline`` — the last
    receipt before a change that is still in effect, or the receipt shown before when none is
    (:func:`superseded`, so always the latest inputs against the same reference). ``None`` once ``new``'s
    inputs equal the baseline's again (the change was undone). ``kept``, the change in effect until now, is
    returned unchanged when it names the same changes (input, old, new): its time stays when they began."""
    x = superseded(baseline, new)
    if x is not None and kept is not None and _names(x) == _names(kept):
        return kept
    return x


def _names(x: Expiry) -> list[tuple[str, str | None, str | None]]:
    return [(c.input, c.saved, c.current) for c in x.changes]


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _build(judged_at: datetime, claim: LeaseClaim, ends: datetime | None, compared_with: datetime | None,
           found: list[InputChange]) -> Expiry:
    ended = claim == "lease" and ends is not None and judged_at > ends
    reasons = [f"the lease ended at {_iso(ends)}, {human_duration((judged_at - ends).total_seconds())} ago"
               ] if ended and ends is not None else []
    reasons += [c.line for c in found]
    return Expiry(judged_at=judged_at, claim=claim, lease_ends_at=ends, lease_ended=ended,
                  compared_with=compared_with, changes=list(found), expired=bool(reasons), reasons=reasons)
