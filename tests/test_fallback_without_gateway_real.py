"""Tester's A5 on the real OpenClaw 2026.7.35 and qmd 2.8.3: a unit whose PATH lacks qmd, no gateway running.

Check 1 is ``qmd_unavailable`` — and its own ``openclaw memory status``/``search`` runs (with the unit's
environment) write ``qmd binary unavailable (qmd); falling back to builtin`` into ``logging.file``. The operator
fixes the unit's environment file; check 2 must not read check 1's own lines as a gateway in fallback: no gateway
process runs, and its own search is answered by qmd. One home, two checks (≈ 4 CLI runs).
"""

from __future__ import annotations

import hashlib

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import CanarySpec, clear_caches, collect, discover
from tests.testbed import OC_QMD, qmd_config, run_openclaw, unique_token

pytest_plugins = ["tests.conftest_testbed"]


@pytest.fixture(scope="module")
def a5(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="a5 unit env")
    log = home.root / "logs" / "openclaw.jsonl"
    log.parent.mkdir(exist_ok=True)
    home.write_config(qmd_config("qmd", "search", logging={"file": str(log)}))
    home.write_memory_md("# Memory\n\nThe backup runs nightly.\n")
    token = unique_token()
    text = f"# clawprobe canary\n\nSynthetic canary token {token} (safe to keep).\n"
    home.write_file("memory/clawprobe-canary.md", text)
    spec = CanarySpec(token=token, expected_path="memory/clawprobe-canary.md",
                      content_sha256=hashlib.sha256(text.encode()).hexdigest())
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    optbin = home.root / "optbin"
    optbin.mkdir()
    (optbin / "qmd").symlink_to(testbed.qmd)
    units = home.home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway.service").write_text(
        f'[Service]\nEnvironment="OPENCLAW_STATE_DIR={home.state_dir}"\nEnvironmentFile=%h/gw.env\n'
        "ExecStart=/usr/bin/openclaw gateway run\n")
    envfile = home.home / "gw.env"
    env = home.env([optbin, testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD))})

    def check():
        clear_caches()
        r = collect(discover(env=env), "main", canary=spec)
        return r, diagnose(r)

    envfile.write_text("PATH=/usr/bin:/bin\n")
    first = check()
    lines = log.read_text().count("qmd binary unavailable (qmd); falling back to builtin")
    envfile.write_text(f"PATH={optbin}:/usr/bin:/bin\n")  # the operator's fix
    return first, lines, check()


def test_check_one_is_qmd_unavailable_and_its_own_probes_log_the_fallback(a5):
    (r, d), lines, _ = a5
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "not_on_path"), d.evidence
    assert r.gateway.running is False and r.gateway.env_source == "systemd"
    assert lines >= 1  # measured on 2026.7.35: two, one per CLI probe — no gateway ran


def test_check_two_does_not_read_its_own_lines_as_a_gateway_in_fallback(a5):
    _, _, (r, d) = a5
    assert d.verdict.value != "fallback_active", (d.reason, d.evidence)
    assert d.verdict.value == "healthy", (d.reason, d.evidence, r.probe_errors)
    assert r.backend.effective == "qmd" and r.canary.outcome == "found"
    assert r.backend.fallback_at is None
    assert any("no gateway process runs" in e.detail for e in r.backend.evidence), r.backend.evidence
