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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clawprobe.core.mapping import as_mapping
from clawprobe.core.probes.openclaw_cli import _f as finite_float  # a finite float from a JSON number, else None
from clawprobe.core.redaction import redact_text

_PAYLOAD_KEYS = {"results", "disabled", "unavailable", "debug", "fallback"}
_BUILTIN_ERROR_HINTS = ("api key", "openai", "gemini", "voyage", "401", "no embeddings provider")
MAX_DEPTH = 12
ChatKind = Literal["direct", "group", "channel"]
_PEER_KINDS = {"direct": "direct", "dm": "direct", "group": "group", "channel": "channel"}


class ToolResult(BaseModel):
    """One ``memory_search`` payload, reduced to the facts clawprobe uses.

    ``backend`` is ``debug.backend`` when present; ``fallback_from``/``fallback_reason`` from ``fallback``
    (or ``debug.fallback``); ``result_shape`` is ``builtin`` when any hit has ``id``/``textScore``,
    ``qmd`` when hits exist without them (QMD snippets start with ``@@ -``); ``at`` is the record's time;
    ``chat_kind`` the chat the session belongs to (:func:`chat_kind_of_key`, from ``sessions.json``).
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
    chat_kind: ChatKind | None = None

    @property
    def outcome(self) -> str:
        """``denied`` (scope/tool policy refused it), ``disabled`` (disabled/unavailable), ``error``, ``found``
        (hits) or ``empty`` — from the payload only."""
        text = (self.error or "").lower()
        if "denied" in text or "not allowed" in text or "scope" in text:
            return "denied"
        if self.disabled:
            return "disabled"
        if self.error:
            return "error"
        return "found" if self.hits else "empty"

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
    """Reduce one payload object; ``None`` when ``obj`` is not a memory_search payload. Texts taken from the
    transcript (provider, fallback reason, error) are masked (:func:`clawprobe.core.redaction.redact_text`)."""
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
        provider=redact_text(str(obj["provider"])) if obj.get("provider") is not None else None,
        fallback_from=str(fb["from"]) if fb.get("from") else None,
        fallback_reason=redact_text(str(fb["reason"])) if fb.get("reason") else None,
        disabled=bool(obj.get("disabled") or obj.get("unavailable")),
        error=redact_text(str(obj.get("error") or obj.get("warning") or "")) or None,
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


def chat_kind_of_key(key: str, chat_type: str | None = None) -> ChatKind | None:
    """The chat kind of a session, as OpenClaw 2026.9.6 derives it (``src/sessions/session-chat-type-shared.ts``):
    the entry's own ``chatType`` first (``dm`` = direct), else the session key with its ``agent:<id>:`` prefix
    removed — ``direct|dm:<peer>``, ``<channel>:<kind>:<peer>``, ``<channel>:<account>:<kind>:<peer>``, the legacy
    ``group:…``/``channel:…``/``…@g.us``/``discord:…guild-…:channel-…`` shapes — and ``main`` (the agent's main
    session) is direct. ``None`` when it cannot be told (pure)."""
    if chat_type and chat_type.lower() in _PEER_KINDS:
        return _PEER_KINDS[chat_type.lower()]  # type: ignore[return-value]
    parts = key.split(":")
    if len(parts) >= 3 and parts[0] == "agent":
        parts = parts[2:]
    scoped = ":".join(parts)
    if parts == ["main"]:
        return "direct"
    for i in (0, 1, 2):
        if len(parts) > i + 1 and parts[i] in _PEER_KINDS and (i == 0 and parts[0] in ("direct", "dm") or i > 0):
            return _PEER_KINDS[parts[i]]  # type: ignore[return-value]
    if scoped.startswith("group:") or scoped.endswith("@g.us"):
        return "group"
    if scoped.startswith("channel:") or (scoped.startswith("discord:") and ":channel-" in scoped):
        return "channel"
    return None


def session_kinds(sessions_json: str) -> dict[str, ChatKind]:
    """``sessions.json`` (``{sessionKey: {sessionId, chatType?, sessionFile?…}}``) → ``{sessionId or transcript
    file stem: chat kind}`` for the sessions whose kind can be told (pure; garbage → ``{}``)."""
    try:
        doc = json.loads(sessions_json)
    except (ValueError, RecursionError):
        return {}
    out: dict[str, ChatKind] = {}
    for key, entry in (doc.items() if isinstance(doc, dict) else ()):
        e = as_mapping(entry)
        kind = chat_kind_of_key(str(key), e.get("chatType") if isinstance(e.get("chatType"), str) else None)
        if kind is None:
            continue
        for ident in (e.get("sessionId"), e.get("sessionFile")):
            if isinstance(ident, str) and ident:
                out[ident.rsplit("/", 1)[-1].removesuffix(".jsonl")] = kind
    return out
