"""The evidence ledger (spec §10): an unknown memory error never yields healthy.

Property tests inject arbitrary memory errors no clawprobe rule knows into every healthy fixture — the
recorded RW bundles (through the log and stderr parsers the live probe uses) and the demo scenarios'
receipts (through the refinement) — and assert the verdict is ``unverified · unrecognized_signal``,
quoting the (redacted) line and its source. Known benign lines stay healthy and are listed with why.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clawprobe.core import ledger
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import Extra
from clawprobe.core.interpret import refine
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes.exits import describe_exit
from clawprobe.core.recorded import assemble_parts, load_bundle
from clawprobe.core.redaction import redact_text
from clawprobe.core.verdicts import Verdict
from clawprobe.tui.demo import scenarios
from tests.rw_cases import CASES
from tests.rw_support import DATA, action_texts

HEALTHY_BUNDLES = sorted({c.bundle for c in CASES.values() if c.verdict == "healthy" and c.bundle})
HEALTHY_DEMO = [(s.name, r) for s in scenarios() for r, e in zip(s.receipts, s.expect, strict=False)
                if e.verdict == "healthy"]

_PARTS = {name: assemble_parts(load_bundle(DATA / name)) for name in HEALTHY_BUNDLES}

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzXYZ_0123456789", min_size=2, max_size=12)
_PREFIX = st.sampled_from(["memory sync failed (watch): Error:", "[memory] unexpected", "qmd update failed:",
                           "embedding worker crashed:", "memory manager error:", "Memory index failed (main):",
                           "memory_search returned an unexpected", "reindex step failed:"])
_LEVEL = st.sampled_from(["ERROR", "WARN", "FATAL"])


@st.composite
def unknown_memory_error(draw) -> str:
    """A memory error text that no clawprobe rule knows (not a signature, not a known or benign text)."""
    words = draw(st.lists(_WORD, min_size=1, max_size=6))
    line = f"{draw(_PREFIX)} {' '.join(words)}"
    assume(not oc.error_signals(line) and ledger.classify(line, _any_receipt())[0] == "unrecognized")
    return line


def _any_receipt():
    return next(iter(_PARTS.values()))[0]


def _tslog(text: str, level: str, at) -> str:
    return json.dumps({"0": json.dumps({"subsystem": "memory"}), "1": text,
                       "_meta": {"logLevelName": level, "date": at.isoformat().replace("+00:00", "Z")}})


def _with_log_line(x: Extra, agent: str, text: str, level: str, at) -> Extra:
    recs, _ = oclog.parse_lines([_tslog(text, level, at)], "logs/openclaw.log")
    injected = oclog.interpret(recs, agent)
    log = (x.log or oclog.LogFacts()).model_copy(deep=True)
    log.issues += injected.issues
    log.signals += injected.signals
    return x.model_copy(update={"log": log})


def _assert_unrecognized(r, line: str) -> None:
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "unrecognized_signal"), (d.verdict, d.reason, d.evidence)
    quoted = redact_text(line)[:80]  # quoted as kept: a secret-shaped word ("token 00000000") is masked
    assert any(quoted in e for e in d.evidence), d.evidence
    says, todo, dont = action_texts(d)
    assert "read this" in says and "cannot judge" in says
    assert "memory index" not in todo and "--force" not in todo and "healthy" in dont


def test_healthy_fixtures_exist_and_are_healthy():
    assert len(HEALTHY_BUNDLES) >= 4 and len(HEALTHY_DEMO) >= 2
    for name, (r, x) in _PARTS.items():
        assert diagnose(refine(r, x)).verdict == Verdict.HEALTHY, name
    for name, r in HEALTHY_DEMO:
        assert diagnose(refine(r, Extra())).verdict == Verdict.HEALTHY, name


@pytest.mark.parametrize("name", HEALTHY_BUNDLES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(line=unknown_memory_error(), level=_LEVEL, ago=st.integers(min_value=1, max_value=50))
def test_unknown_log_error_never_healthy_recorded(name, line, level, ago):
    r, x = _PARTS[name]
    out = refine(r, _with_log_line(x, r.agent_id, line, level, r.checked_at - timedelta(seconds=ago)))
    _assert_unrecognized(out, line)
    entry = next(e for e in out.ledger if e.kind == "unrecognized")
    assert entry.source.startswith("gateway log") and entry.level == level


@pytest.mark.parametrize("name", HEALTHY_BUNDLES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(line=unknown_memory_error())
def test_unknown_stderr_error_never_healthy_recorded(name, line):
    r, x = _PARTS[name]
    s = x.search
    assume(s is not None)
    raw = "\n".join([*s.stderr.lines, f"[memory] {line}"])
    search = s.model_copy(update={"stderr": oc.parse_stderr(raw)})
    out = refine(r, x.model_copy(update={"search": search}))
    _assert_unrecognized(out, f"[memory] {line}")


@pytest.mark.parametrize("name,receipt", HEALTHY_DEMO, ids=[n for n, _ in HEALTHY_DEMO])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(line=unknown_memory_error(), level=_LEVEL)
def test_unknown_log_error_never_healthy_demo(name, receipt, line, level):
    x = _with_log_line(Extra(), receipt.agent_id, line, level, receipt.checked_at - timedelta(seconds=5))
    _assert_unrecognized(refine(receipt, x), line)


def test_secret_in_an_unknown_line_is_redacted():
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    out = refine(r, _with_log_line(x, r.agent_id, f"memory manager: weird state token={key}", "ERROR",
                                   r.checked_at - timedelta(seconds=3)))
    d = diagnose(out)
    assert d.reason == "unrecognized_signal" and not any(key in e for e in d.evidence)
    assert key not in out.model_dump_json()


def test_old_line_outside_the_lease_window_is_not_counted():
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    old = r.checked_at - timedelta(seconds=max(r.lease.seconds, 60) + 600)
    out = refine(r, _with_log_line(x, r.agent_id, "memory manager: zz unknown thing", "ERROR", old))
    assert diagnose(out).verdict == Verdict.HEALTHY


def test_info_line_and_other_subsystem_are_not_memory_issues():
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    at = r.checked_at - timedelta(seconds=3)
    recs, _ = oclog.parse_lines([_tslog("memory manager: zz unknown thing", "INFO", at),
                                 json.dumps({"0": json.dumps({"subsystem": "channels/telegram"}),
                                             "1": "polling failed: zz",
                                             "_meta": {"logLevelName": "ERROR", "date": at.isoformat()}})])
    assert oclog.interpret(recs, r.agent_id).issues == []


@pytest.mark.parametrize(("line", "why"), [
    ("qmd collection add skipped for memory-root-main: a collection already exists for this path and pattern",
     "managed collection"),
    ("qmd search failed because a managed collection is missing; repairing collections and retrying once",
     "managed collection"),
    # breaker round 13, N1: another install's retries in the shared default log turned a healthy install unverified
    ("memory embeddings retryable error; retrying in 948ms", "retries an embedding call"),
    # breaker round 15, B3/B5: every action OpenClaw's waitForEmbeddingRetry names (7.35 and 9.6) — another agent's
    # query retries in the shared log, or this agent's own from before its endpoint came back
    ("memory embeddings retryable error; retrying query in 500ms", "retries an embedding call"),
    ("memory embeddings retryable error; retrying structured batch in 2000ms", "retries an embedding call"),
])
def test_benign_lines_are_listed_with_why(line, why):
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    out = refine(r, _with_log_line(x, r.agent_id, line, "WARN", r.checked_at - timedelta(seconds=3)))
    assert diagnose(out).verdict == Verdict.HEALTHY
    e = next(e for e in out.ledger if e.line == line)
    assert e.kind == "benign" and why in e.why


@pytest.mark.parametrize("line", ["memory embeddings retryable error; giving up after 3 attempts",
                                  "memory embeddings retryable error; retrying query failed: zq-9"])
def test_a_retry_notices_neighbour_that_is_not_a_retry_is_not_benign(line):
    """Only the waiting notice is benign (breaker round 15): a line beside it that says something else is judged."""
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    out = refine(r, _with_log_line(x, r.agent_id, line, "WARN", r.checked_at - timedelta(seconds=3)))
    assert diagnose(out).verdict != Verdict.HEALTHY
    assert next(e for e in out.ledger if e.line == line).kind != "benign"


@pytest.mark.parametrize("rc,kind", [(3221225477, "native_crash"), (-1073741819, "native_crash"), (139, "native_crash"),
                                     (-11, "native_crash"), (-9, "killed"), (137, "killed"), (1, "exit"), (0, "ok")])
def test_exit_status_kinds(rc, kind):
    assert describe_exit(rc).kind == kind


def test_ledger_shown_in_json_schema():
    from clawprobe.core.receipt import Receipt

    props = Receipt.model_json_schema()["properties"]
    assert "ledger" in props


def test_check_text_shows_the_unrecognized_and_benign_lines():
    from clawprobe.core.report import to_text

    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    at = r.checked_at - timedelta(seconds=3)
    x = _with_log_line(x, r.agent_id, "memory manager error: zq-77 state", "ERROR", at)
    x = _with_log_line(x, r.agent_id, "qmd collection add skipped for memory-root-main: a collection already exists "
                                      "for this path and pattern", "WARN", at)
    out = refine(r, x)
    text = to_text([(out, diagnose(out))])
    assert "Unverified (unexplained memory output) · output clawprobe does not recognise" in text
    assert "ledger [unrecognized] gateway log (logs/openclaw.log): memory manager error: zq-77 state" in text
    assert "ledger [benign]" in text and "recreates its own managed collection" in text


def test_dashboard_shows_the_ledger_and_the_verdict():
    from textual.content import Content

    from clawprobe.tui import demo
    from clawprobe.tui.state import build_report
    from clawprobe.tui.widgets.backend_pane import BackendPane

    s = demo.scenarios()[demo.find("spec-1-bm25-pending-healthy")]
    (r, *_), _ = demo.at_now(s, s.receipts[0].checked_at)
    x = _with_log_line(Extra(), r.agent_id, "memory manager error: [odd] zq-77", "ERROR",
                       r.checked_at - timedelta(seconds=2))
    out = refine(r, x)
    rep = build_report([out], out.checked_at, source="demo")
    assert rep.current.diagnosis.verdict == Verdict.UNVERIFIED
    body = Content.from_markup(BackendPane().body(rep.current, rep, out.checked_at)).plain
    assert "unrecognized memory manager error: [odd] zq-77" in body and "cannot judge it" in body


def test_polluted_json_stdout_line_is_accounted_for():
    r, x = next((r, x) for r, x in _PARTS.values() if x.search is not None and x.search.hits)
    s = x.search
    raw = "[memory] vector worker error: shard 3 unexpected EOF\n" + json.dumps(
        {"results": [{"path": h.path, "startLine": h.start_line, "endLine": h.end_line, "score": h.score,
                      "snippet": h.snippet, "source": h.source, "textScore": 0.5} for h in s.hits]}) \
        + "\nDeprecationWarning: zq-9 is deprecated\n"
    polluted = oc.parse_search(raw, "", s.rc, s.seconds)
    assert [h.path for h in polluted.hits] == [h.path for h in s.hits]  # the JSON is still read
    assert polluted.stdout_noise == ["[memory] vector worker error: shard 3 unexpected EOF",
                                     "DeprecationWarning: zq-9 is deprecated"]
    out = refine(r, x.model_copy(update={"search": polluted}))
    _assert_unrecognized(out, "[memory] vector worker error: shard 3 unexpected EOF")


def test_missing_env_var_warning_names_no_variable_and_is_benign_for_other_keys():
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    line = ('Config warning: env var "OPENAI_API_KEY" at models.providers.anthropic.apiKey - feature using this value '
            'will be unavailable')
    s = x.search
    search = s.model_copy(update={"stderr": oc.parse_stderr("\n".join([*s.stderr.lines, line]))})
    out = refine(r, x.model_copy(update={"search": search}))
    assert "OPENAI_API_KEY" not in out.model_dump_json()
    e = next(e for e in out.ledger if "models.providers.anthropic" in e.line)
    assert e.kind == "benign" and "does not read" in e.why
    for key in ("agents.defaults.memorySearch.remote.apiKey", "agents.defaults.workspace", "agents.list[2].workspace"):
        mem = line.replace("models.providers.anthropic.apiKey", key)  # the notes searched depend on these
        search = s.model_copy(update={"stderr": oc.parse_stderr(mem)})
        out = refine(r, x.model_copy(update={"search": search}))
        assert diagnose(out).reason == "unrecognized_signal" and "OPENAI_API_KEY" not in out.model_dump_json(), key


def test_a_line_written_during_the_probe_is_kept_without_a_later_time():
    """Live, the CLI probes run after ``checked_at``: their log lines must not make the receipt invalid."""
    from clawprobe.core.receipt import Receipt

    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    out = refine(r, _with_log_line(x, r.agent_id, "memory manager error: zq-late", "ERROR",
                                   r.checked_at + timedelta(seconds=200)))
    e = next(e for e in out.ledger if "zq-late" in e.line)
    assert e.at is None and "during clawprobe's probe" in e.source and e.kind == "unrecognized"
    Receipt.model_validate(out.model_dump(mode="json"))


def test_the_ledger_reads_the_one_signature_table():
    """Error signals and the texts only the ledger explains are rows of one table (core.probes.signatures):
    the ledger keeps no second list, the CLI parser's SIGNATURES is the table's signal view, and a tag with
    both kinds of row is one of the three whose ledger wording is wider (a new overlap is a decision)."""
    from clawprobe.core.probes import signatures as sg

    assert not hasattr(ledger, "KNOWN") and oc.SIGNATURES is sg.SIGNATURES
    assert [t for t, _ in sg.SIGNATURES] == [s.tag for s in sg.TABLE if s.role == "signal"]
    both = {s.tag for s in sg.TABLE if s.role == "known"} & {t for t, _ in sg.SIGNATURES}
    assert both == {"provider_http", "provider_unreachable", "local_model"}
    r = _any_receipt()
    # a signal row and a known row, each classified by its tag; colour codes do not hide a known text
    assert ledger.classify("Error: database disk image is malformed", r) == ("explained", "db_malformed", None)
    assert ledger.classify("\x1b[33mqmd search denied by scope (channel)\x1b[0m", r) == ("explained", "scope_denied", None)
    assert ledger.classify("config change detected; evaluating reload (memory.qmd.searchMode)", r)[:2] == \
        ("explained", "config_reload")


def test_a_long_record_is_judged_whole_and_shown_cut():
    """qmd's stack trace in one log record names its error last, past the 300 characters shown: judged on the
    cut line it was ``unrecognized`` (and held a repaired install at unverified, breaker round 5)."""
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    trace = ("qmd search failed: CliCommandError: qmd search CLAWPROBE-CANARY-X --json -n 4 -c memory-root-main "
             "failed (code 1): /usr/lib/node_modules/@tobilu/qmd/node_modules/better-sqlite3/lib/methods/wrappers.js:9"
             + "\n    at Database.prepare (wrappers.js:9:21)" * 8 + "\nSqliteError: database disk image is malformed")
    assert len(trace) > ledger.MAX_LINE
    out = refine(r, _with_log_line(x, r.agent_id, trace, "WARN", r.checked_at - timedelta(seconds=3)))
    entry = next(e for e in out.ledger if e.line.startswith("qmd search failed"))
    assert (entry.kind, entry.tag) == ("explained", "db_malformed") and len(entry.line) == ledger.MAX_LINE


def test_a_shared_logs_malformed_line_needs_a_store_it_can_be_about():
    """Every install of a user logs to one default file: another install's "database disk image is malformed"
    (agent main too) made a healthy install — or one whose state dir does not even exist — ``index_corrupt`` →
    ``--force`` (breaker round 5). The line counts only for an existing store clawprobe's own quick_check could
    not judge."""
    name = next(n for n in HEALTHY_BUNDLES if _PARTS[n][0].config.configured_backend != "qmd")
    r, x = _PARTS[name]
    x = _with_log_line(x, r.agent_id, f"memory status failed ({r.agent_id}): database disk image is malformed",
                       "ERROR", r.checked_at - timedelta(seconds=3))
    for path, sound, corrupt in ((None, None, False), ("/srv/oc/agents/main/agent/openclaw-agent.sqlite", True, False),
                                 ("/srv/oc/agents/main/agent/openclaw-agent.sqlite", None, True)):
        mine = r.model_copy(deep=True)
        mine.builtin.store_path, mine.builtin.store_sound = path, sound
        assert (diagnose(refine(mine, x)).reason == "index_corrupt") is corrupt, (path, sound)


@pytest.mark.parametrize("line", [
    "[memory] sync failed (search): Error: EACCES: permission denied, open '{ws}/memory/sync/ferry.md'",
    "Memory index failed (main): EPERM: operation not permitted, open '/mnt/team notes/MEMORY.md'",
])
def test_a_note_the_sync_may_not_open_freezes_the_builtin_index_unless_the_disk_scan_reads_it_now(line):
    """OpenClaw's builtin sync stops at a memory note it may not open (breaker round 7, w17): with no disk scan
    (a recording), the log line is the evidence — stale_index · unreadable since that line, the note named for
    the chmod; when a disk scan read every note since, the line is past (the permissions were fixed)."""
    r, x = _PARTS["RW46"]
    assert r.coverage.measured is None and r.config.configured_backend == "builtin"
    text = line.format(ws=r.config.workspace)
    out = refine(r, _with_log_line(x, r.agent_id, text, "ERROR", r.checked_at - timedelta(minutes=1)))
    d = diagnose(out)
    assert (d.verdict, d.reason) == (Verdict.STALE_INDEX, "unreadable"), d.evidence
    named = "memory/sync/ferry.md" if "{ws}" in line else "/mnt/team notes/MEMORY.md"
    assert out.freshness.unreadable_files == [named] and "cannot read" in " ".join(d.evidence)
    assert "'/mnt/team notes/MEMORY.md'" in d.next_action.command or named in d.next_action.command
    assert next(e for e in out.ledger if "EACCES" in e.line or "EPERM" in e.line).kind == "explained"
    scanned = r.model_copy(update={"coverage": r.coverage.model_copy(update={"measured": "before_probe"})})
    out = refine(scanned, _with_log_line(x, r.agent_id, text, "ERROR", r.checked_at - timedelta(minutes=1)))
    assert diagnose(out).verdict == Verdict.HEALTHY


def _agent_db_record(agent: str, at, text: str, level: str = "WARN") -> str:
    """A 2026.9.6 ``state/agent-db`` record as its logger writes it: the fields in "1", the words in "2"."""
    fields = {"agentId": agent, "elapsedMs": 1300, "path": f"/srv/oc/agents/{agent}/agent/openclaw-agent.sqlite",
              "pid": 28643, "admissionMode": "async", "phaseDurationsMs": {"open": 0, "validation": 179,
              "registration": 1040}, "integrityGateOutcome": "cached", "thresholdMs": 1000}
    return json.dumps({"0": json.dumps({"subsystem": "state/agent-db"}), "1": fields, "2": text,
                       "_meta": {"logLevelName": level, "date": at.isoformat().replace("+00:00", "Z")},
                       "message": text})


@pytest.mark.parametrize("name", HEALTHY_BUNDLES)
def test_slow_agent_database_open_is_benign_and_said_first(name):
    """Breaker round 8, n09c: four agents checked at once made one agent database open take 1.3 s; the WARN
    that OpenClaw logs for it turned every agent ``unverified`` — and was shown as its JSON fields, cut."""
    r, x = _PARTS[name]
    recs, _ = oclog.parse_lines([_agent_db_record(r.agent_id, r.checked_at - timedelta(seconds=4),
                                                  "slow OpenClaw agent database open")], "logs/openclaw.log")
    assert recs[0].message.startswith("slow OpenClaw agent database open {")
    log = (x.log or oclog.LogFacts()).model_copy(deep=True)
    log.issues += oclog.interpret(recs, r.agent_id).issues
    out = refine(r, x.model_copy(update={"log": log}))
    assert diagnose(out).verdict == Verdict.HEALTHY
    e = next(e for e in out.ledger if e.line.startswith("slow OpenClaw agent database open"))
    assert e.kind == "benign" and "threshold" in e.why


def _session_sqlite_record(agent: str, at, text: str, level: str = "WARN") -> str:
    """A 2026.9.6 ``session-sqlite`` record as its logger writes it (copied from a real gateway's log, breaker
    round 25): the words in "1", the fields — naming the agent's store — in "2"."""
    fields = {"agentId": agent, "pid": 29599, "operation": "session.canonical-validation.certify", "elapsedMs": 1199,
              "queueWaitMs": 0, "writerExecutionMs": 1198, "reclamationAdmissionReleaseCause": "worker-release",
              "storePath": f"/srv/oc/agents/{agent}/agent/openclaw-agent.sqlite"}
    return json.dumps({"0": json.dumps({"subsystem": "session-sqlite"}), "1": text, "2": fields,
                       "_meta": {"logLevelName": level, "date": at.isoformat().replace("+00:00", "Z")},
                       "message": text})


