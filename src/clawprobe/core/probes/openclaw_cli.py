"""The ``openclaw`` CLI probes: version, ``memory status --json``, ``memory search TOKEN --json``, and
``config validate --json`` when a status call says the CLI has no ``memory`` command.

Each call is a heavy Node start (3–6 s of CPU): run on demand, never on a one-second timer. Gather
(:func:`run_version`, :func:`run_status`, :func:`run_validate`, :func:`run_search`) runs the real CLI through
:func:`clawprobe.core.proc.run` with the environment the caller built (the gateway's PATH/HOME/OPENCLAW_*)
and returns the runs unparsed (the caller keeps them as :class:`~clawprobe.core.runrecord.RunRecord`).
Interpret (pure, so recorded evidence replays through them): one function per program output from its run
record — :func:`status_of_run`, :func:`validate_of_run`, :func:`search_of_run` — over :func:`parse_version`,
:func:`parse_status`, :func:`parse_search`, :func:`parse_stderr`, :func:`parse_validate`,
:func:`apply_validation`; and :func:`status_claims`.

A config OpenClaw rejects shows in three ways (tests/data/recorded/735-config-rejected, 96-qmd-keys-rejected):
2026.9.6 prints ``Invalid config at <path>:`` + ``- <key>: <why>`` lines (stderr, and ``{"ok":false}`` on
stdout); 2026.7.35 prints only ``OpenClaw does not know the command "memory".`` — the memory plugin never
registered because the config did not load. The same line (and ``Unknown command: openclaw memory``) also
comes from a *valid* config that turns the memory plugin off (``plugins.slots.memory: "none"``,
``plugins.enabled: false``), so :func:`run_status` then asks OpenClaw's own validator
(``config validate --json``, 2 s, writes only the CLI's bookkeeping DB) and :func:`apply_validation` folds the
answer in: ``valid:false`` → ``stderr.invalid_config`` (→ ``config_invalid``), ``valid:true`` → the plugin is off.

Every text kept from the CLI (status strings such as ``provider``/``requestedProvider`` that echo the config,
error messages, stderr lines) passes through :func:`clawprobe.core.redaction.redact_text`.

Shapes (field report §3.3–3.4, recorded outputs in tests/data/recorded): status is a JSON array of
``{agentId, status{backend, provider, requestedProvider, files, chunks, dirty, …}, scan{totalFiles,…}}``;
stdout may instead say ``Memory search disabled.``, or (config error) ``{"ok":false,"error":{…}}``. QMD
search hits have no ``id``/``textScore`` and a ``@@ -`` snippet; builtin hits carry ``id`` and ``textScore``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.locate import calver, has_qmd_backend
from clawprobe.core.mapping import as_mapping
from clawprobe.core.probes.signatures import SIGNATURES
from clawprobe.core.proc import ProcResult, run
from clawprobe.core.receipt import MAX_COUNT, StatusClaim
from clawprobe.core.redaction import redact_text
from clawprobe.core.runrecord import RUN_TEXT_CAP_BYTES, RunRecord

VERSION_TIMEOUT_S = 20.0
STATUS_TIMEOUT_S = 60.0
SEARCH_TIMEOUT_S = 60.0
#: OpenClaw's own deadline for one query embedding by a remote provider (2026.9.6 ``EMBEDDING_QUERY_TIMEOUT_REMOTE_MS``):
#: a builtin search with a remote provider gets this plus a margin (:data:`SEARCH_TIMEOUT_REMOTE_S`), so a provider
#: that does not answer shows as OpenClaw's own "embeddings retryable error; retrying query" line, not as a CLI hang
REMOTE_QUERY_TIMEOUT_S = 60.0
SEARCH_TIMEOUT_REMOTE_S = REMOTE_QUERY_TIMEOUT_S + 15.0
VALIDATE_TIMEOUT_S = 30.0

_VERSION = re.compile(r"(\d{4}\.\d{1,2}\.\d{1,3}(?:[-+.][0-9A-Za-z.-]+)?)")
_BINARY = re.compile(r"qmd binary unavailable \((.*?)\); falling back to builtin: (.*)")
_MANAGER = re.compile(r"qmd memory unavailable; falling back to builtin: (.*)")
_RUNTIME = re.compile(r"qmd memory failed; switching to builtin index: (.*)")
_STATS = re.compile(r"failed to read qmd index stats: (.*)")
_SCOPE = re.compile(r"qmd search denied by scope \(([^)]*)\)")
_SEARCH_FAILED = re.compile(r"Memory search failed: (.*)")
_QUERY_RETRY = re.compile(r"\bembeddings? retryable error; retrying query\b", re.I)
_TIMED_OUT = re.compile(r"timed out after (\d+(?:\.\d+)?)\s*(ms|s)\b")
_SIGNAL = re.compile(r"failed \(signal (SIG[A-Z]+)\)")
_INVALID = re.compile(r"Invalid config at (.*?):\s*$", re.M)
_INVALID_LINE = re.compile(r"^(?:\[openclaw\]\s*)?(?:Reason:\s*)?(?:Invalid config(?:uration)?\b"
                           r"|Config(?:uration)? (?:is )?invalid\b|Config validation failed\b"
                           r"|Failed to (?:load|validate) config\b)", re.I)
_UNKNOWN_MEMORY = re.compile(r'does not know the command "memory"|Unknown command:\s*openclaw memory\b'
                             r'|No built-in command or plugin CLI metadata owns "memory"')
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Signal(BaseModel):
    """One known error text found in a line: ``tag`` (see :data:`SIGNATURES`), the captured ``value`` if any
    (``/opt/qmd``, ``312``, ``4000ms``, ``memory-root-main``) and the ``line`` itself (≤ 500 chars)."""

    model_config = ConfigDict(extra="forbid")
    tag: str
    value: str | None = None
    line: str


def error_signals(text: str) -> list[Signal]:
    """Every :data:`SIGNATURES` match in ``text`` (ANSI colour stripped), one per (tag, line), in line order."""
    out: list[Signal] = []
    seen: set[tuple[str, str]] = set()
    for raw in _ANSI.sub("", text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        for tag, rx in SIGNATURES:
            m = rx.search(line)
            if m is None or (tag, line) in seen:
                continue
            seen.add((tag, line))
            value = next((g for g in m.groups() if g), None) if m.groups() else None
            out.append(Signal(tag=tag, value=value, line=line[:500]))
    return out


def parse_status_text(text: str) -> dict[str, Any]:
    """The human ``openclaw memory status`` output as ``{lowercase key: value}`` (``Vector: unknown`` →
    ``{"vector": "unknown"}``; ``Indexed: 0/12 files`` → ``{"indexed": "0/12 files"}``); the lines after
    ``Issues:`` are collected under ``"issues"``. First occurrence of a key wins (one agent per call)."""
    out: dict[str, Any] = {}
    issues: list[str] = []
    in_issues = False
    for raw in _ANSI.sub("", text or "").splitlines():
        line = raw.strip()
        if not line:
            in_issues = False
            continue
        if in_issues and not re.match(r"^[A-Z][A-Za-z ]{1,30}:\s", line):
            issues.append(line)
            continue
        m = re.match(r"^([A-Za-z][A-Za-z /()-]{0,40}?):\s*(.*)$", line)
        if not m:
            continue
        key, value = m[1].strip().lower(), m[2].strip()
        in_issues = key == "issues"
        if in_issues:
            if value:
                issues.append(value)
            continue
        out.setdefault(key, value)
    if issues:
        out["issues"] = issues
    return out


class StderrFacts(BaseModel):
    """What OpenClaw printed to stderr (and ``[memory]`` lines on stdout) during one CLI call.

    ``fallback``: ``binary_unavailable`` (spawn failed, with ``fallback_command``), ``manager_failed``
    (QMD manager could not be built) or ``runtime_error``/``timeout`` (a QMD search threw);
    ``fallback_detail`` the error text. ``index_stats_error``: ``failed to read qmd index stats``.
    ``scope_denied``: the denial text. ``search_failed``: ``Memory search failed: …`` text;
    ``timeout_ms``: the deadline it names; ``crash_signal``: e.g. ``SIGSEGV`` from a failed qmd child.
    ``invalid_config``: OpenClaw rejected its config (message, :func:`invalid_config_text`).
    ``query_retry``: OpenClaw's "embeddings retryable error; retrying query" line — the query embedding by the
    provider failed or passed OpenClaw's own deadline, and it asks again.
    ``memory_command_missing``: the CLI has no ``memory`` command — its config did not load (plugins did
    not register), or a valid config turns the memory plugin off; :func:`run_status` tells them apart with
    ``config validate``. ``signals``: known error texts (:func:`error_signals`). Texts are redacted.
    """

    model_config = ConfigDict(extra="forbid")
    fallback: str | None = None
    fallback_command: str | None = None
    fallback_detail: str | None = None
    index_stats_error: str | None = None
    scope_denied: str | None = None
    search_failed: str | None = None
    timeout_ms: int | None = None
    crash_signal: str | None = None
    invalid_config: str | None = None
    memory_command_missing: bool = False
    query_retry: str | None = None
    lines: list[str] = Field(default_factory=list)
    signals: list[Signal] = Field(default_factory=list)


class StatusEntry(BaseModel):
    """One agent's element of ``memory status --json`` (the fields clawprobe uses). ``embedding_ok`` /
    ``embedding_error`` come from the element's ``embeddingProbe`` (``--deep`` only); ``source_files`` is
    ``status.sourceCounts[].files`` (indexed files per source), ``scan_source_files`` ``scan.sources[].totalFiles``
    (files on disk per source); ``sources`` ``status.sources``, the sources OpenClaw resolved for the agent."""

    model_config = ConfigDict(extra="forbid")
    agent_id: str
    backend: str | None = None
    provider: str | None = None
    requested_provider: str | None = None
    model: str | None = None
    files: int | None = None
    chunks: int | None = None
    dirty: bool | None = None
    workspace_dir: str | None = None
    db_path: str | None = None
    scan_total_files: int | None = None
    scan_issues: list[str] = Field(default_factory=list)
    search_mode: str | None = None
    provider_unavailable_reason: str | None = None
    fallback_from: str | None = None
    fallback_reason: str | None = None
    vector_enabled: bool | None = None
    vector_available: bool | None = None
    vector_error: str | None = None
    fts_enabled: bool | None = None
    fts_available: bool | None = None
    fts_error: str | None = None
    index_identity: str | None = None
    audit_issues: list[str] = Field(default_factory=list)
    index_identity_reason: str | None = None
    index_identity_order: str | None = None
    embedding_ok: bool | None = None
    embedding_error: str | None = None
    extra_paths: list[str] = Field(default_factory=list)
    sources: list[str] | None = None
    source_files: dict[str, int] = Field(default_factory=dict)
    scan_source_files: dict[str, int] = Field(default_factory=dict)


def _per_source(items: Any, key: str) -> dict[str, int]:
    """``{source: n}`` from a list of ``{source, <key>}`` objects (``sourceCounts[].files``,
    ``scan.sources[].totalFiles``); elements without a source name or a count in ``0 … MAX_COUNT`` are left out
    (a count below zero, or one past SQLite's largest integer — 2**63 made the receipt's coverage refuse it, a
    traceback — is no count)."""
    out: dict[str, int] = {}
    for el in items if isinstance(items, list) else []:
        if isinstance(el, Mapping) and isinstance(el.get("source"), str) and (n := _i(el.get(key))) is not None \
                and 0 <= n <= MAX_COUNT:
            out[el["source"]] = n
    return out


class ValidationIssue(BaseModel):
    """One element of ``config validate --json`` ``issues``: OpenClaw's key ``path`` (``memory.qmd``,
    ``agents.list.0.id``, ``<root>``), its ``message`` and, for enums, the ``allowed`` values."""

    model_config = ConfigDict(extra="forbid")
    path: str
    message: str
    allowed: list[str] | None = None


class ConfigValidation(BaseModel):
    """``openclaw config validate --json`` (2026.7.35: ``{"valid", "path", "issues"|"warnings"}``).

    ``valid`` is ``None`` when the output could not be read (``error`` says why: an older build without
    the command, a timeout, not JSON). ``path`` is the config file OpenClaw validated.
    """

    model_config = ConfigDict(extra="forbid")
    rc: int | None = None
    valid: bool | None = None
    path: str | None = None
    issues: list[ValidationIssue] = Field(default_factory=list)
    error: str | None = None

    def message(self) -> str | None:
        """``Invalid config at <path>:`` + one ``- <key>: <why>`` line per issue (OpenClaw 2026.9.6's own
        wording), or ``None`` when the config is not known to be invalid."""
        if self.valid is not False:
            return None
        lines = [f"- {i.path}: {i.message}" for i in self.issues[:20]] or ["- (no issue listed)"]
        return f"Invalid config at {self.path or 'the config file'}:\n" + "\n".join(lines)


class StatusResult(BaseModel):
    """``openclaw memory status --json --agent ID``: exit code, parsed entries, stderr facts.

    ``disabled`` is true for ``Memory search disabled.``; ``error`` carries ``{"ok":false}`` messages or
    "not JSON" when stdout could not be read; ``seconds`` is the call's wall time. ``validation``: OpenClaw's
    ``config validate --json`` verdict, asked only when the CLI had no ``memory`` command. ``not_understood``:
    elements without the ``status`` object every measured build prints (2026.7.35, 2026.9.6), whose facts —
    backend, fallback, dirty, issues — clawprobe therefore cannot read —, or an object in place of that list
    (``{"agents": [...]}``; the call ran, so it is no ``error``).
    """

    model_config = ConfigDict(extra="forbid")
    rc: int | None = None
    seconds: float | None = None
    timed_out: bool = False
    entries: list[StatusEntry] = Field(default_factory=list)
    disabled: bool = False
    error: str | None = None
    stderr: StderrFacts = Field(default_factory=StderrFacts)
    validation: ConfigValidation | None = None
    stdout_noise: list[str] = Field(default_factory=list)
    not_understood: str | None = None

    def entry(self, agent_id: str) -> StatusEntry | None:
        """The element for ``agent_id`` (or the only element)."""
        for e in self.entries:
            if e.agent_id == agent_id:
                return e
        return self.entries[0] if len(self.entries) == 1 else None


class SearchHit(BaseModel):
    """One search result: workspace-relative ``path`` (``qmd/<collection>/<rel>`` for QMD extra paths),
    lines, ``score``, and the ``shape`` that tells which engine produced it."""

    model_config = ConfigDict(extra="forbid")
    path: str
    start_line: int | None = None
    end_line: int | None = None
    score: float | None = None
    snippet: str = ""
    source: str | None = None
    shape: Literal["qmd", "builtin", "unknown"] = "unknown"
    vector_score: float | None = None


class SearchResult(BaseModel):
    """``openclaw memory search TOKEN --json``: hits, their overall ``shape``, failure facts, latency;
    ``not_understood``: the call answered (exit 0) in a shape clawprobe cannot read — no ``results`` list, or
    results that are not ``{path, …}`` hits — so no hit, and no miss, can be read from it.
    ``stale_warning`` the JSON's own ``warning`` when it says ``"stale": true`` (2026.9.x
    ``resolveMemorySearchStaleness``: "Memory index is stale: <reason> (owner: …, code: …)" for an index identity
    the config or the build no longer matches, "Memory index is stale: <last sync error>" otherwise), redacted."""

    model_config = ConfigDict(extra="forbid")
    rc: int | None = None
    seconds: float | None = None
    timed_out: bool = False
    hits: list[SearchHit] = Field(default_factory=list)
    shape: Literal["qmd", "builtin", "unknown"] | None = None
    error: str | None = None
    stale_warning: str | None = None
    stderr: StderrFacts = Field(default_factory=StderrFacts)
    stdout_noise: list[str] = Field(default_factory=list)
    not_understood: str | None = None


# --------------------------------------------------------------------------------------------------------
# Interpret (pure)
# --------------------------------------------------------------------------------------------------------

def parse_version(stdout: str) -> str | None:
    """``OpenClaw 2026.7.35 (aa94808)`` → ``"2026.7.35"``; ``None`` when no CalVer is present."""
    m = _VERSION.search(stdout or "")
    return m[1] if m else None


def version_facts(stdout: str) -> tuple[str | None, bool | None]:
    """(version, has_qmd_backend): QMD backend up to 2026.7.x, removed from 2026.8.1."""
    v = parse_version(stdout)
    return v, has_qmd_backend(v) if calver(v) else None


def parse_stderr(text: str) -> StderrFacts:
    """Read OpenClaw's diagnostic lines (ANSI colour stripped). Later lines refine earlier ones."""
    f = StderrFacts()
    clean = _ANSI.sub("", text or "")
    for raw in clean.splitlines():
        line = raw.strip()
        if not line:
            continue
        if len(f.lines) < 200:
            f.lines.append(line[:1000])
        if (m := _BINARY.search(line)) is not None:
            f.fallback, f.fallback_command, f.fallback_detail = "binary_unavailable", m[1], m[2].strip()
        elif (m := _MANAGER.search(line)) is not None:
            f.fallback, f.fallback_detail = "manager_failed", m[1].strip()
        elif (m := _RUNTIME.search(line)) is not None:
            f.fallback = "timeout" if "timed out" in m[1] else "runtime_error"
            f.fallback_detail = m[1].strip()
        elif (m := _STATS.search(line)) is not None:
            f.index_stats_error = m[1].strip()
        elif (m := _SCOPE.search(line)) is not None:
            f.scope_denied = f"qmd search denied by scope ({m[1]})"
        elif (m := _SEARCH_FAILED.search(line)) is not None:
            f.search_failed = m[1].strip()
        if (m := _TIMED_OUT.search(line)) is not None and ("search" in line or "query" in line):
            ms = float(m[1]) * (1 if m[2] == "ms" else 1000)
            f.timeout_ms = int(ms) if math.isfinite(ms) else None
        if (m := _SIGNAL.search(line)) is not None:
            f.crash_signal = m[1]
        if f.query_retry is None and _QUERY_RETRY.search(line):
            f.query_retry = line[:300]
        if _UNKNOWN_MEMORY.search(line):
            f.memory_command_missing = True
    f.invalid_config = invalid_config_text(clean)
    f.signals = [s.model_copy(update={"line": redact_text(s.line)}) for s in error_signals(clean)[:100]]
    for name in ("fallback_detail", "index_stats_error", "scope_denied", "search_failed", "query_retry"):
        setattr(f, name, redact_text(getattr(f, name)))
    f.lines = [redact_text(x) for x in f.lines]
    return f


