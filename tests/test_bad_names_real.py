"""A memory note whose file NAME is not UTF-8 (``caf\\xe9.md``: Latin-1 from an old zip or a Samba share; breaker
round 8, n02b), on the real OpenClaw 2026.9.6 builtin engine (agent ``ops-lisboa``, provider ``none``). OpenClaw reads
names as UTF-8 and never indexes it, so nothing in it is ever found; clawprobe said ``healthy`` with ``coverage:
3/3 indexed`` (its scan skipped the name without counting it). Now ``retrieval_failed · unsearchable_notes`` with
the name counted as a skipped note, and the repair lists such names by their bytes; its rename step, run here,
makes the note findable after one index run. ``check --save`` and ``bundle`` keep working with such a name on disk
(they raised on the lone surrogate). Real: two index runs, two checks, one search."""

from __future__ import annotations

import json
import os
import subprocess

from tests.hardening_helpers import check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "ops-lisboa"


def test_a_note_whose_name_is_not_utf8_is_never_found_and_its_rename_repairs_it(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents={"list": [{"id": AGENT, "default": True}]}),
                           name="badname", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    (home.workspace / "memory").mkdir(exist_ok=True)
    bad = os.path.join(os.fsencode(home.workspace / "memory"), b"p\xe3o-doce.md")  # "pão-doce" in Latin-1
    with open(bad, "wb") as f:
        f.write(b"# Bakery\n\nThe bakery code is MANGO-SALT-64.\n")
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data, AGENT)
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST))

    rc, out, err = run_clawprobe(["check", "--json", "--save"], env, timeout=300)
    assert "Traceback" not in err, err
    (entry,) = json.loads(out)["receipts"]
    d = entry["diagnosis"]
    assert (rc, d["verdict"], d["reason"]) == (2, "retrieval_failed", "unsearchable_notes"), d["evidence"]
    assert any("1 bad name" in e and "memory/p\ufffdo-doce.md" in e for e in d["evidence"]), d["evidence"]
    listing = entry["next_command"]
    got = subprocess.run(["bash", "-c", listing], capture_output=True, timeout=30).stdout
    assert got == bad + b"\n"
    rename = next(s["command"] for s in d["next_action"]["steps"] if s["title"].startswith("Rename"))
    rc_b, _, err_b = run_clawprobe(["bundle", "-o", str(tmp_path / "b.json"), "--no-openclaw"], env, timeout=120)
    assert "Traceback" not in err_b and json.loads((tmp_path / "b.json").read_text())

    subprocess.run(["bash", "-c", rename], check=True, timeout=30)
    assert sorted(os.listdir(home.workspace / "memory")) == ["clawprobe-canary.md", "pão-doce.md"]
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", AGENT, timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    assert (rc, json.loads(out)["receipts"][0]["diagnosis"]["verdict"]) == (0, "healthy")
    found = run_openclaw(home, OC_LATEST, "memory", "search", "MANGO-SALT-64", "--json", "--agent", AGENT,
                         timeout=240, testbed=testbed)
    assert "memory/pão-doce.md" in found.stdout
