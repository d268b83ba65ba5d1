"""The builtin engine's readiness gates (issue 13 "Builtin, first class"): the FTS tokenizer vs the scripts of
the notes (real FTS5 tables, real note files), the reindex-lock sidecar's holder (a real separate process holding
``BEGIN EXCLUSIVE``, found through ``/proc``), and how the gates are judged (modes, rules, repairs) — with
varied agent ids, scripts, tokenizers and eras."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.modes import builtin_gates, tokenizer_gate
from clawprobe.core.probes.note_scripts import count_scripts, fts_tokenizer_of, note_scripts, unmatched_scripts
from clawprobe.core.probes.reindex_lock import read_reindex_lock
from clawprobe.core.receipt import Receipt, ReindexLock, SidecarHolder
from clawprobe.core.report import to_text
from clawprobe.core.view import agent_facts
from tests.rw_support import action_texts

T0 = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
JA = "東京の会議は火曜日に延期されました。担当者は田中さんです。"
ZH = "新的部署流程已经确定，周五之前完成迁移。"
TH = "การประชุมเลื่อนไปวันอังคารแล้วครับ"
AR = "تم تأجيل الاجتماع إلى يوم الثلاثاء"


# ---------------------------------------------------------------------------------------------- measuring
@pytest.mark.parametrize(("text", "scripts"), [
    (JA, {"Han", "Hiragana"}), (ZH, {"Han"}), (TH, {"Thai"}), (AR, {"Arabic"}),
    ("Deploy notes: ship Friday.", {"Latin"}), ("Встреча перенесена", {"Cyrillic"}),
    ("회의가 화요일로 연기되었습니다", {"Hangul"}), ("ミーティング", {"Katakana"}),
])
def test_count_scripts_names_the_writing_system(text, scripts):
    assert set(count_scripts(text)) == scripts


@pytest.mark.parametrize(("tokenize", "expected"), [
    ("", "unicode61"), (", tokenize='trigram case_sensitive 0'", "trigram"),
    (", tokenize = \"porter unicode61\"", "porter"), (", tokenize=unicode61", "unicode61"),
])
def test_fts_tokenizer_read_from_a_real_fts5_table(tmp_path, tokenize, expected):
    db = tmp_path / "store.sqlite"
    con = sqlite3.connect(db)
    con.execute(f"CREATE VIRTUAL TABLE memory_index_chunks_fts USING fts5(text, id UNINDEXED{tokenize})")
    con.close()
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    sql = ro.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_index_chunks_fts'").fetchone()[0]
    assert fts_tokenizer_of(sql) == expected
    # the fact behind the gate, in real SQLite: unicode61 cannot find a word inside an unspaced run, trigram can
    con = sqlite3.connect(tmp_path / f"probe-{expected}.sqlite")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(text{tokenize})")
    con.execute("INSERT INTO t VALUES (?)", (JA,))
    hits = con.execute("SELECT count(*) FROM t WHERE t MATCH ?", ('"延期され"',)).fetchone()[0]
    assert hits == (1 if expected == "trigram" else 0)


def test_note_scripts_reads_memory_md_memory_dir_and_extra_paths(tmp_path):
    ws, extra = tmp_path / "ws", tmp_path / "shared-notes"
    (ws / "memory" / "2026").mkdir(parents=True)
    extra.mkdir()
    (ws / "MEMORY.md").write_text("# Memory\n\n" + JA, encoding="utf-8")
    (ws / "memory" / "2026" / "dec.md").write_text(TH, encoding="utf-8")
    (ws / "memory" / "ignored.txt").write_text(AR, encoding="utf-8")  # not a note: only .md counts
    (extra / "team.md").write_text(ZH, encoding="utf-8")
    got = note_scripts(str(ws), [str(extra)])
    assert {"Han", "Hiragana", "Thai", "Latin"} <= set(got) and "Arabic" not in got
    assert got["Latin"] == len("Memory")
    assert set(unmatched_scripts("unicode61", got)) == {"Han", "Hiragana", "Thai"}
    assert unmatched_scripts("trigram", got) == [] and unmatched_scripts("porter", {"Latin": 3, "Arabic": 5}) == []


@pytest.mark.parametrize("blob", [
    bytes(range(256)) * 800,                                        # 200 KB of every byte value
    b"\x00GITCRYPT\x00" + os.urandom(6000),                          # a git-crypt note cloned without its key
    os.urandom(4096),                                                # random bytes
], ids=["every-byte", "git-crypt", "random"])
def test_a_binary_or_encrypted_note_is_no_script_and_a_warning_not_a_tokenizer_failure(tmp_path, blob):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nThe user prefers tea.\n", encoding="utf-8")
    (ws / "memory" / "blob.md").write_bytes(blob)
    (ws / "memory" / "stray-nul.md").write_bytes(("# x\n\n" + "words " * 40 + "\x00 end\n").encode())  # text
    (ws / "memory" / "empty.md").write_bytes(b"")
    got = note_scripts(str(ws))
    assert got["binary files"] == 1 and set(got) == {"Latin", "binary files"}, got
    r = _builtin()
    r.config.workspace = str(ws)
    r.builtin.gates.fts_tokenizer, r.builtin.gates.note_scripts = "unicode61", got
    assert tokenizer_gate(r).cell.state == "ok" and "binary" not in tokenizer_gate(r).cell.reason
    from clawprobe.core.evidence import Extra
    from clawprobe.core.interpret.builtin import gate_facts

    binary: list[str] = []
    assert note_scripts(str(ws), binary=binary) == got and binary == [str(ws / "memory" / "blob.md")]
    gate_facts(r, Extra(note_scripts=got, binary_notes=binary), [])
    d = diagnose(r, T0)
    assert d.verdict.value == "healthy" and [w.tag for w in d.warnings] == ["binary_notes"]
    assert d.warnings[0].message.endswith("can be found (a Latin-1 text converts: iconv -f WINDOWS-1252 -t UTF-8): "
                                          "memory/blob.md")


# ----------------------------------------------------------------------------------------- the lock holder
@pytest.fixture
def held_sidecar(tmp_path):
    store = tmp_path / "agents" / "ops-7" / "agent" / "openclaw-agent.sqlite"
    store.parent.mkdir(parents=True)
    side = f"{store}.reindex-lock.sqlite"
    code = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code, side, "reindex-holder"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        yield str(store), p.pid
    finally:
        p.kill()
        p.wait()


def test_reindex_lock_names_the_separate_process_that_holds_it(held_sidecar):
    store, pid = held_sidecar
    lock = read_reindex_lock(store)
    assert lock.exists and lock.held and lock.visible
    h = next(h for h in lock.holders if h.pid == pid)
    assert h.write_lock and not h.gateway and f"{os.path.basename(sys.executable)} -c import sqlite3" in h.command


def test_reindex_lock_without_a_holder_and_without_a_sidecar(tmp_path):
    store = tmp_path / "openclaw-agent.sqlite"
    assert read_reindex_lock(str(store)).exists is False
    sqlite3.connect(f"{store}.reindex-lock.sqlite").close()  # created and released: nobody holds it
    lock = read_reindex_lock(str(store))
    assert lock.exists and not lock.held and lock.holders == []


# -------------------------------------------------------------------------------------------- judging
def _builtin(agent: str = "main", provider: str | None = "none", *, version: str = "2026.9.6") -> Receipt:
    r = Receipt(checked_at=T0, agent_id=agent)
    r.config.configured_backend = "builtin"
    r.config.provider = provider
    r.openclaw.version, r.openclaw.has_qmd_backend = version, version < "2026.8"
    r.freshness.last_proven_current, r.freshness.method = T0, "disk matches the index"
    r.canary.outcome, r.canary.expected_path, r.canary.planted_at = "found", "memory/clawprobe-canary.md", T0
    r.canary.returned_path = r.canary.expected_path
    r.builtin.fts_only = provider in (None, "none")
    return r


@pytest.mark.parametrize(("agent", "scripts", "version", "key"), [
    ("main", {"Han": 400, "Hiragana": 120, "Latin": 30}, "2026.9.6", "memory.search.store.fts.tokenizer"),
    ("scribe", {"Thai": 900, "Latin": 12}, "2026.9.6", "memory.search.store.fts.tokenizer"),
    ("ops-2", {"Han": 50}, "2026.7.35", "agents.defaults.memorySearch.store.fts.tokenizer"),
])
def test_keyword_only_cjk_or_thai_notes_under_unicode61_are_not_healthy(agent, scripts, version, key):
    r = _builtin(agent, version=version)
    r.builtin.gates.fts_tokenizer, r.builtin.gates.note_scripts = "unicode61", scripts
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "tokenizer_script")
    says, todo, dont = action_texts(d)
    assert f"config set {key.lower()} trigram" in todo and "--force" in todo and "qmd" not in says
    assert "latin-only canaries" in dont
    gate = next(g for g in d.gates if g.name == "tokenizer")
    assert gate.cell.state == "fail" and "unicode61" in gate.cell.reason and len(gate.short) <= 40


@pytest.mark.parametrize(("tokenizer", "scripts", "fts_only"), [
    ("trigram", {"Han": 400}, True),             # trigram matches inside runs
    ("unicode61", {"Arabic": 300, "Latin": 9}, True),  # spaced scripts tokenize
    ("unicode61", {"Han": 400}, False),          # embeddings cover it: the keyword half misses, not all of it
    ("porter", {"Latin": 500}, True),
])
def test_tokenizer_gate_passes_when_the_notes_can_be_matched(tokenizer, scripts, fts_only):
    r = _builtin(provider="none" if fts_only else "openai")
    r.builtin.fts_only = fts_only
    r.builtin.gates.fts_tokenizer, r.builtin.gates.note_scripts = tokenizer, scripts
    assert tokenizer_gate(r).cell.state == "ok"
    assert diagnose(r, T0).reason != "tokenizer_script"


def test_unmeasured_tokenizer_is_unknown_never_ok():
    r = _builtin()
    assert tokenizer_gate(r).cell.state == "unknown"
    r.builtin.gates.fts_tokenizer = "unicode61"
    assert tokenizer_gate(r).cell.state == "unknown"  # notes' scripts not measured


def test_a_cjk_canary_miss_under_unicode61_is_the_tokenizer_not_the_query_planner():
    r = _builtin("lin")
    r.canary.outcome, r.canary.reason, r.canary.returned_path = "miss", "cjk", None
    r.canary.planted_at = T0 - timedelta(hours=2)
    r.builtin.gates.fts_tokenizer, r.builtin.gates.note_scripts = "unicode61", {"Han": 80}
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "tokenizer_script")
    r.builtin.gates.fts_tokenizer = "trigram"  # already trigram: the existing query-planner explanation stays
    assert diagnose(r, T0).reason == "cjk"


def _locked(holders: list[SidecarHolder], agent: str = "ops") -> Receipt:
    r = _builtin(agent)
    r.freshness.last_proven_current = T0 - timedelta(hours=3)
    r.freshness.stale_reason, r.freshness.detail = "reindex_locked", "an index run is refused: reindex lock is held"
    r.builtin.gates.reindex_lock = ReindexLock(path="/s/agents/ops/agent/openclaw-agent.sqlite.reindex-lock.sqlite",
                                               exists=True, bytes=4096, holders=holders,
                                               held=any(h.write_lock for h in holders))
    return r


def test_lock_held_by_another_process_names_that_process_not_the_gateway():
    r = _locked([SidecarHolder(pid=4242, command="node openclaw memory index --force", write_lock=True)], "ops-9")
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("stale_index", "reindex_locked")
    says, todo, dont = action_texts(d)
    assert "pid 4242" in d.next_action.title and "kill 4242" in todo and "gateway stop" not in todo
    assert "don't stop the gateway" in dont
    gate = next(g for g in d.gates if g.name == "lock")
    assert gate.cell.state == "fail" and "pid 4242" in gate.short


def test_lock_held_by_the_gateway_stops_the_gateway():
    r = _locked([SidecarHolder(pid=77, command="openclaw-gateway --port 18789", write_lock=True, gateway=True)])
    d = diagnose(r, T0)
    _, todo, _ = action_texts(d)
    assert "gateway stop" in todo and "kill" not in todo
    assert next(g for g in d.gates if g.name == "lock").short == "held by pid 77 (gateway)"


def test_lock_with_no_holder_left_is_cleared_with_status_fix():
    r = _locked([])
    d = diagnose(r, T0)
    says, todo, dont = action_texts(d)
    assert d.next_action.command == "openclaw memory status --fix --agent ops" and "gateway stop" not in todo
    assert next(g for g in d.gates if g.name == "lock").cell.state == "ok"


def test_gates_in_check_text_json_and_view_model():
    r = _builtin("kai")
    g = r.builtin.gates
    g.fts_tokenizer, g.note_scripts, g.index_identity, g.chunking_version, g.chunk_tokens = \
        "unicode61", {"Latin": 300}, "mismatched", 5, 400
    g.index_identity_reason, g.orphan_copies, g.orphan_bytes = "chunking version changed", 2, 3 * 2**20
    g.reindex_lock = ReindexLock(path="/x.reindex-lock.sqlite", exists=False)
    d = diagnose(r, T0)
    states = {x.name: x.cell.state for x in d.gates}
    assert states == {"tokenizer": "ok", "vectors": "na", "identity": "fail", "provider": "na", "lock": "ok",
                      "orphans": "fail"}
    facts = agent_facts(r, d)
    assert [x.name for x in facts.gates] == list(states) and all(len(x.short) <= 40 for x in facts.gates)
    text = to_text([(r, d)])
    assert "gates:  tokenizer=ok  vectors=na  identity=fail  provider=na  lock=ok  orphans=fail" in text
    assert "identity: fail — index identity mismatched: chunking version changed — vector search is paused" in text
    assert "2 orphaned *.memory-reindex-* copies (3 MiB)" in text
    assert d.model_dump(mode="json")["gates"][2]["cell"]["state"] == "fail"


def test_qmd_receipts_have_no_builtin_gates():
    r = Receipt(checked_at=T0)
    r.config.configured_backend = "qmd"
    assert builtin_gates(r) == [] and diagnose(r, T0).gates == []


def test_the_dashboard_shows_the_failing_gates_and_hides_unmeasured_ones():
    """Pane 1 (backend) renders the gates of the view model: a count line, then each failing gate's short
    words; a receipt whose gates were never measured (recorded before they existed) shows no gates line."""
    from clawprobe.tui.state import AgentView, DashboardReport
    from clawprobe.tui.widgets.backend_pane import BackendPane

    def pane_text(r: Receipt) -> str:
        view = AgentView(receipt=r, diagnosis=diagnose(r, T0))
        return BackendPane().body(view, DashboardReport(source="replay", agents=[view], evaluated_at=T0), T0)

    r = _builtin("scribe-7")
    assert "gates" not in pane_text(r)
    g = r.builtin.gates
    g.fts_tokenizer, g.note_scripts, g.index_identity = "unicode61", {"Latin": 120}, "mismatched"
    g.index_identity_reason, g.orphan_copies, g.orphan_bytes = "chunking version changed", 3, 5 * 2**20
    g.reindex_lock = ReindexLock(path="/y.reindex-lock.sqlite", exists=False)
    text = pane_text(r)
    short = {x.name: x.short for x in agent_facts(r, diagnose(r, T0)).gates}
    assert "✗ 2 fail" in text and "✓ 2 pass" in text
    assert f"✗ identity[/] {short['identity']}" in text and f"✗ orphans[/] {short['orphans']}" in text
    assert "✗ tokenizer" not in text and "✗ lock" not in text


def test_a_shared_logs_provider_failure_fails_no_gate_of_an_install_whose_own_search_works():
    """Breaker round 13, N1: the default log ``/tmp/openclaw/openclaw-<date>.log`` is shared by every install of the
    user; another install's ``Memory index failed (main): fetch failed`` failed the provider gate of one whose own
    canary search had just come back. A log's provider line counts only when this check's search did not work."""
    from clawprobe.core.evidence import Extra
    from clawprobe.core.interpret.builtin import refine_builtin
    from clawprobe.core.interpret.signals import Sig
    from clawprobe.core.probes import openclaw_cli as oc

    line = Sig(tag="provider_unreachable", line="Memory index failed (main): fetch failed | bad port",
               source="/tmp/openclaw/openclaw-2026-12-03.log")
    hits = [oc.SearchHit(path="memory/clawprobe-canary.md", snippet="CLAWPROBE-CANARY-X")]
    for search, fails in ((oc.SearchResult(rc=0, hits=hits), False), (oc.SearchResult(rc=0, hits=[]), True),
                          (None, True)):
        r = Receipt(checked_at=T0)
        r.config.configured_backend, r.config.provider, r.config.provider_explicit = "builtin", "openai", True
        refine_builtin(r, Extra(search=search), [line])
        assert (r.builtin.gates.provider_error is not None) is fails, (search, r.builtin.gates)


@pytest.mark.parametrize(("provider", "unavailable", "state"), [("openai", "explicit_provider", "fail"),
                                                                ("none", None, "unknown"), ("voyage", None, "unknown")])
def test_a_builtin_agents_json_mode_rows_say_what_its_text_says(provider, unavailable, state):
    """Breaker round 13, N4: the text report said ``vectors=fail`` for a builtin agent whose provider fails while the
    JSON's mode rows said "BM25 search needs no embeddings" — each row now carries the engine's own vectors cell."""
    from clawprobe.core.modes import builtin_vectors_cell
    from clawprobe.core.view import agent_facts as facts

    r = Receipt(checked_at=T0, agent_id="ops-3")
    r.config.configured_backend, r.config.provider = "builtin", provider
    r.builtin.unavailable_reason = unavailable
    d = diagnose(r, T0)
    assert {m.vectors.state for m in d.modes} == {builtin_vectors_cell(r).state} == {state}
    assert {m.models.state for m in d.modes} == {"na"}
    row = facts(r, d, T0).configured_row
    assert row is not None and row.cells[1] == d.modes[0].vectors


def test_a_share_never_reads_0_or_100_percent_of_something_partial():
    """Breaker round 15, B8: one small UTF-16 note among 12 said "0% of the notes' letters are in files saved as
    UTF-16" beside the verdict that blamed it."""
    from clawprobe.core.modes import _percent

    assert [_percent(x) for x in (0.0, 0.2, 1.0, 42.4, 99.6, 100.0)] == ["0%", "< 1%", "1%", "42%", "> 99%", "100%"]