@pytest.mark.parametrize(("text", "level", "healthy"), [
    ("slow SQLite session write", "WARN", True),
    ("slow SQLite transaction hold", "WARN", True),
    ("SQLite session write failed: SQLITE_IOERR", "ERROR", False),
])
def test_slow_sqlite_write_notice_is_benign(text, level, healthy):
    """Breaker round 25: a 2026.9.6 gateway restarting in-process after a config edit, on a busy host, logged
    "slow SQLite session write" for the agent's database (1.2 s, completed). The record names the memory store, so
    it was read as a memory warning clawprobe cannot judge: a healthy agent was ``unverified`` (exit 3) for the
    whole lease. A write that failed is never called benign."""
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    recs, _ = oclog.parse_lines([_session_sqlite_record(r.agent_id, r.checked_at - timedelta(seconds=4), text, level)],
                                "logs/openclaw.log")
    log = (x.log or oclog.LogFacts()).model_copy(deep=True)
    log.issues += oclog.interpret(recs, r.agent_id).issues
    assert log.issues, "the record is read as memory-related"
    out = refine(r, x.model_copy(update={"log": log}))
    e = next(e for e in out.ledger if text.split(":")[0] in e.line)
    assert (e.kind == "benign") is healthy
    if healthy:
        assert diagnose(out).verdict == Verdict.HEALTHY and "threshold" in (e.why or "")


