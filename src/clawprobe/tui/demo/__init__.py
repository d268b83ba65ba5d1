"""Embedded demo scenarios for ``clawprobe demo``: normalized receipts stored as JSON package data.

Each ``scenarios/NN-name.json`` holds::

    {"name": str, "title": str, "story": str,
     "receipts": [Receipt JSON, ...],          # one per agent, in display order
     "history":  [Receipt JSON, ...],          # optional earlier receipts (e.g. to show an embedding rate)
     "expect":   [{"agent": id, "verdict": id, "reason": tag?}, ...]}   # what clawprobe.core.diagnosis must say

The receipts are evidence only; the verdict is always computed by ``clawprobe.core.diagnosis.diagnose`` (a test
checks it against ``expect``). At load, every time in a scenario is shifted by the same amount so the
first receipt's ``checked_at`` equals ``now`` — the countdown then runs live; a frozen ``now`` (snapshot
tests, screenshots) gives the same screen every time.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.receipt import Receipt

SHOWCASE: dict[str, str] = {
    "healthy": "spec-1-bm25-pending-healthy",
    "config_invalid": "rw02-config-parse-error",
    "backend_retired": "upgrade-9.6-retired-qmd",
    "config_drift": "rw03-gateway-old-config",
    "qmd_unavailable": "spec-2-qmd-missing",
    "fallback_active": "spec-3-fallback-canary-found",
    "memory_unavailable": "rw33-explicit-provider-down",
    "keyword_only": "rw34-auto-provider-keyword-only",
    "stale_index": "spec-4-stale-721s",
    "vector_not_ready": "spec-5-query-14-pending",
    "scope_denied": "rw27-scope-denied",
    "retrieval_failed": "spec-6-vsearch-no-canary",
    "unverified": "first-run-no-canary",
}
"""One scenario per verdict id (snapshot tests and ``scripts/screenshots.py`` use the same ones)."""


class Expectation(BaseModel):
    """The verdict (and optional sub-reason tag) a scenario's agent must get."""

    model_config = ConfigDict(extra="forbid")
    agent: str
    verdict: str
    reason: str | None = None


class Scenario(BaseModel):
    """One demo scenario (see the module docstring for the file shape). ``receipts`` keep their stored times."""

    model_config = ConfigDict(extra="forbid")
    name: str
    title: str
    story: str
    receipts: list[Receipt]
    history: list[Receipt] = Field(default_factory=list)
    expect: list[Expectation]


class ScenarioError(Exception):
    """An unknown scenario name or number; ``str()`` lists the valid choices."""


def _files() -> list[Any]:
    folder = resources.files(__package__) / "scenarios"
    return sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)


_RAW: list[dict[str, Any]] | None = None
_PARSED: dict[int, Scenario] = {}


def _raw() -> list[dict[str, Any]]:
    """Every scenario file's JSON, unvalidated, in file order (read once per process: ≈ 2 ms for all)."""
    global _RAW
    if _RAW is None:
        _RAW = [json.loads(f.read_text(encoding="utf-8")) for f in _files()]
    return _RAW


def count() -> int:
    """How many scenarios are embedded."""
    return len(_raw())


def scenario(index: int) -> Scenario:
    """The scenario at ``index`` (0-based), validated on first use: the first frame validates one scenario,
    not all of them (≈ 25 ms less). Raises ``IndexError`` out of range, ``pydantic.ValidationError`` if a
    packaged file is corrupt (a packaging bug, caught by tests)."""
    if index not in _PARSED:
        _PARSED[index] = Scenario.model_validate(_raw()[index])
    return _PARSED[index]


def scenarios() -> list[Scenario]:
    """Every embedded scenario, in file order (each validated once per process).

    Raises ``pydantic.ValidationError`` if a packaged file is corrupt (a packaging bug, caught by tests).
    """
    return [scenario(i) for i in range(count())]


def names() -> list[str]:
    """Every scenario's name, in file order, without validating the scenarios."""
    return [str(raw.get("name", "")) for raw in _raw()]


def find(name: str) -> int:
    """The index (0-based) of the scenario ``name``: the 1-based number ``clawprobe demo --list`` prints
    (``3``), the exact name, or a unique prefix/substring (``rw27``).

    Raises :class:`ScenarioError` naming the choices when nothing or several match, or the number is out
    of range.
    """
    all_ = names()
    key = name.strip()
    if key.isdecimal():
        n = int(key)
        if 1 <= n <= len(all_):
            return n - 1
        raise ScenarioError(f"there is no demo scenario {n}: choose 1–{len(all_)} (clawprobe demo --list)")
    for i, s in enumerate(all_):
        if s == name:
            return i
    low = key.lower()
    hits = [i for i, s in enumerate(all_) if s.lower().startswith(low)]
    if len(hits) != 1:
        hits = [i for i, s in enumerate(all_) if low in s.lower()]
    if len(hits) == 1:
        return hits[0]
    every = ", ".join(all_)
    what = "matches several scenarios" if hits else "is not a demo scenario"
    raise ScenarioError(f"{name!r} {what}; choose one of: {every}")


def _shift(value: Any, delta: timedelta) -> Any:
    if isinstance(value, datetime):
        return value + delta
    if isinstance(value, dict):
        return {k: _shift(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, delta) for v in value]
    return value


def shift_receipt(r: Receipt, delta: timedelta) -> Receipt:
    """``r`` with every datetime in it moved by ``delta`` (check time, freshness, canary steps, evidence…)."""
    return Receipt.model_validate(_shift(r.model_dump(exclude={"lease": {"seconds"}}), delta))


def at_now(s: Scenario, now: datetime) -> tuple[list[Receipt], list[Receipt]]:
    """The scenario's receipts and history with times shifted so the first ``checked_at`` is ``now``."""
    delta = now - s.receipts[0].checked_at
    return [shift_receipt(r, delta) for r in s.receipts], [shift_receipt(r, delta) for r in s.history]