def invalid_config_text(text: str) -> str | None:
    """OpenClaw's "the config does not load" report in CLI output, redacted (≤ 2000 chars), else ``None``.

    Recognised: ``Invalid config at <path>:`` followed by ``- <key>: <why>`` lines (2026.9.6, recorded), and a
    line that starts (after ``[openclaw]``/``Reason:``) with ``Invalid config``, ``Config invalid``, ``config
    invalid:`` (RW01's wording), ``Config validation failed`` or ``Failed to load config``. The block ends
    before OpenClaw's ``Debug:``/``Try:``/``Help:`` hint lines.
    """
    clean = _ANSI.sub("", text or "")
    m = _INVALID.search(clean) or re.search(r"Invalid config at ([^\n]*)", clean)
    start = m.start() if m else None
    if start is None:
        for lm in re.finditer(r"^.*$", clean, re.M):
            if _INVALID_LINE.match(lm[0].strip()):
                start = lm.start()
                break
    if start is None:
        return None
    block = re.split(r"\n\s*(?:\[openclaw\]\s*)?(?:Debug|Try|Help|Docs):", clean[start:])[0]
    block = re.sub(r"^\s*\[openclaw\]\s*(?:Reason:\s*)?", "", block.strip())
    return redact_text(block.strip())[:2000] or None


