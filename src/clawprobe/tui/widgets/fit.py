"""Fitting one-line text to a width: cells on screen, a cut with ``…`` at the end, and a path cut in the
middle so its file name, the parent directory and a ``:line:col`` after it stay readable.

The header and the verdict banner are one-line Statics whose overflow the terminal would cut at the end —
where a path ends in the one part that matters (``…/.openclaw/openclaw.json``, ``openclaw.json:2:5``). Both
fit their text here first: paths shrink in the middle (``/tmp/…/.openclaw/openclaw.json``), and only then is
anything cut at the end, never inside a path's name or its ``:line:col``.
"""

from __future__ import annotations

import re

from textual.content import Content

#: an absolute, ``~/…`` or ``./…`` path, and the ``:line[:col]`` right after it
PATH = re.compile(r"(?<![\w/.~])(?P<path>(?:~|\.{1,2})?/[^\s:'\"`()]*[^\s:'\"`(),.;])(?P<loc>:\d+(?::\d+)?)?")


def cells(markup: str) -> int:
    """Terminal cells ``markup`` takes once rendered."""
    return Content.from_markup(markup).cell_length


def clip(text: str, width: int) -> str:
    """Plain ``text`` cut to ``width`` cells with a trailing ``…`` (unchanged when it fits)."""
    c = Content(text)
    if c.cell_length <= width:
        return text
    return c.truncate(width, ellipsis=True).plain if width > 0 else ""


def clip_words(text: str, width: int) -> str:
    """Plain ``text`` cut to ``width`` cells at a word boundary with a trailing ``…`` (unchanged when it fits;
    ``""`` when not one whole word fits): an explanation that gives way loses whole words, never half of one."""
    if cells_plain(text) <= width:
        return text
    if width <= 1:
        return ""
    head = Content(text).truncate(width - 1).plain
    if text[len(head):len(head) + 1] != " ":
        head = head[:max(head.rfind(" "), 0)]
    head = head.rstrip()
    return head + "…" if head.strip(" :,;·—-") else ""


