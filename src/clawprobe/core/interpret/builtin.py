"""The builtin SQLite engine failing closed, degrading, or unable to sync (RW30–RW40 kinds), from signals
and status facts (pure)."""

from __future__ import annotations

import re

from clawprobe.core.evidence import Extra
from clawprobe.core.interpret.signals import PROVIDER_TAGS, Sig, first, sigs_from
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.receipt import Receipt

_NODE_VERSION = re.compile(r"\bNode (?:v)?(\d+\.\d+\.\d+)")


def _fails_closed(x: Extra, sigs: list[Sig]) -> Sig | None:
    """A provider signal while search returned nothing (or the tool said disabled)."""
    provider = first(sigs, *PROVIDER_TAGS)
    if provider is None:
        return None
    s = x.search
    failed = s is not None and (s.rc not in (0, None) or s.error is not None or not s.hits)
    disabled = any(t.disabled for t in x.tool_results)
    return provider if failed or disabled else None


def refine_builtin(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """The builtin engine failing closed, degrading, or unable to sync (RW30–RW40 kinds)."""
    b = r.builtin
    provider = (r.config.provider or "").strip().lower()
    entry = x.status.entry(r.agent_id) if x.status else None

    def unavailable(tag: str, detail: str) -> None:
        if b.unavailable_reason is None:
            b.unavailable_reason, b.unavailable_detail = tag, detail

    if (s := first(sigs, "runtime_sqlite")) is not None:
        node = x.node_version or (m[1] if (m := _NODE_VERSION.search(s.line)) else None)
        unavailable("runtime", f"the runtime has no node:sqlite{f' (Node {node})' if node else ''}: {s.line} "
                               f"({s.source}); the provider error is a red herring")
    if (s := first(sigs, "db_malformed")) is not None:
        unavailable("index_corrupt", f"{s.line} ({s.source})")
    locked = next((s for s in sigs if s.tag == "db_locked" and "log" not in s.source), None)
    if locked is not None and x.search is not None and not x.search.hits:
        unavailable("index_locked", f"{locked.line} ({locked.source}): a writer holds the index lock")
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
    if (s := _fails_closed(x, sigs)) is not None:
        tag = "local_model" if provider == "local" or s.tag == "local_model" else \
            "explicit_provider" if r.config.provider_explicit else "implicit_provider"
        unavailable(tag, f"{s.line} ({s.source})")
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
    _builtin_unsynced_canary(r, x, entry)


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


