"""The agent's tool policy can take ``memory_search`` from it while the index, the plugin and ``openclaw memory
search`` (which ignores the policy) are fine — breaker round 21, D: clawprobe said HEALTHY. Pure tests over the
shapes of OpenClaw's policy (:mod:`clawprobe.core.probes.tool_policy`, read in 2026.7.35 and 2026.9.6): removed →
``memory_unavailable`` / ``tool_denied`` naming the key with one least-change repair; a shape clawprobe cannot
evaluate → ``unverified`` (never healthy); the real gateways: tests/test_tool_policy_real.py."""

from __future__ import annotations

import json

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes.config import ConfigSnapshot, config_facts
from clawprobe.core.probes.tool_policy import tool_policy
from clawprobe.core.replay import load_receipts
from clawprobe.core.report import to_json, to_text
from tests.test_spec_replay import DATA

DENY_BOTH = {"tools": {"deny": ["memory_search", "memory_get"]}}
OPS = {"agents": {"entries": {"main": {}, "ops-bot": {"tools": {"deny": ["group:memory", "exec"]}}}}}

#: (config, agent, the key the repair sets, the value it sets)
REMOVED = [
    (DENY_BOTH, "main", "tools.deny", []),
    ({"tools": {"deny": ["exec", "group:memory"]}}, "main", "tools.deny", ["exec"]),
    ({"tools": {"deny": ["group:openclaw"]}}, "main", "tools.deny", []),
    ({"tools": {"deny": ["Memory_*", "browser"]}}, "main", "tools.deny", ["browser"]),
    ({"tools": {"deny": ["*"]}}, "main", "tools.deny", []),
    ({"tools": {"deny": ["memory-core"]}}, "main", "tools.deny", []),
    ({"tools": {"deny": ["group:plugins"]}}, "main", "tools.deny", []),
    (OPS, "ops-bot", "agents.entries.ops-bot.tools.deny", ["exec"]),
    ({"agents": {"list": [{"id": "main"}, {"id": "ops-bot", "tools": {"deny": ["memory_search"]}}]}}, "ops-bot",
     "agents.list[1].tools.deny", []),
    ({"tools": {"profile": "minimal"}}, "main", "tools.alsoAllow", ["memory_search", "memory_get"]),
    ({"tools": {"profile": "messaging", "alsoAllow": ["browser"]}}, "main", "tools.alsoAllow",
     ["browser", "memory_search", "memory_get"]),
    ({"agents": {"list": [{"id": "main", "tools": {"profile": "minimal"}}]}}, "main", "agents.list[0].tools.alsoAllow",
     ["memory_search", "memory_get"]),
    ({"tools": {"allow": ["read", "exec"]}}, "main", "tools.allow", ["read", "exec", "memory_search", "memory_get"]),
    ({"agents": {"entries": {"ops-bot": {"tools": {"allow": ["group:fs"]}}}}}, "ops-bot",
     "agents.entries.ops-bot.tools.allow", ["group:fs", "memory_search", "memory_get"]),
]

AVAILABLE = [
    ({}, "main"),
    (OPS, "main"),  # another agent's deny is not this agent's
    ({"tools": {"profile": "coding"}}, "main"),
    ({"tools": {"profile": "full", "deny": ["exec", "group:fs"]}}, "main"),
    ({"tools": {"profile": "minimal", "alsoAllow": ["group:memory"]}}, "main"),
    ({"tools": {"allow": ["read", "memory_*"]}}, "main"),
    ({"tools": {"allow": ["memory-core"]}}, "main"),
    ({"tools": {"allow": []}}, "main"),  # an empty allow list allows everything
    ({"tools": {"alsoAllow": ["browser"]}}, "main"),  # alsoAllow alone is "*" plus it
    ({"tools": {"deny": ["group:memoryx", "memory"]}}, "main"),  # neither names the tool
    ({"tools": {"byProvider": {"openai": {"deny": ["exec"]}}}}, "main"),
    ({"agents": {"defaults": {"sandbox": {"mode": "off"}}}}, "main"),
]

UNKNOWN = [
    ({"tools": {"profile": "Minimal"}}, "not a profile clawprobe knows"),
    ({"tools": {"profile": "research"}}, "not a profile clawprobe knows"),
    ({"tools": {"deny": "memory_search"}}, "tools.deny is not a list"),
    ({"tools": {"deny": [{"name": "memory_search"}]}}, "non-text entry"),
    ({"tools": ["memory_search"]}, "tools is not a map"),
    ({"tools": {"byProvider": {"openai": {"deny": ["memory_search"]}}}}, "tools.byProvider.openai"),
    ({"tools": {"byProvider": {"openai/gpt-5": {"profile": "minimal"}}}}, "tools.byProvider.openai/gpt-5.profile"),
    ({"agents": {"list": [{"id": "main", "tools": {"byProvider": {"x": {"allow": ["read"]}}}}]}},
     "agents.list[0].tools.byProvider.x"),
    ({"agents": {"defaults": {"tools": {"deny": ["memory_search"]}}}}, "agents.defaults.tools"),
    ({"agents": {"defaults": {"sandbox": {"mode": "all"}}}}, 'sandbox mode "all"'),
    ({"agents": {"list": [{"id": "main", "sandbox": {"mode": "non-main"}}]}}, 'sandbox mode "non-main"'),
]


