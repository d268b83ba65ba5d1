"""The merges of the gathered evidence into a receipt: stores (index, workspace freshness, model cache), the
JSON-lines log (fallback, freshness, embed failures) and the ``openclaw`` CLI probes (effective backend,
builtin status facts, canary, status claims) (pure)."""

from __future__ import annotations

import re

from clawprobe.core.evidence import Evidence, SlowEvidence
from clawprobe.core.interpret.canary import canary_facts
from clawprobe.core.interpret.signals import Sig
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes.config import MemorySettings
from clawprobe.core.probes.sqlite_ro import SqliteOpen
from clawprobe.core.receipt import ConfigError, Finding, Freshness, LockHolder, Receipt
from clawprobe.core.receipt import Evidence as EvidenceLine
from clawprobe.core.redaction import redact_text

SYNC_SLACK_S = 5.0


def _open_words(o: SqliteOpen | None) -> str:
    """Why a store did not open, in words: the opener's own detail (``file is not a database``), never the
    bare state id (``not_sqlite``)."""
    if o is None:
        return "missing"
    return o.detail or o.state.replace("_", " ")


def merge_stores(r: Receipt, ev: Evidence, s: MemorySettings, errors: list[str]) -> None:
    """Index facts, workspace freshness and model cache from ``ev.stores`` / ``ev.model_cache*``.

    QMD: vectors and index findings from ``index.sqlite``; freshness from the disk-vs-index comparison (a
    missing index: every file qmd would index is unreflected, ``never_indexed``); the model cache for the
    configured mode (not ``search``) and every role's readiness (``missing_models``). Builtin: the engine's
    facts and findings, freshness from its sources table (no store at all: ``never_indexed`` as for QMD)."""
    from clawprobe.core import downloads as dl
    from clawprobe.core.interpret.coverage import measured_stores
    from clawprobe.core.probes import builtin_index as bi
    from clawprobe.core.probes import models as md
    from clawprobe.core.probes import qmd_index as qi
    from clawprobe.core.probes import workspace as ws

    st = ev.stores
    if st is not None and st.error:
        errors.append(st.error)
    early = measured_stores(ev)  # freshness from the measurement before clawprobe's own CLI probes (RW48)
    cmp = early.comparison if early is not None else None
    if r.config.configured_backend == "qmd":
        f = st.qmd_index if st is not None else None
        if f is not None:
            r.vectors = qi.to_vectors(f)
            r.findings += qi.qmd_findings(f)
            if cmp is not None:
                r.freshness = ws.to_freshness(cmp)
                b = st.qmd_write_holder if st is not None else None
                r.freshness.write_holder = LockHolder(pid=b.pid, what=b.what) if b is not None else None
                if f.open.state in ("missing", "empty"):
                    r.freshness.method = (f"no QMD index at {f.paths.db}" + (" (a 0-byte file)" if f.open.state == "empty"
                                                                            else "") + ": nothing on disk was ever indexed")
                    if r.freshness.unindexed_count:
                        r.freshness.stale_reason = "never_indexed"
                    _nothing_to_prove(r)
        if ev.model_cache is not None and r.config.search_mode != "search":
            report, _ = dl.assess(ev.model_cache, r.checked_at)
            r.vectors = dl.apply_to_vectors(r.vectors, report)
        if ev.model_cache_all is not None:
            r.vectors.missing_models = md.missing_roles(ev.model_cache_all)
    elif st is not None and st.builtin_index is not None:
        r.builtin = bi.to_builtin_facts(st.builtin_index, s.provider)
        r.findings += bi.builtin_findings(st.builtin_index)
        if cmp is not None:
            r.freshness = ws.to_freshness(cmp)
            store = early.builtin_index if early is not None else None
            if store is not None and store.memory_never_indexed:
                where = store.path and f"{store.path}: {_open_words(store.open)}"
                r.freshness.method = (f"no builtin index ({where or ', '.join(store.candidates) or 'the state dir'}): "
                                      "nothing on disk is indexed") if store.never_written else (
                    f"the builtin store {store.path} holds no memory index (no identity, no file, no chunk): "
                    "nothing on disk is indexed")
                if r.freshness.unindexed_count:
                    r.freshness.stale_reason = "never_indexed"
                _nothing_to_prove(r)
    if st is not None:
        r.findings += st.scan_findings


