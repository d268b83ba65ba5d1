"""From a receipt to a diagnosis: the verdict, the rule that fired, its evidence, per-mode readiness,
the next repair action, the exit code and when the receipt expires."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.expiry import Expiry, decide
from clawprobe.core.lease import lease_ends, seconds_left
from clawprobe.core.modes import Gate, ModeReadiness, builtin_gates, mode_readiness
from clawprobe.core.receipt import Finding, Receipt, StatusClaim
from clawprobe.core.repairs import RepairAction, repair_for
from clawprobe.core.rules import RULES, Match
from clawprobe.core.verdicts import Verdict, exit_code, title_of


class Lapsed(BaseModel):
    """What a healthy receipt says once the lease it rests on has ended and nothing re-proved the index: the
    verdict, rule, sub-reason, next action and exit code the ladder gives it just past the lease end — what
    ``replay --now`` says of the same receipt then (stale_index). Decided once, at :func:`diagnose`."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    title: str
    rule: int
    reason: str | None
    next_action: RepairAction
    exit_code: int


class Diagnosis(BaseModel):
    """The verdict for one agent.

    ``rule`` is the 1-based position of the rule that fired in the precedence ladder; ``reason`` its
    sub-reason tag; ``title`` the verdict's title for that sub-reason
    (:func:`clawprobe.core.verdicts.title_of`); ``evidence`` the facts it used. ``expires_at`` is when the lease ends (or
    ``checked_at`` when nothing proved the index current). ``expiry`` is the one decision whether the
    receipt is still current (:func:`clawprobe.core.expiry.decide`: the lease that ran at check time ended,
    at what time, or which input changed, old → new); ``expired``/``expired_because`` repeat its verdict
    and reason lines. Re-decide it at another clock with :func:`at_clock`. ``gates`` are the builtin
    engine's readiness gates (:func:`clawprobe.core.modes.builtin_gates`; empty for QMD). ``lapsed`` is what a
    healthy receipt with a running lease says once that lease has ended (:class:`Lapsed`; ``None`` otherwise):
    :func:`claim_exit_code` and :func:`claim_action` read it. ``warnings`` are
    the receipt's findings less any the rule already quoted as evidence (each state said once).
    """

    model_config = ConfigDict(extra="forbid")
    agent_id: str
    verdict: Verdict
    title: str
    rule: int
    reason: str | None
    evidence: list[str]
    modes: list[ModeReadiness]
    next_action: RepairAction
    exit_code: int
    checked_at: datetime
    expires_at: datetime
    expiry: Expiry
    expired: bool = False
    expired_because: list[str] = Field(default_factory=list)
    lease_seconds: float
    lease_seconds_left: float | None
    warnings: list[Finding] = Field(default_factory=list)
    disagreements: list[StatusClaim] = Field(default_factory=list)
    gates: list[Gate] = Field(default_factory=list)
    lapsed: Lapsed | None = None

    @property
    def summary(self) -> str:
        """One line: verdict words, sub-reason and the first evidence line."""
        tag = f" · {self.reason}" if self.reason else ""
        first = f" — {self.evidence[0]}" if self.evidence else ""
        return f"{self.title}{tag}{first}"


def expires_at(r: Receipt) -> datetime:
    """When the receipt's claim ends: the end of the lease, or at once when nothing proved freshness."""
    lpc = r.freshness.last_proven_current
    return lease_ends(lpc, r.lease) if lpc is not None else r.checked_at


def _first_match(r: Receipt, at: datetime) -> tuple[int, Verdict, Match]:
    """The first rule of the ladder that matches: its 1-based position, verdict and match."""
    for position, (verdict, rule) in enumerate(RULES, start=1):
        m = rule(r, at)
        if m is not None:
            return position, verdict, m
    raise AssertionError("no rule matched")  # pragma: no cover — ``healthy``, the last rule, always matches


