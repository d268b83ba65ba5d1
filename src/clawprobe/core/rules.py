"""The verdict rules as data: one pure function per verdict, evaluated in :data:`RULES` order.

Each rule reads only the receipt and the clock and returns a :class:`Match` (sub-reason tag plus the
evidence lines it used) or ``None``. The first match wins; ``healthy`` matches when nothing else did.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from clawprobe.core.lease import Lease, age_seconds, is_stale, proven_words
from clawprobe.core.ledger_shown import shown as ledger_shown
from clawprobe.core.modes import (
    canary_awaiting_update,
    cannot_catch_up,
    index_fault,
    models_cell,
    tokenizer_gate,
    vectors_cell,
)
from clawprobe.core.probes.note_scripts import UTF16
from clawprobe.core.receipt import AUTO_PROVIDER, PROVIDER_KEY_NAMES, Receipt
from clawprobe.core.understood import index_order_gap, openclaw_version_gap, qmd_command_gap, qmd_version_gap
from clawprobe.core.verdicts import Verdict


@dataclass(frozen=True)
class Match:
    """A rule that fired: ``reason`` is the sub-reason tag, ``evidence`` the facts it used (one per line)."""

    reason: str | None
    evidence: list[str] = field(default_factory=list)


RuleFn = Callable[[Receipt, datetime], "Match | None"]


def _qmd_configured(r: Receipt) -> bool:
    return r.config.configured_backend == "qmd"


def _cite(r_evidence: list, prefix: str = "") -> list[str]:
    return [f"{prefix}{e.detail} ({e.source})" for e in r_evidence]


def config_invalid(r: Receipt, now: datetime) -> Match | None:
    """The config cannot be read, parsed (JSON5) or validated."""
    e = r.config.error
    if e is None:
        return None
    where = ":".join(str(x) for x in (e.file or r.config.path, e.line, e.column) if x is not None)
    lines = [f"{e.kind} error at {where}: {e.message}" if where else f"{e.kind} error: {e.message}"]
    if e.key_path:
        lines.append(f"key {e.key_path}" + (f" — allowed: {', '.join(e.allowed)}" if e.allowed else ""))
    if newer_layout(r):
        lines.append(f"{e.key_path} is OpenClaw 2026.8+'s layout and this openclaw is {r.openclaw.version}: the config "
                     "was written by a newer build (a downgrade?); this build's doctor --fix and config commands refuse it")
    return Match(e.kind, lines)


NEWER_LAYOUT_KEYS = ("memory.search", "agents.entries")  #: keys OpenClaw 2026.8+ reads that ≤ 2026.7.35 rejects


def newer_layout(r: Receipt) -> bool:
    """A schema rejection of a 2026.8+ key (:data:`NEWER_LAYOUT_KEYS`) by a build that has the QMD backend
    (≤ 2026.7.35): a newer build's config under an older binary (breaker round 6, z16: a rollback)."""
    e = r.config.error
    return e is not None and e.kind == "schema" and r.openclaw.has_qmd_backend is True \
        and any(e.key_path == k or (e.key_path or "").startswith(k + ".") for k in NEWER_LAYOUT_KEYS)


def backend_retired(r: Receipt, now: datetime) -> Match | None:
    """The config holds QMD-era keys on an OpenClaw build that removed them (2026.8.1+): ``retired_keys`` when it
    asks for QMD (``memory.backend: qmd``, a ``memory.qmd``/``memory.search.qmd`` section), ``backend_key`` when
    only a ``memory.backend`` naming another engine (``builtin``) is left — every command fails on it all the
    same, and ``doctor --fix`` removes it (measured on 2026.9.6), but there is no QMD to migrate off."""
    if r.config.retired_keys and r.openclaw.has_qmd_backend is False:
        keys = ", ".join(r.config.retired_keys)
        qmd = r.config.configured_backend == "qmd" or any("qmd" in k for k in r.config.retired_keys)
        if not qmd:
            return Match("backend_key", [f"OpenClaw {r.openclaw.version or '?'} has one memory engine and rejects "
                                         f"memory.backend; config has {keys} = {r.config.configured_backend or '?'!r}"])
        return Match("retired_keys", [f"OpenClaw {r.openclaw.version or '?'} has no QMD backend; config has {keys}"])
    return None


def config_drift(r: Receipt, now: datetime) -> Match | None:
    """The gateway runs another memory config than the file, or the file left the accepted baseline."""
    g = r.gateway
    if g.drift and g.drift_reason == "stale_handle":
        return Match("stale_handle", [e.detail for e in r.backend.evidence if "gateway memory_search" in e.detail]
                     or ["the running gateway serves memory from an index it opened before the last rebuild"])
    if g.drift:
        keys = f" (keys: {', '.join(g.drift_keys)})" if g.drift_keys else ""
        return Match(g.drift_reason or "stale_manager", [f"running gateway (pid {g.pid}) uses an older memory config{keys}"])
    if g.baseline_hash and r.config.hash and g.baseline_hash != r.config.hash:
        return Match("baseline_changed", [f"memory config hash {r.config.hash[:12]} ≠ accepted baseline {g.baseline_hash[:12]}"])
    return None


