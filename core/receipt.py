"""The normalized receipt: every fact the verdict rules use, each with where it came from.

A receipt is evidence, not a conclusion. Probes (``core.probes``) fill it from a real install; replay
files (``clawprobe replay``) carry it as JSON. Every field that was not measured stays ``None`` — the
rules treat "not measured" as unproven, never as passing.

Units: times are timezone-aware UTC datetimes; durations are seconds (float); sizes are bytes (int).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.lease import Lease

SCHEMA_VERSION = 1

SearchMode = Literal["search", "vsearch", "query"]
Backend = Literal["qmd", "builtin"]


class Model(BaseModel):
    """Base for all receipt parts: unknown keys are rejected so a typo in a replay file is an error.

    A time without a UTC offset (e.g. ``"2026-11-30T03:00:00"`` in a hand-written replay file) is read as
    UTC, like ``--now``: receipt times are UTC, and a naive time could not be compared with the others.
    """

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _naive_is_utc(cls, v: object) -> object:
        if isinstance(v, datetime) and v.tzinfo is None:
            return v.replace(tzinfo=timezone.utc)
        return v


class Evidence(Model):
    """One observation that a rule may cite.

    ``source`` names where the fact came from, e.g. ``"openclaw memory status --json"``,
    ``"stderr of openclaw memory search"``, ``"/tmp/openclaw/openclaw-2026-11-30.log:412"``,
    ``"index.sqlite (mode=ro)"``; ``at`` is when it was observed (UTC) when known.
    """

    source: str
    detail: str
    at: datetime | None = None


class ConfigError(Model):
    """Why the OpenClaw config could not be used (source: the config file and its ``$include``s).

    kind: ``parse`` (JSON5 syntax), ``schema`` (a value OpenClaw's schema rejects), ``include`` (missing or
    broken ``$include``), ``env`` (``${VAR}`` that cannot resolve), ``encoding`` (not UTF-8),
    ``unreadable`` (permissions, a directory, a symlink loop).
    """

    kind: Literal["parse", "schema", "include", "env", "encoding", "unreadable"]
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    key_path: str | None = None
    allowed: list[str] | None = None


class ConfigFacts(Model):
    """The memory settings OpenClaw will run with, read from its config file (JSON5).

    ``hash`` is the sha256 of the canonical JSON of the memory-relevant settings only (never secrets).
    ``provider_explicit`` is true when the embedding provider is pinned to a concrete provider (not unset,
    ``auto``, ``local`` or ``none``). ``retired_keys`` lists QMD keys present in the file (``memory.backend``,
    ``memory.qmd``…) — fatal only on a build that removed QMD.
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
    search_timeout_s: float | None = None
    embed_timeout_s: float | None = None


class OpenClawFacts(Model):
    """The OpenClaw build (source: ``openclaw --version``). ``has_qmd_backend`` is false from 2026.8.1 on."""

    version: str | None = None
    has_qmd_backend: bool | None = None
    node_version: str | None = None


class GatewayFacts(Model):
    """The running gateway for this state dir (source: the process table via psutil, its log).

    ``env_source``: where the PATH used to resolve qmd came from — ``process`` (the running gateway's own
    environment), ``systemd``/``launchd`` (the service definition), ``shell`` (clawprobe's own shell: said
    plainly, because a service PATH often differs). ``applied_config_hash`` is the memory-config hash the
    gateway is known to run (from its log); ``drift`` is true when it differs from the file on disk.
    """

    running: bool | None = None
    pid: int | None = None
    env_source: Literal["process", "systemd", "launchd", "shell", "recorded"] | None = None
    path_dirs: list[str] = Field(default_factory=list)
    reload_mode: str | None = None
    drift: bool | None = None
    drift_keys: list[str] = Field(default_factory=list)
    drift_reason: str | None = None
    baseline_hash: str | None = None


