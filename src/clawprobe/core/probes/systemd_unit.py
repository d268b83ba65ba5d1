"""A systemd unit's ``[Service]`` settings as systemd reads them: the unit file, then its drop-ins.

Sources (the man pages of systemd 252 on the test host):

* systemd.syntax(7): a line ending in a backslash is joined with the next one (the backslash becomes a space);
  comment lines (``#``, ``;``) inside such a continuation are skipped.
* systemd.unit(5): drop-ins are the ``*.conf`` files of ``<unit>.d/``, of the template's ``foo@.service.d/``,
  of every dash prefix (``foo-bar-baz.service`` → ``foo-bar-.service.d/``, ``foo-.service.d/``) and of the type's
  ``service.d/``, in every directory of the load path. An equally named file in a more specific directory (and,
  for one name, in a higher-priority load path) overrides the others; the files left are applied in
  lexicographic order of their names, whatever directory holds them, after the unit file itself.

Pure apart from reading the files; unreadable parts are skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

MAX_UNIT_CHARS = 200_000  #: read of one unit or drop-in file


def logical_lines(text: str) -> list[str]:
    """The stripped logical lines of unit ``text`` (continuations joined, comment lines inside one dropped)."""
    out: list[str] = []
    buf: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if buf is not None and line.startswith(("#", ";")):
            continue
        if line.endswith("\\"):
            buf = (buf or "") + line[:-1] + " "
            continue
        out.append(line if buf is None else buf + line)
        buf = None
    if buf is not None:
        out.append(buf.rstrip())
    return out


def assignments(text: str, section: str = "Service") -> list[tuple[str, str]]:
    """``(key, value)`` of every setting in ``section`` of one file's ``text``, in order (settings before any
    section header count too: a drop-in written without one)."""
    cur: str | None = None
    out: list[tuple[str, str]] = []
    for line in logical_lines(text):
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            cur = line[1:-1].strip()
            continue
        key, eq, value = line.partition("=")
        if eq and cur in (None, section):
            out.append((key.strip(), value.strip()))
    return out


def dropin_dirs(unit_name: str, load_path: Sequence[str]) -> list[Path]:
    """The drop-in directories of ``unit_name`` (``openclaw-gateway.service``), most specific name first, each
    name over ``load_path`` in priority order."""
    stem, _, kind = unit_name.rpartition(".")
    names = [unit_name]
    if "@" in stem:
        names.append(stem.split("@", 1)[0] + "@." + kind)
    parts = stem.split("-")
    names += ["-".join(parts[:i]) + "-." + kind for i in range(len(parts) - 1, 0, -1)]
    names.append(kind)
    return [Path(d) / f"{n}.d" for n in names for d in load_path]


def unit_files(unit: Path, load_path: Sequence[str] = ()) -> list[Path]:
    """The unit file, then the drop-ins that apply to it (``unit``'s own directory first in the load path)."""
    chosen: dict[str, Path] = {}
    for d in dropin_dirs(unit.name, [str(unit.parent), *[p for p in load_path if Path(p) != unit.parent]]):
        with contextlib.suppress(OSError):
            for f in sorted(d.glob("*.conf")) if d.is_dir() else []:
                chosen.setdefault(f.name, f)  # a more specific one, seen first, wins (a /dev/null link masks)
    return [unit, *(chosen[name] for name in sorted(chosen))]


def service_settings(unit: Path, load_path: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The ``[Service]`` settings of ``unit`` and its drop-ins, in the order systemd applies them."""
    out: list[tuple[str, str]] = []
    for f in unit_files(unit, load_path):
        if f.is_file():  # a FIFO would block the read; a mask (/dev/null) holds nothing
            with contextlib.suppress(OSError):
                out += assignments(f.read_text(encoding="utf-8", errors="replace")[:MAX_UNIT_CHARS])
    return out
