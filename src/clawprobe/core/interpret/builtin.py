"""The builtin SQLite engine failing closed, degrading, or unable to sync (RW30–RW40 kinds), from signals
and status facts (pure)."""

from __future__ import annotations

import os
import re

from clawprobe.core.evidence import Extra
from clawprobe.core.interpret.signals import PROVIDER_TAGS, Sig, first, sigs_from
from clawprobe.core.ledger import notes_read_since
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.config import NON_PINNED_PROVIDERS
from clawprobe.core.probes.note_scripts import BINARY
from clawprobe.core.receipt import Finding, Receipt

_NODE_VERSION = re.compile(r"\bNode (?:v)?(\d+\.\d+\.\d+)")
LOCAL_TAGS = ("local_plugin", "local_model")  # the local provider fails: its plugin is missing, or its model
#: OpenClaw's index run gave up ("Memory index failed (main): …", 7.35 and 9.6), or a sync the gateway ran for a
#: search did ("memory sync failed (search-bootstrap): Error: No API key found …", 7.35: the gateway's own search)
_INDEX_FAILED = re.compile(r"\bMemory index failed\b|\bmemory sync failed\b", re.I)


def provider_sig(r: Receipt, x: Extra, sigs: list[Sig]) -> Sig | None:
    """The provider signal the rules read: the first of :data:`PROVIDER_TAGS` — for a pinned ``local``, a missing
    llama.cpp plugin before any other line (an attempted ``plugins install`` logs ``llama-cpp-provider`` too). A log's
    line does not count when this check's own search came back with results: the provider answered it now, and a
    default log (``/tmp/openclaw/openclaw-<date>.log``) is shared by every install of the user — another install's
    failed index run of its own agent ``main`` failed this one's gate (breaker round 13, N1)."""
    if x.search is not None and x.search.rc in (0, None) and x.search.hits:
        sigs = [s for s in sigs if "log" not in s.source]
    local = (r.config.provider or "").strip().lower() == "local"
    return (first(sigs, "local_plugin") if local else None) or first(sigs, *PROVIDER_TAGS)


def _fails_closed(r: Receipt, x: Extra, sigs: list[Sig], entry: oc.StatusEntry | None) -> Sig | None:
    """A provider signal while search returned nothing (or the tool said disabled) — or, with no search run
    (no canary, or withheld: it would build the index), a provider the config pins (``local`` included) — or one
    the engine resolved an unset provider to, whose index run failed (:func:`_resolved_concrete`) — whose
    signal stands beside an index that holds nothing: OpenClaw's index run failed on it and its search fails
    the same way (seen with 2026.9.6 ``provider: local`` without the llama.cpp plugin: ``memory index`` and
    ``memory search`` exit 1, ``status`` says 0 files)."""
    provider = provider_sig(r, x, sigs)
    if provider is None:
        return None
    s = x.search
    failed = s is not None and (s.rc not in (0, None) or s.error is not None or not s.hits)
    disabled = any(t.disabled for t in x.tool_results)
    pinned = (r.config.provider or "").strip().lower()
    pinned_fails = s is None and entry is not None and entry.files == 0 and (
        provider.tag in LOCAL_TAGS if pinned == "local"
        else r.config.provider_explicit or (_resolved_concrete(entry) and _run_failed(sigs) is not None))
    if pinned_fails and pinned != "local" and not r.config.provider_explicit:
        return _run_failed(sigs) or provider
    return provider if failed or disabled or pinned_fails else None


def _run_failed(sigs: list[Sig]) -> Sig | None:
    """The first provider signal that says an index or sync run failed on the provider (any of them, not only the
    first provider signal: a gateway's later search-bootstrap failure is logged beside the index run's; pure)."""
    return next((s for s in sigs if s.tag in PROVIDER_TAGS and _INDEX_FAILED.search(s.line)), None)


