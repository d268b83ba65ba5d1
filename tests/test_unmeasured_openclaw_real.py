"""An OpenClaw release clawprobe has never measured (breaker round 23u): a healthy 2026.9.6 builtin state, checked
through the same real program relabelled (its ``package.json`` and ``dist/build-info.json`` — what
``openclaw --version`` prints) as 2026.10.1, 2027.1.0, a prerelease ``2026.9.7-beta.1`` or the gap release
2026.7.36. clawprobe said ``healthy`` (exit 0) for the first three — whose config layout, CLI output and stores it
never measured — and for 2026.7.36 ``config_invalid · schema`` with a confident "put 2026.9.6 back", though the
program had accepted the config and found the canary. Now each is ``unverified · not_understood`` naming the
version (:mod:`clawprobe.core.understood`), and the same program labelled 2026.9.6 is still healthy.

Real: one index run, one hard-linked copy of the 2026.9.6 install, one check per label."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.understood import openclaw_understood, openclaw_version_gap
from clawprobe.core.verdicts import Verdict
from tests.rw_support import plant
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

AGENT = "ops-bot"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@pytest.fixture(scope="module")
def relabelled(tmp_path_factory, testbed):
    """``label(version) → launcher``: a hard-linked copy of the real 2026.9.6 install whose version files are
    rewritten (unlinked first: the test bed's own files are never touched)."""
    root = tmp_path_factory.mktemp("oc-relabelled")
    shutil.copytree(testbed.openclaw_package(OC_LATEST).parent, root / "node_modules", symlinks=True,
                    copy_function=_link_or_copy)
    pkg = root / "node_modules" / "openclaw"
    launcher = root / "openclaw"
    launcher.write_text(f'#!/bin/sh\nexec "{testbed.node}" "{pkg / "openclaw.mjs"}" "$@"\n')
    launcher.chmod(0o755)

    def label(version: str) -> Path:
        for f in (pkg / "package.json", pkg / "dist" / "build-info.json"):
            text = re.sub(r'"version": "[^"]*"', f'"version": "{version}"', f.read_text(), count=1)
            f.unlink()
            f.write_text(text)
        return launcher

    return label


@pytest.fixture(scope="module")
def healthy_home(oc_home_factory, testbed):
    """A healthy builtin state for agent ``ops-bot``, indexed by the real 2026.9.6."""
    cfg = builtin_config("none", version=OC_LATEST, agents={"list": [{"id": AGENT, "default": True}]})
    home = oc_home_factory(cfg, name="unmeasured", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe release train leaves on Thursdays.\n")
    spec = plant(home)
    made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", AGENT, timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    return home, spec


def _check(home, spec, launcher):
    probe.clear_caches()
    ctx = probe.discover(env=home.env((), {"CLAWPROBE_OPENCLAW": str(launcher)}))
    r = probe.collect(ctx, AGENT, canary=spec)
    return r, diagnose(r, r.checked_at)


@pytest.mark.parametrize("version", ["2026.10.1", "2026.9.7-beta.1", "2026.7.36", OC_LATEST])
def test_an_unmeasured_release_is_never_healthy(healthy_home, relabelled, version):
    home, spec = healthy_home
    r, d = _check(home, spec, relabelled(version))
    assert r.openclaw.version == version
    assert r.canary.outcome == "found", r.canary  # the program works
    if version == OC_LATEST:  # the same program, a measured label: healthy — the rule reads the version
        assert d.verdict is Verdict.HEALTHY, d.evidence
        return
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), (d.verdict, d.reason, d.evidence)
    assert d.exit_code != 0 and any(version in e for e in d.evidence), d.evidence
    assert "npm install" not in (d.next_action.command or "") and "doctor --fix" not in (d.next_action.command or "")


@pytest.mark.parametrize(("version", "understood"), [
    ("2026.9.6", True), ("2026.8.1", True), ("2026.7.35", True), ("2026.4.5", True), (" 2026.9.6\n", True),
    ("2026.9.7", False), ("2026.10.1", False), ("2027.1.0", False), ("2026.7.36", False), ("2026.8.0", False),
    ("2026.9.6-beta.1", False), ("2026.9.6+build.7", False), ("garbage", False), ("v2026.9.6", False)])
def test_the_allow_list_of_measured_releases(version, understood):
    assert openclaw_understood(version) is understood
    gap = openclaw_version_gap(version)
    assert (gap is None) is understood and (understood or version.strip() in gap)