def _nothing_to_prove(r: Receipt) -> None:
    """No index and no memory file on disk either: "disk matches index" is vacuous — nothing is proven current
    (``last_proven_current`` unset, so freshness is unknown, never ``fresh``, and no lease runs)."""
    f = r.freshness
    if not f.unindexed_count and not f.ghost_count and f.last_proven_current is not None:
        f.last_proven_current = None
        what = (f.method or "no index").rsplit(": nothing", 1)[0]
        f.method = f"{what}, and no memory file on disk: nothing to prove current"


def sync_is_ours(ev: Evidence, sync: oclog.SyncEvent) -> bool:
    """Whether a logged ``qmd sync completed`` is this agent's: a bundle's own log always is; a live (maybe
    shared) log's only when the agent's QMD index was written during or after it (newest mtime of
    ``index.sqlite``/``-wal`` ≥ its time − its duration − :data:`SYNC_SLACK_S`): qmd writes the index on every
    update, so a line without such a write — or with no index at all — was another install's."""
    if ev.log_attribution == "own":
        return True
    if sync.at is None or ev.qmd_index_written_at is None:
        return False
    return ev.qmd_index_written_at.timestamp() >= sync.at.timestamp() - (sync.duration_s or 0.0) - SYNC_SLACK_S


def _log_blind(r: Receipt, ev: Evidence, why: str, fallback_seen: bool) -> None:
    """The log cannot show a fallback (``why``): with a gateway running and no fallback line, its effective
    backend is unproven (``r.backend.gateway_unproven``) unless one of its own searches since it started was
    answered by qmd (session transcripts: QMD hits carry no ``id``/``textScore``); with none running, said."""
    proc = ev.gateway.process if ev.gateway is not None else None
    if proc is None:
        r.backend.evidence.append(EvidenceLine(source="log", detail=f"{why} (no gateway process runs)"))
        return
    if fallback_seen:
        return
    since = proc.started_at
    own = [t for t in ev.extra.tool_results if t.result_shape == "qmd" and t.at is not None
           and since is not None and t.at >= since]
    if own:
        r.backend.evidence.append(EvidenceLine(source="memory_search tool results (session transcripts)", at=own[-1].at,
                                               detail=f"the gateway's own search since it started was answered by "
                                                      f"qmd ({why})"))
        return
    r.backend.gateway_unproven = (f"the running gateway (pid {proc.pid}) would log a fallback to builtin at WARN, "
                                  f"and its log cannot show it: {why}")
    r.backend.evidence.append(EvidenceLine(source="log", detail=r.backend.gateway_unproven))


def unfinished_update_timeout(log: oclog.LogFacts) -> oclog.Event | None:
    """The log's newest qmd update cut off at ``memory.qmd.update.updateTimeoutMs`` when no sync completed at or
    after it (pure; source: the gateway's JSON-lines log), else ``None``: a change on disk cannot reach the index."""
    timeout = log.update_timeouts[-1] if log.update_timeouts else None
    if timeout is None or timeout.at is None or any(s.at is not None and s.at >= timeout.at for s in log.syncs):
        return None
    return timeout


#: A memory-manager failure decided by the shape of a path OpenClaw must create or open (a parent that is a file,
#: an existing non-directory, a symlink loop, a too-long name, a read-only mount): whoever runs OpenClaw with this
#: config meets it — the gateway as much as the CLI run that logged it (measured with 2026.7.35: an uncreatable
#: ``memory.qmd.sessions.exportDir`` logs "qmd memory unavailable; falling back to builtin: ENOTDIR: not a
#: directory, mkdir '…'" for `openclaw memory index`, which still exits 0, and the gateway's memory_search then
#: answers from builtin). Permission errors are left out: the gateway may run as another user.
_PATH_SHAPE_ERROR = re.compile(r"\b(ENOTDIR|EEXIST|ELOOP|ENAMETOOLONG|EROFS)\b[^\n]*?\b(mkdir|open|scandir|stat|lstat)\b")


