"""The agent's tool policy takes ``memory_search`` from it, on the real gateways of both eras (breaker round 21, D:
clawprobe said HEALTHY). Ground truth as the breaker measured it: the running gateway's own tool, called as the
agent gets it (``openclaw gateway call tools.invoke``) answers ``not_found`` while ``openclaw memory search`` finds
the note. clawprobe must say ``memory_unavailable`` with the repair for that key; the printed repair, run with the
real CLI and the gateway restarted, gives the agent its tool back and the verdict leaves ``tool_denied``."""

from __future__ import annotations

import json
import shlex
import subprocess

import pyjson5
import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover
from tests.testbed import (
    OC_LATEST,
    OC_QMD,
    builtin_config,
    gateway,
    openclaw_env,
    qmd_config,
    run_openclaw,
)

pytest_plugins = ["tests.conftest_testbed"]
NOTE = "# Memory\n\nThe staging database lives on host db-stage-04.\n"


def _tool(home, version, gw, path_dirs, testbed) -> dict:
    params = json.dumps({"name": "memory_search", "args": {"query": "db-stage-04"}, "agentId": "main"})
    r = run_openclaw(home, version, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                     "--token", gw.token, "--json", timeout=120, path_dirs=path_dirs, testbed=testbed)
    assert r.rc == 0, r.stderr[-2000:]
    return json.loads(r.stdout[r.stdout.index("{"):])


def _verdict(home, version, path_dirs, testbed):
    env = home.env(path_dirs, {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(version))})
    clear_caches()
    r = collect(discover(env=env), "main")
    return r, diagnose(r)


CASES = [
    pytest.param(OC_LATEST, {"tools": {"profile": "minimal"}}, "tool_denied",
                 """config set tools.alsoAllow '["memory_search", "memory_get"]'""", id="9.6-profile-minimal"),
    pytest.param(OC_LATEST, {"plugins": {"allow": ["openai", "browser"]}}, "plugin_off",
                 """config set plugins.allow '["openai", "browser", "memory-core"]'""", id="9.6-plugins-allow"),
    pytest.param(OC_QMD, {"agents": {"list": [{"id": "main", "default": True,
                                               "tools": {"deny": ["memory_search", "exec"]}}]}}, "tool_denied",
                 """config set 'agents.list[0].tools.deny' '["exec"]'""", id="7.35-qmd-agent-deny"),
]


@pytest.mark.parametrize(("version", "policy", "tag", "command"), CASES)
def test_a_tool_policy_without_memory_search(oc_home_factory, testbed, version, policy, tag, command):
    qmd = version == OC_QMD
    path_dirs = [testbed.bin_dir] if qmd else []
    base = qmd_config("qmd", "search") if qmd else builtin_config("none", version=version)
    home = oc_home_factory(base, name=f"toolpolicy-{tag}")
    home.update_config(policy)
    home.write_memory_md(NOTE)
    assert run_openclaw(home, version, "memory", "index", path_dirs=path_dirs, testbed=testbed).rc == 0
    found = run_openclaw(home, version, "memory", "search", "db-stage-04", "--json", path_dirs=path_dirs,
                         testbed=testbed)
    assert "db-stage-04" in found.stdout  # the CLI ignores the tool policy: it finds the note

    with gateway(home, version, path_dirs=path_dirs, testbed=testbed) as gw:
        before = _tool(home, version, gw, path_dirs, testbed)
        r, d = _verdict(home, version, path_dirs, testbed)
    assert before.get("ok") is False and before["error"]["code"] == "not_found", before  # the ground truth
    assert (d.verdict.value, d.reason) == ("memory_unavailable", tag), (d.evidence, r.config)
    assert d.next_action.command == f"openclaw {command}", d.next_action.command

    # the printed repair, run by the real CLI in the home, then the gateway restarted
    oc = shlex.quote(str(testbed.openclaw(version)))
    done = subprocess.run(["bash", "-c", f"{oc} {command}"], cwd=home.home, capture_output=True, text=True,
                          timeout=90, env=openclaw_env(home, version, path_dirs, testbed=testbed))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    home.config = pyjson5.loads(home.config_path.read_text())  # the gateway fixture writes home.config back
    with gateway(home, version, path_dirs=path_dirs, testbed=testbed) as gw:
        after_tool = _tool(home, version, gw, path_dirs, testbed)
        _, after = _verdict(home, version, path_dirs, testbed)
    assert after_tool.get("ok") is True and "db-stage-04" in json.dumps(after_tool), after_tool
    assert after.reason not in ("tool_denied", "plugin_off") and after.verdict.value != "memory_unavailable", \
        (after.verdict, after.reason, after.evidence)