@pytest.mark.parametrize("tree, agent, key, fix", REMOVED)
def test_a_policy_that_removes_the_tool_names_its_key_and_the_least_change(tree, agent, key, fix):
    tp = tool_policy(tree, agent, None)
    assert (tp.key, tp.fix, tp.unknown) == (key, fix, None)
    assert tp.removed and tp.removed.startswith(key.rsplit(".", 1)[0])


@pytest.mark.parametrize("tree, agent", AVAILABLE)
def test_a_policy_that_keeps_the_tool(tree, agent):
    assert tool_policy(tree, agent, None) == tool_policy({}, "main", None)


@pytest.mark.parametrize("tree, words", UNKNOWN)
def test_a_shape_clawprobe_does_not_evaluate_is_unknown(tree, words):
    tp = tool_policy(tree, "main", None)
    assert tp.removed is None and tp.unknown and words in tp.unknown


def test_the_memory_slots_plugin_is_the_one_matched():
    assert tool_policy({"tools": {"deny": ["my-memory"]}}, "main", "my-memory").key == "tools.deny"
    assert tool_policy({"tools": {"deny": ["memory-core"]}}, "main", "my-memory").key is None


def _receipt(tree: dict, agent: str = "main", version: str = "2026.9.6"):
    """The spec's healthy BM25 receipt with the config facts of ``tree`` (the rest of the config left as it was)."""
    (r,) = load_receipts(DATA / "spec-1-bm25-pending-healthy.json")
    facts = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree=tree), agent, version, "/srv/oc/ws")
    r.agent_id = agent
    r.config = r.config.model_copy(update={k: getattr(facts, k) for k in
                                           ("tool_off", "tool_off_key", "tool_fix", "tool_unknown", "memory_off")})
    return r, diagnose(r, r.checked_at)


def test_the_base_receipt_is_healthy():
    assert _receipt({})[1].verdict.value == "healthy"


@pytest.mark.parametrize("tree, agent, command", [
    (DENY_BOTH, "main", "openclaw config set tools.deny '[]'"),
    ({"tools": {"profile": "minimal"}}, "main",
     """openclaw config set tools.alsoAllow '["memory_search", "memory_get"]'"""),
    (OPS, "ops-bot", """openclaw config set agents.entries.ops-bot.tools.deny '["exec"]'"""),
    ({"agents": {"list": [{"id": "main", "tools": {"deny": ["memory_search"]}}]}}, "main",
     "openclaw config set 'agents.list[0].tools.deny' '[]'"),
])
def test_removed_is_memory_unavailable_with_one_repair(tree, agent, command):
    r, d = _receipt(tree, agent)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "tool_denied", 2)
    assert d.next_action.command == command
    assert r.config.tool_off_key in d.evidence[0] or r.config.tool_off_key.rsplit(".", 1)[0] in d.evidence[0]
    assert "re-index" in (d.next_action.dont or "")


def test_another_agents_deny_leaves_this_agent_healthy():
    assert _receipt(OPS, "main")[1].verdict.value == "healthy"


@pytest.mark.parametrize("tree, _words", UNKNOWN)
def test_unknown_is_unverified_never_healthy(tree, _words):
    r, d = _receipt(tree)
    assert (d.verdict.value, d.reason) == ("unverified", "tool_policy_unknown")
    assert any("tool policy could not be evaluated" in e for e in d.evidence)
    assert d.next_action.command == "openclaw config get tools"


def test_plugins_allow_without_the_memory_plugin_is_plugin_off_with_the_plugin_added():
    r, d = _receipt({"plugins": {"allow": ["openai", "browser"]}})
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "plugin_off")
    assert r.config.memory_off == 'plugins.allow = ["openai", "browser"] (leaves out memory-core)'
    assert d.next_action.command == """openclaw config set plugins.allow '["openai", "browser", "memory-core"]'"""
    for ok in ({"plugins": {"allow": ["openai", "memory-core"]}}, {"plugins": {"allow": []}}):
        assert _receipt(ok)[1].verdict.value == "healthy"
    slot = {"plugins": {"allow": ["mymem"], "slots": {"memory": "mymem"}}}
    assert _receipt(slot)[0].config.memory_off is None


@pytest.mark.parametrize("tree", [DENY_BOTH, {"tools": {"profile": "research"}}, {"plugins": {"allow": ["openai"]}}])
def test_the_text_says_it_in_words(tree):
    r, d = _receipt(tree)
    text = to_text([(r, d)], now=r.checked_at)
    for raw in ("tool_denied", "tool_policy_unknown", "not_allowed", "plugin_off"):
        assert raw not in text
    assert any(w in text for w in ("tool policy", "plugins.allow"))
    assert json.loads(to_json([(r, d)]))["receipts"][0]["diagnosis"]["reason"] == d.reason  # --json keeps the id


@pytest.mark.parametrize("tree", [c[0] for c in REMOVED] + [c[0] for c in UNKNOWN]
                         + [{"plugins": {"allow": ["openai"]}, "tools": {"exec": {"host": "x"}}}])
def test_the_config_subset_clawprobe_keeps_holds_the_whole_tool_policy(tree):
    """The probe reads the redacted memory-relevant subset of the config (``read_config``): the tool policy and
    ``plugins.allow`` must survive it, or a live check never sees them (first real run: HEALTHY again)."""
    from clawprobe.core.probes.config import _subset, memory_settings

    for agent in ("main", "ops-bot"):
        assert tool_policy(_subset(tree), agent, None) == tool_policy(tree, agent, None)
        assert memory_settings(_subset(tree), agent).memory_off == memory_settings(tree, agent).memory_off
