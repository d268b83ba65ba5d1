"""A gateway run with another HOME than the operator's shell (a service user), on the real OpenClaw and a real
``openclaw gateway run`` (breaker round 21, finding 2; the pure rule is in ``tests/test_gateway_home.py``).

2026.7.35, builtin, no workspace in the config: OpenClaw's default workspace is ``<HOME>/.openclaw/workspace``.
The operator's HOME holds the notes and the canary and ran ``memory index``; the gateway runs with
``HOME=<root>/svc-home``, where that workspace does not exist — its ``memory_search`` returns nothing for the
canary (ground truth: the gateway's own tool, ``gateway call tools.invoke``). clawprobe said "unverified · no
canary" with a plant repair and "coverage ok". Now the workspace is the gateway's, missing, and the repair points
the agent at the notes' absolute path. 2026.9.6 puts its default workspace under the state dir, so there the
gateway's HOME shows in a configured ``~/notes``: one gateway run, the same reading.
"""

from __future__ import annotations

import json
import re

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover, workspace_of
from tests.hardening_helpers import run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, gateway, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


@pytest.fixture(scope="module")
def split_home(oc_home_factory, testbed):
    """(home, the operator's workspace, the gateway's HOME, the canary token): the notes indexed and the canary
    planted from the operator's shell; the gateway not yet started."""
    home = oc_home_factory(name="gwhome")
    # raw text: testbed.gateway() rewrites a dict config through write_config, which would set a workspace
    home.write_config(json.dumps({**builtin_config("none", version=OC_QMD), "gateway": {"mode": "local"},
                                  "logging": {"file": str(home.log_file)}}))
    mine = home.home / ".openclaw" / "workspace"
    home.write_memory_md("# Memory\n\nThe staging database lives on host db-stage-04.\n", workspace=mine)
    (mine / "memory").mkdir(exist_ok=True)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD))})
    rc, out, err = run_clawprobe(["canary", "plant", "--yes", "--state-dir", str(home.state_dir)], env)
    assert rc == 0, err
    token = re.search(r"CLAWPROBE-CANARY-[A-Z0-9]+", (mine / "memory" / "clawprobe-canary.md").read_text())
    assert token is not None
    res = run_openclaw(home, OC_QMD, "memory", "index", testbed=testbed)
    assert res.rc == 0, res.stderr
    svc = home.root / "svc-home"
    svc.mkdir()
    return home, mine, svc, token.group(0), env


def test_the_gateways_home_decides_its_workspace_and_the_repair_points_at_the_notes(split_home, testbed):
    home, mine, svc, token, env = split_home
    with gateway(home, OC_QMD, testbed=testbed, ready_timeout=240, extra_env={"HOME": str(svc)}) as gw:
        # ground truth: the gateway's own memory_search finds nothing (its workspace does not exist)
        params = json.dumps({"name": "memory_search", "args": {"query": token}, "agentId": "main"})
        res = run_openclaw(home, OC_QMD, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                           "--token", gw.token, "--json", timeout=120, testbed=testbed)
        assert res.rc == 0, res.stderr
        assert token not in res.stdout and '"results": []' in res.stdout.replace('\\"', '"'), res.stdout[-2000:]
        assert not (svc / ".openclaw" / "workspace").exists()
        clear_caches()
        ctx = discover(env=env)
        assert ctx.gateway is not None and ctx.gateway.process is not None
        ws = workspace_of(ctx, "main")
        assert ws.path == str(svc / ".openclaw" / "workspace"), ws
        assert f"the gateway's home {svc}" in ws.source
        r = collect(ctx, "main")
        d = diagnose(r)
        assert r.config.workspace == str(svc / ".openclaw" / "workspace")
        assert r.coverage.workspace == "missing" and r.coverage.notes_nearby == str(mine), r.coverage
        other = [f.message for f in r.findings if f.tag == "workspace_other_home"]
        assert other and str(mine) in other[0] and str(svc) in other[0], r.findings
        assert d.verdict.value != "healthy" and other[0] in d.evidence, (d.verdict, d.reason, d.evidence)
        na = d.next_action
        assert na is not None and na.command is not None
        assert "agents.defaults.workspace" in na.command and str(mine) in na.command, na
        assert "canary plant" not in na.command and "another HOME" in na.why
        assert not (svc / ".openclaw" / "workspace").exists(), "the gateway's workspace really is missing"


def test_tilde_in_the_workspace_is_the_gateways_home_2026_9(oc_home_factory, testbed):
    home = oc_home_factory(name="gwtilde")
    home.write_config(json.dumps({**builtin_config("none", version=OC_LATEST,
                                                   agents={"defaults": {"workspace": "~/notes"}}),
                                  "gateway": {"mode": "local"}, "logging": {"file": str(home.log_file)}}))
    mine = home.home / "notes"
    home.write_memory_md("# Memory\n\nThe backup window opens at 02:00 UTC.\n", workspace=mine)
    res = run_openclaw(home, OC_LATEST, "memory", "index", testbed=testbed)
    assert res.rc == 0, res.stderr
    svc = home.root / "svc-home"
    svc.mkdir()
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST))})
    with gateway(home, OC_LATEST, testbed=testbed, ready_timeout=240, extra_env={"HOME": str(svc)}):
        clear_caches()
        ctx = discover(env=env)
        assert workspace_of(ctx, "main").path == str(svc / "notes")
        r = collect(ctx, "main")
        d = diagnose(r)
        assert r.coverage.workspace == "missing" and r.coverage.notes_nearby == str(mine), r.coverage
        assert any(f.tag == "workspace_other_home" for f in r.findings), r.findings
        assert d.next_action is not None and d.next_action.command is not None
        # the index still holds the notes indexed from this shell: the gateway's next sync drops them
        assert (d.verdict.value, d.reason) == ("memory_unavailable", "workspace_missing"), d.evidence
        assert d.next_action.command.endswith(f"config set agents.defaults.workspace {mine}"), d.next_action
