"""The dashboard's colour theme: every ``$success``/``$warning``/``$error``/``$accent`` the styles and markup
use, chosen so the four meanings stay four colours on every terminal.

Textual's own ``textual-dark`` has ``warning`` and ``accent`` orange (``#ffa62b``) and ``error`` a muted red;
on a 16-colour terminal (``TERM=xterm``) Rich maps orange and that red to the same bright red, so a ``?``
unproven cell, the focused pane and the footer keys would read as a failure. Here, downgraded by Rich
(:func:`standard_number`): ``success`` → green, ``warning`` (``?`` unproven, ``⚠``) → yellow, ``error`` → red,
``accent`` (focus, footer keys, the command) → cyan — and in 256 colours the accent is calmer than the
verdict's level colour, so the verdict stays the strongest colour on screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.color import Color, ColorSystem
from textual.theme import Theme

if TYPE_CHECKING:
    from textual.app import App

THEME = Theme(
    name="clawprobe",
    primary="#0178D4",
    secondary="#004578",
    accent="#56B6C2",  # calm cyan: 16 colours cyan (6), 256 colours 73
    warning="#E6B450",  # yellow: 16 colours bright yellow (11), 256 colours 179
    error="#E05252",  # red: 16 colours bright red (9), 256 colours 167
    success="#44C271",  # green: 16 colours bright green (10), 256 colours 71
    foreground="#e0e0e0",
    dark=True,
)


def standard_number(colour: str) -> int | None:
    """The 16-colour ANSI number Rich downgrades ``colour`` (``#rrggbb``) to on a ``TERM=xterm`` terminal."""
    return Color.parse(colour).downgrade(ColorSystem.STANDARD).number


def use_theme(app: App[Any]) -> None:
    """Register :data:`THEME` with a Textual ``App`` and make it the app's theme."""
    app.register_theme(THEME)
    app.theme = THEME.name
