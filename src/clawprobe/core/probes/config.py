"""Config probe: read OpenClaw's JSON5 config as OpenClaw does, and extract the memory settings.

Gather (:func:`read_config`): the config file and its ``$include`` files, bytes read once each (bounded).
Interpret (pure): JSON5 parse with an exact line:column on error (:func:`parse_json5`), ``$include``
resolution (relative to the including file, arrays merged, cycles and depth > 10 rejected, as
``includes.ts``), ``${VAR}`` substitution with the ``$${VAR}`` escape (``env-substitution.ts``), the schema
checks OpenClaw 2026.7.35 itself applies to what clawprobe reads (:func:`validate_memory`, in
:mod:`clawprobe.core.probes.config_schema`), era detection
(QMD keys on a build without QMD → ``retired_keys``), and :func:`memory_settings`.

Secrets never leave this module: :func:`read_config` returns only a *redacted* subset of the tree
(``memory``, ``agents``, ``logging``, ``gateway.reload``, ``plugins.slots``, ``tools.sessions``; other top-level
keys by name only), with every key that looks like a credential replaced by ``"<redacted>"`` and every
secret-shaped string value (``sk-…``, ``ghp_…``, a URL with ``user:pass@``…, :mod:`clawprobe.core.redaction`) masked,
except the paths and commands probes must use verbatim (:data:`VERBATIM_KEYS`), which are masked where they
are reported. Error messages never quote a secret.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeGuard

import pyjson5
from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.lease import (
    DEFAULT_INTERVAL_S,
    DEFAULT_MARGIN_S,
    DEFAULT_UPDATE_DURATION_S,
    MAX_DURATION_S,
    Lease,
)
from clawprobe.core.locate import agent_entry, agent_key, normalize_agent_id, workspace_key
from clawprobe.core.mapping import as_list, as_mapping
from clawprobe.core.probes.config_schema import (
    ELIDED,
    REDACTED,
    SCHEMA_2026_7,
    SEARCH_MODES,
    _get,
    retired_keys,
    validate_memory,
)
from clawprobe.core.probes.fileinfo import open_regular, permission_detail
from clawprobe.core.probes.tool_policy import ToolPolicy, tool_policy
from clawprobe.core.receipt import QMD_SNIPPET_DEFAULTS, ConfigError, ConfigFacts, SearchMode
from clawprobe.core.redaction import redact_text, redact_values
from clawprobe.core.shell import words_after_first

MAX_CONFIG_BYTES = 8 * 1024 * 1024
MAX_INCLUDE_DEPTH = 10
INCLUDE_KEY = "$include"
#: keys whose string values probes use verbatim (paths, commands, ids, collection names): kept as written in the
#: tree; what reaches a receipt from them is masked where it is reported (:func:`config_facts`).
VERBATIM_KEYS = frozenset({"command", "path", "workspace", "agentDir", "extraPaths", "exportDir", "file", "modelPath",
                           "modelCacheDir", "extensionPath", "id", "name", "pattern"})
_SECRET_KEY = re.compile(r"(api[_-]?key|token(?!s\b|s$|iz|is)|secret|passw(or)?d|authorization|^auth$|credential"
                         r"|cookie|private[_-]?key|^headers$|^env$|^key$)", re.I)  # not tokens/tokenizer/maxTokens
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_NEAR = re.compile(r"near (\d+)")
_DURATION_ONE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_DURATION_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
NON_PINNED_PROVIDERS = ("", "auto", "local", "none")


class ConfigProblem(Exception):
    """Internal: carries a :class:`ConfigError` out of the parse/include/env steps."""

    def __init__(self, error: ConfigError):
        super().__init__(error.message)
        self.error = error


class ConfigSnapshot(BaseModel):
    """The config as read at one moment (source: the config file and its ``$include`` files).

    ``tree`` is the redacted memory-relevant subset (never a secret). ``files`` lists every file read
    (config first, then includes) — the watch targets. ``exists`` is false when no config file exists
    (OpenClaw then runs on defaults). ``mtime`` (epoch seconds) is the newest mtime among ``files``.
    ``missing_env`` names ``${VAR}`` references outside the memory settings that clawprobe's environment
    cannot resolve (the service environment may have them; not an error by itself); ``env_names`` every
    ``${VAR}`` the config references (names only, never a value).
    """

    model_config = ConfigDict(extra="forbid")
    path: str
    exists: bool = True
    files: list[str] = Field(default_factory=list)
    tree: dict = Field(default_factory=dict)
    error: ConfigError | None = None
    mtime: float | None = None
    missing_env: list[str] = Field(default_factory=list)
    env_names: list[str] = Field(default_factory=list)


class MemorySettings(BaseModel):
    """The memory settings of one agent, with OpenClaw's defaults applied (``backend-config.ts`` 2026.7.35).

    Durations in seconds. ``*_source`` fields say which config key (or default) a value came from.
    ``hash`` = sha256 of the canonical JSON of the memory-relevant settings (secrets redacted).
    """

    model_config = ConfigDict(extra="forbid")
    configured_backend: Literal["builtin", "qmd"] = "builtin"
    search_mode: Literal["search", "vsearch", "query"] = "search"
    qmd_command: str | None = None
    qmd_command_raw: str | None = None
    #: the words of ``memory.qmd.command`` after the first — OpenClaw runs the first word alone, without them
    #: (a ``"node /…/qmd"`` line runs ``node collection add …``)
    qmd_command_args: list[str] = Field(default_factory=list)
    update_interval_s: float = 300.0
    interval_source: str = "OpenClaw default (memory.qmd.update.interval = 5m)"
    debounce_s: float = 15.0
    embed_interval_s: float = 3600.0
    command_timeout_s: float = 30.0
    update_timeout_s: float = 120.0
    embed_timeout_s: float = 120.0
    search_timeout_s: float = 4.0
    #: the shortest text one QMD hit can carry, in characters, and the key that sets it: the smaller of
    #: ``memory.qmd.limits.maxSnippetChars`` (each hit's snippet is sliced to it) and ``maxInjectedChars`` (all hits
    #: together; the first hit is sliced to it) — 2026.7.35 ``qmd-manager`` search / ``clampResultsByInjectedChars``,
    #: defaults 450 and 2200 (``backend-config`` ``DEFAULT_QMD_LIMITS``; a value that is not a positive number is
    #: the default, a fraction is floored)
    snippet_cap: tuple[int, str] = (450, "memory.qmd.limits.maxSnippetChars")
    startup: str = "off"
    scope_default: Literal["allow", "deny"] | None = None
    #: ``memorySearch.qmd.extraCollections[].path`` (defaults, then the agent's entry): collections 2026.7.35's
    #: QMD manager adds beside the managed ones
    qmd_extra_collections: list[str] = Field(default_factory=list)
    sessions_enabled: bool = False
    sessions_export_dir: str | None = None
    sessions_retention_days: int | None = None
    include_default_memory: bool = True
    qmd_paths: list[str] = Field(default_factory=list)
    extra_paths: list[str] = Field(default_factory=list)
    extra_path_patterns: dict[str, list[str]] = Field(default_factory=dict)
    provider: str | None = None
    provider_source: str | None = None
    provider_explicit: bool = False
    retired_keys: list[str] = Field(default_factory=list)
    log_file: str | None = None
    reload_mode: str = "hybrid"
    memory_slot: str | None = None
    memory_off: str | None = None
    sources: list[str] | None = None
    #: the key of a ``sync.watch: false`` (the gateway's file watcher off), ``None``: the watcher is on (OpenClaw's
    #: default: a changed note is synced ``watchDebounceMs`` after the change, whatever the update interval)
    watch_off: str | None = None
    keyword_off: str | None = None
    #: ``memory.qmd.update.onBoot`` (default true): one update when the gateway starts
    on_boot: bool = True
    sources_key: str | None = None
    hash: str = ""


# --------------------------------------------------------------------------------------------------------
# JSON5 parsing with line:column
# --------------------------------------------------------------------------------------------------------

def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of character ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _string_newline(text: str, quote_at: int) -> int | None:
    """Offset of the first raw line break inside the string that opens at ``quote_at``, if any."""
    if quote_at >= len(text) or text[quote_at] not in "\"'":
        return None
    q, i = text[quote_at], quote_at + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2 if text[i + 1:i + 3] != "\r\n" else 3
            continue
        if c == q:
            return None
        if c in "\n\r\u2028\u2029":
            return i
        i += 1
    return None


def parse_json5(text: str, origin: str) -> Any:
    """Parse JSON5 text (pyjson5). Raises :class:`ConfigProblem` (kind ``parse``) with line and column.

    pyjson5 reports "... near N" with N the 1-based character position; an unclosed string is reported
    at its opening quote, so the raw line break inside it is located here and named as the construct.
    """
    try:
        return pyjson5.decode(text)
    except pyjson5.Json5Exception as e:
        msg = str(e.args[0]) if e.args else str(e)
        m = _NEAR.search(msg)
        offset = int(m[1]) - 1 if m else len(text)
        construct = msg
        if "Unclosed" in msg and "string" in msg:
            nl = _string_newline(text, offset)
            if nl is not None:
                offset = nl
                construct = "unescaped line break inside a string (escape it as \\n or regenerate the file)"
            else:
                construct = "string never closed"
        elif "Unclosed" in msg:
            construct = msg.replace("b'", "'").replace(" starting", " opened") + " and never closed"
        elif "Extra data" in msg:
            m2 = re.search(r"U\+([0-9A-Fa-f]{4,6})", msg)
            ch = chr(int(m2[1], 16)) if m2 else None
            found = text.find(ch, max(0, offset)) if ch else -1
            offset = found if found != -1 else offset
            construct = f"unexpected {ch!r} after the end of the top-level value" if ch else msg
        elif "Stray" in msg or "Expected" in msg:
            construct = msg.replace("b'", "'")
        line, col = line_col(text, offset)
        raise ConfigProblem(ConfigError(kind="parse", message=f"JSON5: {construct} at {line}:{col}", file=origin,
                                        line=line, column=col)) from None
    except (ValueError, RecursionError, OverflowError) as e:
        raise ConfigProblem(ConfigError(kind="parse", message=f"JSON5: {type(e).__name__}", file=origin)) from None


# --------------------------------------------------------------------------------------------------------
# Reading files, $include, ${VAR}
# --------------------------------------------------------------------------------------------------------

def _read_text(path: str, what: str, kind_missing: Literal["include", "unreadable"]) -> tuple[str, float]:
    """Read a config file as UTF-8 (BOM stripped). Raises :class:`ConfigProblem`."""
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            raise ConfigProblem(ConfigError(kind="unreadable", message=f"{what} is not a regular file", file=path))
        if st.st_size > MAX_CONFIG_BYTES:
            raise ConfigProblem(ConfigError(kind="unreadable", message=f"{what} is larger than {MAX_CONFIG_BYTES} bytes",
                                            file=path))
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except ConfigProblem:
        raise
    except FileNotFoundError:
        raise ConfigProblem(ConfigError(kind=kind_missing, message=f"{what} does not exist", file=path)) from None
    except OSError as e:
        why = "symlink loop" if e.errno == 40 else (e.strerror or type(e).__name__)
        why += permission_detail(path) if isinstance(e, PermissionError) else ""
        raise ConfigProblem(ConfigError(kind="unreadable", message=f"{what} cannot be read: {why}", file=path)) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise ConfigProblem(ConfigError(kind="encoding", message=f"{what} is not UTF-8 (byte 0x{raw[e.start]:02x} at "
                                        f"offset {e.start})", file=path, line=line, column=col)) from None
    return text, st.st_mtime


def deep_merge(target: Any, source: Any) -> Any:
    """OpenClaw's include merge: arrays concatenate, objects merge recursively, otherwise ``source`` wins."""
    if isinstance(target, list) and isinstance(source, list):
        return [*target, *source]
    if isinstance(target, dict) and isinstance(source, dict):
        out = dict(target)
        for k, v in source.items():
            if k in ("__proto__", "constructor", "prototype"):
                continue
            out[k] = deep_merge(out[k], v) if k in out else v
        return out
    return source


