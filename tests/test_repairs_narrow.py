"""Narrow repairs, pure: every copyable command is filled with the receipt's real values (or not offered), and
each QMD fault gets the repair its evidence names — not_qmd, a damaged/unreadable/locked index, a timeout in
the mode it happened in, the model that is really missing, files qmd cannot read, probes that could not run.

The stderr texts below were recorded from the real qmd 2.8.3 (Node 24) on this test bed (see
tests/test_qmd_faults_real.py for the same states built for real).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.modes import canary_cell, fresh_cell
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes.workspace import (
    Change,
    Comparison,
    freshness_detail,
    to_freshness,
)
from clawprobe.core.receipt import Canary, Freshness, LockHolder, Receipt
from clawprobe.core.repairs import catalog, repair_for
from clawprobe.core.replay import load_receipts
from clawprobe.core.runrecord import RunRecord
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk import STEP_CONDITIONS, evaluate, start_walk
from clawprobe.core.walk_run import NotAllowed, check_allowed

REPO = Path(__file__).resolve().parent.parent
REPLAYS = (sorted((REPO / "tests" / "data" / "replay").glob("*.json"))
           + sorted((REPO / "src" / "clawprobe" / "tui" / "demo" / "scenarios").glob("*.json")))
T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)

CORRUPT_STDERR = """/home/operator/.cache/clawprobe/testbed/qmd/node_modules/better-sqlite3/lib/methods/wrappers.js:9
\tthis[cppdb].exec(sql);
\t            ^

SqliteError: database disk image is malformed
    at Database.exec (/home/operator/.cache/clawprobe/testbed/qmd/node_modules/better-sqlite3/lib/methods/wrappers.js:9:14)
  code: 'SQLITE_CORRUPT'
}

Node.js v24.22.3
"""
NOTADB_STDERR = CORRUPT_STDERR.replace("database disk image is malformed", "file is not a database").replace(
    "SQLITE_CORRUPT", "SQLITE_NOTADB")
CANTOPEN_STDERR = """/home/operator/.cache/clawprobe/testbed/qmd/node_modules/better-sqlite3/lib/database.js:69
SqliteError: unable to open database file
  code: 'SQLITE_CANTOPEN'
}

