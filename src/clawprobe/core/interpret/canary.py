"""The canary: its outcome (one decision), "direct qmd found the canary" (one rule), its trace in the index
and why a failed retrieval failed (pure).

* :func:`direct_qmd_found` — a direct ``qmd search`` result holds the token and is the expected path.
* :func:`canary_facts` — the one place the outcome is decided (found / wrong_source / miss / denied /
  timeout / error, or none when the CLI hung), from the canary retrieval and the agent's own tool deadline.
* :func:`trace` — planted → indexed → embedded from clawprobe's record and the index facts.
* :func:`narrow` — the reason of a failed retrieval (resource, wrong store, search not invoked, a path
  explainer, session gates, dropped extra paths, FTS5, CJK).
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime

from clawprobe.core import canary as cn
from clawprobe.core.evidence import CanarySpec, DirectQmd, Extra, StoreEvidence
from clawprobe.core.interpret.signals import RESOURCE_TAGS, Sig, first
from clawprobe.core.lease import MAX_DURATION_S
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes.config import _get
from clawprobe.core.probes.note_scripts import UNSPACED, count_scripts
from clawprobe.core.receipt import Canary, Receipt
from clawprobe.core.runrecord import RunRecord

CANARY_DIR = "memory"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def direct_qmd_found(stdout: str, token: str, expected_path: str) -> bool:
    """True when a ``qmd search TOKEN --json`` output has a result that holds ``token`` (case-insensitive; a
    result without text counts) and is ``expected_path``: its ``qmd://<collection>/<rel>`` mapped to the
    workspace (:func:`clawprobe.core.canary.result_path`), or — for a collection clawprobe cannot map — a
    file ending in the expected path (less its ``memory/`` dir)."""
    results, _ = cn.parse_results(stdout)
    want = expected_path.split("/", 1)[1] if expected_path.startswith(CANARY_DIR + "/") else expected_path
    for h in cn.token_hits(results or [], token):
        p = cn.result_path(h)
        if p == expected_path or (p.startswith("qmd://") and (p.endswith("/" + want) or p.endswith(want))):
            return True
    return False


def direct_qmd(rc: int, seconds: float, stdout: str, error: str | None, token: str, expected_path: str) -> DirectQmd:
    """The :class:`~clawprobe.core.evidence.DirectQmd` record of one direct run (the result files, ≤ 10, and
    :func:`direct_qmd_found`)."""
    results, _ = cn.parse_results(stdout)
    files = [str(h.get("file") or h.get("path")) for h in results or [] if h.get("file") or h.get("path")]
    return DirectQmd(rc=rc, seconds=seconds, found=direct_qmd_found(stdout, token, expected_path), files=files[:10],
                     error=error)


def direct_of_run(run: RunRecord, token: str, expected_path: str) -> DirectQmd:
    """The direct ``qmd search TOKEN --json`` cross-check from its run record (pure; the one parse of that
    output, live and recorded): :func:`direct_qmd` with ``error`` the runner's reason, else the line of
    stderr that says what went wrong (:func:`clawprobe.core.probes.qmd_binary.error_line`), else the exit
    code — ``None`` for a run that ended with exit 0."""
    error = None if run.ok else (run.reason or qb.error_line(run.stderr) or f"exit {run.rc}")
    return direct_qmd(run.rc if run.rc is not None else 0, run.seconds or 0.0, run.stdout, error, token, expected_path)


def _seconds(value: str | None) -> float | None:
    m = re.match(r"(\d+(?:\.\d+)?)\s*(ms|s)?", value or "")
    if not m:
        return None
    return float(m[1]) / (1000.0 if m[2] == "ms" else 1.0)


def tool_deadline(sigs: list[Sig]) -> Sig | None:
    """The agent's own memory_search deadline, as a tool result reported it (``search_timeout``)."""
    return next((s for s in sigs if s.tag == "search_timeout" and s.source == "memory_search tool result"), None)


