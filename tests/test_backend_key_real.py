"""A ``memory.backend`` naming the builtin engine, left in a config upgraded to 2026.9.6 (real program).

OpenClaw 2026.8.1+ rejects ``memory.backend`` whatever it names (``Unrecognized key``), so every command fails —
``backend_retired``. The repair said "Migrate off QMD … or install ≤ 2026.7.35 to keep QMD" for an install that
never asked for QMD (breaker round 23, u-b). It is ``backend_retired · backend_key`` now, its words name no QMD,
and its command — run here for real — leaves a valid config and the memory commands working again."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.hardening_helpers import run_clawprobe
from tests.testbed import OC_LATEST, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


@pytest.mark.parametrize(("agent", "backend"), [("ops-bot", "builtin"), ("main", "sqlite")])
def test_a_left_over_builtin_backend_key_gets_no_qmd_migration(oc_home_factory, testbed, tmp_path, agent, backend):
    home = oc_home_factory(name=f"backend-key-{agent}")
    home.write_config({"memory": {"backend": backend, "search": {"provider": "none"}},
                       "agents": {"entries": {agent: {}}}})
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                        "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    rc, out, err = run_clawprobe(["walk", "--json", "--agent", agent], env)
    walk = json.loads(out)["walks"][0]
    assert (walk["verdict"], walk["reason"], rc) == ("backend_retired", "backend_key", 2), (out[-1500:], err[-800:])
    words = json.dumps({k: walk[k] for k in ("title", "why", "dont", "evidence", "steps")})
    assert not [w for w in ("QMD", "qmd", "2026.7.35") if w in words.replace("QMD backend retired", "")], words
    command = next(s["command"] for s in walk["steps"] if s["command"] and "doctor" in s["command"])
    assert "doctor --fix" in command and command.startswith("cp -p "), command
    done = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    valid = run_openclaw(home, OC_LATEST, "config", "validate", "--json", testbed=testbed)
    assert valid.rc == 0 and json.loads(valid.stdout).get("valid") is True, valid.stdout[-800:]
    assert "backend" not in json.loads(home.config_path.read_text()).get("memory", {})