Node.js v24.22.3
"""
BUSY_STDERR = "SqliteError: database is locked\n  code: 'SQLITE_BUSY'\n}\n\nNode.js v24.22.3\n"


# ------------------------------------------------------------------------------------------------ helpers

def _outside_quotes(cmd: str) -> str:
    """The characters of a shell command that are not inside '…' or "…" (a quoted < > is harmless)."""
    out, quote, i = [], None, 0
    while i < len(cmd):
        ch = cmd[i]
        if quote is None and ch == "\\":
            i += 2
            continue
        if quote is None and ch in "'\"":
            quote = ch
        elif quote == ch:
            quote = None
        elif quote is None:
            out.append(ch)
        i += 1
    return "".join(out)


def _commands(action) -> list[str]:
    return [c for c in [action.command, *(s.command for s in action.steps)] if c]


def _texts(action) -> str:
    return " ".join([action.title, action.why, action.dont or "", *(f"{s.title} {s.check} {s.verify}" for s in action.steps)])


def _qmd_receipt(**upd) -> Receipt:
    r = Receipt(checked_at=T0)
    r.config.configured_backend = "qmd"
    r.config.path = "/srv/oc state/openclaw.json"
    r.config.workspace = "/srv/oc ws"
    r.qmd.command, r.qmd.resolved_path, r.qmd.resolves, r.qmd.version = "qmd", "/opt/qmd/bin/qmd", True, "2.8.3"
    for k, v in upd.items():
        obj, _, field = k.rpartition("__")
        setattr(getattr(r, obj) if obj else r, field, v)
    return r


def _receipts_for(verdict: Verdict, key: str | None) -> list[Receipt]:
    """Receipts that select catalog entry ``key`` (its mode/engine variant), rich and bare."""
    reason, _, variant = (key or "").partition("/")
    out = []
    for rich in (True, False):
        r = Receipt(checked_at=T0)
        if variant in ("qmd", "search", "vsearch", "query") or verdict in (Verdict.QMD_UNAVAILABLE, Verdict.VECTOR_NOT_READY):
            r.config.configured_backend = "qmd"
        if variant in ("search", "vsearch", "query"):
            r.config.search_mode = variant  # type: ignore[assignment]
        if rich:
            r = r.model_copy(deep=True)
            r.config.path, r.config.workspace = "/srv/oc/openclaw.json", "/srv/ws"
            r.gateway.path_dirs = ["/usr/local/bin", "/usr/bin"]
            r.qmd.command, r.qmd.resolved_path, r.qmd.resolves = "qmd", "/usr/local/bin/qmd", True
            r.qmd.candidate_path, r.qmd.candidate_version = "/opt/q/qmd", "2.8.3"
            r.qmd.lock_holders = [LockHolder(pid=4242, what="qmd embed")]
            r.freshness.unreadable_files = ["memory/private.md"]
            r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="miss")
        out.append((r, reason or None))
    return out


# ------------------------------------------------------------------------------------------------ placeholders

def test_no_copyable_command_has_a_placeholder():
    """Every entry × a rich and a bare receipt: no <…> outside quotes, no {key} left, no invented path; a
    runnable step stays within the allow-list."""
    seen = 0
    for (verdict, key) in catalog():
        for r, reason in _receipts_for(verdict, key):
            a = repair_for(verdict, reason, r, openclaw="/opt/oc/bin/openclaw", state_dir="/srv/oc")
            for cmd in _commands(a):
                seen += 1
                bare = _outside_quotes(cmd)
                assert "<" not in bare and ">" not in bare, (verdict, key, cmd)
                assert "{" not in bare and "}" not in bare, (verdict, key, cmd)
                assert "/absolute/path" not in cmd and "canary token" not in cmd, (verdict, key, cmd)
                shlex.split(cmd)  # parses as one shell line
            for s in a.steps:
                if s.runnable:
                    check_allowed(s.command, agent_id=r.agent_id, openclaw="/opt/oc/bin/openclaw")
    assert seen > 100


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.name)
def test_replayed_receipts_fill_their_commands(path):
    for r in load_receipts(path):
        d = diagnose(r)
        for cmd in _commands(d.next_action):
            bare = _outside_quotes(cmd)
            assert "<" not in bare and ">" not in bare and "{" not in bare, cmd
            assert "/absolute/path" not in cmd


def test_spec6_search_command_reads_the_token_from_the_canary_file():
    (r,) = load_receipts(REPO / "tests" / "data" / "replay" / "spec-6-vsearch-no-canary.json")
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "miss")
    assert d.next_action.command.endswith(
        "/usr/local/bin/qmd search \"$(grep -om1 'CLAWPROBE-CANARY-[A-Z2-7]*' "
        "~/.openclaw/workspace/memory/clawprobe-canary.md)\" --json")
    assert "XDG_CACHE_HOME=~/.openclaw/agents/main/qmd/xdg-cache" in d.next_action.command  # from config.path


@pytest.mark.parametrize("version, upgrade", [("1.1.6", True), ("1.0.0", True), ("2.8.3", False), ("10.2.0", False),
                                              (None, False)])
def test_a_canary_miss_served_by_a_qmd_1x_names_the_version_and_upgrades_it(version, upgrade):
    """breaker round 7, w15: the real @tobilu/qmd 1.1.6 never matches the canary's hyphenated token, so the miss is
    real — but its cause is the old major release the receipt measured (``qmd --version``), not the index."""
    (r,) = load_receipts(REPO / "tests" / "data" / "replay" / "spec-6-vsearch-no-canary.json")
    r.qmd.version = version
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "miss")
    assert (d.next_action.command == "npm install -g @tobilu/qmd@latest") is upgrade, d.next_action.command
    assert (f"qmd {version}, an old major" in d.next_action.title) is upgrade


def test_paths_are_quoted_and_the_hidden_canary_is_moved_by_its_real_path():
    r = _qmd_receipt()
    r.canary = Canary(expected_path="memory/.drafts/clawprobe-canary.md", outcome="miss", reason="hidden_path")
    a = repair_for(Verdict.RETRIEVAL_FAILED, "hidden_path", r)
    assert a.command == "mv -n '/srv/oc ws/memory/.drafts/clawprobe-canary.md' '/srv/oc ws'/memory/"
    assert shlex.split(a.command)[2] == "/srv/oc ws/memory/.drafts/clawprobe-canary.md"


def test_unknown_value_means_no_command_and_says_what_to_fill_in():
    r = _qmd_receipt(qmd__resolves=False, qmd__resolved_path=None, qmd__failure="not_on_path")
    a = repair_for(Verdict.QMD_UNAVAILABLE, "not_on_path", r)
    assert a.command is None and "absolute path of qmd" in a.why
    pin = next(s for s in a.steps if s.title == "Pin an absolute command")
    assert pin.command is None and "Not offered to copy" in pin.check
    r.canary = Canary()  # no canary: the direct search is not offered, never with "<canary token>"
    a = repair_for(Verdict.RETRIEVAL_FAILED, None, r)
    assert a.command is None and "canary token" in a.why


# ------------------------------------------------------------------------------------------------ not_qmd

def _ev(version: RunRecord, **kw) -> qb.QmdBinaryEvidence:
    return qb.QmdBinaryEvidence(command="/bin/true", how="absolute", resolved_path="/bin/true", exists=True,
                                executable=True, version=version, **kw)


@pytest.mark.parametrize("stdout, shown", [("", "printed nothing"), ("--version\n", "printed '--version'"),
                                           ("v24.22.3\n", "printed 'v24.22.3'")])
def test_a_program_that_does_not_say_qmd_is_not_qmd(stdout, shown):
    f = qb.interpret(_ev(RunRecord(argv=["/bin/true", "--version"], rc=0, stdout=stdout),
                         candidate="/opt/q/bin/qmd", candidate_version="2.8.3"))
    assert (f.resolves, f.failure, f.version, f.store_ok) == (False, "not_qmd", None, None)
    assert shown in f.failure_detail and "store command was not run" in f.failure_detail
    r = _qmd_receipt(qmd=f)
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "not_qmd")
    assert d.next_action.command == "openclaw config set memory.qmd.command /opt/q/bin/qmd"
    assert "/bin/true" not in " ".join(_commands(d.next_action))


def test_a_failing_command_is_replaced_by_the_qmd_found_elsewhere():
    f = qb.interpret(_ev(RunRecord(argv=["/bin/false", "--version"], rc=1),
                         candidate="/home/op/.npm-global/bin/qmd", candidate_version="2.8.3"))
    assert (f.resolves, f.failure) == (False, "version_failed")
    d = diagnose(_qmd_receipt(qmd=f))
    assert d.next_action.command == "openclaw config set memory.qmd.command /home/op/.npm-global/bin/qmd"


def test_qmd_version_needs_qmds_own_line():
    ok = RunRecord(argv=["qmd", "--version"], rc=0, stdout="qmd 2.8.3 (facd35e)\n")
    assert qb.qmd_version(ok) == "2.8.3"
    assert qb.qmd_version(ok.model_copy(update={"stdout": "not qmd 2.8.3"})) is None


# ------------------------------------------------------------------------------------------------ index faults

def _store(stderr: str, rc: int = 1) -> qb.QmdBinaryEvidence:
    ev = _ev(RunRecord(argv=["qmd", "--version"], rc=0, stdout="qmd 2.8.3 (facd35e)\n"),
             index_path="/s/agents/main/qmd/xdg-cache/qmd/index.sqlite")
    ev.command = ev.resolved_path = "/opt/qmd/bin/qmd"
    ev.store = RunRecord(argv=["qmd", "ls"], rc=rc, stderr=stderr)
    return ev


@pytest.mark.parametrize("stderr, tag, says", [
    (CORRUPT_STDERR, "index_corrupt", "SqliteError: database disk image is malformed (SQLITE_CORRUPT)"),
    (NOTADB_STDERR, "index_not_database", "SqliteError: file is not a database (SQLITE_NOTADB)"),
    (CANTOPEN_STDERR, "index_unreadable", "SqliteError: unable to open database file (SQLITE_CANTOPEN)"),
])
def test_store_stderr_names_the_index_fault(stderr, tag, says):
    f = qb.interpret(_store(stderr))
    assert (f.store_ok, f.failure) == (False, tag)
    assert says in f.failure_detail and "wrappers.js" not in f.failure_detail
    r = _qmd_receipt(qmd=f, freshness__last_proven_current=T0)  # a log line said "synced": not proof now
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, tag)
    assert fresh_cell(r, T0).state == "fail"
    cmds = " ".join(_commands(d.next_action))
    if tag == "index_unreadable":
        assert d.next_action.command.startswith("chmod u+rw ") and "mv " not in cmds
    else:
        assert d.next_action.command.startswith("mkdir '/srv/oc state/agents/main/qmd/xdg-cache/qmd/damaged-20261130T030000Z'")
        assert "memory index --agent main" in cmds and "--force" not in cmds
        assert next(s for s in d.next_action.steps if "managed update" in s.title).runnable


def test_own_read_of_a_corrupt_index_is_enough():
    r = _qmd_receipt(qmd__store_ok=True)
    r.vectors.not_ready_reason, r.vectors.detail = "index_corrupt", "QMD index corrupt: database disk image is malformed"
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "index_corrupt")
    assert any("clawprobe's read-only open" in e for e in d.evidence)


def test_locked_index_names_the_holder_and_never_the_search_mode():
    ev = _store(BUSY_STDERR)
    ev.holders = [qb.IndexHolder(pid=4242, what="python3 -c import sqlite3")]
    f = qb.interpret(ev)
    assert (f.store_ok, f.failure) == (None, "index_locked") and [h.pid for h in f.lock_holders] == [4242]
    assert "held open by pid 4242" in f.failure_detail
    r = _qmd_receipt(qmd=f)
    r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="timeout", reason="timeout",
                      latency_s=26.0, deadline_s=4.0)
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "index_locked")
    assert d.next_action.command == "ps -o pid,etime,args -p 4242" and "pid 4242" in d.next_action.title
    assert "searchMode" not in " ".join(_commands(d.next_action))
    ev.holders = []  # holder not visible: the ps command is not offered
    r.qmd = qb.interpret(ev)
    a = diagnose(r).next_action
    assert a.command is None and "fuser" in a.why + " ".join(s.check for s in a.steps)


# ------------------------------------------------------------------------------------------------ timeouts

def _timeout(mode: str) -> Receipt:
    r = _qmd_receipt(config__search_mode=mode)
    r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="timeout", reason="timeout",
                      latency_s=9.0, deadline_s=4.0)
    return r


def test_search_mode_timeout_never_suggests_search_mode():
    d = diagnose(_timeout("search"))
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "timeout")
    todo = " ".join([d.next_action.title, *_commands(d.next_action)])
    assert "searchMode" not in todo and "timeout 60 /opt/qmd/bin/qmd search" in d.next_action.command
    r = _timeout("search")
    r.backend.effective, r.backend.fallback_reason = "builtin", "timeout"
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.FALLBACK_ACTIVE, "timeout")
    assert "searchMode" not in " ".join([d.next_action.title, *_commands(d.next_action)])


@pytest.mark.parametrize("mode", ["vsearch", "query"])
def test_vector_mode_timeout_warms_the_models_up_first(mode):
    a = diagnose(_timeout(mode)).next_action
    assert f"/opt/qmd/bin/qmd {mode} 'clawprobe warm-up'" in a.command
    assert "timeoutMs" in a.title and "search" in a.title  # still offers the larger timeout or BM25 (RW04c)


# ------------------------------------------------------------------------------------------------ models

@pytest.mark.parametrize("mode, missing, pending, want, never", [
    ("vsearch", ["generate", "rerank"], 0, "vsearch 'clawprobe warm-up' -n 1", " embed"),
    ("query", ["generate", "rerank"], 0, "query 'clawprobe warm-up' --intent 'model warm-up' -n 1", " embed"),
    ("vsearch", ["embed"], 3, "qmd embed", "vsearch"),
    ("vsearch", ["embed", "generate"], 3, "qmd embed && ", "qmd pull"),
])
def test_model_download_fetches_the_missing_model(mode, missing, pending, want, never):
    r = _qmd_receipt(config__search_mode=mode)
    r.vectors.missing_models, r.vectors.pending, r.vectors.has_vector_table, r.vectors.documents = missing, pending, True, 5
    r.vectors.not_ready_reason = "model_download"  # clawprobe.core.downloads.apply_to_vectors: a needed model is incomplete
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.VECTOR_NOT_READY, "model_download")
    assert want in d.next_action.command and never not in d.next_action.command
    assert d.next_action.command.startswith("XDG_CONFIG_HOME=")


# ------------------------------------------------------------------------------------------------ probes that could not run

def test_no_openclaw_is_never_everything_passes():
    r = _qmd_receipt(freshness__last_proven_current=T0)
    r.backend.effective = "qmd"
    r.probe_errors = ["no `openclaw` executable found (gateway, PATH, $CLAWPROBE_OPENCLAW)"]
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "openclaw_not_found")
    assert d.next_action.command == "command -v openclaw" and "CLAWPROBE_OPENCLAW" in d.next_action.title
    assert "Everything measured passes" not in d.next_action.why and "plant" not in d.next_action.title.lower()
    r.probe_errors = ["openclaw memory status: exit 1"]
    assert diagnose(r).reason == "openclaw_failed"
    r.probe_errors = []
    assert diagnose(r).reason == "no_canary"


# ------------------------------------------------------------------------------------------------ freshness words

def _cmp(*changes: Change) -> Comparison:
    return Comparison(engine="qmd", checked_at=T0, changes=list(changes), last_proven_current=changes[0].at)


def test_changed_file_is_said_changed_not_missing():
    old = T0 - timedelta(minutes=30)
    f = to_freshness(_cmp(Change(rel="memory/note.md", kind="changed", at=old, evidence="sha256 a ≠ b"),
                          Change(rel="memory/new.md", kind="new", at=old, evidence="not in collection")))
    r = _qmd_receipt(freshness=f)
    d = diagnose(r, T0)
    assert (d.verdict, d.reason) == (Verdict.STALE_INDEX, "dirty")
    text = " | ".join(d.evidence)
    assert "changed since indexed: memory/note.md" in text and "new, not indexed: memory/new.md" in text
    assert "not in the index" not in text


def test_unreadable_note_is_named_and_permissions_come_first():
    old = T0 - timedelta(minutes=10)
    odd = "memory/my (old); notes.md"
    f = to_freshness(_cmp(Change(rel=odd, kind="unreadable", at=old,
                                 evidence="Permission denied (mode 0000, owner uid 0): qmd cannot read it"),
                          Change(rel="memory/new.md", kind="new", at=old, evidence="x")))
    assert f.stale_reason == "unreadable" and f.unreadable_files == [odd]
    d = diagnose(_qmd_receipt(freshness=f), T0)
    assert (d.verdict, d.reason) == (Verdict.STALE_INDEX, "unreadable")
    assert d.next_action.command == "chmod u+r " + shlex.quote(f"/srv/oc ws/{odd}")
    assert odd in d.next_action.title and "memory index" not in d.next_action.command
    assert "mode 0000" in " ".join(d.evidence)


def test_freshness_detail_groups_and_counts():
    at = T0
    changes = [Change(rel=f"memory/n{i}.md", kind="new", at=at, evidence="x") for i in range(7)]
    assert freshness_detail(changes) == "new, not indexed: " + ", ".join(f"memory/n{i}.md" for i in range(5)) + " and 2 more"


# ------------------------------------------------------------------------------------------------ vector-mode cross-check

def test_bm25_cross_check_does_not_prove_a_vector_mode():
    r = _qmd_receipt(config__search_mode="vsearch", freshness__last_proven_current=T0)
    r.vectors.pending, r.vectors.has_vector_table, r.vectors.missing_models, r.vectors.documents = 0, True, [], 3
    r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="miss", reason="search_not_invoked",
                      direct_qmd_found=True, detail="… an OpenClaw-side retrieval fault, the index is fine")
    d = diagnose(r, T0)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "vector_miss")
    text = " | ".join(d.evidence)
    assert "the index is fine" not in text and "not that the vsearch path works" in text
    assert " vsearch \"$(grep" in d.next_action.command
    assert "the vsearch path is unproven" in canary_cell(r, "vsearch").reason
    r.config.search_mode = "search"
    assert diagnose(r, T0).reason == "search_not_invoked"  # BM25 mode: the cross-check is the same path


# ------------------------------------------------------------------------------------------------ walk words

def test_no_step_says_known_and_new_steps_are_checkable():
    for action in catalog().values():
        for s in action.steps:
            assert not s.verify.strip().startswith("Known"), (action.verdict, action.reason, s.title)
    for title in ("Fix the index permissions", "Wait for it or stop it", "Make the files readable",
                  "Warm up the models", "Make the OpenClaw CLI findable", "Run the CLI"):
        assert STEP_CONDITIONS[title][0].kind != "manual"


def test_walk_conditions_follow_the_new_evidence():
    r = _qmd_receipt(probe_errors=["no `openclaw` executable found (gateway, PATH, $CLAWPROBE_OPENCLAW)"])
    w = start_walk(diagnose(r), operator="t")
    assert w.reason == "openclaw_not_found" and w.steps[0].title == "Make the OpenClaw CLI findable"
    d = diagnose(r)
    assert evaluate(w.steps[0].conditions[0], r, d, None).holds is False
    r.probe_errors = []
    assert evaluate(w.steps[0].conditions[0], r, diagnose(r), None).holds is True
    r.qmd.failure, r.qmd.store_ok = "index_locked", None
    cond = STEP_CONDITIONS["Wait for it or stop it"][0]
    assert evaluate(cond, r, diagnose(r), None).holds is False
    r.qmd.failure, r.qmd.store_ok = None, True
    assert evaluate(cond, r, diagnose(r), None).holds is True


def test_a_command_missing_a_value_is_not_runnable():
    r = _qmd_receipt()
    r.freshness = Freshness(last_proven_current=T0 - timedelta(hours=1), stale_reason="dirty",
                            unindexed_files=["memory/a.md"], unindexed_count=1)
    a = repair_for(Verdict.STALE_INDEX, "dirty", r, openclaw="/opt/oc/bin/openclaw")
    step = next(s for s in a.steps if s.runnable)
    assert check_allowed(step.command, agent_id="main", openclaw="/opt/oc/bin/openclaw")
    with pytest.raises(NotAllowed):
        check_allowed(repair_for(Verdict.STALE_INDEX, "unreadable", r).command or "chmod", agent_id="main")


def test_a_directory_as_the_qmd_command_is_named_a_directory(tmp_path):
    """``memory.qmd.command`` pointing at a directory: not "does not exist" (it does), not executable."""
    ev = qb.gather(str(tmp_path), [], None, str(tmp_path), {"PATH": ""}, None, run_store=False)
    f = qb.interpret(ev)
    assert (f.resolves, f.failure) == (False, "not_executable")
    assert f.failure_detail.startswith(f"{tmp_path} is a directory, not an executable")


@pytest.mark.parametrize(("scope", "file", "systemctl", "unit"), [
    ("system", "/etc/systemd/system/openclaw-gateway-prod.service", "sudo systemctl", "openclaw-gateway-prod"),
    ("user", "/home/op/.config/systemd/user/openclaw-gateway.service", "systemctl --user", "openclaw-gateway"),
    (None, None, "systemctl --user", "openclaw-gateway"),
])
def test_the_service_path_repair_edits_the_unit_the_environment_came_from(scope, file, systemctl, unit):
    """A gateway run by a system unit is edited and restarted through the system manager, under its own unit
    name; a user unit (or none found) through ``systemctl --user``."""
    r = _qmd_receipt(qmd__failure="service_path")
    r.gateway.env_source, r.gateway.service_file, r.gateway.service_scope = "systemd", file, scope
    a = repair_for(Verdict.QMD_UNAVAILABLE, "service_path", r)
    assert a.command == f"{systemctl} edit {unit}"
    assert [s.command for s in a.steps if s.command and "restart" in s.command] == [
        f"{systemctl} daemon-reload && {systemctl} restart {unit}"]
    assert any(s.command == f"{systemctl} show-environment | grep ^PATH=" for s in a.steps)
    for s in a.steps:
        if s.runnable:
            check_allowed(s.command, agent_id=r.agent_id, openclaw="openclaw")


def test_a_builtin_install_is_never_handed_a_qmd_command():
    """Every reason a builtin engine can be given (any verdict but the QMD-only ones), on a 2026.9.6 builtin
    receipt, rich and bare: no command or step runs qmd or sets its XDG dirs (breaker round 4: a moved canary on
    a builtin install got ``XDG_CONFIG_HOME=… qmd search …`` — qmd was not even installed)."""
    qmd_only = {Verdict.QMD_UNAVAILABLE, Verdict.FALLBACK_ACTIVE, Verdict.VECTOR_NOT_READY}
    seen = 0
    unlisted = [(Verdict.RETRIEVAL_FAILED, "a_tag_no_entry_has"), (Verdict.STALE_INDEX, "a_tag_no_entry_has"),
                (Verdict.UNVERIFIED, "a_tag_no_entry_has"), (Verdict.MEMORY_UNAVAILABLE, "a_tag_no_entry_has")]
    for (verdict, key) in [*catalog(), *unlisted]:
        reason, _, variant = (key or "").partition("/")
        if verdict in qmd_only or variant in ("qmd", "search", "vsearch", "query") or reason == "vector_miss":
            continue  # (vector_miss: rules._retrieval_tag gives it only to a QMD vector mode)
        for rich in (True, False):
            r = Receipt(checked_at=T0, agent_id="ops")
            r.openclaw.version, r.openclaw.has_qmd_backend = "2026.9.6", False
            if rich:
                r.config.path, r.config.workspace = "/srv/oc/openclaw.json", "/srv/ws"
                r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="miss")
            a = repair_for(verdict, reason or None, r, openclaw="openclaw", state_dir="/srv/oc")
            for cmd in _commands(a):
                seen += 1
                words = shlex.split(cmd)
                assert "qmd" not in words and not any(w.startswith(("XDG_", "QMD_")) for w in words), (verdict, key, cmd)
    assert seen > 40


@pytest.mark.parametrize("reason", ["fingerprint_mismatch", "pending", "no_vector_store", "embed_timeout"])
def test_vectors_not_ready_without_the_embed_model_fetch_it_first(reason):
    """Whatever keeps the vectors from being ready, while the embed model is not in the cache every embed — an
    index run's too — cannot finish (offline it hangs: breaker round 4 measured the suggested ``openclaw memory
    index`` killed at 100 s after the embed model was switched to one never downloaded): the model fetch first."""
    r = _qmd_receipt(config__search_mode="vsearch", vectors__missing_models=["embed", "generate"])
    a = repair_for(Verdict.VECTOR_NOT_READY, reason, r)
    assert a.command is not None and "memory index" not in a.command and "embed" in a.title, (a.title, a.command)
    r.vectors.missing_models = []
    assert "Fetch the missing" not in repair_for(Verdict.VECTOR_NOT_READY, reason, r).title


def test_a_directory_at_the_store_path_is_moved_aside_not_chowned(tmp_path):
    """A ``cp -r`` restore leaves a directory where 2026.9.6's store belongs (breaker round 6, z36): clawprobe's own
    read-only open says so (``store_damage == "directory"``) and the repair moves it aside and puts the store file
    back — not the owner/mode repair of an unreadable store."""
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.probes.builtin_index import read_builtin_index, to_builtin_facts
    from clawprobe.core.receipt import Receipt

    store = tmp_path / "agents" / "ops" / "agent" / "openclaw-agent.sqlite"
    (store / "nested").mkdir(parents=True)
    b = to_builtin_facts(read_builtin_index(tmp_path, "ops"))
    assert b.store_damage == "directory" and b.store_unreadable == f"{store}: is a directory"
    r = Receipt(agent_id="ops", checked_at=datetime.now(UTC))
    r.builtin = b
    r.builtin.unavailable_reason, r.builtin.unavailable_detail = "index_unreadable", b.store_unreadable
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "index_unreadable")
    assert d.next_action.command.startswith(f"mv -n {store} ") and "chown" not in d.next_action.title.lower()
    assert "owner or mode" not in d.next_action.title


@pytest.mark.parametrize("what", ["file", "dangling symlink"])
def test_a_memory_path_that_is_no_directory_is_fixed_before_a_canary_is_planted(tmp_path, what):
    """Breaker round 6 (z27): ``<workspace>/memory`` a regular file — ``unverified · no_canary`` said "plant a
    canary", which refuses ("memory is not a directory"). The finding names it and the repair makes the dir first."""
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.probes.workspace import memory_root_findings
    from clawprobe.core.receipt import Receipt

    ws = tmp_path / "ops ws"
    ws.mkdir()
    assert memory_root_findings(str(ws)) == []  # absent: OpenClaw creates it, the plant too
    (ws / "memory").mkdir()
    assert memory_root_findings(str(ws)) == []
    (ws / "memory").rmdir()
    if what == "file":
        (ws / "memory").write_text("notes saved under the wrong name\n")
    else:
        (ws / "memory").symlink_to(tmp_path / "gone")
    (f,) = memory_root_findings(str(ws))
    r = Receipt(agent_id="ops", checked_at=datetime.now(UTC))
    r.config.workspace = str(ws)
    r.findings.append(f)
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("unverified", "no_canary")
    listed = d.next_action.command
    subprocess.run(listed, shell=True, check=True, timeout=10)  # the printed command, run
    assert (ws / "memory").is_dir() and not (ws / "memory").is_symlink() and os.path.lexists(ws / "memory.moved")
    assert memory_root_findings(str(ws)) == []


