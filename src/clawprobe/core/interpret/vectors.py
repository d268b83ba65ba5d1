"""Vector readiness from the qmd status text, embed time-outs and partial embeds an old qmd hides
(RW17–RW22), plus resource-limit findings (pure)."""

from __future__ import annotations

from typing import Any

from clawprobe.core.evidence import Extra
from clawprobe.core.interpret.signals import RESOURCE_TAGS, Sig, claim, first
from clawprobe.core.receipt import Finding, Receipt


def refine_vectors(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Vector readiness: qmd status text, embed time-outs, partial embeds an old qmd hides (RW17–RW22)."""
    v = r.vectors
    qs = x.qmd_status
    if qs is not None and qs.total is not None:
        v.documents = v.documents if v.documents is not None else qs.total
        v.vector_rows = v.vector_rows if v.vector_rows is not None else qs.vectors
        v.pending = v.pending if v.pending is not None else qs.pending
        v.orphans = v.orphans if v.orphans is not None else qs.orphaned
    expired = first(sigs, "session_expired")
    if expired is not None or (v.partial_documents and qs is not None and qs.pending == 0):
        v.partial_documents = max(v.partial_documents or 0, 1)
        if v.pending is None:
            v.pending = qs.pending if qs is not None else None
        v.not_ready_reason = "status_misreport"
        skipped = f"embed skipped {expired.value} chunks ({expired.line})" if expired else \
            f"{v.partial_documents} documents have fewer chunks than total_chunks"
        v.detail = f"{skipped}; documents stay partly embedded"
        if qs is not None and qs.pending == 0:
            claim(r, "qmd status", "Pending: 0 (no Pending line)", skipped + " — partly embedded documents")
    killed = next((f for f in r.findings if f.tag == "stale_embed_lock"), None)
    if killed is not None and (v.pending or v.has_vector_table is False) \
            and v.not_ready_reason in (None, "pending", "no_vector_store", "model_download"):
        v.not_ready_reason = "embed_interrupted"
        note = f"an embed run was killed before it finished ({killed.message})"
        if note not in (v.detail or ""):
            v.detail = note + (f"; {v.detail}" if v.detail else "")
    timeouts: list[Any] = [e for e in (x.log.embed_failures if x.log else []) if "timed out" in e.detail]
    timeouts += [s for s in sigs if s.tag == "search_timeout" and "embed" in s.line and "qmd" in s.line]
    vc_fail = v.pending is None or v.pending > 0 or v.has_vector_table is False
    if timeouts and vc_fail and v.not_ready_reason != "status_misreport":
        t = timeouts[-1]
        v.not_ready_reason = "embed_timeout"
        limit = f" (memory.qmd.update.embedTimeoutMs = {r.config.embed_timeout_s * 1000:.0f} ms)" \
            if r.config.embed_timeout_s else ""
        v.detail = f"embed killed at its timeout{limit}: {t.detail if hasattr(t, 'detail') else t.line}" \
            + (f"; {v.pending} pending" if v.pending else "")
    n = x.qmd_update_notice
    if n is not None and v.pending is not None and n != v.pending:
        claim(r, "qmd update", f"{n} unique hashes need vectors",
               f"{v.pending} pending for the configured model {v.embed_model or '?'} "
               "(the notice counts against qmd's default model)", finding=v.pending == 0)
    res = [s for s in sigs if s.tag in RESOURCE_TAGS]
    host = x.host
    embedding_trouble = v.not_ready_reason in ("embed_timeout", "embed_interrupted") or bool(timeouts)
    if embedding_trouble and host is not None and host.cpus and host.loadavg and host.loadavg[0] > 2 * host.cpus:
        res.append(Sig(tag="load", line=f"load {host.loadavg[0]:.1f} on {host.cpus} cores", source="host"))
    if res and not any(f.tag == "resource" for f in r.findings):
        r.findings.append(Finding(tag="resource", source=res[0].source,
                                  message="; ".join(dict.fromkeys(s.line for s in res[:3]))))


