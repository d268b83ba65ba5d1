"""The refinement: evidence the store and CLI merges do not read narrows the receipt (pure).

Signals in error texts, tool payloads (session transcripts), status texts and path explainers fill the
receipt fields the rules read — qmd reachability (transport, a mangled path, a crashing child, spawn
ENOENT), what the gateway really served (the one sticky-fallback rule), the builtin engine failing closed
(:mod:`.builtin`), vector readiness (:mod:`.vectors`), why a canary missed (:mod:`.canary`) — and records
every disagreement between a tool's own status and the probe in ``status_claims``. Never a verdict.
"""

from __future__ import annotations

import os
import re

from clawprobe.core import ledger
from clawprobe.core.evidence import Extra
from clawprobe.core.interpret.builtin import refine_builtin
from clawprobe.core.interpret.canary import narrow, sessions_unexported
from clawprobe.core.interpret.signals import RESOURCE_TAGS, Sig, claim, collect_signals, first
from clawprobe.core.interpret.vectors import refine_vectors
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.config import _get
from clawprobe.core.receipt import Evidence as EvidenceLine
from clawprobe.core.receipt import Finding, Receipt

_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|\\")
_CRASH_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL")


def _qmd_configured(r: Receipt) -> bool:
    return r.config.configured_backend == "qmd" and r.openclaw.has_qmd_backend is not False


def _mangled(configured: str, attempted: str) -> bool:
    """A Windows command path that reached spawn without its drive letter/separators (RW08)."""
    if not _WINDOWS_PATH.search(configured) or "\\" in attempted or "/" in attempted:
        return False
    flat = re.sub(r"[\\/:]", "", configured).lower()
    att = re.sub(r"[\\/:]", "", attempted).lower()
    stem = lambda p: re.sub(r"\.(cmd|exe|bat|ps1)$", "", p)
    return bool(att) and (stem(att) in stem(flat) or stem(flat).endswith(stem(att)[-12:]))