class QmdFacts(Model):
    """Whether the configured qmd runs from the gateway's environment.

    ``resolved_path`` comes from resolving ``memory.qmd.command`` against the gateway PATH;
    ``store_ok`` from a read-only store command run with the agent's XDG dirs (``--version`` alone is not
    proof: a broken native binding passes it). ``failure`` is the sub-reason tag when qmd is unusable:
    ``command_missing``, ``not_on_path``, ``service_path``, ``native_binding``, ``transport_spawn``,
    ``command_path_mangled``, ``not_executable``, ``timeout``.
    """

    command: str | None = None
    resolved_path: str | None = None
    version: str | None = None
    resolves: bool | None = None
    store_ok: bool | None = None
    store_exit_code: int | None = None
    failure: str | None = None
    failure_detail: str | None = None


class BackendFacts(Model):
    """Configured versus effective backend.

    ``effective`` comes from ``memory status --json`` ``status.backend``, the stderr line
    ``qmd binary unavailable … falling back to builtin``, the log, or the shape of search results
    (QMD hits have no ``id``/``textScore``). ``fallback_at`` is when a fallback was last seen (log time);
    a fallback seen within the lease window still counts. ``fallback_reason`` is the sub-reason tag
    (``sticky``, ``case_mismatch``, ``wrong_engine``, ``timeout``, ``manager_failed``, ``binary_unavailable``).
    """

    effective: Backend | None = None
    fallback_at: datetime | None = None
    fallback_reason: str | None = None
    fallback_detail: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)


class BuiltinFacts(Model):
    """The builtin engine, when it is the effective backend (source: status JSON, its SQLite store, the CLI).

    ``unavailable_reason`` tags a fail-closed engine: ``explicit_provider``, ``implicit_provider``,
    ``local_model``, ``runtime``, ``index_corrupt``, ``rebuild_failing``, ``fts5_missing``, ``embed_timeout``.
    ``fts_only`` is true when the index holds keyword-only chunks although the provider is not ``none``.
    """

    provider_requested: str | None = None
    provider_resolved: str | None = None
    fts_only: bool | None = None
    unavailable_reason: str | None = None
    unavailable_detail: str | None = None
    degraded_reason: str | None = None


class Freshness(Model):
    """When the managed index was last proven current, and how that was proven.

    ``last_proven_current`` (UTC) is derived from evidence, because QMD stores no update time: the oldest
    change on disk that the index does not reflect (mtime), an ``update completed`` log line, or the
    canary's ingest time. ``method`` names which. ``stale_reason`` is a sub-reason tag that explains a stale
    index (``ghost_content``, ``dirty``, ``sync_aborted``, ``embed_timeout``, ``age``).
    ``unindexed_files``/``ghost_files`` list up to 100 workspace-relative paths, oldest change first;
    ``unindexed_count``/``ghost_count`` are the totals (``None`` when not measured by a disk scan).
    """

    last_proven_current: datetime | None = None
    method: str | None = None
    unindexed_files: list[str] = Field(default_factory=list)
    ghost_files: list[str] = Field(default_factory=list)
    unindexed_count: int | None = None
    ghost_count: int | None = None
    stale_reason: str | None = None
    detail: str | None = None


class ModelDownload(Model):
    """One model the configured search mode needs, as seen in the agent's model cache.

    Source: ``<xdg-cache>/qmd/models/<file>`` (GGUF magic, size), ``<file>.ipull`` (allocated blocks and the
    ipull JSON trailer), ``.qmd-embed.lock`` (a live embed PID) — see ``core.probes.models`` and
    ``core.downloads``. ``state``: ``complete``, ``downloading`` (bytes grew within the stall time),
    ``starting`` (a qmd process is alive but no file exists yet, for less than the stall time), ``stalled``
    (no growth, or no file ever appeared, for the stall time), ``missing`` (nothing and nobody downloading),
    ``corrupt`` (no GGUF magic), ``size_mismatch`` (GGUF but not the expected size). Bytes are bytes, rate
    bytes/second, ``eta_s`` seconds; times UTC.
    """

    role: str
    name: str
    state: Literal["complete", "downloading", "starting", "stalled", "missing", "corrupt", "size_mismatch"]
    done_bytes: int | None = None
    total_bytes: int | None = None
    rate_bps: float | None = None
    eta_s: float | None = None
    last_growth_at: datetime | None = None
    stalled_since: datetime | None = None
    detail: str | None = None