def qmd_unavailable(r: Receipt, now: datetime) -> Match | None:
    """QMD is configured but does not resolve/execute from the gateway's environment (``not_qmd``: what runs
    does not identify as qmd), its store crashes, or the agent's index cannot be read — named by the SQLite
    error of the store command or of clawprobe's own read-only open (``index_corrupt``,
    ``index_not_database``, ``index_unreadable``) — or it keeps its index outside the XDG dirs OpenClaw gives it
    (``index_elsewhere``: a wrapper's own XDG_CACHE_HOME; ``index_path_env``: the gateway's own INDEX_PATH)."""
    if not _qmd_configured(r):
        return None
    q = r.qmd
    if q.failure in ("index_elsewhere", "index_path_env"):  # it runs, but keeps its index where OpenClaw never looks
        return Match(q.failure, [f"qmd command {q.command or 'qmd'!r}: {q.failure_detail}"])
    fault = index_fault(r)
    if _unidentified_qmd(r):  # OpenClaw's search got qmd's hits through it: not understood, never "install qmd"
        return Match(fault, [f"clawprobe's read-only open: {r.vectors.detail or fault}"]) if fault else None
    if q.resolves is False or q.store_ok is False or fault:
        tag = q.failure if q.resolves is False or q.store_ok is False else fault
        tag = tag or ("not_on_path" if q.resolves is False else "store_crash")
        ev = []
        if q.resolves is False or q.store_ok is False:
            ev.append(f"qmd command {q.command or 'qmd'!r}: " + (q.failure_detail or tag))
        if q.resolves and q.version and q.store_ok is False:
            ev.append(f"`qmd --version` works ({q.version}) but a store command failed (exit {q.store_exit_code})")
        if r.vectors.not_ready_reason == fault and fault and r.vectors.detail:
            ev.append(f"clawprobe's read-only open: {r.vectors.detail}")
        return Match(tag, ev)
    return None


def fallback_active(r: Receipt, now: datetime) -> Match | None:
    """QMD configured, builtin effective — now, or seen within the lease window."""
    if not _qmd_configured(r):
        return None
    b = r.backend
    fallback_age = age_seconds(b.fallback_at, now) if b.fallback_at is not None else None
    recent = fallback_age is not None and fallback_age <= r.lease.seconds
    if b.effective == "builtin" or recent:
        ev = ["configured backend qmd, effective backend builtin"]
        if recent and b.effective != "builtin":
            ev = [f"fallback to builtin seen {fallback_age:.0f} s ago (within the lease)"]
        if b.fallback_detail and all(e.detail != b.fallback_detail for e in b.evidence):
            ev.append(b.fallback_detail)  # else cited below, with its source (the log line's own evidence)
        return Match(b.fallback_reason or "fallback", ev + _cite(b.evidence))
    return None


#: the workspace states that hold no notes, in words
WORKSPACE_WORDS = {"missing": "does not exist", "not_dir": "is not a directory", "empty": "is an empty directory"}
_UNSET_REF = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


def unset_reference(path: str | None) -> str:
    """Why a workspace path holds a literal ``${VAR}`` (pure): ``""`` when it holds none. OpenClaw substitutes a
    variable it cannot resolve with nothing and keeps the text ("missing env var … at agents.defaults.workspace"),
    so the path names a directory nobody made — the variable is the fault, not the directory (breaker round 15,
    B6: the action listed ``<home>/${BRKB_ROOT}/ws`` and said to make the path absolute)."""
    names = list(dict.fromkeys(_UNSET_REF.findall(path or "")))
    if not names:
        return ""
    vars_ = ", ".join(f"${{{n}}}" for n in names)
    return (f"; the path holds {vars_} literally: the variable is not set where OpenClaw read the config — set it "
            "in the gateway's environment or in <state>/.env (OpenClaw loads it), or write the path itself")


def workspace_gone(r: Receipt) -> str | None:
    """Why the agent's notes are gone from under its index (pure): the workspace path is missing, not a
    directory or empty (an unmounted mount point, a wiped restore) while the index still holds notes that were
    there (measured: indexed files gone from disk) or a canary was planted in it — ``None`` otherwise. Any
    sync then drops every note from the index (2026.9.6: one ``memory search`` emptied it)."""
    state = r.coverage.workspace
    if state not in WORKSPACE_WORDS:
        return None
    ghosts = r.freshness.ghost_count or 0
    rel = r.canary.expected_path or ""
    in_workspace = r.canary.planted_at is not None and bool(rel) and not rel.startswith(("../", "/"))
    if ghosts == 0 and not in_workspace:
        return None
    held = f"the index still holds {ghosts} note(s) that were there" if ghosts else \
        f"the canary was planted there ({r.canary.expected_path})"
    return f"the workspace {r.config.workspace} {WORKSPACE_WORDS[state]}: {held}{unset_reference(r.config.workspace)}"