def _refine_qmd(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """qmd reachability from signals: transport, a mangled path, a crashing child, a spawn ENOENT."""
    q = r.qmd
    configured = q.command or r.config.qmd_command or "qmd"
    fb_cmds = [f.fallback_command for f in (x.status.stderr if x.status else None,
                                            x.search.stderr if x.search else None) if f and f.fallback_command]
    mcporter = _get(x.tree, "memory", "qmd", "mcporter", "enabled") is True
    transport = first(sigs, "transport_spawn")
    if mcporter and transport is not None and q.failure is None:
        q.resolves, q.failure = False, "transport_spawn"
        q.failure_detail = (f"memory.qmd.mcporter.enabled is true and the transport cannot be spawned: {transport.line} "
                            f"({transport.source}); direct qmd is not what OpenClaw runs")
    for s in sigs:
        if q.failure is not None:
            break
        attempted = s.value if s.tag == "spawn_enoent" else next(iter(fb_cmds), None) if s.tag == "command_shim" else None
        if attempted and _mangled(configured, attempted):
            q.resolves, q.failure = False, "command_path_mangled"
            q.failure_detail = f"configured {configured!r}; OpenClaw tried to spawn {attempted!r} ({s.source}: {s.line})"
    crash = next((f.crash_signal for f in (x.search.stderr if x.search else None, x.status.stderr if x.status else None)
                  if f and f.crash_signal in _CRASH_SIGNALS), None)
    binding = first(sigs, "native_binding")
    if q.failure is None and q.store_ok is not False and (crash or binding):
        q.store_ok, q.failure = False, "native_binding"
        q.failure_detail = (f"a qmd child crashed ({crash or (binding.line if binding else '')}) while OpenClaw ran it"
                            + (f"; `qmd --version` works ({q.version})" if q.version else "")
                            + " — the native SQLite binding does not match the Node that runs qmd")
    enoent = next((s for s in sigs if s.tag == "spawn_enoent" and s.value and
                   os.path.basename(s.value).startswith("qmd")), None)
    if q.failure is None and q.resolves is None and enoent is not None and enoent.value:
        pathlike = "/" in enoent.value or "\\" in enoent.value
        q.resolves, q.failure = False, "command_missing" if pathlike else "not_on_path"
        q.failure_detail = f"spawn {enoent.value} ENOENT ({enoent.source})"
    entry = x.status.entry(r.agent_id) if x.status else None
    if (q.resolves is False or q.store_ok is False) and entry is not None and entry.backend == "qmd":
        vec = " · vector available" if entry.vector_available else ""
        claim(r, "openclaw memory status", f"backend qmd{vec} (looks healthy)",
               f"qmd cannot run: {q.failure_detail or q.failure}", finding=True)
    indexed = (x.status_text or {}).get("indexed")
    if (q.resolves is False or q.store_ok is False) and isinstance(indexed, str) and indexed.startswith("0/"):
        claim(r, "openclaw memory status", f"Indexed: {indexed} (looks like an empty index)",
               f"qmd never ran: {q.failure or 'unavailable'} — not an index to rebuild")


def _served_by_builtin(t: tr.ToolResult) -> bool:
    return t.fallback_from == "qmd" or t.result_shape == "builtin" or t.backend == "builtin" \
        or (t.disabled and t.builtin_provider_error)


def _refine_gateway_backend(r: Receipt, x: Extra) -> None:
    """What the gateway's memory_search really served (transcripts), sticky fallback, wrong engine."""
    b = r.backend
    served = [t for t in x.tool_results if _served_by_builtin(t)]
    if served:
        newest = x.tool_results[-1]
        earliest = served[0]
        wrong = next((t for t in served if t.builtin_provider_error), None)
        if _served_by_builtin(newest):
            b.effective = "builtin"
        if wrong is not None:
            reason, detail = "wrong_engine", (f"builtin provider errors under backend qmd: {wrong.error}"
                                               " — the builtin engine answers, not QMD")
        elif r.qmd.failure == "transport_spawn":
            reason, detail = "transport_spawn", f"fallback from qmd: {earliest.fallback_reason}"
        elif earliest.fallback_reason and "timed out" in earliest.fallback_reason:
            reason, detail = "timeout", f"fallback from qmd: {earliest.fallback_reason}"
        else:
            reason = b.fallback_reason or "runtime_error"
            detail = f"memory_search served by builtin ({earliest.fallback_reason or earliest.result_shape or 'builtin'})"
        b.fallback_reason = b.fallback_reason if b.fallback_reason and reason == "runtime_error" else reason
        b.fallback_detail = b.fallback_detail or detail
        b.fallback_at = min([t for t in (b.fallback_at, earliest.at) if t is not None], default=None)
        ev = EvidenceLine(source="memory_search tool results (session transcripts)",
                              detail=f"{len(served)} of {len(x.tool_results)} recorded searches served by builtin", at=newest.at)
        if ev not in b.evidence:
            b.evidence.append(ev)
    if b.fallback_reason in ("runtime_error", "timeout") and b.fallback_detail:
        res = next((s for s in oc.error_signals(b.fallback_detail) if s.tag in RESOURCE_TAGS), None)
        if res is not None:
            b.fallback_reason = "resource"
            b.fallback_detail = f"QMD died on a resource limit and the gateway switched to builtin: {res.line}"
    sticky_fallback(r, x, served)  # after: a QMD that died on a resource limit is not merely stuck
    if b.effective == "builtin" and r.canary.result_shape == "qmd" and served:
        claim(r, "openclaw memory search (fresh CLI process)", "answered by qmd",
               "the gateway's own memory_search answers from builtin (transcripts)")


def sticky_fallback(r: Receipt, x: Extra, served: list[tr.ToolResult]) -> None:
    """The one sticky-fallback rule: a QMD fallback (``runtime_error``/``timeout``) becomes ``sticky`` when qmd
    works now (its store check passes, or direct qmd finds the canary) and the gateway still serves builtin —
    searches recorded after the fallback were served by builtin and none by qmd (session transcripts), or,
    without such transcripts, the running gateway's effective backend is builtin."""
    b = r.backend
    if b.fallback_reason not in ("runtime_error", "timeout"):
        return
    if not (r.qmd.store_ok is True or r.canary.direct_qmd_found is True):
        return
    since = b.fallback_at
    later = [t for t in served if t.at and since and t.at > since]
    if any(t.at and since and t.at > since and t.result_shape == "qmd" for t in x.tool_results):
        return  # it recovered
    if later and since is not None:
        b.fallback_reason = "sticky"
        b.fallback_detail = (f"qmd works now (direct probe), but the gateway has served builtin since "
                             f"{since.isoformat(timespec='seconds')} ({len(later)} later searches)")
    elif r.gateway.running and b.effective == "builtin":
        b.fallback_reason = "sticky"


def _refine_claims(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Status texts that disagree with the probe (healthy-with-misreport kinds, RW16/21/34/41/42)."""
    found = r.canary.outcome == "found"
    text = x.status_text or {}
    deep = x.status_deep.entry(r.agent_id) if x.status_deep else None
    entry = x.status.entry(r.agent_id) if x.status else None
    if r.config.configured_backend == "qmd" and r.config.search_mode == "search":
        emb = str(text.get("embeddings") or "")
        bad = (deep is not None and deep.embedding_ok is False) or emb.startswith("unavailable")
        if bad:
            said = f"Embeddings: {emb}" if emb else f"embeddingProbe.ok false ({deep.embedding_error if deep else None})"
            claim(r, "openclaw memory status --deep", said,
                   "searchMode search (BM25) needs no vectors — vectors not required in search mode", finding=found)
    vec = str(text.get("vector") or text.get("vector store") or "")
    if vec.startswith("unknown") or "unprobed" in vec:
        measured = "canary found through OpenClaw" + ("; --deep says ready" if deep and deep.embedding_ok else "")
        claim(r, "openclaw memory status", f"Vector: {vec}", measured + " — 'unknown' means not probed",
               finding=found)
    doctor = first([s for s in sigs if s.source == "`openclaw doctor`"], "provider_missing")
    if doctor is not None and r.config.configured_backend == "qmd" and r.backend.effective != "builtin":
        claim(r, "openclaw doctor", doctor.line, "QMD is the effective backend: builtin provider rules do not apply",
               finding=found)
    dirty = text.get("dirty") or (entry.dirty if entry is not None and entry.backend == "builtin" else None)
    if dirty in ("yes", True) and r.freshness.unindexed_files == [] and found:
        claim(r, "openclaw memory status", "Dirty: yes", "disk matches the index (in status mode Dirty may only "
                                                          "mean 'never indexed')")
    if entry is not None and entry.index_identity == "mismatched" and found:
        claim(r, "openclaw memory status --json", f"indexIdentity mismatched ({entry.index_identity_reason})",
               "keyword search returns the canary; semantic vectors are paused")


def refine(r: Receipt, x: Extra) -> Receipt:
    """Narrow ``r`` with the extra evidence ``x`` (pure; returns a new receipt). Never sets a verdict: it
    fills the receipt fields the rules read (``qmd``, ``backend``, ``builtin``, ``freshness``, ``vectors``,
    ``canary``), and records every disagreement between a tool's own status and the probe in
    ``status_claims`` (plus a ``status_misreport`` finding where the verdict stays healthy)."""
    out = r.model_copy(deep=True)
    sigs = collect_signals(x)
    if out.config.error is not None:
        return out
    if _qmd_configured(out):
        _refine_qmd(out, x, sigs)
        _refine_gateway_backend(out, x)
        refine_vectors(out, x, sigs)
        why = sessions_unexported(x, out.agent_id)
        if why is not None and not any(f.tag == "sessions_export" for f in out.findings):  # refine is idempotent
            out.findings.append(Finding(tag="sessions_export", source="config (memory.qmd.sessions)", message=why))
    elif out.config.configured_backend != "qmd":
        refine_builtin(out, x, sigs)
        refine_vectors(out, x, [s for s in sigs if s.tag in RESOURCE_TAGS])
    if out.freshness.last_proven_current is None and out.canary.outcome == "found" and out.canary.planted_at:
        out.freshness.last_proven_current = out.canary.planted_at
        out.freshness.method = (f"canary planted {out.canary.planted_at.isoformat(timespec='seconds')} came back "
                                "through OpenClaw (the index is current at least as of then)")
    if x.old_token_outputs:
        from clawprobe.core.canary import old_token_found

        out.canary.old_token_found = old_token_found(x.old_token_outputs)
    if out.canary.old_token_found and (out.freshness.unindexed_files or out.freshness.ghost_files):
        out.freshness.stale_reason = "ghost_content"
        note = "a retired canary token is still found"
        if note not in (out.freshness.detail or ""):
            out.freshness.detail = f"{note}; {out.freshness.detail}" if out.freshness.detail else note
    narrow(out, x, sigs)
    _refine_claims(out, x, sigs)
    for f in x.builtin_findings:
        if not any(g.tag == f.tag and g.message == f.message for g in out.findings):
            out.findings.append(f)
    from clawprobe.core.interpret.chats import chat_retrieval

    out.chat_retrieval = chat_retrieval(x.tool_results, x.log.scope_denials if x.log is not None else ())
    # the evidence ledger last: it classifies every signal against what the refinements above explained
    out.ledger = ledger.build(out, log=x.log, runs=ledger_runs(x),
                              tool_errors=[(t.error, t.at) for t in x.tool_results if t.error])
    ledger.refine_kinds(out, status=x.status, search=x.search, status_text=x.status_text, log=x.log,
                        tool_results=x.tool_results, orphans=x.reindex_orphans,
                        index_ok_at=[run.at for run in x.index_runs if run.rc == 0 and run.at is not None])
    return out


def ledger_runs(x: Extra) -> list[ledger.CliRun]:
    """The CLI calls of ``x`` as :class:`clawprobe.core.ledger.CliRun` (``openclaw doctor`` is advice, not
    evidence: its claims go to ``status_claims``)."""
    runs: list[ledger.CliRun] = []
    for res, what in ((x.status, "openclaw memory status"), (x.search, "openclaw memory search"),
                      (x.status_deep, "openclaw memory status --deep")):
        if res is not None:
            lines = tuple(res.stderr.lines) + tuple(res.stdout_noise) \
                + ((res.error,) if res.error and res.error not in res.stderr.lines else ())
            runs.append(ledger.CliRun(command=what, rc=res.rc, lines=lines, timed_out=res.timed_out))
    for st in [*x.index_runs, *x.outputs]:
        lines = tuple(ln.strip() for ln in st.output.splitlines() if ln.strip())[:200]
        runs.append(ledger.CliRun(command=st.command or st.name, rc=st.rc, lines=lines, timed_out=st.timed_out,
                                  at=st.at))
    return runs

