"""Unit tests of the parser signals the RW cases added (owned parsers, additive), of ``clawprobe.core.recorded``'s own
pieces, and of the case table itself (every RW id covered, every kind has its own variant, every row has a
test, every bundle is used)."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.evidence import Extra
from clawprobe.core.interpret import refine
from clawprobe.core.interpret.canary import session_gate as _session_gate
from clawprobe.core.interpret.refine import _mangled
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes.config import _subset
from clawprobe.core.probes.qmd_index import parse_qmd_status_text, update_notice_count
from clawprobe.core.receipt import Finding, Receipt
from clawprobe.core.recorded import BundleError, load_bundle
from clawprobe.core.repairs import repair_for
from clawprobe.core.rules import healthy
from clawprobe.core.verdicts import Verdict
from tests.rw_cases import CASES, KINDS, RECORDED, covered_rw_ids

TESTS = Path(__file__).parent


@pytest.mark.parametrize("line, tag, value", [
    ("[memory] qmd memory failed; switching to builtin index: Error: spawn EINVAL", "transport_spawn", None),
    ("Error: spawn mcporter ENOENT", "transport_spawn", None),
    ("spawn C:UserssamAppDataRoamingnpmqmd.cmd ENOENT", "spawn_enoent", "C:UserssamAppDataRoamingnpmqmd.cmd"),
    ("resolved qmd.cmd shim but no executable could be found", "command_shim", None),
    ("qmd search x --json failed (signal SIGSEGV): ", "native_binding", "failed (signal SIGSEGV)"),
    ("session expired — skipping 312 remaining chunks", "session_expired", "312"),
    ("Session expired - skipping 7 remaining chunks", "session_expired", "7"),
    ("Error: failed to create any rerank context", "rerank_context", None),
    ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "heap_limit", None),
    ("Out of memory: Killed process 48211 (node)", "oom_killed", None),
    ("SqliteError: database disk image is malformed", "db_malformed", None),
    ("database is locked", "db_locked", None),
    ("Memory index failed (main): unable to open database file", "db_cantopen", None),
    ("fts unavailable: no such module: fts5", "fts5_missing", None),
    ("memory sync failed (watch): Error: path must be a regular file", "not_regular_file", None),
    ("memory embeddings batch timed out after 120s", "batch_timeout", "120"),
    ("Memory index failed (main): fetch failed | bad port", "provider_unreachable", "fetch failed"),
    ("Memory index repair failed: fetch failed | connect ECONNREFUSED 127.0.0.1:9", "provider_unreachable",
     "fetch failed"),
    ('No API key found for provider "openai". | missing-provider-auth', "provider_auth", None),
    ("Memory index failed (ops): openai embedding credentials are not configured for http://127.0.0.1:9/v1. Set "
     "memory.search.remote.apiKey or an Authorization header for this destination.", "provider_auth", None),
    ("Memory search is enabled, but no embedding provider is configured", "provider_missing", None),
    ("Unknown memory embedding provider: local.", "local_model", None),
    ("Memory index failed (main): Unknown memory embedding provider: local.", "local_plugin", None),
    ("Memory index failed (main): Unknown memory embedding provider: voyage", "provider_missing", None),
    ("openclaw: Node 20.20.2: node:sqlite is unavailable; use 24.16+/26.1+", "runtime_sqlite", None),
    ("Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite", "runtime_sqlite", None),
    ("memory_index_chunks_vec not updated — semantic vector embeddings unavailable", "vector_degraded", None),
    ("Memory search failed: Collection not found: memory-root-ops", "collection_missing", "memory-root-ops"),
    ("memory_search timed out after 15s", "search_timeout", "15s"),
    ("OpenClaw state database schema migration required (audit-events-v2) at /srv/oc/state/openclaw.sqlite; run "
     "openclaw doctor --fix to migrate it.", "doctor_fix", None),
    ("memory status failed (ops): OpenClaw agent database /srv/oc/agents/ops/agent/openclaw-agent.sqlite uses schema "
     "version 1; run openclaw doctor --fix to migrate persisted media before using it.", "doctor_fix", None),
    ("memory search failed (main): SQLite schema is incomplete or noncanonical for /x.sqlite: missing table "
     "memory_index_meta; run openclaw doctor --fix to repair it.", "doctor_fix", None),
    ("Config health-state write failed: OpenClaw state database /srv/oc/state/openclaw.sqlite uses newer schema "
     "version 18; this OpenClaw build supports 1.", "state_newer", "/srv/oc/state/openclaw.sqlite"),
    ("OpenClaw agent database /home/ops/.openclaw/agents/ops/agent/openclaw-agent.sqlite uses newer schema version 3; "
     "this OpenClaw build supports 2.", "state_newer", "/home/ops/.openclaw/agents/ops/agent/openclaw-agent.sqlite"),
    ("Memory index failed (main): Request cannot be constructed from a URL that includes credentials: "
     "http://svc:<redacted>@10.0.0.9/v1/embeddings", "provider_url", None),
    ("[memory] sync failed (search): Error: EACCES: permission denied, open '/srv/ws/memory/sync/ferry.md'",
     "note_unreadable", "/srv/ws/memory/sync/ferry.md"),
    ("Memory index failed (ops): EPERM: operation not permitted, open '/home/a b/notes/MEMORY.md'", "note_unreadable",
     "/home/a b/notes/MEMORY.md"),
    ("Error loading shared library vec0.so: cannot open shared object file", "vector_extension", None),
    ("/opt/oc/node_modules/sqlite-vec-linux-arm64/vec0.so: undefined symbol: sqlite3_vec_init", "vector_extension", None),
])
def test_error_signals_by_wording(line, tag, value):
    sigs = {s.tag: s for s in oc.error_signals("\x1b[33m" + line + "\x1b[0m")}
    assert tag in sigs and sigs[tag].value == value and sigs[tag].line == line.strip()


def test_unrelated_text_gives_no_signal():
    assert oc.error_signals("Memory index updated (main).\nqmd sync completed for agent \"main\"\n") == []


def test_a_healthy_vector_path_is_no_extension_signal():
    """The human `openclaw memory status --deep` names the loaded extension; OpenClaw logs that text as one INFO
    record (breaker round 14, F1: the next check said vector_not_ready and printed that same status again)."""
    text = ("Memory Search (desk-4)\nEmbeddings: ready\nVector store: ready\nSemantic vectors: ready\nVector dims: 64\n"
            "Vector path: /home/ops/.npm/lib/node_modules/openclaw/node_modules/sqlite-vec-linux-x64/vec0.so\nFTS: ready\n")
    assert "vector_extension" not in {s.tag for s in oc.error_signals(text)}


@pytest.mark.parametrize("line", [
    "Memory index failed (ops): Unknown memory embedding provider: localai",  # another provider: not the plugin
    "Memory index failed (ops): database disk image is malformed",  # an index failure that is no fetch
    "web_fetch failed: fetch failed | ECONNREFUSED 10.0.0.9:443",  # a fetch outside memory
])
def test_nearby_lines_are_no_plugin_or_endpoint_signal(line):
    """The round 12/13 rows (a failed index run on a dead endpoint, the missing llama.cpp plugin) read their own
    words only: a nearby line gives neither."""
    assert not {"local_plugin", "provider_unreachable"} & {s.tag for s in oc.error_signals(line)}


def test_stderr_timeout_in_seconds_and_ms():
    assert oc.parse_stderr("Memory search failed: memory search timed out after 8s").timeout_ms == 8000
    assert oc.parse_stderr("Memory search failed: qmd query X timed out after 4000ms").timeout_ms == 4000
    assert oc.parse_stderr("memory embeddings batch timed out after 120s").timeout_ms is None  # not a search


def test_status_text_and_status_json_fields():
    t = oc.parse_status_text("Memory Search (ops)\nProvider: ollama\nIndexed: 0/12 files · 0 chunks\nVector: unknown\n"
                             "Issues:\n  path must be a regular file\n  second issue\n\nBatch: disabled\n")
    assert t == {"provider": "ollama", "indexed": "0/12 files · 0 chunks", "vector": "unknown", "batch": "disabled",
                 "issues": ["path must be a regular file", "second issue"]}
    doc = [{"agentId": "ops", "status": {"backend": "builtin", "extraPaths": ["tasks/"], "custom": {"indexIdentity": {
        "status": "mismatched", "reason": "index was built for model fts-only"}}}, "embeddingProbe": {"ok": False,
                                                                                                      "error": "x"}}]
    e = oc.parse_status(json.dumps(doc), "", 0).entry("ops")
    assert (e.index_identity_reason, e.embedding_ok, e.embedding_error, e.extra_paths) == \
        ("index was built for model fts-only", False, "x", ["tasks/"])


def test_log_signals_respect_the_agent():
    lines = [json.dumps({"0": '{"subsystem":"memory"}', "1": msg, "_meta": {"date": "2026-11-30T01:00:00Z"}})
             for msg in ('memory sync failed (watch): path must be a regular file',
                         'qmd embed failed (interval) for agent "other": session expired — skipping 3 remaining chunks')]
    recs, bad = oclog.parse_lines(lines, "log")
    facts = oclog.interpret(recs, "main")
    assert bad == 0 and [s.tag for s in facts.signals] == ["not_regular_file"]


def test_qmd_status_text_and_update_notice():
    real = ("QMD Status\n\nIndex: /x/index.sqlite\nSize:  120.0 KB\n\nDocuments\n  Total:    4 files indexed\n"
            "  Vectors:  3 embedded\n  Pending:  2 need embedding (run 'qmd embed')\n  Updated:  2s ago\n"
            "  Orphaned: 1 embedding chunks (33%) — run 'qmd cleanup'\n")
    s = parse_qmd_status_text(real)
    assert (s.total, s.vectors, s.pending, s.orphaned, s.updated) == (4, 3, 2, 1, "2s ago")
    assert parse_qmd_status_text("Documents\n  Total: 9 files indexed\n  Vectors: 9 embedded\n").pending == 0
    assert parse_qmd_status_text("not a status").total is None
    assert update_notice_count("Run 'qmd embed' to update embeddings (1 unique hash need vectors)") == 1
    assert update_notice_count("✓ All collections updated.") is None


def test_config_subset_keeps_session_visibility_and_redacts():
    out = _subset({"tools": {"sessions": {"visibility": "agent"}, "exec": {"x": 1}}, "secrets": {"apiKey": "s"},
                   "memory": {"search": {"remote": {"apiKey": "sk-123"}}}})
    assert out["tools"] == {"sessions": {"visibility": "agent"}} and "secrets" not in out
    assert out["memory"]["search"]["remote"]["apiKey"] == "<redacted>"


def test_healthy_headline_warning_comes_first():
    r = Receipt(checked_at=datetime(2026, 11, 30, tzinfo=UTC),
                findings=[Finding(tag="env_from_shell", message="a"), Finding(tag="status_misreport", message="b")])
    assert healthy(r, r.checked_at).reason == "status_misreport"


def test_engine_specific_repairs_and_never_the_missing_path():
    r = Receipt(checked_at=datetime(2026, 11, 30, tzinfo=UTC))
    assert "literal keywords" in repair_for(Verdict.RETRIEVAL_FAILED, "cjk", r).title
    r.config.configured_backend = "qmd"
    assert "upgrade qmd" in repair_for(Verdict.RETRIEVAL_FAILED, "cjk", r).title
    r.qmd.resolved_path, r.qmd.resolves = "/gone/qmd", False
    assert "/gone/qmd" not in (repair_for(Verdict.QMD_UNAVAILABLE, "command_missing", r).command or "")


def test_mangled_windows_paths():
    assert _mangled("C:\\Users\\sam\\npm\\qmd.cmd", "C:Userssamnpmqmd.cmd")
    assert _mangled("D:/tools/qmd.cmd", "D:toolsqmd.cmd")
    assert not _mangled("C:\\Users\\sam\\npm\\qmd.cmd", "C:\\Users\\sam\\npm\\qmd.cmd")  # intact
    assert not _mangled("/usr/local/bin/qmd", "usrlocalbinqmd")  # not a Windows command


@pytest.mark.parametrize("tree, gate", [
    ({"agents": {"defaults": {"memorySearch": {}}}}, "experimental.sessionMemory"),
    ({"agents": {"defaults": {"memorySearch": {"experimental": {"sessionMemory": True}}}}}, "sources"),
    ({"memory": {"backend": "qmd"}, "agents": {"defaults": {"memorySearch": {
        "experimental": {"sessionMemory": True}, "sources": ["memory", "sessions"]}}}}, "memory.qmd.sessions.enabled"),
    ({"memory": {"backend": "qmd", "qmd": {"sessions": {"enabled": True}}}, "agents": {"defaults": {"memorySearch": {
        "experimental": {"sessionMemory": True}, "sources": ["sessions"]}}}}, "visibility"),
    ({"memory": {"search": {"experimental": {"sessionMemory": True}, "sources": ["sessions"]}},
      "tools": {"sessions": {"visibility": "agent"}}}, None),
])
def test_session_gates_name_the_first_failing_one(tree, gate):
    got = _session_gate(Extra(tree=tree), "main")
    assert (got is None) if gate is None else (gate in got)


def test_refine_never_touches_an_invalid_config_receipt():
    from clawprobe.core.receipt import ConfigError

    r = Receipt(checked_at=datetime(2026, 11, 30, tzinfo=UTC))
    r.config.error = ConfigError(kind="parse", message="x")
    out = refine(r, Extra(outputs=[], status=oc.parse_status("", "database disk image is malformed", 1)))
    assert out.builtin.unavailable_reason is None and out == r


def test_bad_bundles_are_messages(tmp_path):
    with pytest.raises(BundleError, match="no bundle.json"):
        load_bundle(tmp_path)
    (tmp_path / "bundle.json").write_text('{"case": "X", "era": "2026.7.35"}')
    with pytest.raises(BundleError, match="checked_at"):
        load_bundle(tmp_path)
    (tmp_path / "bundle.json").write_text('{"case": "X", "era": "2026.7.35", "checked_at": "2026-11-30T03:00:00Z",'
                                          ' "steps": {"status": "steps/nope"}}')
    with pytest.raises(BundleError, match="does not exist"):
        load_bundle(tmp_path)


# ---- the case table itself ----------------------------------------------------------------------------------

def _test_functions() -> set[str]:
    names = set()
    for f in TESTS.glob("test_rw_*.py"):
        names |= {n.name for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.FunctionDef)}
    return names


def test_every_corpus_case_is_covered_and_every_row_has_its_test():
    assert covered_rw_ids() == {f"RW{i:02d}" for i in range(1, 58)}
    missing = [c.id for c in CASES.values() if c.test not in _test_functions()]
    assert not missing, missing
    for c in CASES.values():
        if c.id.startswith("RW"):
            assert c.test.startswith(f"test_{c.rw.lower()}") or c.variant_of or c.test.startswith("test_timeout_kind"), c


def test_every_kind_has_a_variant_of_its_own():
    for kind in KINDS:
        own = [c.id for c in CASES.values() if kind in c.kinds and (c.variant_of or not c.id.startswith("RW"))]
        assert own, kind


def test_every_bundle_is_used_by_a_case():
    dirs = {p.name for p in (TESTS / "data" / "rw").iterdir() if (p / "bundle.json").is_file()}
    assert dirs == {c.bundle for c in CASES.values() if c.bundle}


def test_refine_twice_changes_nothing_more():
    """The orchestrator may refine a receipt a second time: the same evidence adds nothing new."""
    from clawprobe.core.recorded import assemble_parts

    for c in RECORDED.values():
        r0, x = assemble_parts(load_bundle(TESTS / "data" / "rw" / c.bundle))
        if x is None:
            continue
        once = refine(r0, x)
        assert refine(once, x).model_dump() == once.model_dump(), c.id