def memory_unavailable(r: Receipt, now: datetime) -> Match | None:
    """Memory search is switched off (the memory plugin, either backend), the agent's tool policy takes the
    ``memory_search`` tool from it (``tool_denied``: ``config.tool_off``), OpenClaw cannot write its state dir
    (read-only or full: ``openclaw.state_fault``), the gateway's service cannot start this OpenClaw (its Node:
    ``gateway.runtime_fault``), the agent's workspace is gone from under its index (either
    backend: :func:`workspace_gone`), a configured extra root holds none of the notes the index lists there
    (``root_emptied``: ``coverage.emptied_roots``, either backend), or the builtin engine fails closed: an explicitly named
    provider fails, or the index/runtime is broken."""
    if r.config.memory_off:
        off = r.config.memory_off
        tag = "plugins_disabled" if off.startswith("plugins.enabled") else \
            "search_disabled" if off.startswith(("memory.search.", "agents.")) else "plugin_off"
        return Match(tag, [f"memory search is switched off: {r.config.memory_off}"])
    if r.config.tool_off:
        return Match("tool_denied", [f"the agent's tool policy takes memory_search from it: {r.config.tool_off}",
                                     "the agent cannot search its memory; `openclaw memory search` ignores the tool "
                                     "policy, so its hits prove nothing for the agent"])
    if r.openclaw.state_fault:
        return Match("state_unwritable", [r.openclaw.state_fault, "OpenClaw opens its state databases (config, "
                                          "sessions, the index) read-write: every memory command fails or stops"])
    if r.gateway.runtime_fault:
        return Match("gateway_runtime", [r.gateway.runtime_fault, f"service file: {r.gateway.service_file}; "
                                         "commands from this shell work, so the CLI proves nothing about the service"])
    if (gone := workspace_gone(r)) is not None:
        return Match("workspace_missing", [gone, "a sync against it drops them from the index: the agent recalls "
                                                 "nothing it wrote there",
                                           *(f.message for f in r.findings if f.tag == "workspace_near_name")])
    if r.coverage.emptied_roots:
        root, n = next(iter(r.coverage.emptied_roots.items()))
        more = f" (and {len(r.coverage.emptied_roots) - 1} more root(s))" if len(r.coverage.emptied_roots) > 1 else ""
        return Match("root_emptied", [f"the configured notes path {root} holds none of the {n} note(s) the index lists "
                                      f"there{more} (an unmounted volume, a wiped restore, the path gone)",
                                      "a sync against it drops them from the index: the agent recalls nothing it "
                                      "wrote there"])
    if _qmd_configured(r):
        if r.config.qmd_no_collections and r.openclaw.has_qmd_backend is not False:
            return Match("no_collections", [f"{r.config.qmd_no_collections}: QMD gets no collection for this agent, "
                                            "so no note (the canary neither) is ever indexed — an index run changes "
                                            "nothing"])
        return None
    resolved = r.builtin.sources  # what OpenClaw's own status resolved (an empty list is its default: both)
    if r.config.sources is not None and "memory" not in r.config.sources \
            and (resolved is None or "memory" not in resolved):
        return Match("source_excluded", [f"{r.config.sources_key} = {r.config.sources}: the builtin engine indexes no "
                                         "memory file (MEMORY.md, memory/, extra paths) — nothing written there is "
                                         "ever found, the canary neither"])
    b = r.builtin
    if b.unavailable_reason:
        return Match(b.unavailable_reason, [b.unavailable_detail or b.unavailable_reason])
    if (mismatch := gateway_provider_mismatch(r)) is not None:
        return Match("gateway_provider", mismatch)
    # a keyword-only index built for other settings (provider none, then a provider pinned: "index was built for
    # model fts-only") is the index identity, which one index run repairs — not the provider (breaker round 14, F1)
    rebuilt_for_other = b.gates.index_identity not in (None, "valid", "missing")
    if b.fts_only and r.config.provider_explicit and not b.vector_extension_error and not rebuilt_for_other:
        return Match(
            "explicit_provider",
            [f"provider {r.config.provider!r} is pinned but the index is keyword-only"]
            + ([b.degraded_reason] if b.degraded_reason else []),
        )
    return None


def gateway_keys(r: Receipt) -> list[str]:
    """The key variables of :data:`AUTO_PROVIDER` the gateway's own environment sets (names; pure)."""
    return [n for n in r.gateway.provider_keys or [] if n in PROVIDER_KEY_NAMES[AUTO_PROVIDER]]