def cut_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` cells, cut in the middle: the leading directories that fit, ``…``, then
    the parent directory and the file name (``/tmp/…/.openclaw/openclaw.json``); with less room
    ``…/openclaw.json``, and only below that the file name itself, in its middle."""
    if cells_plain(path) <= width:
        return path
    parts = path.split("/")
    tries = ["/".join([*parts[:k], "…", *parts[-2:]]) for k in range(len(parts) - 3, 0, -1)]
    tries += ["…/" + "/".join(parts[-2:]), "…/" + parts[-1]]
    for cand in tries:
        if cells_plain(cand) <= width:
            return cand
    return clip_middle(parts[-1], width)  # the name alone, cut in its middle: its end (.json, :line) stays


def floor(path: str, keep: int = 2) -> int:
    """Cells of the shortest form of ``path`` still read at a glance: with ``keep=2`` its first directory,
    ``…`` and its last two names (``/tmp/…/.openclaw/openclaw.json``), with ``keep=1`` ``…/openclaw.json``;
    never more than the path itself."""
    parts = path.split("/")
    lead = parts[: (2 if parts[0] == "" else 1)] if keep > 1 else []  # "/tmp", "~": where it lives
    return min(cells_plain(path), cells_plain("/".join([*lead, "…", *parts[-keep:]])))


def cells_plain(text: str) -> int:
    """Terminal cells plain ``text`` takes."""
    return Content(text).cell_length


def fit_paths(text: str, width: int | None) -> str:
    """Plain ``text`` in ``width`` cells (``None``: unchanged). Its paths are cut in the middle first (the
    longest first, by :func:`cut_path`) down to ``/tmp/…/parent/name``, each keeping the ``:line:col`` after it;
    then the end of the text is cut — never before the end of the last path's ``:line:col``, unless that
    alone is wider: then the paths shrink further (``…/name``), and only then is anything cut at the end."""
    if width is None or cells_plain(text) <= width:
        return text
    pieces, paths = _path_pieces(text)
    if not paths:
        return clip(text, width)
    end = max(paths) + 2  # the pieces up to the last path's :line:col
    _shrink(pieces, paths, width, 2)
    if cells_plain("".join(pieces)) <= width:
        return "".join(pieces)
    _shrink(pieces, paths, width, 1, upto=end)  # the head (text, paths, :line:col) must fit, with a "…" after
    head = "".join(pieces[:end])
    return head if cells_plain(head) == width else clip("".join(pieces), width)


def _path_pieces(text: str) -> tuple[list[str], list[int]]:
    """``text`` split as ``[text, path, :line:col, text, path, …, text]`` and the indexes of its paths, the
    longest first."""
    pieces: list[str] = []
    last = 0
    for m in PATH.finditer(text):
        pieces += [text[last:m.start()], m.group("path"), m.group("loc") or ""]
        last = m.end()
    pieces.append(text[last:])
    return pieces, sorted(range(1, len(pieces), 3), key=lambda i: -cells_plain(pieces[i]))


#: a leading shell assignment of a command (``XDG_CONFIG_HOME=~/…``, ``PATH=/usr/bin``)
ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


#: global options that take a value word before a program's sub-command (clawprobe's own --state-dir/--config,
#: OpenClaw's --profile); any other ``--x`` word, or ``--x=value``, stands alone (a short ``-x`` ends the head:
#: ``command -v qmd`` has no verb)
VALUE_OPTIONS = frozenset({"--state-dir", "--config", "--profile", "--color", "--replay", "--agent"})


def _head_words(words: list[str]) -> tuple[int, int | None, tuple[int, int]]:
    """``(n, verb index, option span)`` of ``command.split(" ")``: ``n`` leading assignments (the program is
    ``words[n]``), the index of the verb (``None`` when there is none) and the ``[start, end)`` span of the
    global options between the program and the verb (empty when the verb follows the program)."""
    n = 0
    while n < len(words) - 1 and ASSIGN.match(words[n]):
        n += 1
    i = n + 1
    while i < len(words) and words[i].startswith("--"):
        opt = words[i]
        i += 1
        if opt in VALUE_OPTIONS and i < len(words):  # its value: one word, or a quoted one with spaces
            quote = words[i][:1] if words[i][:1] in "'\"" else ""
            while quote and i < len(words) - 1 and not (len(words[i]) > 1 and words[i].endswith(quote)):
                i += 1
            i += 1
    verb = i if i < len(words) and re.fullmatch(r"[a-z][a-z-]*", words[i]) else None
    return n, verb, (n + 1, i if verb is not None else n + 1)


def command_head(command: str) -> tuple[int, str, str]:
    """``(n, program, verb)`` of a shell command: ``n`` leading ``VAR=value`` words, the program's name
    (the next word's last path part, a ``(`` before it dropped) and its verb (the first word after it and
    its global options (``--state-dir <dir>``) when that is a lower-case word such as ``memory``,
    ``canary``; else ``""``)."""
    words = command.split(" ")
    n, verb, _ = _head_words(words)
    program = words[n].lstrip("(").rsplit("/", 1)[-1] if n < len(words) else ""
    return n, program, words[verb] if verb is not None else ""


def and_segments(command: str) -> list[str]:
    """``command`` split at its top-level `` && `` (outside parentheses and quotes): the commands that run
    one after the other (``(test … || cp …) && openclaw doctor --fix`` → two)."""
    segs: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(command):
        ch = command[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and command.startswith(" && ", i):
            segs.append(command[start:i])
            start = i = i + 4
            continue
        i += 1
    return [*segs, command[start:]]


def fit_command(command: str, width: int | None) -> str:
    """A shell command on one line of at most ``width`` cells (``None``: unchanged) that keeps its program
    and verb readable: first each leading assignment's value becomes ``…`` (``XDG_CACHE_HOME=…``), then the
    assignments together become one ``…``, then paths are cut in the middle (``/usr/…/bin/qmd``, at least
    ``…/name``), and only then is the tail cut with ``…``. A compound ``a && b`` whose last command would be
    cut away keeps that command (the one that changes something, ``openclaw doctor --fix``) and cuts the
    ones before it instead (``(test ! … && openclaw doctor --fix``). The text shown is a preview; the whole
    command is what is copied."""
    if width is None or cells_plain(command) <= width:
        return command
    fitted = _fit_one(command, width)
    segs = and_segments(command)
    _, program, verb = command_head(segs[-1])
    if len(segs) < 2 or _shows(fitted, program, verb):
        return fitted
    rest = " && ".join(segs[1:])
    lead = segs[0].split(" ", 1)[0] + " …"  # the first command's program, at least
    tail = fit_command(rest, width - cells_plain(lead + " && "))
    if not _shows(tail, program, verb):
        return fitted
    head = fit_command(segs[0], width - cells_plain(" && " + tail)).replace("……", "…")
    return head + " && " + tail


def _shows(line: str, program: str, verb: str) -> bool:
    """Whether ``line`` shows ``program`` (or a path ending in it) and then ``verb`` as whole words."""
    words = [w.lstrip("(") for w in line.split(" ")]
    at = [i for i, w in enumerate(words) if w == program or w.endswith("/" + program)]
    return bool(at) and (not verb or any(verb in words[i + 1:i + 2] or (words[i + 1:i + 2] == ["…"] and verb in
                                                                         words[i + 2:i + 3]) for i in at))


def _fit_one(command: str, width: int) -> str:
    """:func:`fit_command` without the compound rule; global options before the verb (``--state-dir <dir>``)
    become one ``…`` when the verb would be cut otherwise."""
    words = command.split(" ")
    _, verb_at, (start, end) = _head_words(words)
    fitted = _fit_plain(command, width)
    if end > start and verb_at is not None:
        n, program, verb = command_head(command)
        if not _shows(fitted, program, verb):
            return _fit_plain(" ".join([*words[:start], "…", *words[end:]]), width)
    return fitted


def _fit_plain(command: str, width: int) -> str:
    """:func:`_fit_one` without its global-options rule."""
    n, program, verb = command_head(command)
    words = command.split(" ")
    tries = [" ".join([w.split("=", 1)[0] + "=…" for w in words[:n]] + words[n:])]
    if n:
        tries.append(" ".join(["…", *words[n:]]))
    for cand in tries:
        if cells_plain(cand) <= width:
            return cand
    pieces, paths = _path_pieces(tries[-1])
    for keep in (2, 1):
        _shrink(pieces, paths, width, keep)
        cand = "".join(pieces)
        head = cand.split(" ", 2 + (1 if n else 0))  # the collapsed "…", the program, the verb
        if cells_plain(cand) <= width or cells_plain(" ".join(head[:-1])) < width:
            return clip(cand, width)
    return clip("".join(pieces), width)

def cut_paths(text: str, width: int | None) -> str:
    """Plain ``text`` (wrapped by its widget, not cut) with every path wider than ``width`` cells cut in the
    middle to ``width`` by :func:`cut_path` — its ``:line:col`` kept after it — so no path takes more than one
    wrapped line; the words around them are left whole (``None``: unchanged)."""
    if width is None:
        return text

    def cut(m: re.Match[str]) -> str:
        loc = m.group("loc") or ""
        return cut_path(m.group("path"), max(1, width - cells_plain(loc))) + loc

    return PATH.sub(cut, text)


def _shrink(pieces: list[str], paths: list[int], width: int, keep: int, upto: int | None = None) -> None:
    """Cut the paths among ``pieces`` (in ``paths`` order) until ``pieces[:upto]`` (plus one cell for a final
    ``…`` when ``upto`` is given) fit ``width``: with ``keep=2`` none below ``/tmp/…/parent/name`` (its first
    directory, ``…``, its last two names), with ``keep=1`` none below ``…/name``."""
    for i in paths:
        over = cells_plain("".join(pieces[:upto])) + (1 if upto is not None else 0) - width
        if over <= 0:
            return
        pieces[i] = cut_path(pieces[i], max(floor(pieces[i], keep), cells_plain(pieces[i]) - over))


def clip_middle(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with ``…`` in the middle, keeping more of the tail (where ids of one
    fleet differ: ``prod-eu-west-1`` → ``pro…west-1``)."""
    if cells_plain(text) <= width or width < 3:
        return clip(text, width)
    head = (width - 1) // 3
    tail = width - 1 - head
    return text[:head] + "…" + text[len(text) - tail:]
