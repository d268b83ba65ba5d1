"""Notes the builtin index lists as indexed but holds no text of (breaker round 26): their ``memory_index_sources``
rows keep the note's sha256, their chunk rows are gone (deleted under them: a hand "reset" of the chunks, a
partial restore). OpenClaw's own ``memory search`` finds nothing written in them, its status says ``dirty:
false``, and a plain ``memory index`` skips them (the hash matches) — measured on 2026.9.6 and 2026.7.35. clawprobe
said HEALTHY, exit 0 (the canary's own chunks were intact, coverage "3/3 indexed"). Now ``retrieval_failed ·
notes_without_text`` names them, and its one command, ``memory index --force --agent <id>``, pasted as printed,
makes the next check healthy. A whitespace-only note (OpenClaw chunks it to nothing) is never named.

Real programs, both eras, agents other than ``main``; each state built once for the module."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from tests.hardening_helpers import built_per_case, check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, OpenClawHome, builtin_config, run_openclaw

pytestmark = pytest.mark.real

#: (OpenClaw version, agent id, the notes whose chunks are deleted, a word only those notes hold)
CASES = {
    "9.6-ops-bot": (OC_LATEST, "ops-bot", ("MEMORY.md", "memory/2026-12-01.md"), "harbour"),
    "7.35-kb-7": (OC_QMD, "kb-7", ("memory/projects/Zürich plan.md",), "tramline"),
}


def _hollowed(case: str, parent, testbed) -> tuple[OpenClawHome, dict]:
    version, aid, hollow, _word = CASES[case]
    home = OpenClawHome.create(parent, prefix=f"hollow-{case}-", agent_id=aid)
    home.write_config(builtin_config("none", version=version))
    home.update_config({"agents": {"list": [{"id": aid, "default": True}]}})
    home.write_memory_md("# Memory\n\nThe user prefers green tea. The harbour crane is blue.\n")
    home.write_memory("2026-12-01.md", "# Daily\n\nDeployed the harbour service to staging.\n")
    home.write_memory("projects/Zürich plan.md", "# Plan\n\nThe tramline survey starts in March.\n")
    home.write_memory("blank.md", "\n   \n\n")  # whitespace only: OpenClaw keeps a row and no chunk, rightly
    data = home.root / "clawprobe-data"
    data.mkdir()
    planted_and_indexed(home, testbed, data, agent=aid, version=version)
    con = sqlite3.connect(home.builtin_db(aid))
    try:
        con.execute("PRAGMA foreign_keys = ON")
        con.executemany("DELETE FROM memory_index_chunks WHERE path = ?", [(p,) for p in hollow])
        con.commit()
    finally:
        con.close()
    return home, check_env(home, testbed, data, openclaw=testbed.openclaw(version))


@pytest.fixture(scope="module")
def hollowed(tmp_path_factory, testbed):
    parent = tmp_path_factory.mktemp("hollow")
    return built_per_case(lambda c: _hollowed(c, parent, testbed), CASES)


def _check(env: dict, aid: str) -> dict:
    rc, out, err = run_clawprobe(["check", "--json", "--agent", aid], env, timeout=600)
    doc = json.loads(out)
    assert doc["exit_code"] == rc, err
    return doc["receipts"][0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_notes_without_text_are_named_and_the_forced_index_makes_them_found(hollowed, testbed, case):
    version, aid, hollow, word = CASES[case]
    home, env = hollowed[case]
    truth = run_openclaw(home, version, "memory", "search", word, "--agent", aid, "--json", testbed=testbed)
    assert truth.rc == 0 and word not in truth.stdout, truth.stdout  # ground truth: the agent finds none of it

    got = _check(env, aid)
    assert (got["verdict"], got["reason"], got["exit_code"]) == ("retrieval_failed", "notes_without_text", 2), got
    evidence = " ".join(got["diagnosis"]["evidence"])
    assert all(p in evidence for p in hollow) and "blank.md" not in evidence and "canary" not in evidence, evidence
    command = got["next_command"]
    assert f"memory index --force --agent {aid}" in command

    ran = subprocess.run(command, shell=True, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    truth = run_openclaw(home, version, "memory", "search", word, "--agent", aid, "--json", testbed=testbed)
    assert word in truth.stdout, truth.stdout
    again = _check(env, aid)
    assert (again["verdict"], again["exit_code"]) == ("healthy", 0), again
