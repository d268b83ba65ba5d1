"""The smallest terminal the dashboard draws on, and the one notice every screen shows below it (the panes
and the agents overview say the same words)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

MIN_SIZE = (80, 24)  #: below this a screen's content gives way to a "terminal too small" notice
COMMAND = "clawprobe check"  #: the plain-text form of a live dashboard started without flags


def check_command(*, state_dir: str | None = None, config: str | None = None, agent: str | None = None) -> str:
    """The ``check`` that probes what a live dashboard started with these flags probes (``clawprobe --state-dir
    /srv/oc check --agent ops-bot``): without them ``check`` would probe another install."""
    words = ["clawprobe"]
    for flag, value in (("--state-dir", state_dir), ("--config", config)):
        if value:
            words += [flag, shlex.quote(value)]
    words.append("check")
    if agent:
        words += ["--agent", shlex.quote(agent)]
    return " ".join(words)


def replay_command(files: Sequence[str]) -> str:
    """The plain-text form of a dashboard replaying ``files``."""
    return " ".join(["clawprobe", "replay", *map(shlex.quote, files)])


def too_small(width: int, height: int, command: str | None = COMMAND) -> str | None:
    """The notice for a ``width``×``height`` terminal, or ``None`` when it is at least :data:`MIN_SIZE`: what is
    wrong, then the way out, ``command`` (the plain-text form of what this dashboard shows) alone on the last
    line, copied from the screen whole; ``None`` (the demo) has no plain-text form: resizing is the way out."""
    if width >= MIN_SIZE[0] and height >= MIN_SIZE[1]:
        return None
    head = f"terminal too small: {width}×{height} — clawprobe needs {MIN_SIZE[0]}×{MIN_SIZE[1]}\n"
    if command is None:
        return head + "resize to see the demo (it has no plain-text form)"
    return head + f"resize, or for plain text run:\n$ {command}"
