"""The gateway's HOME decides its default workspace and its ``~`` — not the shell clawprobe runs in (breaker round
21, finding 2).

A gateway run as a service user (``HOME=/var/lib/svc``) reads ``<its home>/.openclaw/workspace`` (OpenClaw
≤ 2026.7) and ``~/notes`` as ``<its home>/notes``; the operator's shell, with another HOME, indexes and plants
into its own. clawprobe resolved those with the shell's HOME, checked the operator's notes and never saw the
gateway's workspace missing. One place decides the gateway's home (``probes.gateway.home_env``: its process's
environment, else its service file's ``Environment=``, else the shell's); ``probe.path_env`` applies it to every
path the gateway derives from it. The state dir needs no such reading: a gateway is found *by* the state dir it
serves (``gateway.state_dir_of`` already reads its own HOME), so one found serves the state dir checked.

The real-program test is in ``tests/test_gateway_home_real.py``.
"""

from __future__ import annotations

import pytest

from clawprobe.core.locate import Located
from clawprobe.core.probe import ProbeContext, gateway_home, path_env, workspace_of
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes.config import ConfigSnapshot

OP, SVC = "/home/op", "/var/lib/svc"


def _ctx(cfg: dict, version: str, *, process_env: dict | None = None, service_env: dict | None = None,
         shell: dict | None = None) -> ProbeContext:
    shell = {"HOME": OP, "PATH": "/usr/bin:/bin", **(shell or {})}
    state = Located(path="/srv/oc-state", source="$OPENCLAW_STATE_DIR")
    ev = gw.GatewayEvidence(state_dir=state.path, shell_env=gw.safe_env(shell))
    if process_env is not None:
        ev.processes = [gw.GatewayProcess(pid=4242, env=gw.safe_env(process_env), cwd="/")]
    if service_env is not None:
        ev.service = gw.ServiceEnv(kind="systemd", file="/etc/systemd/system/openclaw-gateway.service",
                                   env=service_env, scope="system")
    return ProbeContext(installed=True, env=shell, state_dir=state,
                        config_path=Located(path="/srv/oc-state/openclaw.json", source="default"),
                        config=ConfigSnapshot(path="/srv/oc-state/openclaw.json", tree=cfg),
                        openclaw_version=version, gateway=ev, agents=["main"])


NO_WORKSPACE: dict = {}
TILDE = {"agents": {"list": [{"id": "ops", "default": True, "workspace": "~/notes"}, {"id": "helper"}],
                    "defaults": {"workspace": "~/shared"}}}


@pytest.mark.parametrize("where", ["process", "service"])
def test_the_default_workspace_of_2026_7_is_under_the_gateways_home(where):
    env = {"HOME": SVC, "PATH": "/usr/bin"}
    ctx = _ctx(NO_WORKSPACE, "2026.7.35", **({"process_env": env} if where == "process" else {"service_env": env}))
    ws = workspace_of(ctx, "main")
    assert ws.path == f"{SVC}/.openclaw/workspace", ws
    assert f"the gateway's home {SVC}" in ws.source and f"not this shell's {OP}" in ws.source


def test_tilde_in_a_configured_workspace_is_the_gateways_home_per_agent():
    ctx = _ctx(TILDE, "2026.9.6", process_env={"HOME": SVC, "PATH": "/usr/bin"})
    assert workspace_of(ctx, "ops").path == f"{SVC}/notes"
    assert workspace_of(ctx, "helper").path == f"{SVC}/shared/helper"
    assert gateway_home(ctx) == SVC


def test_openclaw_home_and_profile_are_the_gateways_not_the_shells():
    """A running process's own keys only: this shell's ``OPENCLAW_HOME``/``OPENCLAW_PROFILE`` are not the gateway's."""
    ctx = _ctx(NO_WORKSPACE, "2026.7.35", process_env={"HOME": SVC, "OPENCLAW_PROFILE": "work"},
               shell={"OPENCLAW_HOME": "/opt/op-home", "OPENCLAW_PROFILE": "lab"})
    env = path_env(ctx)
    assert env["HOME"] == SVC and "OPENCLAW_HOME" not in env and env["OPENCLAW_PROFILE"] == "work"
    assert workspace_of(ctx, "main").path == f"{SVC}/.openclaw/workspace-work"
    gw_home = _ctx(NO_WORKSPACE, "2026.7.35", process_env={"HOME": SVC, "OPENCLAW_HOME": "/opt/oc"})
    assert workspace_of(gw_home, "main").path == "/opt/oc/.openclaw/workspace"


def test_without_a_known_gateway_the_shells_home_decides_and_the_source_says_nothing_more():
    ctx = _ctx(TILDE, "2026.9.6")
    assert workspace_of(ctx, "ops").path == f"{OP}/notes"
    assert "gateway's home" not in workspace_of(ctx, "ops").source
    same = _ctx(TILDE, "2026.9.6", process_env={"HOME": OP})
    assert workspace_of(same, "ops").path == f"{OP}/notes" and "gateway's home" not in workspace_of(same, "ops").source


def test_the_2026_9_default_workspace_follows_the_state_dir_not_any_home():
    ctx = _ctx(NO_WORKSPACE, "2026.9.6", process_env={"HOME": SVC})
    assert workspace_of(ctx, "main").path == "/srv/oc-state/workspace"
