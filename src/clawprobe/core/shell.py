"""Shell words for the commands clawprobe prints and copies (one place decides how a value is quoted)."""

from __future__ import annotations

import re
import shlex

_RAW = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def word(value: str) -> str:
    """``value`` as one shell word that gives back exactly ``value`` (as bytes: ``os.fsencode``).

    Plain values: ``shlex.quote`` (POSIX). A value holding a control character or a byte that is not UTF-8
    (a file name ``os.fsdecode`` turned into a lone surrogate, U+DC80–U+DCFF) cannot be quoted that way
    without a raw byte reaching the terminal (which eats or misrenders it, so the pasted command names
    another file): it becomes bash/zsh ANSI-C quoting, ``$'caf\\xe9.md'`` — each such byte ``\\xNN``, a
    C1 or other lone surrogate ``\\uNNNN``, ``'`` and ``\\`` escaped. Never raises."""
    if not _RAW.search(value):
        return shlex.quote(value)
    out = []
    for ch in value:
        code = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif _RAW.match(ch):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def move_to_free_name(src: str, dst: str) -> str:
    """A POSIX ``sh`` command that renames ``src`` to ``dst`` only while nothing has that name (both already shell
    words: :func:`word`, or a ``~/``-prefixed one): ``[ ! -e DST ] && [ ! -L DST ] && mv SRC DST``. Any ``sh``
    runs it (GNU ``mv -T`` is not on macOS/BSD: "illegal option", nothing moved); an existing ``DST`` (a dir, a
    file, a dangling symlink) stops it before ``mv``, so it never overwrites nor moves ``SRC`` into ``DST``. Pure."""
    return f"[ ! -e {dst} ] && [ ! -L {dst} ] && mv {src} {dst}"


def words_after_first(command: str) -> list[str]:
    """The shell words of ``command`` after the first (quotes honoured; unbalanced quotes: split on blanks)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[1:]


#: one shell word as :func:`word` and ``shlex.quote`` write them: quoted and plain runs, glued
_WORD = r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|\$'(?:[^'\\]|\\.)*'|[^\s'"$]+|\$)+"""
_LEADING_ASSIGNMENTS = re.compile(rf"^(?:[A-Za-z_][A-Za-z0-9_]*={_WORD}?\s+)*")


def bounded(line: str, seconds: int) -> str:
    """``line`` (a command line that may start with ``VAR=value`` words, e.g. ``OPENCLAW_STATE_DIR='/srv/my oc'
    openclaw``) with ``timeout <seconds>`` put after those words, so the variables still reach the command:
    ``OPENCLAW_STATE_DIR='/srv/my oc' timeout 90 openclaw``. Pure; never raises."""
    head = _LEADING_ASSIGNMENTS.match(line)
    n = head.end() if head else 0
    return f"{line[:n]}timeout {seconds} {line[n:]}"
