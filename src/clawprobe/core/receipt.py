"""The normalized receipt: every fact the verdict rules use, each with where it came from.

A receipt is evidence, not a conclusion. Probes (``clawprobe.core.probes``) fill it from a real install; replay
files (``clawprobe replay``) carry it as JSON. Every field that was not measured stays ``None`` — the
rules treat "not measured" as unproven, never as passing.

Units: times are timezone-aware UTC datetimes; durations are seconds (float); sizes are bytes (int).

Impossible values are refused with a ``ValidationError`` naming the field (``clawprobe replay`` → exit 3):

* every count, size and byte figure is a :data:`Count` — a JSON integer (not a bool, not ``14.0``, not
  ``"14"``), ``0 ≤ n ≤ 2**63 − 1`` (SQLite's INTEGER range, where QMD/OpenClaw keep them);
* every duration is a :data:`~clawprobe.core.lease.Seconds` — finite, ``0 ≤ s ≤ 30 days`` (see ``clawprobe.core.lease``); a
  rate is finite and ``≥ 0``; process ids are ``1 … 2**31 − 1``; exit codes ``−255 … 255`` (a negative one is
  the signal that killed the process);
* every time is a :data:`Timestamp` — an ISO 8601 date-time string (``2026-11-30T03:00:00Z``; a bare date,
  a number or a numeric string is refused), kept in UTC: a time without a UTC offset is read as UTC, like
  ``--now``; one with an offset is converted (and refused when it has no UTC form, e.g. before year 1);
* across fields: no evidence time may be later than ``checked_at`` by more than :data:`CLOCK_SKEW_S`
  (5 s, for clocks read a moment apart), ``pending``/``partial_documents`` may not exceed ``documents``,
  and a total (``unindexed_count``, ``ghost_count``) may not be smaller than the list it totals.

The checks run when a receipt (part) is built or parsed; probes that assign fields afterwards are not
re-checked until the receipt is saved and read back.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationInfo,
    field_validator,
    model_validator,
)

from clawprobe.core.lease import Lease, Seconds
from clawprobe.core.redaction import redact_model

SCHEMA_VERSION = 1
CLOCK_SKEW_S = 5.0  # evidence may be this much newer than checked_at (two clocks read a moment apart), no more
MAX_COUNT = 2**63 - 1  # SQLite's largest INTEGER: QMD's and OpenClaw's counts and sizes live there

Count = Annotated[int, Strict(), Field(ge=0, le=MAX_COUNT)]
"""A count, size or byte figure: a JSON integer (bools, floats and strings are refused), ``0 ≤ n ≤ MAX_COUNT``."""
Pid = Annotated[int, Strict(), Field(ge=1, le=2**31 - 1)]
"""A process id: a positive ``pid_t`` (``1 … 2**31 − 1``)."""
ExitCode = Annotated[int, Strict(), Field(ge=-255, le=255)]
"""A process exit status: ``0 … 255``, or ``−N`` when signal ``N`` ended it (Python's ``returncode``)."""
Rate = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]
"""A finite, non-negative rate (bytes/second)."""

_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")


def _iso_text(v: Any) -> Any:
    """Let only datetimes and ISO 8601 date-time strings through to pydantic's parser (which would also take
    a number or a numeric string as Unix time, and a bare date as midnight)."""
    if isinstance(v, datetime) or (isinstance(v, str) and _ISO_DATETIME.match(v)):
        return v
    what = f"{type(v).__name__} {v!r}"[:60]
    raise ValueError(f"expected an ISO 8601 date-time string such as 2026-11-30T03:00:00Z, got {what}")


def _as_utc(v: datetime) -> datetime:
    """The same instant in UTC; a naive time is taken to be UTC. Raises ``ValueError`` for a time that has no
    UTC form (``0001-01-01T00:00:00+14:00`` is before year 1 in UTC)."""
    if v.tzinfo is None:
        return v.replace(tzinfo=UTC)
    try:
        return v.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{v.isoformat()} is outside the representable range (years 1–9999) in UTC") from None


Timestamp = Annotated[datetime, BeforeValidator(_iso_text), AfterValidator(_as_utc)]
"""A point in time, stored in UTC: a ``datetime`` or an ISO 8601 date-time string; a time without a UTC
offset is read as UTC, one with an offset is converted. JSON Schema: ``string``, ``format: date-time``."""


def _times(obj: Any, prefix: str = "") -> list[tuple[str, datetime]]:
    """Every time inside a receipt part as ``(dotted field path, time)``, lists indexed (``evidence[0].at``)."""
    if isinstance(obj, datetime):
        return [(prefix, obj)]
    out: list[tuple[str, datetime]] = []
    if isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            out += _times(getattr(obj, name), f"{prefix}.{name}" if prefix else name)
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            out += _times(item, f"{prefix}[{i}]")
    return out

SearchMode = Literal["search", "vsearch", "query"]
#: the QMD models each search mode loads (``search`` is BM25 only): a fact about qmd, read by the models
#: probe and by the judgement in ``clawprobe.core.modes``/``repairs``.
MODELS_NEEDED: dict[SearchMode, tuple[str, ...]] = {
    "search": (),
    "vsearch": ("embed", "generate"),
    "query": ("embed", "generate", "rerank"),
}
Backend = Literal["qmd", "builtin"]