@pytest.mark.parametrize("reason", ["command_missing", "not_executable", "not_on_path"])
@pytest.mark.parametrize("path", ["/opt/My Tools/qmd", "/home/ana/Ferramentas\tnovas/bin/qmd"])
def test_an_unquoted_qmd_path_with_a_blank_is_quoted_not_reinstalled(reason, path):
    """Breaker round 8, n12: memory.qmd.command = "/…/My Tools/qmd" — OpenClaw runs "/…/My"; the whole path is a
    working qmd, which the candidate search now tries first. The fix is the quotes inside the value (run on a copy
    of the real state with 2026.7.35: qmd resolves), never "install qmd"."""
    import json

    from clawprobe.core.probes.config import _named_qmds

    assert _named_qmds(path)[0] == path and _named_qmds("node /opt/qmd/bin/qmd") == ["/opt/qmd/bin/qmd"]
    r = _qmd_receipt(qmd__command=path, qmd__resolved_path=None, qmd__resolves=False, qmd__failure=reason,
                     qmd__candidate_path=path, qmd__candidate_version="2.8.3", qmd__candidate_searched=True)
    action = repair_for(Verdict.QMD_UNAVAILABLE, reason, r, openclaw="openclaw")
    assert action.command == f"openclaw config set memory.qmd.command {shlex.quote(json.dumps(chr(34) + path + chr(34)))}"
    value = shlex.split(action.command)[-1]
    assert json.loads(value) == f'"{path}"' and "install" not in action.title


