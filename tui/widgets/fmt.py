"""Text helpers shared by the panes: glyphs that carry meaning without colour, times, durations.

Every state is spelled out with a glyph *and* a word (``✓ ok``, ``✗ fail``, ``– n/a``, ``? unknown``), so
the screen reads the same under ``NO_COLOR`` and on a 16-colour terminal; colour is only an extra cue
(markup variables ``$success``/``$error``/``$warning``, mapped by the theme).
"""

from __future__ import annotations

from datetime import datetime, timezone

from textual.markup import escape

from core.verdicts import Verdict

GLYPH = {"ok": "✓", "fail": "✗", "na": "–", "unknown": "?"}
WORD = {"ok": "ok", "fail": "FAIL", "na": "n/a", "unknown": "unproven"}
COLOR = {"ok": "$success", "fail": "$error", "na": "$foreground-muted", "unknown": "$warning"}

_WARN = {Verdict.STALE_INDEX, Verdict.VECTOR_NOT_READY, Verdict.KEYWORD_ONLY, Verdict.SCOPE_DENIED}


def level(verdict: Verdict) -> str:
    """``ok`` (healthy), ``warn`` (exit 1 verdicts), ``unknown`` (unverified) or ``fail`` (everything else)."""
    if verdict is Verdict.HEALTHY:
        return "ok"
    if verdict in _WARN:
        return "warn"
    if verdict is Verdict.UNVERIFIED:
        return "unknown"
    return "fail"


LEVEL_WORD = {"ok": "✓ HEALTHY", "warn": "⚠ WARNING", "unknown": "? UNPROVEN", "fail": "✗ FAILING"}


def mark(state: str, text: str | None = None) -> str:
    """Markup for a state: coloured glyph and, unless ``text`` is given, the state's word."""
    body = escape(text if text is not None else WORD[state])
    return f"[{COLOR[state]}]{GLYPH[state]} {body}[/]"


def yes_no(value: bool | None, yes: str = "yes", no: str = "no", unknown: str = "not measured") -> str:
    """``✓ yes`` / ``✗ no`` / ``? not measured`` for a tri-state fact."""
    if value is None:
        return mark("unknown", unknown)
    return mark("ok", yes) if value else mark("fail", no)


def hms(dt: datetime | None, now: datetime | None = None) -> str:
    """``03:00:05Z`` (UTC); with the date when ``dt`` is not on ``now``'s day; ``—`` for ``None``."""
    if dt is None:
        return "—"
    u = dt.astimezone(timezone.utc)
    if now is not None and u.date() != now.astimezone(timezone.utc).date():
        return u.strftime("%Y-%m-%d %H:%M:%SZ")
    return u.strftime("%H:%M:%SZ")


def dur(seconds: float | None) -> str:
    """``7:00`` / ``1:02:03`` / ``3 d 4 h`` for a duration in seconds (rounded down); ``—`` for ``None``."""
    if seconds is None:
        return "—"
    s = int(max(0, seconds))
    if s >= 86400:
        return f"{s // 86400} d {(s % 86400) // 3600} h"
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def size(n: int | None) -> str:
    """Bytes as ``684 MB`` / ``120 KB``; ``—`` for ``None``."""
    if n is None:
        return "—"
    for unit, k in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= k:
            return f"{n / k:.0f} {unit}" if n / k >= 10 else f"{n / k:.1f} {unit}"
    return f"{n} B"


def e(text: object) -> str:
    """Escape any value for Textual markup."""
    return escape(str(text))
