"""Per-mode readiness (spec §2): what each QMD search mode needs, and whether it holds now.

| mode    | fresh | zero pending + vector store | models                   | canary |
|---------|-------|-----------------------------|--------------------------|--------|
| search  | yes   | n/a (BM25)                  | n/a                      | yes    |
| vsearch | yes   | yes                         | embed, generate          | yes    |
| query   | yes   | yes                         | embed, generate, rerank  | yes    |
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from clawprobe.core.lease import age_seconds, is_stale, proven_words
from clawprobe.core.receipt import MODELS_NEEDED as MODELS_NEEDED
from clawprobe.core.receipt import Receipt, SearchMode

MODES: tuple[SearchMode, ...] = ("search", "vsearch", "query")
#: index-fault tags (``clawprobe.core.probes.qmd_binary`` store check, ``clawprobe.core.probes.qmd_index`` read-only open): the
#: agent's QMD index exists but cannot be read, so nothing it holds can be called current.
INDEX_FAULTS = frozenset({"index_corrupt", "index_not_database", "index_unreadable", "index_inconsistent"})


class Cell(BaseModel):
    """One readiness cell: ``ok``, ``fail``, ``na`` (the mode does not need it) or ``unknown`` (not measured)."""

    model_config = ConfigDict(extra="forbid")
    state: Literal["ok", "fail", "na", "unknown"]
    reason: str


class ModeReadiness(BaseModel):
    """Readiness of one search mode; ``ready`` is true only when every cell is ``ok`` or ``na`` and the
    engine is the one answering (``blocked``: why QMD is not, see :func:`qmd_not_serving`)."""

    model_config = ConfigDict(extra="forbid")
    mode: SearchMode
    configured: bool
    fresh: Cell
    vectors: Cell
    models: Cell
    canary: Cell
    blocked: str | None = None

    @property
    def ready(self) -> bool:
        """True when nothing this mode needs is failing or unmeasured, and QMD is what answers.

        The canary is probed in the configured mode only, so for another mode an unmeasured canary does
        not count against it: the row then answers "what would a switch to this mode need?".
        """
        canary_ok = self.canary.state in ("ok", "na") or (not self.configured and self.canary.state == "unknown")
        cells_ok = all(c.state in ("ok", "na") for c in (self.fresh, self.vectors, self.models))
        return self.blocked is None and canary_ok and cells_ok

    @property
    def state(self) -> Literal["ok", "fail", "unknown"]:
        """``ok`` ready; ``fail`` a cell fails or the engine is not the one answering; ``unknown`` nothing
        fails but something is unproven (e.g. the canary was denied by scope)."""
        if self.ready:
            return "ok"
        cells = (self.fresh, self.vectors, self.models, self.canary)
        return "fail" if self.blocked or any(c.state == "fail" for c in cells) else "unknown"


def index_fault(r: Receipt) -> str | None:
    """The index-fault tag of a QMD receipt (:data:`INDEX_FAULTS`): from the store check
    (``qmd.failure``) first, else from clawprobe's own read (``vectors.not_ready_reason``); ``None`` for a
    readable index or the builtin engine."""
    if r.config.configured_backend != "qmd":
        return None
    for tag in (r.qmd.failure, r.vectors.not_ready_reason):
        if tag in INDEX_FAULTS:
            return tag
    return None


def cannot_catch_up(r: Receipt) -> str | None:
    """Why no update can take the index's missing changes in, whatever the lease says, else ``None`` — waiting
    changes nothing, so it is stale now: a memory file the engine cannot read (``freshness.stale_reason ==
    "unreadable"``: builtin syncs stop at it, qmd keeps its old row), or a change on disk under a QMD config that
    schedules no automatic update (``config.no_auto_update``: no interval timer, no file watcher), whose index
    another process holds write-locked (``freshness.write_holder``), or whose newest update the log shows cut off
    at its timeout with no completed sync since (``freshness.update_timeout``)."""
    if r.freshness.stale_reason == "unreadable":
        return "a memory file cannot be read: no update can catch up"
    changed = bool(r.freshness.unindexed_count or r.freshness.ghost_count)
    if r.config.no_auto_update and changed:
        return f"a change on disk, and the config schedules no automatic update ({r.config.no_auto_update})"
    if (b := r.freshness.write_holder) is not None and changed:
        return (f"a change on disk, and pid {b.pid} ({b.what}) holds the index's write lock: every update waits on "
                "it (/proc/locks)")
    if r.freshness.update_timeout and changed:
        return (f"a change on disk, and the newest qmd update ran into its timeout (memory.qmd.update.updateTimeoutMs) "
                f"with none completed since (log: {r.freshness.update_timeout})")
    return None


def fresh_cell(r: Receipt, now: datetime) -> Cell:
    """Fresh iff the index was proven current within the lease — never when the index cannot be read
    (:func:`index_fault`: a log line or an old proof says nothing about an index qmd cannot open)."""
    fault = index_fault(r)
    if fault:
        return Cell(state="fail", reason=f"the index cannot be read ({fault.removeprefix('index_').replace('_', ' ')})")
    lpc = r.freshness.last_proven_current
    if lpc is None:
        return Cell(state="unknown", reason="nothing proved the index current yet")
    age = age_seconds(lpc, now)
    if is_stale(age, r.lease):
        return Cell(state="fail", reason=f"{proven_words(r.freshness.stale_reason)} {age:.0f} s ago > lease "
                                         f"{r.lease.seconds:.0f} s")
    if (why := cannot_catch_up(r)) is not None:
        return Cell(state="fail", reason=why)
    if r.freshness.stale_reason == "never_indexed":  # the notes' times start the lease; no index holds them (s16)
        return Cell(state="unknown", reason=f"no index yet: notes on disk never indexed (stale in "
                                            f"{max(r.lease.seconds - max(age, 0), 0):.0f} s)")
    behind = next((c for c in r.coverage.sources if c.measured_by == "status" and c.missing), None)
    if behind is not None:  # the same measured gap rules.stale_index reads (source_behind)
        return Cell(state="fail", reason=f"{behind.source}: {behind.indexed} of {behind.expected} files indexed "
                                         "(behind disk)")
    return Cell(state="ok", reason=f"proven current {max(age, 0):.0f} s ago ≤ lease {r.lease.seconds:.0f} s")


def vectors_cell(r: Receipt, mode: SearchMode) -> Cell:
    """Vectors: n/a for BM25; otherwise a vector store and zero pending embeddings for the active model."""
    if mode == "search":
        return Cell(state="na", reason="BM25 search needs no embeddings")
    v = r.vectors
    if v.has_vector_table is False:
        return Cell(state="fail", reason="no vector store in the index (never embedded)")
    if v.pending is None:
        return Cell(state="unknown", reason="pending embeddings not measured")
    if v.pending > 0:
        total = f" of {v.documents}" if v.documents is not None else ""
        return Cell(state="fail", reason=f"{v.pending}{total} documents pending embedding")
    if v.partial_documents:
        return Cell(state="fail", reason=f"{v.partial_documents} documents only partly embedded")
    return Cell(state="ok", reason="0 pending for the active model and fingerprint")


def models_cell(r: Receipt, mode: SearchMode) -> Cell:
    """Models: every model role the mode loads must be complete in the model cache."""
    needed = MODELS_NEEDED[mode]
    if not needed:
        return Cell(state="na", reason="BM25 search loads no model")
    missing = r.vectors.missing_models
    if missing is None:
        return Cell(state="unknown", reason="model cache not inspected")
    lacking = [m for m in needed if m in missing]
    if lacking:
        return Cell(state="fail", reason="missing model(s): " + ", ".join(lacking))
    return Cell(state="ok", reason="needs " + ", ".join(needed) + ": all present")


def qmd_not_serving(r: Receipt) -> str | None:
    """Why QMD is not the engine answering searches (then no QMD mode is ready), or ``None``.

    Sources: ``config.error``, ``openclaw.has_qmd_backend``, ``backend.effective``, ``qmd.resolves`` /
    ``qmd.store_ok`` — the same facts rules 1, 2, 4 and 5 read.
    """
    if r.config.error is not None:
        return "the config does not load"
    if r.openclaw.has_qmd_backend is False:
        return "this OpenClaw has no QMD backend"
    if r.qmd.resolves is False or r.qmd.store_ok is False:
        return "qmd does not run from the gateway's environment"
    if r.backend.effective == "builtin":
        return "the builtin fallback answers, not QMD"
    return None


def gateway_serves_other(r: Receipt) -> str | None:
    """Why what the running gateway serves is not the memory config in the file (rule 3's drift: an older
    memory config, or an index handle opened before the last rebuild), or ``None``. Source: ``gateway.drift`` /
    ``gateway.drift_reason`` (the gateway's own memory_search and its start against the config's last write)."""
    g = r.gateway
    if not g.drift:
        return None
    pid = f" (pid {g.pid})" if g.pid else ""
    if g.drift_reason == "stale_handle":
        return f"the running gateway{pid} serves an index opened before the last rebuild"
    return f"the running gateway{pid} serves an older memory config"


def agent_cannot_search(r: Receipt) -> str | None:
    """Why the agent gets no memory search at all, whatever its index holds, or ``None``: memory search is
    switched off (``config.memory_off``) or its tool policy takes ``memory_search`` from it (``config.tool_off``)."""
    if r.config.memory_off:
        return f"memory search is switched off ({r.config.memory_off})"
    if r.config.tool_off:
        return f"the agent's tool policy takes memory_search from it ({r.config.tool_off})"
    return None


def serving_blocked(r: Receipt) -> tuple[str, str] | None:
    """``(short words, why)`` when nothing measured of the file's memory config is what answers searches now,
    else ``None``, the first that holds of: QMD configured and not serving (:func:`qmd_not_serving`: ``QMD is
    not serving``), the running gateway serving another config (:func:`gateway_serves_other`: ``the gateway
    serves another config``), the agent getting no memory search at all (:func:`agent_cannot_search`: ``the
    agent cannot search``). While it holds, no fact about the file's config reads ``ok``."""
    for short, why in (("QMD is not serving", qmd_not_serving(r) if r.config.configured_backend == "qmd" else None),
                       ("the gateway serves another config", gateway_serves_other(r)),
                       ("the agent cannot search", agent_cannot_search(r))):
        if why:
            return short, why
    return None


