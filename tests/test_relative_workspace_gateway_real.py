"""A relative workspace and a gateway started from another directory (tester's repro-4), on the real OpenClaw
2026.9.6 and a real ``openclaw gateway run``.

``agents.defaults.workspace: "ws"``: the operator's notes are at ``<home>/ws``, but the gateway runs in
``<root>/srv``, resolves ``ws`` there (missing) and its sync empties the index — its agent's memory_search
returns nothing. clawprobe resolved ``ws`` against the home and said HEALTHY · workspace_relative. A running
gateway's working directory (``/proc/<pid>/cwd``) is what the workspace is resolved against.
"""

from __future__ import annotations

import os

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import Located, workspace_dir
from clawprobe.core.probe import clear_caches, collect, discover, workspace_of
from tests.testbed import OC_LATEST, builtin_config, gateway, openclaw_env, run_process

pytest_plugins = ["tests.conftest_testbed"]


def test_a_relative_workspace_is_judged_where_the_running_gateway_resolves_it(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST,
                                          agents={"defaults": {"workspace": "ws"}}), name="relws")
    notes = home.home / "ws"
    (notes / "memory").mkdir(parents=True)
    (notes / "MEMORY.md").write_text("# Memory\n\nThe staging database lives on host db-stage-04.\n")
    # the operator's shell, in the home: indexes <home>/ws
    res = run_process([testbed.openclaw(OC_LATEST), "memory", "index"], cwd=home.home,
                      env=openclaw_env(home, OC_LATEST, [], testbed=testbed), timeout=90)
    assert res.rc == 0, res.stderr
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST))})
    clear_caches()
    alone = discover(env=env)
    assert workspace_of(alone, "main").path == str(notes)  # no gateway: the home, and the hazard is named
    srv = home.root / "srv"
    srv.mkdir()
    with gateway(home, OC_LATEST, testbed=testbed, cwd=srv) as gw:
        assert os.readlink(f"/proc/{gw.pid}/cwd") == str(srv)
        clear_caches()
        ctx = discover(env=env)
        assert ctx.gateway is not None and ctx.gateway.process is not None
        assert ctx.gateway.process.cwd == str(srv)
        ws = workspace_of(ctx, "main")
        assert ws.path == str(srv / "ws") and "gateway's working directory" in ws.source
        r = collect(ctx, "main")
        d = diagnose(r)
        assert d.verdict.value != "healthy", d.evidence
        assert d.reason == "workspace_missing", (d.verdict.value, d.reason, d.evidence)
        assert "workspace_relative" not in {f.tag for f in r.findings}


def test_a_relative_workspace_resolves_against_a_given_gateway_directory():
    """The pure rule: the gateway's cwd when given, else the home; ``~`` and absolute paths ignore both."""
    env = {"HOME": "/home/op"}
    state = Located(path="/home/op/.openclaw", source="~/.openclaw")
    cfg = {"agents": {"defaults": {"workspace": "ws"}, "list": [{"id": "main", "default": True}, {"id": "ops", "workspace": "~/ops"}]}}
    assert workspace_dir(cfg, "main", env, state, "2026.9.6", "/srv/gw").path == "/srv/gw/ws"
    assert workspace_dir(cfg, "main", env, state, "2026.9.6").path == "/home/op/ws"
    assert workspace_dir(cfg, "ops", env, state, "2026.9.6", "/srv/gw").path == "/home/op/ops"