class _Includes:
    """``$include`` processing (``includes.ts``): paths relative to the including file, inside the config
    directory, no cycles, depth ≤ 10. ``files`` collects every file read; ``mtime`` the newest."""

    def __init__(self, base: str):
        self.root = os.path.dirname(os.path.abspath(base))
        self.chain = [os.path.normpath(os.path.abspath(base))]
        self.files: list[str] = []
        self.mtime: float = 0.0

    def process(self, obj: Any, current: str) -> Any:
        if isinstance(obj, list):
            return [self.process(x, current) for x in obj]
        if not isinstance(obj, dict):
            return obj
        if INCLUDE_KEY not in obj:
            return {k: self.process(v, current) for k, v in obj.items()}
        value = obj[INCLUDE_KEY]
        rest = {k: self.process(v, current) for k, v in obj.items() if k != INCLUDE_KEY}
        if isinstance(value, str):
            included = self.load(value, current)
        elif isinstance(value, list):
            included = {}
            for item in value:
                if not isinstance(item, str):
                    raise self._err(f"$include array item is {type(item).__name__}, expected a file path", current)
                included = deep_merge(included, self.load(item, current))
        else:
            raise self._err(f"$include must be a path or a list of paths, got {type(value).__name__}", current)
        if not rest:
            return included
        if not isinstance(included, dict):
            raise self._err("$include with sibling keys must include an object", current)
        return deep_merge(included, rest)

    def _err(self, message: str, file: str) -> ConfigProblem:
        return ConfigProblem(ConfigError(kind="include", message=message, file=file))

    def load(self, include: str, current: str) -> Any:
        if "\0" in include or len(include) >= 4096:
            raise self._err("$include path is not usable (NUL byte or too long)", current)
        target = os.path.normpath(include if os.path.isabs(include) else os.path.join(os.path.dirname(current), include))
        if os.path.commonpath([self.root, target]) != self.root:
            raise self._err(f"$include {include!r} escapes the config directory {self.root}", current)
        if target in self.chain:
            raise self._err("circular $include: " + " -> ".join([*self.chain, target]), current)
        if len(self.chain) > MAX_INCLUDE_DEPTH:
            raise self._err(f"$include deeper than {MAX_INCLUDE_DEPTH} at {include!r}", current)
        try:
            text, mtime = _read_text(target, f"$include {include!r}", "include")
        except ConfigProblem as p:
            e = p.error
            kind = "include" if e.kind in ("unreadable", "include") else e.kind
            raise ConfigProblem(e.model_copy(update={"kind": kind, "message": f"{e.message} (included from {current})"})) \
                from None
        self.files.append(target)
        self.mtime = max(self.mtime, mtime)
        try:
            parsed = parse_json5(text, target)
        except ConfigProblem as p:
            raise ConfigProblem(p.error.model_copy(update={
                "kind": "include", "message": f"$include {include!r} does not parse: {p.error.message}"})) from None
        self.chain.append(target)
        try:
            return self.process(parsed, target)
        finally:
            self.chain.pop()


