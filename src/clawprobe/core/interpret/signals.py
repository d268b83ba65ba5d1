"""Signals: every known error text in the evidence, with where it was seen (pure).

:func:`collect_signals` runs :func:`clawprobe.core.probes.openclaw_cli.error_signals` over the CLI probes'
stderr/JSON errors, recorded commands, log signal lines, transcripts' tool results and the kernel log;
the refinement steps pick the tags they need. :func:`claim` records a tool's status text that disagrees
with the probe (one place, idempotent).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from clawprobe.core.evidence import Extra
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.receipt import Finding, Receipt, StatusClaim

RESOURCE_TAGS = ("rerank_context", "heap_limit", "oom_killed")
PROVIDER_TAGS = ("provider_auth", "provider_missing", "provider_unreachable", "provider_http", "provider_url",
                 "local_plugin", "local_model")


class Sig(BaseModel):
    """A signal with where it was seen: ``tag``/``value``/``line`` (:class:`clawprobe.core.probes.openclaw_cli.Signal`),
    ``source`` (``stderr of openclaw memory search``, ``log``, ``tool result``…) and ``at`` (UTC) if known."""

    model_config = ConfigDict(extra="forbid")
    tag: str
    value: str | None = None
    line: str
    source: str
    at: datetime | None = None


def sigs_from(text: str, source: str, at: datetime | None = None) -> list[Sig]:
    """The signals in ``text``, each tagged with ``source`` and ``at``."""
    return [Sig(tag=s.tag, value=s.value, line=s.line, source=source, at=at) for s in oc.error_signals(text)]


def collect_signals(x: Extra) -> list[Sig]:
    """Every known error text in the extra evidence, with its source (pure)."""
    out: list[Sig] = []
    for res, what in ((x.status, "openclaw memory status"), (x.search, "openclaw memory search"),
                      (x.status_deep, "openclaw memory status --deep")):
        if res is None:
            continue
        out += [Sig(tag=s.tag, value=s.value, line=s.line, source=f"stderr of `{what}`") for s in res.stderr.signals]
        if res.error:
            out += sigs_from(res.error, f"`{what}` JSON error")
    stale = oc.search_staleness(x.search.stale_warning) if x.search is not None else None
    if stale is not None and stale[0] == "sync_error":  # the engine's last sync error, as the search reports it
        out += sigs_from(f"memory sync failed (search): {stale[1]}", "`openclaw memory search` JSON warning")
    for run in x.index_runs:
        out += sigs_from(run.output, f"`{run.command or 'openclaw memory index'}` (exit {run.rc})", run.at)
    if x.doctor is not None:
        out += sigs_from(x.doctor.output, "`openclaw doctor`", x.doctor.at)
    for q in x.outputs:
        out += sigs_from(q.output, f"`{q.command or q.name}` (exit {q.rc})", q.at)
    if x.log is not None:
        for ev in x.log.signals:
            out += [s.model_copy(update={"source": ev.source or "log"}) for s in sigs_from(ev.detail, "log", ev.at)]
    for t in x.tool_results:
        out += sigs_from(t.error or "", "memory_search tool result", t.at)
        if t.fallback_reason:
            out += sigs_from(f"fallback from {t.fallback_from}: {t.fallback_reason}", "memory_search fallback", t.at)
    if x.host is not None and x.host.kernel_log:
        out += sigs_from(x.host.kernel_log, "kernel log")
    return out



def first(sigs: Iterable[Sig], *tags: str) -> Sig | None:
    """The first signal with one of ``tags``."""
    return next((s for s in sigs if s.tag in tags), None)


def claim(r: Receipt, tool: str, claim: str, measured: str, finding: bool = False) -> None:
    """Record that ``tool`` says ``claim`` while the probe measured ``measured`` (once), plus a
    ``status_misreport`` finding when ``finding``."""
    if not any(c.tool == tool and c.claim == claim for c in r.status_claims):  # refine may run twice
        r.status_claims.append(StatusClaim(tool=tool, claim=claim, measured=measured, agrees=False))
    if finding and not any(f.tag == "status_misreport" and f.message.startswith(claim) for f in r.findings):
        r.findings.append(Finding(tag="status_misreport", source=tool, message=f"{claim} — measured: {measured}"))