class Model(BaseModel):
    """Base for all receipt parts: unknown keys are rejected so a typo in a replay file is an error.

    Times are :data:`Timestamp`: one without a UTC offset (e.g. ``"2026-11-30T03:00:00"`` in a hand-written
    replay file) is read as UTC, like ``--now`` — receipt times are UTC, and a naive time could not be
    compared with the others.
    """

    model_config = ConfigDict(extra="forbid")


class Evidence(Model):
    """One observation that a rule may cite.

    ``source`` names where the fact came from, e.g. ``"openclaw memory status --json"``,
    ``"stderr of openclaw memory search"``, ``"/tmp/openclaw/openclaw-2026-11-30.log:412"``,
    ``"index.sqlite (mode=ro)"``; ``at`` is when it was observed (UTC) when known.
    """

    source: str
    detail: str
    at: Timestamp | None = None


class ConfigError(Model):
    """Why the OpenClaw config could not be used (source: the config file and its ``$include``s).

    kind: ``parse`` (JSON5 syntax), ``schema`` (a value OpenClaw's schema rejects), ``include`` (missing or
    broken ``$include``), ``env`` (``${VAR}`` that cannot resolve), ``encoding`` (not UTF-8),
    ``unreadable`` (permissions, a directory, a symlink loop). ``line``/``column`` are as the parser reports
    them (clawprobe's own JSON5 reader: 1-based).
    """

    kind: Literal["parse", "schema", "include", "env", "encoding", "unreadable"]
    message: str
    file: str | None = None
    line: Count | None = None
    column: Count | None = None
    key_path: str | None = None
    allowed: list[str] | None = None


#: OpenClaw 2026.7.35's defaults of the two limits that cut a QMD hit's text (``backend-config``
#: ``DEFAULT_QMD_LIMITS``), by the key that sets each (:attr:`ConfigFacts.snippet_key`)
QMD_SNIPPET_DEFAULTS = {"memory.qmd.limits.maxSnippetChars": 450, "memory.qmd.limits.maxInjectedChars": 2200}


class ConfigFacts(Model):
    """The memory settings OpenClaw will run with, read from its config file (JSON5).

    ``hash`` is the sha256 of the canonical JSON of the memory-relevant settings only (never secrets).
    ``provider_explicit`` is true when the embedding provider is pinned to a concrete provider (not unset,
    ``auto``, ``local`` or ``none``). ``retired_keys`` lists QMD keys present in the file (``memory.backend``,
    ``memory.qmd``…) — fatal only on a build that removed QMD. ``memory_off`` says why memory search is
    switched off altogether (``plugins.slots.memory = "none"``, ``plugins.enabled = false`` in the config, or
    the CLI has no ``memory`` command although OpenClaw accepts the config); ``None`` when it is on.
    ``sources``/``sources_key``: the memory sources the config sets for the builtin engine and the key that sets
    them (``None``: not set, OpenClaw's default takes the notes). ``keyword_off``: the key of the agent's
    ``query.hybrid.enabled = false`` (2026.7.35: no full-text search), ``None`` when not set false.
    ``qmd_no_collections`` says why a QMD config gives the agent no collection at all
    (``memory.qmd.includeDefaultMemory = false`` and no ``memory.qmd.paths``:
    2026.7.35's status then reports ``qmd-collections-empty``); ``None`` otherwise. ``no_auto_update`` names the
    keys that leave a QMD index no automatic update while the gateway runs (``memory.qmd.update.interval`` 0: no
    timer; ``sync.watch: false``: no file watcher — 2026.7.35 ``qmd-manager``), so only ``openclaw memory index``
    takes a change in; ``None`` when some update is scheduled. ``workspace_key``: the key that sets this agent's
    own workspace for ``openclaw config set`` (:func:`clawprobe.core.locate.workspace_key`). ``provider_key``: the
    key of the agent's own entry that sets its embedding provider (``agents.list[<i>].memorySearch.provider``,
    ``agents.entries.<id>.memory.search.provider``) as ``openclaw config set`` takes it — that override wins over
    the defaults, so a repair setting the provider writes it there; ``None`` when the defaults set it (or nothing).
    ``tool_off``: the key and value of the agent's tool policy that take the ``memory_search`` tool from it
    (``tools.deny = [...]``, a profile without it, an allow list that leaves it out); ``tool_off_key`` /
    ``tool_fix``: the key and the JSON value that restore it with the least change; ``tool_unknown``: why the
    policy could not be evaluated with certainty (:mod:`clawprobe.core.probes.tool_policy`); all ``None``: the
    agent has the tool. ``snippet_chars``/``snippet_key`` (QMD only): the most text one hit can carry, in
    characters, and the ``memory.qmd.limits`` key that sets it
    (:attr:`clawprobe.core.probes.config.MemorySettings.snippet_cap`).
    """

    path: str | None = None
    error: ConfigError | None = None
    hash: str | None = None
    configured_backend: Backend = "builtin"
    search_mode: SearchMode = "search"
    qmd_command: str | None = None
    provider: str | None = None
    provider_explicit: bool = False
    retired_keys: list[str] = Field(default_factory=list)
    workspace: str | None = None
    scope_default: Literal["allow", "deny"] | None = None
    search_timeout_s: Seconds | None = None
    embed_timeout_s: Seconds | None = None
    memory_off: str | None = None
    sources: list[str] | None = None
    sources_key: str | None = None
    keyword_off: str | None = None
    snippet_chars: int | None = None
    snippet_key: str | None = None
    qmd_no_collections: str | None = None
    no_auto_update: str | None = None
    workspace_key: str | None = None
    provider_key: str | None = None
    tool_off: str | None = None
    tool_off_key: str | None = None
    tool_fix: str | None = None
    tool_unknown: str | None = None


