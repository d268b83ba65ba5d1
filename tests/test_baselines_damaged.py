"""A damaged ``baselines.json`` reads as no baseline, with the reason said — also one nested deeper than the
JSON parser reads (it used to end the probe: "COULD NOT PROBE … RecursionError")."""

from __future__ import annotations

import json

import pytest

from clawprobe.core import history
from tests.hardening_helpers import assert_clean_stderr, check_env, run_clawprobe
from tests.testbed import OpenClawHome, builtin_config

NESTED = b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"


@pytest.mark.parametrize(("junk", "reason"), [
    (NESTED, "is nested too deeply to read"),
    (b"\xff\xfegarbage{", "is not UTF-8 text (byte 0)"),
    (b"{not json", "is not JSON ("),
    (b"[1, 2]", "is not a JSON object"),
], ids=["nested", "not-utf8", "not-json", "not-object"])
def test_a_damaged_baseline_file_is_no_baseline_with_the_reason(tmp_path, junk, reason):
    (tmp_path / history.BASELINE_FILE).write_bytes(junk)
    assert history.load_baseline("/s", "main", tmp_path) is None
    data, why = history.read_baselines(tmp_path)
    assert data == {} and (why or "").startswith(f"{tmp_path / history.BASELINE_FILE} {reason}"), why
    history.accept_baseline("/s", "main", "abc", tmp_path)
    assert history.load_baseline("/s", "main", tmp_path) == "abc" and history.read_baselines(tmp_path)[1] is None


def test_check_with_a_deeply_nested_baseline_file_probes_and_says_why(tmp_path, testbed):
    home = OpenClawHome.create(tmp_path, prefix="nested-")
    home.write_config(builtin_config("none"))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "clawprobe-data"
    data.mkdir()
    (data / history.BASELINE_FILE).write_bytes(NESTED)
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data), timeout=120)
    assert_clean_stderr(err)
    doc = json.loads(out)
    assert "RecursionError" not in out + err and not doc.get("failures"), doc
    (entry,) = doc["receipts"]
    assert entry["receipt"]["gateway"]["baseline_hash"] is None
    assert f"{data / history.BASELINE_FILE} is nested too deeply to read: read as no baseline" in err, err


@pytest.mark.parametrize("agent_id", ["main", "ops-bot"])
def test_accepting_a_baseline_into_a_data_dir_clawprobe_cannot_write_still_checks(tmp_path, testbed, agent_id):
    """``check --accept-baseline --save`` with the data dir's place taken by a file (as unwritable as a read-only
    or full one): the check still gives its verdict and exit code, stderr says the baseline was not accepted,
    never a traceback (it used to end with ``FileExistsError``, exit 1, no verdict)."""
    home = OpenClawHome.create(tmp_path, prefix="robase-", agent_id=agent_id)
    home.write_config(builtin_config("none", agents={"list": [{"id": agent_id, "default": True}]}))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "not-a-dir"
    data.write_text("a file where the data dir should be\n")
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw", "--accept-baseline", "--save"],
                                 check_env(home, testbed, data), timeout=120)
    assert_clean_stderr(err)
    doc = json.loads(out)
    (entry,) = doc["receipts"]
    assert rc == doc["exit_code"] == entry["diagnosis"]["exit_code"], (rc, doc["exit_code"])
    assert entry["receipt"]["gateway"]["baseline_hash"] is None
    assert f"could not accept the baseline of agent {agent_id} (the previous one stays)" in err, err
    assert data.read_text() == "a file where the data dir should be\n"
