"""A warning Node prints about its own process is not a memory-search signal (breaker round 21, finding 6): during a
config-reload restart the 2026.9.6 gateway's console logger re-logged ``(node:17841) MaxListenersExceededWarning:
Possible EventEmitter memory leak detected. 11 exit listeners added to [process]…`` at WARN, and the word "memory"
made a healthy install ``unverified · unrecognized_signal``. The kind decides — a ``process.emitWarning`` line
(``(node:<pid>) [<code>] <Name>Warning: …``) naming no part of memory search — not that text: other listener
counts, emitters, warning names and codes, from the gateway log and from a memory command's stderr. A Node warning
that does name a memory-search part (qmd, sqlite-vec, embeddings) still counts. Pure, on the committed healthy
recordings."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import Extra
from clawprobe.core.interpret import refine
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.recorded import assemble_parts, load_bundle
from clawprobe.core.verdicts import Verdict
from tests.rw_cases import CASES
from tests.rw_support import DATA

HEALTHY = sorted({c.bundle for c in CASES.values() if c.verdict == "healthy" and c.bundle})[:2]

NODE_WARNINGS = [
    "(node:17841) MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 exit listeners added "
    "to [process]. MaxListeners is 10. Use emitter.setMaxListeners() to increase limit\n(Use `node --trace-warnings "
    "...` to show where the warning was created)",
    "(node:902) MaxListenersExceededWarning: Possible EventTarget memory leak detected. 12 abort listeners added to "
    "[AbortSignal]. MaxListeners is 10. Use events.setMaxListeners() to increase limit",
    "(node:31337) [DEP0040] DeprecationWarning: The `punycode` module is deprecated. Please use a userland "
    "alternative instead.",
    "(node:4242) Warning: process memory usage is high; consider raising --max-old-space-size",
]
SEARCH_WARNINGS = [
    "(node:555) Warning: sqlite-vec extension could not be loaded for memory recall",
    "(node:777) ExperimentalWarning: qmd child spawned with an experimental loader; memory search may be slow",
]


def _console_record(text: str, at) -> str:
    """A record of OpenClaw's console logger (``_meta.name`` ``openclaw``: no memory subsystem)."""
    return json.dumps({"0": text, "_meta": {"logLevelName": "WARN", "name": "openclaw",
                                            "date": at.isoformat().replace("+00:00", "Z")}})


def _with_console_line(x: Extra, agent: str, text: str, at) -> Extra:
    recs, _ = oclog.parse_lines([_console_record(text, at)], "logs/openclaw.jsonl")
    injected = oclog.interpret(recs, agent)
    log = (x.log or oclog.LogFacts()).model_copy(deep=True)
    log.issues += injected.issues
    log.signals += injected.signals
    return x.model_copy(update={"log": log})


@pytest.mark.parametrize("text", NODE_WARNINGS, ids=["listeners", "eventtarget", "deprecation", "heap"])
def test_a_node_process_warning_in_the_gateway_log_is_no_memory_issue(text):
    recs, _ = oclog.parse_lines([_console_record(text, datetime(2026, 12, 7, tzinfo=UTC))], "x.jsonl")
    assert recs and not oclog.is_memory_issue(recs[0])


@pytest.mark.parametrize("text", SEARCH_WARNINGS, ids=["sqlite-vec", "qmd"])
def test_a_node_warning_that_names_a_memory_search_part_still_is(text):
    recs, _ = oclog.parse_lines([_console_record(text, datetime(2026, 12, 7, tzinfo=UTC))], "x.jsonl")
    assert recs and oclog.is_memory_issue(recs[0])


@pytest.mark.parametrize("name", HEALTHY)
@pytest.mark.parametrize("text", NODE_WARNINGS, ids=["listeners", "eventtarget", "deprecation", "heap"])
def test_a_healthy_install_stays_healthy_with_a_node_warning_in_its_log(name, text):
    r, x = assemble_parts(load_bundle(DATA / name))
    out = refine(r, _with_console_line(x, r.agent_id, text, r.checked_at - timedelta(seconds=20)))
    d = diagnose(out)
    assert d.verdict == Verdict.HEALTHY, (d.reason, d.evidence)


@pytest.mark.parametrize("name", HEALTHY)
def test_a_node_warning_naming_a_memory_search_part_is_not_healthy(name):
    r, x = assemble_parts(load_bundle(DATA / name))
    out = refine(r, _with_console_line(x, r.agent_id, SEARCH_WARNINGS[0], r.checked_at - timedelta(seconds=20)))
    d = diagnose(out)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "unrecognized_signal"), d.evidence


@pytest.mark.parametrize("name", HEALTHY)
def test_a_node_warning_on_a_memory_commands_stderr_is_benign(name):
    r, x = assemble_parts(load_bundle(DATA / name))
    s = x.search
    assert s is not None
    line = "(node:8123) Warning: Setting the NODE_TLS_REJECT_UNAUTHORIZED environment variable to '0' is insecure"
    search = s.model_copy(update={"stderr": oc.parse_stderr("\n".join([*s.stderr.lines, line]))})
    out = refine(r, x.model_copy(update={"search": search}))
    d = diagnose(out)
    assert d.verdict == Verdict.HEALTHY, (d.reason, d.evidence)
    assert any(e.kind == "benign" and e.line.startswith("(node:8123)") for e in out.ledger)
