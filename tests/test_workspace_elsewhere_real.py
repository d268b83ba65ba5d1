"""An agent whose workspace does not exist while its notes sit one level up (breaker round 9, p13), on the real
OpenClaw 2026.9.6 builtin engine. With ``agents.ownership: "explicit"`` 2026.9.6 gives every agent
``agents.defaults.workspace/<id>``, so the operator's ``MEMORY.md`` in ``agents.defaults.workspace`` is never
searched. clawprobe's one next action was ``clawprobe canary plant``, which refuses a missing workspace, and the
re-check printed it again. Now the action points the agent at its notes with ``openclaw config set`` (the key of
its own entry); run here, then a canary plant and one index run, the check is healthy and the note is found.
Real: one ``config set``, one index run, one search, two checks."""

from __future__ import annotations

import json
import subprocess

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "desk"


def test_a_missing_workspace_with_the_notes_above_it_is_pointed_at_them(oc_home_factory, testbed, tmp_path):
    ops_ws = tmp_path / "ops-notes"
    (ops_ws / "memory").mkdir(parents=True)
    (ops_ws / "MEMORY.md").write_text("# Memory\n\nops notes\n")
    agents = {"ownership": "explicit", "entries": {AGENT: {}, "ops": {"workspace": str(ops_ws)}}}
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents=agents), name="elsewhere", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe desk code is PLUM-RIVER-31.\n")
    data = tmp_path / "data"
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST))
    missing = home.workspace / AGENT
    assert not missing.exists()

    rc, out, err = run_clawprobe(["check", "--json", "--agent", AGENT], env, timeout=300)
    assert "Traceback" not in err, err
    (entry,) = json.loads(out)["receipts"]
    d = entry["diagnosis"]
    assert (rc, d["verdict"], d["reason"]) == (3, "unverified", "no_canary"), d["evidence"]
    assert entry["receipt"]["coverage"]["notes_nearby"] == str(home.workspace)
    assert entry["next_command"].endswith(f"config set agents.entries.{AGENT}.workspace {home.workspace}")
    assert "canary plant" not in entry["next_command"]
    assert not missing.exists()  # the check created nothing

    subprocess.run(["bash", "-c", entry["next_command"]], check=True, env=env, timeout=120, capture_output=True)
    assert json.loads(home.config_path.read_text())["agents"]["entries"][AGENT]["workspace"] == str(home.workspace)
    rc_p, _, err_p = run_clawprobe(["canary", "plant", "--agent", AGENT, "--yes"], env)
    assert rc_p == 0, err_p
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", AGENT, timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json", "--agent", AGENT], env, timeout=300)
    assert (rc, json.loads(out)["receipts"][0]["diagnosis"]["verdict"]) == (0, "healthy")
    found = run_openclaw(home, OC_LATEST, "memory", "search", "PLUM-RIVER-31", "--json", "--agent", AGENT,
                         timeout=240, testbed=testbed)
    assert "MEMORY.md" in found.stdout
