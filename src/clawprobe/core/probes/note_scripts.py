"""Which writing systems the memory notes use, and whether the builtin FTS5 tokenizer can match them.

Measured by Unicode ranges over the note text on disk (``MEMORY.md``, ``memory/**/*.md`` and the configured
extra paths; bounded: at most :data:`MAX_FILES` files, :data:`MAX_BYTES` each, symlinks not followed).

Why it matters (SQLite FTS5 tokenizers, sqlite.org/fts5.html §4.3): ``unicode61`` (OpenClaw's default, and
``porter`` which wraps it) splits text only at separators (spaces, punctuation), so a run of CJK or Thai
text without spaces is one token — a search for a word inside it never matches. ``trigram`` indexes every
3-character substring, so any query of 3 or more characters matches inside such a run. Scripts written with
spaces between words (Latin, Cyrillic, Greek, Arabic, Hebrew, Hangul, Devanagari…) tokenize under
``unicode61``. The tokenizer itself is read from the FTS table's ``CREATE VIRTUAL TABLE`` SQL
(:func:`fts_tokenizer_of`; no ``tokenize=`` clause = FTS5's default ``unicode61``).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable

from clawprobe.core.probes.fileinfo import open_regular, path_text

MAX_FILES = 200
MAX_BYTES = 64 * 1024
_CACHE: dict[tuple[str, int, int, int], Counter[str]] = {}  # per file (path, size, mtime, bytes read): the dashboard re-checks
_CACHE_MAX = 4096

#: (first, last code point, script) — the ranges that name a script; letters outside them count as ``other``.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latin"), (0x0370, 0x03FF, "Greek"), (0x0400, 0x052F, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"), (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"),
    (0x0900, 0x097F, "Devanagari"), (0x0E00, 0x0E7F, "Thai"), (0x0E80, 0x0EFF, "Lao"),
    (0x1000, 0x109F, "Myanmar"), (0x1100, 0x11FF, "Hangul"), (0x1780, 0x17FF, "Khmer"),
    (0x3040, 0x309F, "Hiragana"), (0x30A0, 0x30FF, "Katakana"), (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"), (0xAC00, 0xD7AF, "Hangul"), (0xF900, 0xFAFF, "Han"),
    (0x20000, 0x2FA1F, "Han"),
)
#: scripts written without spaces between words: ``unicode61``/``porter`` keep a whole run as one token.
UNSPACED = frozenset({"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"})
#: tokenizers that match inside an unspaced run (3+ character queries).
SUBSTRING_TOKENIZERS = frozenset({"trigram"})
#: the "script" of letters in notes saved as UTF-16 (Windows PowerShell 5.1's ``>``, Notepad's "Unicode"): OpenClaw
#: reads every note as UTF-8, so their text is indexed as bytes no search of any tokenizer or embedding matches
UTF16 = "UTF-16 file"
#: not a script: the number of notes that are not text at all (random bytes, an encrypted note — git-crypt's
#: ``\0GITCRYPT\0`` header — a stray binary named ``.md``); their decoded noise would pass for CJK letters
BINARY = "binary files"
BINARY_REPLACED_SHARE = 0.10  #: at least this share of U+FFFD in the UTF-8 decoding (of ≥ 64 characters): not text
BINARY_NUL_SHARE = 0.01  #: … or at least this share of NUL bytes (one stray NUL in a text note is not binary)
_TOKENIZE = re.compile(r"""tokenize\s*=\s*(?:'([^']*)'|"([^"]*)"|(\w+))""", re.I)


def script_of(ch: str) -> str | None:
    """The script of one letter by its code point (:data:`_RANGES`), ``other`` for a letter outside them,
    ``None`` for a non-letter (digits, punctuation, space). Pure."""
    cp = ord(ch)
    for lo, hi, name in _RANGES:
        if lo <= cp <= hi:
            return name if (ch.isalpha() or name in UNSPACED) else None
    return "other" if ch.isalpha() else None


def count_scripts(text: str) -> Counter[str]:
    """Letters per script in ``text`` (pure)."""
    out: Counter[str] = Counter()
    for ch in text:
        if ch.isascii() and not ch.isalpha():
            continue
        s = script_of(ch)
        if s is not None:
            out[s] += 1
    return out


def decode_note(data: bytes) -> tuple[str, bool]:
    """(text, is UTF-16) of a note's first bytes (pure): a UTF-16 byte-order mark, or a NUL in every other byte
    of the first 200 while the bytes between them are mostly not NUL (UTF-16 text without a BOM), decodes as
    UTF-16; anything else as UTF-8 with replacement. A run of NULs (a preallocated or sparse file, blocks a crash
    left zeroed) is not UTF-16: both halves are NUL, and :func:`is_binary` reads it as not text."""
    head = data[:200]
    odd, even = head[1::2], head[0::2]

    def lane(nuls: bytes, chars: bytes) -> bool:  # NULs in one half, characters in the other
        return nuls.count(0) >= len(nuls) * 0.9 and chars.count(0) <= len(chars) * 0.5

    wide = data[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(head) >= 8 and (lane(odd, even) or lane(even, odd)))
    if wide:
        return data.decode("utf-16", "replace"), True
    return data.decode("utf-8", "replace"), False