def canary_facts(spec: CanarySpec | None, search: oc.SearchResult | None, direct: DirectQmd | None,
                 deadline_s: float | None, retrieved_at: datetime | None, *, cli_hung: bool = False,
                 agent_deadline: Sig | None = None, snippet_cap: tuple[int, str] | None = None) -> Canary:
    """The receipt's canary part from the retrieval evidence — the one place its outcome is decided (pure).

    ``found`` only when a hit comes from the expected workspace-relative path and carries the token;
    ``wrong_source`` when the token came back from another path; ``miss`` when no hit carries it;
    ``denied`` for a QMD scope denial; no outcome when the answer's shape is not understood
    (``search.not_understood``: :attr:`Receipt.not_understood` names it) and no readable hit found the canary;
    ``timeout`` when OpenClaw reports its search deadline passed, or when a found canary took longer than the
    agent's own memory_search deadline (``agent_deadline``, a tool result's ``search_timeout`` signal);
    ``error`` for a failed call; no outcome when the CLI itself hung (``cli_hung``). ``direct_qmd_found`` comes
    from a direct run that did not fail. ``snippet_cap`` (``(characters, config key)``, QMD only,
    :attr:`~clawprobe.core.probes.config.MemorySettings.snippet_cap`): a ``miss`` whose hit from the canary's own
    path has a snippet that long and without the token is reason ``snippet_cut`` — OpenClaw cut the text away.
    """
    if spec is None:
        return Canary()
    c = Canary(token_sha256=_sha(spec.token), expected_path=spec.expected_path, content_sha256=spec.content_sha256,
               planted_at=spec.planted_at, deadline_s=deadline_s)
    if direct is not None and direct.error is None:  # a failed run (SQLITE_BUSY, a crash) finds nothing either way
        c.direct_qmd_found = direct.found
    if search is None or cli_hung:  # a hung CLI is a probe error (slow), not a retrieval outcome
        return c
    c.retrieved_at = retrieved_at
    c.latency_s = search.seconds
    c.result_shape = search.shape
    err = search.stderr
    if err.scope_denied:
        c.outcome, c.reason, c.detail = "denied", "probe_context", err.scope_denied
        return c
    if search.timed_out or err.timeout_ms is not None:
        c.outcome, c.reason = "timeout", "timeout"
        if err.timeout_ms is not None and err.timeout_ms / 1000.0 <= MAX_DURATION_S:  # else no real deadline
            c.deadline_s = err.timeout_ms / 1000.0
        c.detail = err.search_failed or search.error
        return c
    if search.rc not in (0, None) or (search.error and not search.hits):
        c.outcome, c.detail = "error", search.error or err.search_failed
        return c
    # a hit counts only when it carries the token (case-insensitive; a hit with no text cannot be checked):
    # vector search returns the canary note for a rotated token too, which proves nothing
    t = spec.token.lower()
    with_token = [h for h in search.hits if not h.snippet.strip() or t in h.snippet.lower()]
    exact = [h for h in with_token if _canary_path(spec, h.path)]
    if not exact and search.not_understood:  # results it cannot read: neither a hit nor a miss is measured
        c.detail = search.not_understood
        return c
    if exact:
        c.outcome, c.returned_path, c.result_shape = "found", exact[0].path, exact[0].shape
        d = _seconds(agent_deadline.value) if agent_deadline is not None else None
        if agent_deadline is not None and d is not None and c.latency_s is not None and c.latency_s > d:
            c.outcome, c.reason, c.deadline_s = "timeout", "timeout", d
            c.detail = (f"the probe needed {c.latency_s:.1f} s; the agent's memory_search gives up after {d:.0f} s "
                        f"({agent_deadline.line})")
    elif with_token:
        c.outcome, c.returned_path = "wrong_source", with_token[0].path
    else:
        c.outcome = "miss"
        if search.hits:
            c.detail = f"{len(search.hits)} result(s), none holds the token"
        cut = _cut_hit(spec, search.hits, snippet_cap)
        if cut is not None and snippet_cap is not None:
            c.reason = "snippet_cut"
            c.detail = (f"OpenClaw returned the canary's file {cut.path}, but cut its text to {snippet_cap[0]} "
                        f"characters ({snippet_cap[1]} = {snippet_cap[0]}): {cut.snippet[:60]!r} — the token, and "
                        "the note's text, never reach the agent; every hit is cut the same way")
    return c