def config_bound_fallback(fb: oclog.Event, config_mtime: float | None) -> str | None:
    """Why a fallback line logged while no gateway runs still binds the gateway (pure): a memory-manager failure
    on a path's shape (:data:`_PATH_SHAPE_ERROR`) logged after the config file was last written (``config_mtime``,
    epoch seconds: the newest of the config's files), so every process
    with this config fails the same way — the words to say so; ``None`` for any other line (a runtime failure of one
    CLI run says nothing about the gateway)."""
    if fb.tag != "manager_failed" or fb.at is None or not (m := _PATH_SHAPE_ERROR.search(fb.detail or "")):
        return None
    if config_mtime is None or fb.at.timestamp() < config_mtime:
        return None
    return (f"{m[1]} on {m[2]} is decided by the path, not by who runs it: any OpenClaw process with this config, the "
            "gateway included, falls back to builtin the same way (and `openclaw memory index` exits 0 without a QMD "
            "index)")


def merge_log(r: Receipt, ev: Evidence) -> None:
    """Fallback, freshness and embed failures from the JSON-lines log (``ev.log``). The newest ``qmd sync
    completed`` line proves freshness (when nothing else did) only if :func:`sync_is_ours`."""
    log = ev.log
    if log.unread_memory:
        r.not_understood.append(
            f"the gateway log ({', '.join(log.files) or 'log'}) has line(s) about memory in a format clawprobe does not "
            f"read (no OpenClaw JSON log record), e.g. {log.unread_memory[-1]!r}")
    fb = log.last_fallback
    ok_after = [s.at for s in log.syncs if s.at and fb and fb.at and s.at > fb.at]
    bound = config_bound_fallback(fb, ev.config.mtime) if fb is not None else None
    if fb is not None and r.config.configured_backend == "qmd" and not ok_after and gw.none_running(ev.gateway) \
            and bound is None:
        # no gateway process runs: the line was written by a CLI process (clawprobe's own probes, the operator's
        # `openclaw memory …`), or by a gateway that has since stopped — nothing serves builtin now (A5)
        r.backend.evidence.append(EvidenceLine(source=fb.source or "log", at=fb.at, detail=(
            f"{fb.detail} — logged while no gateway process runs (a CLI run's, or a stopped gateway's): "
            "not a gateway in fallback")))
    elif fb is not None and r.config.configured_backend == "qmd" and not ok_after:
        r.backend.fallback_at = fb.at
        r.backend.fallback_reason = fb.tag
        r.backend.fallback_detail = fb.detail + (f" — {bound}" if bound else "")
        r.backend.evidence.append(EvidenceLine(source=fb.source or "log", detail=r.backend.fallback_detail, at=fb.at))
    if log.unattributed:
        u = log.unattributed[-1]
        r.backend.evidence.append(EvidenceLine(source=u.source or "log", at=u.at, detail=(
            f"{len(log.unattributed)} memory error line(s) in the shared log name neither this agent nor this state "
            f"dir, and no gateway of this install ran when they were written — not charged (another install's, or "
            f"a CLI run's); newest: {u.detail[:300]}")))
    if log.blind is not None and r.config.configured_backend == "qmd":
        _log_blind(r, ev, log.blind, fb is not None)
    last = log.last_sync
    if last is not None and last.at is not None and r.freshness.last_proven_current is None and sync_is_ours(ev, last):
        r.freshness = Freshness(last_proven_current=last.at, method=f"log: qmd sync completed (reason={last.reason})",
                                detail=f"{last.source}")
    timeout = unfinished_update_timeout(log)
    if r.config.configured_backend == "qmd" and timeout is not None:
        r.freshness.update_timeout = timeout.detail
    if log.embed_failures:
        e = log.embed_failures[-1]
        r.findings.append(Finding(tag="embed_failed", source=e.source or "log",
                                  message=f"{e.detail}" + (f"; backing off {e.tag}s" if e.tag else "")))


