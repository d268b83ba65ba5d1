"""An ``extraPaths`` entry starting ``~name`` (breaker round 24): ``~notes`` (2026.9.6) and ``~vault/trips``
(2026.7.35, the agent's own entry). Both builds expand ``~`` only before ``/`` or alone (``expandHomePath``): the
entry is a directory named ``~notes`` in the workspace, which does not exist, so nothing is indexed from it.
clawprobe pasted its HOME in front (``<HOME>notes``, a real directory here holding a note) and scanned that: the
note was "new, not indexed" — ``stale_index`` with an index run as the repair, which never indexes it (the real
run below changes nothing). The path is now read as OpenClaw reads it: the entry is a missing extra path (named as
``<workspace>/~notes``), the index is current, the check healthy. Real: two index runs per state, one check."""

from __future__ import annotations

import json
import sqlite3

import pytest

from clawprobe.core.probes.workspace import extra_path_abs
from tests.hardening_helpers import built_per_case, check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, run_openclaw

# (era, agent, the entry as configured, the word in the note under <HOME><entry without ~>)
CASES = [(OC_LATEST, "ops-bot", "~notes", "glacier-umber-74"), (OC_QMD, "main", "~vault/trips", "harbour-larch-22")]


def _config(version: str, agent: str, raw: str) -> dict:
    if version == OC_LATEST:
        return builtin_config("none", version=version, memory={"search": {"extraPaths": [raw]}},
                              agents={"list": [{"id": agent, "default": True}]})
    return builtin_config("none", version=version,
                          agents={"list": [{"id": agent, "default": True, "memorySearch": {"extraPaths": [raw]}}]})


def _state(oc_home_factory, testbed, tmp_path_factory, case):
    version, agent, raw, word = case
    home = oc_home_factory(_config(version, agent, raw), name=f"tilde-{agent}", agent_id=agent)
    beside = home.root / (home.home.name + raw[1:])  # <HOME>notes: where the old reading looked
    beside.mkdir(parents=True)
    (beside / "trip.md").write_text(f"# Trip\n\nThe code is {word}.\n")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path_factory.mktemp(f"data-{agent}")
    planted_and_indexed(home, testbed, data, agent, version=version)
    again = run_openclaw(home, version, "memory", "index", "--agent", agent, timeout=240, testbed=testbed)
    assert again.rc == 0, again.stderr[-400:]  # the old repair, run: it indexes nothing more
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(version))
    rc, out, err = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    found = run_openclaw(home, version, "memory", "search", word, "--json", "--agent", agent, timeout=240,
                         testbed=testbed)
    return home, rc, json.loads(out)["receipts"][0], err, found


@pytest.fixture(scope="module")
def tilde(oc_home_factory, testbed, tmp_path_factory):
    return built_per_case(lambda c: _state(oc_home_factory, testbed, tmp_path_factory, c), CASES)


def test_extra_path_abs_expands_only_a_bare_or_slashed_tilde():
    assert extra_path_abs("~", "/ws", "/h") == "/h" and extra_path_abs("~/kb", "/ws", "/h") == "/h/kb"
    assert extra_path_abs("~kb", "/ws", "/h") == "/ws/~kb" and extra_path_abs("~root/kb", "/ws", None) == "/ws/~root/kb"
    assert extra_path_abs("kb/~x", "/ws", "/h") == "/ws/kb/~x" and extra_path_abs("/abs", "/ws", "/h") == "/abs"


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_tilde_name_entry_is_the_workspace_dir_openclaw_reads_not_a_home(tilde, case):
    version, agent, raw, word = case
    home, rc, got, err, found = tilde[case]
    assert found.rc == 0 and word not in found.stdout  # the truth: OpenClaw never reads <HOME>notes
    db = sqlite3.connect(f"file:{home.builtin_db(agent)}?mode=ro", uri=True)
    try:
        tables = {n for (n,) in db.execute("select name from sqlite_master where type='table'")}
        table = "memory_index_sources" if "memory_index_sources" in tables else "files"  # agent db or legacy sidecar
        paths = [p for (p,) in db.execute(f"select path from {table}")]
        assert any(p.endswith("MEMORY.md") for p in paths), paths
    finally:
        db.close()
    assert not [p for p in paths if "trip.md" in p], paths
    d = got["diagnosis"]
    assert (rc, got["verdict"]) == (0, "healthy"), (d["evidence"], err[-300:])
    assert got["receipt"]["freshness"]["unindexed_count"] == 0, got["receipt"]["freshness"]
    gone = [f["message"] for f in got["receipt"]["findings"] if f["tag"] == "extra_path_missing"]
    assert len(gone) == 1 and str(home.workspace / raw) in gone[0], gone
