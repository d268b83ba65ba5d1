"""The workspace's ``memory/`` is a symlink to a notes dir elsewhere, and — as clawprobe's own ``symlink`` repair
offers — ``memorySearch.extraPaths`` names the real dir (breaker round 10, s04), on the real OpenClaw 2026.9.6
builtin engine. Every note is then searchable, the canary too, but OpenClaw returns it by its real path
(``../srv/notes/clawprobe-canary.md``) and clawprobe failed the install for good as ``wrong_source``. A hit that
names the canary file by its real path is the canary: the check is healthy. Real: one index run, one check."""

from __future__ import annotations

import json

from tests.hardening_helpers import check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "notes-7"


def test_a_canary_found_by_its_real_path_through_an_extra_path_is_found(oc_home_factory, testbed, tmp_path):
    notes = tmp_path / "srv" / "notes"
    notes.mkdir(parents=True)
    (notes / "proj.md").write_text("# Project\n\nThe falcon code is SYMLINK-FALCON-5.\n")
    cfg = builtin_config("none", version=OC_LATEST, memory={"search": {"provider": "none", "extraPaths": [str(notes)]}},
                         agents={"list": [{"id": AGENT, "default": True}]})
    home = oc_home_factory(cfg, name="symmem", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    (home.workspace / "memory").symlink_to(notes, target_is_directory=True)
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data, AGENT)  # the canary is written through the symlink, into srv/notes
    assert (notes / "clawprobe-canary.md").is_file()

    rc, out, err = run_clawprobe(["check", "--json"], check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST)),
                                 timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), (got["diagnosis"]["evidence"], err[-300:])
    canary = got["receipt"]["canary"]
    assert canary["outcome"] == "found" and canary["returned_path"].endswith("srv/notes/clawprobe-canary.md")
    found = run_openclaw(home, OC_LATEST, "memory", "search", "SYMLINK-FALCON-5", "--json", "--agent", AGENT,
                         timeout=240, testbed=testbed)
    assert "srv/notes/proj.md" in found.stdout
