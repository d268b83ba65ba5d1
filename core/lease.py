"""The freshness lease: how long an index may go unproven before it counts as stale.

lease = update interval + normal update duration + margin (spec §3). Every part is an explicit input
recorded in the receipt with its source, so a lease can never be extended silently: a longer lease is a
different receipt input, visible in the diff between two receipts.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

DEFAULT_INTERVAL_S = 300.0  # OpenClaw's documented memory.qmd.update.interval default ("5m")
DEFAULT_UPDATE_DURATION_S = 60.0  # clawprobe's allowance for one normal update when none was measured
DEFAULT_MARGIN_S = 60.0  # clawprobe's default tolerance


class Lease(BaseModel):
    """A freshness lease in seconds, built from three explicit parts.

    ``interval_source`` / ``duration_source`` / ``margin_source`` say where each part came from
    (``memory.qmd.update.interval``, ``log: qmd sync completed durationMs``, ``clawprobe default``).
    The defaults give OpenClaw's default QMD lease: 300 + 60 + 60 = 420 s.
    """

    model_config = ConfigDict(extra="forbid")

    interval_s: float = Field(DEFAULT_INTERVAL_S, ge=0)
    update_duration_s: float = Field(DEFAULT_UPDATE_DURATION_S, ge=0)
    margin_s: float = Field(DEFAULT_MARGIN_S, ge=0)
    interval_source: str = "OpenClaw default (memory.qmd.update.interval = 5m)"
    duration_source: str = "clawprobe default"
    margin_source: str = "clawprobe default"

    @model_validator(mode="before")
    @classmethod
    def _drop_dumped_total(cls, data: object) -> object:
        """Accept a dumped lease: ``seconds`` is derived, so it must equal the sum of the parts if present.

        Raises ``ValueError`` when it does not — a total that disagrees with its parts is a silent extension.
        """
        if isinstance(data, dict) and "seconds" in data:
            data = dict(data)
            total = data.pop("seconds")
            parts = sum(float(data.get(k, d)) for k, d in (("interval_s", DEFAULT_INTERVAL_S),
                        ("update_duration_s", DEFAULT_UPDATE_DURATION_S), ("margin_s", DEFAULT_MARGIN_S)))
            if not isinstance(total, (int, float)) or abs(float(total) - parts) > 1e-6:
                raise ValueError(f"lease seconds {total!r} is not the sum of its parts ({parts:g} s)")
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def seconds(self) -> float:
        """The whole lease in seconds (the sum of the three parts)."""
        return self.interval_s + self.update_duration_s + self.margin_s


def age_seconds(last_proven_current: datetime, now: datetime) -> float:
    """Seconds from ``last_proven_current`` to ``now`` (negative when the clock runs behind the evidence)."""
    return (now - last_proven_current).total_seconds()


def is_stale(age_s: float, lease: Lease) -> bool:
    """Stale iff the age is strictly greater than the lease: with a 420 s lease, 420 s is fresh, 421 s stale."""
    return age_s > lease.seconds


def lease_ends(last_proven_current: datetime, lease: Lease) -> datetime:
    """The moment the index turns stale unless a new update is proven. A lease that would end past the
    last representable time (an infinite lease, or evidence dated near year 9999) ends at that time."""
    try:
        return last_proven_current + timedelta(seconds=lease.seconds)
    except OverflowError:
        return datetime.max.replace(tzinfo=last_proven_current.tzinfo)


def seconds_left(last_proven_current: datetime | None, lease: Lease, now: datetime) -> float | None:
    """Seconds until stale (0 once stale); ``None`` when nothing proved the index current."""
    if last_proven_current is None:
        return None
    return max(0.0, lease.seconds - age_seconds(last_proven_current, now))
