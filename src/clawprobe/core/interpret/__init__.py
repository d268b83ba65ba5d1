"""interpret: one pure function from the gathered :class:`~clawprobe.core.evidence.Evidence` to a
:class:`~clawprobe.core.receipt.Receipt` — every merge and refinement, one rule per fact. The live probe
(:func:`clawprobe.core.probe.fast`) and a recorded bundle (:mod:`clawprobe.core.recorded`) both call it, so a
recorded case tests the live path too. Judgement (verdicts) stays in :func:`clawprobe.core.diagnosis.diagnose`.

Order: OpenClaw version → config (an unloadable config stops here) → gateway (+ drift) → qmd binary
check → stores (:func:`.merge.merge_stores`) → log (:func:`.merge.merge_log`) → lease (it reads what the disk scan
found) → the CLI probes (their run
records parsed by :func:`.runs.slow_facts`, then :func:`.merge.merge_slow`, where the canary outcome is
decided) → the canary's trace in the index → the
refinement (:func:`.refine.refine`: signals, transcripts, sticky fallback, builtin, vectors, why a canary
missed, status claims).

Files, one job each: :mod:`.runs` (the CLI probes' outputs parsed),
:mod:`.signals` (error-text signals, status claims), :mod:`.merge` (stores, log, CLI),
:mod:`.canary` (outcome, direct qmd, trace, reasons), :mod:`.refine` (qmd reachability, gateway backend,
claims), :mod:`.builtin` (builtin engine), :mod:`.vectors` (vector readiness).
"""

from __future__ import annotations

from clawprobe.core.evidence import Evidence, Extra, HostRecord, SlowEvidence
from clawprobe.core.interpret.canary import canary_facts, direct_qmd, direct_qmd_found, ghost, tool_deadline, trace
from clawprobe.core.interpret.coverage import measured_stores, merge_coverage
from clawprobe.core.interpret.merge import merge_log, merge_slow, merge_stores
from clawprobe.core.interpret.refine import refine
from clawprobe.core.interpret.runs import SEARCH_HUNG, extra_facts, slow_facts
from clawprobe.core.interpret.signals import collect_signals
from clawprobe.core.lease import Lease
from clawprobe.core.locate import calver, has_qmd_backend, normalize_agent_id, relative_workspace
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes.config import config_facts, lease_for, memory_settings
from clawprobe.core.receipt import Evidence as EvidenceLine
from clawprobe.core.receipt import Finding, OpenClawFacts, Receipt, redact_receipt
from clawprobe.core.redaction import redact_text
from clawprobe.core.shell import word as shell_word
from clawprobe.core.state_faults import INDEX_MOUNT_FAULT, VOLUME_FULL_FAULT


def extra_of(ev: Evidence, slow: SlowEvidence | None = None) -> Extra:
    """The refinement's input: ``ev.extra`` with the config tree, the CLI probes (``slow``: their parsed
    facts, :func:`.runs.slow_facts`; default ``ev.slow``), the log and the canary token taken from the evidence
    itself."""
    slow = ev.slow if slow is None else slow
    return ev.extra.model_copy(update={
        "tree": ev.config.tree if ev.config.error is None else {},
        "status": slow.status if slow is not None else None,
        "search": slow.search if slow is not None else None,
        "log": ev.log,
        "canary_token": slow.canary.token if slow is not None and slow.canary is not None else None,
        "node_version": ev.extra.node_version or ev.node_version,
        **extra_facts(ev.extra),
    })


#: below this many free bytes the state dir's file system counts as full (SQLite cannot even grow its journal)
STATE_MIN_FREE_BYTES = 1 << 20


def newer_writer(ev: Evidence) -> str | None:
    """The release recorded in the state database (``Extra.state_db_writer``) when it is newer than the running
    ``openclaw --version`` (both calendar versions), else ``None`` (pure)."""
    writer, running = calver(ev.extra.state_db_writer), calver(ev.openclaw_version)
    return ev.extra.state_db_writer if writer is not None and running is not None and writer > running else None


