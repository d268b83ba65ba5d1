"""The real agent's retrieval per chat kind (issue 13): recent ``memory_search`` tool results in the session
transcripts, grouped into direct / group / channel chats by the session key (OpenClaw 2026.9.6's
``session-chat-type-shared.ts`` shapes) or the ``chatType`` in ``sessions.json`` — so "group chats get
denied/disabled while the CLI works" is named, not hidden. Real transcript files, varied agents and keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from clawprobe.core import memory_sources as msrc
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.interpret.chats import chat_retrieval
from clawprobe.core.probes.tool_results import chat_kind_of_key, session_kinds
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import to_text
from clawprobe.core.view import agent_facts
from tests.rw_support import action_texts

T0 = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)
HIT = {"results": [{"id": "c1", "path": "memory/a.md", "textScore": 0.5}], "provider": "none"}
DENIED = {"results": [], "disabled": True, "error": "memory_search denied by scope (chatType=group)"}
DISABLED = {"results": [], "disabled": True, "unavailable": True, "error": "memory search unavailable"}


@pytest.mark.parametrize(("key", "chat_type", "kind"), [
    ("agent:main:main", None, "direct"),
    ("agent:ops:telegram:direct:12345", None, "direct"),
    ("agent:ops:whatsapp:dm:+4917", None, "direct"),
    ("agent:scribe:discord:group:98765", None, "group"),
    ("agent:main:slack:acme:channel:C0123", None, "channel"),
    ("agent:main:group:family", None, "group"),
    ("agent:main:1203630@g.us", None, "group"),
    ("agent:main:discord:guild-1:channel-2", None, "channel"),
    ("agent:main:cron:nightly", None, None),
    ("agent:main:cron:nightly", "group", "group"),  # the entry's own chatType wins
])
def test_chat_kind_from_the_session_key(key, chat_type, kind):
    assert chat_kind_of_key(key, chat_type) == kind


def test_session_kinds_maps_session_ids_and_files():
    doc = {"agent:main:main": {"sessionId": "s-direct"},
           "agent:main:discord:group:9": {"sessionId": "s-group", "sessionFile": "/x/sessions/s-group.jsonl"},
           "agent:main:cron:x": {"sessionId": "s-cron"}, "bad": "not an object"}
    assert session_kinds(json.dumps(doc)) == {"s-direct": "direct", "s-group": "group"}
    assert session_kinds("{ not json") == {}


def _line(payload: dict, ts: str) -> str:
    return json.dumps({"type": "message", "timestamp": ts, "message": {
        "role": "toolResult", "toolName": "memory_search", "content": [{"type": "text", "text": json.dumps(payload)}]}})


def _sessions(tmp_path, agent: str, group_payloads: list[dict], kind: str = "group"):
    d = tmp_path / "agents" / agent / "sessions"
    d.mkdir(parents=True)
    (d / "s-dm.jsonl").write_text("\n".join(_line(HIT, f"2026-12-02T00:0{i}:00Z") for i in range(3)) + "\n")
    (d / "s-grp.jsonl").write_text("\n".join(_line(p, f"2026-12-02T00:1{i}:00Z") for i, p in enumerate(group_payloads)))
    (d / "sessions.json").write_text(json.dumps({
        f"agent:{agent}:main": {"sessionId": "s-dm"},
        f"agent:{agent}:discord:{kind}:4411": {"sessionId": "s-grp"}}))
    return [str(d / "s-dm.jsonl"), str(d / "s-grp.jsonl")]


def _receipt(agent: str, backend: str, files: list[str]) -> Receipt:
    r = Receipt(checked_at=T0, agent_id=agent)
    r.config.configured_backend = backend  # type: ignore[assignment]
    r.config.provider = "none"
    r.openclaw.version, r.openclaw.has_qmd_backend = ("2026.7.35", True) if backend == "qmd" else ("2026.9.6", False)
    r.freshness.last_proven_current, r.freshness.method = T0, "disk matches the index"
    r.canary.outcome, r.canary.expected_path, r.canary.planted_at = "found", "memory/clawprobe-canary.md", T0
    r.canary.returned_path = r.canary.expected_path
    r.chat_retrieval = chat_retrieval(msrc.tool_results(files))
    return r


@pytest.mark.parametrize(("agent", "backend", "kind", "key_word"), [
    ("main", "qmd", "group", "memory.qmd.scope"), ("ops-4", "builtin", "channel", "config get tools"),
])
def test_group_chats_denied_while_the_cli_works_is_named(tmp_path, agent, backend, kind, key_word):
    files = _sessions(tmp_path, agent, [HIT, DENIED, DENIED], kind)
    r = _receipt(agent, backend, files)
    by = {c.kind: c for c in r.chat_retrieval}
    assert (by["direct"].found, by["direct"].searches) == (3, 3)
    assert (by[kind].denied, by[kind].found, by[kind].last_outcome) == (2, 1, "denied")
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "chat_denied")
    assert f"{kind} chats: denied" in d.evidence[0] and "direct chats: 3 of 3 found" in d.evidence[0]
    says, todo, dont = action_texts(d)
    assert key_word in todo and "index" not in todo
    if backend == "builtin":
        assert "qmd" not in says
    facts = agent_facts(r, d)
    assert [(c.state, c.words) for c in facts.chats] == [("ok", "direct 3/3 found"),
                                                        ("fail", f"{kind} 1/3 found, newest denied")]
    assert f"agent searches: direct 3/3 found (ok) · {kind} 1/3 found, newest denied (fail)" in to_text([(r, d)])


def test_group_chats_disabled_while_the_cli_works_restarts_the_gateway(tmp_path):
    r = _receipt("lin", "builtin", _sessions(tmp_path, "lin", [DISABLED]))
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "chat_disabled")
    assert d.next_action.command == "openclaw gateway restart"


def test_a_group_chat_that_recovered_is_not_a_fault(tmp_path):
    r = _receipt("main", "builtin", _sessions(tmp_path, "main", [DENIED, HIT]))
    assert diagnose(r, T0).verdict.value == "healthy"


def test_transcripts_without_sessions_json_are_unknown_kind(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir()
    (d / "x.jsonl").write_text(_line(DENIED, "2026-12-02T00:00:00Z"))
    (c,) = chat_retrieval(msrc.tool_results([str(d / "x.jsonl")]))
    assert (c.kind, c.denied) == ("unknown", 1)


def test_the_canary_pane_shows_the_agents_own_searches_per_chat_kind(tmp_path):
    """Pane 5 (canary) renders the view model's chat facts: the CLI probe found the canary, the agent's
    channel chats were denied — both on the screen, the denied kind marked as failing."""
    from clawprobe.tui.state import AgentView, DashboardReport
    from clawprobe.tui.widgets.canary_pane import CanaryPane

    r = _receipt("ops-9", "builtin", _sessions(tmp_path, "ops-9", [HIT, DENIED], "channel"))
    view = AgentView(receipt=r, diagnosis=diagnose(r, T0))
    text = CanaryPane().body(view, DashboardReport(source="replay", agents=[view], evaluated_at=T0), T0)
    assert "agent searches: [$success]✓ direct 3/3 found[/] · [$error]✗ channel 1/2 found, newest denied[/]" in text


# ---- QMD scope denials from the gateway's log (breaker round 23, r23q) --------------------------------------
# OpenClaw 2026.7.35 answers a search its scope refuses with ``results: []`` (no error) and logs only
# "qmd search denied by scope (channel=…, chatType=…, session=…)": that record is what says the chat was refused.

def _log_facts(agent: str, lines: list[tuple[datetime, str]]):
    from clawprobe.core.probes import openclaw_log as oclog

    recs = [json.dumps({"0": '{"subsystem":"memory"}', "1": msg, "time": at.isoformat(),
                        "_meta": {"logLevelName": "WARN", "name": '{"subsystem":"memory"}'}}) for at, msg in lines]
    return oclog.interpret(oclog.parse_lines(recs)[0], scope=oclog.LogScope(agent_id=agent))


def _denial(channel: str, chat_type: str, session: str) -> str:
    return f"qmd search denied by scope (channel={channel}, chatType={chat_type}, session={session})"


@pytest.mark.parametrize(("agent", "channel", "chat_type", "session", "kind"), [
    ("ops-bot", "telegram", "direct", "agent:ops-bot:telegram:direct:4242", "direct"),
    ("main", "discord", "group", "agent:main:discord:group:98765", "group"),
    ("scribe-2", "slack", "channel", "agent:scribe-2:slack:acme:channel:C0123", "channel"),
    ("main", "unknown", "unknown", "agent:main:cron:nightly", "unknown"),
])
def test_a_scope_denial_in_the_gateway_log_names_the_refused_chat(agent, channel, chat_type, session, kind):
    log = _log_facts(agent, [(T0, _denial(channel, chat_type, session))])
    r = _receipt(agent, "qmd", [])
    r.chat_retrieval = chat_retrieval([], log.scope_denials)
    (c,) = r.chat_retrieval
    assert (c.kind, c.denied, c.last_outcome) == (kind, 1, "denied")
    d = diagnose(r, T0)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "chat_denied")
    assert f"channel={channel}" in d.evidence[0] and f"{kind} chats: denied" in d.evidence[0]
    assert d.next_action.command == "openclaw config get memory.qmd.scope"


def test_another_agents_denials_and_the_cli_probes_own_are_not_this_agents_chats():
    log = _log_facts("ops-bot", [
        (T0, _denial("telegram", "direct", "agent:main:telegram:direct:1")),  # agent main's chat
        (T0, _denial("cli", "direct", "agent:ops-bot:cli:direct:memory-search")),  # the CLI probe: its own output
    ])
    assert chat_retrieval([], log.scope_denials) == []
    r = _receipt("ops-bot", "qmd", [])
    r.chat_retrieval = chat_retrieval([], log.scope_denials)
    assert diagnose(r, T0).reason != "chat_denied"


def test_the_empty_transcript_result_of_a_denied_search_is_that_denial_and_a_later_hit_recovers(tmp_path):
    empty = {"results": [], "provider": "qmd", "model": "qmd", "debug": {"backend": "qmd", "hits": 0}}
    files = _sessions(tmp_path, "harbour", [empty], "group")  # its record at 00:10
    log = _log_facts("harbour", [(datetime(2026, 12, 2, 0, 9, 59, tzinfo=UTC),
                                  _denial("discord", "group", "agent:harbour:discord:group:4411"))])
    by = {c.kind: c for c in chat_retrieval(msrc.tool_results(files), log.scope_denials)}
    assert (by["group"].searches, by["group"].denied, by["group"].empty) == (1, 1, 0)
    later = _sessions(tmp_path / "later", "harbour", [empty, HIT], "group")  # a hit at 00:11, after the denial
    by = {c.kind: c for c in chat_retrieval(msrc.tool_results(later), log.scope_denials)}
    assert by["group"].last_outcome == "found"