def _json_value(stdout: str) -> Any:
    """The first JSON value in stdout (tolerating ``[memory] …`` log lines before it); ``None`` if absent."""
    text = _ANSI.sub("", stdout or "")
    dec = json.JSONDecoder()
    candidates = [0] + [m.end() for m in re.finditer(r"\n", text)]
    for pos in candidates:
        chunk = text[pos:].lstrip()
        if not chunk or chunk[0] not in "[{":
            continue
        try:
            value, _ = dec.raw_decode(chunk)
        except json.JSONDecodeError:
            continue
        return value
    return None


def second_json_value(stdout: str, what: str) -> str | None:
    """Why an answer whose stdout holds a second JSON value after the first cannot be read (pure), else ``None``.
    Measured builds print one JSON document per ``--json`` call (log lines around it are text, not JSON); two
    documents (a build that printed its answer twice, or a crashing one that printed a partial second) leave
    which one is the answer unknown, so neither is evidence."""
    text = _ANSI.sub("", stdout or "")
    dec = json.JSONDecoder()
    found = 0
    pos = 0
    while pos <= len(text) and found < 2:
        chunk = text[pos:].lstrip()
        skipped = len(text) - pos - len(chunk)
        decoded = None
        if chunk and chunk[0] in "[{":
            try:
                _, decoded = dec.raw_decode(chunk)
            except json.JSONDecodeError:
                decoded = None
        if decoded is not None:
            found += 1
            pos += skipped + decoded
            continue
        nl = text.find("\n", pos + skipped)
        if nl < 0:
            break
        pos = nl + 1
    if found < 2:
        return None
    return (f"`{what}` printed a second JSON document after its answer: which one is the answer cannot be told, "
            "so neither is read")