def test_extra_paths_are_trimmed_as_openclaw_trims_them():
    """Breaker round 9, p01: OpenClaw 2026.9.6 indexes ``" spaced "`` as ``spaced`` (its search finds the note);
    clawprobe said the path does not exist and counted its indexed note as deleted."""
    from clawprobe.core.probes.config import memory_settings

    tree = {"agents": {"defaults": {"memorySearch": {"extraPaths": [" spaced ", "   ", "notes/", {"path": " team "}]}}}}
    assert memory_settings(tree, "main").extra_paths == ["spaced", "notes/", "team"]


@pytest.mark.parametrize("had_qmd", [True, False])
def test_a_retired_backend_is_migrated_by_doctor_fix_after_a_backup(tmp_path, had_qmd):
    """Breaker round 9, p06: the printed ``openclaw doctor`` exits 1 on 2026.9.6 and changes nothing; the fix is
    ``doctor --fix``, which removes the QMD home — so the one command backs it up first. Round 12, s09: where the
    agent never had a QMD home, the backup's ``cp`` failed and doctor never ran. Run in bash as printed, with a
    stand-in for the OpenClaw CLI."""
    state = tmp_path / "state dir"
    home = state / "agents" / "ops-2" / "qmd"
    if had_qmd:
        home.mkdir(parents=True)
        (home / "index.sqlite").write_bytes(b"x")
    else:
        state.mkdir()
    r = Receipt(checked_at=T0, agent_id="ops-2")
    r.config.path = str(state / "openclaw.json")
    action = repair_for(Verdict.BACKEND_RETIRED, None, r, openclaw="echo")
    assert action.command is not None
    p = subprocess.run(["bash", "-c", action.command], capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stdout) == (0, "doctor --fix\n"), p.stderr
    assert (home.with_name("qmd.bak") / "index.sqlite").is_file() is had_qmd


