"""Durations for people: one wording for every text clawprobe prints or shows (pure, no I/O).

``human_duration(1025)`` → ``"17 min"``, ``human_duration(297)`` → ``"4 min 57 s"``; the dashboard, the text
reports and the download evidence all use it, so the same age reads the same everywhere.
"""

from __future__ import annotations

import re


def human_duration(seconds: float, units: int = 2) -> str:
    """``seconds`` (its magnitude, rounded down) in at most two units: ``42 s``, ``4 min 57 s`` (seconds only
    below 10 min), ``17 min``, ``2 h 5 min``, ``1 d 4 h``; ``units=1`` keeps the larger one only (``4 min``,
    ``2 h``: a narrow line). The sign is dropped: the caller says "ago", "left" or "earlier"."""
    s = int(abs(seconds))
    if s < 60:
        return f"{s} s"
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        return f"{d} d {h} h" if h and units > 1 else f"{d} d"
    if h:
        return f"{h} h {m} min" if m and units > 1 else f"{h} h"
    return f"{m} min {sec} s" if sec and m < 10 and units > 1 else f"{m} min"


_SECONDS_AGO = re.compile(r"\b(\d+(?:\.\d+)?) s ago\b")


def human_ages(text: str) -> str:
    """``last proven current 721 s ago`` → ``last proven current 12 min ago``: every ``N s ago`` in a
    sentence (evidence, readiness reasons) as a :func:`human_duration`; other numbers stay."""
    return _SECONDS_AGO.sub(lambda m: f"{human_duration(float(m.group(1)))} ago", text)