def test_an_agent_database_open_that_failed_is_not_benign():
    r, x = _PARTS[HEALTHY_BUNDLES[0]]
    recs, _ = oclog.parse_lines([_agent_db_record(r.agent_id, r.checked_at - timedelta(seconds=4),
                                                  "OpenClaw agent database open failed: zz quarantined", "ERROR")])
    log = (x.log or oclog.LogFacts()).model_copy(deep=True)
    log.issues += oclog.interpret(recs, r.agent_id).issues
    assert diagnose(refine(r, x.model_copy(update={"log": log}))).verdict != Verdict.HEALTHY


@pytest.mark.parametrize(("line", "fault", "explained"), [
    ("Memory search failed: qmd query returned invalid JSON: qmd query JSON response was not an array", "not_qmd", True),
    ("Memory search failed: qmd query returned invalid JSON: qmd query JSON response was not an array", None, False),
    ("sqlite lock wait failed label=agent-db failureKind=lock-contention waitedMs=5003", "index_locked", True),
    ("sqlite lock wait failed label=agent-db failureKind=lock-contention waitedMs=5003", None, False),
    ("some other memory error nobody knows", "not_qmd", False),
])
def test_a_measured_fault_accounts_for_its_own_symptoms(line, fault, explained):
    """Breaker round 10 (s06, s16): the failures a measured fault causes — every call of a "qmd" that is another
    program, every open of a store another writer holds — were listed as ``[unrecognized]`` beside the verdict that
    names them. Without that fault the same lines stay unrecognized."""
    from datetime import UTC, datetime

    from clawprobe.core.receipt import Receipt

    r = Receipt(checked_at=datetime(2026, 12, 3, 9, 0, tzinfo=UTC))
    if fault == "not_qmd":
        r.config.configured_backend, r.qmd.failure = "qmd", "not_qmd"
    elif fault == "index_locked":
        r.builtin.unavailable_reason = fault
    kind, tag, _ = ledger.classify(line, r)
    assert (kind == "explained" and tag == fault) is explained, (kind, tag)
    assert kind in ("explained", "unrecognized")


