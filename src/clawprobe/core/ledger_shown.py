"""The evidence ledger as every screen and text shows it (pane 1, ``check`` text, rule 12's evidence): the one
place the list is built for display. Pure, and light — it reads only the receipt (the ledger itself is built
by :mod:`clawprobe.core.ledger`, part of the evidence pipeline a first frame must not import)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clawprobe.core.receipt import LedgerEntry, Receipt


@dataclass(frozen=True)
class ShownEntry:
    """Ledger entries that say the same thing (``kind``, ``line``, ``why``), shown once: ``sources`` where each
    was seen, in order (the same "file is not a database" error on the stderr and the exit status of two
    commands is one line ``×4``, not four)."""

    kind: str
    line: str
    why: str | None
    level: str | None
    sources: tuple[str, ...]

    @property
    def count(self) -> str:
        """`` ×N`` when the line was seen more than once, else empty."""
        return f" ×{len(self.sources)}" if len(self.sources) > 1 else ""

    @property
    def where(self) -> str:
        """The first source, and how many others (``stderr of `…` +3 more``)."""
        more = len(self.sources) - 1
        return self.sources[0] + (f" +{more} more" if more else "")


def shown(r: Receipt, kinds: Sequence[str] = ("unrecognized", "benign")) -> list[ShownEntry]:
    """The ledger as every screen and text shows it — the one place the list is built for display: entries of
    ``kinds``, those saying the same thing collapsed into one, in the order first seen."""
    groups: dict[tuple[str, str, str | None], list[LedgerEntry]] = {}
    for e in r.ledger:
        if e.kind in kinds:
            groups.setdefault((e.kind, e.line, e.why), []).append(e)
    return [ShownEntry(kind, line, why, es[0].level, tuple(e.source for e in es)) for (kind, line, why), es in groups.items()]
