"""Recorded ``memory_search`` tool results: the durable record of which engine answered.

Source: the agent's session transcripts ``<state>/agents/<id>/sessions/*.jsonl`` (toolResult records of
``memory_search``) or a saved tool payload. The payload (openclaw ``extensions/memory-core/src/tools.ts``)
carries ``provider``, ``model``, ``fallback {from, reason}``, ``debug {backend, configuredMode,
effectiveMode, fallback, searchMs, hits}``, and for an unavailable engine ``disabled``, ``unavailable``,
``error``, ``warning``, ``action``. The transcript line layout varies by build, so payloads are found by
shape anywhere inside a JSON line (objects or JSON-encoded strings), never by a fixed path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from clawprobe.core.mapping import as_mapping
from clawprobe.core.probes.openclaw_cli import _f as finite_float  # a finite float from a JSON number, else None

_PAYLOAD_KEYS = {"results", "disabled", "unavailable", "debug", "fallback"}
_BUILTIN_ERROR_HINTS = ("api key", "openai", "gemini", "voyage", "401", "no embeddings provider")
MAX_DEPTH = 12


class ToolResult(BaseModel):
    """One ``memory_search`` payload, reduced to the facts clawprobe uses.

    ``backend`` is ``debug.backend`` when present; ``fallback_from``/``fallback_reason`` from ``fallback``
    (or ``debug.fallback``); ``result_shape`` is ``builtin`` when any hit has ``id``/``textScore``,
    ``qmd`` when hits exist without them (QMD snippets start with ``@@ -``); ``at`` is the record's time.
    """

    model_config = ConfigDict(extra="forbid")
    backend: str | None = None
    provider: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    disabled: bool = False
    error: str | None = None
    hits: int = 0
    result_shape: str | None = None
    search_ms: float | None = None
    at: datetime | None = None

    @property
    def builtin_provider_error(self) -> bool:
        """True when the error is a builtin embedding-adapter error (missing OpenAI/Gemini/Voyage keys)."""
        text = (self.error or "").lower()
        return any(h in text for h in _BUILTIN_ERROR_HINTS)


def _shape(results: list) -> str | None:
    hits = [h for h in results if isinstance(h, dict)]
    if not hits:
        return None
    if any("id" in h or "textScore" in h for h in hits):
        return "builtin"
    return "qmd"


def from_payload(obj: dict, at: datetime | None = None) -> ToolResult | None:
    """Reduce one payload object; ``None`` when ``obj`` is not a memory_search payload."""
    if not isinstance(obj, dict) or not (_PAYLOAD_KEYS & obj.keys()):
        return None
    if "results" in obj and not isinstance(obj["results"], list):
        return None
    debug = as_mapping(obj.get("debug"))
    fb = obj.get("fallback") or debug.get("fallback")
    fb = fb if isinstance(fb, dict) else ({"reason": fb} if isinstance(fb, str) else {})
    results = obj.get("results") or []
    search_ms = debug.get("searchMs")
    return ToolResult(
        backend=str(debug.get("backend") or obj.get("backend") or "") or None,
        provider=str(obj["provider"]) if obj.get("provider") is not None else None,
        fallback_from=str(fb["from"]) if fb.get("from") else None,
        fallback_reason=str(fb["reason"]) if fb.get("reason") else None,
        disabled=bool(obj.get("disabled") or obj.get("unavailable")),
        error=str(obj.get("error") or obj.get("warning") or "") or None,
        hits=len(results),
        result_shape=_shape(results),
        search_ms=finite_float(search_ms),
        at=at,
    )


def _walk(node: object, depth: int = 0) -> Iterator[dict[str, Any]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(node, str) and node[:1] in "{[":
        try:
            node = json.loads(node)
        except (ValueError, RecursionError):
            return
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v, depth + 1)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v, depth + 1)


def _time_of(record: dict) -> datetime | None:
    for key in ("timestamp", "time", "createdAt", "ts"):
        v = record.get(key)
        if isinstance(v, str):
            try:
                return datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError:
                continue
        if isinstance(v, (int, float)) and v > 1e11:

            try:
                return datetime.fromtimestamp(v / 1000, tz=UTC)
            except (OverflowError, ValueError, OSError):  # past year 9999: not a time
                continue
    return None


def parse_lines(lines: Iterable[str]) -> list[ToolResult]:
    """All memory_search payloads in transcript JSONL lines, in file order. Garbage lines are skipped."""
    out: list[ToolResult] = []
    for line in lines:
        line = line.strip()
        if not line or "memory_search" not in line and "results" not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        at = _time_of(record) if isinstance(record, dict) else None
        for obj in _walk(record):
            tr = from_payload(obj, at)
            if tr is not None:
                out.append(tr)
                break
    return out
