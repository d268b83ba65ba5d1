"""The smallest terminal the dashboard draws on, and the one notice every screen shows below it (the panes
and the agents overview say the same words)."""

from __future__ import annotations

MIN_SIZE = (80, 24)  #: below this a screen's content gives way to a "terminal too small" notice
COMMAND = "$ clawprobe check"  #: on a line of its own, so no width wraps it in two


def too_small(width: int, height: int) -> str | None:
    """The notice for a ``width``×``height`` terminal, or ``None`` when it is at least :data:`MIN_SIZE`: what is
    wrong, then the way out, the command alone on the last line (copied from the screen, it is whole)."""
    if width >= MIN_SIZE[0] and height >= MIN_SIZE[1]:
        return None
    return (f"terminal too small: {width}×{height} — clawprobe needs {MIN_SIZE[0]}×{MIN_SIZE[1]}\n"
            f"resize, or for plain text run:\n{COMMAND}")
