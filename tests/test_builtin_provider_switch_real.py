"""A builtin index built keyword-only (provider ``none``), then a provider pinned — on the real OpenClaw 2026.9.6
with a working loopback embeddings endpoint (breaker round 14, F1).

OpenClaw says ``indexIdentity: mismatched`` ("index was built for model fts-only") and every search returns nothing
until one ``openclaw memory index``; clawprobe blamed the provider (``memory_unavailable · explicit_provider``) and
printed ``memory status --deep``. And that human status, logged by OpenClaw as one INFO record naming the loaded
``vec0.so``, turned the healthy install into ``vector_not_ready · vector_extension`` with the same command again.

Real: two index runs, one human status, three checks."""

from __future__ import annotations

import shlex

from clawprobe.core import canary_write, probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.verdicts import Verdict
from tests.embeddings_endpoint import embeddings_endpoint
from tests.rw_support import context
from tests.testbed import OC_LATEST, builtin_config, run_openclaw, run_process


def test_a_provider_pinned_over_a_keyword_index_is_its_identity_and_a_deep_status_stays_healthy(
        oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="switch-desk")
    home.write_memory_md("# Memory\n\nThe ferry leaves at nine.\n")
    canary_write.plant(home.workspace, "main", root=tmp_path)
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed).rc == 0
    data = {"CLAWPROBE_DATA_DIR": str(tmp_path)}
    with embeddings_endpoint() as url:
        home.update_config({"memory": {"search": {"provider": "openai", "query": {"minScore": 0},
                                                  "remote": {"baseUrl": url, "apiKey": "sk-clawprobe-test-not-a-key-0000"}}}})
        r = probe.collect(context(home, testbed, OC_LATEST, extra=data), "main")
        d = diagnose(r, r.checked_at)
        assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "index_identity"), d.evidence
        cmd = d.next_action.command
        assert shlex.split(cmd)[1:] == ["memory", "index", "--agent", "main"], cmd
        ran = run_process([str(testbed.openclaw(OC_LATEST)), *shlex.split(cmd)[1:]], env=home.env([]), cwd=home.root,
                          timeout=240)
        assert ran.rc == 0, ran.stderr
        r = probe.collect(context(home, testbed, OC_LATEST, extra=data), "main")
        d = diagnose(r, r.checked_at)
        assert d.verdict == Verdict.HEALTHY, d.evidence
        deep = run_openclaw(home, OC_LATEST, "memory", "status", "--deep", "--agent", "main", timeout=240, testbed=testbed)
        assert deep.rc == 0 and "vec0." in deep.stdout and any("vec0." in m for m in home.log_messages())
        r = probe.collect(context(home, testbed, OC_LATEST, extra=data), "main")
        d = diagnose(r, r.checked_at)
        assert d.verdict == Verdict.HEALTHY, d.evidence


def test_a_pinned_provider_that_does_not_answer_is_the_fault_not_the_cli(oc_home_factory, testbed, tmp_path):
    """A pinned ``openai`` provider whose endpoint answers after 120 s (breaker round 23, #1): the gateway's
    memory_search gives up at 30 s with keyword-only partial results, the CLI search asks the provider again after
    OpenClaw's 60 s query deadline. clawprobe stopped its search at 60 s and said ``unverified · openclaw_failed``
    with ``openclaw --version`` — which passes. Its search now outlasts OpenClaw's query deadline, so OpenClaw's own
    retry line is the measured fact: the pinned provider, with the provider repair."""
    delay = {"s": 0.0}
    with embeddings_endpoint(lambda: delay["s"]) as url:
        config = builtin_config("openai", version=OC_LATEST, agents={"list": [{"id": "ops-bot", "default": True}]})
        config["memory"]["search"]["remote"] = {"baseUrl": url, "apiKey": "sk-clawprobe-test-not-a-key-0000"}
        home = oc_home_factory(config, name="slow-provider", agent_id="ops-bot")
        home.write_memory_md("# Memory\n\nThe failover host is wombat-9.\n")
        canary_write.plant(home.workspace, "ops-bot", root=tmp_path)
        ran = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "ops-bot", timeout=240, testbed=testbed)
        assert ran.rc == 0, ran.stderr
        delay["s"] = 120.0
        r = probe.collect(context(home, testbed, OC_LATEST, extra={"CLAWPROBE_DATA_DIR": str(tmp_path)}), "ops-bot")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "explicit_provider"), d.evidence
    assert any("did not answer the query embedding" in e for e in d.evidence), d.evidence
    cmd = d.next_action.command or ""
    assert "--version" not in cmd and cmd.startswith("timeout 90 ") and "memory status --deep --agent ops-bot" in cmd, cmd
