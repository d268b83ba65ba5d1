"""``clawprobe bundle`` → ``clawprobe check --bundle`` on a real test-bed install (real qmd 2.8.3 and OpenClaw
2026.7.35, a canary planted and indexed through OpenClaw): the bundle's verdict, tag and next action are the
live check's, and the bundle holds no note text the diagnosis does not need.

The command line is run with ``--no-openclaw`` (each ``openclaw`` call costs 3–6 s of CPU); the canary
retrieval through OpenClaw is bundled once in-process, from the same slow evidence the live check uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.core import canary_write
from clawprobe.core.bundle import BUNDLE_VERSION, bundle_text, make_bundle, parse_bundle
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.interpret import interpret
from clawprobe.core.probe import clear_caches, discover, fast, gather, slow
from tests.testbed import OC_QMD, qmd_config, run_openclaw

ROOT = Path(__file__).resolve().parent.parent
SECRET_NOTE = "The user's locker code is 4711."


def _clawprobe(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clawprobe", *argv], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=240)


@pytest.fixture(scope="module")
def indexed(oc_home_factory, testbed, tmp_path_factory):
    home = oc_home_factory(qmd_config("qmd", "search"), name="bundle")
    home.write_memory_md(f"# Memory\n\n{SECRET_NOTE}\n")
    data = tmp_path_factory.mktemp("clawprobe-data")
    canary_write.plant(home.workspace, "main", root=data)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
                                       "CLAWPROBE_DATA_DIR": str(data)})
    return home, env


def test_cli_bundle_round_trip_equals_the_live_check(indexed, tmp_path):
    _, env = indexed
    env = {**env, "PYTHONPATH": str(ROOT / "src")}
    live = _clawprobe(env, "check", "--json", "--no-openclaw", "--agent", "main")
    f = tmp_path / "support.json"
    made = _clawprobe(env, "bundle", "--no-openclaw", "--agent", "main", "-o", str(f))
    assert made.returncode == 0 and f.is_file(), made.stderr
    replayed = _clawprobe(env, "check", "--bundle", str(f), "--json")
    a, b = json.loads(live.stdout)["receipts"][0], json.loads(replayed.stdout)["receipts"][0]
    assert (a["verdict"], a["reason"]) == ("unverified", "not_retrieved"), a["diagnosis"]["evidence"]
    assert a["receipt"]["canary"]["indexed_at"] is not None and a["receipt"]["qmd"]["store_ok"] is True
    assert (b["verdict"], b["reason"], b["next_action"], b["next_command"]) == \
        (a["verdict"], a["reason"], a["next_action"], a["next_command"])
    assert replayed.returncode == live.returncode == 3
    text = f.read_text(encoding="utf-8")
    assert "locker" not in text and "No service environment" in text
    doc = json.loads(text)
    assert doc["format"] == "clawprobe-bundle" and doc["version"] == BUNDLE_VERSION == 2 and doc["agents"][0]["origin"] == "live"
    assert f.stat().st_mode & 0o077 == 0
    # the archive form: bundle.json + README.txt in one .tar.gz, diagnosed the same
    tgz = tmp_path / "support.tar.gz"
    made = _clawprobe(env, "bundle", "--no-openclaw", "--agent", "main", "-o", str(tgz))
    assert made.returncode == 0 and tgz.is_file(), made.stderr
    again = _clawprobe(env, "check", "--bundle", str(tgz), "--json")
    c = json.loads(again.stdout)["receipts"][0]
    assert (c["verdict"], c["reason"], c["next_action"], again.returncode) == \
        (a["verdict"], a["reason"], a["next_action"], live.returncode)


@pytest.mark.timeout(900)  # two openclaw calls; on a loaded 2-core host each may take a minute
def test_bundled_retrieval_through_openclaw_equals_the_live_check(indexed):
    _, env = indexed
    clear_caches()
    ctx = discover(env=env)
    s = slow(ctx, "main")
    d_live = diagnose(fast(ctx, "main", s, s.taken_at), openclaw="openclaw", state_dir=ctx.state_dir.path)
    assert d_live.verdict.value == "healthy", (d_live.evidence, s.search)
    # gather keeps what the CLI printed, unparsed: interpret parses it (clawprobe.core.interpret.runs)
    assert (s.status, s.search, s.direct) == (None, None, None), s
    assert s.status_run is not None and s.status_run.argv[-5:] == ["memory", "status", "--json", "--agent", "main"]
    assert s.search_run is not None and s.search_run.rc == 0 and s.canary is not None
    assert s.canary.token in s.search_run.stdout and not s.search_run.stdout_truncated
    assert s.direct_run is not None and s.direct_run.argv[1:3] == ["search", s.canary.token]
    ev = gather(ctx, "main", s, s.taken_at)
    b = parse_bundle(bundle_text(make_bundle([ev], s.taken_at)))
    assert SECRET_NOTE not in bundle_text(b) and "locker" not in bundle_text(b)
    kept = b.agents[0].slow
    assert kept is not None and kept.search_run is not None and kept.canary is not None
    assert kept.canary.token in kept.search_run.stdout  # the printed JSON, its note text removed
    d = diagnose(interpret(b.agents[0]), openclaw="openclaw", state_dir=ctx.state_dir.path)
    assert (d.verdict, d.reason, d.next_action.title, d.next_action.command) == \
        (d_live.verdict, d_live.reason, d_live.next_action.title, d_live.next_action.command)
