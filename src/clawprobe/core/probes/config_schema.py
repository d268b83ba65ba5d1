"""OpenClaw 2026.7.35's config schema, the part clawprobe reads — and the checks it applies (pure).

:func:`validate_memory` flags what OpenClaw's own ``config validate`` rejects there: enum values such as
``memory.backend`` ∈ builtin|qmd (RW01), wrong types, unknown or misplaced keys, named by key path, with
where a misplaced key belongs. The shapes (:data:`SCHEMA_2026_7`) come from OpenClaw's bundled zod schema,
each verified against the real ``config validate --json`` (tests/data/recorded/735-config-validate). On
other or unknown builds it is lenient (see :func:`schema_issues`); QMD keys on a build without QMD are
:func:`retired_keys` (→ ``backend_retired``), not schema errors. The config probe itself is
:mod:`clawprobe.core.probes.config`.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from clawprobe.core.locate import calver, has_qmd_backend
from clawprobe.core.receipt import ConfigError
from clawprobe.core.redaction import MASK, redact_text
from clawprobe.core.understood import openclaw_understood

REDACTED = MASK  #: what a credential-looking value is replaced by in the tree
ELIDED = "<not read>"  #: a top-level section kept by name only
SEARCH_MODES = ("search", "vsearch", "query")
BACKENDS = ("builtin", "qmd")
CITATIONS = ("auto", "on", "off")


def _get(tree: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(k)
    return tree


def retired_keys(tree: Mapping[str, Any]) -> list[str]:
    """QMD-era keys present in the config: ``memory.backend``, ``memory.qmd``, ``memory.search.qmd``, and the
    legacy ``agents.defaults.memorySearch`` (2026.8.1+ rejects all of them; ``doctor --fix`` migrates)."""
    out = []
    if _get(tree, "memory", "backend") is not None:
        out.append("memory.backend")
    if _get(tree, "memory", "qmd") is not None:
        out.append("memory.qmd")
    if _get(tree, "memory", "search", "qmd") is not None:
        out.append("memory.search.qmd")
    if out and _get(tree, "agents", "defaults", "memorySearch") is not None:
        out.append("agents.defaults.memorySearch")
    return out


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(v), type(v).__name__)


def _schema(message: str, file: str | None, key_path: str, allowed: list[str] | None = None) -> ConfigError:
    return ConfigError(kind="schema", message=redact_text(message), file=file, key_path=key_path, allowed=allowed)


# --------------------------------------------------------------------------------------------------------
# OpenClaw 2026.7.35's config schema, the memory-relevant part (source: its bundled zod schema,
# dist/zod-schema-*.js and dist/zod-schema.agent-runtime-*.js: MemorySchema, MemoryQmdSchema, MemorySearchSchema,
# AgentsSchema/AgentDefaultsSchema/AgentEntrySchema, logging, gateway.reload, plugins.slots, tools.sessions and the
# top-level key set). Every object there is .strict(): an unknown key rejects the whole config. Each claim
# below is checked against the real `openclaw-2026.7.35 config validate --json` (tests/data/recorded/
# 735-config-validate/validate.json, tests/test_config_rejected.py).
# --------------------------------------------------------------------------------------------------------

class _Str(NamedTuple):
    """A string; ``min_len`` after an optional ``trim`` (zod ``string().trim().min(1)``)."""
    min_len: int = 0
    trim: bool = False


class _Num(NamedTuple):
    """A finite number; ``integer`` (zod ``int()``), lower bound ``lo`` (``gt``: exclusive), upper ``hi``."""
    integer: bool = True
    lo: float | None = None
    gt: bool = False
    hi: float | None = None


class _Enum(NamedTuple):
    values: tuple[str, ...]


class _Arr(NamedTuple):
    item: Any


class _Rec(NamedTuple):
    """An object with arbitrary keys and values of one shape (zod ``record``)."""
    value: Any


class _Or(NamedTuple):
    options: tuple[Any, ...]


class _Obj(NamedTuple):
    """An object with these ``fields``; ``strict``: other keys are rejected; ``required`` keys must be present."""
    fields: dict[str, Any]
    required: tuple[str, ...] = ()
    strict: bool = True


ANY, BOOL, STR = "any", "boolean", _Str()
_INT0, _INT1, _UNIT = _Num(lo=0), _Num(lo=0, gt=True), _Num(integer=False, lo=0, hi=1)
_LEVELS = _Enum(("silent", "fatal", "error", "warn", "info", "debug", "trace"))
_QMD_PATH = _Obj({"path": STR, "name": STR, "pattern": STR}, required=("path",))
_ALLOW_DENY = _Enum(("allow", "deny"))
_MEMORY_QMD = _Obj({
    "command": STR, "mcporter": _Obj({"enabled": BOOL, "serverName": STR, "startDaemon": BOOL}),
    "searchMode": _Enum(SEARCH_MODES), "rerank": BOOL, "searchTool": _Str(1, trim=True), "includeDefaultMemory": BOOL,
    "paths": _Arr(_QMD_PATH), "sessions": _Obj({"enabled": BOOL, "exportDir": STR, "retentionDays": _INT0}),
    "update": _Obj({"interval": STR, "debounceMs": _INT0, "onBoot": BOOL,
                    "startup": _Enum(("off", "idle", "immediate")), "startupDelayMs": _INT0, "waitForBootSync": BOOL,
                    "embedInterval": STR, "commandTimeoutMs": _INT0, "updateTimeoutMs": _INT0,
                    "embedTimeoutMs": _INT0}),
    "limits": _Obj({"maxResults": _INT1, "maxSnippetChars": _INT1, "maxInjectedChars": _INT1, "timeoutMs": _INT0}),
    "scope": _Obj({"default": _ALLOW_DENY, "rules": _Arr(_Obj({
        "action": _ALLOW_DENY, "match": _Obj({"channel": STR, "chatType": _Enum(("direct", "group", "channel", "dm")),
                                              "keyPrefix": STR, "rawKeyPrefix": STR})}, required=("action",)))}),
})
_MEMORY = _Obj({"backend": _Enum(BACKENDS), "citations": _Enum(CITATIONS), "qmd": _MEMORY_QMD})
_MEMORY_SEARCH = _Obj({
    "enabled": BOOL, "sources": _Arr(_Enum(("memory", "sessions"))), "extraPaths": _Arr(STR),
    "qmd": _Obj({"extraCollections": _Arr(_QMD_PATH)}),
    "multimodal": _Obj({"enabled": BOOL, "modalities": _Arr(_Enum(("image", "audio", "all"))), "maxFileBytes": _INT1}),
    "experimental": _Obj({"sessionMemory": BOOL}), "provider": STR,
    "remote": _Obj({"baseUrl": STR, "apiKey": ANY, "headers": _Rec(STR), "nonBatchConcurrency": _INT1,
                    "batch": _Obj({"enabled": BOOL, "wait": BOOL, "concurrency": _INT1, "pollIntervalMs": _INT0,
                                   "timeoutMinutes": _INT1})}),
    "fallback": STR, "model": STR, "inputType": _Str(1), "queryInputType": _Str(1), "documentInputType": _Str(1),
    "outputDimensionality": _INT1,
    "local": _Obj({"modelPath": STR, "modelCacheDir": STR, "contextSize": _Or((_INT1, _Enum(("auto",))))}),
    "store": _Obj({"driver": _Enum(("sqlite",)), "fts": _Obj({"tokenizer": _Enum(("unicode61", "trigram"))}),
                   "vector": _Obj({"enabled": BOOL, "extensionPath": STR})}),
    "chunking": _Obj({"tokens": _INT1, "overlap": _INT0}),
    "sync": _Obj({"onSessionStart": BOOL, "onSearch": BOOL, "watch": BOOL, "watchDebounceMs": _INT0,
                  "intervalMinutes": _INT0, "embeddingBatchTimeoutSeconds": _INT1,
                  "sessions": _Obj({"deltaBytes": _INT0, "deltaMessages": _INT0, "postCompactionForce": BOOL})}),
    "query": _Obj({"maxResults": _INT1, "minScore": _UNIT, "hybrid": _Obj({
        "enabled": BOOL, "vectorWeight": _UNIT, "textWeight": _UNIT, "candidateMultiplier": _INT1,
        "mmr": _Obj({"enabled": BOOL, "lambda": _UNIT}),
        "temporalDecay": _Obj({"enabled": BOOL, "halfLifeDays": _INT1})})}),
    "cache": _Obj({"enabled": BOOL, "maxEntries": _INT1}),
})
_DEFAULTS_OTHER = (
    "params model utilityModel imageModel imageGenerationModel videoGenerationModel musicGenerationModel voiceModel "
    "mediaGenerationAutoProviderFallback pdfModel pdfMaxBytesMb pdfMaxPages models skills silentReply repoRoot "
    "promptOverlays skipBootstrap skipOptionalBootstrapFiles contextInjection bootstrapMaxChars bootstrapTotalMaxChars "
    "experimental bootstrapPromptTruncationWarning userTimezone startupContext contextLimits timeFormat "
    "envelopeTimezone envelopeTimestamp envelopeElapsed contextTokens cliBackends contextPruning compaction runRetries "
    "embeddedAgent "
    "thinkingDefault verboseDefault toolProgressDetail reasoningDefault elevatedDefault blockStreamingDefault "
    "blockStreamingBreak blockStreamingChunk blockStreamingCoalesce humanDelay timeoutSeconds mediaMaxMb "
    "imageMaxDimensionPx imageQuality typingIntervalSeconds typingMode heartbeat maxConcurrent subagents "
    "sandbox").split()
_ENTRY_OTHER = (
    "model utilityModel models thinkingDefault verboseDefault toolProgressDetail reasoningDefault fastModeDefault "
    "contextInjection bootstrapMaxChars bootstrapTotalMaxChars experimental skills humanDelay tts skillsLimits "
    "contextLimits contextTokens heartbeat identity groupChat subagents runRetries embeddedAgent sandbox params tools "
    "runtime").split()
_TOP_OTHER = (
    "$schema meta env wizard diagnostics audit cli crestodian update browser ui tui secrets marketplaces auth "
    "accessGroups acp models nodeHost security bindings broadcast audio media messages commands approvals session cron "
    "transcripts commitments hooks web channels discovery talk mcp skills canvasHost surfaces proxy").split()
_AGENT_DEFAULTS = _Obj({"workspace": STR, "memorySearch": _MEMORY_SEARCH, **dict.fromkeys(_DEFAULTS_OTHER, ANY)})
_AGENT_ENTRY = _Obj({"id": STR, "default": BOOL, "name": STR, "description": STR, "workspace": STR, "agentDir": STR,
                     "memorySearch": _MEMORY_SEARCH, **dict.fromkeys(_ENTRY_OTHER, ANY)}, required=("id",))
_LOGGING = _Obj({"level": _LEVELS, "file": STR, "maxFileBytes": _INT1, "consoleLevel": _LEVELS,
                 "consoleStyle": _Enum(("pretty", "compact", "json")), "redactSensitive": _Enum(("off", "tools")),
                 "redactPatterns": _Arr(STR)})
#: the config tree as :func:`read_config` keeps it: gateway/plugins/tools only with their memory-relevant part
#: (the other keys there are not read, so not checked), every other top-level key elided.
SCHEMA_2026_7 = _Obj({
    "memory": _MEMORY, "agents": _Obj({"defaults": _AGENT_DEFAULTS, "list": _Arr(_AGENT_ENTRY)}), "logging": _LOGGING,
    "gateway": _Obj({"reload": _Obj({"mode": _Enum(("off", "restart", "hot", "hybrid")), "debounceMs": _INT0,
                                     "deferralTimeoutMs": _INT0})}, strict=False),
    "plugins": _Obj({"slots": _Obj({"memory": STR, "contextEngine": STR})}, strict=False),
    "tools": _Obj({"sessions": _Obj({"visibility": _Enum(("self", "tree", "agent", "all"))})}, strict=False),
    **dict.fromkeys(_TOP_OTHER, ANY),
})
#: Misplaced keys seen in real configs → where OpenClaw 2026.7.35 reads them (``[]``: any list index).
_MOVED = {
    ("memory.qmd", "updateInterval"): "memory.qmd.update.interval", ("memory.qmd", "cmd"): "memory.qmd.command",
    ("memory.qmd", "mode"): "memory.qmd.searchMode", ("memory.qmd", "timeout"): "memory.qmd.limits.timeoutMs",
    ("memory", "search"): "agents.defaults.memorySearch? memory.search is where OpenClaw 2026.8+ reads it",
    ("agents", "entries"): "agents.list, an array of {id, …}? agents.entries is the OpenClaw 2026.8+ layout",
    ("<root>", "memorySearch"): "agents.defaults.memorySearch",
    ("agents.defaults", "memory"): "agents.defaults.memorySearch",
    ("agents.list[]", "memory"): "agents.list[].memorySearch",
}


def _want(node: Any) -> str:
    """How a schema node reads in a message ("a string", "an integer > 0", "one of: a, b")."""
    if node == BOOL:
        return "a boolean"
    if isinstance(node, _Str):
        return "a non-empty string" if node.min_len else "a string"
    if isinstance(node, _Num):
        kind = "an integer" if node.integer else "a number"
        if node.lo is not None and node.hi is not None:
            return f"{kind} from {node.lo:g} to {node.hi:g}"
        return f"{kind} {'>' if node.gt else '≥'} {node.lo:g}" if node.lo is not None else kind
    if isinstance(node, _Enum):
        return "one of: " + ", ".join(node.values)
    if isinstance(node, _Arr):
        return "an array"
    if isinstance(node, (_Obj, _Rec)):
        return "an object"
    if isinstance(node, _Or):
        return " or ".join(_want(o) for o in node.options)
    return "a value"


def _fits(value: Any, node: Any) -> bool:
    """Whether a scalar ``value`` satisfies a scalar node (containers are walked by :func:`_walk`)."""
    if node == BOOL:
        return isinstance(value, bool)
    if isinstance(node, _Str):
        return isinstance(value, str) and len(value.strip() if node.trim else value) >= node.min_len
    if isinstance(node, _Enum):
        return isinstance(value, str) and value in node.values
    if isinstance(node, _Num):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and (not math.isfinite(value) or (node.integer and not value.is_integer())):
            return False
        if node.lo is not None and (value <= node.lo if node.gt else value < node.lo):
            return False
        return node.hi is None or value <= node.hi
    if isinstance(node, _Or):
        return any(_fits(value, o) for o in node.options)
    return False


def _shown(value: Any, typed: bool = False) -> str:
    """A value as a message shows it: a secret-shaped one never, a string quoted (``typed``: with its type
    name, "string '4s'"), a number as written, a container by its type."""
    if value == REDACTED:
        return "a secret-shaped value (not shown)"
    if isinstance(value, str):
        text = repr(value if len(value) <= 60 else value[:57] + "…")
        return f"string {text}" if typed else text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"number {json.dumps(value)[:40]}"
    return _type_name(value)


def _hint(node: _Obj, parent: str, key: str) -> str | None:
    """Where a misplaced ``key`` belongs: the table of real mistakes, a child object that has it, a near spelling."""
    moved = _MOVED.get((re.sub(r"\[\d+\]", "[]", parent), key))
    if moved:
        return moved
    base = "" if parent == "<root>" else parent + "."
    for name, child in node.fields.items():
        if isinstance(child, _Obj) and key in child.fields:
            return f"{base}{name}.{key}"
        if isinstance(child, _Obj):
            for sub, grand in child.fields.items():
                if isinstance(grand, _Obj) and key in grand.fields:
                    return f"{base}{name}.{sub}.{key}"
    close = difflib.get_close_matches(key, list(node.fields), n=1, cutoff=0.75)
    return f"{base}{close[0]}" if close else None


class _Issue(NamedTuple):
    key_path: str
    message: str
    allowed: list[str] | None = None


def _walk(value: Any, node: Any, path: str, out: list[_Issue], lenient: bool) -> None:
    """Check ``value`` against ``node``; issues go to ``out`` (key paths use ``a.b[0].c``).

    ``lenient`` (a build other than 2026.7.x, or an unknown one): unknown keys only count inside ``memory``
    (``memory.qmd`` has been strict since QMD arrived; keys were only ever added), the ``memorySearch``
    sections (their shape changed between eras) are not checked, and values of known keys must still have
    their type. Values clawprobe elided or redacted by key are not judged.
    """
    if node == ANY or value == ELIDED or (value == REDACTED and not isinstance(node, _Enum)) or len(out) >= 20:
        return
    if lenient and node is _MEMORY_SEARCH:
        return
    if isinstance(node, _Obj):
        if not isinstance(value, Mapping):
            out.append(_Issue(path, f"{path} must be an object, got {_type_name(value)}"))
            return
        for k in node.required:
            if k not in value:
                out.append(_Issue(f"{path}.{k}", f"{path}.{k} is required ({_want(node.fields[k])})"))
        strict = node.strict and (not lenient or path == "memory" or path.startswith("memory.qmd"))
        base = "" if path == "<root>" else path + "."
        for k, v in value.items():
            child = node.fields.get(k)
            if child is None:
                if lenient and path == "memory" and k == "search":
                    continue  # unknown build: memory.search is the 2026.8+ location
                if strict:
                    hint = _hint(node, path, str(k))
                    where = "at the top level" if path == "<root>" else f"in {path}"
                    allowed = sorted(node.fields) if len(node.fields) <= 30 else None
                    hint = f" (did you mean {hint}{'' if '?' in hint else '?'})" if hint else ""
                    out.append(_Issue(f"{base}{k}", f"{base}{k} is not a key OpenClaw accepts {where}{hint}", allowed))
                continue
            _walk(v, child, f"{base}{k}", out, lenient)
        return
    if isinstance(node, _Arr):
        if not isinstance(value, list):
            out.append(_Issue(path, f"{path} must be an array, got {_type_name(value)}"))
            return
        for i, item in enumerate(value):
            _walk(item, node.item, f"{path}[{i}]", out, lenient)
        return
    if isinstance(node, _Rec):
        if not isinstance(value, Mapping):
            out.append(_Issue(path, f"{path} must be an object, got {_type_name(value)}"))
            return
        for k, v in value.items():
            _walk(v, node.value, f"{path}.{k}", out, lenient)
        return
    if not _fits(value, node):
        if isinstance(node, _Enum):
            out.append(_Issue(path, f"{path} is {_shown(value)}", list(node.values)))
        else:
            out.append(_Issue(path, f"{path} must be {_want(node)}, got {_shown(value, typed=True)}"))


def schema_issues(tree: Mapping[str, Any], version: str | None) -> list[tuple[str, str, list[str] | None]]:
    """Every rejection OpenClaw's schema would make in the (redacted, subset) config ``tree`` (pure).

    Returns ``(key path, message, allowed values or keys)`` in document order, at most 20. On 2026.7.x the
    whole 2026.7.35 shape applies (:data:`SCHEMA_2026_7`) — on a measured release only
    (:func:`.understood.openclaw_understood`: an unmeasured 2026.7.36 may accept keys 2026.7.35 refused); on
    another build with QMD, or an unknown one, the lenient subset (see :func:`_walk`); on a build without QMD
    nothing here (QMD keys are ``retired_keys``).
    """
    if has_qmd_backend(version) is False:
        return []
    v = calver(version)
    out: list[_Issue] = []
    strict = v is not None and v[:2] == (2026, 7) and openclaw_understood(version)
    _walk(tree, SCHEMA_2026_7, "<root>", out, lenient=not strict)
    return [(i.key_path, i.message, i.allowed) for i in out]


def validate_memory(tree: Mapping[str, Any], version: str | None, file: str | None = None) -> ConfigError | None:
    """The config checks OpenClaw's schema applies to what clawprobe reads (pure). ``None`` when acceptable.

    On a build with QMD (≤ 2026.7, or unknown): :func:`schema_issues` — the memory section (``memory.backend``
    ∈ builtin|qmd (RW01), ``memory.qmd.*`` shapes and key set), ``agents`` (``list`` an array of ``{id, …}``,
    ``workspace`` strings, ``memorySearch`` shapes and key set), ``logging``, ``gateway.reload``,
    ``plugins.slots``, ``tools.sessions`` and the top-level key set; the first issue is the error, the
    others are counted in its message. On a build without QMD, QMD keys are ``retired_keys`` (→
    ``backend_retired``), not a schema error here; the legacy ``agents.defaults.memorySearch`` alone is a schema
    error there (moved to ``memory.search``).
    """
    if has_qmd_backend(version) is False:
        if not retired_keys(tree) and _get(tree, "agents", "defaults", "memorySearch") is not None:
            return _schema("agents.defaults.memorySearch was moved to memory.search in OpenClaw 2026.8 "
                           "(openclaw doctor --fix migrates it)", file, "agents.defaults.memorySearch")
        return None
    issues = schema_issues(tree, version)
    if not issues:
        return None
    key_path, message, allowed = issues[0]
    if key_path == "memory.backend" and allowed == list(BACKENDS):
        message += "; a memory plugin is chosen with plugins.slots.memory, not this key"
    if len(issues) > 1:
        more = "; ".join(m for _, m, _ in issues[1:4])
        message += f" — {len(issues) - 1} more: {more}" + ("; …" if len(issues) > 4 else "")
    return _schema(message, file, key_path, allowed)
