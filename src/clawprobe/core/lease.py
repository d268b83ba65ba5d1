"""The freshness lease: how long an index may go unproven before it counts as stale.

lease = update interval + normal update duration + margin (spec §3). Every part is an explicit input
recorded in the receipt with its source, so a lease can never be extended silently: a longer lease is a
different receipt input, visible in the diff between two receipts.

Every duration clawprobe records (:data:`Seconds`) is a finite JSON number of seconds, ``0 ≤ s ≤``
:data:`MAX_DURATION_S` (30 days). Nothing clawprobe measures or OpenClaw schedules is longer — Node's timers
cannot even wait longer than 2³¹−1 ms ≈ 24.9 days — so a larger value (``1e308``, ``inf``) is a corrupt
input, refused rather than turned into a lease that is "valid until 9999-12-31".
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, Strict, computed_field, model_validator

DEFAULT_INTERVAL_S = 300.0  # OpenClaw's documented memory.qmd.update.interval default ("5m")
DEFAULT_UPDATE_DURATION_S = 60.0  # clawprobe's allowance for one normal update when none was measured
DEFAULT_MARGIN_S = 60.0  # clawprobe's default tolerance
MAX_DURATION_S = 30 * 86_400.0  # 2 592 000 s: the upper bound of every recorded duration, each lease part too

Seconds = Annotated[float, Strict(), Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False)]
"""A duration in seconds: a JSON number (an integer is fine; a bool or a string is not), finite,
``0 ≤ s ≤ MAX_DURATION_S``. The JSON Schema shows ``minimum``/``maximum``."""


class Lease(BaseModel):
    """A freshness lease in seconds, built from three explicit parts, each a :data:`Seconds` (≤ 30 days).

    ``interval_source`` / ``duration_source`` / ``margin_source`` say where each part came from
    (``memory.qmd.update.interval``, ``log: qmd sync completed durationMs``, ``clawprobe default``).
    The defaults give OpenClaw's default QMD lease: 300 + 60 + 60 = 420 s. Raises ``ValidationError`` for a
    part that is not a finite number in range, and for a dumped ``seconds`` total that is not their sum.
    """

    model_config = ConfigDict(extra="forbid")

    interval_s: Seconds = DEFAULT_INTERVAL_S
    update_duration_s: Seconds = DEFAULT_UPDATE_DURATION_S
    margin_s: Seconds = DEFAULT_MARGIN_S
    interval_source: str = "OpenClaw default (memory.qmd.update.interval = 5m)"
    duration_source: str = "clawprobe default"
    margin_source: str = "clawprobe default"

    @model_validator(mode="wrap")
    @classmethod
    def _check_dumped_total(cls, data: Any, handler: ModelWrapValidatorHandler[Lease]) -> Lease:
        """Accept a dumped lease: ``seconds`` is derived, so if present it must equal the sum of the parts
        (validated first). Raises ``ValueError`` when it does not — a total that disagrees with its parts is
        a silent extension."""
        total: Any = None
        has_total = isinstance(data, dict) and "seconds" in data
        if has_total:
            data = dict(data)
            total = data.pop("seconds")
        lease = handler(data)
        if has_total:
            try:
                off = abs(float(total) - lease.seconds) if not isinstance(total, bool) else math.inf
            except (TypeError, ValueError, OverflowError):
                off = math.inf
            if not off <= 1e-6:  # also refuses NaN
                raise ValueError(f"lease seconds {repr(total)[:40]} is not the sum of its parts ({lease.seconds:g} s)")
        return lease

    @computed_field  # type: ignore[prop-decorator]
    @property
    def seconds(self) -> float:
        """The whole lease in seconds (the sum of the three parts, so at most 3 × ``MAX_DURATION_S``)."""
        return self.interval_s + self.update_duration_s + self.margin_s


def age_seconds(last_proven_current: datetime, now: datetime) -> float:
    """Seconds from ``last_proven_current`` to ``now`` (negative when the clock runs behind the evidence)."""
    return (now - last_proven_current).total_seconds()


def proven_words(stale_reason: str | None, *, last: bool = True) -> str:
    """What the freshness time is, said before it: ``last proven current`` (``last=False``: ``proven current``), but
    for an index never built (``stale_reason`` ``never_indexed``) ``notes waiting since`` — the time is then the
    notes' (they start the lease) and nothing ever proved an index current (breaker round 24). The one wording
    for the check's evidence, the modes table and the dashboard's pane 3."""
    if stale_reason == "never_indexed":
        return "notes waiting since"
    return "last proven current" if last else "proven current"


def is_stale(age_s: float, lease: Lease) -> bool:
    """Stale iff the age is strictly greater than the lease: with a 420 s lease, 420 s is fresh, 421 s stale."""
    return age_s > lease.seconds


def lease_ends(last_proven_current: datetime, lease: Lease) -> datetime:
    """The moment the index turns stale unless a new update is proven. A lease that would end past the
    last representable time (evidence dated near year 9999) ends at that time."""
    try:
        return last_proven_current + timedelta(seconds=lease.seconds)
    except OverflowError:
        return datetime.max.replace(tzinfo=last_proven_current.tzinfo)


def seconds_left(last_proven_current: datetime | None, lease: Lease, now: datetime) -> float | None:
    """Seconds until stale, ``0 ≤ left ≤ lease.seconds`` (0 once stale); ``None`` when nothing proved the
    index current. Evidence a little newer than ``now`` (clock skew, see ``clawprobe.core.receipt.CLOCK_SKEW_S``)
    counts as age 0: a lease never has more than its whole length left."""
    if last_proven_current is None:
        return None
    return min(lease.seconds, max(0.0, lease.seconds - age_seconds(last_proven_current, now)))