def _cut_hit(spec: CanarySpec, hits: list[oc.SearchHit], cap: tuple[int, str] | None) -> oc.SearchHit | None:
    """The first hit from the canary's own path, not builtin-shaped, whose snippet, without the token, is as long
    as the QMD limit ``cap`` lets a hit's text be (OpenClaw sliced it there), or ``None`` (pure)."""
    if cap is None:
        return None
    return next((h for h in hits if h.shape != "builtin" and h.snippet.strip() and len(h.snippet) >= cap[0]
                 and _canary_path(spec, h.path)), None)  # QMD's limits never cut a builtin engine's hit


def _canary_path(spec: CanarySpec, hit_path: str) -> bool:
    """Whether a hit comes from the canary's own file: its expected path, a path it is searched under, or the
    same file by its real path (:func:`_same_file`) (pure)."""
    return hit_path == spec.expected_path or hit_path in spec.search_paths or _same_file(spec, hit_path)


def _same_file(spec: CanarySpec, hit_path: str) -> bool:
    """Whether a hit's workspace-relative path names the canary file by its real path (pure): ``memory/`` is a
    symlink the builtin scanner skips and an extra path points at its target, so the canary comes back as
    ``../srv/notes/clawprobe-canary.md`` — the same file, the engine expected (breaker round 10, s04: the repair
    clawprobe offered, extraPaths, then failed the install forever as ``wrong_source``)."""
    if spec.real_path is None or spec.workspace is None or hit_path.startswith("qmd/"):
        return False
    return os.path.normpath(os.path.join(spec.workspace, hit_path)) == spec.real_path


def trace(c: Canary, record: cn.CanaryRecord | None, stores: StoreEvidence | None) -> Canary:
    """Planted → indexed → embedded from clawprobe's active ``record`` and the index facts in ``stores``
    (:func:`clawprobe.core.canary.trace`). Retrieval evidence for a retired token says nothing about the
    current one: it is dropped."""
    if record is None or not record.active:
        return c
    if c.token_sha256 and c.token_sha256 != record.token_sha256:
        c = Canary()
    qi = stores.qmd_index if stores is not None else None
    bi = stores.builtin_index if stores is not None else None
    doc = qi.doc_with_hash(record.content_sha256) if qi is not None else None
    hashes = {s.path: s.hash for s in bi.sources or []} if bi is not None and bi.sources is not None else None
    indexed = getattr(bi, "indexed_at", None) if bi is not None else None
    return cn.trace(c, record, qmd_docs=[doc] if doc is not None else (), builtin_hashes=hashes,
                    builtin_indexed_at=indexed, retrieved_at=c.retrieved_at)


def ghost(c: Canary, file_state: str | None, token_on_disk: bool | None = None,
          moved: tuple[str, str] | None = None) -> Canary:
    """A canary ``found`` while its file is gone from disk (``file_state == "missing"``, measured after the
    search), or edited so the searched token is no longer in it (``modified``/``foreign``, ``token_on_disk``
    False), proves only that the index still serves content that is not on disk: it is a ``miss`` tagged
    ``canary_gone``, never a retrieval. A plain miss on a file so edited is ``canary_gone`` too: no search can
    find a token that is not on disk, so it is neither "awaiting the update cycle" nor the index's fault. Edited
    past recognition (``foreign``: clawprobe's header or token shape gone, so ``canary rotate`` will not overwrite
    it) the tag is ``canary_edited``, whose repair moves the file aside first. A canary missing because its
    whole directory was renamed or moved (``moved``: ``(planted dir, where it is now)``, measured by
    :func:`clawprobe.core.canary.moved_dir`) is ``notes_dir_moved``, found or missed: the operator's notes went
    with it, and a rotated canary would recreate an empty directory beside them (pure)."""
    if moved is not None and file_state == "missing" and c.outcome in ("found", "miss"):
        name = c.expected_path or "memory/clawprobe-canary.md"
        return c.model_copy(update={"outcome": "miss", "reason": "notes_dir_moved", "retrieved_at": None,
                                    "moved_dir": moved, "detail": (
            f"the directory {moved[0]}/ is gone from the workspace, and the canary planted in it ({name}) is now in "
            f"{moved[1]}/: the notes directory was renamed or moved, taking its notes out of what OpenClaw indexes")})
    edited = file_state in ("modified", "foreign") and token_on_disk is False
    tag = "canary_edited" if file_state == "foreign" else "canary_gone"
    if c.outcome == "miss" and c.reason is None and edited:
        name = c.expected_path or "memory/clawprobe-canary.md"
        return c.model_copy(update={"reason": tag, "detail": (
            f"the canary file {name} was edited and no longer holds the planted token: no search can find it")})
    if c.outcome != "found" or not (file_state == "missing" or edited):
        return c
    name = c.expected_path or "memory/clawprobe-canary.md"
    where = f" from {c.returned_path}" if c.returned_path else ""
    detail = (f"the canary file {name} was edited and no longer holds the planted token, yet the search returned "
              f"it{where}: the index serves content that is not on disk") if edited else (
        f"the canary file {name} is gone from that path (deleted or moved), yet the search returned it{where}: the "
        "index still serves a note that is no longer there")
    return c.model_copy(update={"outcome": "miss", "reason": tag if edited else "canary_gone", "retrieved_at": None,
                                "detail": detail})


