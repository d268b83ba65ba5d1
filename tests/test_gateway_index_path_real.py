"""``INDEX_PATH`` in the gateway's environment only (breaker round 22, QMD). OpenClaw 2026.7.35 spawns qmd with
``{...process.env, PATH, XDG_CONFIG_HOME, QMD_CONFIG_DIR, XDG_CACHE_HOME, NO_COLOR}``, and qmd opens ``INDEX_PATH``
before the XDG cache dir: the gateway's searches and updates go to that index, never the agent's own. From a
shell without the variable every ``openclaw memory`` command uses the agent's index, so clawprobe said
``healthy`` (exit 0) while the agent's own ``memory_search`` (the gateway's tool, called here) fell back to builtin
("Cannot open database because the directory does not exist") or searched a stale copy without the canary.

Now the qmd check runs with what the gateway hands qmd (``INDEX_PATH``, ``QMD_*``) and asks qmd where it keeps
its index: ``qmd_unavailable · index_path_env`` when qmd cannot open it (its directory missing: measured, the
agent's search falls back to builtin), else ``unverified · index_path_env`` (the gateway keeps and updates its own
index there — measured, it answers from it — which this check does not read); the variable named, its removal
from the gateway's environment the repair — never "point memory.qmd.command elsewhere" or a re-index. Real: OpenClaw 2026.7.35, qmd 2.8.3, a
gateway per state."""

from __future__ import annotations

import json
import shutil

import pytest

from clawprobe.core import canary_write
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes.gateway import safe_env
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, gateway, qmd_config, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


def _tool_search(home, gw, query: str, agent: str, testbed) -> dict:
    """The agent's own memory_search, as the gateway runs it (``gateway call tools.invoke``)."""
    params = json.dumps({"name": "memory_search", "args": {"query": query}, "agentId": agent})
    r = run_openclaw(home, OC_QMD, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                     "--token", gw.token, "--json", path_dirs=[testbed.bin_dir], timeout=180, testbed=testbed)
    assert r.rc == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize(("agent", "where"), [("ops-bot", "missing dir"), ("main", "stale copy")])
def test_index_path_in_the_gateways_environment_is_named_and_never_healthy(oc_home_factory, testbed, tmp_path,
                                                                           agent, where):
    home = oc_home_factory(qmd_config(agents={"list": [{"id": agent, "default": True}]}), name="idxpath",
                           agent_id=agent)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    index = ("memory", "index", "--agent", agent)
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    if where == "stale copy":  # the index as it was before the canary: an old note is still found there
        target = home.root / "old qmd" / "index.sqlite"
        target.parent.mkdir()
        shutil.copy(home.qmd_index(agent), target)
    else:
        target = home.root / "gone" / "index.sqlite"
    data = tmp_path / "data"
    token = canary_write.plant(home.workspace, agent, root=data).token
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    env = check_env(home, testbed, data)

    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir], extra_env={"INDEX_PATH": str(target)}, testbed=testbed,
                 ready_timeout=240) as gw:
        rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)  # before any agent has searched
        got = json.loads(out)["receipts"][0]
        truth = json.dumps(_tool_search(home, gw, token, agent, testbed))
    evidence = " ".join(got["diagnosis"]["evidence"])
    assert f"INDEX_PATH={target}" in evidence
    assert "config set memory.qmd.command" not in json.dumps(got["diagnosis"])
    assert got["next_command"].startswith("systemctl --user edit")
    if where == "missing dir":  # qmd cannot open it: the agent's search falls back to builtin
        assert '"fallback"' in truth and "directory does not exist" in truth
        assert (rc, got["verdict"], got["reason"]) == (2, "qmd_unavailable", "index_path_env"), (evidence, err[-300:])
    else:  # the gateway's qmd brought the copy up to date and answers from it: not this check's index
        assert '"backend": "qmd"' in truth.replace("\\", "")
        assert (rc, got["verdict"], got["reason"]) == (3, "unverified", "index_path_env"), (evidence, err[-300:])


def test_what_reaches_qmd_from_the_gateways_environment():
    gw_env = {"PATH": "/usr/bin", "HOME": "/home/a", "INDEX_PATH": "/srv/q/index.sqlite", "QMD_EMBED_MODEL": "hf:x/y",
              "QMD_API_KEY": "sk-live-abcdefghijklmnop", "QMD_CONFIG_DIR": "/elsewhere", "LANG": "C", "EDITOR": "vi"}
    kept = safe_env(gw_env)
    assert set(kept) == {"PATH", "HOME", "INDEX_PATH", "QMD_EMBED_MODEL", "QMD_CONFIG_DIR"}  # no key-like name
    assert qb.passed_through(kept) == {"INDEX_PATH": "/srv/q/index.sqlite", "QMD_EMBED_MODEL": "hf:x/y"}