@pytest.mark.parametrize(("update", "sync", "stuck"), [
    ({"interval": "0", "onBoot": False}, {"watch": False}, True),   # breaker round 9, p16: nothing ever updates
    ({"interval": "0m"}, {"watch": False}, True),                    # onBoot on: only a gateway start would
    ({"interval": "0"}, None, False),                                # the watcher syncs a change
    ({"interval": "5m", "onBoot": False}, {"watch": False}, False),  # the timer does, within the lease
])
def test_a_change_under_a_config_that_schedules_no_update_is_stale_now(update, sync, stuck):
    """Breaker round 9, p16: QMD with ``update.interval`` 0 and the file watcher off — a note edited seconds ago
    was ``healthy`` "awaiting update" for an update the config rules out (``memory search`` returned []). The
    change is stale at once and the action is the index run by hand, never "wait for the update cycle"."""
    from clawprobe.core.probes.config import ConfigSnapshot, config_facts

    agents = {"list": [{"id": "ops-7", **({"memorySearch": {"sync": sync}} if sync else {})}]}
    tree = {"memory": {"backend": "qmd", "qmd": {"update": update}}, "agents": agents}
    r = _qmd_receipt(agent_id="ops-7")
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", exists=True, tree=tree), "ops-7",
                            "2026.7.35", "/srv/ws")
    r.freshness = Freshness(last_proven_current=T0 - timedelta(seconds=3), stale_reason="dirty",
                            unindexed_files=["MEMORY.md"], unindexed_count=1, method="disk vs index")
    d = diagnose(r, now=T0)
    assert (d.verdict == Verdict.STALE_INDEX) is stuck, d
    if stuck:
        assert d.reason == "dirty" and "schedules no automatic update" in d.next_action.title
        assert d.next_action.command == "openclaw memory index --agent ops-7"
        assert "sync.watch = false" in " ".join(d.evidence)
        assert ("onBoot = false" in " ".join(d.evidence)) is (update.get("onBoot") is False)
        assert fresh_cell(r, T0).state == "fail"