def _memory_search(x: Extra, agent_id: str) -> dict:
    """The agent's effective ``memorySearch`` settings: the defaults (``agents.defaults.memorySearch``, else
    ``memory.search``) with the agent entry's own ``memorySearch`` over them (``experimental`` merged key by
    key), as OpenClaw merges them (2026.7.35 ``memory-search``: per-agent overrides win)."""
    from clawprobe.core.locate import agent_entry

    base = dict(_get(x.tree, "agents", "defaults", "memorySearch") or _get(x.tree, "memory", "search") or {})
    own = _get(agent_entry(x.tree, agent_id) or {}, "memorySearch") or {}
    if isinstance(own, dict):
        experimental = {**(base.get("experimental") or {}), **(own.get("experimental") or {})}
        base.update(own)
        base["experimental"] = experimental
    return base


def sessions_unexported(x: Extra, agent_id: str) -> str | None:
    """Why session recall cannot work on QMD although the operator opted in to it (``experimental.sessionMemory``
    true and ``"sessions"`` in ``sources``): ``memory.qmd.sessions.enabled`` is not true, so QMD never receives
    a transcript — whatever the memory canary says (RW28's gate, read from the config itself; pure). ``None``
    when the operator did not opt in or QMD exports them. The opt-in is the agent's (:func:`_memory_search`)."""
    from clawprobe.core.probes.config import memory_settings

    ms = _memory_search(x, agent_id)
    opted = _get(ms, "experimental", "sessionMemory") is True and "sessions" in (_get(ms, "sources") or [])
    s = memory_settings(x.tree, agent_id)  # backend and sessions.enabled are decided there
    if not opted or s.configured_backend != "qmd" or s.sessions_enabled:
        return None
    return ("session memory is switched on (experimental.sessionMemory, sources: sessions), but "
            "memory.qmd.sessions.enabled is not true: QMD never receives a transcript, so no session is ever recalled")


def session_gate(x: Extra, agent_id: str) -> str | None:
    """The first of the four session-recall gates that fails (RW28), or ``None`` when all pass."""
    ms = _memory_search(x, agent_id)
    if _get(ms, "experimental", "sessionMemory") is not True:
        return "experimental.sessionMemory is not true"
    if "sessions" not in (_get(ms, "sources") or []):
        return "sources does not include \"sessions\""
    if _get(x.tree, "memory", "backend") == "qmd" and _get(x.tree, "memory", "qmd", "sessions", "enabled") is not True:
        return "memory.qmd.sessions.enabled is not true (QMD never receives transcripts; off by default)"
    vis = _get(x.tree, "tools", "sessions", "visibility") or "tree"
    if vis == "tree":
        return "tools.sessions.visibility is \"tree\" (default): other sessions' transcripts are hidden"
    return None