def state_fault(host: HostRecord | None) -> str | None:
    """Why OpenClaw cannot write its state dir, from the host facts (pure): its file system is mounted
    read-only, or has less than :data:`STATE_MIN_FREE_BYTES` free; the agent's QMD index dir is on a read-only
    mount; the agent's store or QMD index dir is on a volume of its own with less than that free
    (:data:`VOLUME_FULL_FAULT`); ``None`` otherwise or when not measured."""
    if host is None:
        return None
    if host.state_read_only:
        return "the file system holding OpenClaw's state dir is mounted read-only (statvfs ST_RDONLY)"
    if host.state_free_bytes is not None and host.state_free_bytes < STATE_MIN_FREE_BYTES:
        return f"the file system holding OpenClaw's state dir is full ({host.state_free_bytes} bytes free)"
    if host.index_read_only:
        return (f"{INDEX_MOUNT_FAULT} {host.index_read_only} is on a read-only mount (statvfs ST_RDONLY; the "
                "state dir is writable): every qmd update fails SQLITE_READONLY")
    for which, d, free in (("store", host.store_dir, host.store_free_bytes),
                           ("index", host.index_dir, host.index_free_bytes)):
        if d and free is not None and free < STATE_MIN_FREE_BYTES:  # breaker round 8, n18 / n06
            return (f"{VOLUME_FULL_FAULT[which]} ({d}) is full ({free} bytes free; the state dir's file system has "
                    f"room): every write of the {'builtin store' if which == 'store' else 'QMD index'} fails "
                    "(ENOSPC), so new notes are never indexed")
    return None


