"""The six spec replay cases (spec §5) through the real CLI, plus the JSON contract and exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts

DATA = Path(__file__).parent / "data" / "replay"
EXPECTED = {
    "spec-1-bm25-pending-healthy.json": ("healthy", 0),
    "spec-2-qmd-missing.json": ("qmd_unavailable", 2),
    "spec-3-fallback-canary-found.json": ("fallback_active", 2),
    "spec-4-stale-721s.json": ("stale_index", 1),
    "spec-5-query-14-pending.json": ("vector_not_ready", 1),
    "spec-6-vsearch-no-canary.json": ("retrieval_failed", 2),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_spec_case_replays_to_its_verdict(name):
    (r,) = load_receipts(DATA / name)
    d = diagnose(r)
    assert (d.verdict.value, d.exit_code) == EXPECTED[name]


def test_replay_json_cli_contract():
    files = [str(DATA / n) for n in sorted(EXPECTED)]
    out = subprocess.run([sys.executable, "-m", "clawprobe", "replay", "--json", *files], capture_output=True, text=True, timeout=60)
    doc = json.loads(out.stdout)
    got = [(e["verdict"], e["exit_code"]) for e in doc["receipts"]]
    assert got == [EXPECTED[n] for n in sorted(EXPECTED)]
    for e in doc["receipts"]:
        assert {"agent_id", "verdict", "exit_code", "next_action", "expires_at"} <= e.keys()
        assert e["agent_id"] == "main"
    assert doc["exit_code"] == 2 == out.returncode


def test_bm25_pending_is_healthy_only_because_mode_is_search():
    (r,) = load_receipts(DATA / "spec-1-bm25-pending-healthy.json")
    assert r.vectors.pending == 27
    r.config.search_mode = "vsearch"
    assert diagnose(r).verdict.value == "vector_not_ready"


def test_fallback_never_borrows_a_green_canary():
    (r,) = load_receipts(DATA / "spec-3-fallback-canary-found.json")
    assert r.canary.outcome == "found"
    d = diagnose(r)
    assert d.verdict.value == "fallback_active"
    assert "disable the fallback" in d.next_action.dont


def test_replay_of_bad_files_is_a_message_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"checked_at": "2026-11-30T00:00:00Z", "qmd": {"resolvez": true}}')
    notjson = tmp_path / "x.json"
    notjson.write_bytes(b"\xff\xfe{")
    for f, needle in ((bad, "qmd.resolvez"), (notjson, "not UTF-8"), (tmp_path / "missing.json", "cannot read")):
        out = subprocess.run([sys.executable, "-m", "clawprobe", "replay", str(f)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 3
        assert "Traceback" not in out.stderr and needle in out.stderr


def test_schema_command_prints_receipt_schema():
    out = subprocess.run([sys.executable, "-m", "clawprobe", "schema"], capture_output=True, text=True, timeout=60)
    schema = json.loads(out.stdout)
    assert schema["title"] == "Receipt"
    assert {"checked_at", "canary", "lease", "vectors"} <= schema["properties"].keys()


def test_schema_takes_one_of_diagnosis_and_bundle():
    """``schema --bundle --diagnosis`` printed the bundle's schema and dropped the other flag silently; the README
    says ``schema [--diagnosis | --bundle]``: both are a usage error (exit 3), each alone prints its schema."""
    run = [sys.executable, "-m", "clawprobe", "schema"]
    both = subprocess.run([*run, "--diagnosis", "--bundle"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 3 and both.stdout == "" and "not allowed with argument" in both.stderr
    for flag, title in (("--diagnosis", "Diagnosis"), ("--bundle", "SupportBundle")):
        one = subprocess.run([*run, flag], capture_output=True, text=True, timeout=60)
        assert one.returncode == 0 and json.loads(one.stdout)["title"] == title, (flag, one.stdout[:200])
