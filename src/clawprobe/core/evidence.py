"""The typed evidence of one check of one agent: everything the probes gathered, before any interpretation.

Pipeline: **gather → Evidence → interpret → Receipt → diagnose**. Live probing
(:func:`clawprobe.core.probe.gather`) and a recorded bundle (:func:`clawprobe.core.recorded.evidence_of`,
or a bundle file written by ``clawprobe bundle``) both produce an :class:`Evidence`; the one pure
:func:`clawprobe.core.interpret.interpret` turns it into a :class:`~clawprobe.core.receipt.Receipt`. Nothing
in here is a conclusion: what the programs printed (run records: argv, exit code, signal, stdout/stderr),
file and index facts, log facts, transcripts' tool results, timestamps.

Units: times are timezone-aware UTC datetimes; durations are seconds (float); sizes are bytes. Text that
enters from a program or a file is redacted where it enters (a run record,
:func:`clawprobe.core.runrecord.record_run`; the probes' parsers; :func:`clawprobe.core.redaction.redact_text`);
the config ``tree`` is the redacted memory subset.

The model is versioned (:data:`EVIDENCE_VERSION`, field ``version``) and has a JSON Schema
(:func:`evidence_schema`); a reader refuses a version not in :data:`READABLE_EVIDENCE_VERSIONS`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.canary import CanaryRecord, FileState
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.builtin_index import BuiltinIndexFacts
from clawprobe.core.probes.config import ConfigSnapshot
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.probes.qmd_index import IndexHolder, QmdIndexFacts, QmdStatusText
from clawprobe.core.probes.workspace import Comparison
from clawprobe.core.receipt import Finding, ReindexLock, SourceCoverage, WorkspaceState
from clawprobe.core.runrecord import RUN_TEXT_CAP_BYTES, RunRecord

#: bump when a field changes meaning. 2: the CLI probes are kept as run records (what the programs printed),
#: parsed by interpret; version 1 (parsed facts only) is still read.
EVIDENCE_VERSION = 2
READABLE_EVIDENCE_VERSIONS = (1, 2)


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CanarySpec(_M):
    """What the planted canary is: the exact token (synthetic, never a secret), its workspace-relative path,
    its content hash (sha256 hex) and when it was planted (UTC). Source: clawprobe's canary record. ``workspace``
    and ``real_path``: the agent's workspace and the canary file's real path (``realpath``, through a symlinked
    ``memory/``), when they differ from the plain join — a hit naming that same file by another root (an extra path
    set to the symlink's target) is the canary itself. ``search_paths``: the names OpenClaw's QMD search gives the
    same file when it lies in a collection outside the workspace, ``qmd/<collection>/<path in it>`` (2026.7.35
    ``buildSearchPath``; source: the agent's ``index.yml`` collections)."""

    token: str
    expected_path: str
    content_sha256: str | None = None
    planted_at: datetime | None = None
    workspace: str | None = None
    real_path: str | None = None
    search_paths: list[str] = Field(default_factory=list)


class DirectQmd(_M):
    """The direct cross-check ``qmd search TOKEN --json -c <managed collections>`` with the agent's XDG env:
    exit code (negative = the signal that killed it), wall seconds, the result files (≤ 10) and whether a
    result holding the token is the expected path (:func:`clawprobe.core.interpret.canary.direct_qmd_found`,
    the one rule both gatherers use); ``error`` the last stderr line of a failed run."""

    rc: int
    seconds: float
    found: bool
    files: list[str] = Field(default_factory=list)
    error: str | None = None


class SlowEvidence(_M):
    """The last run of the ``openclaw`` CLI probes for one agent (``taken_at`` UTC). Never on a 1 s timer.

    What the programs printed (version 2), one :class:`~clawprobe.core.runrecord.RunRecord` each (argv,
    exit code, signal, timeout/output-cap flags, seconds, stdout/stderr redacted and ≤ 64 KiB):
    ``status_run`` ``memory status --json --agent ID``; ``validate_run`` ``config validate --json`` (run only
    when the CLI had no ``memory`` command); ``search_run`` the canary retrieval ``memory search TOKEN --json``;
    ``direct_run`` the direct ``qmd search TOKEN --json -c …`` cross-check. ``canary`` what was searched for;
    ``errors`` why a probe was not run (no CLI, no state dir, config does not load, a search that would
    build the index). Interpret parses the runs (:func:`clawprobe.core.interpret.runs.slow_facts`).

    ``status``, ``search``, ``direct`` and ``cli_hung`` are the *parsed* facts: gather leaves them empty
    (version 2); a version-1 bundle carries only these, and interpret then reads them as they are.
    """

    taken_at: datetime
    agent_id: str
    env_source: str | None = None
    status_run: RunRecord | None = None
    validate_run: RunRecord | None = None
    search_run: RunRecord | None = None
    direct_run: RunRecord | None = None
    status: oc.StatusResult | None = None
    canary: CanarySpec | None = None
    search: oc.SearchResult | None = None
    direct: DirectQmd | None = None
    cli_hung: bool = False
    errors: list[str] = Field(default_factory=list)

    @property
    def runs(self) -> list[RunRecord]:
        """The run records held (status, validate, search, direct — those present)."""
        return [r for r in (self.status_run, self.validate_run, self.search_run, self.direct_run) if r is not None]


class Step(_M):
    """One recorded command (source: a bundle's ``steps/<name>/``): argv text, exit code (negative = killed
    by that signal), wall seconds, whether it timed out, when it ran (UTC) and its output (text, ≤ 4 MiB a
    stream)."""

    name: str
    command: str | None = None
    rc: int | None = None
    seconds: float | None = None
    timed_out: bool = False
    at: datetime | None = None
    stdout: str = ""
    stderr: str = ""

    @property
    def output(self) -> str:
        """stdout and stderr together (OpenClaw prints ``[memory] …`` lines on either)."""
        return f"{self.stdout}\n{self.stderr}"


class HostRecord(_M):
    """The host at check time: CPU count, 1/5/15-minute load, memory in bytes, kernel log lines (text), and the
    file system holding OpenClaw's state dir — ``state_read_only`` (mounted read-only: ``errors=remount-ro`` after
    an I/O error) and ``state_free_bytes`` (what a writer may still use); ``index_read_only``: the agent's QMD
    index dir when its own file system is read-only while the state dir's is not (a snapshot bind-mounted over
    it); ``store_dir``/``store_free_bytes`` and ``index_dir``/``index_free_bytes``: the agent's builtin store dir
    (``agents/<id>/agent``) and QMD index dir (``…/xdg-cache/qmd``) with the bytes a writer may use there, each
    only when it is on a file system other than the state dir's (a volume of its own, e.g. a small tmpfs for
    caches). Source: ``os``, ``/proc/meminfo``, ``stat``/``statvfs`` of the state dir, the store dir and the
    index dir (live) or the bundle."""

    cpus: int | None = None
    loadavg: list[float] = Field(default_factory=list)
    mem_total_bytes: int | None = None
    mem_available_bytes: int | None = None
    kernel_log: str | None = None
    state_read_only: bool | None = None
    state_free_bytes: int | None = None
    index_read_only: str | None = None
    store_dir: str | None = None
    store_free_bytes: int | None = None
    index_dir: str | None = None
    index_free_bytes: int | None = None


class Extra(_M):
    """The evidence the refinement (:func:`clawprobe.core.interpret.refine`) reads beyond the receipt.

    ``tree`` the redacted config subset; ``status``/``search`` the CLI probes (``openclaw memory status
    --json``, ``memory search TOKEN --json``); ``status_deep_run`` a ``memory status --deep --json`` run and
    ``status_text_run`` a plain ``memory status`` run, as printed (interpret parses them into ``status_deep``
    and ``status_text``, the text as ``{key: value}``; a version-1 bundle carries those two parsed);
    ``index_runs`` recorded ``openclaw memory index`` runs; ``doctor``
    ``openclaw doctor`` output; ``log`` the JSON-lines log facts; ``tool_results`` memory_search payloads from
    transcripts (oldest first); ``qmd_status`` a ``qmd status`` text; ``qmd_update_notice`` the count in
    ``qmd update``'s notice; ``outputs`` other recorded commands (``qmd embed``, ``node -e …``); ``explainers``
    why the canary path would not be indexed (``(tag, message)``, gathered whenever a canary exists);
    ``wrong_store_detail`` the managed-vs-default store comparison; ``builtin_findings`` warnings from a
    recorded builtin store; ``builtin_tokenizer`` the index identity's FTS tokenizer; ``non_regular_files``
    symlinks/other non-regular files among the memory sources (``path -> target``); ``extra_path_files`` files
    on disk per configured extra path; ``default_root_files`` files on disk under MEMORY.md + memory/;
    ``host`` load and memory; ``node_version`` of the runtime; ``canary_token`` the exact token searched;
    ``old_token_outputs`` retired canary token → the raw output of a search for it; ``reindex_orphans`` orphaned
    ``*.memory-reindex-*`` copies next to the builtin store, with their bytes; ``note_scripts`` letters per
    script in the memory notes on disk (:mod:`clawprobe.core.probes.note_scripts`, builtin), ``binary_notes`` the
    paths of those that are not text (:func:`~clawprobe.core.probes.note_scripts.is_binary`); ``reindex_lock`` the
    builtin store's reindex-lock sidecar and its holders (:mod:`clawprobe.core.probes.reindex_lock`);
    ``legacy_transcripts`` the ``*.jsonl`` transcripts in the agent's sessions dir on a build that keeps its
    sessions in SQLite (2026.8+: each awaits ``openclaw doctor --fix``'s staged import; ``None``: not counted);
    ``state_db_writer`` the release recorded in the state database (:func:`clawprobe.core.probes.state_db.writer_version`).

    Inside an :class:`Evidence` the fields ``tree``, ``status``, ``search``, ``log`` and ``canary_token`` stay
    empty (and ``status_deep``/``status_text`` when their runs are kept):
    :func:`clawprobe.core.interpret.interpret` fills them from the evidence's own config, CLI probes and log
    (one copy of each fact).
    """

    tree: dict = Field(default_factory=dict)
    status: oc.StatusResult | None = None
    search: oc.SearchResult | None = None
    status_deep: oc.StatusResult | None = None
    status_text: dict[str, Any] | None = None
    status_deep_run: RunRecord | None = None
    status_text_run: RunRecord | None = None
    index_runs: list[Step] = Field(default_factory=list)
    doctor: Step | None = None
    log: oclog.LogFacts | None = None
    tool_results: list[tr.ToolResult] = Field(default_factory=list)
    qmd_status: QmdStatusText | None = None
    qmd_update_notice: int | None = None
    outputs: list[Step] = Field(default_factory=list)
    explainers: list[tuple[str, str]] = Field(default_factory=list)
    wrong_store_detail: str | None = None
    collection_squatters: dict[str, str] = Field(default_factory=dict)
    builtin_findings: list[Finding] = Field(default_factory=list)
    builtin_tokenizer: str | None = None
    non_regular_files: list[str] = Field(default_factory=list)
    extra_path_files: dict[str, int] = Field(default_factory=dict)
    default_root_files: int | None = None
    host: HostRecord | None = None
    node_version: str | None = None
    canary_token: str | None = None
    old_token_outputs: dict[str, str] = Field(default_factory=dict)
    reindex_orphans: list[tuple[str, int]] = Field(default_factory=list)
    note_scripts: dict[str, int] | None = None
    binary_notes: list[str] = Field(default_factory=list)
    reindex_lock: ReindexLock | None = None
    legacy_transcripts: int | None = None
    state_db_writer: str | None = None


class StoreEvidence(_M):
    """What the store probes read (read-only): the agent's QMD index (``index.sqlite``) or builtin index
    facts, the disk-vs-index ``comparison`` of the workspace (:mod:`clawprobe.core.probes.workspace`), the
    scan's own warnings (``scan_findings``: bloat, caps, unreadable files), the per-root ``coverage``
    (:func:`clawprobe.core.probes.coverage.from_scan` of the same scan; empty when no full scan ran), and
    ``error`` when a store module failed (the text lands in ``probe_errors``); ``workspace_state`` what is at the
    agent's workspace path (:func:`clawprobe.core.probes.workspace.workspace_state`; ``None``: not looked at);
    ``notes_nearby`` the nearest existing ancestor of a missing workspace that holds notes
    (:func:`clawprobe.core.probes.workspace.notes_nearby`), else the workspace this shell's HOME gives when the
    gateway's gives another and that one holds notes (``probe._notes_under_shell_home``); ``missing_roots`` the configured roots beside the
    workspace that do not exist (:func:`clawprobe.core.probes.workspace.absent_roots`); ``linked_roots`` the builtin
    extra path roots that are symlinks, with their real paths (:func:`clawprobe.core.probes.workspace.linked_roots`);
    ``rename_clashes`` the skipped notes whose searchable name another file already holds
    (:func:`clawprobe.core.probes.workspace.rename_clashes`); ``glob_roots`` the builtin extra paths that are wildcards
    matching notes, each with its directory (:func:`clawprobe.core.probes.workspace.glob_roots`);
    ``hollow_notes`` the notes the builtin index lists as current but holds no text of
    (:func:`clawprobe.core.probes.builtin_index.hollow_notes`); ``qmd_write_holder`` a
    process other than qmd or OpenClaw holding the QMD index's WAL write lock
    (:func:`clawprobe.core.probes.qmd_index.write_holder`)."""

    qmd_index: QmdIndexFacts | None = None
    builtin_index: BuiltinIndexFacts | None = None
    comparison: Comparison | None = None
    scan_findings: list[Finding] = Field(default_factory=list)
    coverage: list[SourceCoverage] = Field(default_factory=list)
    workspace_state: WorkspaceState | None = None
    notes_nearby: str | None = None
    missing_roots: list[str] = Field(default_factory=list)
    emptied_roots: dict[str, int] = Field(default_factory=dict)
    linked_roots: dict[str, str] = Field(default_factory=dict)
    rename_clashes: dict[str, str] = Field(default_factory=dict)
    glob_roots: dict[str, str] = Field(default_factory=dict)
    hollow_notes: list[str] = Field(default_factory=list)
    qmd_write_holder: IndexHolder | None = None
    error: str | None = None


class Evidence(_M):
    """Everything gathered in one check of one agent (live or recorded), versioned.

    * ``agent_id``, ``checked_at`` (UTC) — whose check, and when it ended.
    * ``origin`` — ``live`` (gathered on this host) or ``bundle`` (loaded from a recording).
    * ``openclaw_version`` (``openclaw --version``, CalVer) or ``version_error``; ``node_version`` of the
      runtime when recorded.
    * ``config`` — the config snapshot (redacted memory subset, files read, parse/schema error);
      ``workspace`` the agent's resolved workspace dir.
    * ``gateway`` — the gateway's process/service/shell environment evidence (non-secret keys only).
    * ``log`` — facts from the JSON-lines log (syncs, fallbacks, embed failures, signals) for this agent;
      ``log_attribution``: ``index_writes`` (a shared default log: a ``qmd sync completed`` line counts only
      when ``qmd_index_written_at`` — the newest mtime of ``index.sqlite``/``-wal`` — shows the write) or
      ``own`` (the bundle's log is the install's own).
    * ``qmd_binary`` — the qmd binary + store check (resolution, ``--version`` and store command outputs).
    * ``stores_before`` — the same read-only store measurement taken before clawprobe's own ``openclaw`` CLI
      probes ran (``memory search`` syncs a builtin index): freshness and coverage are read from it, and
      where it differs from ``stores`` the probe's side effect is said; ``None`` when no CLI probe preceded.
    * ``stores`` — index + workspace facts; ``model_cache`` the model files for the configured search mode,
      ``model_cache_all`` for every role (which models a switch would need).
    * ``slow`` — the ``openclaw`` CLI probes (status, canary search, direct qmd) as run records.
    * ``canary_record`` — clawprobe's active canary record (token, path, content hash, planted time);
      ``canary_file`` the planted file's state on disk when the evidence was gathered, ``canary_token_on_disk``
      whether the searched token is still in it (``None``: not readable); ``canary_unrecorded`` the path of a
      clawprobe canary file in the workspace that clawprobe holds no record of (the workspace moved with it,
      or the data dir is another host's); ``canary_moved_dir`` ``(planted dir, where it is now)`` when the
      canary's whole directory was renamed or moved within the workspace (:func:`clawprobe.core.canary.moved_dir`)
      (:func:`clawprobe.core.canary.file_state`: ``present``, ``missing``, ``modified``…; ``None``: not looked at).
    * ``extra`` — transcripts' tool results, path explainers, host facts and other recorded outputs.
    * ``errors`` — probe errors met while gathering (they become the receipt's ``probe_errors``).
    * ``baseline_hash`` — the accepted memory-config hash (``clawprobe check --accept-baseline``).
    * ``state_dir`` and ``openclaw`` (the argv prefix that runs the CLI) — only to write the repair commands
      of the diagnosis (``diagnose(openclaw=…, state_dir=…)``); never read by interpret.
    """

    version: Literal[1, 2] = 2  # EVIDENCE_VERSION (1 is read: parsed CLI facts only)
    agent_id: str
    checked_at: datetime
    origin: Literal["live", "bundle"] = "live"
    openclaw_version: str | None = None
    version_error: str | None = None
    node_version: str | None = None
    config: ConfigSnapshot
    workspace: str | None = None
    gateway: gw.GatewayEvidence | None = None
    log: oclog.LogFacts = Field(default_factory=oclog.LogFacts)
    log_attribution: Literal["index_writes", "own"] = "index_writes"
    qmd_index_written_at: datetime | None = None
    qmd_binary: qb.QmdBinaryEvidence | None = None
    stores: StoreEvidence | None = None
    stores_before: StoreEvidence | None = None
    model_cache: ModelCacheEvidence | None = None
    model_cache_all: ModelCacheEvidence | None = None
    slow: SlowEvidence | None = None
    canary_record: CanaryRecord | None = None
    canary_file: FileState | None = None
    canary_token_on_disk: bool | None = None
    canary_unrecorded: str | None = None
    canary_moved_dir: tuple[str, str] | None = None
    extra: Extra = Field(default_factory=Extra)
    errors: list[str] = Field(default_factory=list)
    baseline_hash: str | None = None
    state_dir: str | None = None
    openclaw: list[str] | None = None


def evidence_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, pydantic's) of :class:`Evidence`."""
    return Evidence.model_json_schema()


__all__ = ["EVIDENCE_VERSION", "READABLE_EVIDENCE_VERSIONS", "RUN_TEXT_CAP_BYTES", "RunRecord",
           "CanarySpec", "DirectQmd", "Evidence", "Extra", "HostRecord", "SlowEvidence", "Step",
           "StoreEvidence", "evidence_schema"]
