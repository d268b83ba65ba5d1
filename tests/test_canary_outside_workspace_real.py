"""QMD with a notes dir beside the workspace, not inside it (breaker round 12, s20, s20d), on the real OpenClaw
2026.7.35 with qmd 2.8.3. OpenClaw's search names a hit outside the workspace ``qmd/<collection>/<path in it>``
(``team-kb`` for the ``memory.qmd.paths`` name "Team KB", ``custom-1-<agent>`` for a ``memorySearch.extraPaths``
dir), not the workspace-relative ``../team kb/clawprobe-canary.md`` clawprobe recorded: the canary that came back
was called ``wrong_source`` (exit 2) on a working install, and its repair looked for duplicates in the workspace,
where there are none; a plant into the extra path was refused ("matches no managed collection"). Real, per layout:
one plant, one index run, one check."""

from __future__ import annotations

import json

import pytest

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

AGENT = "kb-7"


@pytest.mark.parametrize("layout", ["qmd_paths", "extra_paths"])
def test_a_canary_in_a_collection_beside_the_workspace_is_found(oc_home_factory, testbed, tmp_path, layout):
    home = oc_home_factory(qmd_config(agents={"list": [{"id": AGENT, "default": True}]}), name=f"beside-{layout}",
                           agent_id=AGENT)
    (home.workspace / "AGENTS.md").write_text("# Agent\n\nNotes live in the team KB.\n")  # no note is here
    kb = home.root / "team kb"  # beside the workspace, with a space
    kb.mkdir()
    (kb / "faq.md").write_text("# FAQ\n\nThe answer word is BESIDE-KB-7.\n")
    if layout == "qmd_paths":
        home.update_config({"memory": {"qmd": {"includeDefaultMemory": False,
                                               "paths": [{"path": str(kb), "name": "Team KB"}]}}})
        plant = ["canary", "plant", "--yes"]  # the first configured path: kb
    else:
        home.update_config({"agents": {"defaults": {"memorySearch": {"extraPaths": [str(kb)]}}}})
        plant = ["canary", "plant", "--yes", "--root", str(kb)]
    env = check_env(home, testbed, tmp_path / "data")

    rc, out, err = run_clawprobe(plant, env)
    assert rc == 0 and (kb / "clawprobe-canary.md").is_file(), (out, err)
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", AGENT, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed).rc == 0
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    canary = got["receipt"]["canary"]
    assert (rc, got["verdict"]) == (0, "healthy"), (got["diagnosis"]["evidence"], canary, err[-300:])
    assert canary["outcome"] == "found" and canary["returned_path"].startswith("qmd/"), canary