def serving_block(r: Receipt) -> str | None:
    """Why the file's memory config is not what serves (:func:`serving_blocked`'s ``why``), or ``None``."""
    blocked = serving_blocked(r)
    return blocked[1] if blocked else None


def fallback_served(r: Receipt) -> bool:
    """True when QMD is configured but the canary hit came from the builtin engine (its result shape, or
    the effective backend was builtin): such a hit proves nothing about QMD (rule 5)."""
    c = r.canary
    return (r.config.configured_backend == "qmd" and c.outcome == "found"
            and (c.result_shape == "builtin" or r.backend.effective == "builtin"))


def canary_awaiting_update(r: Receipt, now: datetime) -> bool:
    """A plain miss on a canary that no update cycle has had the chance to index yet (planted within the
    lease, not in the index — or the index holds the file as it was before this token was written, a plant over
    an older canary — no narrower explanation): retrieval is not provable yet, so it is not failed (rule 12's
    ``canary_not_indexed``; the canary cell and the retrieval step say the same)."""
    c = r.canary
    unindexed = c.indexed_at is None or (c.planted_at is not None and c.indexed_at < c.planted_at)
    return (c.outcome == "miss" and c.reason is None and unindexed and c.planted_at is not None
            and age_seconds(c.planted_at, now) <= r.lease.seconds)