class OpenClawFacts(Model):
    """The OpenClaw build (source: ``openclaw --version``). ``has_qmd_backend`` is false from 2026.8.1 on.
    ``state_fault``: why OpenClaw cannot write (or read) its own state dir — its file system mounted read-only,
    full, or the CLI's own "read failed" on its state database (source: ``statvfs``, the CLI's output); ``None``
    when nothing says so. ``state_written_by``: the newer release recorded in the state database
    (``state/openclaw.sqlite`` ``schema_meta.app_version``) when it is newer than ``version`` — a rollback this build
    cannot open; ``None`` otherwise."""

    version: str | None = None
    has_qmd_backend: bool | None = None
    node_version: str | None = None
    state_fault: str | None = None
    state_written_by: str | None = None


#: the embedding provider an unset or ``auto`` memory-search provider resolves to: OpenClaw 2026.7.35 and 2026.9.6
#: both map ``auto`` to ``DEFAULT_MEMORY_EMBEDDING_PROVIDER = "openai"`` (``createEmbeddingProvider`` and
#: ``resolveEmbeddingProviderIndexIdentity`` in their dist), which uses the key when the process holds one
AUTO_PROVIDER = "openai"
#: the variables each remote embedding provider reads its key from (their adapters / plugin manifests); only their
#: NAMES are ever kept (:func:`provider_key_names`)
PROVIDER_KEY_NAMES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "voyage": ("VOYAGE_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",)}


class GatewayFacts(Model):
    """The running gateway for this state dir (source: the process table via psutil, its log).

    ``env_source``: where the PATH used to resolve qmd came from — ``process`` (the running gateway's own
    environment), ``systemd``/``launchd`` (the service definition), ``shell`` (clawprobe's own shell: said
    plainly, because a service PATH often differs). ``applied_config_hash`` is the memory-config hash the
    gateway is known to run (from its log); ``drift`` is true when it differs from the file on disk.
    ``service_file``/``service_scope``: the service definition the environment came from (``env_source``
    ``systemd``/``launchd``) and whose manager runs it (``user`` or ``system``). ``runtime_fault``: with no
    gateway running, why that service cannot start this OpenClaw — its Node does not run or is outside the
    package's ``engines.node`` (:mod:`clawprobe.core.probes.service_runtime`). ``provider_keys``: the NAMES of the
    embedding-provider key variables the gateway's own environment sets (process or service; never a value) —
    clawprobe's ``openclaw`` runs do not carry them, so an unset/``auto`` provider may resolve differently there;
    ``None`` when that environment is not known.
    """

    running: bool | None = None
    pid: Pid | None = None
    env_source: Literal["process", "systemd", "launchd", "shell", "recorded"] | None = None
    path_dirs: list[str] = Field(default_factory=list)
    service_file: str | None = None
    service_scope: Literal["user", "system"] | None = None
    runtime_fault: str | None = None
    reload_mode: str | None = None
    drift: bool | None = None
    drift_keys: list[str] = Field(default_factory=list)
    drift_reason: str | None = None
    baseline_hash: str | None = None
    provider_keys: list[str] | None = None


class LockHolder(Model):
    """A process holding the QMD index open: its ``pid`` and command line ``what`` (one line, ≤ 80 chars)."""

    pid: Pid
    what: str