@pytest.mark.parametrize("name", HEALTHY_BUNDLES)
def test_another_agents_store_error_in_one_gateways_log_is_not_this_agents(name):
    """Review of round 26: one gateway logs every agent's "SQLite session write failed" ({agentId, …, storePath,
    error} — 2026.9.6 session-sqlite), and the record names no agent the way a memory command's does. Charged to
    every agent of the log, kb-7's store error left healthy ops-bot ``unverified · unrecognized_signal`` for the
    whole lease. The record's own ``agentId`` says whose it is."""
    r, x = _PARTS[name]
    other = "kb-7" if r.agent_id != "kb-7" else "ops-bot"

    def charged(agent: str) -> bool:
        recs, _ = oclog.parse_lines([_session_sqlite_record(agent, r.checked_at - timedelta(seconds=4),
                                                            "SQLite session write failed", "ERROR")
                                     .replace('"worker-release"', '"worker-release", "error": "disk I/O error"')],
                                    "logs/openclaw.log")
        scope = oclog.LogScope(agent_id=r.agent_id, other_agents=[other])
        return any("SQLite session write failed" in i.detail for i in oclog.interpret(recs, r.agent_id, scope=scope).issues)

    assert not charged(other)
    assert charged(r.agent_id)
    # the same id in another install's record of a shared default log is not this agent's: its storePath says whose
    assert not oclog.LogScope(agent_id=r.agent_id, shared=True, state_dir="/srv/oc").names_self(
        f'SQLite session write failed {{"agentId": "{r.agent_id}", "storePath": "/home/b/.openclaw/agents/x.sqlite"}}')
