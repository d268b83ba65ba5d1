"""Memory search switched off by the plugin settings: ``plugins.slots.memory: "none"`` or ``plugins.enabled:
false``. OpenClaw accepts both configs (recorded: tests/data/recorded/735-memory-plugin-off, 735-plugins-disabled)
and its CLI then has no ``memory`` command at all — which reads exactly like a rejected config. The verdict is
``memory_unavailable`` with the one setting to restore, never ``unverified`` / "plant a canary"."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.config import ConfigSnapshot, config_facts
from clawprobe.core.receipt import Receipt
from tests.testbed import OC_QMD, OpenClawHome, run_openclaw

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "recorded"


def _diagnose(tree: dict):
    r = Receipt(agent_id="main", checked_at=NOW)
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree=tree), "main", OC_QMD, "/srv/oc/ws")
    return r, diagnose(r, NOW)


@pytest.mark.parametrize("tree, tag, command", [
    (json.loads((RECORDED / "735-memory-plugin-off" / "config.json").read_text()), "plugin_off",
     "openclaw config set plugins.slots.memory memory-core"),
    ({"plugins": {"enabled": False}, "memory": {"backend": "qmd", "qmd": {"searchMode": "search"}}}, "plugins_disabled",
     "openclaw config set plugins.enabled true"),
])
def test_a_switched_off_memory_plugin_is_memory_unavailable(tree, tag, command):
    r, d = _diagnose(tree)
    assert r.config.error is None  # OpenClaw accepts these configs: not config_invalid
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", tag, 2)
    assert d.next_action.command == command
    assert "re-index" in (d.next_action.dont or "")  # nothing is wrong with the index or QMD


@pytest.mark.parametrize("tree, agent, version, command", [
    ({"memory": {"search": {"enabled": False, "provider": "none"}}}, "main", "2026.9.6",
     "openclaw config set memory.search.enabled true"),
    ({"memory": {"search": {"provider": "none"}},
      "agents": {"entries": {"ops": {"memory": {"search": {"enabled": False}}}}}}, "ops", "2026.9.6",
     "openclaw config set agents.entries.ops.memory.search.enabled true"),
    ({"agents": {"defaults": {"memorySearch": {"enabled": False}}, "list": [{"id": "main"}]}}, "main", OC_QMD,
     "openclaw config set agents.defaults.memorySearch.enabled true"),
    ({"agents": {"defaults": {"memorySearch": {"provider": "none"}},
                 "list": [{"id": "main", "memorySearch": {"enabled": False}}]}}, "main", OC_QMD, None),
])
def test_memory_search_switched_off_in_its_own_settings(tree, agent, version, command):
    """``enabled: false`` in the memory search settings — the agent's own over the defaults, either era's place:
    OpenClaw answers every search "Memory search disabled." (breaker round 4: 9.6 came out a canary ``miss`` with
    "inspect the canary's path"). An ``agents.list`` entry has no key path to set: the command is not offered."""
    r = Receipt(agent_id=agent, checked_at=NOW)
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree=tree), agent, version, "/srv/oc/ws")
    d = diagnose(r, NOW)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "search_disabled", 2)
    assert d.next_action.command == command
    assert "enabled = false" in d.next_action.title


def test_an_agents_own_enabled_true_wins_over_disabled_defaults():
    from clawprobe.core.probes.config import memory_settings

    tree = {"memory": {"search": {"enabled": False}},
            "agents": {"entries": {"ops": {"memory": {"search": {"enabled": True}}}}}}
    assert memory_settings(tree, "ops").memory_off is None
    assert memory_settings(tree, "main").memory_off == "memory.search.enabled = false"


def test_the_cli_saying_so_is_enough():
    """The config gives no hint (another layer turned it off), but status found no memory command while
    ``config validate`` said valid (clawprobe.core.probes.openclaw_cli.MEMORY_PLUGIN_OFF)."""
    from clawprobe.core.evidence import SlowEvidence
    from clawprobe.core.interpret.merge import merge_slow

    r = Receipt(agent_id="main", checked_at=NOW)
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree={}), "main", OC_QMD, "/srv/oc/ws")
    ev = SlowEvidence(taken_at=NOW, agent_id="main", status=oc.StatusResult(rc=1, seconds=3.0, error=oc.MEMORY_PLUGIN_OFF))
    merge_slow(r, ev, "search")
    d = diagnose(r, NOW)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "plugin_off")


def test_the_repair_value_is_one_openclaw_accepts(tmp_path, testbed):
    """Real 2026.7.35: the value the repair sets back (memory-core) validates."""
    home = OpenClawHome.create(tmp_path)
    home.write_config({"plugins": {"slots": {"memory": "memory-core"}}})
    res = run_openclaw(home, OC_QMD, "config", "validate", "--json", testbed=testbed)
    assert res.rc == 0 and json.loads(res.stdout)["valid"] is True, (res.stdout, res.stderr)


@pytest.mark.parametrize("tree, agent, command", [
    ({"memory": {"search": {"provider": "none", "sources": ["sessions"], "experimental": {"sessionMemory": True}}}},
     "main", """openclaw config set memory.search.sources '["memory", "sessions"]'"""),
    ({"memory": {"search": {"provider": "none", "sources": ["memory", "sessions"]}},
      "agents": {"entries": {"ops": {"memory": {"search": {"sources": ["sessions"]}}}}}}, "ops",
     """openclaw config set agents.entries.ops.memory.search.sources '["memory", "sessions"]'"""),
])
def test_memory_sources_that_leave_out_the_notes(tree, agent, command):
    """``memory.search.sources: ["sessions"]`` (the agent's own over the defaults): 2026.9.6 indexes no memory file —
    "No memory files found … nothing indexed" after every index run — and clawprobe said "canary not indexed yet,
    run memory index" forever (breaker round 5). The repair puts "memory" back; ``config set`` with that JSON
    value is what OpenClaw 2026.9.6 accepts (measured)."""
    r = Receipt(agent_id=agent, checked_at=NOW)
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree=tree), agent, "2026.9.6", "/srv/oc/ws")
    d = diagnose(r, NOW)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "source_excluded")
    assert d.next_action.command == command
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree=tree), "main", "2026.9.6", "/srv/oc/ws")
    assert agent == "main" or diagnose(r, NOW).reason != "source_excluded"  # the defaults keep the notes


@pytest.mark.parametrize("version, agent, tree", [
    ("2026.9.6", "ops-bot", {"memory": {"search": {"provider": "none", "sources": []}},
                             "agents": {"list": [{"id": "ops-bot", "default": True}]}}),
    (OC_QMD, "main", {"agents": {"defaults": {"memorySearch": {"provider": "none", "sources": []}}}}),
])
def test_an_empty_sources_list_is_openclaws_default_not_notes_left_out(version, agent, tree, tmp_path, testbed):
    """``sources: []`` (breaker round 23, F2): OpenClaw resolves it to its default — status ``sources`` lists
    "memory", the index holds the notes and a search finds them (real 2026.9.6 and 2026.7.35) — but clawprobe said
    ``memory_unavailable · source_excluded`` (exit 2) and set the sources. The rule now reads what OpenClaw's own
    status resolved, and an empty list is read as unset."""
    from clawprobe.core import canary_write, probe
    from tests.rw_support import context

    home = OpenClawHome.create(tmp_path, agent_id=agent)
    home.write_config(tree)
    home.write_memory_md("# Memory\n\nThe ferry leaves at nine.\n")
    canary_write.plant(home.workspace, agent, root=tmp_path)
    assert run_openclaw(home, version, "memory", "index", "--agent", agent, timeout=240, testbed=testbed).rc == 0
    r = probe.collect(context(home, testbed, version, extra={"CLAWPROBE_DATA_DIR": str(tmp_path)}), agent)
    d = diagnose(r, r.checked_at)
    assert d.verdict.value == "healthy", (d.reason, d.evidence)
    assert r.builtin.sources is not None and "memory" in r.builtin.sources, r.builtin.sources