def gateway_provider_mismatch(r: Receipt) -> list[str] | None:
    """Builtin 2026.8+: the provider is unset/``auto``, the gateway's own environment holds the key of the provider
    that resolves to (:data:`AUTO_PROVIDER`, by name: ``receipt.gateway.provider_keys``), and the index is
    keyword-only (built where no key was: model ``fts-only``) — the gateway then expects the provider's model and
    refuses the index: its ``memory_search`` answers ``disabled``/``unavailable`` ("index was built for model fts-only,
    expected text-embedding-3-small"), so the agent gets nothing, not keyword hits (breaker round 21, finding 3).
    clawprobe's ``openclaw`` runs do not carry the gateway's keys, so they alone would say keyword-only. The
    evidence lines, or ``None``."""
    b, provider = r.builtin, (r.config.provider or "").strip().lower()
    if r.openclaw.has_qmd_backend is not False or r.config.provider_explicit or provider not in ("", "auto"):
        return None
    keys = gateway_keys(r)
    if not keys or not b.fts_only or b.vector_extension_error:
        return None
    g = r.gateway
    whose = f"running process (pid {g.pid})" if g.env_source == "process" else \
        f"{g.env_source} service {g.service_file}" if g.service_file else f"{g.env_source} environment"
    return [f"the gateway's {whose} sets {', '.join(keys)}: it resolves provider "
            f"{r.config.provider or 'unset'!r} to {AUTO_PROVIDER} and expects an index built for {AUTO_PROVIDER}'s "
            "embedding model",
            f"the index was built keyword-only (model fts-only, provider {b.provider_resolved or 'none'}): the gateway's "
            "memory_search refuses it (disabled, unavailable: \"index was built for model fts-only\") — the agent "
            "gets no results at all, not keyword hits",
            "clawprobe's own openclaw runs do not carry the gateway's provider keys (their names only are read), "
            "so they resolve no provider and see a working keyword-only index"]


def keyword_only(r: Receipt, now: datetime) -> Match | None:
    """Builtin: an unset/auto/local provider silently degraded to keyword (FTS) only; ``none`` is intentional."""
    if _qmd_configured(r) or not r.builtin.fts_only or r.builtin.vector_extension_error:
        return None
    if (r.config.provider or "").lower() == "none" or r.config.provider_explicit:
        return None
    tag = "local_model" if (r.config.provider or "").lower() == "local" else "implicit_provider"
    return Match(tag, [f"provider {r.config.provider or 'unset'!r} resolved to none: semantic recall is off"])


def stale_index(r: Receipt, now: datetime) -> Match | None:
    """The age since the index was last proven current exceeds the freshness lease. The evidence says what
    each listed file is — unreadable, changed since indexed, new, deleted but still indexed (the grouped
    ``freshness.detail`` of ``clawprobe.core.probes.workspace``; a list the detail does not name is shown as "not
    current in the index"). ``export_dir_shared``: transcripts not exported while another agent exports into the
    same dir (finding ``sessions_export_shared``), which deletes them — an index run of this agent cannot last."""
    lpc = r.freshness.last_proven_current
    blocked = cannot_catch_up(r)
    if lpc is None or not (is_stale(age := age_seconds(lpc, now), r.lease) or blocked):
        return _source_behind(r)
    ev = [f"{proven_words(r.freshness.stale_reason)} {age:.0f} s ago ({r.freshness.method or 'evidence'}) "
          + (f"> lease {r.lease.seconds:.0f} s" if is_stale(age, r.lease) else f"— {blocked}")]
    if _qmd_configured(r) and r.lease.interval_source != Lease().interval_source:  # configured or bounded: say whose
        ev.append(f"lease interval {r.lease.interval_s:.0f} s: {r.lease.interval_source}")
    f = r.freshness
    named = f.detail or ""
    for what, files, count in (("not current in the index (new or changed)", f.unindexed_files, f.unindexed_count),
                               ("deleted but still indexed", f.ghost_files, f.ghost_count)):
        if files and not all(p in named for p in files[:5]):
            more = f" and {count - 5} more" if count is not None and count > 5 else ""
            ev.append(f"{what}: " + ", ".join(files[:5]) + more)
    if f.detail:
        ev.append(f.detail)
    if f.stale_reason == "unreadable":
        who = "qmd skips files it cannot read (\"Skipped unreadable file … (EACCES)\")" if _qmd_configured(r) \
            else "OpenClaw cannot index a file it cannot read"
        ev.append(f"{who}: re-indexing changes nothing until their permissions are fixed")
    shared = next((x for x in r.findings if x.tag == "sessions_export_shared"), None)
    if shared is not None and f.stale_reason != "unreadable" and any(p.startswith("sessions/") for p in f.unindexed_files):
        return Match("export_dir_shared", [*ev, shared.message])  # an index run of this agent wipes the others'
    return Match(f.stale_reason or "age", ev)


