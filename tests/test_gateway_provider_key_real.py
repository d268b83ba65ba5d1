"""The gateway's own provider key against a keyless index, on the real OpenClaw 2026.9.6 and a real ``openclaw gateway
run`` (breaker round 21, finding 3). Provider unset; ``openclaw memory index`` from the operator's shell (no key) builds
a keyword-only index; the gateway's environment sets ``OPENAI_API_KEY`` (a fake value: the gateway resolves the provider
from its presence), so it expects openai's model and its ``memory_search`` answers disabled/unavailable — the agent gets
nothing. clawprobe said ``keyword_only · implicit_provider`` (its ``openclaw`` runs carry no provider key); it now says
``memory_unavailable · gateway_provider`` and never prints or stores the key's value."""

from __future__ import annotations

import json

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover
from tests.hardening_helpers import built_per_case
from tests.rw_support import plant
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, gateway, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]

KEY = "sk-proj-" + "Qr7Ts6Uv" * 6


def test_a_key_only_the_gateway_has_makes_the_keyless_index_unavailable(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config(None, version=OC_LATEST), name="gwkey")
    home.write_memory_md("# Memory\n\nThe billing queue drains at 02:00 on host q-billing-7.\n")
    res = run_openclaw(home, OC_LATEST, "memory", "index", testbed=testbed, timeout=120)
    assert res.rc == 0, res.stderr
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST))})
    with gateway(home, OC_LATEST, testbed=testbed, extra_env={"OPENAI_API_KEY": KEY}) as gw:
        params = json.dumps({"name": "memory_search", "args": {"query": "q-billing-7"}, "agentId": "main"})
        truth = run_openclaw(home, OC_LATEST, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                             "--token", gw.token, "--json", testbed=testbed, timeout=120)
        details = json.loads(truth.stdout)["output"]["details"]
        assert details["unavailable"] is True and details["results"] == [], details  # the program's own answer
        assert "fts-only" in details["error"]
        clear_caches()
        ctx = discover(env=env)
        assert ctx.gateway is not None and ctx.gateway.provider_keys == ["OPENAI_API_KEY"]
        r = collect(ctx, "main")
        d = diagnose(r)
        assert (d.verdict.value, d.reason) == ("memory_unavailable", "gateway_provider"), d.evidence
        assert d.exit_code == 2
        assert f"/proc/{gw.pid}/environ" in (d.next_action.command or "")
        assert "memory status --index --agent main" in (d.next_action.command or "")
        dumped = r.model_dump_json() + d.model_dump_json() + ctx.model_dump_json()
        assert KEY not in dumped


def _fails_then_gateway_searched(oc_home_factory, testbed, agent: str, provider: str | None) -> tuple:
    """2026.7.35, provider ``provider`` (unset or ``auto``: it resolves to openai), no key anywhere: ``memory index``
    fails closed ("Memory index failed … No API key found"); then a gateway runs and its own memory_search fails the
    same way (it logs "memory sync failed (search-bootstrap): … No API key found") and answers unavailable."""
    cfg = builtin_config(provider, version=OC_QMD)
    if agent != "main":
        cfg.setdefault("agents", {})["list"] = [{"id": agent, "default": True}]
    home = oc_home_factory(cfg, name=f"auto735-{agent}", agent_id=agent)
    home.write_memory_md("# Memory\n\nThe night shift hands over at 06:30 to desk kestrel-9.\n")
    plant(home)
    idx = run_openclaw(home, OC_QMD, "memory", "index", "--agent", agent, testbed=testbed, timeout=180)
    with gateway(home, OC_QMD, testbed=testbed, ready_timeout=240) as gw:
        params = json.dumps({"name": "memory_search", "args": {"query": "kestrel-9"}, "agentId": agent})
        truth = run_openclaw(home, OC_QMD, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                             "--token", gw.token, "--json", "--timeout", "90000", testbed=testbed, timeout=150)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD))})
    clear_caches()
    r = collect(discover(env=env), agent)
    return idx, truth, r


@pytest.fixture(scope="module")
def failed_closed_735(oc_home_factory, testbed):
    cases = (("ops-bot", "auto"), ("main", None))
    return built_per_case(lambda c: _fails_then_gateway_searched(oc_home_factory, testbed, *c), cases)


