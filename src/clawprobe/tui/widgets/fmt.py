"""Text helpers shared by the panes: glyphs that carry meaning without colour, times, durations, and the
one markup escape every pane uses for data.

Every state is spelled out with a glyph *and* a word (``✓ ok``, ``✗ fail``, ``– n/a``, ``? unknown``), so
the screen reads the same under ``NO_COLOR`` and on a 16-colour terminal; colour is only an extra cue
(markup variables ``$success``/``$error``/``$warning``, mapped by the theme). Durations on screen are
human (``42 s``, ``4 min 57 s``, ``17 min``, ``2 h 5 min``, ``1 d 4 h``), never raw second counts.
"""

from __future__ import annotations

from datetime import UTC, datetime

from clawprobe.core.durations import human_duration
from clawprobe.core.report import printable
from clawprobe.core.verdicts import Verdict
from clawprobe.core.view import LEVEL_WORD as CORE_LEVEL_WORD
from clawprobe.core.view import level as view_level

GLYPH = {"ok": "✓", "fail": "✗", "na": "–", "unknown": "?", "idle": "·", "warn": "⚠"}
WORD = {"ok": "ok", "fail": "FAIL", "na": "n/a", "unknown": "unproven", "idle": "not used", "warn": "warning"}
COLOR = {"ok": "$success", "fail": "$error", "na": "$foreground-muted", "unknown": "$warning",
         "idle": "$foreground-muted", "warn": "$warning"}


def level(verdict: Verdict) -> str:
    """:func:`clawprobe.core.view.level`: ``ok``, ``warn``, ``unknown`` or ``fail`` for a verdict."""
    return view_level(verdict)


LEVEL_WORD = CORE_LEVEL_WORD


def mark(state: str, text: str | None = None) -> str:
    """Markup for a state: coloured glyph and, unless ``text`` is given, the state's word."""
    body = e(text if text is not None else WORD[state])
    return f"[{COLOR[state]}]{GLYPH[state]} {body}[/]"


def yes_no(value: bool | None, yes: str = "yes", no: str = "no", unknown: str = "not measured", *,
           idle: bool = False) -> str:
    """``✓ yes`` / ``✗ no`` / ``? not measured`` for a tri-state fact; with ``idle`` (the fact is about something
    that does not serve, :func:`clawprobe.core.view.not_served`) a yes is the muted ``· yes``, never green."""
    if value is None:
        return mark("unknown", unknown)
    return mark("idle" if idle else "ok", yes) if value else mark("fail", no)


def hms(dt: datetime | None, now: datetime | None = None) -> str:
    """``03:00:05Z`` (UTC); with the date when ``dt`` is not on ``now``'s day; ``—`` for ``None``."""
    if dt is None:
        return "—"
    u = dt.astimezone(UTC)
    if now is not None and u.date() != now.astimezone(UTC).date():
        return u.strftime("%Y-%m-%d %H:%M:%SZ")
    return u.strftime("%H:%M:%SZ")


def dur(seconds: float | None) -> str:
    """:func:`clawprobe.core.durations.human_duration`, with a negative counted as 0 and ``—`` for ``None``."""
    return "—" if seconds is None else human_duration(max(0.0, seconds))


def ago(dt: datetime | None, now: datetime) -> str:
    """``17 min ago`` (``dur`` of ``now - dt``); ``in 3 min`` for a time still ahead; ``—`` for ``None``."""
    if dt is None:
        return "—"
    delta = (now - dt).total_seconds()
    return f"{dur(delta)} ago" if delta >= 0 else f"in {dur(-delta)}"


def size(n: int | None) -> str:
    """Bytes as ``684 MB`` / ``120 KB``; ``—`` for ``None``."""
    if n is None:
        return "—"
    for unit, k in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= k:
            return f"{n / k:.0f} {unit}" if n / k >= 10 else f"{n / k:.1f} {unit}"
    return f"{n} B"


def e(text: object) -> str:
    """Escape any value for Textual markup and the terminal, so data (agent ids, paths, commands, evidence)
    is shown as text.

    Control characters become visible ``\\xNN`` escapes (``clawprobe.core.report.printable``, as in ``check``): a
    receipt, a replayed file or a file name must not reach the terminal as ``ESC]2;…`` (window title),
    ``ESC]52;…`` (clipboard) or colours. Textual's own ``escape`` leaves a lone ``[`` (``"] / ["``),
    ``[$var]`` and a trailing backslash alone, and each of those breaks the tag that follows. Here every
    ``[`` is escaped; a trailing backslash (which would escape the next tag's ``[``) is followed by a
    zero-width space (U+200B, zero cells wide).
    """
    s = printable(str(text)).replace("[", "\\[")
    return s + "\u200b" if s.endswith("\\") else s