class QmdFacts(Model):
    """Whether the configured qmd runs from the gateway's environment.

    ``resolved_path`` comes from resolving ``memory.qmd.command`` against the gateway PATH;
    ``store_ok`` from a read-only store command run with the agent's XDG dirs (``--version`` alone is not
    proof: a broken native binding passes it). ``failure`` is the sub-reason tag when qmd is unusable:
    ``command_missing``, ``not_on_path``, ``service_path``, ``native_binding``, ``transport_spawn``,
    ``command_path_mangled``, ``not_executable``, ``not_qmd``, ``timeout``, ``version_failed``, and the
    index faults ``index_corrupt``, ``index_not_database``, ``index_unreadable``, ``index_locked``.
    ``candidate_path``/``candidate_version``: a working qmd found elsewhere (gateway PATH, usual install dirs)
    when the configured one is unusable (``candidate_searched``: that search ran — none found then means qmd is
    not installed where the gateway or the operator's shell could run it); ``package``: the npm package the
    configured command belongs to (``@tobilu/qmd``; ``qmd`` is an unrelated package); ``lock_holders``: the
    processes seen holding the index open (``index_locked``; source: the process table); ``stray_collections``:
    collections in the agent's QMD store that hold a managed collection's path and pattern under another name
    (source: the store's ``index.yml``), which OpenClaw will not rebind; ``index_path_env``: the ``INDEX_PATH`` the
    gateway's environment hands qmd (it then keeps its index there, not in the agent's XDG dirs; ``failure``
    ``index_path_env`` when qmd cannot open it, its directory missing).
    """

    command: str | None = None
    resolved_path: str | None = None
    version: str | None = None
    resolves: bool | None = None
    store_ok: bool | None = None
    store_exit_code: ExitCode | None = None
    failure: str | None = None
    failure_detail: str | None = None
    candidate_path: str | None = None
    candidate_version: str | None = None
    candidate_searched: bool = False
    package: str | None = None
    lock_holders: list[LockHolder] = Field(default_factory=list)
    stray_collections: list[str] = Field(default_factory=list)
    index_path_env: str | None = None


class BackendFacts(Model):
    """Configured versus effective backend.

    ``effective`` comes from ``memory status --json`` ``status.backend``, the stderr line
    ``qmd binary unavailable … falling back to builtin``, the log, or the shape of search results
    (QMD hits have no ``id``/``textScore``). ``fallback_at`` is when a fallback was last seen (log time);
    a fallback seen within the lease window still counts. ``fallback_reason`` is the sub-reason tag
    (``sticky``, ``case_mismatch``, ``wrong_engine``, ``timeout``, ``manager_failed``, ``binary_unavailable``).
    """

    effective: Backend | None = None
    fallback_at: Timestamp | None = None
    fallback_reason: str | None = None
    fallback_detail: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    #: why the RUNNING gateway's effective backend is not proven: its log cannot show the fallback line
    #: (``logging.level`` above warn, no log file, a relative ``logging.file`` not locatable) and no search
    #: of its own since it started was answered by qmd (session transcripts); ``None`` when proven or no
    #: gateway runs. A fresh CLI process's backend is not the gateway's (its fallback is sticky).
    gateway_unproven: str | None = None


class SidecarHolder(Model):
    """One process holding the builtin reindex-lock sidecar: ``pid``, ``command`` (one line, ≤ 80 chars, from
    ``/proc/<pid>/cmdline``), ``write_lock`` (a WRITE lock in ``/proc/locks``), ``gateway`` (an OpenClaw gateway)."""

    pid: int
    command: str
    write_lock: bool = False
    gateway: bool = False


class ReindexLock(Model):
    """The ``<store>.reindex-lock.sqlite`` sidecar (source: ``lstat``, ``/proc/*/fd``, ``/proc/locks``):
    ``holders`` have it open or locked (clawprobe excluded), ``held`` one holds a write lock, ``visible``
    false when ``/proc`` could not be read."""

    path: str
    exists: bool = False
    bytes: int | None = None
    holders: list[SidecarHolder] = Field(default_factory=list)
    held: bool = False
    visible: bool = True


class BuiltinGateFacts(Model):
    """The measured facts behind the builtin readiness gates (judged in ``clawprobe.core.modes.builtin_gates``).

    * ``fts_tokenizer`` — from the store's FTS table SQL (``tokenize=``; none = FTS5's ``unicode61``), else the
      meta's ``ftsTokenizer``; ``note_scripts`` letters per script in the notes on disk (``None``: not measured).
    * ``chunking_version`` / ``chunk_tokens`` — the meta's ``chunkingVersion`` / ``chunkTokens``.
    * ``index_identity`` / ``index_identity_reason`` — status ``custom.indexIdentity`` (``valid``, ``missing``,
      ``mismatched``…), or the status text's "Index identity" / "Vector search … paused" line;
      ``index_identity_order`` its ``versionOrder`` (2026.9.6: ``newer`` — the index was written by a newer
      OpenClaw than the one asked —, ``older``).
    * ``vector_enabled`` / ``vector_available`` — status ``vector.enabled`` / ``vector.available``.
    * ``provider_error`` — a provider refusal the classifier named (``<tag>: <line>``: 401/403/404/429/refused).
    * ``reindex_lock`` — the sidecar and its holder; ``orphan_copies`` / ``orphan_bytes`` the orphaned
      ``*.memory-reindex-*`` copies (``None``: not looked).
    """

    fts_tokenizer: str | None = None
    note_scripts: dict[str, int] | None = None
    chunking_version: int | None = None
    chunk_tokens: int | None = None
    index_identity: str | None = None
    index_identity_reason: str | None = None
    index_identity_order: str | None = None
    vector_enabled: bool | None = None
    vector_available: bool | None = None
    provider_error: str | None = None
    reindex_lock: ReindexLock | None = None
    orphan_copies: int | None = None
    orphan_bytes: int | None = None


