"""A logged QMD→builtin fallback with no gateway process running is no gateway in fallback (tester's A5).

OpenClaw 2026.7.35 writes ``qmd binary unavailable (qmd); falling back to builtin: …`` from every process that
builds a memory manager — clawprobe's own ``openclaw memory status``/``search`` runs (with the unit's
environment), the operator's ``openclaw memory …`` — and the record carries nothing that says which process
wrote it (measured: ``_meta`` holds runtime, runtimeVersion, hostname, name, parentNames, date, logLevelId/Name and
the source path; no pid, no gateway/CLI marker). Once the operator fixed the unit's PATH, check 2 read the line its
own check 1 had written and said ``fallback_active`` for the whole lease although no gateway ran at all.

The measured fact the rule reads instead: the process table. No gateway process serving this state dir and none
whose state dir is hidden → nothing can be serving builtin; the line stays cited as a CLI run's. A running
gateway (or one that may be this one: environment not readable, process table not readable) keeps the sticky
``fallback_active`` — its own lines say what it serves. Through the recorded bundles and the interpret path the
live probe uses (:func:`clawprobe.core.recorded.evidence_of` → :func:`clawprobe.core.interpret.interpret`).
"""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import Evidence
from clawprobe.core.interpret import interpret
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.recorded import evidence_of, load_bundle
from tests.rw_support import DATA

#: healthy QMD recordings with a running gateway (``gateway.source: process``)
BUNDLES = ["RW20", "RW21", "RW42"]
_EVIDENCE = {name: evidence_of(load_bundle(DATA / name)) for name in BUNDLES}

_ERR = st.text(alphabet="abcdefghijklmnopqrstuvwxyz /._-0123456789", min_size=1, max_size=40).map(str.strip).filter(bool)
_MESSAGES = [
    "qmd binary unavailable ({cmd}); falling back to builtin: spawn {cmd} ENOENT",
    "qmd binary unavailable ({cmd}); falling back to builtin: {err}",
    "qmd memory unavailable; falling back to builtin: {err}",
    "qmd memory failed; switching to builtin index: Error: {err}",
]


def _record(at, message: str) -> str:
    """One tslog record as OpenClaw 2026.7.35 writes it (the fields of a real one, its pid-less ``_meta``)."""
    return json.dumps({"0": '{"subsystem":"memory"}', "1": message, "time": at.isoformat(),
                       "_meta": {"runtime": "node", "runtimeVersion": "24.22.3", "hostname": "vm",
                                 "name": '{"subsystem":"memory"}', "parentNames": ["openclaw"],
                                 "date": at.isoformat(), "logLevelId": 4, "logLevelName": "WARN"}})


def _with_fallback(ev: Evidence, message: str, ago: float = 7.0) -> Evidence:
    """``ev`` with one fallback record ``ago`` seconds before the check, read through the log scope."""
    recs, _ = oclog.parse_lines([_record(ev.checked_at - timedelta(seconds=ago), message)])
    cmd = "qmd"
    facts = oclog.interpret(recs, scope=oclog.LogScope(agent_id=ev.agent_id, qmd_commands=[cmd]))
    log = ev.log.model_copy(deep=True)
    log.fallbacks += facts.fallbacks
    log.issues += facts.issues
    log.signals += facts.signals
    log.syncs = [s for s in log.syncs if s.at is None or s.at < ev.checked_at - timedelta(seconds=ago)]
    return ev.model_copy(update={"log": log})


def _no_gateway(ev: Evidence, **update) -> Evidence:
    assert ev.gateway is not None
    return ev.model_copy(update={"gateway": ev.gateway.model_copy(update={"processes": [], **update})})


def _verdict(ev: Evidence) -> tuple[str, str | None, list[str]]:
    d = diagnose(interpret(ev))
    return d.verdict.value, d.reason, d.evidence