@pytest.mark.parametrize("reason", ["no_canary", "never_indexed"])
def test_a_missing_workspace_with_notes_above_it_is_pointed_at_them_whatever_else_is_missing(reason):
    """Breaker round 11, s07: on 2026.7.35 the same layout as round 9's p13, never indexed yet, printed
    ``openclaw memory index`` (it indexed nothing: the workspace is still missing) instead of pointing the agent at
    its notes. The key is the agent's own ``agents.list`` entry."""
    from clawprobe.core.receipt import Coverage

    r = _qmd_receipt()
    r.config.configured_backend, r.config.workspace_key = "builtin", "agents.list[0].workspace"
    r.coverage = Coverage(workspace="missing", notes_nearby="/srv/agent")
    a = repair_for(Verdict.UNVERIFIED, reason, r, openclaw="/opt/oc/bin/openclaw")
    assert a.command == "/opt/oc/bin/openclaw config set 'agents.list[0].workspace' /srv/agent"


def _log_record(at: datetime, message: str) -> str:
    import json

    return json.dumps({"0": '{"subsystem":"memory"}', "1": message, "time": at.isoformat(),
                       "_meta": {"logLevelName": "WARN", "name": '{"subsystem":"memory"}'}})


@pytest.mark.parametrize(("agent", "failure", "later_sync"), [
    ("ops-7", "qmd boot update failed: Error: qmd update timed out after 1ms", False),
    ("night-shift", "qmd update failed (Error: qmd update timed out after 90000ms)", False),       # the interval's
    ("main", "qmd watch sync failed: Error: qmd update timed out after 250 ms", False),
    ("ops-7", "qmd session-start sync failed: Error: qmd update timed out after 1ms", True),      # a sync since
])
def test_a_change_whose_every_update_times_out_is_stale_now_and_the_timeout_is_raised(agent, failure, later_sync):
    """Breaker round 23 (r23q): the gateway's log shows its newest qmd update cut off at
    ``memory.qmd.update.updateTimeoutMs`` and none completed since: a change on disk never reaches the index, yet a
    note inside the lease was ``healthy``. Stale now, and the action raises the timeout (``memory index`` uses the
    same timeout). A sync completed after the timeout is the measured end of it."""
    from clawprobe.core.interpret.merge import unfinished_update_timeout
    from clawprobe.core.probes import openclaw_log as oclog

    lines = [_log_record(T0 - timedelta(seconds=60), f'qmd sync completed for agent "{agent}" reason=cli durationMs=850'),
             _log_record(T0 - timedelta(seconds=30), failure)]
    if later_sync:
        lines.append(_log_record(T0 - timedelta(seconds=5), f'qmd sync completed for agent "{agent}" reason=watch'))
    log = oclog.interpret(oclog.parse_lines(lines)[0], scope=oclog.LogScope(agent_id=agent))
    assert [e.detail for e in log.update_timeouts] == [failure]
    unfinished = unfinished_update_timeout(log)
    assert (unfinished is None) is later_sync
    r = _qmd_receipt(agent_id=agent)
    r.freshness = Freshness(last_proven_current=T0 - timedelta(seconds=40), stale_reason="dirty",
                            unindexed_files=["memory/ferry.md"], unindexed_count=1, method="disk vs index",
                            update_timeout=unfinished.detail if unfinished else None)
    d = diagnose(r, now=T0)
    if later_sync:
        assert d.verdict != Verdict.STALE_INDEX, d
        return
    assert d.verdict == Verdict.STALE_INDEX, d
    assert failure in " ".join(d.evidence) and fresh_cell(r, T0).state == "fail"
    assert d.next_action.command == "openclaw config set memory.qmd.update.updateTimeoutMs 120000"
    assert "memory index" not in d.next_action.command and "Don't run `openclaw memory index` first" in (
        d.next_action.dont or "")


