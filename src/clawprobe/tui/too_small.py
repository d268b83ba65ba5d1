"""The smallest terminal the dashboard draws on, and the one notice every screen shows below it (the panes
and the agents overview say the same words)."""

from __future__ import annotations

MIN_SIZE = (80, 24)  #: below this a screen's content gives way to a "terminal too small" notice


def too_small(width: int, height: int) -> str | None:
    """The notice for a ``width``×``height`` terminal, or ``None`` when it is at least :data:`MIN_SIZE`."""
    if width >= MIN_SIZE[0] and height >= MIN_SIZE[1]:
        return None
    return (f"terminal too small: {width}×{height} — clawprobe needs {MIN_SIZE[0]}×{MIN_SIZE[1]} "
            "(resize, or run `clawprobe check` for plain text)")
