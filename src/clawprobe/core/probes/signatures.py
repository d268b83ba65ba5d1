"""Every memory-related text OpenClaw and qmd print that clawprobe knows: one table, :data:`TABLE`.

Each row is a :class:`Signature` — a sub-reason ``tag``, its ``pattern`` and its ``role``:

* ``signal`` — an error text the interpreters read as a fact (:func:`clawprobe.core.probes.openclaw_cli.error_signals`
  returns these, in table order; :data:`SIGNATURES` is that view);
* ``known`` — a text a rule or a refinement reads through another fact (the config_drift rule through the
  drift reader's reload lines, the fallback through the log's switch lines …): the evidence ledger
  (:mod:`clawprobe.core.ledger`) counts it as explained, and nothing else matches it.

The ledger classifies a line by the first row that matches (:func:`known_tag`), signals first — so a tag
with both a ``signal`` and a ``known`` row (``provider_http``, ``provider_unreachable``, ``local_model``) is
explained on the wider ``known`` wording too, but judged as a fact only on the ``signal`` one. Sources: the
real-world corpus (RW07–RW44: Windows/macOS/GPU/remote provider wording) and real runs here
(tests/data/recorded, 2026.7.35 / 2026.9.6 / qmd 2.8.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Role = Literal["signal", "known"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# OpenClaw's config-reload handler (the gateway log): the drift reader (clawprobe.core.probes.openclaw_log.drift)
# reads each of these; RELOAD_LINE is any of them.
RELOAD_CHANGE = re.compile(r"config change detected; evaluating reload \((.*)\)")
RELOAD_NOT_APPLIED = ("config reload disabled", "hot mode ignoring", "config reload skipped", "config reload failed")
RELOAD_APPLIED = ("config hot reload applied", "config change applied", "gateway ready")
#: Every reload-handler text the drift reader reads (a change seen, waiting for a restart, applied or not): the
#: ledger counts these as explained — the config_drift rule judges them through ``config_changes``.
RELOAD_LINE = re.compile("|".join([RELOAD_CHANGE.pattern, r"config change requires gateway restart",
                                   *map(re.escape, RELOAD_NOT_APPLIED + RELOAD_APPLIED)]), re.I)


@dataclass(frozen=True)
class Signature:
    """One known text: the sub-reason ``tag``, whether it is a ``signal`` or only ``known`` (module doc), and
    its ``pattern`` (searched in one line; its first capture group, if any, is the signal's value)."""

    tag: str
    role: Role
    pattern: re.Pattern[str]


S = Signature

# signal rows: error texts OpenClaw and qmd print — CLI stderr, the JSON-lines log, ``memory_search`` tool payloads, qmd's
# own stderr — mapped to sub-reason tags. Sources: the real-world corpus (RW07–RW44: Windows/macOS/GPU/remote
# provider wording) and real runs here (tests/data/recorded, 2026.7.35 / 2026.9.6 / qmd 2.8.3). The first
# capture group, when present, is kept as ``Signal.value`` (a command, a count, a timeout, a collection).
TABLE: tuple[Signature, ...] = (
    S("transport_spawn", "signal", re.compile(r"\bspawn (?:\S+ )?EINVAL\b|\bmcporter\b.*\b(?:EINVAL|ENOENT|spawn)\b", re.I)),
    S("spawn_enoent", "signal", re.compile(r"\bspawn (\S+) ENOENT\b")),
    S("command_shim", "signal", re.compile(r"\.cmd\b.*\b(?:no executable|not found|could not (?:find|resolve))", re.I)),
    S("native_binding", "signal", re.compile(r"(Could not locate the bindings file|NODE_MODULE_VERSION|ERR_DLOPEN_FAILED|"
                                             r"better_sqlite3\.node|failed \(signal SIG(?:SEGV|BUS|ILL)\))")),
    S("session_expired", "signal", re.compile(r"session expired\W+skipping (\d+) remaining chunks", re.I)),
    S("rerank_context", "signal", re.compile(r"failed to create any rerank context", re.I)),
    S("heap_limit", "signal", re.compile(r"JavaScript heap out of memory|Reached heap limit|heap limit Allocation failed", re.I)),
    S("oom_killed", "signal", re.compile(r"Out of memory: Killed process|\boom-kill|\bOOM[- ]killed", re.I)),
    S("db_malformed", "signal", re.compile(r"database disk image is malformed", re.I)),
    S("db_locked", "signal", re.compile(r"database is locked|SQLITE_BUSY", re.I)),
    S("db_cantopen", "signal", re.compile(r"unable to open database file|SQLITE_CANTOPEN|disk I/O error|SQLITE_IOERR", re.I)),
    S("fts5_missing", "signal", re.compile(r"no such module: fts5", re.I)),
    # 2026.7.35's index run when qmd left no index where OpenClaw gave it XDG dirs (never indexed, or a qmd
    # wrapper that keeps its index elsewhere: ``qmd_unavailable · index_elsewhere``; the index is measured directly)
    S("qmd_index_missing", "signal", re.compile(r"QMD index file not found", re.I)),
    # OpenClaw's own stores refuse to open until its doctor migrates or repairs them (2026.9.6: "OpenClaw state
    # database schema migration required (…) at …; run openclaw doctor --fix to migrate it", "SQLite schema is
    # incomplete or noncanonical for …; run openclaw doctor --fix to repair it", "… agent database … uses schema
    # version 1; run openclaw doctor --fix to migrate persisted media before using it")
    S("doctor_fix", "signal", re.compile(r"\brun openclaw doctor --fix to (?:migrate|repair)\b", re.I)),
    # an older build over a newer build's state (a rollback: 2026.7.35 over 2026.9.6's "uses newer schema version
    # 18; this OpenClaw build supports 1"): no doctor of this build can migrate a database forward it cannot read
    S("state_newer", "signal", re.compile(r"OpenClaw (?:state|agent) database (\S+) uses newer schema version \d+; "
                                          r"this OpenClaw build supports \d+", re.I)),
    S("not_regular_file", "signal", re.compile(r"must be a regular file", re.I)),
    # a memory note the gateway's user may not read (2026.9.6: "[memory] sync failed (search): Error: EACCES:
    # permission denied, open '/…/memory/synced.md'"): every sync stops there (breaker round 7, w17)
    S("note_unreadable", "signal", re.compile(r"\b(?:EACCES|EPERM)\b[^']*'([^']+\.md)'", re.I)),
    # Node's fetch refuses a provider baseUrl with user:password@ (2026.9.6: "Memory index failed (main): Request
    # cannot be constructed from a URL that includes credentials") — the provider config is the fault, every run
    S("provider_url", "signal", re.compile(r"cannot be constructed from a URL that includes credentials", re.I)),
    S("batch_timeout", "signal", re.compile(r"embeddings? batch timed out after (\d+)\s*s\b", re.I)),
    S("provider_auth", "signal", re.compile(r"No API key found for provider|missing-provider-auth|configured but unavailable|"
                                            r"Incorrect API key|\b401\b|"
                                            # 2026.9.6, a remote baseUrl without a key: "openai embedding credentials
                                            # are not configured for http://…/v1. Set memory.search.remote.apiKey …"
                                            r"embedding credentials are not configured", re.I)),
    # "Unknown memory embedding provider: voyage" — a provider this build does not ship (local: its own tag)
    S("provider_missing", "signal", re.compile(r"no embeddings? provider|Unknown memory embedding provider: (?!local\b)",
                                               re.I)),
    # the provider answers with an HTTP refusal (403 forbidden, 404 unknown model/endpoint, 429 rate limit or
    # quota): one classifier for every wording, only in an embedding/provider context
    S("provider_http", "signal", re.compile(r"(?:embedding|embeddings|provider|openai|gemini|voyage|mistral|ollama)\b.*?"
                                            r"(?<![\d.])(403|404|429)(?![\d.])|insufficient_quota|quota exceeded|"
                                            r"rate[_ ]limit(?:ed)?\b.*\b(?:embedding|embeddings)", re.I)),
    # the provider's endpoint cannot be reached (Node's fetch): only in a memory sync/index/embedding context,
    # other subsystems (channels, web tools) fail fetches too (2026.9.6: "Memory index failed (main): fetch failed |
    # bad port", "Memory index repair failed: fetch failed …" — breaker round 10, s02)
    S("provider_unreachable", "signal", re.compile(r"(?:memory (?:sync|index|index repair) failed|embedding|embeddings)"
                                                   r".*?\b(fetch failed|ECONNREFUSED|"
                                                   r"ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT)\b", re.I)),
    # 2026.6.2+ ships local GGUF embeddings as the llama.cpp provider plugin: without it `local` is unknown (and no
    # local.modelPath can help — breaker round 12, s15); every such line is a local_model signal too (next row)
    S("local_plugin", "signal", re.compile(r"Unknown memory embedding provider: local\b", re.I)),
    S("local_model", "signal", re.compile(r"Unknown memory embedding provider: local|llama-cpp-provider|node-llama-cpp|"
                                          r"quantization|Failed to load (?:the )?(?:embedding )?model", re.I)),
    S("runtime_sqlite", "signal", re.compile(r"node:sqlite is unavailable|ERR_UNKNOWN_BUILTIN_MODULE|No such built-in module: node:sqlite",
                                             re.I)),
    # the extension file named beside a load failure on the same line ("Error loading shared library vec0.so: cannot
    # open shared object file"); not the healthy "Vector path: …/vec0.so" of a human `memory status --deep`, which
    # OpenClaw also writes to its log as one INFO record (breaker round 14, F1: that record looped the repair)
    S("vector_extension", "signal", re.compile(r"sqlite-vec (?:is )?(?:unavailable|not available|failed to load|could not be loaded)|"
                                               r"(?:error|fail\w*|cannot|unable)[^\n]*\bvec0\.(?:so|dylib|dll)\b|"
                                               r"\bvec0\.(?:so|dylib|dll)\b[^\n]*(?:error|fail\w*|cannot|unable|no such file|"
                                               r"not found|undefined symbol|wrong ELF)", re.I)),
    S("vector_degraded", "signal", re.compile(r"chunks_vec not updated|Vector recall degraded|no vector dimensions resolved", re.I)),
    S("collection_missing", "signal", re.compile(r"Collection not found: ([\w.-]+)")),
    S("search_timeout", "signal", re.compile(r"timed out after (\d+(?:\.\d+)?\s*(?:ms|s))\b", re.I)),
    # known rows: texts beyond the error signals, each read by a rule or a refinement
    S("invalid_config", "known", re.compile(r"Invalid config at |Unrecognized keys?: ", re.I)),
    S("config_reload", "known", RELOAD_LINE),  # read by openclaw_log.drift (config_drift)
    S("local_model", "known", re.compile(r"local embeddings? (?:is )?unavailable|local model load failed", re.I)),
    S("provider_unavailable", "known", re.compile(r"embedding provider \S+ (?:is )?unavailable", re.I)),
    S("fallback", "known", re.compile(r"falling back to builtin|switching to builtin index", re.I)),
    S("scope_denied", "known", re.compile(r"denied by scope", re.I)),
    # 2026.7.35 will not re-add its managed collection while another collection holds that path and pattern
    # ("collection add conflict for memory-dir-main: qmd reported existing collection notes, … refusing automatic
    # rebind"): read from the store itself (qmd_index.squatting_collections → retrieval_failed · collection_renamed)
    S("collection_conflict", "known", re.compile(r"collection add conflict for memory-(?:root|dir)-\S+:.*"
                                                 r"refusing automatic rebind", re.I | re.S)),
    S("fts_only", "known", re.compile(r"Skipping memory file sync in FTS-only mode", re.I)),
    S("index_stats", "known", re.compile(r"failed to read qmd index stats", re.I)),
    S("reindex_aborted", "known", re.compile(r"Memory index changed while full reindex was building|full reindex (?:was )?aborted",
                                             re.I)),
    S("reindex_lock", "known", re.compile(r"reindex[- ]lock|lock is held|index lock (?:is )?held", re.I)),
    S("index_identity", "known", re.compile(r"vector search (?:is )?paused|index identity|chunking[_ ]version|"
                                            r"index metadata is missing", re.I)),
    S("provider_unreachable", "known", re.compile(r"\bfetch failed\b", re.I)),
    S("provider_http", "known", re.compile(r"\b(?:40[134]|429|5\d\d)\b.*\b(?:embedding|embeddings|provider|model)|"
                                           r"\b(?:embedding|embeddings|provider)\b.*\b(?:40[134]|429|5\d\d)\b|insufficient_quota|"
                                           r"rate[_ -]limit", re.I)),
)

#: The ``signal`` rows as ``(tag, pattern)``, in table order — what ``error_signals`` matches.
SIGNATURES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((s.tag, s.pattern) for s in TABLE if s.role == "signal")


#: a warning Node prints about its own process (``process.emitWarning``, written ``(node:<pid>) [<code>] <Name>Warning:
#: …`` or ``(node:<pid>) Warning: …``, and re-logged by OpenClaw's console logger): event listeners, deprecations,
#: experimental features, the process's own heap — the runtime's word, not a memory-search subsystem's
NODE_PROCESS_WARNING = re.compile(r"^\s*\(node:\d+\)\s+(?:\[[A-Z0-9_]+\]\s+)?[A-Za-z]*Warning\b")
#: the parts of memory search a line can name; the bare word "memory" is not one ("memory leak", "heap memory":
#: the process's RAM)
SEARCH_PARTS = re.compile(r"\bqmd\b|\bembedding|\bsqlite-vec\b|\bchunks_vec\b|reindex|memory_search|memory-core|"
                          r"\bmemory (?:search|index|status|backend|plugin)\b|\bfts5?\b|openclaw-agent\.sqlite", re.I)


def node_process_warning(text: str) -> bool:
    """A Node process warning (:data:`NODE_PROCESS_WARNING`) that names no memory-search part (:data:`SEARCH_PARTS`):
    about the Node process, whatever words it uses ("Possible EventEmitter memory leak detected": its listeners) —
    not a memory-search signal (breaker round 21, finding 6: it made a healthy install ``unrecognized_signal``)."""
    t = _ANSI.sub("", text or "")
    return NODE_PROCESS_WARNING.search(t) is not None and SEARCH_PARTS.search(t) is None


def known_tag(line: str) -> str | None:
    """The tag of the first :data:`TABLE` row whose pattern is found in ``line`` (ANSI colour stripped), else
    ``None``: what the evidence ledger calls explained."""
    text = _ANSI.sub("", line or "")
    return next((s.tag for s in TABLE if s.pattern.search(text)), None)