@pytest.mark.parametrize("agent", ["ops", "night-shift"])
def test_builtin_store_steps_name_the_measured_store_not_the_newest_layout(tmp_path, agent):
    """The steps that look at the builtin store (who holds its lock, who owns it, what a dead writer left, the
    orphaned reindex copies) named the newer ``agents/<id>/agent/openclaw-agent.sqlite`` whatever was read; an
    older install's store is the sidecar ``memory/<id>.sqlite`` (E1/E2, ``builtin_store_candidates``), so ``fuser``
    found no holder and ``ls`` listed another dir. They name the store clawprobe read now."""
    from clawprobe.core.probes.builtin_index import read_builtin_index, to_builtin_facts

    state = tmp_path / "state dir"
    store = state / "memory" / f"{agent}.sqlite"
    store.parent.mkdir(parents=True)
    import sqlite3

    sqlite3.connect(store).close()
    b = to_builtin_facts(read_builtin_index(state, agent))
    assert b.store_path == str(store)
    quoted, quoted_dir = shlex.quote(str(store)), shlex.quote(str(store.parent))
    for verdict, reason, expected in [
        (Verdict.MEMORY_UNAVAILABLE, "index_locked", f"fuser -v {quoted}"),
        (Verdict.MEMORY_UNAVAILABLE, "index_unreadable", f"ls -ln {quoted_dir}/"),
        (Verdict.UNVERIFIED, "wal_pending", f"ls -l {quoted_dir}/"),
        (Verdict.HEALTHY, "reindex_orphans", f"ls -la {quoted_dir}"),
    ]:
        r = Receipt(agent_id=agent, checked_at=T0)
        r.builtin = b
        steps = [s.command for s in repair_for(verdict, reason, r, state_dir=str(state)).steps if s.command]
        assert expected in steps, (reason, steps)
        assert not any("agents/" in c for c in steps if c.startswith(("fuser", "ls"))), (reason, steps)


