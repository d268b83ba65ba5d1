"""A builtin ``extraPaths`` entry that is itself a symlink (``~/kb`` → a dir elsewhere, breaker round 12, s05;
``~/notes.md`` → a file elsewhere, round 13, N3), on the real OpenClaw 2026.9.6. The engine never reads through a
symlinked extra path ("configure its canonical absolute directory instead", its status scan issue), so the notes
there are never indexed. clawprobe said ``unsearchable_notes`` rightly, but told the operator to move or rename the
notes and printed a ``find`` over the workspace, which lists nothing (the symlink is in HOME). Now the action names
the real path to configure; done, the flow ends healthy. Real, per kind: two index runs, two checks."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "desk-4"


@pytest.mark.parametrize("kind", ["dir", "file"])
def test_a_symlinked_extra_path_is_named_with_its_real_path(oc_home_factory, testbed, tmp_path, kind):
    shared = tmp_path / "shared notes"
    shared.mkdir()
    note = "# Runbook\n\nRestart with LINKED-ROOT-4.\n"
    if kind == "dir":
        real, link = shared / "kb", "kb"
        real.mkdir()
        (real / "runbook.md").write_text(note)
    else:
        real, link = shared / "runbook.md", "notes.md"
        real.write_text(note)
    cfg = builtin_config("none", version=OC_LATEST, agents={"list": [{"id": AGENT, "default": True}]},
                         memory={"search": {"extraPaths": [f"~/{link}"]}})
    home = oc_home_factory(cfg, name=f"linked-{kind}", agent_id=AGENT)
    (home.home / link).symlink_to(real)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    env = check_env(home, testbed, tmp_path / "data", openclaw=testbed.openclaw(OC_LATEST))
    oc = ("memory", "index", "--agent", AGENT)
    assert run_clawprobe(["canary", "plant", "--yes"], env)[0] == 0
    assert run_openclaw(home, OC_LATEST, *oc, testbed=testbed).rc == 0

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    action = got["diagnosis"]["next_action"]
    assert (got["verdict"], got["diagnosis"]["reason"]) == ("retrieval_failed", "unsearchable_notes"), got["diagnosis"]
    assert got["receipt"]["coverage"]["linked_roots"] == {str(home.home / link): str(real)}
    assert str(real) in action["title"] and "move or rename" not in action["title"].lower(), action["title"]
    printed = subprocess.run(["bash", "-c", action["command"]], capture_output=True, text=True, timeout=30,
                             env={**env, "HOME": str(home.home)})
    assert printed.stdout.strip() == str(real), (action["command"], printed)

    home.update_config({"memory": {"search": {"extraPaths": [str(real)]}}})  # what the action says
    assert run_openclaw(home, OC_LATEST, *oc, testbed=testbed).rc == 0
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), (got["diagnosis"]["evidence"], err[-300:])