def canary_cell(r: Receipt, mode: SearchMode) -> Cell:
    """Canary: proven only for the configured mode (the probe searches through OpenClaw in that mode). A
    canary the scope policy refused is unproven, never failed (rule 10); one the builtin fallback answered
    fails for QMD (rule 5)."""
    if mode != r.config.search_mode:
        return Cell(state="unknown", reason=f"canary runs in the configured mode ({r.config.search_mode})")
    outcome = r.canary.outcome
    if outcome is None:
        return Cell(state="unknown", reason="no canary retrieval yet")
    if outcome == "denied":
        why = f" ({r.canary.reason})" if r.canary.reason else ""
        return Cell(state="unknown", reason=f"denied by scope (unproven): scope policy refused the probe{why}, "
                                            "so retrieval is neither proven nor failed")
    if fallback_served(r):
        return Cell(state="fail", reason="found, but served by the builtin fallback (builtin result shape) — "
                                         "proves nothing about QMD")
    if outcome == "found":
        return Cell(state="ok", reason=f"found in {r.canary.returned_path or r.canary.expected_path}")
    if canary_awaiting_update(r, r.checked_at):
        return Cell(state="unknown", reason="planted, not indexed yet: the next index update brings it in (unproven)")
    detail = r.canary.reason
    if detail == "search_not_invoked" and mode != "search":  # the direct cross-check is BM25 only
        detail = f"BM25 finds it directly; the {mode} path is unproven"
    return Cell(state="fail", reason=f"canary {outcome}" + (f" ({detail})" if detail else ""))


