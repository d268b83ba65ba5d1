"""The evidence ledger (spec §10): every memory-related signal the real programs produced, accounted for once.

Inputs are what the probes already parsed — the gateway log's memory WARN/ERROR records
(:attr:`clawprobe.core.probes.openclaw_log.LogFacts.issues`), the stderr lines and exit status of each
``openclaw memory …``/``qmd …`` call, and the gateway's own ``memory_search`` tool results. Each signal is
classified (pure) as

* ``explained`` — a known text (a row of the one signature table,
  :data:`clawprobe.core.probes.signatures.TABLE`: an error signal or a text a rule reads otherwise);
* ``benign`` — listed with why it does not matter here (:data:`BENIGN`, or a condition of this receipt);
* ``unrecognized`` — clawprobe cannot judge it. The rule ``unrecognized_signal`` then keeps the receipt at
  best ``unverified``: an error about memory that nothing explains is never healthy.

Only lines that look like a problem are taken from stderr (:data:`PROBLEM`); every WARN/ERROR memory
record of the log counts. Log records older than the lease window before the check are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.exits import describe_exit
from clawprobe.core.probes.openclaw_log import LogFacts
from clawprobe.core.probes.signatures import known_tag, node_process_warning
from clawprobe.core.receipt import CLOCK_SKEW_S, Evidence, Finding, LedgerEntry, Receipt, StatusClaim
from clawprobe.core.redaction import redact_text

MAX_ENTRIES = 40
MAX_LINE = 300
#: how much of one record is read to classify it (a multi-line stack trace ends with the error that names it)
MAX_CLASSIFIED = 8192

#: A stderr line that reports a problem (case-insensitive words, or an errno-style code).
PROBLEM = re.compile(r"\b(?:error|errors|failed|failure|fatal|exception|panic|warn|warning|cannot|can't|unable|"
                     r"denied|refused|timed out|timeout|abort(?:ed|ing)?|crash(?:ed)?|killed|segfault|corrupt(?:ed)?|"
                     r"locked|unavailable|invalid|unexpected|unknown|missing|not found|mismatch(?:ed)?|broken|bad)\b|"
                     r"(?-i:\bE[A-Z]{4,}\b|\bSIG[A-Z]{3,}\b)", re.I)

#: Texts that never matter for memory search health: (pattern, why).
BENIGN: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\[openclaw\] The CLI command failed\.?$"), "OpenClaw's wrapper line; its reason is on its own line"),
    (re.compile(r"collection add (?:skipped|conflict) for memory-[a-z]+-\S+:.*(?:already exists|recreating managed)", re.I),
     "OpenClaw recreates its own managed collection when it already exists"),
    (re.compile(r"^Further duplicate warnings suppressed\.?$", re.I), "a repeat notice of the line before it"),
    # 2026.7.35 re-creates a managed collection its index lacks (a QMD home copied from another agent's: breaker
    # round 7, w14) and retries the search once — the canary's own search says whether the retry worked
    (re.compile(r"managed collection is missing; repairing collections and retrying", re.I),
     "OpenClaw re-creates a missing managed collection and retries once; the canary search proves the result"),
    # 2026.9.x times every open of an agent database and warns at ≥ 1 s (``thresholdMs``) — it opened; a busy
    # host (clawprobe's own parallel checks of four agents: breaker round 8, n09c) or a slow disk
    # 2026.7.35/9.6 retry an embedding call before they give up (``waitForEmbeddingRetry``: "retrying", "retrying
    # query", "retrying structured batch"); giving up is its own line ("Memory index failed …: fetch failed"),
    # which the rules read — and a shared default log holds other agents' and installs' retries too
    (re.compile(r"\bembeddings? retryable error; retrying\b[^;]{0,40}? in \d+\s*ms\b", re.I),
     "OpenClaw retries an embedding call; a failure after the retries is logged as its own line"),
    # 2026.9.6's launcher on a Node it cannot run on (a launcher pinned to Node 20) re-runs the same command on a
    # supported `node` it finds (PATH, its cached runtime): the command's own exit status and output are the
    # evidence (breaker round 23, #2)
    (re.compile(r"^openclaw: Retrying with .*\(.*current Node failed runtime admission\)\.?$", re.I),
     "OpenClaw's launcher re-ran the command on a supported Node; the command's own result is the evidence"),
    (re.compile(r"\bslow OpenClaw agent database open\b", re.I),
     "the agent database opened, only slower than OpenClaw's own 1 s notice threshold (a busy host or a slow "
     "disk); what memory search finds is proven by the canary, not by this timing"),
    # 2026.9.6 times its SQLite writes to the same agent database (subsystem ``session-sqlite``, WARN at ≥ 1 s,
    # the record naming the store's ``storePath``): a gateway's in-process restart after a config edit on a busy
    # host logged "slow SQLite session write" (operation session.canonical-validation.certify, 1199 ms) and a
    # healthy agent read ``unverified`` for the whole lease (breaker round 25). The write completed; a failed one
    # is its own line. Lock waits are not listed: a held lock is judged by the lock gate and its own symptoms.
    (re.compile(r"\bslow SQLite (?:session write|transaction hold|reclamation Worker operation)\b", re.I),
     "a write to the agent database completed, only slower than OpenClaw's own 1 s notice threshold (a busy "
     "host or a slow disk); what memory search finds is proven by the canary, not by this timing"),
)


_ENV_VAR = re.compile(r'env var "([^"]+)" at (\S+)')


def _env_warning(line: str, r: Receipt) -> str | None:
    """Why a missing-env-var config warning is benign here (a key memory search does not read), else None (a
    memory, embedding, provider or workspace key: the notes searched depend on it)."""
    m = _ENV_VAR.search(line)
    if m is None:
        return None
    key = m[2].rstrip(" -:,")
    provider = (r.config.provider or "").strip().lower()
    if any(w in key.lower() for w in ("memory", "embedding", "workspace")) or (
            provider and f"providers.{provider}." in key.lower()):  # the workspace holds the notes searched
        return None
    return f"a missing env var for {key}, a key memory search does not read"


def _scrub(line: str) -> str:
    """Redacted, and env var names withheld (a receipt never names the gateway's secret variables)."""
    return _ENV_VAR.sub(lambda m: f'env var "…" at {m[2]}', redact_text(line))


@dataclass(frozen=True)
class CliRun:
    """One recorded or live command: its ``command`` text, exit ``rc`` (negative = killed by that signal),
    whether it ``timed_out``, its stderr ``lines`` and when it ran (``at``)."""

    command: str
    rc: int | None
    lines: tuple[str, ...] = ()
    timed_out: bool = False
    at: datetime | None = None


#: lines a fault this receipt measured accounts for: (the fault, the text of its symptom, its tag) — a program
#: named qmd that is not qmd fails every qmd call ("qmd query returned invalid JSON", breaker round 10, s06); a
#: writer holding the builtin store makes every open wait and fail ("lock wait failed … lock-contention", s16)
_FAULT_SYMPTOMS: tuple[tuple[Any, re.Pattern[str], str], ...] = (
    (lambda r: r.qmd.failure == "not_qmd", re.compile(r"\bqmd\b", re.I), "not_qmd"),
    (lambda r: r.builtin.unavailable_reason == "index_locked",
     re.compile(r"lock[- ]contention|database is locked|lock wait", re.I), "index_locked"),
    # a store clawprobe's own read-only open found damaged (random bytes, cut short, malformed) fails every
    # OpenClaw memory command with SQLite's own words: the damage is measured, the lines are its symptom, not
    # output "clawprobe cannot judge" beside a verdict that judged it (breaker round 24)
    (lambda r: r.builtin.store_damage in ("not_sqlite", "truncated", "corrupt")
     or r.vectors.not_ready_reason in ("index_corrupt", "index_not_database"),
     re.compile(r"file is not a database|database disk image is malformed|SQLITE_(?:NOTADB|CORRUPT)", re.I),
     "index_corrupt"),
)


def notes_read_since(r: Receipt) -> bool:
    """Whether this check's own disk scan read every memory note since (it ran, and found none unreadable): an
    OpenClaw sync's "EACCES … open '<note>.md'" is then past — the permissions were fixed — and no fact (pure;
    source: ``coverage.measured``, ``freshness.stale_reason``)."""
    return r.coverage.measured is not None and r.freshness.stale_reason != "unreadable"


def classify(line: str, r: Receipt) -> tuple[str, str | None, str | None]:
    """(kind, tag, why) for one memory-related line on receipt ``r`` (pure)."""
    text = line.strip()
    for fault, rx, fault_tag in _FAULT_SYMPTOMS:
        if fault(r) and rx.search(text):
            return "explained", fault_tag, None
    if (why := _env_warning(text, r)) is not None:
        return "benign", "config_env", why
    for rx, why in BENIGN:
        if rx.search(text):
            return "benign", None, why
    tag = known_tag(text)  # the one signature table: an error signal or a text a rule reads otherwise
    provider = (r.config.provider or "").strip().lower()
    if tag == "fts_only" and provider == "none":
        return "benign", tag, "provider 'none' makes keyword-only search the configured choice"
    if tag == "vector_degraded" and provider == "none":
        return "benign", tag, "provider 'none': no vectors are expected"
    if re.search(r"qmd embed failed", text, re.I) and r.config.configured_backend == "qmd" \
            and r.config.search_mode == "search":
        return "benign", tag or "embed_failed", "searchMode search (BM25) needs no vectors"
    if tag == "note_unreadable" and notes_read_since(r):
        return "benign", tag, "clawprobe's disk scan read every memory note since: the note's permissions were fixed"
    if tag is not None:
        return "explained", tag, None
    if node_process_warning(text):  # a memory command's stderr carries the Node runtime's own warnings too
        return "benign", None, "a warning Node prints about its own process (listeners, deprecations, experimental " \
                               "features), naming no part of memory search"
    return "unrecognized", None, None


#: OpenClaw's log record of one ``openclaw memory <op>`` of one agent that failed ("memory status failed (ops-bot):
#: disk I/O error") — written by the CLI process into the same log as the gateway's records
_FAILED_OP = re.compile(r"\bmemory (status|search|index) failed \(([a-z0-9][a-z0-9_-]{0,63})\)", re.I)


def _redone(line: str, at: datetime | None, r: Receipt, runs: Sequence[CliRun]) -> str | None:
    """Why a logged failure of ``openclaw memory <op>`` for this agent is past, else ``None`` (pure): this check's
    own run of the same operation succeeded after it (exit 0, in time) — the measurement now, which a repair in
    between (the store moved aside and rebuilt) explains. Only a record older than this check (``at``); a record of
    another operation (the gateway's session write) is not re-done by any run of clawprobe's, so it stays."""
    m = _FAILED_OP.search(line)
    if m is None or at is None or m[2].lower() != r.agent_id.lower():
        return None
    ok = next((run for run in runs if f"memory {m[1].lower()}" in run.command and run.rc == 0 and not run.timed_out
               and (run.at is None or run.at >= at)), None)
    return (f"this check's own `{ok.command}` ran after it and succeeded: the failure is past (repaired since)"
            if ok is not None else None)


def _in_window(at: datetime | None, r: Receipt) -> bool:
    if at is None:
        return True
    return at >= r.checked_at - timedelta(seconds=max(r.lease.seconds, 60.0))


def build(r: Receipt, *, log: LogFacts | None = None, runs: Iterable[CliRun] = (),
          tool_errors: Iterable[tuple[str, datetime | None]] = ()) -> list[LedgerEntry]:
    """The ledger of ``r`` from the log facts, the CLI runs and the gateway's tool-result errors (pure).
    One entry per distinct (source, line); at most :data:`MAX_ENTRIES`, unrecognized entries first kept. A known
    error the log recorded for an ``openclaw memory`` operation that one of ``runs`` re-did successfully since is
    benign (:func:`_redone`)."""
    out: list[LedgerEntry] = []
    seen: set[tuple[str, str]] = set()
    runs = list(runs)

    def add(source: str, raw: str, level: str | None, at: datetime | None) -> None:
        full = _scrub(raw.strip()[:MAX_CLASSIFIED])
        line = full[:MAX_LINE]  # shown cut; judged whole (a qmd stack trace names its SqliteError at the end)
        if not line or (source, line) in seen:
            return
        seen.add((source, line))
        if at is not None and (at - r.checked_at).total_seconds() > CLOCK_SKEW_S:
            # written while clawprobe's own CLI probes ran (after ``checked_at``): kept, without a later time
            source, at = f"{source}, during clawprobe's probe", None
        kind, tag, why = classify(full, r)
        if kind == "explained" and (past := _redone(full, at, r, runs)) is not None:
            kind, why = "benign", past
        out.append(LedgerEntry(source=source, line=line, kind=kind, tag=tag, why=why, level=level, at=at))  # type: ignore[arg-type]

    if log is not None:
        for ev in log.issues:
            if _in_window(ev.at, r):
                add(f"gateway log ({ev.source})" if ev.source else "gateway log", ev.detail, ev.tag or None, ev.at)
    for run in runs:
        problems = [ln for ln in run.lines if PROBLEM.search(ln)]
        for ln in problems:
            add(f"stderr of `{run.command}`", ln, None, run.at)
        failed = run.timed_out or (run.rc not in (0, None))
        if not failed:
            continue
        explained = any(classify(ln, r)[0] == "explained" for ln in problems)
        what = describe_exit(run.rc, run.timed_out)
        if what.kind == "timed_out":  # clawprobe's own deadline: the probe errors / canary timeout say so
            out.append(LedgerEntry(source=f"exit status of `{run.command}`", line=what.text, kind="explained",
                                   tag="timed_out", at=run.at))
        elif what.kind != "exit" or not explained:
            # a crash or kill is explained only where a rule reads it (:func:`_signal_read`); elsewhere (a status
            # that printed its JSON and then died by SIGSEGV) the answer came from a process that did not end well
            read = what.kind != "exit" and _signal_read(run.command)
            out.append(LedgerEntry(source=f"exit status of `{run.command}`", line=what.text,
                                   kind="explained" if read or explained else "unrecognized",
                                   tag=what.kind if what.kind != "exit" else None, at=run.at))
    for err, at in tool_errors:
        if err and _in_window(at, r):
            add("memory_search tool result (session transcript)", err, None, at)
    unrec = [e for e in out if e.kind == "unrecognized"]
    rest = [e for e in out if e.kind != "unrecognized"]
    return (unrec + rest)[:MAX_ENTRIES]


def _signal_read(command: str) -> bool:
    """Whether a rule reads a crash/kill exit of ``command`` (pure): a ``memory search`` ended by a signal fails
    the canary search (its result carries ``exit -N`` as an error, and a native crash on a builtin index becomes
    ``search_crash``). Any other command ended by a signal (``memory status``, an index run, ``qmd``) is read by
    no rule, so its entry stays unrecognized: a complete-looking answer from a process that crashed or was
    killed is not evidence clawprobe understands."""
    return command == "openclaw memory search"


def unrecognized(r: Receipt) -> list[LedgerEntry]:
    """The entries clawprobe cannot judge."""
    return [e for e in r.ledger if e.kind == "unrecognized"]


def _status_entry(status: oc.StatusResult | None, agent_id: str) -> oc.StatusEntry | None:
    return status.entry(agent_id) if status is not None else None


def refine_kinds(r: Receipt, *, status: oc.StatusResult | None = None, search: oc.SearchResult | None = None,
                 status_text: dict[str, Any] | None = None, log: LogFacts | None = None,
                 tool_results: Sequence[tr.ToolResult] = (), index_ok_at: Sequence[datetime] = (),
                 orphans: Sequence[tuple[str, int]] = ()) -> None:
    """Receipt facts that the ledger and the parsed outputs prove by their *kind* (in place, pure):

    * a search that crashed natively (exit code/signal, :func:`describe_exit`) on a builtin index →
      ``builtin.unavailable_reason = search_crash`` (the crash is the measured cause, before a provider guess);
      one that printed hits first → its ledger entry unrecognized (the answer is not judged);
    * the vector store not loading (sqlite-vec) with a provider set → ``builtin.vector_extension_error``;
    * an index run refused by a held reindex lock → ``freshness.stale_reason = reindex_locked``;
    * index writes failing with SQLITE_BUSY after the last proven-current time → ``lock_contention``;
    * orphaned ``*.memory-reindex-*`` copies on disk → a ``reindex_orphans`` warning (with their size);
    * the gateway's own ``memory_search`` results disabled/unavailable after the last successful index run while
      the CLI finds the canary → the gateway runs a stale handle (``config_drift · stale_handle``);
    * status saying vector search is paused while the hits carry vector scores → a ``status_misreport``.
    """
    builtin = r.config.configured_backend != "qmd"
    entry = _status_entry(status, r.agent_id)
    provider = (r.config.provider or "").strip().lower()
    crash = next((e for e in r.ledger if e.tag == "native_crash" and "memory search" in e.source), None)
    if crash is not None and search is not None and search.hits:
        # it printed a whole answer, then crashed: no "crashes with no output", no index run to cure it — an
        # answer from a process that did not end well, which clawprobe does not judge (breaker round 24)
        crash.kind, crash = "unrecognized", None
    if builtin and crash is not None and r.builtin.unavailable_reason != "search_crash":
        before = r.builtin.unavailable_reason
        empty = entry is not None and entry.files == 0
        r.builtin.unavailable_reason = "search_crash"
        r.builtin.unavailable_detail = (f"`openclaw memory search` crashed: {crash.line}"
                                        + (f"; the index is empty ({entry.files} of {entry.scan_total_files} files "
                                           "indexed) — index first" if empty and entry is not None else "")
                                        + (f" (also seen: {before})" if before else ""))
    vec_err = entry.vector_error if entry is not None and entry.vector_available is False else None
    vec_line = next((e.line for e in r.ledger if e.tag == "vector_extension"), None)
    if log is not None and vec_line is None:
        vec_line = next((s.detail for s in log.signals if s.tag == "vector_extension"), None)
    if builtin and provider != "none" and (vec_err or vec_line):
        r.builtin.vector_extension_error = "; ".join(x for x in (f"status vector.loadError: {vec_err}" if vec_err else None,
                                                                 vec_line) if x)
    f = r.freshness
    lock = next((e for e in r.ledger if e.tag == "reindex_lock"), None)
    if lock is not None and f.last_proven_current is not None and f.stale_reason != "reindex_locked":
        f.stale_reason = "reindex_locked"
        note = f"an index run is refused: {lock.line} ({lock.source})"
        f.detail = note if not f.detail else f"{note}; {f.detail}"
    busy = [s for s in (log.signals if log else []) if s.tag == "db_locked"
            and (f.last_proven_current is None or s.at is None or s.at >= f.last_proven_current)]
    if busy and f.last_proven_current is not None and f.stale_reason in (None, "age"):
        f.stale_reason = "lock_contention"
        note = (f"{len(busy)} update(s) since {f.last_proven_current.isoformat(timespec='seconds')} died on a locked "
                f"database: {busy[-1].detail}")
        f.detail = note if not f.detail else f"{note}; {f.detail}"
    aborted = sum(1 for e in r.ledger if e.tag == "reindex_aborted")
    if (orphans or aborted >= 2) and not any(x.tag == "reindex_orphans" for x in r.findings):
        total = sum(n for _, n in orphans)
        names = ", ".join(p for p, _ in orphans[:3]) + (f" and {len(orphans) - 3} more" if len(orphans) > 3 else "")
        parts = [f"{len(orphans)} orphaned reindex copies ({total / 2**20:.0f} MiB: {names})" if orphans else None,
                 f"{aborted} aborted full reindex line(s) in the log" if aborted else None]
        r.findings.append(Finding(tag="reindex_orphans", source="agent state dir" if orphans else "gateway log",
                                  message="; ".join(p for p in parts if p) + " — disk at risk"))
    found = r.canary.outcome == "found"
    last_ok = max(index_ok_at, default=None)
    bad = [t for t in tool_results if (t.disabled or (t.error and "unavailable" in t.error.lower()))
           and t.at is not None and last_ok is not None and t.at > last_ok]
    if found and bad and last_ok is not None and not r.gateway.drift:
        t = bad[-1]
        r.gateway.drift, r.gateway.drift_reason = True, "stale_handle"
        r.backend.evidence.append(Evidence(
            source="memory_search tool results (session transcripts)",
            detail=(f"{len(bad)} gateway memory_search call(s) after the index run at "
                    f"{last_ok.isoformat(timespec='seconds')} came back disabled/unavailable ({t.error or 'disabled'}) "
                    "while the CLI finds the canary: the running gateway still reads the index it opened before"),
            at=t.at))
    paused = str((status_text or {}).get("vector search") or (status_text or {}).get("vector") or "")
    scored = [h for h in (search.hits if search else []) if h.vector_score]
    if "paused" in paused.lower() and scored and found:
        claim = f"Vector search: {paused}"
        if not any(c.claim == claim for c in r.status_claims):
            measured = f"search hits carry vector scores ({scored[0].vector_score:g}): vector search works"
            r.status_claims.append(StatusClaim(tool="openclaw memory status", claim=claim, measured=measured,
                                               agrees=False))
            r.findings.append(Finding(tag="status_misreport", source="openclaw memory status",
                                      message=f"{claim} — measured: {measured}"))


__all__ = ["BENIGN", "PROBLEM", "CliRun", "build", "classify", "refine_kinds", "unrecognized"]