def stdout_noise(stdout: str, limit: int = 20) -> list[str]:
    """The non-blank stdout lines outside the first JSON value (before or after it), redacted, ≤ ``limit`` —
    what polluted a ``--json`` answer (log lines, warnings), for the evidence ledger (pure)."""
    text = _ANSI.sub("", stdout or "")
    dec = json.JSONDecoder()
    start = end = None
    for pos in [0] + [m.end() for m in re.finditer(r"\n", text)]:
        chunk = text[pos:].lstrip()
        if not chunk or chunk[0] not in "[{":
            continue
        try:
            _, n = dec.raw_decode(chunk)
        except json.JSONDecodeError:
            continue
        start = pos
        end = len(text) - len(chunk) + n
        break
    rest = text if start is None else text[:start] + "\n" + text[end:]
    lines = [ln.strip() for ln in rest.splitlines() if ln.strip()]
    return [redact_text(ln[:500]) for ln in lines[:limit]]


def _i(v: Any) -> int | None:
    """An int from a JSON number; ``None`` for anything else (booleans, NaN/Infinity, strings)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    return int(v)


def _f(v: Any) -> float | None:
    """A finite float from a JSON number, else ``None``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _s(v: Any) -> str | None:
    """A JSON string, else ``None`` (a field of another type is treated as absent, never a crash)."""
    return v if isinstance(v, str) else None