def _source_behind(r: Receipt) -> Match | None:
    """``source_behind``: a source only OpenClaw's status measures (session transcripts) has files on disk the
    index does not hold (``scan.sources[].totalFiles`` > ``sourceCounts[].files``) — the measured gap, whatever
    ``dirty`` says (RW51); ``transcripts_not_imported`` first: transcripts on disk a 2026.8+ build never reads
    (``Coverage.legacy_transcripts``)."""
    if r.coverage.legacy_transcripts:
        return Match("transcripts_not_imported", [
            f"{r.coverage.legacy_transcripts} session transcript(s) (*.jsonl) in the agent's sessions dir, and "
            f"sessions are a memory source: OpenClaw {r.openclaw.version or '2026.8+'} reads sessions from its "
            "database only, so none of them is searchable until `openclaw doctor --fix` imports them"])
    behind = [c for c in r.coverage.sources if c.measured_by == "status" and c.missing > 0]
    if not behind:
        return None
    ev = [f"{c.source}: {c.indexed} of {c.expected} files on disk indexed ({c.missing} behind; memory status "
          "sourceCounts vs scan)" for c in behind]
    if any(x.claim == "dirty: false" for x in r.status_claims):
        ev.append("status says dirty: false: the measured gap, not the flag, decides")
    return Match("source_behind", ev)


#: skip reasons that lose nothing: a 0-byte note holds no text to find (breaker round 10, s10: a ``touch``ed daily
#: note failed the install as "retrieval failed" while every note with content was found)
HARMLESS_SKIPS = frozenset({"empty_file"})


def unsearchable_notes(r: Receipt) -> Match | None:
    """``unsearchable_notes``: Markdown notes under a configured root that a rule of the engine skips (hidden
    path, lowercase ``memory.md``, symlink, excluded pattern, a file name that is not UTF-8) — explained, yet never
    findable (pure). Empty notes (:data:`HARMLESS_SKIPS`) stay in the coverage only."""
    hit = [c for c in r.coverage.sources if set(c.skipped) - HARMLESS_SKIPS]
    if not hit:
        return None
    ev = []
    for c in hit:
        why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(c.skipped.items()))
        ev.append(f"{c.source}: {sum(c.skipped.values())} note(s) skipped by the engine's rules ({why})"
                  + (": " + ", ".join(c.skipped_notes[:5]) if c.skipped_notes else ""))
    ev.append("they sit where memory is searched but can never be found: no index run changes that")
    return Match("unsearchable_notes", ev)


def vector_not_ready(r: Receipt, now: datetime) -> Match | None:
    """The configured mode needs vectors and pending > 0, no vector store, or a needed model is missing; on
    builtin, the vector extension (sqlite-vec) does not load (``vector_extension``)."""
    mode = r.config.search_mode
    if not _qmd_configured(r) and r.builtin.vector_extension_error:
        return Match("vector_extension", [f"builtin vector store not loaded: {r.builtin.vector_extension_error}",
                                          "semantic recall is off; only keyword hits remain — the provider is not "
                                          "the fault"])
    if not _qmd_configured(r) or mode == "search":
        return None
    vc, mc = vectors_cell(r, mode), models_cell(r, mode)
    if vc.state != "fail" and mc.state != "fail":
        return None
    tag = r.vectors.not_ready_reason or ("model_download" if mc.state == "fail" and vc.state != "fail" else "pending")
    if r.vectors.download_status == "stalled" and r.vectors.embed_running_pid:  # the cause under every other tag:
        tag = "download_stalled"  # a first-run download that never moves holds qmd's embed lock (breaker round 15, A4)
    ev = [f"{mode} mode: " + "; ".join(c.reason for c in (vc, mc) if c.state == "fail")]
    if r.vectors.embed_running_pid:
        ev.append(f"embed running (pid {r.vectors.embed_running_pid})")
    if r.vectors.detail:
        ev.append(r.vectors.detail)
    return Match(tag, ev)


def scope_denied(r: Receipt, now: datetime) -> Match | None:
    """The retrieval probe was refused by QMD's scope policy: retrieval is unproven, not failed."""
    if r.canary.outcome == "denied":
        return Match(r.canary.reason or "probe_context", [r.canary.detail or "qmd search denied by scope"])
    return None


def _retrieval_tag(r: Receipt) -> str:
    """The sub-reason of a failed retrieval, narrowed by evidence outside the canary: a locked index
    (``index_locked``, from the store check) for a timeout or an error; ``search_error`` for a search that failed
    with an error nothing narrower explains (it did not "miss": breaker round 15); ``vector_miss`` for a
    ``search_not_invoked`` in a vector mode — the direct cross-check is BM25 ``qmd search``, which proves
    the keyword index holds the canary, not that the configured vector path works."""
    c = r.canary
    tag = c.reason or {"wrong_source": "wrong_source", "timeout": "timeout", "error": "search_error"}.get(c.outcome or "",
                                                                                                          "miss")
    if c.outcome in ("timeout", "error") and r.qmd.failure == "index_locked":
        return "index_locked"
    if tag == "search_not_invoked" and _qmd_configured(r) and r.config.search_mode != "search":
        return "vector_miss"
    return tag


def _tokenizer_gap(r: Receipt) -> Match | None:
    """The builtin FTS tokenizer cannot match the scripts the notes are written in and keyword search is the
    only retrieval (:func:`clawprobe.core.modes.tokenizer_gate`): those notes can never be found, whatever
    the canary says — it is written in the canary's own script."""
    gate = tokenizer_gate(r)
    if gate.cell.state != "fail":
        return None
    wide = UTF16 in (r.builtin.gates.note_scripts or {})
    return Match("note_encoding" if wide else "tokenizer_script", [gate.cell.reason])


