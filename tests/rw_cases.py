"""The real-world case table (shared/cases/real-world.md RW01–RW44) plus clawprobe's own variants per kind.

One :class:`RwCase` per test: the expected verdict id and sub-reason tag, the key words the next action must
say (``say``: searched in title, command, why and steps), the words it must NOT recommend (``not_say``:
searched in what it tells the operator to do — title, command, step titles and commands — never in the
"don't" text), the key words of its "don't" part (``dont``), which kinds it covers, and where its evidence
comes from (``recorded`` = a bundle in tests/data/rw, ``real`` = the real programs on the test bed,
``real+recorded`` = a real state with one recorded piece). Imported by the tests and by scripts/rw_table.py
(which renders docs/rw-cases.md from the receipts the tests produced).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("symlinks", "hidden paths", "case mismatch", "timeouts vs misses", "scope", "provider rules",
         "retired keys", "corrupt or locked index", "index identity paused", "one bad file aborting a sync",
         "index bloat", "version eras", "per-source coverage")


@dataclass(frozen=True)
class RwCase:
    """One row: ``id`` (``RW07`` or ``RW07-linux`` for a variant), what it is, the expectation and its evidence."""

    id: str
    title: str
    verdict: str
    tag: str | None
    evidence: str
    say: tuple[str, ...] = ()
    not_say: tuple[str, ...] = ("rebuild", "--force")
    dont: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    bundle: str | None = None
    test: str = ""
    variant_of: str | None = None

    @property
    def rw(self) -> str:
        """The corpus id (``RW07`` for ``RW07-linux``; the variant's own id for kind-only variants)."""
        m = re.match(r"RW\d\d", self.id)
        return m[0] if m else self.id


_ALL: list[RwCase] = []


def case(id: str, title: str, verdict: str, tag: str | None, evidence: str, **kw) -> RwCase:
    c = RwCase(id, title, verdict, tag, evidence, **kw)
    _ALL.append(c)
    return c


NO_FIX = ("rebuild", "--force", "memory index")
R = "recorded"
REAL = "real"
HYB = "real+recorded"

# ---- config -----------------------------------------------------------------------------------------------
case("RW01", "memory.backend holds a plugin name (2026.7.35 schema)", "config_invalid", "schema", REAL,
     say=("allowed value", "doctor --fix"), not_say=NO_FIX, dont=("plugins.slots.memory",), kinds=("version eras",),
     test="test_rw01_plugin_name_in_memory_backend")
case("RW01-wrong-type", "memory.qmd.limits.timeoutMs written as \"4s\" (a string)", "config_invalid", "schema", REAL,
     say=("allowed value",), not_say=NO_FIX, test="test_rw01_variant_wrong_type_and_misplaced_key", variant_of="RW01")
case("RW02", "raw newline inside a JSON5 string at line 15", "config_invalid", "parse", REAL,
     say=("line", "config validate"), not_say=NO_FIX, dont=("rewrite", "normalise"),
     test="test_rw02_raw_newline_in_generated_config")
case("RW02-include", "a $include target that does not exist", "config_invalid", "include", REAL,
     say=("config validate",), not_say=NO_FIX, dont=("rewrite",), test="test_rw02_variant_unreadable_kinds",
     variant_of="RW02")
case("RETIRED-96", "2026.9.6 with the 2026.7 QMD config (real recording)", "backend_retired", "retired_keys", R,
     say=("doctor --fix", "2026.7.35"), not_say=("memory index",), dont=("back it up",),
     kinds=("retired keys", "version eras"), bundle="RETIRED-96", test="test_retired_keys_on_2026_9_6")
case("RETIRED-backend-only", "2026.8.2, agent writer, only memory.backend left over", "backend_retired", "retired_keys",
     R, say=("doctor --fix",), not_say=("memory index",), kinds=("retired keys",), bundle="RETIRED-backend-only",
     test="test_retired_variant_backend_key_only")
case("RW03", "gateway keeps the manager of the old config (sessionMemory added)", "config_drift", "stale_manager", R,
     say=("restart", "re-probe"), not_say=("--force", "delete"), dont=("force-rebuild",), bundle="RW03",
     test="test_rw03_gateway_runs_old_memory_config")
case("RW03-reload-off", "reload mode off, agent ops, extraPaths changed", "config_drift", "stale_manager", R,
     say=("restart",), not_say=("--force", "delete"), bundle="RW03-reload-off", test="test_rw03_variant_reload_off",
     variant_of="RW03")
case("IDENTITY-drift", "index identity paused after a provider change the gateway never applied", "config_drift",
     "stale_manager", R, say=("restart",), not_say=("--force",), dont=("index-identity",),
     kinds=("index identity paused",), bundle="IDENTITY-drift", test="test_identity_paused_under_drift")

# ---- qmd reachability ------------------------------------------------------------------------------------
case("RW04a", "configured qmd command removed (2026.7.35)", "qmd_unavailable", "command_missing", REAL,
     say=("gateway's environment", "memory.qmd.command"), dont=("interactive shell",),
     test="test_rw04a_configured_command_removed")
case("RW04-deep", "2026.3 status --deep says healthy while the binary is gone", "qmd_unavailable", "command_missing", R,
     say=("memory.qmd.command",), bundle="RW04-deep", kinds=("version eras",),
     test="test_rw04_status_deep_misreports_before_2026_3_31", variant_of="RW04")
case("RW04b", "bare qmd not on the gateway's PATH (2026.7.35)", "qmd_unavailable", "not_on_path", REAL,
     say=("gateway's environment",), test="test_rw04b_bare_qmd_not_on_gateway_path")
case("RW04c", "qmd query times out at limits.timeoutMs (10000 ms)", "retrieval_failed", "timeout", R,
     say=("timeoutMs", "search"), not_say=("rebuild", "--force"), dont=("rebuild",), kinds=("timeouts vs misses",),
     bundle="RW04-c", test="test_rw04c_query_timeout")
case("RW04c-fallback", "the same timeout with a switch to builtin", "fallback_active", "timeout", R,
     say=("timeoutMs", "restart"), dont=("fallback",), kinds=("timeouts vs misses",), bundle="RW04-c-fallback",
     test="test_rw04c_variant_timeout_switches_to_builtin", variant_of="RW04")
case("RW05", "systemd unit PATH has no node for qmd's #!/usr/bin/env node (2026.4)", "qmd_unavailable", "service_path",
     R, say=("Environment=PATH", "restart"), dont=("login shell",), bundle="RW05", kinds=("version eras",),
     test="test_rw05_systemd_unit_path_lacks_node")
case("RW05-era-735", "same launcher, real: 2026.4 rule flags it, 2026.7.35 appends its node dir", "qmd_unavailable",
     "service_path", REAL, say=("Environment=PATH",), kinds=("version eras",),
     test="test_rw05_variant_real_launcher_per_era", variant_of="RW05")
case("RW06", "LaunchAgent PATH, /usr/local/bin/qmd wrapper needs node", "qmd_unavailable", "service_path", R,
     say=("PATH",), dont=("login shell",), bundle="RW06", test="test_rw06_launchd_minimal_path")
case("RW07", "Windows mcporter: spawn EINVAL, tool shows fallback.from qmd", "qmd_unavailable", "transport_spawn", R,
     say=("mcporter.enabled false",), dont=("builtin answers",), bundle="RW07", test="test_rw07_mcporter_spawn_einval")
case("RW07-linux", "mcporter enabled on Linux but not installed (spawn mcporter ENOENT)", "qmd_unavailable",
     "transport_spawn", R, say=("mcporter.enabled false",), bundle="RW07-linux",
     test="test_rw07_variant_mcporter_missing_on_linux", variant_of="RW07")
case("RW08", "Windows .cmd path reaches spawn mangled; Indexed 0/N", "qmd_unavailable", "command_path_mangled", R,
     say=("bare `qmd`", "PATH"), not_say=NO_FIX, dont=("0/N",), bundle="RW08", test="test_rw08_cmd_path_mangled")
case("RW08-forward-slashes", "agent work, D:/tools/qmd/qmd.cmd mangled", "qmd_unavailable", "command_path_mangled", R,
     say=("bare `qmd`",), not_say=NO_FIX, bundle="RW08-forward-slashes", test="test_rw08_variant_forward_slashes",
     variant_of="RW08")
case("RW09", "qmd --version works, every store command SIGSEGVs (Node 20 binding)", "qmd_unavailable",
     "native_binding", REAL, say=("Reinstall", "Node"), not_say=("rebuild", "memory index --force"),
     dont=("--version",), test="test_rw09_native_binding")

# ---- fallback ----------------------------------------------------------------------------------------------
case("RW10", "memory-alt collection clash switched QMD to builtin (2026.4)", "fallback_active", "case_mismatch", R,
     say=("MEMORY.md", "restart"), dont=("delete the QMD index", "fallback off"), kinds=("case mismatch",),
     bundle="RW10", test="test_rw10_lowercase_collection_clash")
case("RW10-research", "agent research with both MEMORY.md and memory.md (2026.4.9)", "fallback_active",
     "case_mismatch", R, say=("MEMORY.md",), kinds=("case mismatch",), bundle="RW10-research",
     test="test_rw10_variant_other_agent_both_files", variant_of="RW10")
case("RW10-lowercase", "only a lowercase memory.md (real 2026.7.35 QMD)", "retrieval_failed", "case_mismatch", REAL,
     say=("MEMORY.md",), kinds=("case mismatch",), test="test_rw10_lowercase_memory_md_real", variant_of="RW10")
case("RW11", "one early QMD timeout, gateway sticks to builtin while qmd works", "fallback_active", "sticky", R,
     say=("restart the gateway",), dont=("healthy",), bundle="RW11", test="test_rw11_sticky_fallback")
case("RW12", "backend qmd, tool errors about OpenAI/Gemini/Voyage keys", "fallback_active", "wrong_engine", R,
     say=("QMD manager",), not_say=("api key", "rebuild"), dont=("API keys",), bundle="RW12",
     kinds=("provider rules",), test="test_rw12_builtin_engine_under_qmd")
case("RW12-401", "memorySearch.enabled false + a 401 from the builtin adapter", "fallback_active", "wrong_engine", R,
     say=("QMD manager",), not_say=("api key",), bundle="RW12-401", test="test_rw12_variant_401_wording",
     variant_of="RW12")

# ---- retrieval --------------------------------------------------------------------------------------------
case("RW13", "QMD fresh, direct qmd finds the canary, OpenClaw returns []", "retrieval_failed", "search_not_invoked",
     R, say=("upgrade OpenClaw",), not_say=("rebuild", "collection add", "--force"), dont=("rebuild",), bundle="RW13",
     test="test_rw13_openclaw_never_runs_the_search")
case("RW13-ops", "agent ops: OpenClaw returns other files, never the canary", "retrieval_failed", "search_not_invoked",
     R, say=("upgrade OpenClaw",), bundle="RW13-ops", test="test_rw13_variant_other_hits", variant_of="RW13")
case("RW14", "Collection not found: collections live in the default qmd store", "retrieval_failed", "wrong_store",
     HYB, say=("managed collections", "memory index --agent"), not_say=("collection add", "--force"),
     dont=("default XDG", "copy the default index"), test="test_rw14_collections_in_default_store")
case("RW14-2026.2", "the 2026.2 search failure alone (recorded)", "retrieval_failed", "wrong_store", R,
     say=("managed collections",), not_say=("collection add",), bundle="RW14",
     test="test_rw14_variant_recorded_2026_2_failure", variant_of="RW14")
case("RW23", "VRAM exhausted: every qmd query fails at rerank", "retrieval_failed", "resource", R,
     say=("search mode",), bundle="RW23", test="test_rw23_rerank_context_vram")
case("RW23-fallback", "the rerank failure switched the gateway to builtin", "fallback_active", "resource", R,
     say=("gateway log",), bundle="RW23-fallback", test="test_rw23_variant_fallback_outranks", variant_of="RW23")
case("RW24", "builtin healthy, tool deadline 15 s < real 16–21 s", "retrieval_failed", "timeout", R,
     say=("deadline", "provider"), not_say=("rebuild", "--force", "memory.qmd"), kinds=("timeouts vs misses",),
     bundle="RW24", test="test_rw24_tool_deadline_shorter_than_latency")
case("RW24-within-deadline", "QMD answers in 3.1 s under a 4 s deadline", "healthy", None, R,
     say=("Nothing to repair",), kinds=("timeouts vs misses",), bundle="RW24-within-deadline",
     test="test_timeout_kind_slow_but_within_deadline_is_healthy", variant_of="RW24")
case("RW24-slow-miss", "a 3.9 s empty answer without a timeout line: a miss (hidden canary)", "retrieval_failed",
     "hidden_path", R, say=("hidden",), kinds=("timeouts vs misses", "hidden paths"), bundle="RW24-slow-miss",
     test="test_timeout_kind_slow_miss_is_not_a_timeout", variant_of="RW24")
case("RW24-seconds-wording", "agent analyst, 2026.9: \"timed out after 8s\" (seconds)", "retrieval_failed", "timeout",
     R, kinds=("timeouts vs misses",), bundle="RW24-seconds-wording", test="test_timeout_kind_seconds_wording",
     variant_of="RW24")
case("RW25", "QMD + older qmd: Chinese canary never found by BM25", "retrieval_failed", "cjk", R,
     say=("upgrade qmd", "vsearch"), not_say=("trigram", "tokenizer", "rebuild", "--force"), dont=("tokenizer",),
     bundle="RW25", test="test_rw25_qmd_cjk_bm25")
case("RW26", "builtin trigram: a CJK question still misses (real 2026.7.35)", "retrieval_failed", "cjk", REAL,
     say=("literal keywords",), not_say=("rebuild", "--force"), dont=("--force",), test="test_rw26_builtin_cjk_question")
case("RW27", "CLI probe denied by QMD scope (real 2026.7.35)", "scope_denied", "probe_context", REAL,
     say=("allowed context", "scope"), not_say=("rebuild",), dont=("retrieval failure",), kinds=("scope",),
     test="test_rw27_cli_probe_denied_by_scope")
case("RW27-unknown-context", "2026.3 wording, agent support, CJK term", "scope_denied", "probe_context", R,
     say=("scope",), kinds=("scope",), bundle="RW27-unknown-context", test="test_rw27_variant_2026_3_wording",
     variant_of="RW27")
case("RW28", "session canary never recalled: qmd.sessions.enabled off", "retrieval_failed", "sessions_export", R,
     say=("sessions.enabled",), not_say=("rebuild", "api key"), bundle="RW28", test="test_rw28_sessions_never_exported")
case("RW28-builtin-sources", "builtin agent ops: sources lacks \"sessions\"", "retrieval_failed", "sessions_export", R,
     bundle="RW28-builtin-sources", test="test_rw28_variant_sources_gate", variant_of="RW28")
case("RW29", "symlinked memory/ dir and MEMORY.md (real 2026.7.35 builtin)", "retrieval_failed", "symlink", REAL,
     say=("real file",), kinds=("symlinks",), test="test_rw29_symlinked_memory_dir")
case("RW29-96-file", "one symlinked file inside memory/ (real 2026.9.6)", "retrieval_failed", "symlink", REAL,
     say=("real file",), kinds=("symlinks", "version eras"), test="test_rw29_variant_single_file_on_2026_9_6",
     variant_of="RW29")
case("RW32", "watcher drops extra-path files after a manual index", "retrieval_failed", "extrapaths_dropped", R,
     say=("watcher cycle",), dont=("rebuild",), bundle="RW32", test="test_rw32_extra_paths_dropped")
case("RW44", "cross-collection query dies at the JS heap limit", "retrieval_failed", "resource", R,
     say=("search mode",), bundle="RW44", test="test_rw44_heap_limit")
case("RW44-fallback", "after the heap crash the gateway fell back to builtin", "fallback_active", "resource", R,
     bundle="RW44-fallback", test="test_rw44_variant_fallback_outranks", variant_of="RW44")
case("HIDDEN-qmd", "canary under memory/.drafts/ (real 2026.7.35 QMD)", "retrieval_failed", "hidden_path", REAL,
     say=("hidden",), kinds=("hidden paths",), test="test_hidden_path_canary_real")

# ---- freshness ----------------------------------------------------------------------------------------------
case("RW15", "deleted note still returned until an update (real qmd 2.8.3)", "stale_index", "ghost_content", REAL,
     say=("managed update", "memory index --agent"), not_say=("--force", "qmd update"), dont=("qmd update", "rebuild"),
     test="test_rw15_deleted_note_still_served")
case("RW15-edit", "edited note: old token still found, new token missing", "stale_index", "ghost_content", REAL,
     say=("managed update",), not_say=("--force", "qmd update"), test="test_rw15_variant_edited_note",
     variant_of="RW15")
case("RW16", "builtin: fresh codeword not found, status Dirty: yes (2026.8)", "stale_index", "dirty", R,
     say=("memory index --agent",), not_say=("--force",), bundle="RW16", test="test_rw16_dirty_codeword_recorded")
case("RW16-real", "builtin 2026.7.35: a file added after the index (search would sync it)", "stale_index", "dirty",
     REAL, say=("memory index --agent",), not_say=("--force",), test="test_rw16_new_file_after_index_real",
     variant_of="RW16")
case("RW30", "one symlinked USER.md aborts every sync (2026.8)", "stale_index", "sync_aborted", R,
     say=("non-regular", "managed update"), dont=("--force",), kinds=("one bad file aborting a sync", "symlinks"),
     bundle="RW30", test="test_rw30_symlinked_root_file_aborts_sync")
case("RW30-memory-md", "the case's variant: MEMORY.md is the symlink", "stale_index", "sync_aborted", R,
     say=("non-regular",), kinds=("one bad file aborting a sync",), bundle="RW30-memory-md",
     test="test_rw30_variant_memory_md", variant_of="RW30")
case("RW30-daily-note", "agent ops, 2026.9.1: a symlinked daily note deep in memory/", "stale_index", "sync_aborted",
     R, say=("non-regular",), kinds=("one bad file aborting a sync", "symlinks"), bundle="RW30-daily-note",
     test="test_rw30_variant_nested_daily_note", variant_of="RW30")
case("RW36", "Ollama ready, but index batches time out at 120 s", "stale_index", "embed_timeout", R,
     say=("batch size", "timeout"), dont=("Embeddings: ready",), bundle="RW36", test="test_rw36_ollama_batches_time_out")
case("RW36-never-indexed", "the same, nothing ever indexed", "memory_unavailable", "embed_timeout", R,
     say=("batch",), dont=("Embeddings: ready",), bundle="RW36-never-indexed", test="test_rw36_variant_never_indexed",
     variant_of="RW36")

# ---- vectors ------------------------------------------------------------------------------------------------
case("RW17", "QMD vsearch: embeds keep getting interrupted (real, lock left behind)", "vector_not_ready",
     "embed_interrupted", REAL, say=("embedTimeoutMs", "searchMode"), not_say=("embed -f", "rebuild", "--force"),
     dont=("embed -f",), test="test_rw17_embed_interrupted")
case("RW17-search-mode", "control: the same pending state in search mode", "healthy", "stale_embed_lock", REAL,
     say=("Nothing to repair",), test="test_rw17_control_search_mode_is_healthy", variant_of="RW17")
case("RW18", "real: embeds killed at embedTimeoutMs (3000 ms here; the default embed model is not in the offline "
     "cache)", "vector_not_ready", "embed_timeout", REAL, say=("embedTimeoutMs", "searchMode search"),
     not_say=("embedTimeoutMs 3600000", "rebuild", "--force"), dont=("raise embedtimeoutms",),
     test="test_rw18_embed_killed_at_timeout")
case("RW18-vps", "CPU VPS: killed at 120 s, load 16 on 6 cores", "vector_not_ready", "embed_timeout", R,
     say=("embedTimeoutMs",), dont=("starve",), bundle="RW18", test="test_rw18_variant_cpu_vps_recorded",
     variant_of="RW18")
case("RW19", "old qmd: session expiry leaves partial embeds, no Pending line", "vector_not_ready", "status_misreport",
     R, say=("upgrade qmd",), not_say=("embed -f", "--force", "rebuild"), dont=("Pending: 0",), bundle="RW19",
     test="test_rw19_old_qmd_partial_embeds")
case("RW20", "custom embed model: qmd update notice never clears (real + recorded hit)", "healthy", "status_misreport",
     HYB, say=("Nothing to repair",), not_say=("embed", "rebuild"), test="test_rw20_update_notice_misreports")
case("RW20-2026.5", "recorded: notice 21193 while qmd status has no Pending (custom Qwen3 embed model)", "healthy",
     "status_misreport", R, say=("Nothing to repair",), not_say=("embed", "rebuild"), bundle="RW20",
     test="test_rw20_variant_recorded_2026_5", variant_of="RW20")
case("RW21", "QMD search mode, 0 vectors, canary found (real 2026.7.35)", "healthy", "status_misreport", HYB,
     say=("Nothing to repair",), not_say=("embed", "provider", "rebuild"), test="test_rw21_search_mode_needs_no_vectors")
case("RW21-2026.5", "status --deep says \"Embeddings: unavailable\" (recorded 2026.5)", "healthy", "status_misreport",
     R, say=("Nothing to repair",), not_say=("embed", "provider"), bundle="RW21",
     test="test_rw21_variant_unavailable_wording", variant_of="RW21")
case("RW22", "query mode, embeddings done, generate/rerank models missing; OOM kill", "vector_not_ready",
     "model_download", HYB, say=("models", "XDG"), not_say=("qmd pull", "--force"), dont=("restart repeatedly",),
     test="test_rw22_first_semantic_query_models")
case("RW43", "orphaned vectors bloat the QMD index (real qmd 2.8.3)", "healthy", "index_bloat", REAL,
     say=("cleanup --dry-run", "XDG_CACHE_HOME"), not_say=("--force", "rebuild"), dont=("rebuild",),
     kinds=("index bloat",), test="test_rw43_orphaned_vectors")

# ---- builtin engine ---------------------------------------------------------------------------------------------
case("RW31", "extraPaths sweeps in node_modules docs (real 2026.7.35)", "healthy", "index_bloat", REAL,
     say=("narrow the extra",), not_say=("rebuild", "cleanup", "--force"), kinds=("index bloat",),
     test="test_rw31_extra_paths_dependency_bloat")
case("RW31-96-venv", "2026.9.6: a project's .venv site-packages dominate", "healthy", "index_bloat", REAL,
     say=("narrow the extra",), kinds=("index bloat", "version eras"), test="test_rw31_variant_venv_on_2026_9_6",
     variant_of="RW31")
case("RW33", "explicit provider openai, no key (real 2026.7.35 fails closed)", "memory_unavailable",
     "explicit_provider", REAL, say=("credentials",), not_say=("--force",), dont=("keyword-only",),
     kinds=("provider rules",), test="test_rw33_explicit_provider_down")
case("RW33-96", "2026.9.6, the same explicit setting (real recording)", "memory_unavailable", "explicit_provider", R,
     say=("credentials",), kinds=("provider rules", "version eras"), bundle="RW33-96",
     test="test_rw33_variant_2026_9_6_recording", variant_of="RW33")
case("RW33-mistral", "agent legal, explicit mistral answers 401", "memory_unavailable", "explicit_provider", R,
     say=("credentials",), kinds=("provider rules",), bundle="RW33-mistral", test="test_rw33_variant_mistral_401",
     variant_of="RW33")
case("RW33-exit", "agent research, explicit mistral fails in words no signature knows: the exit status decides",
     "memory_unavailable", "explicit_provider", R, say=("credentials",), kinds=("provider rules",),
     bundle="RW33-exit", test="test_rw33_variant_unknown_words_exit_status", variant_of="RW33")
case("RW34", "provider unset, no keys: tool returns disabled (2026.1)", "memory_unavailable", "implicit_provider", R,
     say=("provider 'none'", "API-key"), dont=("memory works",), kinds=("provider rules",), bundle="RW34",
     test="test_rw34_disabled_without_provider")
case("RW34-735", "2026.7.35, provider unset: resolves to openai, search returns nothing (real)",
     "memory_unavailable", "implicit_provider", REAL, say=("provider 'none'",), kinds=("provider rules", "version eras"),
     test="test_rw34_variant_2026_7_35_fails_closed", variant_of="RW34")
case("RW34-96", "2026.9.6, provider unset: keyword search works (real)", "keyword_only", "implicit_provider", REAL,
     say=("provider 'none'",), kinds=("provider rules", "version eras", "index identity paused"),
     test="test_rw34_variant_2026_9_6_keyword_only", variant_of="RW34")
case("RW34-control", "provider none with keyword hits (real 2026.7.35)", "healthy", None, REAL,
     say=("Nothing to repair",), kinds=("provider rules",), test="test_rw34_control_provider_none_is_healthy",
     variant_of="RW34")
case("IDENTITY-96", "2026.9.6 recording: identity mismatched + dirty in status, FTS search works", "keyword_only",
     "implicit_provider", R, say=("provider 'none'",), kinds=("index identity paused", "version eras"),
     bundle="IDENTITY-96", test="test_identity_mismatch_in_status_keyword_search_works")
case("RW35", "local provider with an hf: transformers.js id (2026.2 load error)", "memory_unavailable", "local_model",
     R, say=("GGUF", "local.modelPath"), dont=("downloads in a loop",), kinds=("provider rules",), bundle="RW35",
     test="test_rw35_local_model_load_error")
case("RW35-735", "2026.7.35: the local provider is not even installed (real)", "memory_unavailable", "local_model",
     REAL, say=("GGUF",), kinds=("provider rules", "version eras"), test="test_rw35_variant_2026_7_35_real",
     variant_of="RW35")
case("RW35-96-nocanary", "2026.9.6 provider local, no llama.cpp plugin, no canary: the index run failed (real)",
     "memory_unavailable", "local_model", REAL, say=("plugins install @openclaw/llama-cpp-provider",),
     not_say=("rebuild", "--force", "local.modelPath"), kinds=("provider rules", "version eras"),
     test="test_rw35_variant_2026_9_6_no_canary_real", variant_of="RW35")
case("RW35-degrading", "a build that degrades local to keyword search", "keyword_only", "local_model", R,
     say=("GGUF",), kinds=("provider rules", "version eras"), bundle="RW35-degrading",
     test="test_rw35_variant_degrading_build", variant_of="RW35")
case("RW37", "Node 22.12 without node:sqlite; the warning blames the provider", "memory_unavailable", "runtime", R,
     say=("supported Node",), not_say=("rebuild", "--force", "api key"), dont=("embedding provider",), bundle="RW37",
     test="test_rw37_runtime_without_node_sqlite")
case("RW37-96-node20", "2026.9.6 under the system Node 20 (real)", "memory_unavailable", "runtime", REAL,
     say=("supported Node",), kinds=("version eras",), test="test_rw37_variant_2026_9_6_on_node20",
     variant_of="RW37")
case("RW38", "SQLite without FTS5, working provider: exact canary misses", "retrieval_failed", "fts5_missing", R,
     say=("FTS5",), not_say=("--force", "memory index"), bundle="RW38", test="test_rw38_no_fts5_keyword_half_empty")
case("RW38-no-provider", "the same with provider none: nothing left", "memory_unavailable", "fts5_missing", R,
     say=("FTS5",), dont=("rebuild",), bundle="RW38-no-provider", test="test_rw38_variant_no_provider",
     variant_of="RW38")
case("RW39", "builtin index corrupted mid-write (real copy, 2026.7.35)", "memory_unavailable", "index_corrupt", REAL,
     say=("memory index --force",), not_say=("rm -", "delete"), dont=("never delete",), kinds=("corrupt or locked index",),
     test="test_rw39_corrupt_builtin_index")
case("LOCKED-735", "another writer holds the builtin index locked (real 2026.7.35)", "memory_unavailable",
     "index_locked", REAL, say=("lock",), not_say=("--force", "rm -", "delete"), dont=("delete the database",),
     kinds=("corrupt or locked index",), test="test_locked_builtin_index_real")
case("RW40", "every memory index fails \"unable to open database file\"", "memory_unavailable", "rebuild_failing", R,
     say=("Upgrade",), not_say=("--force",), dont=("--force",), bundle="RW40", test="test_rw40_rebuild_always_fails")
case("RW41", "plain status \"Vector: unknown\" while vectors work", "healthy", "status_misreport", R,
     say=("Nothing to repair",), not_say=("embed", "rebuild"), bundle="RW41", test="test_rw41_vector_store_unknown")
case("RW41-unprobed", "newer wording \"indexed (unprobed)\"", "healthy", "status_misreport", R,
     bundle="RW41-unprobed", test="test_rw41_variant_unprobed_wording", variant_of="RW41")
case("RW42", "doctor warns about a missing provider while QMD answers (real + recorded doctor)", "healthy",
     "status_misreport", HYB, say=("Nothing to repair",), not_say=("provider", "api key"),
     test="test_rw42_doctor_provider_warning_under_qmd")
case("RW42-2026.2", "the 2026.2 recording alone", "healthy", "status_misreport", R, bundle="RW42",
     not_say=("provider",), test="test_rw42_variant_recorded_2026_2", variant_of="RW42")


# ---- second set (shared/cases/real-world-2.md RW45–RW57): the kinds, with variants ---------------------------
LOCK = ("index --force", "rebuild")
case("RW45", "gateway holds the reindex lock: index refused, status 139/10758 (2026.8.1)", "stale_index",
     "reindex_locked", R, say=("lock holder", "gateway stop", "memory status --fix"), not_say=("--force",),
     dont=("index --force", "loop"), kinds=("corrupt or locked index", "index identity paused"), bundle="RW45",
     test="test_rw45_reindex_lock_held_by_gateway")
case("RW45-ops", "agent ops, 2026.9.6: reindex-lock busy (database is locked), search empty", "memory_unavailable",
     "index_locked", R, say=("stop it",), not_say=LOCK, kinds=("corrupt or locked index",), bundle="RW45-ops",
     test="test_rw45_variant_lock_busy_other_wording", variant_of="RW45")
case("RW46", "aborted full reindexes leave *.memory-reindex-* copies; search works (orphans on disk)", "healthy",
     "reindex_orphans", R, say=("memory-reindex", "while no reindex runs", "upgrade"), not_say=("rebuild", "--force",
     "memory index"), dont=("rebuild",), kinds=("index bloat",), bundle="RW46", test="test_rw46_orphaned_reindex_copies")
case("RW46-real-96", "real 2026.9.6: three real DB copies named .memory-reindex-<uuid> + 64 MiB -wal, log lines",
     "healthy", "reindex_orphans", REAL, say=("memory-reindex", "upgrade"), not_say=("rebuild", "--force", "memory index"),
     dont=("rebuild",), kinds=("version eras",), test="test_rw46_variant_real_96_orphans", variant_of="RW46")
case("RW47", "chunking-version rebuild blocked by 429 insufficient_quota; search []", "memory_unavailable",
     "explicit_provider", R, say=("quota", "status --deep"), not_say=("qmd", "rebuild", "--force", "delete"),
     dont=("delete the index",), kinds=("provider rules", "index identity paused"), bundle="RW47",
     test="test_rw47_quota_error_blocks_chunking_rebuild")
case("RW47-gemini-404", "agent scribe, gemini HTTP 404 unknown model (2026.8.4)", "memory_unavailable",
     "explicit_provider", R, say=("model name",), not_say=("qmd", "--force"), kinds=("provider rules",),
     bundle="RW47-gemini-404", test="test_rw47_variant_http_404", variant_of="RW47")
case("RW48", "real 2026.9.6 builtin: a note unindexed for an hour; clawprobe's own search would sync it",
     "stale_index", "dirty", REAL, say=("memory index --agent main", "gateway restart", "watcher"),
     not_say=("--force", "qmd"), dont=("rebuild",), kinds=("per-source coverage", "version eras"),
     test="test_rw48_unindexed_note_measured_before_the_probe_syncs")
case("RW49", "memory search exits 3221225477 (0xC0000005) with no output on an empty FTS-only index", "memory_unavailable",
     "search_crash", R, say=("index first", "upgrade", "crash"), not_say=("--force", "rebuild", "provider none"),
     kinds=("version eras",), bundle="RW49", test="test_rw49_native_crash_on_empty_index")
case("RW49-linux-segv", "agent notes, 2026.9.6: search killed by SIGSEGV, no output", "memory_unavailable",
     "search_crash", R, say=("index first",), not_say=("--force",), bundle="RW49-linux-segv",
     test="test_rw49_variant_sigsegv", variant_of="RW49")
case("RW50", "QMD memory_search returns [] while direct qmd finds the note (2026.7.1, qmd 2.5.3, sessions)",
     "retrieval_failed", "search_not_invoked", R, say=("upgrade OpenClaw",), not_say=("rebuild", "--force"),
     dont=("rebuild",), bundle="RW50", test="test_rw50_search_not_invoked_2026_7_1")
case("RW51", "status dirty false while sessions 1762 indexed of 1763 scanned (agent archer, 2026.6.5)", "stale_index",
     "source_behind", R, say=("memory status --index --agent archer",), not_say=("--force", "rebuild", "qmd"),
     dont=("dirty: false",), kinds=("per-source coverage",), bundle="RW51", test="test_rw51_session_source_behind_disk")
case("RW51-many", "agent scout, 2026.8.4 (memory.search): 12 session transcripts behind disk, dirty false",
     "stale_index", "source_behind", R, say=("memory status --index --agent scout",), not_say=("--force", "qmd"),
     kinds=("per-source coverage", "version eras"), bundle="RW51-many", test="test_rw51_variant_many_behind",
     variant_of="RW51")
case("RW52", "gateway's memory_search disabled after an out-of-process reindex; CLI fine", "config_drift",
     "stale_handle", R, say=("gateway restart",), not_say=("memory index", "--force", "rebuild"),
     dont=("reindex again",), bundle="RW52", test="test_rw52_gateway_on_deleted_index")
case("RW53", "status says vector search paused while hits carry vectorScore", "healthy", "status_misreport", R,
     say=("Nothing to repair",), not_say=("rebuild", "--force", "memory index"), kinds=("index identity paused",),
     bundle="RW53", test="test_rw53_vectors_paused_misreport")
case("RW54", "overlapping qmd processes: interval updates die with SQLITE_BUSY", "stale_index", "lock_contention", R,
     say=("embed finish", "upgrade qmd", "busy_timeout"), not_say=("rebuild", "--force", "memory index"),
     dont=("rebuild",), kinds=("corrupt or locked index",), bundle="RW54", test="test_rw54_sqlite_busy_updates")
case("RW55", "qmd embed never finishes, embed model missing: 0 vectors, 161 pending, killed at its timeout",
     "vector_not_ready", "embed_timeout", R, say=("searchMode search", "cannot help", "embed model"),
     not_say=("embedTimeoutMs 3600000", "--force", "embed -f", "rebuild"), dont=("embedtimeoutms",),
     kinds=("timeouts vs misses",), bundle="RW55", test="test_rw55_embed_cannot_finish_search_mode_first")
case("RW56", "builtin sqlite-vec unavailable: keyword-only recall, provider pinned and fine", "vector_not_ready",
     "vector_extension", R, say=("sqlite-vec", "upgrade"), not_say=("api key", "credentials", "rebuild", "--force"),
     dont=("provider",), kinds=("provider rules",), bundle="RW56", test="test_rw56_sqlite_vec_unavailable")
case("RW56-unset", "agent desk, provider unset, vec0.so does not load (2026.9.6)", "vector_not_ready",
     "vector_extension", R, say=("sqlite-vec",), not_say=("api key", "credentials"), bundle="RW56-unset",
     test="test_rw56_variant_unset_provider_vec0", variant_of="RW56")
case("RW57", "openai provider at an Ollama baseUrl: fetch failed, ECONNREFUSED 127.0.0.1:11434", "memory_unavailable",
     "explicit_provider", R, say=("endpoint", "status --deep"), not_say=("qmd", "--force"), kinds=("provider rules",),
     bundle="RW57", test="test_rw57_ollama_behind_openai_refused")

CASES: dict[str, RwCase] = {c.id: c for c in _ALL}
RECORDED: dict[str, RwCase] = {c.id: c for c in _ALL if c.bundle}


def covered_rw_ids() -> set[str]:
    """The corpus ids (RW01–RW57) that have at least one case."""
    return {c.rw for c in _ALL if c.rw.startswith("RW")}


__all__ = ["CASES", "KINDS", "RECORDED", "RwCase", "covered_rw_ids"]