class ChatRetrieval(Model):
    """The real agent's recent ``memory_search`` results for one chat kind (source: the session transcripts'
    tool results, the kind from ``sessions.json``; ``unknown`` when it cannot be told). Counts per outcome;
    ``last_outcome`` / ``last_at`` / ``last_error`` of the newest one (``found``, ``empty``, ``denied``,
    ``disabled``, ``error``)."""

    kind: Literal["direct", "group", "channel", "unknown"]
    searches: Count = 0
    found: Count = 0
    empty: Count = 0
    denied: Count = 0
    disabled: Count = 0
    errors: Count = 0
    last_outcome: str | None = None
    last_at: Timestamp | None = None
    last_error: str | None = None


class BuiltinFacts(Model):
    """The builtin engine, when it is the effective backend (source: status JSON, its SQLite store, the CLI).

    ``unavailable_reason`` tags a fail-closed engine: ``explicit_provider``, ``implicit_provider``,
    ``local_model``, ``runtime``, ``index_corrupt``, ``rebuild_failing``, ``fts5_missing``, ``embed_timeout``,
    ``search_crash`` (the search process crashed natively with no output), ``index_unreadable``, ``doctor_fix``,
    ``state_downgrade`` (an older build over a newer build's state databases), ``keyword_search_off`` (status:
    full-text search disabled and no vector search either — nothing can be searched), ``store_foreign`` (the store
    records another agent as its owner). ``sources``: the memory sources OpenClaw resolved for the agent (source:
    status ``sources``; an empty configured list is OpenClaw's default), ``None`` when no status said.
    ``fts_only`` is true when the index holds keyword-only chunks although the provider is not ``none``.
    ``vector_extension_error``: the vector store (sqlite-vec) does not load although a provider is set — the
    provider is not the fault (source: status ``vector.loadError``, the memory log's sqlite-vec warning).
    ``store_unreadable``: why this user cannot open the store (permission denied, with its mode and owner;
    source: clawprobe's own read-only open), ``None`` when it could. ``store_sound``: true when clawprobe's own
    read-only open and ``PRAGMA quick_check`` found the store intact (``None``: not checked) — a shared log's
    "malformed" line about another install's store then is not this one's. ``store_path``: the store file read
    (2026.9.6 ``agents/<id>/agent/openclaw-agent.sqlite``, 2026.7.35 ``memory/<id>.sqlite``); ``None``: none.
    ``store_damage``: what clawprobe's read-only open found wrong with it — ``truncated`` (shorter than its header
    declares), ``not_sqlite``, ``corrupt`` (malformed), ``quick_check`` (``PRAGMA quick_check`` failed),
    ``directory`` (a directory stands at the store's path: a ``cp -r`` restore), ``not_regular`` (a FIFO, socket
    or device stands there: OpenClaw's open of a FIFO blocks every memory command).
    """

    provider_requested: str | None = None
    provider_resolved: str | None = None
    fts_only: bool | None = None
    unavailable_reason: str | None = None
    unavailable_detail: str | None = None
    degraded_reason: str | None = None
    vector_extension_error: str | None = None
    store_unreadable: str | None = None
    store_sound: bool | None = None
    store_path: str | None = None
    store_damage: Literal["truncated", "not_sqlite", "corrupt", "quick_check", "directory", "not_regular"] | None = None
    sources: list[str] | None = None
    gates: BuiltinGateFacts = Field(default_factory=BuiltinGateFacts)



class Freshness(Model):
    """When the managed index was last proven current, and how that was proven.

    ``last_proven_current`` (UTC) is derived from evidence, because QMD stores no update time: the oldest
    change on disk that the index does not reflect (mtime), an ``update completed`` log line, or the
    canary's ingest time. ``method`` names which. ``stale_reason`` is a sub-reason tag that explains a stale
    index (``ghost_content``, ``dirty``, ``unreadable``, ``never_indexed``, ``sync_aborted``, ``embed_timeout``,
    ``age``). ``unindexed_files``/``ghost_files`` list up to 100 workspace-relative paths, oldest change first;
    ``unreadable_files`` those of them the engine cannot read (their permissions must be fixed before any re-index);
    ``unindexed_count``/``ghost_count`` are the totals (``None`` when not measured by a disk scan).
    """

    last_proven_current: Timestamp | None = None
    method: str | None = None
    unindexed_files: list[str] = Field(default_factory=list)
    ghost_files: list[str] = Field(default_factory=list)
    unreadable_files: list[str] = Field(default_factory=list)
    #: some unreadable file is owned by another user than clawprobe's (``lstat``): a chmod by this user cannot
    #: fix it, a chown to the gateway's user can
    unreadable_foreign: bool = False
    unindexed_count: Count | None = None
    ghost_count: Count | None = None
    stale_reason: str | None = None
    detail: str | None = None
    #: a process (not qmd/OpenClaw) holding the QMD index's WAL write lock: every update waits on it (``/proc/locks``)
    write_holder: LockHolder | None = None
    #: the newest qmd update the log shows, after its last completed sync, cut off at its timeout (the record; source:
    #: the JSON-lines log): updates that run into memory.qmd.update.updateTimeoutMs take no change in
    update_timeout: str | None = None

    @model_validator(mode="after")
    def _totals_cover_lists(self) -> Freshness:
        """A total is at least the number of paths it lists (the lists are capped at 100, the totals are not)."""
        for total, listed in (("unindexed_count", "unindexed_files"), ("ghost_count", "ghost_files")):
            n, paths = getattr(self, total), getattr(self, listed)
            if n is not None and n < len(paths):
                raise ValueError(f"{total} {n} is smaller than the {len(paths)} paths listed in {listed}")
        return self