def _chat_gap(r: Receipt) -> Match | None:
    """The CLI canary is found, but the real agent's newest ``memory_search`` in group or channel chats was
    denied or came back disabled, or in any other chat was denied (``receipt.chat_retrieval``, from its session
    transcripts and the gateway log's scope denials — a scope rule may refuse a direct chat of one channel while
    the CLI's own context passes): those chats get no memory while the CLI works — ``chat_denied`` /
    ``chat_disabled``."""
    if r.canary.outcome != "found":
        return None
    for c in r.chat_retrieval:
        if c.last_outcome == "denied" or c.kind in ("group", "channel") and c.last_outcome == "disabled":
            direct = next((d for d in r.chat_retrieval if d.kind == "direct" and d is not c), None)
            works = f"direct chats: {direct.found} of {direct.searches} found" if direct else "the CLI probe finds the canary"
            return Match(f"chat_{c.last_outcome}", [
                f"the agent's memory_search in {c.kind} chats: {c.last_outcome} ({c.denied} denied, {c.disabled} "
                f"disabled of {c.searches}; newest: {c.last_error or c.last_outcome}) while {works}"])
    return None


def _sessions_gap(r: Receipt) -> Match | None:
    """Session memory switched on but never exported to QMD (the ``sessions_export`` finding,
    :func:`clawprobe.core.interpret.canary.sessions_unexported`): a found memory canary does not prove it."""
    f = next((f for f in r.findings if f.tag == "sessions_export"), None)
    return Match("sessions_export", [f.message]) if f is not None and r.canary.outcome == "found" else None


def _hollow_gap(r: Receipt) -> Match | None:
    """``notes_without_text``: builtin notes the index lists as current (their sha256 on disk) but holds no chunk of
    (``Coverage.hollow_notes``, measured in the store before the probe): nothing written in them is found, the
    canary found or not, and a plain index run skips them because their hash matches."""
    notes = r.coverage.hollow_notes
    if not notes or _qmd_configured(r) or probe_error_tag(r.probe_errors) == "wal_pending":
        return None  # a crashed writer's -wal: its rows are not the store's yet (``unverified · wal_pending``)
    more = f" and {len(notes) - 5} more" if len(notes) > 5 else ""
    return Match("notes_without_text", [
        f"{len(notes)} note(s) the builtin index lists as indexed (same sha256 as on disk) with no chunk of text in it: "
        + ", ".join(notes[:5]) + more,
        "none of their text is searchable, and `memory index` skips them: their hash is the one it recorded"])


def retrieval_failed(r: Receipt, now: datetime) -> Match | None:
    """The canary did not come back from its expected source (miss, wrong source, timeout, error), or the
    builtin tokenizer cannot match the notes' scripts (``tokenizer_script``: a measured gap, canary or not), or the
    builtin index holds no text of notes it lists as current (``notes_without_text``, canary or not)."""
    if (hollow := _hollow_gap(r)) is not None:
        return hollow
    c = r.canary
    if c.outcome not in ("miss", "wrong_source", "timeout", "error") or canary_awaiting_update(r, now):
        return (_chat_gap(r) or _sessions_gap(r) or _tokenizer_gap(r)
                or (unsearchable_notes(r) if c.outcome == "found" else None)) \
            if c.outcome != "denied" else None
    tag = _retrieval_tag(r)
    ident = r.builtin.gates.index_identity
    # "extra paths dropped" (an index holding only the default roots) is also what adding an extraPaths entry
    # leaves until the next index run — but 2026.9.6 then pauses every search ("index scope changed"), the
    # canary under memory/ too: the identity is the measured cause, not a watcher dropping files (breaker round 25)
    if tag in ("miss", "extrapaths_dropped") and not _qmd_configured(r) and ident not in (None, "valid", "missing"):
        if _newer_index(r):
            return None  # written by a newer OpenClaw: not understood (:func:`not_understood`), no repair guessed
        tag = "index_identity"  # the measured cause: settings the index was built with changed (chunking, …)
    if tag == "cjk" and r.config.configured_backend != "qmd" and r.builtin.gates.fts_tokenizer not in (None, "trigram"):
        tag = "tokenizer_script"  # the measured cause: the tokenizer keeps the run whole
    got = c.returned_path if c.returned_path and (c.returned_path != c.expected_path or c.outcome != "miss") else None
    ev = [f"canary {c.outcome}: expected {c.expected_path or '?'}" + (f", got {got}" if got else "")]
    if c.outcome == "timeout" and c.latency_s is not None and c.deadline_s is not None:
        ev.append(f"probe latency {c.latency_s:.1f} s vs deadline {c.deadline_s:.1f} s")
    if tag == "index_locked":
        ev.append(r.qmd.failure_detail or "the agent's QMD index is locked by another process (SQLITE_BUSY)")
    elif c.direct_qmd_found is not None:
        mode = r.config.search_mode
        bm25 = _qmd_configured(r) and mode != "search"
        ev.append(("direct BM25 `qmd search` (agent XDG dirs) " if bm25 else "direct qmd (agent XDG dirs) ")
                  + ("finds" if c.direct_qmd_found else "does not find") + " the canary"
                  + (f" — that proves the keyword index holds it, not that the {mode} path works"
                     if bm25 and c.direct_qmd_found else ""))
    if tag == "index_identity":
        ev.append(f"index identity {ident}: {r.builtin.gates.index_identity_reason or 'changed'} — the builtin engine "
                  "serves nothing from an index built with other settings until it is indexed again")
    if c.detail and tag != "vector_miss":  # the search_not_invoked text claims more than BM25 proves
        ev.append(c.detail)
    return Match(tag, ev)