def builtin_vectors_cell(r: Receipt) -> Cell:
    """The builtin engine's embeddings (source: ``receipt.builtin``, ``config.provider``)."""
    b = r.builtin
    prov = r.config.provider or "unset"
    if b.unavailable_reason:
        return Cell(state="fail", reason=f"memory unavailable: {b.unavailable_detail or b.unavailable_reason}")
    if b.fts_only:
        if prov.lower() == "none":
            return Cell(state="na", reason="provider 'none': keyword-only by choice")
        if r.config.provider_explicit:
            return Cell(state="fail", reason=f"provider {prov!r} is pinned but the index is keyword-only")
        return Cell(state="fail", reason=f"provider {prov!r} resolved to none: keyword-only, semantic recall off")
    if b.fts_only is False:
        return Cell(state="ok", reason=f"embeddings from provider {b.provider_resolved or prov}")
    return Cell(state="unknown", reason="not measured whether the index holds embeddings")


def mode_readiness(r: Receipt, now: datetime) -> list[ModeReadiness]:
    """Rows for ``search``, ``vsearch`` and ``query``, the configured one marked; with QMD configured each
    row is ``blocked`` while QMD is not what answers (:func:`qmd_not_serving`), and on either engine while the
    running gateway serves another config than the file (:func:`gateway_serves_other`). On the builtin engine the vectors
    are its own (:func:`builtin_vectors_cell`) and no QMD model is loaded, whatever the row — the JSON said "BM25
    search needs no embeddings" beside a text report's ``vectors=fail`` (breaker round 13, N4)."""
    fresh = fresh_cell(r, now)
    qmd = r.config.configured_backend == "qmd"
    blocked = serving_block(r)
    own = None if qmd else builtin_vectors_cell(r)
    no_model = Cell(state="na", reason="the builtin engine loads no QMD model")
    return [
        ModeReadiness(
            mode=m,
            configured=(m == r.config.search_mode),
            fresh=fresh,
            vectors=vectors_cell(r, m) if own is None else own,
            models=models_cell(r, m) if own is None else no_model,
            canary=canary_cell(r, m),
            blocked=blocked,
        )
        for m in MODES
    ]