def interpret_parts(ev: Evidence) -> tuple[Receipt, Extra | None]:
    """:func:`interpret` before the refinement: (receipt, the refinement's input); the input is ``None`` when
    the config does not load (nothing else is interpreted then)."""
    aid = normalize_agent_id(ev.agent_id)
    r = Receipt(agent_id=aid, checked_at=ev.checked_at)
    errors = list(ev.errors)
    version = ev.openclaw_version
    r.openclaw = OpenClawFacts(version=version, has_qmd_backend=has_qmd_backend(version), node_version=ev.node_version,
                               state_fault=state_fault(ev.extra.host), state_written_by=newer_writer(ev))
    r.config = config_facts(ev.config, aid, version, ev.workspace)
    if ev.gateway is not None:
        g = ev.gateway.model_copy(update={"log": ev.log})
        r.gateway = gw.interpret(g)
        if r.gateway.drift:
            r.gateway.drift_keys = r.gateway.drift_keys or []
            r.backend.evidence.append(EvidenceLine(source="gateway log", detail=gw.drift_detail(g) or "config not applied"))
    r.gateway.baseline_hash = ev.baseline_hash
    if ev.config.error is not None or r.config.error is not None:
        r.probe_errors = errors
        return r, None
    s = memory_settings(ev.config.tree, aid)
    qmd = s.configured_backend == "qmd" and r.openclaw.has_qmd_backend is not False
    if qmd and ev.qmd_binary is not None:
        r.qmd = qb.interpret(ev.qmd_binary)
        cmd = s.qmd_command_raw or s.qmd_command
        r.qmd.command = redact_text(cmd) if cmd else cmd
    if qmd or s.configured_backend != "qmd":
        merge_stores(r, ev, s, errors)
    merge_log(r, ev)
    changed = bool(r.freshness.unindexed_count or r.freshness.ghost_count)  # measured on disk by the stores' merge
    r.lease = lease_for(s, ev.log.normal_update_s(), "log: median qmd sync durationMs", changed_on_disk=changed) \
        if s.configured_backend == "qmd" \
        else Lease(interval_source="builtin: watcher/on-search sync (QMD default used; memory.qmd.* is not read)")
    slow = slow_facts(ev.slow, qmd) if ev.slow is not None else None
    x = extra_of(ev, slow)
    if slow is not None and normalize_agent_id(slow.agent_id) == aid:
        merge_slow(r, slow, s.search_mode, tool_deadline(collect_signals(x)))
    # a miss is traced in the index the search saw: measured before it, when a builtin search synced it after
    seen = (measured_stores(ev) or ev.stores) if r.canary.outcome == "miss" else ev.stores
    r.canary = ghost(trace(r.canary, ev.canary_record, seen), ev.canary_file, ev.canary_token_on_disk,
                     ev.canary_moved_dir)
    merge_coverage(r, ev, slow)
    if ev.canary_unrecorded and ev.canary_record is None and r.canary.outcome is None:  # no canary was searched
        r.findings.append(Finding(tag="canary_unrecorded", source="disk (workspace)",
                                  message=f"a clawprobe canary file is at {ev.canary_unrecorded}, but clawprobe holds "
                                          "no record of it for this workspace (the workspace moved with it, or "
                                          "clawprobe's data dir came from another host): plant one to prove the path"))
    rel = relative_workspace(ev.config.tree, aid, version)
    gp = ev.gateway.process if ev.gateway is not None else None
    if rel is not None and (gp is None or not gp.cwd):  # a running gateway's cwd resolved it (probe.workspace_of)
        r.findings.append(Finding(tag="workspace_relative", source="config (workspace)",
                                  message=f"the workspace {rel!r} is a relative path: OpenClaw resolves it against each "
                                          f"process's working directory, so a gateway started elsewhere reads other "
                                          f"notes; measured at {ev.workspace} — set an absolute path"))
    if not r.gateway.running and r.gateway.env_source == "shell" and s.configured_backend == "qmd":
        r.findings.append(Finding(tag="env_from_shell", source="process table",
                                  message="no running gateway and no service file found: qmd was resolved with this "
                                          "shell's PATH, which may differ from the service's"))
    if not r.gateway.running and r.gateway.env_source == "shell" and ev.gateway is not None and ev.gateway.elsewhere:
        other = ev.gateway.elsewhere[0]
        r.findings.append(Finding(tag="gateway_elsewhere", source="process table, systemd user units", message=(
            f"no gateway runs or is set up for {ev.gateway.state_dir}, but one serves {other}"
            + (f" (and {len(ev.gateway.elsewhere) - 1} more)" if len(ev.gateway.elsewhere) > 1 else "")
            + f" — a profile's install (--profile): check that one with clawprobe check --state-dir "
              f"{shell_word(other)}")))
    svc = ev.gateway.service if ev.gateway is not None else None
    if r.gateway.env_source in ("systemd", "launchd") and svc is not None \
            and svc.path_from in ("environment.d", "default") and s.configured_backend == "qmd":
        whose = "PATH from ~/.config/environment.d" if svc.path_from == "environment.d" else "default PATH"
        r.findings.append(Finding(tag="service_manager_path", source=svc.file,
                                  message=f"the service sets no PATH: it runs with the {svc.kind} manager's {whose} "
                                          f"({svc.env.get('PATH', '')}), not this shell's; qmd was resolved with it"))
    r.probe_errors += errors
    return r, x


def interpret(ev: Evidence) -> Receipt:
    """The receipt of one check from its evidence (pure; never raises for evidence that validated: a
    refinement bug lands in ``probe_errors`` and the unrefined receipt is returned). Every receipt leaves through
    :func:`~clawprobe.core.receipt.redact_receipt`, so no output path can skip the redaction."""
    r, x = interpret_parts(ev)
    if x is None:
        return redact_receipt(r)
    try:
        return redact_receipt(refine(r, x))
    except Exception as e:  # a refinement bug must not turn into a traceback
        out = r.model_copy(deep=True)
        out.probe_errors.append(f"refinement failed: {type(e).__name__}: {e}")
        return redact_receipt(out)


__all__ = ["SEARCH_HUNG", "canary_facts", "direct_qmd", "direct_qmd_found", "extra_of", "interpret", "interpret_parts",
           "refine", "slow_facts"]