#: the download states of a model still on its way (``downloading``: bytes grew within the stall time;
#: ``starting``: a qmd process is alive, no file yet) — see :class:`ModelDownload`
ACTIVE_DOWNLOAD_STATES = ("downloading", "starting")


class ModelDownload(Model):
    """One model the configured search mode needs, as seen in the agent's model cache.

    Source: ``<xdg-cache>/qmd/models/<file>`` (GGUF magic, size), ``<file>.ipull`` (allocated blocks and the
    ipull JSON trailer), ``.qmd-embed.lock`` (a live embed PID) — see ``clawprobe.core.probes.models`` and
    ``clawprobe.core.downloads``. ``state``: ``complete``, ``downloading`` (bytes grew within the stall time),
    ``starting`` (a qmd process is alive but no file exists yet, for less than the stall time), ``stalled``
    (no growth, or no file ever appeared, for the stall time), ``missing`` (nothing and nobody downloading),
    ``corrupt`` (no GGUF magic), ``size_mismatch`` (GGUF but not the expected size). Bytes are bytes, rate
    bytes/second, ``eta_s`` seconds; times UTC.
    """

    role: str
    name: str
    state: Literal["complete", "downloading", "starting", "stalled", "missing", "corrupt", "size_mismatch"]
    done_bytes: Count | None = None
    total_bytes: Count | None = None
    rate_bps: Rate | None = None
    eta_s: Seconds | None = None
    last_growth_at: Timestamp | None = None
    stalled_since: Timestamp | None = None
    detail: str | None = None


class Vectors(Model):
    """Embedding readiness (source: QMD ``index.sqlite`` read with ``mode=ro``, the model cache, lock file).

    ``pending`` uses QMD's own rule: active hashes without a complete chunk set for the configured
    (model, fingerprint). ``missing_models`` lists roles (``embed``, ``generate``, ``rerank``) the configured
    mode needs and the model cache lacks (``None``: the cache was not inspected). ``not_ready_reason`` is the
    sub-reason tag (``pending``, ``embed_interrupted``, ``embed_timeout``, ``model_download``, ``status_misreport``,
    ``no_vector_store``, ``fingerprint_mismatch``). ``downloads`` lists the mode's models with their download state and
    ``download_status`` sums them up (``waiting``: progressing inside the warm-up window; ``stalled``/``failed``/``missing``: a failure with
    evidence) — ``None`` when the model cache was not inspected (``clawprobe.core.downloads``).
    """

    documents: Count | None = None
    pending: Count | None = None
    vector_rows: Count | None = None
    orphans: Count | None = None
    partial_documents: Count | None = None
    has_vector_table: bool | None = None
    embed_model: str | None = None
    fingerprint: str | None = None
    embed_running_pid: Pid | None = None
    last_embed_at: Timestamp | None = None
    missing_models: list[str] | None = None
    not_ready_reason: str | None = None
    detail: str | None = None
    index_bytes: Count | None = None
    downloads: list[ModelDownload] | None = None
    download_status: Literal["ready", "waiting", "stalled", "failed", "missing"] | None = None

    @property
    def downloading(self) -> bool:
        """True when a model of ``downloads`` is on its way now (:data:`ACTIVE_DOWNLOAD_STATES`)."""
        return any(m.state in ACTIVE_DOWNLOAD_STATES for m in self.downloads or ())

    @model_validator(mode="after")
    def _parts_of_documents(self) -> Vectors:
        """``pending`` (distinct active hashes) and ``partial_documents`` (active documents) cannot exceed
        ``documents`` (active documents) when both are known — QMD counts all three over the same rows."""
        for part in ("pending", "partial_documents"):
            n = getattr(self, part)
            if n is not None and self.documents is not None and n > self.documents:
                raise ValueError(f"{part} {n} is more than documents {self.documents} (the active documents it is "
                                 "part of)")
        return self


class Canary(Model):
    """The synthetic canary and what retrieving it through OpenClaw returned.

    ``token_sha256`` identifies the token without storing it; ``expected_path`` is workspace-relative
    (``memory/clawprobe-canary.md``); ``content_sha256`` hashes the planted file. ``outcome``:
    ``found`` (from the expected path), ``miss``, ``wrong_source``, ``timeout``, ``denied`` (scope policy),
    ``error``; ``None`` means no retrieval has been run. ``reason`` narrows a failure (``hidden_path``,
    ``case_mismatch``, ``symlink``, ``wrong_store``, ``search_not_invoked``, ``cjk``, ``resource``,
    ``sessions_export``, ``extrapaths_dropped``, ``fts5_missing``, ``timeout``, ``probe_context``).
    ``latency_s`` is measured next to ``deadline_s`` (the search timeout) so a timeout is not a miss.
    ``moved_dir``: ``(planted dir, where it is now)``, workspace-relative, when the canary's whole directory was
    renamed or moved (``reason`` ``notes_dir_moved``; source: :func:`clawprobe.core.canary.moved_dir`).
    """

    token_sha256: str | None = None
    expected_path: str | None = None
    content_sha256: str | None = None
    planted_at: Timestamp | None = None
    indexed_at: Timestamp | None = None
    embedded_at: Timestamp | None = None
    retrieved_at: Timestamp | None = None
    outcome: Literal["found", "miss", "wrong_source", "timeout", "denied", "error"] | None = None
    returned_path: str | None = None
    result_shape: Literal["qmd", "builtin", "unknown"] | None = None
    reason: str | None = None
    detail: str | None = None
    latency_s: Seconds | None = None
    deadline_s: Seconds | None = None
    direct_qmd_found: bool | None = None
    old_token_found: bool | None = None
    moved_dir: tuple[str, str] | None = None