def _resolved_concrete(entry: oc.StatusEntry | None) -> bool:
    """Whether ``memory status`` says the engine resolved an unset/``auto`` provider to a concrete one
    (``requestedProvider: "openai"``; pure). Both 2026.7.35 and 2026.9.6 say so; only the index run tells them
    apart: 7.35 then fails closed like a pinned provider — "Memory index failed (main): No API key found for
    provider \"openai\"", every time (breaker round 15, B1) — while 9.6 indexes keyword-only."""
    requested = ((entry.requested_provider if entry is not None else None) or "").strip().lower()
    return requested not in NON_PINNED_PROVIDERS


def gate_facts(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """The measured facts of the builtin readiness gates (``receipt.builtin.gates``, judged in
    ``clawprobe.core.modes.builtin_gates``): the notes' scripts, status' index identity and vector store
    (``--deep`` first), the provider classifier's refusal, the reindex-lock sidecar and the orphaned copies."""
    g = r.builtin.gates
    if x.note_scripts is not None:
        g.note_scripts = dict(x.note_scripts)
        if n := x.note_scripts.get(BINARY):
            ws = r.config.workspace or ""
            names = ", ".join(os.path.relpath(p, ws) if ws else p for p in x.binary_notes[:5])
            more = f" and {n - 5} more" if n > 5 else ""
            r.findings.append(Finding(tag="binary_notes", source="disk (memory notes)", message=(
                f"{n} memory note{'s are' if n != 1 else ' is'} not UTF-8 text (random bytes, encrypted — git-crypt "
                f"without its key —, or text saved as Latin-1/Windows-1252): OpenClaw reads notes as UTF-8, so at "
                f"most {'their' if n != 1 else 'its'} plain-ASCII words can be found (a Latin-1 text converts: "
                f"iconv -f WINDOWS-1252 -t UTF-8): {names}{more}")))
    for res in (x.status_deep, x.status):
        e = res.entry(r.agent_id) if res is not None else None
        if e is None:
            continue
        g.index_identity = g.index_identity or e.index_identity
        g.index_identity_reason = g.index_identity_reason or e.index_identity_reason
        g.index_identity_order = g.index_identity_order or e.index_identity_order
        g.vector_enabled = e.vector_enabled if g.vector_enabled is None else g.vector_enabled
        g.vector_available = e.vector_available if g.vector_available is None else g.vector_available
    stale = oc.search_staleness(x.search.stale_warning) if x.search is not None else None
    if stale is not None and stale[0] == "identity" and g.index_identity in (None, "valid"):
        # the search's own word beats a plain status (breaker round 16, C3: "index provider settings changed")
        g.index_identity = "mismatched"
        g.index_identity_reason = f"`memory search`: the index is stale: {stale[1]}"
    text = x.status_text or {}
    for key in ("index identity", "vector search", "vector"):
        v = str(text.get(key) or "")
        if g.index_identity in (None, "valid") and re.search(r"changed|paused|mismatch|rebuil", v, re.I):
            g.index_identity, g.index_identity_reason = "mismatched", f"status: {key.capitalize()}: {v}"
    if (p := provider_sig(r, x, sigs)) is not None:
        g.provider_error = f"{p.tag}: {p.line} ({p.source})"
    g.reindex_lock = x.reindex_lock
    g.orphan_copies = len(x.reindex_orphans)
    g.orphan_bytes = sum(n for _, n in x.reindex_orphans)
    _held_lock_blocks_index(r, x)


def _held_lock_blocks_index(r: Receipt, x: Extra) -> None:
    """A write lock on the reindex-lock sidecar (measured in ``/proc``) while the index is behind the disk or
    an index run failed or hung: the lock holder is the cause (``freshness.stale_reason = reindex_locked``,
    the holder named) — a re-index cannot succeed while it holds the lock (real 2026.9.6: ``memory index
    --force`` waits with no output until killed)."""
    lock, f = x.reindex_lock, r.freshness
    if lock is None or not lock.held or f.last_proven_current is None:
        return
    stuck = [run for run in x.index_runs if run.timed_out or run.rc not in (0, None)]
    behind = bool(f.unindexed_files or f.ghost_files) or f.stale_reason in ("dirty", "sync_aborted")
    if not (stuck or behind) or f.stale_reason in ("unreadable", "reindex_locked"):
        return
    h = next((h for h in lock.holders if h.write_lock), None)
    who = f"pid {h.pid} ({h.command})" if h else "a process this user cannot see"
    runs = f"; {len(stuck)} index run(s) failed or hung ({stuck[0].command or 'memory index'})" if stuck else ""
    note = f"the reindex lock {lock.path} is held by {who}{runs}"
    f.stale_reason = "reindex_locked"
    f.detail = note if not f.detail else f"{note}; {f.detail}"


def refine_builtin(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """The builtin engine failing closed, degrading, or unable to sync (RW30–RW40 kinds)."""
    gate_facts(r, x, sigs)
    b = r.builtin
    provider = (r.config.provider or "").strip().lower()
    entry = x.status.entry(r.agent_id) if x.status else None

    def unavailable(tag: str, detail: str) -> None:
        if b.unavailable_reason is None:
            b.unavailable_reason, b.unavailable_detail = tag, detail

    keyword_off = entry is not None and entry.fts_enabled is False
    if keyword_off and b.unavailable_reason == "fts5_missing":
        # the store has no FTS5 table because OpenClaw was told not to make one (status fts.enabled false), not
        # because its runtime lacks FTS5: the settings are the fault, decided below (breaker round 23, F1)
        b.unavailable_reason = b.unavailable_detail = None
    if keyword_off and (b.degraded_reason or "").startswith("fts5_missing"):
        b.degraded_reason = None

    newer = next((s for s in sigs if s.tag == "state_newer" and "log" not in s.source), None)  # this check's CLI
    if newer is not None:
        unavailable("state_downgrade", f"{newer.line} ({newer.source})")
    doctor = next((s for s in sigs if s.tag == "doctor_fix" and "log" not in s.source), None)
    if doctor is not None:
        unavailable("doctor_fix", f"{doctor.line} ({doctor.source})")
    if (s := first(sigs, "runtime_sqlite")) is not None:
        node = x.node_version or (m[1] if (m := _NODE_VERSION.search(s.line)) else None)
        unavailable("runtime", f"the runtime has no node:sqlite{f' (Node {node})' if node else ''}: {s.line} "
                               f"({s.source}); the provider error is a red herring")
    malformed = [s for s in sigs if s.tag == "db_malformed"]
    if b.store_sound is not None or b.store_path is None:
        # a (shared) log's line counts only for a store of this agent that exists and clawprobe's own quick_check
        # could not judge: intact, or damaged (said already), or absent, only this check's own OpenClaw runs count
        malformed = [s for s in malformed if "log" not in s.source]
    if malformed:
        unavailable("index_corrupt", f"{malformed[0].line} ({malformed[0].source})")
    locked = next((s for s in sigs if s.tag == "db_locked" and "log" not in s.source), None)
    if locked is not None and x.search is not None and not x.search.hits:
        unavailable("index_locked", f"{locked.line} ({locked.source}): a writer holds the index lock")
    cant_now = next((s for s in sigs if s.tag == "db_cantopen" and "log" not in s.source), None)
    if b.store_unreadable and cant_now is not None:  # this user's OpenClaw cannot open it either
        unavailable("index_unreadable", f"{b.store_unreadable}; OpenClaw: {cant_now.line} ({cant_now.source})")
    if b.store_damage == "not_regular":  # OpenClaw's open of a FIFO waits for a writer forever: no line to read
        unavailable("index_unreadable", f"{b.store_unreadable}: OpenClaw opens it as its SQLite store — a FIFO blocks "
                                        "every memory command (the gateway's too), anything else fails to open")
    failing = [run for run in x.index_runs if run.rc not in (0, None)]
    cant = next((s for run in failing for s in sigs_from(run.output, run.command or "memory index")
                 if s.tag == "db_cantopen"), None)
    if cant is not None and (entry is not None or (x.status and x.status.rc == 0)):
        ops = ", ".join(sorted({run.command or "memory index" for run in failing}))
        unavailable("rebuild_failing", f"every index run fails ({ops}): {cant.line}; `memory status` opens the "
                                       f"same DB" + (f" — Node {x.node_version}" if x.node_version else ""))
    fts = first(sigs, "fts5_missing")
    fts_error = entry.fts_error if entry is not None and entry.fts_available is False else None
    if fts is not None or fts_error:
        vectors = (entry is not None and entry.vector_available is True) or r.config.provider_explicit
        detail = f"keyword search impossible on this runtime: {fts.line if fts else fts_error}"
        if vectors:
            b.degraded_reason = b.degraded_reason or f"fts5_missing: {detail}"
        else:
            unavailable("fts5_missing", detail + " — and no embedding provider is left")
    if keyword_off and entry is not None and entry.vector_enabled is not True and entry.vector_available is not True:
        # OpenClaw's own status: no full-text table (``query.hybrid.enabled: false`` on 2026.7.35) and no vector
        # search (provider none, or none resolved): every search answers nothing, "search: no provider and FTS
        # unavailable" — the index itself is right, so an index run changes nothing (breaker round 23, F1)
        why = f"{r.config.keyword_off} = false" if r.config.keyword_off else "the settings"
        unavailable("keyword_search_off",
                    f"`openclaw memory status` says full-text search is disabled (fts.enabled false, by {why}) and "
                    f"no vector search is left (provider {entry.provider or 'none'}, vector "
                    f"{'disabled' if entry.vector_enabled is False else 'unavailable'}): every search returns nothing "
                    f"although {entry.files if entry.files is not None else 'the'} file(s) are indexed")
    if (s := _fails_closed(r, x, sigs, entry)) is not None:
        tag = "local_model" if provider == "local" or s.tag in LOCAL_TAGS else \
            "explicit_provider" if r.config.provider_explicit else "implicit_provider"
        unavailable(tag, f"{s.line} ({s.source})")
    search = x.search
    if r.config.provider_explicit and provider != "local" and r.canary.outcome == "error" and search is not None \
            and search.rc not in (0, None) and not search.hits:
        # a pinned provider fails closed (no fallback): whatever the words, the search itself exits non-zero
        # (a search deadline is a timeout, not this: its outcome is ``timeout``)
        why = r.canary.detail or search.error or f"exit {search.rc}"
        unavailable("explicit_provider", f"`openclaw memory search` exits {search.rc} with provider {provider!r} "
                                         f"pinned: {why}")
    if search is not None and search.timed_out and search.stderr.query_retry and provider != "local" \
            and not search.hits:
        # the query embedding did not come back within OpenClaw's own deadline and OpenClaw asked the provider again
        # until clawprobe stopped it: the CLI runs, the provider does not answer — the gateway's memory_search
        # gives up at its search deadline with keyword-only partial results (2026.9.6; breaker round 23, #1)
        unavailable("explicit_provider" if r.config.provider_explicit else "implicit_provider",
                    f"provider {provider!r} did not answer the query embedding within OpenClaw's "
                    f"{oc.REMOTE_QUERY_TIMEOUT_S:g} s ({search.stderr.query_retry}); `openclaw memory search` was "
                    f"stopped after {search.seconds or oc.SEARCH_TIMEOUT_REMOTE_S:.0f} s — the gateway's "
                    "memory_search returns keyword-only partial results at its own search deadline")
    degraded = first(sigs, "vector_degraded")
    if degraded is not None and b.fts_only is None and x.search is not None and x.search.hits:
        b.fts_only = True
        b.degraded_reason = b.degraded_reason or degraded.line
    batch = [s for s in sigs if s.tag == "batch_timeout"]
    if batch:
        seconds = batch[0].value
        if entry is not None and entry.files == 0:
            unavailable("embed_timeout", f"nothing indexed: {batch[0].line} ({batch[0].source})")
        else:
            stale_since(r, batch, "embed_timeout", f"embedding batches time out after {seconds} s"
                         + _unindexed(entry) + " — the provider probe still says ready")
    aborted = [s for s in sigs if s.tag == "not_regular_file"]
    aborted += [Sig(tag="not_regular_file", line=i, source="openclaw memory status (Issues)")
                for i in (x.status_text or {}).get("issues", []) if "regular file" in i]
    if aborted:
        names = ", ".join(x.non_regular_files[:5]) or "not named by OpenClaw (no non-regular file found on disk)"
        stale_since(r, aborted, "sync_aborted", f"every sync fails: {aborted[0].line}; non-regular memory "
                                                 f"source(s): {names}")
    denied = [s for s in sigs if s.tag == "note_unreadable"]
    if denied:
        _unreadable_notes(r, denied)
    _builtin_unsynced_canary(r, x, entry)


def _unreadable_notes(r: Receipt, denied: list[Sig]) -> None:
    """OpenClaw's sync reports a memory note it may not open (``note_unreadable``): it stops there, so nothing
    is indexed after the first such failure. The disk scan's own finding (the file's mode and owner, dated by
    its ctime) stands when it measured one, and when it read every note, the lines are past (fixed since);
    the notes named are added to the unreadable list."""
    f = r.freshness
    if notes_read_since(r):
        return
    ws = r.config.workspace
    named = [os.path.relpath(s.value, ws) if ws and s.value.startswith(ws.rstrip("/") + "/") else s.value
             for s in denied if s.value]
    for rel in dict.fromkeys(named):
        if rel not in f.unreadable_files:
            f.unreadable_files.append(rel)
    detail = f"every sync stops at a memory note it cannot read: {denied[0].line}"
    if f.stale_reason == "unreadable":
        f.detail = f"{f.detail}; {detail}" if f.detail else detail
    else:
        stale_since(r, denied, "unreadable", detail)


def _builtin_unsynced_canary(r: Receipt, x: Extra, entry: oc.StatusEntry | None) -> None:
    """Builtin (no collection patterns: every memory file on disk is eligible): status counts fewer indexed
    files than ``scan.totalFiles``, the canary written at ``planted_at`` misses, and no successful index run
    followed it — the index has not caught up since the canary was written (RW16). The store probe's own
    disk-vs-index comparison, when it ran, takes precedence."""
    c = r.canary
    if r.freshness.last_proven_current is not None or c.outcome != "miss" or c.planted_at is None or entry is None:
        return
    if entry.files is None or entry.scan_total_files is None or entry.scan_total_files <= entry.files:
        return
    if any(run.rc == 0 and run.at is not None and run.at > c.planted_at for run in x.index_runs):
        return
    f = r.freshness
    f.last_proven_current, f.stale_reason = c.planted_at, "dirty"
    f.method = (f"canary written {c.planted_at.isoformat(timespec='seconds')} is not searchable and no index ran "
                "since (status: " + f"{entry.files} of {entry.scan_total_files} files indexed)")
    f.unindexed_files = [c.expected_path] if c.expected_path else []
    dirty = (x.status_text or {}).get("dirty")
    f.detail = f"status Dirty: {dirty}" if dirty else None


def _unindexed(entry: oc.StatusEntry | None) -> str:
    if entry is None or entry.files is None or entry.scan_total_files is None:
        return ""
    return f"; {entry.scan_total_files - entry.files} of {entry.scan_total_files} files on disk stay unindexed"


def stale_since(r: Receipt, failures: list[Sig], reason: str, detail: str) -> None:
    """The index cannot catch up: it was last proven current no later than the first recorded failure."""
    times = [s.at for s in failures if s.at is not None]
    f = r.freshness
    first = min(times) if times else None
    if first is not None and (f.last_proven_current is None or first < f.last_proven_current):
        f.last_proven_current = first
        f.method = f"first failed sync/index at {first.isoformat(timespec='seconds')} (nothing indexed since)"
    f.stale_reason = reason
    f.detail = detail