#: OpenClaw's config loader failing on its own state database (2026.9.6 on a read-only or full state dir:
#: "Invalid config at …: - <root>: read failed: Error: unable to open database file") — not a rejected key
_READ_FAILED = re.compile(r"read failed: (?:Error: )?[^\n]*", re.I)


def merge_slow(r: Receipt, slow_ev: SlowEvidence, s_mode: str, agent_deadline: Sig | None = None) -> None:
    """Effective backend, fallback from the CLI's stderr, a schema rejection the CLI reports, builtin status
    facts, the memory plugin being off, status claims and the canary (:func:`canary_facts`, with the agent's
    own tool deadline ``agent_deadline`` and, for QMD, the limit that cuts each hit's text,
    ``config.snippet_chars``) from the ``openclaw`` CLI probes."""
    st = slow_ev.status
    entry = st.entry(r.agent_id) if st else None
    err = st.stderr if st else None
    if st is not None and st.not_understood:
        r.not_understood.append(st.not_understood)
    b, how = oc.effective_backend(entry, err, slow_ev.search)
    if b is not None:
        r.backend.effective = b  # type: ignore[assignment]
        r.backend.evidence.append(EvidenceLine(source=how or "openclaw CLI", detail=f"effective backend {b}",
                                           at=slow_ev.taken_at))
    for facts, _what in ((slow_ev.search.stderr if slow_ev.search else None, "memory search"), (err, "memory status")):
        if facts is not None and facts.fallback and r.config.configured_backend == "qmd":
            r.backend.fallback_at = r.backend.fallback_at or slow_ev.taken_at
            r.backend.fallback_reason = r.backend.fallback_reason or facts.fallback
            r.backend.fallback_detail = r.backend.fallback_detail or facts.fallback_detail
            break
    retired = bool(r.config.retired_keys) and r.openclaw.has_qmd_backend is False
    unread = _READ_FAILED.search(st.stderr.invalid_config or "") if st is not None else None
    if unread is not None:  # "- <root>: read failed: Error: unable to open database file": its state, not a key
        r.openclaw.state_fault = r.openclaw.state_fault or f"OpenClaw cannot read its own state: {unread[0].strip()}"
    elif st is not None and st.stderr.invalid_config and r.config.error is None and not retired:
        issue = st.validation.issues[0] if st.validation is not None and st.validation.issues else None
        key = re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", issue.path) if issue is not None else None  # a.0.b → a[0].b
        r.config.error = ConfigError(kind="schema", message=redact_text(st.stderr.invalid_config[:1000]),
                                     file=r.config.path, key_path=redact_text(key) if key else None,
                                     allowed=issue.allowed if issue is not None else None)
    if entry is not None and r.config.configured_backend != "qmd":
        bf = r.builtin
        bf.provider_requested = bf.provider_requested or entry.requested_provider
        bf.provider_resolved = bf.provider_resolved or entry.provider
        bf.sources = entry.sources if entry.sources is not None else bf.sources
        if entry.search_mode == "fts-only" and bf.fts_only is None:
            bf.fts_only = True
        if entry.provider_unavailable_reason and not bf.degraded_reason:
            bf.degraded_reason = entry.provider_unavailable_reason
    if st is not None and st.error == oc.MEMORY_PLUGIN_OFF and r.config.memory_off is None:
        r.config.memory_off = "the openclaw CLI has no `memory` command although OpenClaw accepts the config"
    r.status_claims += oc.status_claims(r.config.configured_backend, entry, slow_ev.search, s_mode)
    deadline = r.config.search_timeout_s if r.config.configured_backend == "qmd" else None
    r.canary = canary_facts(slow_ev.canary, slow_ev.search, slow_ev.direct, deadline, slow_ev.taken_at,
                            cli_hung=slow_ev.cli_hung, agent_deadline=agent_deadline,
                            snippet_cap=(r.config.snippet_chars, r.config.snippet_key)
                            if r.config.snippet_chars and r.config.snippet_key else None)
    if slow_ev.search is not None and slow_ev.search.not_understood and r.canary.outcome is None:
        r.not_understood.append(slow_ev.search.not_understood)
    r.probe_errors += [e for e in slow_ev.errors if "memory status" not in e or entry is None]