#: ``probe_errors`` prefixes → the unverified sub-reason they give (a probe that could not run comes first:
#: nothing else about retrieval can be proven until it runs). Source: the messages of ``clawprobe.core.probe``.
PROBE_ERROR_TAGS: tuple[tuple[str, str], ...] = (
    ("no `openclaw` executable found", "openclaw_not_found"),
    ("openclaw --version", "openclaw_failed"),
    ("openclaw memory status", "openclaw_failed"),
    ("openclaw memory search timed out", "openclaw_failed"),  # clawprobe.core.probe.SEARCH_HUNG
    ("openclaw memory search not run (no index)", "never_indexed"),  # clawprobe.core.probe.SEARCH_NOT_RUN_NO_INDEX
    ("openclaw CLI not run (no index)", "never_indexed"),  # clawprobe.core.probe.CLI_NOT_RUN_NO_INDEX
    ("openclaw CLI not run (a crashed writer's -wal)", "wal_pending"),  # clawprobe.core.probe.CLI_NOT_RUN_WAL
    ("openclaw memory search not run (workspace gone)", "workspace_missing"),  # probe.SEARCH_NOT_RUN_WORKSPACE
    ("openclaw memory search not run (collections", "collection_pending"),  # probe.SEARCH_NOT_RUN_COLLECTIONS
    ("openclaw memory search not run (configured path missing)", "root_missing"),  # probe.SEARCH_NOT_RUN_MISSING_ROOT
    ("openclaw memory search not run (configured path emptied)", "root_emptied"),  # probe.SEARCH_NOT_RUN_EMPTIED_ROOT
    ("openclaw memory search not run (index of qmd 1.x)", "index_old_schema"),  # probe.SEARCH_NOT_RUN_OLD_SCHEMA
)


def probe_error_tag(errors: list[str]) -> str | None:
    """``openclaw_not_found``, ``openclaw_failed`` or ``probe_failed`` for the first probe error (pure);
    ``None`` without errors."""
    if not errors:
        return None
    for e in errors:
        for prefix, tag in PROBE_ERROR_TAGS:
            if e.startswith(prefix):
                return tag
    return "probe_failed"


def unverified(r: Receipt, now: datetime) -> Match | None:
    """Everything measured passes, but something the verdict needs has no evidence yet — or a probe could
    not run at all (the sub-reason then names that first: ``openclaw_not_found``, ``openclaw_failed``,
    ``probe_failed``; never "everything passes") — or the ledger holds a memory signal no rule explains
    (``unrecognized_signal``, :func:`unrecognized_signal`; quoted with the other gaps otherwise), or the agent's
    tool policy could not be evaluated (``tool_policy_unknown``: ``config.tool_unknown``; never healthy) — or the
    evidence comes from a program clawprobe does not understand (``not_understood``: :mod:`.understood`, e.g. an
    OpenClaw release outside the measured ones; named with the other gaps otherwise)."""
    gaps: list[str] = []
    odd = not_understood(r)
    if r.probe_errors:
        gaps += [f"probe could not run: {e}" for e in r.probe_errors]
    if r.canary.outcome is None and r.canary.planted_at is None:
        orphan = next((f for f in r.findings if f.tag in ("canary_unrecorded", "workspace_other_home")), None)
        gaps.append(orphan.message if orphan else "no canary planted: nothing proves the managed path")
    elif r.canary.outcome is None and not r.not_understood:  # else the search ran: its answer is not understood
        state = "indexed" if r.canary.indexed_at else "not indexed yet"
        gaps.append(f"canary planted ({state}); retrieval through OpenClaw not run yet")
    elif r.canary.planted_at is not None and canary_awaiting_update(r, now):  # awaiting implies planted
        planted_age = age_seconds(r.canary.planted_at, now)
        left = r.lease.seconds - planted_age
        gaps.append(f"canary planted {planted_age:.0f} s ago and not indexed yet: "
                    f"waiting for the update cycle (a miss counts as failed in {left:.0f} s)")
    if _qmd_configured(r) and r.backend.effective is None:
        gaps.append("effective backend not measured")
    if _qmd_configured(r) and r.backend.gateway_unproven:
        gaps.append(r.backend.gateway_unproven)
    if r.freshness.last_proven_current is None:
        gaps.append("nothing proved the index current")
    if _qmd_configured(r) and r.qmd.index_path_env and r.qmd.failure is None:
        gaps.append(r.qmd.failure_detail or f"the gateway's qmd keeps its index at INDEX_PATH={r.qmd.index_path_env}")
    if r.config.tool_unknown:
        gaps.append(f"the agent's tool policy could not be evaluated ({r.config.tool_unknown}): nothing proves the "
                    "agent gets the memory_search tool")
    mode = r.config.search_mode
    if _qmd_configured(r) and mode != "search":
        for cell in (vectors_cell(r, mode), models_cell(r, mode)):
            if cell.state == "unknown":
                gaps.append(cell.reason)
    if not gaps and not odd:
        return unrecognized_signal(r, now)
    tag = probe_error_tag(r.probe_errors)
    gaps = (gaps + odd if tag else odd + gaps) + _unrecognized_lines(r)
    if tag is None and odd:
        tag = "not_understood"
    elif tag is None and r.canary.outcome is None:
        tag = "no_canary" if r.canary.planted_at is None else "not_retrieved"
    elif tag is None:
        tag = ("index_path_env" if _qmd_configured(r) and r.qmd.index_path_env and r.qmd.failure is None
               else "canary_not_indexed" if canary_awaiting_update(r, now)
               else "log_blind" if _qmd_configured(r) and r.backend.gateway_unproven
               else "tool_policy_unknown" if r.config.tool_unknown else "missing_evidence")
    return Match(tag, gaps)