def _node20_gateway_node24_shell(gw_bin: Path) -> tuple[list[str], dict[str, str]]:
    """A gateway PATH whose first dir ``gw_bin`` holds the test bed's real Node 20, and a shell environment whose
    PATH starts with its real Node 24: ``(gateway path_dirs, shell env)``."""
    from tests.testbed import Testbed

    tb = Testbed.require()
    gw_bin.mkdir()
    (gw_bin / "node").symlink_to(tb.node20)
    return [str(gw_bin), "/usr/bin", "/bin"], {**os.environ, "PATH": f"{tb.node.parent}:{os.environ['PATH']}"}


@pytest.mark.real
def test_native_binding_node_step_runs_the_node_the_gateway_path_gives_qmd(tmp_path):
    """``native_binding``'s "Run under a supported Node" step was a bare ``node --version``: the operator's shell's
    Node, not the one qmd's ``#!/usr/bin/env node`` launcher gets from the gateway's PATH — a shell on Node 24 said
    "≥ 22" while the gateway ran qmd under Node 20 (the crash). Pasted as shown, the step now runs the gateway PATH's
    ``node`` (the test bed's real Node 20 there, its real Node 24 on the shell's PATH)."""
    path_dirs, env = _node20_gateway_node24_shell(tmp_path / "gateway bin")
    r = Receipt(agent_id="night-shift", checked_at=T0)
    r.config.configured_backend = "qmd"
    r.qmd.failure, r.qmd.resolves, r.qmd.store_ok = "native_binding", True, False
    r.gateway.path_dirs = path_dirs
    (step,) = [s for s in repair_for(Verdict.QMD_UNAVAILABLE, "native_binding", r).steps if "Node" in s.title]
    out = subprocess.run(["bash", "-c", step.command], capture_output=True, text=True, env=env, timeout=30)
    assert (out.returncode, out.stdout.strip()[:4]) == (0, "v20."), (step.command, out)


@pytest.mark.parametrize("agent", ["main", "ops-bot"])
def test_the_pinned_provider_status_step_is_bounded(agent):
    """Breaker round 23: against a pinned provider that answers after 120 s, the repair's first step (`openclaw
    memory status --deep`) kept retrying that provider for more than 150 s, pasted as shown. The step is bounded
    (`timeout 90`), and its verify line says what running out the bound means."""
    r = Receipt(agent_id=agent, checked_at=T0)
    r.config.provider, r.config.provider_explicit = "openai", True
    a = repair_for(Verdict.MEMORY_UNAVAILABLE, "explicit_provider", r)
    deep = [s for s in a.steps if s.command and "status --deep" in s.command]
    assert deep and a.command == deep[0].command, (a.command, deep)
    for s in deep:
        assert s.command.startswith(f"timeout 90 openclaw memory status --deep --agent {agent}"), s.command
        assert "exit 124" in s.verify, s.verify


def test_a_bounded_openclaw_step_keeps_the_install_it_acts_on(tmp_path):
    """The bound goes after the ``OPENCLAW_STATE_DIR=…`` words that carry the probed install, so pasted, the
    variable still reaches OpenClaw (``timeout 90 OPENCLAW_STATE_DIR=… openclaw`` would try to run the assignment)."""
    from clawprobe.core.locate import Located, command_lines

    state = tmp_path / "it's my oc"
    state.mkdir()
    lines = command_lines(["openclaw"], Located(path=str(state), source="--state-dir"), None)
    r = Receipt(agent_id="ops-bot", checked_at=T0)
    r.config.provider, r.config.provider_explicit = "openai", True
    cmd = repair_for(Verdict.MEMORY_UNAVAILABLE, "explicit_provider", r, openclaw=lines.openclaw).command
    assert cmd == f"OPENCLAW_STATE_DIR={shlex.quote(str(state))} timeout 90 openclaw memory status --deep --agent ops-bot"
    probe = cmd.replace("timeout 90 openclaw memory status --deep --agent ops-bot", "timeout 90 printenv OPENCLAW_STATE_DIR")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert out.stdout == f"{state}\n", out


@pytest.mark.real
def test_builtin_runtime_steps_run_the_node_the_gateway_path_gives_it(tmp_path):
    """``memory_unavailable · runtime``'s ``node -e "require('node:sqlite')"`` and ``node --version`` ran the
    operator's shell's Node: a shell on Node 24 loaded node:sqlite and said "supported" while the gateway ran on
    Node 20 (the fault). Pasted as shown, both now run the ``node`` first on the gateway's PATH (the test bed's
    real Node 20 there, its real Node 24 first on the shell's PATH)."""
    path_dirs, env = _node20_gateway_node24_shell(tmp_path / "svc bin")
    r = Receipt(agent_id="ops-bot", checked_at=T0)
    r.config.configured_backend = "builtin"
    r.gateway.path_dirs = path_dirs
    action = repair_for(Verdict.MEMORY_UNAVAILABLE, "runtime", r)
    (step,) = [s for s in action.steps if s.title == "Check the runtime"]

    def run(cmd: str | None) -> subprocess.CompletedProcess[str]:
        assert cmd is not None
        return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=30)

    assert run("node --version").stdout.startswith("v24."), "the shell's node must be the test bed's Node 24"
    out = run(step.command)
    assert (out.returncode, out.stdout.strip()[:4]) == (0, "v20."), (step.command, out)
    probe = run(action.command)
    assert probe.returncode != 0 and "node:sqlite" in probe.stderr, (action.command, probe)
    assert not any("qmd" in (c or "") for c in [action.command, *(s.command for s in action.steps)])