def diagnose(r: Receipt, now: datetime | None = None, *, clock: datetime | None = None,
             current: Receipt | None = None, openclaw: str | None = None, state_dir: str | None = None,
             clawprobe: str | None = None) -> Diagnosis:
    """Evaluate the rules in precedence order on ``r`` at ``now`` (default: ``r.checked_at``).

    Expiry is decided at ``clock`` (default: the judging time) against ``current``, a newer receipt of the
    same agent when one is available (``replay`` of a history: the agent's newest). ``replay`` without
    ``--now`` judges the verdict at the check time and the expiry at the wall clock.
    Pure: no I/O, no clock read. ``openclaw``/``state_dir``/``clawprobe`` only fill the repair commands
    (``openclaw`` and ``clawprobe``: the command lines of ``clawprobe.core.locate.command_lines``).
    """
    at = now or r.checked_at
    position, verdict, m = _first_match(r, at)
    exp = expires_at(r)
    expiry = decide(r, clock or at, current)
    repair = {"openclaw": openclaw, "state_dir": state_dir, "clawprobe": clawprobe}
    return Diagnosis(
        agent_id=r.agent_id,
        verdict=verdict,
        title=title_of(verdict, m.reason),
        rule=position,
        reason=m.reason,
        evidence=m.evidence,
        modes=mode_readiness(r, at),
        gates=builtin_gates(r),
        next_action=repair_for(verdict, m.reason, r, **repair),
        exit_code=exit_code(verdict),
        checked_at=r.checked_at,
        expires_at=exp,
        expiry=expiry,
        expired=expiry.expired,
        expired_because=list(expiry.reasons),
        lease_seconds=r.lease.seconds,
        lease_seconds_left=seconds_left(r.freshness.last_proven_current, r.lease, at),
        warnings=[f for f in r.findings if f.message not in m.evidence],  # each state said once
        disagreements=[c for c in r.status_claims if not c.agrees],
        lapsed=_lapsed(r, exit_code(verdict), expiry, repair),
    )


def _lapsed(r: Receipt, code: int, expiry: Expiry, repair: dict[str, str | None]) -> Lapsed | None:
    """:class:`Lapsed` for a healthy receipt whose lease runs at check time: the ladder judged one second past
    the lease end (``None`` for any other receipt)."""
    if code != 0 or expiry.claim != "lease" or expiry.lease_ends_at is None:
        return None
    position, verdict, m = _first_match(r, expiry.lease_ends_at + timedelta(seconds=1))
    return Lapsed(verdict=verdict, title=title_of(verdict, m.reason), rule=position, reason=m.reason,
                  next_action=repair_for(verdict, m.reason, r, **repair), exit_code=exit_code(verdict))



def claim_exit_code(d: Diagnosis) -> int:
    """The exit code of what ``d`` still claims at the clock its expiry was last decided at (:func:`at_clock`):
    its verdict's, except that an expired *healthy* claim is no longer healthy — once its lease ended, what
    ``replay --now`` then says (``d.lapsed``: stale_index, 1), 3 when an input changed since (unproven until
    re-probed). The banner, the overview, ``q`` and ``check`` all read this."""
    if d.exit_code != 0 or not d.expired:
        return d.exit_code
    if d.expiry.lease_ended:
        return d.lapsed.exit_code if d.lapsed is not None else exit_code(Verdict.STALE_INDEX)
    return exit_code(Verdict.UNVERIFIED)


def claim_action(d: Diagnosis) -> RepairAction:
    """The next action for what ``d`` still claims at the clock its expiry was last decided at: once a healthy
    claim's lease has ended, the action ``replay --now`` gives (``d.lapsed``: re-prove the stale index), never
    "Nothing to repair"; otherwise ``d.next_action``."""
    if d.lapsed is not None and d.expiry.lease_ended:
        return d.lapsed.next_action
    return d.next_action


def claim_diagnosis(d: Diagnosis) -> Diagnosis:
    """``d`` as what it still claims at the clock its expiry was last decided at: once a healthy claim's lease
    has ended, the lapsed verdict (``d.lapsed``: its verdict, title, rule, sub-reason, action and exit code,
    with the lease's end as evidence) — what :func:`claim_action` and :func:`claim_exit_code` say, so a
    walkthrough started from it begins where pane 6 and ``replay --now`` are; otherwise ``d`` itself."""
    lp = d.lapsed
    if lp is None or not d.expiry.lease_ended or d.expiry.lease_ends_at is None:
        return d
    ended = d.expiry.lease_ends_at.strftime("%H:%M:%SZ")
    return d.model_copy(update={
        "verdict": lp.verdict, "title": lp.title, "rule": lp.rule, "reason": lp.reason,
        "next_action": lp.next_action, "exit_code": lp.exit_code, "lapsed": None,
        "evidence": [f"the lease ended at {ended}; nothing re-proved the index since"]})


def at_clock(d: Diagnosis, clock: datetime) -> Diagnosis:
    """``d`` with its expiry re-decided at ``clock`` (:meth:`clawprobe.core.expiry.Expiry.at`); the verdict
    stays what was measured. For a view that keeps a diagnosis on screen while time passes."""
    e = d.expiry.at(clock)
    return d.model_copy(update={"expiry": e, "expired": e.expired, "expired_because": list(e.reasons)})