def _loaded_anyway(f: StderrFacts, answered: bool) -> None:
    """A call that answered (exit 0 with status entries or search hits) ran with a loaded config: a looser
    wording (``Config invalid…``, ``Failed to load config…``) on its stderr is then a warning about something
    else, not a rejected config; OpenClaw's own ``Invalid config at <path>:`` report is kept."""
    if answered and f.invalid_config and not f.invalid_config.startswith("Invalid config at"):
        f.invalid_config = None


def _t(v: Any) -> str | None:
    """A JSON string with secret-shaped parts masked (:func:`clawprobe.core.redaction.redact_text`), else ``None``: for
    status fields that echo config values (``provider``, ``requestedProvider``, ``model``) or carry messages."""
    return redact_text(v) if isinstance(v, str) else None


def _b(v: Any) -> bool | None:
    """A JSON boolean, else ``None``."""
    return v if isinstance(v, bool) else None


def _list(v: Any) -> list:
    """A JSON array, else ``[]``."""
    return v if isinstance(v, list) else []


def _entry(el: Mapping[str, Any]) -> StatusEntry:
    st = as_mapping(el.get("status"))
    scan = as_mapping(el.get("scan"))
    custom = as_mapping(st.get("custom"))
    vector = as_mapping(st.get("vector"))
    fts = as_mapping(st.get("fts"))
    fb = as_mapping(st.get("fallback"))
    ident = as_mapping(custom.get("indexIdentity"))
    audit = as_mapping(el.get("audit"))
    probe = as_mapping(el.get("embeddingProbe"))
    issues = [redact_text(str(i.get("message") if isinstance(i, Mapping) else i)) for i in _list(audit.get("issues"))]
    return StatusEntry(
        agent_id=str(el.get("agentId") or "main"), backend=_s(st.get("backend")), provider=_t(st.get("provider")),
        requested_provider=_t(st.get("requestedProvider")), model=_t(st.get("model")), files=_i(st.get("files")),
        chunks=_i(st.get("chunks")), dirty=_b(st.get("dirty")),
        workspace_dir=_s(st.get("workspaceDir")), db_path=_s(st.get("dbPath")),
        scan_total_files=_i(scan.get("totalFiles")),
        scan_issues=[redact_text(str(x)) for x in _list(scan.get("issues"))], search_mode=_s(custom.get("searchMode")),
        provider_unavailable_reason=_t(custom.get("providerUnavailableReason")), fallback_from=_t(fb.get("from")),
        fallback_reason=_t(fb.get("reason")), vector_enabled=_b(vector.get("enabled")),
        vector_available=_b(vector.get("available")),
        vector_error=_t(vector.get("loadError")), fts_available=_b(fts.get("available")),
        fts_enabled=_b(fts.get("enabled")),
        fts_error=_t(fts.get("error")),
        index_identity=_s(ident.get("status")), audit_issues=issues,
        index_identity_reason=_t(ident.get("reason")), index_identity_order=_s(ident.get("versionOrder")),
        embedding_ok=_b(probe.get("ok")),
        embedding_error=_t(probe.get("error")),
        extra_paths=[str(x) for x in _list(st.get("extraPaths")) if isinstance(x, str)],
        sources=[x for x in st["sources"] if isinstance(x, str)] if isinstance(st.get("sources"), list) else None,
        source_files=_per_source(st.get("sourceCounts"), "files"),
        scan_source_files=_per_source(scan.get("sources"), "totalFiles"),
    )


def _error_message(value: Any) -> str | None:
    """The message of an ``{"ok": false, "error": {...}}`` CLI answer (redacted), else ``None``."""
    if isinstance(value, Mapping) and value.get("ok") is False:
        err = value.get("error")
        if isinstance(err, Mapping):
            return redact_text(str(err.get("message") or err.get("type") or "error"))
        return redact_text(str(err or "ok:false"))
    return None