def not_understood(r: Receipt) -> list[str]:
    """The evidence clawprobe does not understand, one sentence each (:mod:`.understood` decides what is
    understood): never healthy, named wherever a verdict lists what it could not prove."""
    gaps = [openclaw_version_gap(r.openclaw.version), qmd_version_gap(r.qmd.version) if _qmd_configured(r) else None,
            _newer_index(r), _unidentified_qmd(r)]
    return [g for g in gaps if g] + list(dict.fromkeys(r.not_understood))


def _unidentified_qmd(r: Receipt) -> str | None:
    q = r.qmd
    return qmd_command_gap(q.command, q.failure, q.failure_detail, r.canary.result_shape) if _qmd_configured(r) \
        else None


def _newer_index(r: Receipt) -> str | None:
    g = r.builtin.gates
    return None if _qmd_configured(r) else index_order_gap(r.openclaw.version, g.index_identity,
                                                            g.index_identity_order, g.index_identity_reason)


def _unrecognized_lines(r: Receipt) -> list[str]:
    odd = ledger_shown(r, ("unrecognized",))  # the same line from several sources: once, with its count
    lines = [f"unrecognized {e.level or 'signal'} ({e.where}): {e.line}{e.count}" for e in odd[:5]]
    return lines + ([f"… and {len(odd) - 5} more unrecognized signal(s)"] if len(odd) > 5 else [])


def unrecognized_signal(r: Receipt, now: datetime) -> Match | None:
    """Every gate passed, but the real programs said something about memory that no rule explains (the
    evidence ledger's ``unrecognized`` entries): never healthy — quote it and let the operator read it."""
    lines = _unrecognized_lines(r)
    return Match("unrecognized_signal", lines) if lines else None


HEADLINE_WARNINGS = ("index_bloat", "reindex_orphans", "status_misreport")
"""Warnings that name a healthy verdict's sub-reason before any other finding (RW20/21/31/41/42/43)."""


def healthy(r: Receipt, now: datetime) -> Match | None:
    """Every gate passed; warnings (index bloat, status misreports) ride along as the sub-reason —
    a :data:`HEADLINE_WARNINGS` tag first, else the first finding."""
    tags = [f.tag for f in r.findings]
    head = next((t for t in HEADLINE_WARNINGS if t in tags), tags[0] if tags else None)
    return Match(head, ["every gate passed"])


RULES: tuple[tuple[Verdict, RuleFn], ...] = (
    (Verdict.CONFIG_INVALID, config_invalid),
    (Verdict.BACKEND_RETIRED, backend_retired),
    (Verdict.CONFIG_DRIFT, config_drift),
    (Verdict.QMD_UNAVAILABLE, qmd_unavailable),
    (Verdict.FALLBACK_ACTIVE, fallback_active),
    (Verdict.MEMORY_UNAVAILABLE, memory_unavailable),
    (Verdict.KEYWORD_ONLY, keyword_only),
    (Verdict.STALE_INDEX, stale_index),
    (Verdict.VECTOR_NOT_READY, vector_not_ready),
    (Verdict.SCOPE_DENIED, scope_denied),
    (Verdict.RETRIEVAL_FAILED, retrieval_failed),
    (Verdict.UNVERIFIED, unverified),
    (Verdict.HEALTHY, healthy),
)
