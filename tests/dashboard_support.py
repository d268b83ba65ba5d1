"""What the dashboard tests share: the demo's reference time and a clock the test moves by hand."""

from __future__ import annotations

from datetime import UTC, datetime

T0 = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand (``clock.t += timedelta(...)``); calling it returns the time."""

    def __init__(self, t: datetime = T0) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t
