"""A rollback: a healthy OpenClaw 2026.9.6 builtin state, then the ``openclaw`` binary put back to 2026.7.35 (breaker
round 6, z16). First the config — 2026.8+'s ``memory.search`` — is rejected, and 7.35's ``doctor --fix`` and
``config set/unset`` refuse an invalid config: the repair says it is a rollback and edits the file, never a doctor
run. With the keys moved by hand the next wall is the state database: 7.35 prints "OpenClaw state database … uses
newer schema version 18; this OpenClaw build supports 1" on every memory command and the canary is never found:
``memory_unavailable · state_downgrade`` → put the newer build back (never delete the databases).

Real: one 2026.9.6 index run, then one 2026.7.35 check per config layout."""

from __future__ import annotations

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.verdicts import Verdict
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, OC_QMD, builtin_config


def test_a_rollback_names_the_newer_config_then_the_newer_state(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="rollback")
    spec = indexed(home, testbed, OC_LATEST)
    r = probe.collect(context(home, testbed, OC_QMD), "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.CONFIG_INVALID, "schema"), d.evidence
    assert any("OpenClaw 2026.8+'s layout and this openclaw is 2026.7.35" in e for e in d.evidence), d.evidence
    # the state database records the newer writer: moving the keys by hand cannot help (breaker round 9, p09)
    assert r.openclaw.state_written_by == OC_LATEST
    assert d.next_action.command == f"npm install -g openclaw@{OC_LATEST}" and "it wrote this config" in d.next_action.title
    assert "doctor" not in d.next_action.command

    home.write_config(builtin_config("none", version=OC_QMD))  # the keys moved to 7.35's agents.defaults.memorySearch
    r = probe.collect(context(home, testbed, OC_QMD), "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "state_downgrade"), d.evidence
    assert "uses newer schema version" in d.evidence[0] and str(home.state_dir) in d.evidence[0]
    assert d.next_action.command == "npm install -g openclaw@latest"
    assert "doctor" not in " ".join(s.command or "" for s in d.next_action.steps)