class Finding(Model):
    """A non-verdict observation shown as a warning (``index_bloat``, ``status_misreport``…)."""

    tag: str
    message: str
    source: str | None = None


class StatusClaim(Model):
    """What OpenClaw's or QMD's own status output claims, next to what clawprobe measured.

    Shown in the UI when they disagree: the verdict always follows ``measured``.
    """

    tool: str
    claim: str
    measured: str
    agrees: bool


class LedgerEntry(Model):
    """One memory-related signal the real programs produced in the lease window (spec §10 ledger).

    ``source`` names where it was seen (``gateway log (file)``, ``stderr of `openclaw memory search```,
    ``exit status of `…```); ``line`` is the redacted text (≤ 300 chars); ``kind`` is ``explained`` (a known
    signal, ``tag``, that the rules read), ``benign`` (listed with ``why``) or ``unrecognized`` (clawprobe
    cannot judge it: the receipt is never healthy then)."""

    source: str
    line: str
    kind: Literal["explained", "benign", "unrecognized"]
    tag: str | None = None
    why: str | None = None
    level: str | None = None
    at: Timestamp | None = None


class SourceCoverage(Model):
    """One root OpenClaw indexes for this agent, measured against the index (issue 13 "coverage, measured").

    ``source`` names the root (a QMD collection, ``MEMORY.md``, ``memory/``, an extra path, ``sessions``);
    ``measured_by`` is ``disk_scan`` (clawprobe's scan by the engine's own rules vs the index rows, read-only,
    before any ``openclaw`` CLI runs) or ``status`` (``memory status --json``: ``sourceCounts[].files`` vs
    ``scan.sources[].totalFiles``). ``expected`` files the root's rules index, ``indexed`` of them the index
    reflects, ``missing`` the rest (new, changed or unreadable: stale, never explained). ``skipped`` counts, by
    reason tag, the Markdown notes under the root that a rule of the engine skips (``hidden_path``,
    ``case_mismatch``, ``symlink``, ``pattern_excluded``, ``excluded_dir``, ``empty_file``, ``unreadable``):
    explained gaps; ``skipped_notes`` up to 10 of them as ``path (reason)``; ``missing_examples`` up to 5."""

    source: str
    measured_by: Literal["disk_scan", "status"]
    expected: Count | None = None
    indexed: Count | None = None
    missing: Count = 0
    missing_examples: list[str] = Field(default_factory=list)
    skipped: dict[str, Count] = Field(default_factory=dict)
    skipped_notes: list[str] = Field(default_factory=list)


#: what is at the agent's workspace path (:func:`clawprobe.core.probes.workspace.workspace_state`)
WorkspaceState = Literal["dir", "empty", "missing", "not_dir", "unreadable"]


class Coverage(Model):
    """Per-root coverage of the agent's index (:class:`SourceCoverage` each, in root order).

    ``measured`` says when the disk scan was taken: ``before_probe`` (before clawprobe's own ``openclaw``
    CLI probes, which on builtin sync the index) or ``after_probe`` (no earlier measurement: a lone fast
    probe, a recording). ``probe_side_effect`` is set when the index changed between the measurement before
    the CLI probes and the one after (a sync the probe itself caused), with what changed. ``workspace``: what
    was at the agent's workspace path then — ``dir``, ``empty`` (an unmounted mount point, a wiped restore),
    ``missing``, ``not_dir``, ``unreadable``; ``None``: not looked at. ``legacy_transcripts``: session
    transcripts (``*.jsonl``) on disk that a build keeping its sessions in SQLite (2026.8+) has not imported,
    while sessions are one of the agent's memory sources — none of them is searchable until
    ``openclaw doctor --fix`` imports them (``None``: not counted, or sessions are not a source).
    ``notes_nearby``: the nearest existing ancestor of a missing workspace that holds notes (``MEMORY.md`` or
    ``memory/``) — where the operator's notes are while OpenClaw looks below them — or, when the gateway's HOME
    gives another workspace than this shell's (finding ``workspace_other_home``), the shell's one holding notes.
    ``missing_roots``: the configured
    roots beside the workspace (``extraPaths``; for QMD also ``memory.qmd.paths`` and ``extraCollections``) that do
    not exist, as absolute paths. ``emptied_roots``: the builtin ``extraPaths`` roots that hold none of the notes the
    index lists under them (an empty mount point, a root gone), each with that count of indexed notes.
    ``linked_roots``: the builtin ``extraPaths`` roots that are symlinks (never
    traversed), each with the real directory it leads to. ``rename_clashes``: skipped notes (absolute) whose
    searchable name another file already holds (``memory.md`` beside ``MEMORY.md``), each with that file: renaming
    would overwrite it. ``glob_roots``: builtin ``extraPaths`` entries that are wildcards (``notes/*.md``) matching
    notes — OpenClaw takes them literally, so those notes are never read — each with its directory.
    ``hollow_notes``: builtin notes (workspace-relative) the index lists as current (same hash) but holds no chunk
    of — none of their text is searchable and a plain index run skips them."""

    sources: list[SourceCoverage] = Field(default_factory=list)
    measured: Literal["before_probe", "after_probe"] | None = None
    probe_side_effect: str | None = None
    workspace: WorkspaceState | None = None
    legacy_transcripts: Count | None = None
    notes_nearby: str | None = None
    missing_roots: list[str] = Field(default_factory=list)
    emptied_roots: dict[str, int] = Field(default_factory=dict)
    linked_roots: dict[str, str] = Field(default_factory=dict)
    rename_clashes: dict[str, str] = Field(default_factory=dict)
    glob_roots: dict[str, str] = Field(default_factory=dict)
    hollow_notes: list[str] = Field(default_factory=list)