def is_binary(data: bytes, text: str) -> bool:
    """Whether a note's first bytes ``data`` (decoded as UTF-8 with replacement: ``text``) are not text (pure):
    :data:`BINARY_REPLACED_SHARE` of the characters are replacements, or :data:`BINARY_NUL_SHARE` of the bytes
    are NULs. Ask only for a note :func:`decode_note` did not read as UTF-16."""
    if len(text) >= 64 and text.count("\ufffd") >= len(text) * BINARY_REPLACED_SHARE:
        return True
    return bool(data) and data.count(0) >= max(2, len(data) * BINARY_NUL_SHARE)


def fts_tokenizer_of(sql: str | None) -> str | None:
    """The tokenizer named in an FTS5 ``CREATE VIRTUAL TABLE … USING fts5(…)`` statement: its first word
    (``porter unicode61`` → ``porter``; ``trigram case_sensitive 0`` → ``trigram``), ``unicode61`` when the
    statement has no ``tokenize=`` option (FTS5's default), ``None`` without a statement. Pure."""
    if not sql:
        return None
    m = _TOKENIZE.search(sql)
    if m is None:
        return "unicode61"
    words = (m.group(1) or m.group(2) or m.group(3) or "").split()
    return words[0].lower() if words else "unicode61"


def unmatched_scripts(tokenizer: str | None, scripts: dict[str, int] | None) -> list[str]:
    """The unspaced scripts present in the notes that ``tokenizer`` cannot match inside a run (pure):
    ``[]`` for a substring tokenizer, no measurement, or no such script. Sorted by letters, most first."""
    if not scripts or tokenizer is None or tokenizer.lower() in SUBSTRING_TOKENIZERS:
        return []
    return [s for s, _ in sorted(scripts.items(), key=lambda kv: -kv[1]) if s in UNSPACED and _ > 0]


def _memory_files(workspace: str, extra_paths: Iterable[str], limit: int) -> list[str]:
    out: list[str] = []
    root_md = os.path.join(workspace, "MEMORY.md")
    if os.path.isfile(root_md) and not os.path.islink(root_md):
        out.append(root_md)
    roots = [os.path.join(workspace, "memory")]
    for p in extra_paths:
        home_rel = p == "~" or p.startswith("~/")  # OpenClaw expands no ``~name`` (workspace.extra_path_abs)
        roots.append(p if os.path.isabs(p) else os.path.join(workspace, os.path.expanduser(p) if home_rel else p))
    for root in roots:
        if os.path.isfile(root) and root.endswith(".md"):
            out.append(root)
            continue
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for n in sorted(filenames):
                p = os.path.join(dirpath, n)
                if n.endswith(".md") and not os.path.islink(p) and path_text(n) == n:  # not UTF-8: never read
                    out.append(p)
                if len(out) >= limit:
                    return out
    return out[:limit]


def note_scripts(workspace: str, extra_paths: Iterable[str] = (), *, max_files: int = MAX_FILES,
                 max_bytes: int = MAX_BYTES, binary: list[str] | None = None) -> dict[str, int]:
    """GATHER: letters per script over the memory notes on disk (read-only, bounded: ``max_files`` files,
    the first ``max_bytes`` of each, decoded as UTF-8 with replacement — a UTF-16 file's letters count as
    :data:`UTF16`, a file that is not text (:func:`is_binary`) counts 1 under :data:`BINARY`; a file
    unchanged in size and mtime is not read again; its path is appended to ``binary`` when given). ``{}`` when
    there are no notes."""
    total: Counter[str] = Counter()
    for p in _memory_files(workspace, extra_paths, max_files):
        try:
            st = os.stat(p)
            key = (p, st.st_size, st.st_mtime_ns, max_bytes)
            counts = _CACHE.get(key)
            if counts is None:
                with open_regular(p) as f:
                    data = f.read(max_bytes)
                text, wide = decode_note(data)
                if not wide and is_binary(data, text):  # noise, not letters: counted as one file
                    counts = Counter({BINARY: 1})
                else:
                    counts = count_scripts(text)
                if wide:  # its letters are in a file OpenClaw cannot read as text
                    counts = Counter({UTF16: max(sum(counts.values()), 1)})
                if len(_CACHE) >= _CACHE_MAX:
                    _CACHE.clear()
                _CACHE[key] = counts
        except OSError:
            continue
        if binary is not None and counts.get(BINARY):
            binary.append(p)
        total.update(counts)
    return dict(total)