@pytest.mark.parametrize("agent,provider", [("ops-bot", "auto"), ("main", None)])
def test_an_implicit_provider_that_failed_closed_stays_unavailable_after_the_gateway_searched(failed_closed_735,
                                                                                            agent, provider):
    """2026.7.35 fails closed on an unset/``auto`` provider with no key. Once a gateway has run a search, the log's
    newest provider signal is its "memory sync failed (search-bootstrap)" line, not the index run's "Memory index
    failed": clawprobe read only the first provider signal's wording and said ``never_indexed`` with the repair
    "run memory index" — which fails again — while the gateway's memory_search answers unavailable."""
    idx, truth, r = failed_closed_735[(agent, provider)]
    assert idx.rc == 1 and "No API key found" in idx.stderr, idx.stderr[-400:]
    details = json.loads(truth.stdout)["output"]["details"]
    assert details["unavailable"] is True and details["results"] == [], details  # the gateway's own answer
    d = diagnose(r)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "implicit_provider", 2), d.evidence
    cmd = d.next_action.command or ""
    assert "memory index" not in cmd and "provider none" in cmd, cmd
    assert "qmd" not in cmd.lower()


def _agent_override(oc_home_factory, testbed, version: str, agent: str) -> tuple:
    """The defaults say provider ``none``; ``agent``'s own entry says ``auto`` (2026.7.35: ``agents.list[1]``;
    2026.9.6: ``agents.entries.<id>``). Index, check, then run clawprobe's repair command as printed and index
    again: the returned tuple is (diagnosis before, the repair's run, the agent's ``memory status --json`` after)."""
    if version == OC_QMD:
        cfg = builtin_config("none", version=OC_QMD, agents={"list": [
            {"id": "main", "default": True}, {"id": agent, "memorySearch": {"provider": "auto"}}]})
    else:
        cfg = builtin_config("none", version=OC_LATEST, agents={"entries": {
            agent: {"memory": {"search": {"provider": "auto"}}}}})
    home = oc_home_factory(cfg, name=f"override-{version}", agent_id=agent)
    home.write_memory_md("# Memory\n\nThe pager rota lives in vault osprey-12.\n")
    run_openclaw(home, version, "memory", "index", "--agent", agent, testbed=testbed, timeout=180)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(version))})
    clear_caches()
    d = diagnose(collect(discover(env=env), agent))
    cmd = d.next_action.command or ""
    assert "config set " in cmd, cmd
    fix = run_openclaw(home, version, *cmd[cmd.index("config set "):].split(), testbed=testbed, timeout=120)
    after = run_openclaw(home, version, "memory", "status", "--json", "--agent", agent, testbed=testbed, timeout=120)
    return d, fix, after


@pytest.fixture(scope="module")
def agent_overrides(oc_home_factory, testbed):
    cases = ((OC_QMD, "ops-bot"), (OC_LATEST, "research"))
    return built_per_case(lambda c: _agent_override(oc_home_factory, testbed, *c), cases)


@pytest.mark.parametrize("version,agent,verdict,key", [
    (OC_QMD, "ops-bot", "memory_unavailable", "agents.list[1].memorySearch.provider"),
    (OC_LATEST, "research", "keyword_only", "agents.entries.research.memory.search.provider")])
def test_a_provider_repair_sets_the_agents_own_provider_key_when_its_entry_sets_it(agent_overrides, version, agent,
                                                                                verdict, key):
    """The agent's own entry sets ``provider: auto`` and the defaults say ``none``: the repair "set provider none"
    wrote the defaults' key (already ``none``; the entry's override still wins, so running it changed nothing). It
    now writes the entry's own key, and after running it OpenClaw's status resolves the agent's provider to none."""
    d, fix, after = agent_overrides[(version, agent)]
    assert d.verdict.value == verdict and d.reason == "implicit_provider", d.evidence
    assert d.next_action.command is not None and d.next_action.command.endswith(f"config set {key} none")
    assert fix.rc == 0, fix.stderr[-400:]
    status = json.loads(after.stdout[after.stdout.index("["):])[0]["status"]
    assert status["requestedProvider"] == "none" or status["provider"] == "none", status
