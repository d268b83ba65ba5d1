"""Words for tags: the one table that turns a sub-reason, finding or canary tag into words an operator reads,
and a verdict into its short title. Every screen and the ``check``/``walk`` text say tags through here; the
``--json`` output, the metrics and the records keep the ids (ids are for machines).

A leaf module (it imports only the verdicts), so probes and interpret can use it too;
:mod:`clawprobe.core.view` re-exports it for the screens.
"""

from __future__ import annotations

from clawprobe.core.verdicts import TITLES, Verdict

#: sub-reason tags → words an operator reads (unknown tags: underscores become spaces)
REASON_WORDS: dict[str, str] = {
    "command_missing": "qmd command missing",
    "not_on_path": "qmd not on gateway PATH",
    "probe_context": "probe ran in another context",
    "implicit_provider": "no provider chosen",
    "explicit_provider": "pinned provider fails",
    "gateway_provider": "gateway uses another provider",
    "no_canary": "no canary planted",
    "miss": "canary not found",
    "age": "index older than its lease",
    "parse": "config does not parse",
    "retired_keys": "QMD keys on a builtin-only OpenClaw",
    "backend_key": "retired memory.backend key",
    "baseline_changed": "config changed since the baseline",
    "status_misreport": "status misreports the backend",
    "stale_manager": "stale memory manager",
    "manager_failed": "memory manager failed",
    "binary_unavailable": "qmd binary unavailable",  # a QMD→builtin fallback's tags (BackendFacts.fallback_reason)
    "sticky": "still on the builtin fallback",
    "index_bloat": "index bloated",
    "extra_path_missing": "an extra memory path is missing",
    "extra_path_not_markdown": "an extra memory file is not Markdown",
    "workspace_relative": "the workspace path is relative",
    "state_unwritable": "the state dir cannot be written",
    "note_encoding": "notes saved as UTF-16",
    "source_excluded": "the notes are not a memory source",
    "no_collections": "QMD has no collection to index",
    "workspace_missing": "the workspace is gone",
    "collection_pending": "a configured notes dir is not in the index",
    "root_missing": "a configured notes path does not exist",
    "root_emptied": "a configured notes path is empty, its notes still indexed",
    "index_old_schema": "the index was built by qmd 1.x",
    "workspace_near_name": "a same-looking workspace name exists",
    "workspace_other_home": "the notes are under another HOME than the gateway's",
    "gateway_elsewhere": "the gateway serves another state dir",
    "store_foreign": "the store is another agent's",
    "index_foreign_collections": "the QMD index holds another agent's notes",
    "sessions_export_shared": "agents share one session export dir",
    "unreadable": "a memory note cannot be read",
    "transcripts_not_imported": "session transcripts not imported",
    "model_download": "model still downloading",
    "download_stalled": "model download stalled",
    "search_error": "the canary search failed",
    "pending": "embeddings pending",
    "tokenizer_script": "tokenizer can't match the notes' script",
    "notes_without_text": "indexed notes hold no searchable text",
    "chat_denied": "some chats denied memory",
    "chat_disabled": "group chats get memory disabled",
    "gateway_runtime": "the service's Node cannot run OpenClaw",
    "state_downgrade": "state written by a newer OpenClaw",
    "index_identity": "index built with other settings",
    "newer_layout": "config written by a newer OpenClaw",
    "canary_edited": "the canary file was edited by hand",
    "binary_notes": "notes that are not text",
    "memory_not_dir": "memory/ is not a directory",
    "index_elsewhere": "qmd keeps its index elsewhere",
    "index_path_env": "the gateway's INDEX_PATH moves qmd's index",
    # rules and interpret tags without words before (each tag an operator can meet gets words here)
    "batch_timeout": "an embedding batch timed out",
    "canary_gone": "the canary file is gone",
    "notes_dir_moved": "the notes directory was moved",
    "canary_not_indexed": "canary not indexed yet",
    "canary_unrecorded": "no record of the planted canary",
    "collection_missing": "a QMD collection is missing",
    "command_shim": "the qmd command is a failing shim",
    "db_cantopen": "the index cannot be opened",
    "db_locked": "the index is locked",
    "db_malformed": "the index is damaged",
    "doctor_fix": "OpenClaw asks for doctor --fix",
    "embed_failed": "embedding failed",
    "embed_interrupted": "embedding was interrupted",
    "embed_timeout": "embedding timed out",
    "env_from_shell": "gateway environment from a login shell",
    "extrapaths_dropped": "extra memory paths dropped",
    "fts5_missing": "SQLite lacks full-text search (FTS5)",
    "keyword_search_off": "keyword search is switched off and no vectors are left",
    "ghost_content": "deleted notes still indexed",
    "index_locked": "the index is locked",
    "index_corrupt": "the index is damaged",
    "index_not_database": "the index is not a database file",
    "index_inconsistent": "indexed notes its search cannot return",
    "index_unreadable": "the index cannot be read",
    "local_model": "the local embedding model cannot load",
    "local_plugin": "the local embedding plugin is missing",
    "missing_evidence": "not enough evidence",
    "log_blind": "the gateway's log cannot show a fallback",
    "never_indexed": "never indexed",
    "not_dir": "not a directory",
    "not_regular_file": "not a regular file",
    "not_retrieved": "canary not retrieved",
    "note_unreadable": "a note cannot be read",
    "openclaw_failed": "the openclaw CLI failed",
    "openclaw_not_found": "no openclaw CLI found",
    "plugins_disabled": "plugins disabled",
    "plugin_off": "the memory plugin is off",
    "entry_disabled": "its plugin entry is disabled",
    "no_key": "no API key for the pinned provider",
    "denied": "plugins.deny blocks it",
    "not_allowed": "plugins.allow leaves it out",
    "tool_denied": "the agent's tool policy removes memory_search",
    "tool_policy_unknown": "the agent's tool policy could not be evaluated",
    "search_disabled": "memory search switched off",
    "probe_side_effect": "the probe changed the index",
    "reindex_locked": "a reindex holds the lock",
    "reindex_orphans": "orphaned reindex copies",
    "runtime_error": "OpenClaw hit a runtime error",
    "search_not_invoked": "QMD search never called",
    "search_timeout": "the search timed out",
    "snippet_cut": "each hit's text is cut away",
    "service_manager_path": "PATH set by the service manager",
    "sessions_export": "session transcripts not recalled",
    "export_dir_shared": "agents share one session export dir",
    "source_behind": "a notes source is behind",
    "spawn_enoent": "qmd could not be started",
    "stale_embed_lock": "a stale embedding lock",
    "stale_handle": "a stale file handle",
    "state_newer": "state written by a newer OpenClaw",
    "store_crash": "the store crashed",
    "sync_aborted": "the last sync was aborted",
    "transport_spawn": "the search process could not start",
    "unrecognized_signal": "output clawprobe does not recognise",
    "not_understood": "evidence clawprobe does not understand",
    "unsearchable_notes": "notes the search cannot match",
    "vector_extension": "the vector extension is missing",
    "wal_pending": "a crashed writer's journal is pending",
    "wrong_engine": "answered by the wrong engine",
    "wrong_source": "found in the wrong file",
    "wrong_store": "searched the wrong store",
    "collection_renamed": "notes held by a collection of another name",
    "vector_miss": "vector search missed it",
    "dirty": "notes changed since the last index",
    "timeout": "timed out",
    "resource": "out of resources",
    "cjk": "an unspaced script (CJK, Thai…)",
    "fallback": "fell back to builtin",
}