class Receipt(Model):
    """Everything measured about one agent at ``checked_at``: the input of :func:`clawprobe.core.diagnosis.diagnose`.

    Serialized as JSON (``clawprobe check --save``, ``clawprobe replay FILE``). ``schema_version`` guards
    the format; ``probe_errors`` lists probes that could not run (with the reason), which keeps the verdict
    at ``unverified`` rather than guessing; ``not_understood`` lists program output that answered in a shape
    clawprobe cannot read (source: the output's parser, e.g. a ``memory search --json`` without a ``results``
    list), one sentence each — never read as a measurement, never healthy.
    """

    schema_version: Annotated[int, Strict(), Field(json_schema_extra={"const": SCHEMA_VERSION})] = SCHEMA_VERSION
    agent_id: str = "main"
    checked_at: Timestamp
    openclaw: OpenClawFacts = Field(default_factory=OpenClawFacts)
    config: ConfigFacts = Field(default_factory=ConfigFacts)
    gateway: GatewayFacts = Field(default_factory=GatewayFacts)
    qmd: QmdFacts = Field(default_factory=QmdFacts)
    backend: BackendFacts = Field(default_factory=BackendFacts)
    builtin: BuiltinFacts = Field(default_factory=BuiltinFacts)
    lease: Lease = Field(default_factory=Lease)
    freshness: Freshness = Field(default_factory=Freshness)
    vectors: Vectors = Field(default_factory=Vectors)
    canary: Canary = Field(default_factory=Canary)
    findings: list[Finding] = Field(default_factory=list)
    status_claims: list[StatusClaim] = Field(default_factory=list)
    probe_errors: list[str] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list)
    ledger: list[LedgerEntry] = Field(default_factory=list)
    coverage: Coverage = Field(default_factory=Coverage)
    chat_retrieval: list[ChatRetrieval] = Field(default_factory=list)

    @model_validator(mode="after")
    def _masked(self) -> Receipt:
        """Secret shapes are masked in every text a receipt holds (:func:`clawprobe.core.redaction.redact_model`):
        a receipt read back (replay, history) or built with its parts is clean before any output sees it."""
        return redact_receipt(self)

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, v: int) -> int:
        if v != SCHEMA_VERSION:
            raise ValueError(f"receipt schema_version {v} is not supported (this clawprobe reads {SCHEMA_VERSION})")
        return v

    @field_validator("*")
    @classmethod
    def _no_evidence_after_the_check(cls, part: Any, info: ValidationInfo) -> Any:
        """Evidence cannot be newer than the check that gathered it: each time inside a part may be later than
        ``checked_at`` by at most :data:`CLOCK_SKEW_S`. Raises ``ValueError`` naming the field otherwise."""
        at = info.data.get("checked_at")
        if at is None or info.field_name == "checked_at":
            return part
        for name, t in _times(part):
            ahead = (t - at).total_seconds()
            if ahead > CLOCK_SKEW_S:
                raise ValueError(f"{name} {t.isoformat()} is {ahead:g} s after checked_at {at.isoformat()}: evidence "
                                 f"cannot be newer than the check (allowed clock skew {CLOCK_SKEW_S:g} s)")
        return part


def redact_receipt(r: Receipt) -> Receipt:
    """``r`` with every secret shape masked in every string it holds, in place (see
    :func:`clawprobe.core.redaction.redact_shapes`; hashes and canary tokens stay). The last step of every probe
    (``clawprobe.core.probe.fast``) and of every receipt parsed, so no output path — text, JSON, history, replay,
    walk, the dashboard — can show a secret that any source (config, log, stderr, status JSON, transcript)
    carried in. Returns ``r``."""
    redact_model(r)
    return r
