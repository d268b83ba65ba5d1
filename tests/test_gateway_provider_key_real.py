"""The gateway's own provider key against a keyless index, on the real OpenClaw 2026.9.6 and a real ``openclaw gateway
run`` (breaker round 21, finding 3). Provider unset; ``openclaw memory index`` from the operator's shell (no key) builds
a keyword-only index; the gateway's environment sets ``OPENAI_API_KEY`` (a fake value: the gateway resolves the provider
from its presence), so it expects openai's model and its ``memory_search`` answers disabled/unavailable — the agent gets
nothing. clawprobe said ``keyword_only · implicit_provider`` (its ``openclaw`` runs carry no provider key); it now says
``memory_unavailable · gateway_provider`` and never prints or stores the key's value."""

from __future__ import annotations

import json

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover
from tests.testbed import OC_LATEST, builtin_config, gateway, run_openclaw

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