#: (verdict, tag) → words where a tag id is shared by verdicts that mean different things by it
#: (``unreadable``: a memory note under ``stale_index``, the config file itself under ``config_invalid``)
VERDICT_REASON_WORDS: dict[tuple[Verdict, str], str] = {
    (Verdict.CONFIG_INVALID, "unreadable"): "the config file cannot be read",
}


def reason_words(tag: str | None, verdict: Verdict | None = None) -> str | None:
    """The readable words for a sub-reason tag (``not_on_path`` → ``qmd not on gateway PATH``); with
    ``verdict``, the words that tag has under that verdict when they differ (:data:`VERDICT_REASON_WORDS`)."""
    if tag is None:
        return None
    if verdict is not None and (verdict, tag) in VERDICT_REASON_WORDS:
        return VERDICT_REASON_WORDS[(verdict, tag)]
    return REASON_WORDS.get(tag, tag.replace("_", " "))


def verdict_words(verdict: Verdict) -> str:
    """The verdict's short title, its explanatory parenthesis dropped (``fallback_active`` → ``Fallback active``)."""
    return TITLES[verdict].split(" (", 1)[0]


def headline(verdict: Verdict, reason: str | None) -> str:
    """The verdict and its sub-reason in words: ``Fallback active · memory manager failed``."""
    words = reason_words(reason, verdict)
    return verdict_words(verdict) + (f" · {words}" if words else "")


#: the groups the freshness detail lists changed files in, in order: label, the change kinds it lists (one table:
#: :func:`clawprobe.core.probes.workspace.freshness_detail` writes them, :func:`clawprobe.core.view.detail_kinds`
#: reads them back for pane 3)
FRESHNESS_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("unreadable", ("unreadable",)),
    ("changed since indexed", ("changed",)),
    ("new, not indexed", ("new",)),
    ("deleted but still indexed", ("deleted",)),
)