@pytest.mark.parametrize("name", BUNDLES)
def test_the_recordings_are_healthy_and_a_running_gateways_fallback_is_active(name):
    ev = _EVIDENCE[name]
    assert _verdict(ev)[0] == "healthy"
    v, reason, evidence = _verdict(_with_fallback(ev, _MESSAGES[0].format(cmd="qmd")))
    assert (v, reason) == ("fallback_active", "binary_unavailable"), evidence
    assert any("within the lease" in e for e in evidence), evidence


@pytest.mark.parametrize("name", BUNDLES)
@settings(max_examples=8, deadline=None)
@given(template=st.sampled_from(_MESSAGES), err=_ERR, ago=st.floats(min_value=1, max_value=60))
def test_no_gateway_process_no_fallback_active(name, template, err, ago):
    ev = _with_fallback(_EVIDENCE[name], template.format(cmd="qmd", err=err), ago)
    assert _verdict(ev)[0] == "fallback_active"  # the recorded gateway runs: its fallback stays sticky
    r = interpret(_no_gateway(ev))
    v, reason, evidence = _verdict(_no_gateway(ev))
    assert v == "healthy", (v, reason, evidence)
    assert r.backend.fallback_at is None and r.backend.fallback_reason is None
    assert any("no gateway process runs" in e.detail for e in r.backend.evidence), r.backend.evidence


@pytest.mark.parametrize("hidden", [{"other_gateways": 1, "unattributed": 1},
                                    {"other_gateways": 1, "unattributed": None},
                                    {"errors": ["process table not readable: AccessDenied"]}])
def test_a_gateway_that_may_be_this_one_keeps_the_fallback(hidden):
    """Another user's gateway (environment not readable), evidence from before the count, or an unreadable
    process table: not measured that none runs — the logged fallback still counts."""
    ev = _with_fallback(_EVIDENCE["RW20"], _MESSAGES[0].format(cmd="qmd"))
    assert _verdict(_no_gateway(ev, **hidden))[:2] == ("fallback_active", "binary_unavailable")


def test_gateways_of_other_state_dirs_do_not_count():
    ev = _with_fallback(_EVIDENCE["RW20"], _MESSAGES[0].format(cmd="qmd"))
    assert _verdict(_no_gateway(ev, other_gateways=2, unattributed=0))[0] == "healthy"


def test_a_fallback_for_another_agent_id_was_never_this_agents():
    ev = _with_fallback(_EVIDENCE["RW20"], 'qmd memory unavailable; falling back to builtin: agent "ops" failed')
    assert _verdict(ev)[0] == "healthy"


def test_find_gateways_counts_the_gateways_whose_environment_is_hidden(monkeypatch, tmp_path):
    class Proc(SimpleNamespace):
        def environ(self):
            if self.env is None:
                raise psutil.AccessDenied(self.info["pid"])
            return self.env

    procs = [Proc(info={"pid": 11, "ppid": 1, "cmdline": ["openclaw", "gateway", "run"], "create_time": 1.0,
                        "exe": None}, env=None),
             Proc(info={"pid": 12, "ppid": 1, "cmdline": ["openclaw", "gateway", "run"], "create_time": 1.0,
                        "exe": None}, env={"OPENCLAW_STATE_DIR": str(tmp_path / "other")}),
             Proc(info={"pid": 13, "ppid": 1, "cmdline": ["openclaw", "memory", "status"], "create_time": 1.0,
                        "exe": None}, env=None)]
    monkeypatch.setattr(psutil, "process_iter", lambda attrs: iter(procs))
    hidden: list[int] = []
    mine, others = gw.find_gateways(str(tmp_path / "state"), [], hidden)
    assert (mine, others, hidden) == ([], 2, [11])
    ev = gw.gather(str(tmp_path / "state"), {"HOME": str(tmp_path)}, None)
    assert (ev.other_gateways, ev.unattributed) == (2, 1) and gw.none_running(ev) is False