class Vectors(Model):
    """Embedding readiness (source: QMD ``index.sqlite`` read with ``mode=ro``, the model cache, lock file).

    ``pending`` uses QMD's own rule: active hashes without a complete chunk set for the configured
    (model, fingerprint). ``missing_models`` lists roles (``embed``, ``generate``, ``rerank``) the configured
    mode needs and the model cache lacks (``None``: the cache was not inspected). ``not_ready_reason`` is the sub-reason tag (``pending``, ``embed_interrupted``,
    ``embed_timeout``, ``model_download``, ``status_misreport``, ``no_vector_store``, ``fingerprint_mismatch``).
    ``downloads`` lists the mode's models with their download state and ``download_status`` sums them up
    (``waiting``: progressing inside the warm-up window; ``stalled``/``failed``/``missing``: a failure with
    evidence) — ``None`` when the model cache was not inspected (``core.downloads``).
    """

    documents: int | None = None
    pending: int | None = None
    vector_rows: int | None = None
    orphans: int | None = None
    partial_documents: int | None = None
    has_vector_table: bool | None = None
    embed_model: str | None = None
    fingerprint: str | None = None
    embed_running_pid: int | None = None
    last_embed_at: datetime | None = None
    missing_models: list[str] | None = None
    not_ready_reason: str | None = None
    detail: str | None = None
    index_bytes: int | None = None
    downloads: list[ModelDownload] | None = None
    download_status: Literal["ready", "waiting", "stalled", "failed", "missing"] | None = None


class Canary(Model):
    """The synthetic canary and what retrieving it through OpenClaw returned.

    ``token_sha256`` identifies the token without storing it; ``expected_path`` is workspace-relative
    (``memory/clawprobe-canary.md``); ``content_sha256`` hashes the planted file. ``outcome``:
    ``found`` (from the expected path), ``miss``, ``wrong_source``, ``timeout``, ``denied`` (scope policy),
    ``error``; ``None`` means no retrieval has been run. ``reason`` narrows a failure (``hidden_path``,
    ``case_mismatch``, ``symlink``, ``wrong_store``, ``search_not_invoked``, ``cjk``, ``resource``,
    ``sessions_export``, ``extrapaths_dropped``, ``fts5_missing``, ``timeout``, ``probe_context``).
    ``latency_s`` is measured next to ``deadline_s`` (the search timeout) so a timeout is not a miss.
    """

    token_sha256: str | None = None
    expected_path: str | None = None
    content_sha256: str | None = None
    planted_at: datetime | None = None
    indexed_at: datetime | None = None
    embedded_at: datetime | None = None
    retrieved_at: datetime | None = None
    outcome: Literal["found", "miss", "wrong_source", "timeout", "denied", "error"] | None = None
    returned_path: str | None = None
    result_shape: Literal["qmd", "builtin", "unknown"] | None = None
    reason: str | None = None
    detail: str | None = None
    latency_s: float | None = None
    deadline_s: float | None = None
    direct_qmd_found: bool | None = None
    old_token_found: bool | None = None


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


class Receipt(Model):
    """Everything measured about one agent at ``checked_at``: the input of :func:`core.diagnosis.diagnose`.

    Serialized as JSON (``clawprobe check --save``, ``clawprobe replay FILE``). ``schema_version`` guards
    the format; ``probe_errors`` lists probes that could not run (with the reason), which keeps the verdict
    at ``unverified`` rather than guessing.
    """

    schema_version: int = SCHEMA_VERSION
    agent_id: str = "main"
    checked_at: datetime
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

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, v: int) -> int:
        if v != SCHEMA_VERSION:
            raise ValueError(f"receipt schema_version {v} is not supported (this clawprobe reads {SCHEMA_VERSION})")
        return v
