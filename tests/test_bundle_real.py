"""``clawprobe bundle`` → ``clawprobe check --bundle`` on a real test-bed install (real qmd 2.8.3 and OpenClaw
2026.7.35, a canary planted and indexed through OpenClaw): the bundle's verdict, tag and next action are the
live check's, and the bundle holds no note text the diagnosis does not need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clawprobe.core import canary_write
from tests.testbed import OC_QMD, qmd_config, run_openclaw

ROOT = Path(__file__).resolve().parent.parent
SECRET_NOTE = "The user's locker code is 4711."


def _clawprobe(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clawprobe", *argv], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_bundle_round_trip_equals_the_live_check(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(qmd_config("qmd", "search"), name="bundle")
    home.write_memory_md(f"# Memory\n\n{SECRET_NOTE}\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, "main", root=data)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
                                       "CLAWPROBE_DATA_DIR": str(data)})
    env["PYTHONPATH"] = str(ROOT / "src")
    live = _clawprobe(env, "check", "--json", "--agent", "main")
    f = tmp_path / "support.json"
    made = _clawprobe(env, "bundle", "--agent", "main", "-o", str(f))
    assert made.returncode == 0 and f.is_file(), made.stderr
    replayed = _clawprobe(env, "check", "--bundle", str(f), "--json")
    a, b = json.loads(live.stdout)["receipts"][0], json.loads(replayed.stdout)["receipts"][0]
    assert a["verdict"] == "healthy", a["diagnosis"]["evidence"]
    assert (b["verdict"], b["reason"], b["next_action"], b["next_command"]) == \
        (a["verdict"], a["reason"], a["next_action"], a["next_command"])
    assert replayed.returncode == live.returncode == 0
    text = f.read_text(encoding="utf-8")
    assert "locker" not in text and "No service environment" in text
    doc = json.loads(text)
    assert doc["format"] == "clawprobe-bundle" and doc["version"] == 1 and doc["agents"][0]["origin"] == "live"
    assert f.stat().st_mode & 0o077 == 0
