"""QMD with ``memory.qmd.includeDefaultMemory: false`` and the notes only in ``memory.qmd.paths`` (breaker round 10,
s18), on the real OpenClaw 2026.7.35 with qmd 2.8.3. The documented flow — ``canary plant``, ``openclaw memory
index``, ``check`` — put the canary in ``memory/``, which is no collection of the agent: QMD never indexed it and the
check failed a working install (``retrieval_failed``, exit 2). Now a plain plant goes to the first configured path
(and says so) — for a pattern below its path, the dir the pattern covers (round 11, s09) —, a plant into
``memory/`` is refused before the first index run too, and the flow ends healthy.
Real: one index run, one check."""

from __future__ import annotations

import json

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

AGENT = "ibis"


def test_a_plant_goes_where_qmd_indexes_when_memory_is_no_collection(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(qmd_config(agents={"list": [{"id": AGENT, "default": True}]}), name="pathonly",
                           agent_id=AGENT)
    notes = home.workspace / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Notes\n\nThe notes word is PATHONLY-IBIS-3.\n")
    projects = home.workspace / "kb" / "projects"  # a pattern below its path: kb/ itself is not indexed (round 11, s09)
    projects.mkdir(parents=True)
    (projects / "p.md").write_text("# Project\n\nThe project word is PATTERN-IBIS-5.\n")
    home.update_config({"memory": {"qmd": {"includeDefaultMemory": False, "paths": [  # relative: the workspace
        {"path": "kb", "name": "kb", "pattern": "projects/**/*.md"}, {"path": "notes", "name": "notes"}]}}})
    env = check_env(home, testbed, tmp_path / "data")

    rc, out, err = run_clawprobe(["canary", "plant", "--yes", "--root", "memory"], env)
    assert rc == 3 and "would never be indexed" in err and not (home.workspace / "memory" / "clawprobe-canary.md").exists()
    rc, out, err = run_clawprobe(["canary", "plant", "--yes"], env)
    assert rc == 0, err
    assert f"the canary goes to {projects}" in out and (projects / "clawprobe-canary.md").is_file(), out
    before = (projects / "clawprobe-canary.md").read_text()
    rc, out, err = run_clawprobe(["canary", "rotate", "--yes"], env)  # the missing/miss repairs print it plain
    assert rc == 0 and f"rotated: {projects}/clawprobe-canary.md" in out, (out, err)  # breaker round 13, N2
    assert (projects / "clawprobe-canary.md").read_text() != before and not (home.workspace / "memory").exists()

    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", AGENT, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed).rc == 0
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), (got["diagnosis"]["evidence"], err[-300:])
    assert got["receipt"]["canary"]["outcome"] == "found"
