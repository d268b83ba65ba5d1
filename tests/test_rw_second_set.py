"""The second real-world set (shared/cases/real-world-2.md, RW45–RW57), by fault *kind*, replayed from
recorded evidence bundles through the live probes' parsers (``clawprobe.core.recorded``) — the same path as
``clawprobe check``: provider HTTP refusals as one classifier, native crash exit codes with no output, held
reindex locks and SQLITE_BUSY updates, the builtin vector extension, orphaned reindex copies, a gateway on a
stale handle, and status texts that misreport."""

from __future__ import annotations

import os
import shutil

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.recorded import assemble_dir
from tests.rw_support import DATA, action_texts, check, check_bundle


def test_rw45_reindex_lock_held_by_gateway():
    r, d = check_bundle("RW45")
    assert "lock is held" in r.freshness.detail and r.freshness.stale_reason == "reindex_locked"
    says, todo, _ = action_texts(d)
    # the lock holder comes before the re-index: the stop step precedes the index step
    assert todo.index("gateway stop") < todo.index("memory index")


def test_rw45_variant_lock_busy_other_wording():
    r, d = check_bundle("RW45-ops")
    assert r.agent_id == "ops" and "reindex-lock" in r.builtin.unavailable_detail
    assert d.next_action.command and d.next_action.command.startswith("fuser")


def test_rw46_orphaned_reindex_copies(tmp_path):
    home = tmp_path / "RW46"
    shutil.copytree(DATA / "RW46", home, symlinks=True)
    agent_dir = home / "home/.openclaw/agents/main/agent"
    for i in range(3):
        stem = agent_dir / f"openclaw-agent.sqlite.memory-reindex-{i}f3c9a2e-1b7d-4c55-9e0a-58d3b1c2e7a{i}"
        stem.write_bytes(b"SQLite format 3\x00")
        with open(f"{stem}-wal", "wb") as f:  # 64 MiB sparse -wal, as on the reporter's host
            f.truncate(64 * 2**20)
    (agent_dir / "openclaw-agent.sqlite.reindex-lock.sqlite").write_bytes(b"")  # the live lock sidecar: not an orphan
    r = assemble_dir(home)
    d = check("RW46", r, evidence="recorded bundle tests/data/rw/RW46 + three sparse orphans made by the test")
    w = next(f for f in d.warnings if f.tag == "reindex_orphans")
    assert "3 orphaned reindex copies (192 MiB" in w.message and "3 aborted full reindex" in w.message
    assert "reindex-lock" not in w.message


def test_rw46_without_orphans_repeated_aborts_still_warn():
    r = assemble_dir(DATA / "RW46")
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("healthy", "reindex_orphans")
    assert all(e.kind == "explained" and e.tag == "reindex_aborted" for e in r.ledger if "reindex" in e.line)


def test_rw47_quota_error_blocks_chunking_rebuild():
    r, d = check_bundle("RW47")
    assert "insufficient_quota" in r.builtin.unavailable_detail
    assert any(e.tag == "provider_http" and e.source.startswith("gateway log") for e in r.ledger)


def test_rw47_variant_http_404():
    r, d = check_bundle("RW47-gemini-404")
    assert r.agent_id == "scribe" and "404" in r.builtin.unavailable_detail


def test_rw49_native_crash_on_empty_index():
    r, d = check_bundle("RW49")
    assert "0xC0000005" in d.evidence[0] and "0 of 9 files" in d.evidence[0]


def test_rw49_variant_sigsegv():
    r, d = check_bundle("RW49-linux-segv")
    assert r.agent_id == "notes" and "SIGSEGV" in d.evidence[0]


def test_rw50_search_not_invoked_2026_7_1():
    r, d = check_bundle("RW50")
    assert r.openclaw.version == "2026.7.1" and r.canary.direct_qmd_found is True


def test_rw51_session_source_behind_disk():
    r, d = check_bundle("RW51")
    sessions = next(c for c in r.coverage.sources if c.source == "sessions")
    assert (sessions.measured_by, sessions.expected, sessions.indexed, sessions.missing) == ("status", 1763, 1762, 1)
    assert d.evidence[0].startswith("sessions: 1762 of 1763 files on disk indexed (1 behind")
    assert r.canary.outcome == "found" and r.freshness.stale_reason is None  # no made-up time: the gap decides
    assert "memory index --force" not in (d.next_action.command or "")
    own = next(m for m in d.modes if m.configured)
    assert (own.fresh.state, own.fresh.reason) == ("fail", "sessions: 1762 of 1763 files indexed (behind disk)")


def test_rw51_variant_many_behind():
    r, d = check_bundle("RW51-many")
    assert r.agent_id == "scout" and "12 behind" in d.evidence[0]
    assert d.next_action.command == "openclaw memory status --index --agent scout"


def test_rw52_gateway_on_deleted_index():
    r, d = check_bundle("RW52")
    assert "index metadata is missing" in d.evidence[0] and r.canary.outcome == "found"


def test_rw53_vectors_paused_misreport():
    r, d = check_bundle("RW53")
    assert any("paused until memory is rebuilt" in c.claim and "0.71" in c.measured for c in r.status_claims)


def test_rw54_sqlite_busy_updates():
    r, d = check_bundle("RW54")
    assert "7 update(s)" in r.freshness.detail and "SQLITE_BUSY" in r.freshness.detail
    assert d.next_action.command is None  # no command can succeed while the embed holds the lock


def test_rw56_sqlite_vec_unavailable():
    r, d = check_bundle("RW56")
    assert r.config.provider_explicit and "sqlite-vec unavailable" in r.builtin.vector_extension_error


def test_rw56_variant_unset_provider_vec0():
    r, d = check_bundle("RW56-unset")
    assert r.agent_id == "desk" and "vec0.so" in r.builtin.vector_extension_error


def test_rw57_ollama_behind_openai_refused():
    r, d = check_bundle("RW57")
    assert "ECONNREFUSED 127.0.0.1:11434" in r.builtin.unavailable_detail
    assert not [e for e in r.ledger if e.kind == "unrecognized"]


def test_no_orphan_files_committed():
    agent = DATA / "RW46" / "home/.openclaw/agents/main/agent"
    assert not [n for n in os.listdir(agent) if "memory-reindex" in n]


def test_rw55_embed_cannot_finish_search_mode_first():
    r, d = check_bundle("RW55")
    assert r.vectors.missing_models and "embed" in r.vectors.missing_models and r.vectors.pending == 161
    assert d.next_action.command == "openclaw config set memory.qmd.searchMode search"
