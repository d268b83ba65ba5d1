"""A builtin ``extraPaths`` root that is itself a symlink (``~/kb`` → a dir elsewhere; breaker round 12, s05), on the
real OpenClaw 2026.9.6. The engine never traverses a symlinked root ("configure its canonical absolute directory
instead", its status scan issue), so the notes there are never indexed. clawprobe said ``unsearchable_notes``
rightly, but told the operator to move or rename the notes and printed a ``find`` over the workspace, which lists
nothing (the symlink is in HOME). Now the action names the real directory to configure; done, the flow ends healthy.
Real: two index runs, two checks."""

from __future__ import annotations

import json
import subprocess

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "desk-4"


def test_a_symlinked_extra_path_root_is_named_with_its_real_directory(oc_home_factory, testbed, tmp_path):
    real = tmp_path / "shared notes" / "kb"
    real.mkdir(parents=True)
    (real / "runbook.md").write_text("# Runbook\n\nRestart with LINKED-ROOT-4.\n")
    cfg = builtin_config("none", version=OC_LATEST, agents={"list": [{"id": AGENT, "default": True}]},
                         memory={"search": {"extraPaths": ["~/kb"]}})
    home = oc_home_factory(cfg, name="linked", agent_id=AGENT)
    (home.home / "kb").symlink_to(real)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    env = check_env(home, testbed, tmp_path / "data", openclaw=testbed.openclaw(OC_LATEST))
    oc = ("memory", "index", "--agent", AGENT)
    assert run_clawprobe(["canary", "plant", "--yes"], env)[0] == 0
    assert run_openclaw(home, OC_LATEST, *oc, testbed=testbed).rc == 0

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    action = got["diagnosis"]["next_action"]
    assert (got["verdict"], got["diagnosis"]["reason"]) == ("retrieval_failed", "unsearchable_notes"), got["diagnosis"]
    assert got["receipt"]["coverage"]["linked_roots"] == {str(home.home / "kb"): str(real)}
    assert str(real) in action["title"] and "move or rename" not in action["title"].lower(), action["title"]
    printed = subprocess.run(["bash", "-c", action["command"]], capture_output=True, text=True, timeout=30,
                             env={**env, "HOME": str(home.home)})
    assert printed.stdout.strip() == str(real), (action["command"], printed)

    home.update_config({"memory": {"search": {"extraPaths": [str(real)]}}})  # what the action says
    assert run_openclaw(home, OC_LATEST, *oc, testbed=testbed).rc == 0
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), (got["diagnosis"]["evidence"], err[-300:])