class Gate(BaseModel):
    """One builtin readiness gate: ``name`` (``tokenizer``, ``vectors``, ``identity``, ``provider``,
    ``lock``, ``orphans``), its ``cell`` (state and reason) and ``short`` (≤ 40 characters, for narrow screens)."""

    model_config = ConfigDict(extra="forbid")
    name: Literal["tokenizer", "vectors", "identity", "provider", "lock", "orphans"]
    cell: Cell
    short: str


def _gate(name: str, state: str, short: str, reason: str) -> Gate:
    return Gate.model_validate({"name": name, "cell": {"state": state, "reason": reason}, "short": short[:40]})


def _percent(share: float) -> str:
    """A share (0–100) in words that never say 0 % of something present nor 100 % of something partial: ``< 1 %``,
    ``> 99 %``, else the rounded figure (breaker round 15, B8: one small UTF-16 note among 12 read "0%")."""
    if 0 < share < 1:
        return "< 1%"
    if 99 < share < 100:
        return "> 99%"
    return f"{share:.0f}%"


def tokenizer_gate(r: Receipt) -> Gate:
    """Can the FTS tokenizer match the scripts of the notes? ``fail`` when the notes hold unspaced scripts
    (CJK, Thai…) the tokenizer keeps as whole runs and keyword search is the only retrieval (keyword-only
    index); with embeddings the keyword half misses them but semantic search covers them (``ok``). Notes saved
    as UTF-16 fail whatever the tokenizer and vectors: nothing can match their bytes."""
    from clawprobe.core.probes.note_scripts import BINARY, UTF16, unmatched_scripts

    g = r.builtin.gates
    if g.fts_tokenizer is None or g.note_scripts is None:
        return _gate("tokenizer", "unknown", "not measured", "the FTS tokenizer or the notes' scripts were not read")
    scripts = {k: v for k, v in g.note_scripts.items() if k != BINARY}  # files, not letters (a warning of their own)
    total = sum(scripts.values()) or 1
    if scripts.get(UTF16):
        share = 100 * scripts[UTF16] / total
        return _gate("tokenizer", "fail", "notes saved as UTF-16",
                     f"{_percent(share)} of the notes' letters are in files saved as UTF-16: OpenClaw reads notes as UTF-8, "
                     "so their text is indexed as bytes no keyword or semantic search matches — save them as UTF-8")
    gap = unmatched_scripts(g.fts_tokenizer, scripts)
    if not gap:
        seen = ", ".join(sorted(scripts, key=lambda s: -scripts[s])[:3]) or "no letters"
        return _gate("tokenizer", "ok", f"{g.fts_tokenizer} fits {seen}"[:40],
                     f"FTS tokenizer {g.fts_tokenizer} can match the notes' scripts ({seen})")
    share = 100 * sum(scripts[s] for s in gap) / total
    names = "/".join(gap[:3])
    why = (f"FTS tokenizer {g.fts_tokenizer} keeps {names} text ({_percent(share)} of the notes' letters) as whole runs: "
           "a keyword search for a word inside a run never matches (trigram would)")
    keyword_only = r.builtin.fts_only is True or g.vector_available is False
    if keyword_only:
        return _gate("tokenizer", "fail", f"{g.fts_tokenizer} can't split {names}", why + "; the index is keyword-only")
    return _gate("tokenizer", "ok", f"{names}: semantic only", why + "; semantic search still covers them")