def parse_status(stdout: str, stderr: str, rc: int | None, seconds: float | None = None,
                 timed_out: bool = False) -> StatusResult:
    """Parse one ``memory status --json`` call (pure; replayable from recorded stdout/stderr/rc)."""
    res = StatusResult(rc=rc, seconds=seconds, timed_out=timed_out, stderr=parse_stderr(stderr),
                       stdout_noise=stdout_noise(stdout))
    value = _json_value(stdout)
    if isinstance(value, list):
        res.entries = [_entry(el) for el in value if isinstance(el, Mapping)]
        odd = [el for el in value if not isinstance(el, Mapping) or not isinstance(el.get("status"), Mapping)]
        if odd:
            keys = sorted({str(k) for el in odd if isinstance(el, Mapping) for k in el})[:8]
            res.not_understood = (f"`openclaw memory status --json` answered with {len(odd)} element(s) in a shape "
                                  f"clawprobe does not know (no `status` object; keys: {', '.join(keys) or 'none'}): "
                                  "the backend, fallback and issues it reports cannot be read")
    elif (msg := _error_message(value)) is not None:
        res.error = msg
        if "Invalid config" in msg and not res.stderr.invalid_config:
            res.stderr.invalid_config = msg
    elif isinstance(value, Mapping) and rc == 0 and not timed_out:  # it ran and answered: not a failed call
        keys = sorted(str(k) for k in value)[:8]
        res.not_understood = ("`openclaw memory status --json` answered (exit 0) with an object where measured builds "
                              f"print a list of agent elements (keys: {', '.join(keys) or 'none'}): the backend, "
                              "fallback and issues it reports cannot be read")
    if (two := second_json_value(stdout, "openclaw memory status --json")) is not None:
        res.not_understood = two
    if "Memory search disabled." in (stdout or ""):
        res.disabled = True
    if not res.entries and not res.disabled and res.error is None and res.not_understood is None:
        res.error = "timed out" if timed_out else (res.stderr.search_failed or f"no status JSON (exit {rc})")
    _loaded_anyway(res.stderr, rc == 0 and bool(res.entries or res.disabled))
    if res.stderr.invalid_config and (res.error is None or "Invalid config" not in res.error):
        res.error = res.stderr.invalid_config
    elif res.stderr.memory_command_missing and res.error and "Invalid config" not in res.error:
        res.error = ("the openclaw CLI has no `memory` command: its config did not load, or the config turns the "
                     "memory plugin off")
    return res


#: ``StatusResult.error`` when the CLI has no ``memory`` command and ``config validate`` accepts the config
MEMORY_PLUGIN_OFF = ("the openclaw CLI has no `memory` command although OpenClaw accepts the config "
                     "(`config validate`): the memory plugin is not loaded (plugins.slots.memory, plugins.enabled, "
                     "plugins.allow/deny)")


def parse_validate(stdout: str, stderr: str, rc: int | None) -> ConfigValidation:
    """Parse ``openclaw config validate --json`` (pure). Shape recorded from 2026.7.35
    (tests/data/recorded/735-config-validate): ``{"valid": true, "path", "warnings": []}`` (rc 0) or
    ``{"valid": false, "path", "issues": [{"path", "message", "allowedValues"?}]}`` (rc 1). A build whose
    CLI does not know the command, or any other output, gives ``valid=None`` with the reason."""
    v = ConfigValidation(rc=rc)
    value = _json_value(stdout)
    if isinstance(value, Mapping) and isinstance(value.get("valid"), bool):
        v.valid = value["valid"]
        v.path = _s(value.get("path"))
        for i in _list(value.get("issues")):
            if isinstance(i, Mapping):
                allowed = [str(a) for a in _list(i.get("allowedValues"))] or None
                v.issues.append(ValidationIssue(path=redact_text(str(i.get("path") or "<root>")),
                                                message=redact_text(str(i.get("message") or "invalid")),
                                                allowed=allowed))
        if v.valid is False and not v.issues:
            v.issues.append(ValidationIssue(path="<root>", message=redact_text(str(value.get("error") or "invalid"))))
        return v
    err = _error_message(value) or invalid_config_text(stderr)
    first = next((x.strip() for x in _ANSI.sub("", stderr or "").splitlines() if x.strip()), None)
    v.error = err or (redact_text(first) if first is not None else None) or f"no validation JSON (exit {rc})"
    return v


def apply_validation(res: StatusResult, validation: ConfigValidation) -> StatusResult:
    """Fold OpenClaw's ``config validate`` answer into a status result whose CLI had no ``memory`` command
    (pure; returns ``res``). ``valid:false`` → ``stderr.invalid_config`` and ``error`` carry OpenClaw's issues
    (the orchestrator's ``config_invalid`` path); ``valid:true`` → ``error`` says the memory plugin is off."""
    res.validation = validation
    if validation.valid is False:
        res.stderr.invalid_config = res.stderr.invalid_config or validation.message()
        res.error = res.stderr.invalid_config
    elif validation.valid is True and res.stderr.memory_command_missing:
        res.error = MEMORY_PLUGIN_OFF
    return res


def hit_shape(hit: Mapping[str, Any]) -> Literal["qmd", "builtin", "unknown"]:
    """``builtin`` when the hit has ``id``/``textScore``; ``qmd`` when its snippet starts ``@@ -`` or its path
    is ``qmd/<collection>/…``; else ``unknown``."""
    if "id" in hit or "textScore" in hit:
        return "builtin"
    snippet, path = hit.get("snippet"), hit.get("path")
    snippet = snippet if isinstance(snippet, str) else ""
    path = path if isinstance(path, str) else ""
    if snippet.startswith("@@ -") or path.startswith("qmd/"):
        return "qmd"
    return "unknown"