def _is_memory_path(path: str) -> bool:
    return path == "memory" or path.startswith("memory.") or "memorySearch" in path or ".memory." in path \
        or path.endswith(".memory") or path.startswith("plugins.slots.memory")


def substitute_env(obj: Any, env: Mapping[str, str], path: str = "", missing: list[str] | None = None) -> Any:
    """Replace ``${VAR}`` (``[A-Z_][A-Z0-9_]*``) in every string; ``$${VAR}`` is the literal ``${VAR}``.

    A missing or empty variable under a memory-relevant, non-credential key raises :class:`ConfigProblem`
    (kind ``env``) naming the variable and the key path; elsewhere (and for credentials, which usually live
    only in the service environment) it is recorded in ``missing`` and the reference is left as is.
    """
    if isinstance(obj, dict):
        return {k: substitute_env(v, env, f"{path}.{k}" if path else str(k), missing) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute_env(v, env, f"{path}[{i}]", missing) for i, v in enumerate(obj)]
    if not isinstance(obj, str) or "$" not in obj:
        return obj
    out: list[str] = []
    i = 0
    while i < len(obj):
        c = obj[i]
        if c == "$" and obj.startswith("$${", i):
            end = obj.find("}", i + 3)
            if end != -1 and _ENV_NAME.match(obj[i + 3:end]):
                out.append("${" + obj[i + 3:end] + "}")
                i = end + 1
                continue
        if c == "$" and obj.startswith("${", i):
            end = obj.find("}", i + 2)
            name = obj[i + 2:end] if end != -1 else ""
            if end != -1 and _ENV_NAME.match(name):
                value = env.get(name)
                if not value:
                    secret = any(_SECRET_KEY.search(part) for part in re.split(r"[.\[\]]", path) if part)
                    if _is_memory_path(path) and not secret:
                        raise ConfigProblem(ConfigError(kind="env", message=f"${{{name}}} is not set (referenced at "
                                                        f"{path})", key_path=path))
                    if missing is not None:
                        missing.append(name)
                    out.append(obj[i:end + 1])
                else:
                    out.append(value)
                i = end + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


_ENV_REF = re.compile(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)\}")


_PORTABLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: config env keys OpenClaw never applies (2026.7.35 ``isBlockedConfigEnvVar``; its host-security blocklist of
#: process-hijacking names — PATH, LD_PRELOAD, NODE_OPTIONS … — is not repeated: no memory setting references them)
_BLOCKED_CONFIG_ENV = frozenset({"OPENCLAW_ALLOW_OLDER_BINARY_DESTRUCTIVE_ACTIONS", "OPENCLAW_INCLUDE_ROOTS"})


def config_env_vars(tree: Mapping[str, Any]) -> dict[str, str]:
    """The variables the config's own ``env`` block supplies (pure; 2026.7.35 ``collectConfigEnvVarsByTarget``):
    ``env.vars.<KEY>`` and ``env.<KEY>`` string values (the latter win; ``shellEnv`` and ``vars`` are no keys),
    each with a portable name, a non-blank value holding no ``${…}`` reference, and not a blocked key. OpenClaw
    applies them before it substitutes ``${VAR}``, never over a variable the process or a dotenv file (``<state>/.env``,
    measured with 2026.7.35 ``config get``) already has (breaker round 10,
    s13: ``memory.qmd.command: "${QMD_BIN}"`` with ``env.vars.QMD_BIN`` is a working config). Values are never
    stored or shown: they only resolve references."""
    block = as_mapping(tree.get("env"))
    out: dict[str, str] = {}
    for source in (as_mapping(block.get("vars")), {k: v for k, v in block.items() if k not in ("shellEnv", "vars")}):
        for raw, value in source.items():
            key = str(raw).strip()
            if isinstance(value, str) and value.strip() and _PORTABLE_KEY.match(key) and "${" not in value \
                    and key.upper() not in _BLOCKED_CONFIG_ENV:
                out[key] = value
    return out


def env_references(obj: Any) -> set[str]:
    """The names of every ``${VAR}`` the config references (``$${VAR}`` is a literal), in any string (pure)."""
    if isinstance(obj, dict):
        return set().union(*(env_references(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(env_references(v) for v in obj)) if obj else set()
    return set(_ENV_REF.findall(obj)) if isinstance(obj, str) and "${" in obj else set()


def redact(obj: Any) -> Any:
    """A copy of ``obj`` with every credential-looking key's value replaced by ``"<redacted>"``."""
    if isinstance(obj, dict):
        return {k: (REDACTED if _SECRET_KEY.search(str(k)) and v not in (None, "", {}, []) else redact(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    return obj


#: the keys of ``tools`` (and of each ``tools.byProvider.<p>``) that decide whether an agent gets a tool
TOOL_POLICY_KEYS = ("profile", "allow", "alsoAllow", "deny")


def _subset(tree: Mapping[str, Any]) -> dict:
    """The memory-relevant sections only, secrets masked: memory, agents, logging, gateway.reload, plugins.slots,
    plugins.enabled, plugins.deny, plugins.allow, plugins.entries.<id>.enabled (nothing else of an entry),
    tools.sessions, the tool policy (tools.profile/allow/alsoAllow/deny/byProvider: whether the agent gets
    memory_search, :mod:`clawprobe.core.probes.tool_policy`).
    A top-level key OpenClaw 2026.7.35 does not know is kept with the value :data:`ELIDED` (its
    name is what the top-level key check needs; its content is never read); known other sections are dropped.
    Credential keys → ``<redacted>`` (:func:`redact`), then secret-shaped string values → ``<redacted>``
    (:func:`clawprobe.core.redaction.redact_values`), except under :data:`VERBATIM_KEYS`."""
    out: dict[str, Any] = {}
    for key in ("memory", "agents", "logging"):
        if key in tree:
            out[key] = tree[key]
    gw = tree.get("gateway")
    if isinstance(gw, Mapping) and "reload" in gw:
        out["gateway"] = {"reload": gw["reload"]}
    plugins = tree.get("plugins")
    if isinstance(plugins, Mapping):  # what switches the memory plugin off: the slot, enabled, deny, an entry's enabled
        kept: dict[str, Any] = {k: plugins[k] for k in ("slots", "enabled", "deny", "allow") if k in plugins}
        if not isinstance(kept.get("slots"), Mapping):
            kept.pop("slots", None)
        entries = plugins.get("entries")
        if isinstance(entries, Mapping):
            off = {str(k): {"enabled": v["enabled"]} for k, v in entries.items()
                   if isinstance(v, Mapping) and "enabled" in v}
            if off:
                kept["entries"] = off
        if kept:
            out["plugins"] = kept
    tools = tree.get("tools")
    if isinstance(tools, Mapping):
        policy = {k: tools[k] for k in TOOL_POLICY_KEYS if k in tools}  # the tool policy (probes/tool_policy.py)
        if isinstance(tools.get("byProvider"), Mapping):
            policy["byProvider"] = {str(p): {k: v[k] for k in TOOL_POLICY_KEYS if k in v} if isinstance(v, Mapping)
                                    else v for p, v in tools["byProvider"].items()}
        if isinstance(tools.get("sessions"), Mapping):
            policy["sessions"] = tools["sessions"]  # tools.sessions.visibility gates session hits (RW28)
        if policy:
            out["tools"] = policy
    elif tools is not None:
        out["tools"] = tools  # not a map: the tool policy says it cannot evaluate it
    for key in tree:
        if key not in SCHEMA_2026_7.fields:
            out.setdefault(str(key), ELIDED)
    masked: dict[str, Any] = redact_values(redact(out), VERBATIM_KEYS)  # same shape as its input
    return masked


#: dotenv 17.4.2's line rule (``lib/main.js`` ``LINE``; both OpenClaw 2026.7.35 and 2026.9.6 ship that version)
_DOTENV_LINE = re.compile(r"""(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|"""
                          r"""\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)""", re.M)
_DOTENV_QUOTED = re.compile(r"^(['\"`])([\s\S]*)\1$", re.M)
_PORTABLE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # OpenClaw's normalizeEnvVarKey(…, {portable: true})
MAX_DOTENV_BYTES = 1024 * 1024  # OpenClaw's MAX_DOTENV_FILE_BYTES: a larger file is skipped whole


def parse_dotenv(text: str) -> dict[str, str]:
    """``KEY=value`` pairs of a dotenv text as OpenClaw reads them: dotenv 17.4.2's ``parse`` (``export``,
    ``KEY: value``, single/double/back quotes, multi-line quoted values, ``\\n`` in double quotes, an inline
    ``# comment`` after an unquoted value dropped, a later line winning), then only portable keys (pure)."""
    out: dict[str, str] = {}
    for m in _DOTENV_LINE.finditer(text.replace("\r\n", "\n").replace("\r", "\n")):
        value = (m[2] or "").strip()
        quote = value[:1]
        value = _DOTENV_QUOTED.sub(r"\2", value)
        if quote == '"':
            value = value.replace("\\n", "\n").replace("\\r", "\r")
        key = m[1].strip()
        if _PORTABLE_KEY.fullmatch(key):
            out[key] = value
    return out


def load_env_file(path: str) -> dict[str, str]:
    """:func:`parse_dotenv` of one dotenv file (its real path, a regular file of at most 1 MiB, as OpenClaw's
    ``readDotEnvFile``); missing, unreadable or oversized → ``{}``. Used only for ``${VAR}`` resolution,
    never stored."""
    try:
        with open_regular(os.path.realpath(path)) as f:  # a FIFO there never blocks the read
            data = f.read(MAX_DOTENV_BYTES + 1)
    except OSError:
        return {}
    return parse_dotenv(data.decode("utf-8", errors="replace")) if len(data) <= MAX_DOTENV_BYTES else {}


def runtime_dotenv(state_dir: str, env: Mapping[str, str]) -> dict[str, str]:
    """The variables OpenClaw's ``loadGlobalRuntimeDotEnvFiles`` adds (both eras): ``<state>/.env``, then
    ``~/.config/openclaw/gateway.env`` — the latter only for the default state dir (``<home>/.openclaw``:
    an explicit other ``OPENCLAW_STATE_DIR`` skips it); the first file to set a key wins, and a key already in
    ``env`` is never replaced (the caller lets ``env`` win). The CLI's own cwd ``.env`` is not read: the
    gateway's working directory is not known here."""
    from clawprobe.core.locate import home_dir

    out = load_env_file(os.path.join(state_dir, ".env"))
    home = home_dir(env)
    if os.path.normpath(state_dir) == os.path.normpath(os.path.join(home, ".openclaw")):
        for k, v in load_env_file(os.path.join(home, ".config", "openclaw", "gateway.env")).items():
            out.setdefault(k, v)
    return out


def read_config(path: str, env: Mapping[str, str], state_dir: str | None = None) -> ConfigSnapshot:
    """Read and resolve the config at ``path`` (GATHER). Never raises: problems land in ``error``.

    ``env`` resolves ``${VAR}``, completed by the dotenv files OpenClaw loads (:func:`runtime_dotenv`). A missing file is
    not an error (``exists=False``, OpenClaw defaults); one that cannot be looked at or read (a state dir or
    file this user may not read) is an ``unreadable`` error naming the blocking path, its mode and owner —
    never the defaults of an absent install.
    """
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ConfigSnapshot(path=path, exists=False)
    except OSError as exc:  # cannot even look (a state dir with mode 000): a fault, never "no config"
        return ConfigSnapshot(path=path, files=[path], error=ConfigError(
            kind="unreadable", message=f"config file cannot be looked at: {exc.strerror or type(exc).__name__}"
                                       f"{permission_detail(path)}", file=path))
    snap = ConfigSnapshot(path=path, files=[path])
    try:
        text, mtime = _read_text(path, "config file", "unreadable")
        tree = parse_json5(text, path)
        if not isinstance(tree, dict):
            raise ConfigProblem(ConfigError(kind="schema", message=f"top level is {type(tree).__name__}, expected an "
                                            "object", file=path, key_path="<root>"))
        inc = _Includes(path)
        tree = inc.process(tree, os.path.abspath(path))
        if not isinstance(tree, dict):
            raise ConfigProblem(ConfigError(kind="include", message="$include at the top level must give an object",
                                            file=path))
        own = config_env_vars(tree)  # the lowest: under the dotenv files and the process (measured, 2026.7.35)
        full_env = {**own, **(runtime_dotenv(state_dir, env) if state_dir else {})}
        full_env.update({k: v for k, v in env.items() if v.strip() or k not in own})  # not over a set variable
        missing: list[str] = []
        snap.env_names = sorted(env_references(tree))
        tree = substitute_env(tree, full_env, missing=missing)
        snap.files += inc.files
        snap.mtime = max([mtime, inc.mtime])
        snap.tree = _subset(tree)
        snap.missing_env = sorted(set(missing))
        nul = _nul_key(snap.tree)
        if nul is not None:  # every path/command use would fail ("embedded null byte"): the config is unusable
            raise ConfigProblem(ConfigError(kind="schema", message="a string holds a NUL byte (no path, command or "
                                            "name can contain one)", file=path, key_path=nul))
    except ConfigProblem as p:
        e = p.error
        snap.error = e if e.file else e.model_copy(update={"file": path})
    except RecursionError:
        snap.error = ConfigError(kind="parse", message="config nested too deeply", file=path)
    return snap


def _nul_key(node: Any, at: str = "") -> str | None:
    """The dotted key path of the first key or string value holding ``\\0`` (``None`` when none does)."""
    if isinstance(node, str):
        return at or "<root>" if "\x00" in node else None
    if isinstance(node, dict):
        for k, v in node.items():
            here = f"{at}.{k}" if at else str(k)
            if "\x00" in str(k):
                return here
            found = _nul_key(v, here)
            if found:
                return found
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found = _nul_key(v, f"{at}[{i}]")
            if found:
                return found
    return None


# --------------------------------------------------------------------------------------------------------
# Schema checks and extraction (pure)
# --------------------------------------------------------------------------------------------------------

def parse_duration_s(raw: Any, default_unit: str = "m") -> float | None:
    """OpenClaw's ``parseDurationMs`` in seconds: ``"5m"``, ``"1h30m"``, ``"90"`` (default unit minutes).

    Returns ``None`` for an invalid value (OpenClaw then silently uses its default).
    """
    s = str(raw).strip().lower() if raw is not None else ""
    if not s:
        return None
    m = _DURATION_ONE.match(s)
    if m:
        return float(m[1]) * _DURATION_MS[m[2] or default_unit] / 1000.0
    total, consumed = 0.0, 0
    for part in _DURATION_PART.finditer(s):
        if part.start() != consumed:
            return None
        total += float(part[1]) * _DURATION_MS[part[2]]
        consumed = part.end()
    return total / 1000.0 if consumed == len(s) and consumed else None


def _provider(tree: Mapping[str, Any], agent_id: str) -> tuple[str | None, str | None]:
    """(provider, source key) — per-agent override first, then the defaults; both eras' locations."""
    entry = agent_entry(tree, agent_id) or {}
    aid = normalize_agent_id(agent_id)
    for value, source in (
        (_get(entry, "memory", "search", "provider"), f"agents.entries.{aid}.memory.search.provider"),
        (_get(entry, "memorySearch", "provider"), f"agents.list[{aid}].memorySearch.provider"),
        (_get(tree, "memory", "search", "provider"), "memory.search.provider"),
        (_get(tree, "agents", "defaults", "memorySearch", "provider"), "agents.defaults.memorySearch.provider"),
    ):
        if isinstance(value, str):
            return value, source
    return None, None


def _extra_paths(tree: Mapping[str, Any], agent_id: str) -> tuple[list[str], dict[str, list[str]]]:
    """(the configured extra paths, de-duplicated in order; per path the glob patterns that filter it).

    An entry is a string or (2026.9.6) ``{path, pattern?}``, its path with surrounding blanks trimmed as
    OpenClaw trims it (a blank entry names nothing). A path given only by entries that carry a
    ``pattern`` indexes the files under it whose path relative to it matches one of them (OpenClaw's
    ``matchesExtraMemoryPathEntry``); a plain entry for the same path takes everything, as OpenClaw unites
    what each entry lists."""
    entry = agent_entry(tree, agent_id) or {}
    found: list[str] = []
    patterns: dict[str, list[str]] = {}
    unfiltered: set[str] = set()
    for v in (_get(tree, "agents", "defaults", "memorySearch", "extraPaths"), _get(entry, "memorySearch", "extraPaths"),
              _get(tree, "memory", "search", "extraPaths"), _get(entry, "memory", "search", "extraPaths")):
        for x in v if isinstance(v, list) else ():
            path = x if isinstance(x, str) else x.get("path") if isinstance(x, Mapping) else None
            if not isinstance(path, str) or not path.strip():
                continue
            path = path.strip()  # OpenClaw trims each entry (normalizeConfiguredMemoryExtraPaths; breaker round 9, p01)
            found.append(path)
            pattern = x.get("pattern") if isinstance(x, Mapping) else None
            if isinstance(pattern, str) and pattern:
                patterns.setdefault(path, []).append(pattern.replace("\\", "/"))
            else:
                unfiltered.add(path)
    return list(dict.fromkeys(found)), {k: v for k, v in patterns.items() if k not in unfiltered}


def _search_setting(tree: Mapping[str, Any], agent_id: str, name: str) -> Iterator[tuple[Any, str]]:
    """Each place a memory search setting ``name`` can be set for this agent, with its key path, in OpenClaw's
    order — the agent entry's own over the defaults, in both eras' places (2026.9.6 ``memory.search``,
    2026.7.35 ``memorySearch``); the first that holds a value of the right type decides."""
    entry = agent_entry(tree, agent_id) or {}
    aid = normalize_agent_id(agent_id)
    yield _get(entry, "memory", "search", name), f"agents.entries.{aid}.memory.search.{name}"
    yield _get(entry, "memorySearch", name), f"agents.list[{aid}].memorySearch.{name}"
    yield _get(tree, "memory", "search", name), f"memory.search.{name}"
    yield _get(tree, "agents", "defaults", "memorySearch", name), f"agents.defaults.memorySearch.{name}"


def _sources(tree: Mapping[str, Any], agent_id: str) -> tuple[list[str], str] | None:
    """(the memory sources the builtin engine indexes for this agent, the key that sets them), or ``None`` when
    none sets them or the list is empty (OpenClaw's default takes the notes)."""
    for value, key in _search_setting(tree, agent_id, "sources"):
        if isinstance(value, list):
            named = [str(x) for x in value if isinstance(x, str)]
            # an empty list is OpenClaw's default, notes included (measured: 2026.7.35 and 2026.9.6, either level)
            return (named, key) if named else None
    return None


def _search_disabled(tree: Mapping[str, Any], agent_id: str) -> str | None:
    """The key that switches this agent's memory search off (``enabled: false``: OpenClaw resolves the settings
    to none, "Memory search disabled."), else ``None``."""
    for value, key in _search_setting(tree, agent_id, "enabled"):
        if isinstance(value, bool):
            return None if value else key
    return None


def _watch_off(tree: Mapping[str, Any], agent_id: str) -> str | None:
    """The key of this agent's ``sync.watch: false``, else ``None`` (the watcher is on)."""
    for value, key in _search_setting(tree, agent_id, "sync"):
        watch = value.get("watch") if isinstance(value, Mapping) else None
        if isinstance(watch, bool):
            return None if watch else f"{key}.watch"
    return None


def _keyword_off(tree: Mapping[str, Any], agent_id: str) -> str | None:
    """The key of this agent's ``query.hybrid.enabled: false`` (2026.7.35 ``memorySearch``: the builtin engine then
    opens no full-text table, so without an embedding provider nothing can be searched), else ``None``. Each
    nested key is merged on its own, the agent's entry over the defaults (the first boolean decides)."""
    for value, key in _search_setting(tree, agent_id, "query"):
        hybrid = value.get("hybrid") if isinstance(value, Mapping) else None
        enabled = hybrid.get("enabled") if isinstance(hybrid, Mapping) else None
        if isinstance(enabled, bool):
            return None if enabled else f"{key}.hybrid.enabled"
    return None


def _positive_ms(v: Any, default_s: float) -> float:
    return max(1.0, float(int(v))) / 1000.0 if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 \
        else default_s


def _snippet_cap(limits: Mapping[str, Any]) -> tuple[int, str]:
    """``(characters, key)``: the smaller of ``maxSnippetChars`` and ``maxInjectedChars`` as OpenClaw 2026.7.35
    resolves them (:attr:`MemorySettings.snippet_cap`; ``maxSnippetChars`` when they are equal)."""
    def chars(key: str) -> tuple[int, str]:
        v = limits.get(key.rsplit(".", 1)[1])
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            return max(1, math.floor(v)), key
        return QMD_SNIPPET_DEFAULTS[key], key
    return min((chars(k) for k in QMD_SNIPPET_DEFAULTS), key=lambda c: c[0])  # maxSnippetChars first: it wins a tie


def _extra_collections(tree: Mapping[str, Any], agent_id: str) -> list[str]:
    """The paths of ``memorySearch.qmd.extraCollections`` (``agents.defaults`` and the agent's entry), trimmed,
    de-duplicated in order."""
    entry = agent_entry(tree, agent_id) or {}
    out: list[str] = []
    for v in (_get(tree, "agents", "defaults", "memorySearch", "qmd", "extraCollections"),
              _get(entry, "memorySearch", "qmd", "extraCollections")):
        for x in v if isinstance(v, list) else ():
            path = x.get("path") if isinstance(x, Mapping) else x if isinstance(x, str) else None
            if isinstance(path, str) and path.strip():
                out.append(path.strip())
    return list(dict.fromkeys(out))


def _named_qmds(command: str) -> list[str]:
    """The executables a ``memory.qmd.command`` line may name besides its first word, to try as candidates:
    the whole line when it is an unquoted absolute path with a blank (``/opt/My Tools/qmd``: OpenClaw runs
    ``/opt/My`` — breaker round 8, n12), then the words after the first (``node /…/qmd``)."""
    c = command.strip()
    whole = [c] if c.startswith("/") and any(ch.isspace() for ch in c) else []
    return whole + words_after_first(command)


def _first_token(command: str) -> str:
    """OpenClaw's ``resolveQmdCommand``: the first shell token (quotes honoured)."""
    c = command.strip()
    if not c:
        return "qmd"
    if c[0] in "\"'":
        end = c.find(c[0], 1)
        if end > 0:
            return c[1:end]
    return c.split()[0]


def memory_hash(tree: Mapping[str, Any], agent_id: str) -> str:
    """sha256 of the canonical JSON of the memory-relevant settings of ``agent_id`` (redacted tree)."""
    entry = agent_entry(tree, agent_id) or {}
    relevant = {
        "memory": tree.get("memory"),
        "defaults.memorySearch": _get(tree, "agents", "defaults", "memorySearch"),
        "defaults.workspace": _get(tree, "agents", "defaults", "workspace"),
        "agent": {k: entry.get(k) for k in ("memorySearch", "memory", "workspace") if k in entry},
        "plugins.slots.memory": _get(tree, "plugins", "slots", "memory"),
    }
    canon = json.dumps(redact(relevant), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canon.encode()).hexdigest()


def _is_search_mode(value: object) -> TypeGuard[SearchMode]:
    return value in SEARCH_MODES


def _memory_plugin_off(tree: Mapping[str, Any], slot: str | None) -> str | None:
    """The setting that switches the memory plugin (the slot's, default ``memory-core``) off when the slot is not
    empty: its entry ``plugins.entries.<id>.enabled = false``, or ``plugins.deny`` naming it (worded with the whole
    list, ``plugins.deny = [...] (blocks <id>)``, JSON: the repair writes the list back without it). ``None``: neither."""
    pid = slot.strip() if slot and slot.strip() else "memory-core"
    entry = _get(tree, "plugins", "entries", pid)
    if isinstance(entry, Mapping) and entry.get("enabled") is False:
        return f"plugins.entries.{pid}.enabled = false"
    deny = _get(tree, "plugins", "deny")
    if isinstance(deny, list) and pid in deny:
        return f"plugins.deny = {json.dumps(deny)} (blocks {pid})"
    allow = _get(tree, "plugins", "allow")
    if isinstance(allow, list) and allow and pid not in [a.strip() for a in allow if isinstance(a, str)]:
        return f"plugins.allow = {json.dumps(allow)} (leaves out {pid})"  # 2026.9.6: tools.invoke "not_found"
    return None


def memory_settings(tree: Mapping[str, Any], agent_id: str) -> MemorySettings:
    """Extract one agent's memory settings with OpenClaw's defaults (pure; source: the config tree)."""
    mem = as_mapping(tree.get("memory"))
    qmd = as_mapping(mem.get("qmd"))
    update = as_mapping(qmd.get("update"))
    limits = as_mapping(qmd.get("limits"))
    s = MemorySettings()
    s.configured_backend = "qmd" if mem.get("backend") == "qmd" else "builtin"
    mode = qmd.get("searchMode")
    s.search_mode = mode if _is_search_mode(mode) else "search"
    raw_cmd = qmd.get("command") if isinstance(qmd.get("command"), str) else None
    s.qmd_command_raw = raw_cmd
    s.qmd_command = _first_token(raw_cmd or "qmd") if s.configured_backend == "qmd" else None
    s.qmd_command_args = _named_qmds(raw_cmd) if raw_cmd and s.configured_backend == "qmd" else []
    interval = parse_duration_s(update.get("interval")) if isinstance(update.get("interval"), str) else None
    if interval is not None:
        s.update_interval_s = interval
        s.interval_source = f"memory.qmd.update.interval = {update.get('interval')}"
    elif update.get("interval") is not None:
        s.interval_source = f"memory.qmd.update.interval {update.get('interval')!r} is invalid → OpenClaw default 5m"
    embed = parse_duration_s(update.get("embedInterval")) if isinstance(update.get("embedInterval"), str) else None
    s.embed_interval_s = embed if embed is not None else 3600.0
    s.debounce_s = _positive_ms(update.get("debounceMs"), 15.0)
    s.command_timeout_s = _positive_ms(update.get("commandTimeoutMs"), 30.0)
    s.update_timeout_s = _positive_ms(update.get("updateTimeoutMs"), 120.0)
    s.embed_timeout_s = _positive_ms(update.get("embedTimeoutMs"), 120.0)
    s.search_timeout_s = _positive_ms(limits.get("timeoutMs"), 4.0)
    s.snippet_cap = _snippet_cap(limits)
    _bound_durations(s)
    s.on_boot = update.get("onBoot") is not False
    if isinstance(update.get("startup"), str):
        s.startup = update["startup"]
    scope = qmd.get("scope")
    if isinstance(scope, Mapping) and scope.get("default") in ("allow", "deny"):
        s.scope_default = scope["default"]
    elif s.configured_backend == "qmd":
        s.scope_default = "deny"
    s.sessions_enabled = _get(qmd, "sessions", "enabled") is True
    export_dir, days = _get(qmd, "sessions", "exportDir"), _get(qmd, "sessions", "retentionDays")
    s.sessions_export_dir = export_dir if isinstance(export_dir, str) and export_dir.strip() else None
    s.sessions_retention_days = days if isinstance(days, int) and not isinstance(days, bool) and days > 0 else None
    s.include_default_memory = qmd.get("includeDefaultMemory") is not False
    paths = as_list(qmd.get("paths"))  # any other type: the schema says so
    s.qmd_paths = [str(p.get("path")) for p in paths if isinstance(p, Mapping) and p.get("path")]
    s.extra_paths, s.extra_path_patterns = _extra_paths(tree, agent_id)
    s.qmd_extra_collections = _extra_collections(tree, agent_id)
    s.provider, s.provider_source = _provider(tree, agent_id)
    s.provider_explicit = (s.provider or "").strip() not in NON_PINNED_PROVIDERS  # OpenClaw: "None" is unknown
    s.retired_keys = retired_keys(tree)
    lf = _get(tree, "logging", "file")
    s.log_file = lf if isinstance(lf, str) and lf.strip() else None
    rm = _get(tree, "gateway", "reload", "mode")
    s.reload_mode = rm if isinstance(rm, str) and rm else "hybrid"
    slot = _get(tree, "plugins", "slots", "memory")
    s.memory_slot = slot if isinstance(slot, str) else None
    if s.memory_slot is not None and s.memory_slot.strip().lower() == "none":
        s.memory_off = 'plugins.slots.memory = "none"'
    elif _get(tree, "plugins", "enabled") is False:
        s.memory_off = "plugins.enabled = false"
    elif (plugin_off := _memory_plugin_off(tree, s.memory_slot)) is not None:
        s.memory_off = plugin_off
    elif (off := _search_disabled(tree, agent_id)) is not None:
        s.memory_off = f"{off} = false"
    if (src := _sources(tree, agent_id)) is not None:
        s.sources, s.sources_key = src
    s.watch_off = _watch_off(tree, agent_id)
    s.keyword_off = _keyword_off(tree, agent_id)
    s.hash = memory_hash(tree, agent_id)
    return s


NODE_TIMER_MAX_S = 2_147_483.647  # Node runs a timer set longer than 2**31-1 ms after 1 ms (TimeoutOverflowWarning)


def _bound_durations(s: MemorySettings) -> None:
    """Durations no receipt holds (> 30 days, :data:`clawprobe.core.lease.MAX_DURATION_S`) are cut to 30 days; an
    update interval past Node's timer limit (:data:`NODE_TIMER_MAX_S`, 24.8 days) is said in its source."""
    for name in ("update_interval_s", "embed_interval_s", "debounce_s", "command_timeout_s", "update_timeout_s",
                 "embed_timeout_s", "search_timeout_s"):
        setattr(s, name, min(getattr(s, name), MAX_DURATION_S))
    if s.update_interval_s > NODE_TIMER_MAX_S:
        s.interval_source += (" — longer than a Node timer can wait (24.8 days: it fires after 1 ms instead); the "
                              "lease counts at most 30 days")


def lease_for(settings: MemorySettings, update_duration_s: float | None = None,
              duration_source: str | None = None, *, changed_on_disk: bool = False) -> Lease:
    """The freshness lease: configured update interval + normal update duration (log, when measured) + margin.

    ``changed_on_disk``: the disk scan found changes the index does not reflect (its age is then the age of the
    oldest change). With the gateway's file watcher on (OpenClaw 2026.7.35 ``qmd-manager`` ``ensureWatcher``: a
    sync ``watchDebounceMs`` after a change, unless ``memorySearch.sync.watch`` is false) an interval longer than
    OpenClaw's default 5 m gives such a change no longer: the interval part is then the default, and its source
    says why. Without a measured change the configured interval stands (an interval sync 20 min ago under a
    30 m interval is current, RW18) — a 30-day interval is no 30-day licence for a note the index never took in
    (breaker round 6, z19)."""
    interval, source = settings.update_interval_s, settings.interval_source
    if changed_on_disk and settings.configured_backend == "qmd" and settings.watch_off is None \
            and interval > DEFAULT_INTERVAL_S:
        interval, source = DEFAULT_INTERVAL_S, (f"{source}, but a change on disk is not in the index: the gateway's "
                                                "file watcher (memorySearch.sync.watch, on) syncs a change seconds "
                                                "after it, so the change gets OpenClaw's default 5m")
    kw: dict[str, Any] = {"interval_s": interval, "interval_source": source, "margin_s": DEFAULT_MARGIN_S}
    if update_duration_s is not None:
        kw["update_duration_s"] = max(update_duration_s, 0.0)
        kw["duration_source"] = duration_source or "log: qmd sync completed durationMs"
    else:
        kw["update_duration_s"] = DEFAULT_UPDATE_DURATION_S
    return Lease(**kw)


def config_facts(snap: ConfigSnapshot, agent_id: str, version: str | None, workspace: str | None) -> ConfigFacts:
    """The receipt's ``config`` part from a snapshot (pure). A read/parse error or a schema rejection
    becomes ``error``; the settings are still extracted when the tree parsed. Every text field is passed
    through :func:`clawprobe.core.redaction.redact_text` (a secret-shaped command, provider or quoted value is masked)."""
    if snap.error is not None:  # an unreadable file says nothing about the workspace: no default is reported
        return ConfigFacts(path=snap.path, error=_masked(snap.error),
                           workspace=None if snap.error.kind == "unreadable" else workspace)
    s = memory_settings(snap.tree, agent_id)
    error = validate_memory(snap.tree, version, snap.path)
    return ConfigFacts(
        path=snap.path if snap.exists else None, error=_masked(error), hash=s.hash,
        configured_backend=s.configured_backend, search_mode=s.search_mode, qmd_command=_redact_opt(s.qmd_command),
        provider=_redact_opt(s.provider), provider_explicit=s.provider_explicit, retired_keys=s.retired_keys,
        workspace=workspace, scope_default=s.scope_default, search_timeout_s=s.search_timeout_s,
        embed_timeout_s=s.embed_timeout_s, memory_off=s.memory_off, sources=s.sources, sources_key=s.sources_key,
        keyword_off=s.keyword_off,
        snippet_chars=s.snippet_cap[0] if s.configured_backend == "qmd" else None,
        snippet_key=s.snippet_cap[1] if s.configured_backend == "qmd" else None,
        qmd_no_collections="memory.qmd.includeDefaultMemory = false and no memory.qmd.paths"
        if s.configured_backend == "qmd" and not s.include_default_memory and not s.qmd_paths else None,
        no_auto_update=no_auto_update(s), workspace_key=workspace_key(snap.tree, agent_id),
        provider_key=agent_provider_key(snap.tree, agent_id, s.provider_source),
        **_tool_facts(tool_policy(snap.tree, agent_id, s.memory_slot)),
    )


def agent_provider_key(tree: Mapping[str, Any], agent_id: str, source: str | None) -> str | None:
    """The key of ``agent_id``'s own entry that sets its embedding provider, as ``openclaw config set`` takes it
    (``agents.list[<i>].memorySearch.provider`` — 2026.7.35 takes the index, measured — or
    ``agents.entries.<key>.memory.search.provider``), when ``source`` (:func:`_provider`) says the provider comes
    from that entry; ``None`` when the defaults set it (pure)."""
    if source is None or not source.startswith(("agents.entries.", "agents.list[")):
        return None
    key = agent_key(tree, agent_id)
    if key is None:
        return None
    return f"{key}.memory.search.provider" if source.startswith("agents.entries.") else f"{key}.memorySearch.provider"


def _tool_facts(tp: ToolPolicy) -> dict[str, str | None]:
    """The receipt's ``tool_*`` fields from the agent's tool policy (:mod:`clawprobe.core.probes.tool_policy`)."""
    return {"tool_off": _redact_opt(tp.removed), "tool_off_key": tp.key,
            "tool_fix": json.dumps(tp.fix) if tp.fix is not None else None, "tool_unknown": _redact_opt(tp.unknown)}


def no_auto_update(s: MemorySettings) -> str | None:
    """The keys that leave a QMD index no automatic update while the gateway runs, else ``None``: no interval
    timer (``memory.qmd.update.interval`` 0; 2026.7.35 arms ``setInterval`` only for an interval > 0) and no file
    watcher (``sync.watch: false``). ``onBoot`` is said too: it updates once, at the gateway's next start only."""
    if s.configured_backend != "qmd" or s.update_interval_s > 0 or s.watch_off is None:
        return None
    boot = "" if s.on_boot else ", memory.qmd.update.onBoot = false"
    return f"{s.interval_source}, {s.watch_off} = false{boot}"


def _redact_opt(text: str | None) -> str | None:
    return redact_text(text) if text is not None else None


def _masked(error: ConfigError | None) -> ConfigError | None:
    """``error`` with its message and key path passed through :func:`redact_text`."""
    if error is None:
        return None
    return error.model_copy(update={"message": redact_text(error.message), "key_path": _redact_opt(error.key_path)})


def watch_files(snap: ConfigSnapshot) -> list[str]:
    """The config file and every ``$include`` read (what a file watcher re-probes on)."""
    return list(dict.fromkeys([snap.path, *snap.files]))


def log_file_for(snap: ConfigSnapshot, env: Mapping[str, str]) -> str | None:
    """``logging.file`` expanded (``~`` → home), or ``None`` when the config does not move the log."""
    from clawprobe.core.locate import user_path

    lf = _get(snap.tree, "logging", "file")
    return user_path(lf, env, str(Path(snap.path).parent)) if isinstance(lf, str) and lf.strip() else None