def builtin_gates(r: Receipt) -> list[Gate]:
    """The builtin engine's readiness gates (spec §"Both engines"), each from a measured fact on
    ``receipt.builtin`` (``gates`` and the engine's fail-closed tags); empty for a QMD receipt or a config
    that does not load."""
    if r.config.configured_backend == "qmd" or r.config.error is not None:
        return []
    b, g = r.builtin, r.builtin.gates
    prov = (r.config.provider or "").strip().lower()
    out = [tokenizer_gate(r)]
    if prov == "none" or (b.fts_only and not r.config.provider_explicit and prov in ("", "auto")):
        out.append(_gate("vectors", "na", "keyword-only by choice" if prov == "none" else "no provider: none",
                         "no embedding provider: the vector store is not used"))
    elif b.vector_extension_error:
        out.append(_gate("vectors", "fail", "sqlite-vec not loaded", b.vector_extension_error))
    elif g.vector_enabled and g.vector_available is False:
        out.append(_gate("vectors", "fail", "vector store unavailable", "status: vector.enabled but not available"))
    elif g.vector_available:
        out.append(_gate("vectors", "ok", "sqlite-vec loaded", "status: vector.available"))
    else:
        out.append(_gate("vectors", "unknown", "not measured", "status did not say whether the vector store loads"))
    ident = g.index_identity
    chunking = f" (chunking v{g.chunking_version}, {g.chunk_tokens} tokens)" if g.chunking_version else ""
    if ident is None:
        out.append(_gate("identity", "unknown", "not read", "status gave no index identity" + chunking))
    elif ident == "valid":
        out.append(_gate("identity", "ok", f"valid{chunking[:24]}", "index identity valid" + chunking))
    elif ident == "missing":
        out.append(_gate("identity", "fail", "never indexed", "index identity missing: nothing indexed yet" + chunking))
    else:
        out.append(_gate("identity", "fail", f"{ident}: rebuild needed",
                         f"index identity {ident}: {g.index_identity_reason or 'changed'} — vector search is paused "
                         "until memory is rebuilt" + chunking))
    if prov == "none":
        out.append(_gate("provider", "na", "provider none", "no embedding provider configured"))
    elif g.provider_error:
        out.append(_gate("provider", "fail", g.provider_error.split(":", 1)[0].replace("_", " "), g.provider_error))
    elif b.unavailable_reason in ("explicit_provider", "implicit_provider", "local_model"):
        out.append(_gate("provider", "fail", "unreachable", b.unavailable_detail or b.unavailable_reason))
    elif b.fts_only is False:
        out.append(_gate("provider", "ok", f"{b.provider_resolved or prov} answers",
                         f"embeddings from {b.provider_resolved or prov}"))
    else:
        out.append(_gate("provider", "unknown", "not proven", "no embedding was proven"))
    lock = g.reindex_lock
    if lock is None:
        out.append(_gate("lock", "unknown", "not looked", "the reindex-lock sidecar was not looked at"))
    elif not lock.exists:
        out.append(_gate("lock", "ok", "no reindex lock", f"no {lock.path}"))
    elif lock.held:
        h = next((h for h in lock.holders if h.write_lock), lock.holders[0] if lock.holders else None)
        who = f"pid {h.pid} ({'gateway' if h.gateway else h.command})" if h else "an unseen process"
        out.append(_gate("lock", "fail", f"held by {who}", f"reindex lock {lock.path} is held by {who}: another "
                                                           "reindex is refused while it holds it"))
    elif not lock.visible:
        out.append(_gate("lock", "unknown", "holder not visible", "/proc could not be read: the holder is unknown"))
    else:
        opened = f" (open in pid {', '.join(str(h.pid) for h in lock.holders)}, no write lock)" if lock.holders else ""
        out.append(_gate("lock", "ok", "not held", f"reindex lock sidecar present, nobody holds it{opened}"))
    if g.orphan_copies is None:
        out.append(_gate("orphans", "unknown", "not looked", "orphaned reindex copies were not looked for"))
    elif g.orphan_copies:
        mib = (g.orphan_bytes or 0) / 2**20
        out.append(_gate("orphans", "fail", f"{g.orphan_copies} copies, {mib:.0f} MiB",
                         f"{g.orphan_copies} orphaned *.memory-reindex-* copies ({mib:.0f} MiB) next to the store"))
    else:
        out.append(_gate("orphans", "ok", "none", "no orphaned reindex copies"))
    return out