def parse_search(stdout: str, stderr: str, rc: int | None, seconds: float | None = None,
                 timed_out: bool = False) -> SearchResult:
    """Parse one ``memory search TOKEN --json`` call (pure). ``shape`` is the engine the hits came from
    (``None`` with no hits)."""
    res = SearchResult(rc=rc, seconds=seconds, timed_out=timed_out, stderr=parse_stderr(stderr),
                       stdout_noise=stdout_noise(stdout))
    value = _json_value(stdout)
    results = value.get("results") if isinstance(value, Mapping) else (value if isinstance(value, list) else None)
    unread = 0
    if isinstance(results, list):
        for h in results:
            if not isinstance(h, Mapping) or not isinstance(h.get("path"), str):
                unread += 1
                continue
            res.hits.append(SearchHit(path=h["path"], start_line=_i(h.get("startLine")), end_line=_i(h.get("endLine")),
                                      score=_f(h.get("score")),
                                      snippet=str(h.get("snippet") or "")[:2000],
                                      source=h.get("source") if isinstance(h.get("source"), str) else None,
                                      shape=hit_shape(h), vector_score=_f(h.get("vectorScore"))))
    elif (msg := _error_message(value)) is not None:
        res.error = msg
    if rc == 0 and not timed_out and res.error is None:
        res.not_understood = _unread_search(value, results, unread)
        if (two := second_json_value(stdout, "openclaw memory search --json")) is not None:
            res.hits, res.not_understood = [], two  # two answers: neither hit list is the search's
    if isinstance(value, Mapping) and value.get("stale") is True and isinstance(value.get("warning"), str):
        res.stale_warning = redact_text(value["warning"].strip())[:500] or None
    _loaded_anyway(res.stderr, rc == 0 and bool(res.hits))
    if res.hits:
        shapes = {h.shape for h in res.hits} - {"unknown"}
        res.shape = shapes.pop() if len(shapes) == 1 else "unknown"
    if timed_out:
        res.error = res.error or "timed out"
    elif rc not in (0, None) and res.error is None:
        res.error = res.stderr.search_failed or f"exit {rc}"
    return res


def _unread_search(value: Any, results: Any, unread: int) -> str | None:
    """Why an answered ``memory search --json`` cannot be read (pure): the shapes clawprobe reads are a list of
    hits or ``{"results": [hits]}``, each hit an object with a string ``path`` (2026.7.35, 2026.9.6)."""
    what = "`openclaw memory search --json` answered (exit 0)"
    if value is None:
        return f"{what} without a JSON value clawprobe can read"
    if not isinstance(results, list):
        keys = ", ".join(sorted(str(k) for k in value)[:8]) if isinstance(value, Mapping) else type(value).__name__
        return f"{what} in a shape clawprobe does not know (no `results` list; keys: {keys or 'none'})"
    if unread:
        return (f"{what} with {unread} result(s) in a shape clawprobe does not know (not an object with a string "
                "`path`): whether they hold the canary cannot be read")
    return None


_STALE_IDENTITY = re.compile(r"Memory index is stale: (.+?) \((owner: [^,()]+, code: [^()]+)\)")
_STALE_SYNC = re.compile(r"Memory index is stale: (.+?)\.?(?: Search results may be incomplete\.)?\s*$", re.S)


def search_staleness(warning: str | None) -> tuple[Literal["identity", "sync_error"], str] | None:
    """What a search's staleness warning (:attr:`SearchResult.stale_warning`) says (pure): ``("identity", "<reason>
    (owner: …, code: …)")`` for an index identity the config or build no longer matches (2026.9.x
    ``resolveMemoryIndexSearchDiagnostic``), ``("sync_error", "<last sync error>")`` otherwise; ``None`` for no
    warning or another text."""
    if (m := _STALE_IDENTITY.search(warning or "")) is not None:
        return "identity", f"{m[1]} ({m[2]})"
    if (m := _STALE_SYNC.match(warning or "")) is not None:
        return "sync_error", m[1]
    return None


def effective_backend(status: StatusEntry | None, status_err: StderrFacts | None,
                      search: SearchResult | None) -> tuple[str | None, str | None]:
    """(effective backend, how it was established) — the real probe first: the shape of search hits,
    then a fallback line on stderr, then ``status.backend``."""
    if search is not None and search.shape in ("qmd", "builtin"):
        return search.shape, f"shape of `memory search` hits ({search.shape})"
    for facts, what in ((search.stderr if search else None, "memory search"), (status_err, "memory status")):
        if facts is not None and facts.fallback is not None:
            return "builtin", f"stderr of `{what}`: {facts.fallback_detail or facts.fallback}"
    if status is not None and status.backend in ("qmd", "builtin"):
        return status.backend, "`memory status --json` status.backend"
    return None, None


def status_claims(configured: str, status: StatusEntry | None, search: SearchResult | None,
                  search_mode: str | None = None) -> list[StatusClaim]:
    """Where OpenClaw's own status disagrees with what clawprobe measured (pure).

    * status says ``backend: qmd`` but the search hits have the builtin shape (manager-construction
      fallback hides in status, field report §8);
    * status says ``dirty: false`` while files on disk (scan) outnumber indexed files — reported as a
      claim that agrees or not, never as a verdict by itself;
    * QMD ``search`` mode with the vector store reported unavailable: not needed in that mode.
    """
    out: list[StatusClaim] = []
    tool = "openclaw memory status --json"
    if status is None:
        return out
    if status.backend and search is not None and search.shape in ("qmd", "builtin"):
        out.append(StatusClaim(tool=tool, claim=f"backend {status.backend}",
                               measured=f"search answered by {search.shape} (result shape)",
                               agrees=status.backend == search.shape))
    if status.dirty is False and status.files is not None and status.scan_total_files is not None \
            and status.scan_total_files > status.files:
        out.append(StatusClaim(tool=tool, claim="dirty: false",
                               measured=f"{status.scan_total_files} memory files on disk, {status.files} indexed",
                               agrees=False))
    if configured == "qmd" and search_mode == "search" and status.vector_available is False:
        out.append(StatusClaim(tool=tool, claim="vector store unavailable",
                               measured="searchMode search (BM25) needs no vectors", agrees=True))
    return out


