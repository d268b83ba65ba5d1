"""The one evidence pipeline: gather → Evidence → interpret → Receipt. The live probe and recorded bundles share
``clawprobe.core.interpret`` (no import cycle), each fact is decided by one rule, and the evidence of every
recorded case survives JSON and the support-bundle format unchanged."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from clawprobe.cli.main import main
from clawprobe.core.bundle import REMOVED_TEXT, BundleFileError, bundle_text, make_bundle, parse_bundle
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import CanarySpec, Evidence, Extra, SlowEvidence
from clawprobe.core.interpret import canary_facts, direct_qmd_found, interpret, refine
from clawprobe.core.interpret.signals import Sig
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.config import ConfigSnapshot, config_facts
from clawprobe.core.receipt import Receipt
from clawprobe.core.recorded import evidence_of, load_bundle
from tests.rw_cases import RECORDED
from tests.testbed import OC_QMD

TESTS = Path(__file__).parent
ROOT = TESTS.parent
NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
TOKEN = "CLAWPROBE-CANARY-7QF3K2MXA9DZL4WB"
SPEC = CanarySpec(token=TOKEN, expected_path="memory/clawprobe-canary.md")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_probe_and_recorded_do_not_import_each_other():
    assert "clawprobe.core.recorded" not in _loaded("import clawprobe.core.probe")
    assert "clawprobe.core.probe" not in _loaded("import clawprobe.core.recorded")
    interp = _loaded("import clawprobe.core.interpret")
    assert not {"clawprobe.core.probe", "clawprobe.core.recorded"} & interp


def _qmd_receipt() -> Receipt:
    r = Receipt(agent_id="main", checked_at=NOW)
    r.config = config_facts(ConfigSnapshot(path="/srv/oc/openclaw.json", tree={"memory": {"backend": "qmd"}}), "main",
                            OC_QMD, "/srv/oc/ws")
    r.qmd.store_ok = True
    r.gateway.running, r.backend.effective = True, "builtin"
    return r


@pytest.mark.parametrize("reason", ["runtime_error", "timeout"])
def test_one_sticky_rule_without_transcripts(reason):
    """qmd works now, the running gateway still answers from builtin: sticky — also for a recorded bundle
    (the recorded refinement used to require later transcripts; the live probe had its own narrower copy)."""
    r = _qmd_receipt()
    r.backend.fallback_reason, r.backend.fallback_detail = reason, "qmd query failed"
    assert refine(r, Extra()).backend.fallback_reason == "sticky"


def test_a_resource_death_is_not_sticky():
    r = _qmd_receipt()
    r.backend.fallback_reason = "runtime_error"
    r.backend.fallback_detail = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"
    assert refine(r, Extra()).backend.fallback_reason == "resource"


def test_sticky_needs_qmd_working_now():
    r = _qmd_receipt()
    r.qmd.store_ok = None
    r.backend.fallback_reason = "runtime_error"
    assert refine(r, Extra()).backend.fallback_reason == "runtime_error"


def _search(snippet: str, seconds: float = 12.0) -> oc.SearchResult:
    hit = oc.SearchHit(path="memory/clawprobe-canary.md", snippet=snippet, shape="qmd")
    return oc.SearchResult(rc=0, seconds=seconds, hits=[hit], shape="qmd")


def test_the_agents_own_deadline_is_part_of_the_one_outcome_decision():
    late = Sig(tag="search_timeout", value="8000ms", line="memory_search timed out after 8000ms",
               source="memory_search tool result")
    c = canary_facts(SPEC, _search(TOKEN), None, 30.0, NOW, agent_deadline=late)
    assert (c.outcome, c.reason, c.deadline_s) == ("timeout", "timeout", 8.0)
    assert canary_facts(SPEC, _search(TOKEN, 5.0), None, 30.0, NOW, agent_deadline=late).outcome == "found"


@pytest.mark.parametrize("file, snippet, found", [
    ("qmd://memory-dir-main/clawprobe-canary.md", f"@@ -1 @@ {TOKEN}", True),
    ("qmd://memory-dir-main/clawprobe-canary.md", "@@ -1 @@ a rotated canary note", False),  # live matched files only
    ("qmd://notes/clawprobe-canary.md", TOKEN, True),  # a collection clawprobe cannot map: by its file name
    ("qmd://memory-dir-main/other.md", TOKEN, False),
])
def test_one_direct_qmd_rule(file, snippet, found):
    assert direct_qmd_found(json.dumps([{"file": file, "snippet": snippet}]), TOKEN, SPEC.expected_path) is found


def _recorded() -> list[tuple[str, Evidence]]:
    return [(c.id, evidence_of(load_bundle(TESTS / "data" / "rw" / c.bundle))) for c in RECORDED.values()]


def test_every_recorded_case_survives_json_and_the_bundle_format():
    """The evidence is complete: written as JSON (and as a support bundle) and read back, every recorded case
    gives the same receipt, and the same verdict, tag and next action."""
    cases = _recorded()
    assert len(cases) >= 40
    for cid, ev in cases:
        again = Evidence.model_validate_json(ev.model_dump_json())
        assert interpret(again).model_dump() == interpret(ev).model_dump(), cid
        d0 = diagnose(interpret(ev))
        b = parse_bundle(bundle_text(make_bundle([ev], NOW)), cid)
        d1 = diagnose(interpret(b.agents[0]))
        assert (d1.verdict, d1.reason, d1.next_action.title) == (d0.verdict, d0.reason, d0.next_action.title), cid


def test_the_bundle_keeps_no_environment_but_path_and_home_and_no_note_text():
    ev = Evidence(agent_id="main", checked_at=NOW, config=ConfigSnapshot(path="/srv/oc/openclaw.json"),
                  gateway=gw.GatewayEvidence(state_dir="/srv/oc", shell_env={"PATH": "/usr/bin", "HOME": "/home/u",
                                                                               "OPENCLAW_PROFILE": "work"}),
                  slow=SlowEvidence(taken_at=NOW, agent_id="main", canary=SPEC, search=oc.SearchResult(
                      rc=0, seconds=1.0, hits=[oc.SearchHit(path="MEMORY.md", snippet="the user's bank is X"),
                                               oc.SearchHit(path=SPEC.expected_path, snippet=f"note {TOKEN} end")])))
    b = make_bundle([ev], NOW)
    out = b.agents[0]
    assert out.gateway.shell_env == {"PATH": "/usr/bin", "HOME": "/home/u"}
    assert [h.snippet for h in out.slow.search.hits] == [REMOVED_TEXT, TOKEN]
    text = bundle_text(b)
    assert "bank" not in text and "OPENCLAW_PROFILE" not in text and "No service environment" in text
    c0, c1 = canary_facts(SPEC, ev.slow.search, None, None, NOW), canary_facts(SPEC, out.slow.search, None, None, NOW)
    assert (c0.outcome, c0.returned_path) == (c1.outcome, c1.returned_path) == ("found", SPEC.expected_path)


def test_evidence_and_bundle_are_versioned():
    with pytest.raises(ValidationError):
        Evidence.model_validate({"version": 3, "agent_id": "main", "checked_at": NOW.isoformat(),
                                 "config": {"path": "/x"}})
    doc = json.loads(bundle_text(make_bundle([], NOW)))
    doc["version"] = 3
    with pytest.raises(BundleFileError, match="bundle version 3 is not supported; this clawprobe reads versions 1, 2"):
        parse_bundle(json.dumps(doc))
    with pytest.raises(BundleFileError, match="not a clawprobe bundle"):
        parse_bundle(json.dumps({"version": 1}))


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(list(argv))
    return rc, out.getvalue()


def test_check_bundle_and_schema_bundle(tmp_path):
    cid, ev = next((cid, ev) for cid, ev in _recorded() if cid == "RW44-fallback")
    f = tmp_path / "b.json"
    f.write_text(bundle_text(make_bundle([ev], NOW)), encoding="utf-8")
    rc, out = _cli("check", "--bundle", str(f), "--json")
    doc = json.loads(out)
    d = diagnose(interpret(ev))
    assert rc == 2 and [(a["verdict"], a["reason"]) for a in doc["receipts"]] == [(d.verdict.value, d.reason)], out
    rc, out = _cli("schema", "--bundle")
    schema = json.loads(out)
    assert rc == 0 and schema["title"] == "SupportBundle" and "Evidence" in schema["$defs"]
    runs = schema["$defs"]["SlowEvidence"]["properties"]
    assert {"status_run", "validate_run", "search_run", "direct_run"} <= set(runs) and "RunRecord" in schema["$defs"]
    assert {"stdout_bytes", "stdout_truncated", "signal", "output_capped"} <= set(schema["$defs"]["RunRecord"]["properties"])
    assert schema["properties"]["version"]["enum"] == [1, 2]
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    rc, _ = _cli("check", "--bundle", str(tmp_path / "bad.json"))
    assert rc == 3



def test_replay_of_a_support_bundle_names_check_bundle(tmp_path, capsys):
    """A new user's ``clawprobe replay`` of the bundle they were sent said "entry 0 is not a valid receipt —
    checked_at: Field required; format: Extra inputs …" (JSON) or "not UTF-8 (byte 1)" (.tar.gz); it says what
    the file is and the command that reads it, exit 3."""
    from clawprobe.core.bundle import write_bundle

    _, ev = next((cid, ev) for cid, ev in _recorded() if cid == "RW44-fallback")
    for name in ("sent.json", "ops-bot support.tar.gz"):
        f = tmp_path / name
        write_bundle(make_bundle([ev], NOW), str(f))
        rc, out = _cli("replay", str(f))
        err = capsys.readouterr().err
        assert rc == 3 and out == "", out
        assert "not a receipt" in err and "Extra inputs" not in err, err
        assert f"clawprobe check --bundle {shlex.quote(str(f))}" in err, err  # pasteable, a space and all


def test_the_committed_bundles_are_the_recorded_directories_converted():
    out = subprocess.run([sys.executable, "scripts/bundles_from_recorded.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert {p.stem for p in (TESTS / "data" / "bundles").glob("*.json")} == {c.bundle for c in RECORDED.values()}


def test_the_version_constants_are_the_defaults():
    from clawprobe.core.bundle import BUNDLE_VERSION, SupportBundle
    from clawprobe.core.evidence import EVIDENCE_VERSION

    b = SupportBundle(created_at=NOW)
    assert (b.version, b.evidence_version) == (BUNDLE_VERSION, EVIDENCE_VERSION)
    assert Evidence(agent_id="main", checked_at=NOW, config=ConfigSnapshot(path="/x")).version == EVIDENCE_VERSION
