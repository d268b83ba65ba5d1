"""Text for a terminal that can show only ASCII (``LC_ALL=POSIX`` with ``PYTHONUTF8=0``, ``LANG=C`` on an old
host, ``PYTHONIOENCODING=ascii``): the characters clawprobe draws (``—``, ``·``, ``✓``, ``≤``, box lines) as
readable ASCII instead of Python's ``\\u2014`` escapes (breaker round 25: ``check`` printed ``\\u2014`` in every
line, the dashboard drew ``\\u2500\\u2500`` borders that pushed every row out of its column).

One codec error handler per use, registered on import: :data:`WIDE` (``check``'s text: ``—`` → ``--``, ``≥`` →
``>=``; lengths may change) and :data:`CELL` (the dashboard: exactly one ASCII character per terminal cell the
character took, so the layout the toolkit computed stays in place). A character neither table knows becomes its
decomposed ASCII base (``é`` → ``e``), else ``?`` (``??`` for a double-width one); a lone surrogate (a file name
that is not UTF-8) stays the ``\\xNN`` escape ``ls -b`` shows (``?`` in the dashboard: one cell).
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Callable

#: the codec error handler names (``str.encode(enc, WIDE)``, ``TextIOWrapper.reconfigure(errors=CELL)``)
WIDE = "clawprobe-ascii"
CELL = "clawprobe-ascii-cell"

#: one ASCII character for each character clawprobe's own words and the dashboard draw
_CELL = {"—": "-", "–": "-", "−": "-", "·": ".", "…": ".", "•": "*", "→": ">", "←": "<", "↑": "^", "↓": "v",
         "▶": ">", "≤": "<", "≥": ">", "≠": "#", "≈": "~", "±": "+", "×": "x", "✓": "v", "✗": "x", "⚠": "!",
         "‘": "'", "’": "'", "“": '"', "”": '"', "§": "S", "∈": "e", "⋈": "x", "¹": "1", "²": "2", "³": "3",
         "\u00a0": " "}
#: where more than one character reads better (text output only)
_WIDE = {**_CELL, "—": "--", "…": "...", "→": "->", "←": "<-", "≤": "<=", "≥": ">=", "≠": "!=", "±": "+/-",
         "✓": "ok", "✗": "x", "⚠": "(!)", "§": "section ", "∈": " in ", "⋈": "join"}


def _one(ch: str, table: dict[str, str]) -> str:
    """``ch`` (one code point) in ASCII from ``table``, box drawing and blocks, its decomposition, else ``?``."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (``os.fsdecode``): one cell drawn
        return "?" if table is _CELL else f"\\x{code - 0xDC00:02x}"
    if ch in table:
        return table[ch]
    if 0x2500 <= code <= 0x257F:  # box drawing: the dashboard's borders and rules
        name = unicodedata.name(ch, "")
        horizontal, vertical = "HORIZONTAL" in name, "VERTICAL" in name
        return "-" if horizontal and not vertical else "|" if vertical and not horizontal else "+"
    if 0x2580 <= code <= 0x259F:  # block elements: scrollbars, bars
        return "#"
    if unicodedata.combining(ch):
        return ""
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if ord(c) < 0x80)
    if base and table is _WIDE:
        return base
    wide = unicodedata.east_asian_width(ch) in ("W", "F")  # two cells (``Ａ``, ``会``): two characters
    if len(base) == 1:
        return base + " " if wide else base
    return "??" if wide else "?"


def ascii_text(text: str, *, cell: bool = False) -> str:
    """``text`` with every character outside ASCII as readable ASCII (pure; see the module doc). ``cell=True``
    keeps the terminal width of each character (one or two ASCII characters for one or two cells)."""
    table = _CELL if cell else _WIDE
    return "".join(ch if ord(ch) < 0x80 else _one(ch, table) for ch in text)


def _handler(table: dict[str, str]) -> Callable[[UnicodeError], tuple[str, int]]:
    def handle(err: UnicodeError) -> tuple[str, int]:
        if not isinstance(err, UnicodeEncodeError):
            raise err
        return "".join(_one(ch, table) for ch in err.object[err.start:err.end]), err.end
    return handle


codecs.register_error(WIDE, _handler(_WIDE))
codecs.register_error(CELL, _handler(_CELL))