# --------------------------------------------------------------------------------------------------------
# Gather (runs the real CLI)
# --------------------------------------------------------------------------------------------------------

def run_version(openclaw: Sequence[str], env: Mapping[str, str], timeout_s: float = VERSION_TIMEOUT_S,
                cwd: str | None = None) -> ProcResult:
    """``openclaw --version`` in ``cwd`` (default ``/``; writes nothing; 0.05–0.2 s)."""
    return run([*openclaw, "--version"], env, timeout_s, cwd=cwd)


def truncation_note(run: RunRecord) -> str | None:
    """Why a run's stdout cannot be read whole: it was kept truncated (``stdout truncated at 64 KiB of N
    bytes``), else ``None``."""
    if not run.stdout_truncated:
        return None
    return f"stdout kept truncated at {RUN_TEXT_CAP_BYTES // 1024} KiB of {run.stdout_bytes} bytes"


def validate_of_run(run: RunRecord) -> ConfigValidation:
    """``config validate --json`` from its run record (pure; :func:`parse_validate`, then the runner's
    timeout or output cap)."""
    v = parse_validate(run.stdout, run.stderr_and_reason, run.rc)
    if run.timed_out:
        v.valid, v.error = None, f"timed out after {round(run.seconds or VALIDATE_TIMEOUT_S):g} s"
    elif run.output_capped:
        v.valid, v.error = None, run.reason
    return v


def status_of_run(run: RunRecord, validate: RunRecord | None = None) -> StatusResult:
    """``memory status --json`` from its run record (pure; :func:`parse_status`): cut JSON is not "no status
    JSON", so the output cap or truncation is named; ``validate`` (the ``config validate`` run gather made
    when the CLI had no ``memory`` command) is folded in by :func:`apply_validation`."""
    res = parse_status(run.stdout, run.stderr_and_reason, run.rc, run.seconds, run.timed_out)
    if run.output_capped:
        res.error = run.reason
    elif not res.entries and not res.disabled and (note := truncation_note(run)):
        res.error = note
    if validate is not None:
        apply_validation(res, validate_of_run(validate))
    return res


def search_of_run(run: RunRecord) -> SearchResult:
    """``memory search TOKEN --json`` from its run record (pure; :func:`parse_search`, the output cap or
    truncation named)."""
    res = parse_search(run.stdout, run.stderr_and_reason, run.rc, run.seconds, run.timed_out)
    if run.output_capped:
        res.error = run.reason
    elif not res.hits and (note := truncation_note(run)):
        res.error = res.error or note
    return res


def needs_validation(p: ProcResult) -> bool:
    """Whether a ``memory status`` run said the CLI has no ``memory`` command without naming a config error
    — then OpenClaw's own ``config validate`` tells a rejected config from a memory plugin turned off (the
    decision of what to run next; the answer itself is interpreted from the records)."""
    res = parse_status(p.stdout, p.stderr + ("\n" + p.reason if p.reason else ""), p.rc, p.seconds, p.timed_out)
    return res.stderr.memory_command_missing and not res.stderr.invalid_config


def run_status(openclaw: Sequence[str], agent_id: str, env: Mapping[str, str], cwd: str | None = None,
               timeout_s: float = STATUS_TIMEOUT_S) -> tuple[ProcResult, ProcResult | None]:
    """``openclaw memory status --json --agent ID`` (3–6 s) → (its run, the ``config validate`` run or
    ``None``).

    When the CLI answers that it has no ``memory`` command and printed no config error
    (:func:`needs_validation`), OpenClaw's own validator is asked (:func:`run_validate`, 2 s);
    :func:`status_of_run` folds its answer in: an invalid config then lands in ``stderr.invalid_config``, a
    valid one says the memory plugin is off.
    """
    p = run([*openclaw, "memory", "status", "--json", "--agent", agent_id], env, timeout_s, cwd=cwd)
    return p, (run_validate(openclaw, env, cwd=cwd) if needs_validation(p) else None)


def run_validate(openclaw: Sequence[str], env: Mapping[str, str], cwd: str | None = None,
                 timeout_s: float = VALIDATE_TIMEOUT_S) -> ProcResult:
    """``openclaw config validate --json`` (≈ 2 s; reads the config, writes only the CLI's bookkeeping DB
    ``<state>/state/openclaw.sqlite`` as every CLI command does) → its run (:func:`validate_of_run`)."""
    return run([*openclaw, "config", "validate", "--json"], env, timeout_s, cwd=cwd)


def run_search(openclaw: Sequence[str], query: str, agent_id: str, env: Mapping[str, str], cwd: str | None = None,
               timeout_s: float = SEARCH_TIMEOUT_S) -> ProcResult:
    """``openclaw memory search QUERY --json --agent ID`` (4–6 s) → its run (:func:`search_of_run`)."""
    return run([*openclaw, "memory", "search", query, "--json", "--agent", agent_id], env, timeout_s, cwd=cwd)
