"""What the dashboard tests share: the demo's reference time, a clock the test moves by hand, a widget's
rendered text, a wait for a condition in a running App and a walk through every demo scenario's panes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

T0 = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand (``clock.t += timedelta(...)``); calling it returns the time."""

    def __init__(self, t: datetime = T0) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t


def text(app: Any, selector: str) -> str:
    """What the widget at ``selector`` of a running App renders, as plain text."""
    return str(app.query_one(selector).render())


async def wait_for(pilot: Any, cond: Callable[[], bool], timeout: float = 90.0, what: str = "condition") -> None:
    """Let the App run until ``cond()`` holds (probes run in real threads; the host may be busy)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        await pilot.pause(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


async def demo_panes(app: Any, pilot: Any) -> AsyncIterator[Any]:
    """Each demo scenario in turn (``clawprobe.tui.demo.Scenario``) with its panes on screen — with several
    agents, the overview that opens first is entered (its worst agent) — then ``n`` to the next one. The App
    must start on the first scenario (``demo_index=0``)."""
    from clawprobe.tui import demo

    for s in demo.scenarios():
        await pilot.pause()
        if len(app.report.agents) > 1:
            await pilot.press("enter")
            await pilot.pause()
        yield s
        await pilot.press("n")
