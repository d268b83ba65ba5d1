"""Breaker round 25 (r25q): ``memory.qmd.limits.maxSnippetChars`` or ``maxInjectedChars`` set so low that OpenClaw
cuts every QMD hit down to qmd's ``@@ -6,3 @@ (5 before, 0 after)`` line (measured with 2026.7.35 and qmd 2.8.3:
``maxSnippetChars: 30``). The search finds the canary's file, the agent gets no note text. clawprobe said
``retrieval_failed · search_not_invoked`` and "upgrade OpenClaw"; the cut is read from the hit (its snippet as
long as the configured limit, without the token) and the repair raises that limit."""

from __future__ import annotations

import json

import pytest

from tests.hardening_helpers import built_per_case, check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

CASES = {"ops-bot": {"maxSnippetChars": 30}, "kb-7": {"maxInjectedChars": 24}}


@pytest.fixture(scope="module")
def cut_homes(testbed, tmp_path_factory, oc_home_factory):
    def build(agent: str):
        home = oc_home_factory(qmd_config(qmd={"limits": CASES[agent]}), name=f"cut-{agent}", agent_id=agent)
        home.update_config({"agents": {"list": [{"id": agent, "default": True}]}})
        home.write_memory_md("# Memory\n\nThe user prefers green tea.\n")
        home.write_memory("2026-11-30.md", "# Deploys\n\nThe heron service went to staging.\n")
        data = tmp_path_factory.mktemp(f"data-{agent}")
        planted_and_indexed(home, testbed, data, agent=agent, version=OC_QMD)
        return home, data
    return built_per_case(build, CASES)


@pytest.mark.real
@pytest.mark.timeout(900)
@pytest.mark.parametrize("agent,key,default", [("ops-bot", "maxSnippetChars", 450), ("kb-7", "maxInjectedChars", 2200)])
def test_a_limit_that_cuts_every_hit_names_that_limit(cut_homes, testbed, agent, key, default):
    home, data = cut_homes[agent]
    truth = run_openclaw(home, OC_QMD, "memory", "search", "heron", "--agent", agent, "--json",
                         path_dirs=[testbed.bin_dir], testbed=testbed)
    hits = json.loads(truth.stdout[truth.stdout.index("{"):])["results"]
    assert hits and all(h["snippet"].startswith("@@ -") and "heron" not in h["snippet"] for h in hits), hits
    env = check_env(home, testbed, data)
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    d = json.loads(out)["receipts"][0]["diagnosis"]
    assert (rc, d["verdict"], d["reason"]) == (2, "retrieval_failed", "snippet_cut"), (d["evidence"], err[-300:])
    cmd = d["next_action"]["command"]
    assert cmd.endswith(f"config set memory.qmd.limits.{key} {default}"), cmd
    assert "upgrade" not in d["next_action"]["title"].lower() and "--version" not in cmd
    if agent != "ops-bot":
        return
    done = run_openclaw(home, OC_QMD, *cmd.split()[-4:], path_dirs=[testbed.bin_dir], testbed=testbed)
    assert done.rc == 0, done.stderr
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    assert (rc, json.loads(out)["receipts"][0]["verdict"]) == (0, "healthy"), err[-300:]