def narrow(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Why a failed retrieval failed — the canary's ``reason``/``detail`` (RW13–RW44 kinds), first match wins:
    a resource limit (error/timeout), the wrong QMD store, direct qmd finding what OpenClaw does not, a path
    explainer (hidden path, case, symlink, pattern…), session-recall gates, dropped extra paths, FTS5, CJK."""
    c = r.canary
    if c.outcome not in ("miss", "error", "timeout", "wrong_source"):
        return
    search_sigs = [s for s in sigs if "memory search" in s.source or s.source.startswith("memory_search")]
    if c.outcome in ("error", "timeout") and (s := first(search_sigs, *RESOURCE_TAGS)) is not None:
        c.reason, c.detail = "resource", f"{s.line} ({s.source})"
        return
    if c.outcome in ("miss", "error", "timeout") and x.collection_squatters:  # the store decides, however long
        r.qmd.stray_collections = sorted(set(x.collection_squatters.values()))
        c.reason = "collection_renamed"
        c.detail = "; ".join(
            f"the agent's QMD store holds {want}'s notes (same path and pattern) as collection '{have}': OpenClaw "
            f"searches {want}, which qmd does not know, and refuses to rebind the path to it, so an index run "
            "leaves it so" for want, have in sorted(x.collection_squatters.items()))
        return
    missing = next((s for s in sigs if s.tag == "collection_missing" and s.value
                    and re.match(r"memory-(root|dir)-", s.value)), None)
    if c.outcome in ("miss", "error") and (missing is not None or x.wrong_store_detail):
        c.reason = "wrong_store"
        c.detail = "; ".join(v for v in (missing.line if missing else None, x.wrong_store_detail) if v)
        return
    if c.outcome not in ("miss", "wrong_source") or c.reason not in (None, "miss", "wrong_source"):
        return
    if c.outcome == "miss" and c.direct_qmd_found:
        c.reason = "search_not_invoked"
        c.detail = ("direct qmd (BM25) with the agent's XDG dirs finds the canary; OpenClaw returns nothing — "
                    + ("an OpenClaw-side retrieval fault, the index is fine" if r.config.search_mode == "search"
                       else f"the index holds it, so the {r.config.search_mode} path (vectors, models) is what misses"))
        return
    if x.explainers:
        detail = "; ".join(m for _, m in x.explainers[:2])
        c.reason, c.detail = x.explainers[0][0], f"{c.detail}; {detail}" if c.detail else detail
        return
    if c.outcome != "miss":
        return
    path = c.expected_path or ""
    if path.startswith("sessions/") or path.endswith(".jsonl"):
        gate = session_gate(x, r.agent_id)
        if gate:
            c.reason, c.detail = "sessions_export", f"session canary {path} not recalled: {gate}"
            return
    dropped = _dropped_extra_paths(r, x)
    if dropped:
        c.reason, c.detail = "extrapaths_dropped", dropped
        return
    if r.builtin.degraded_reason and r.builtin.degraded_reason.startswith("fts5_missing"):
        c.reason, c.detail = "fts5_missing", r.builtin.degraded_reason
        return
    if _CJK.search(x.canary_token or "") or UNSPACED & set(count_scripts(x.canary_token or "")):
        engine = "builtin" if r.config.configured_backend != "qmd" else "qmd"
        how = (f"the FTS tokenizer is {x.builtin_tokenizer or 'unknown'} and this build's query planner matches the "
               "whole CJK run as one exact phrase") if engine == "builtin" else \
            "QMD's keyword index does not segment CJK text (newer qmd normalises it)"
        c.reason, c.detail = "cjk", f"a canary in an unspaced script (CJK, Thai…) missed: {how}"


def _dropped_extra_paths(r: Receipt, x: Extra) -> str | None:
    """Extra paths with files on disk that the index does not hold although the default roots are all in it."""
    entry = x.status.entry(r.agent_id) if x.status else None
    if entry is None or entry.files is None or x.default_root_files is None or not x.extra_path_files:
        return None
    with_files = {p: n for p, n in x.extra_path_files.items() if n > 0}
    if not with_files or entry.files > x.default_root_files:
        return None
    listed = ", ".join(f"{p} (0 of {n} indexed)" for p, n in with_files.items())
    return (f"the index holds {entry.files} files = the {x.default_root_files} under MEMORY.md + memory/; extra "
            f"paths with 0 indexed files: {listed}")


