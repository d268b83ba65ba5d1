"""Builtin chunking changed after the index (breaker round 7, w18), on the real OpenClaw 2026.7.35 builtin engine
(provider ``none``): ``memory status`` says the index identity is mismatched ("index chunking changed") and every
search — the canary's too — returns nothing. clawprobe said ``retrieval_failed · miss`` → "inspect, don't rebuild";
the measured cause is the identity, and a plain ``openclaw memory index`` (the repair, run here) makes it healthy.

Real: one index run, a check, the repair's index run, a check."""

from __future__ import annotations

import shlex
import sqlite3

from clawprobe.core import canary_write, probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.verdicts import Verdict
from tests.rw_support import context
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, run_openclaw, run_process


def repair_reaches_healthy(home, testbed, data: dict, cmd: str, argv: list[str]) -> None:
    """The next action is ``openclaw ARGV``; run for real (2026.7.35) it exits 0 and the next check is healthy."""
    assert shlex.split(cmd)[1:] == argv, cmd
    ran = run_process([str(testbed.openclaw(OC_QMD)), *argv], env=home.env([]), cwd=home.root, timeout=240)
    assert ran.rc == 0, ran.stderr
    r = probe.collect(context(home, testbed, OC_QMD, extra=data), "main")
    d = diagnose(r, r.checked_at)
    assert d.verdict == Verdict.HEALTHY, d.evidence


def test_a_chunking_change_is_the_index_identity_and_one_index_run_repairs_it(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_QMD), name="chunking")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    canary_write.plant(home.workspace, "main", root=tmp_path)  # as `clawprobe canary plant` records it
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", timeout=240, testbed=testbed).rc == 0
    data = {"CLAWPROBE_DATA_DIR": str(tmp_path)}
    home.update_config({"agents": {"defaults": {"memorySearch": {"chunking": {"tokens": 64, "overlap": 8}}}}})
    r = probe.collect(context(home, testbed, OC_QMD, extra=data), "main")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "index_identity"), d.evidence
    assert any("chunking changed" in e for e in d.evidence), d.evidence
    repair_reaches_healthy(home, testbed, data, d.next_action.command, ["memory", "index", "--agent", "main"])


# -- keyword search switched off (breaker round 23, F1) ---------------------------------------------------------
# 2026.7.35 with no embedding provider and ``query.hybrid.enabled: false``: OpenClaw's status says ``fts.enabled
# false`` and ``vector.enabled false``, every search returns nothing ("search: no provider and FTS unavailable")
# although the index holds the notes. clawprobe said ``retrieval_failed · miss`` → "inspect, then memory index"
# (an index run changes nothing); over a store indexed that way (no FTS table) ``fts5_missing`` → "run another Node".


def test_keyword_search_switched_off_after_indexing_is_the_setting_and_its_repair_works(
        oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_QMD), name="kw-off")
    home.write_memory_md("# Memory\n\nThe ferry leaves at nine.\n")
    canary_write.plant(home.workspace, "main", root=tmp_path)
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", timeout=240, testbed=testbed).rc == 0
    data = {"CLAWPROBE_DATA_DIR": str(tmp_path)}
    home.update_config({"agents": {"defaults": {"memorySearch": {"query": {"hybrid": {"enabled": False}}}}}})
    r = probe.collect(context(home, testbed, OC_QMD, extra=data), "main")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "keyword_search_off"), d.evidence
    assert "agents.defaults.memorySearch.query.hybrid.enabled = false" in d.evidence[0], d.evidence
    repair_reaches_healthy(home, testbed, data, d.next_action.command,
                           ["config", "set", "agents.defaults.memorySearch.query.hybrid.enabled", "true"])


def test_a_store_indexed_with_keyword_search_off_is_not_a_runtime_without_fts5(oc_home_factory, testbed, tmp_path):
    cfg = builtin_config("none", version=OC_QMD,
                         agents={"list": [{"id": "ops-bot", "default": True,
                                           "memorySearch": {"query": {"hybrid": {"enabled": False}}}}]})
    home = oc_home_factory(cfg, name="kw-off-entry", agent_id="ops-bot")
    home.write_memory_md("# Memory\n\nThe relay code is tapir-47.\n")
    canary_write.plant(home.workspace, "ops-bot", root=tmp_path)
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "ops-bot", timeout=240, testbed=testbed).rc == 0
    r = probe.collect(context(home, testbed, OC_QMD, extra={"CLAWPROBE_DATA_DIR": str(tmp_path)}), "ops-bot")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "keyword_search_off"), d.evidence
    assert "agents.list[ops-bot].memorySearch.query.hybrid.enabled = false" in d.evidence[0], d.evidence
    assert "node" not in (d.next_action.command or "") and "index" not in (d.next_action.command or ""), d.next_action


# -- an index written by a newer OpenClaw (breaker round 23, d) ---------------------------------------------------
# 2026.9.6 over a builtin index whose meta says ``chunkingVersion`` 9 (above its own): its status says the identity
# is mismatched with ``versionOrder: newer`` ("the index was written by a newer OpenClaw version; upgrade OpenClaw or
# reindex explicitly") and every search returns nothing. clawprobe said ``retrieval_failed · index_identity`` →
# ``memory index``: a guess between OpenClaw's two repairs (the newer build may be the gateway's own).


def test_an_index_written_by_a_newer_openclaw_is_not_understood_and_no_index_run_is_offered(
        oc_home_factory, testbed, tmp_path):
    cfg = builtin_config("none", version=OC_LATEST, agents={"list": [{"id": "ops-bot", "default": True}]})
    home = oc_home_factory(cfg, name="newer-index", agent_id="ops-bot")
    home.write_memory_md("# Memory\n\nThe relay code is tapir-47.\n")
    canary_write.plant(home.workspace, "ops-bot", root=tmp_path)
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "ops-bot", timeout=240, testbed=testbed).rc == 0
    db = sqlite3.connect(home.state_dir / "agents" / "ops-bot" / "agent" / "openclaw-agent.sqlite")
    with db:
        n = db.execute("update memory_index_meta set value=json_set(value, '$.chunkingVersion', 9) "
                       "where key like 'memory_index_meta%'").rowcount
    db.close()
    assert n == 1
    r = probe.collect(context(home, testbed, OC_LATEST, extra={"CLAWPROBE_DATA_DIR": str(tmp_path)}), "ops-bot")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), d.evidence
    assert any("written by a newer OpenClaw" in e and OC_LATEST in e for e in d.evidence), d.evidence
    assert "index" not in shlex.split(d.next_action.command or "")[1:2], d.next_action
