"""Evidence clawprobe does not understand is never healthy, never a confident repair (breaker round 23u).

An OpenClaw release clawprobe has never measured: a healthy 2026.9.6 builtin state, checked
through the same real program relabelled (its ``package.json`` and ``dist/build-info.json`` — what
``openclaw --version`` prints) as 2026.10.1, 2027.1.0, a prerelease ``2026.9.7-beta.1`` or the gap release
2026.7.36. clawprobe said ``healthy`` (exit 0) for the first three — whose config layout, CLI output and stores it
never measured — and for 2026.7.36 ``config_invalid · schema`` with a confident "put 2026.9.6 back", though the
program had accepted the config and found the canary. Now each is ``unverified · not_understood`` naming the
version (:mod:`clawprobe.core.understood`), and the same program labelled 2026.9.6 is still healthy.

A ``memory search --json`` answer in a shape clawprobe does not know (a future version, stood in for by a wrapper
that runs the real 2026.9.6 and renames fields in its JSON): clawprobe read no hit and said ``retrieval_failed ·
miss`` (exit 2, "inspect the canary's path and the builtin index") although the real program had returned the
canary. Now ``unverified · not_understood`` naming the shape (``Receipt.not_understood``).

Real: one index run, one hard-linked copy of the 2026.9.6 install, one check per label or shape."""

from __future__ import annotations

import os
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes.openclaw_cli import parse_search, parse_status, second_json_value
from clawprobe.core.understood import openclaw_understood, openclaw_version_gap, qmd_version_gap
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
    ("2026.9.7-beta.1", False), ("2026.10.0+build.7", False), ("garbage", False), ("v2026.9.6", False),
    ("2026.8.1-beta.2", True), ("2026.9.1-beta.1", True), ("2026.7.1-2", True), ("2026.9.6+build.7", True)])
def test_the_allow_list_of_measured_releases(version, understood):
    assert openclaw_understood(version) is understood
    gap = openclaw_version_gap(version)
    assert (gap is None) is understood and (understood or version.strip() in gap)


#: a future ``memory search --json``: the real answer with one shape change (the wrapper's modes)
WRAPPER = """#!/usr/bin/env python3
import json, subprocess, sys
p = subprocess.run([{real!r}, *sys.argv[1:]], capture_output=True, text=True)
out, mode = p.stdout, open({mode!r}).read().strip()
if mode == "status" and sys.argv[1:3] == ["memory", "status"] and "--json" in sys.argv:
    out = json.dumps([{{("memory" if k == "status" else k): x for k, x in el.items()}} for el in json.loads(out)])
elif mode == "agents" and sys.argv[1:3] == ["memory", "status"] and "--json" in sys.argv:
    out = json.dumps({{"agents": json.loads(out)}})
elif mode == "engine" and sys.argv[1:3] == ["memory", "status"] and "--json" in sys.argv:
    v = json.loads(out)
    for el in v:
        el["status"]["engine"] = el["status"].pop("backend")
    out = json.dumps(v)
elif mode in ("hits", "file", "wrapped", "noid") and sys.argv[1:3] == ["memory", "search"] and "--json" in sys.argv:
    v = json.loads(out)
    if mode == "hits":
        v["hits"] = v.pop("results")
    elif mode == "file":
        for h in v["results"]:
            h["file"] = h.pop("path")
    elif mode == "wrapped":
        v = {{"data": v}}
    elif mode == "noid":
        for h in v["results"]:
            h.pop("id", None), h.pop("textScore", None)
    out = json.dumps(v)
if mode.startswith(("status-", "search-")) and sys.argv[1:3] == ["memory", mode.split("-")[0]]:
    how = mode.split("-")[1]
    if how == "twice":  # the answer, then a second JSON document
        out += "\\n" + ("[]" if mode.startswith("status") else '{{"results": []}}') + "\\n"
    elif how in ("segv", "kill"):  # the whole answer, then the process dies by a signal
        import os, signal
        sys.stdout.write(out), sys.stdout.flush(), sys.stderr.write(p.stderr), sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV if how == "segv" else signal.SIGKILL)
sys.stdout.write(out)
sys.stderr.write(p.stderr)
sys.exit(p.returncode)
"""


@pytest.fixture(scope="module")
def future_search(tmp_path_factory, testbed):
    """``shape(mode) → launcher``: the real 2026.9.6 CLI behind a wrapper that reshapes ``memory search --json``."""
    root = tmp_path_factory.mktemp("oc-future-json")
    mode, wrapper = root / "mode", root / "openclaw"
    wrapper.write_text(WRAPPER.format(real=str(testbed.openclaw(OC_LATEST)), mode=str(mode)))
    wrapper.chmod(0o755)

    def shape(m: str) -> Path:
        mode.write_text(m)
        return wrapper

    return shape


@pytest.mark.parametrize("mode", ["hits", "file", "wrapped", ""])
def test_a_search_answer_in_an_unknown_shape_is_not_a_miss(healthy_home, future_search, mode):
    home, spec = healthy_home
    r, d = _check(home, spec, future_search(mode))
    if not mode:  # the real answer, unchanged: healthy
        assert d.verdict is Verdict.HEALTHY and not r.not_understood, d.evidence
        return
    assert r.canary.outcome is None, r.canary
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), (d.verdict, d.reason, d.evidence)
    assert "memory search --json" in d.evidence[0], d.evidence
    assert "index" not in (d.next_action.command or "").split(), d.next_action.command


@pytest.mark.parametrize(("stdout", "unread"), [
    ('{"results": []}', False), ("[]", False), ('{"results": [{"path": "MEMORY.md", "snippet": "x"}]}', False),
    ('{"ok": false, "error": {"message": "boom"}}', False),
    ('{"hits": [{"path": "MEMORY.md"}]}', True), ('{"data": {"results": []}}', True),
    ('{"results": [{"file": "memory/a.md"}]}', True), ('["memory/a.md"]', True), ("no json here", True),
    ('{"results": {"path": "MEMORY.md"}}', True)])
def test_which_search_answers_are_understood(stdout, unread):
    res = parse_search(stdout, "", 0)
    assert (res.not_understood is not None) is unread, res
    assert parse_search(stdout, "", 1).not_understood is None  # a failed call is an error, not a shape


@pytest.mark.parametrize(("mode", "named"), [("status", "memory"), ("agents", "agents")])
def test_a_status_answer_in_an_unknown_shape_is_not_healthy(healthy_home, future_search, mode, named):
    """The status elements' ``status`` object renamed (``memory``): clawprobe read none of its facts and said
    healthy; now ``unverified · not_understood`` naming the status answer. The list wrapped in an object
    (``{"agents": [...]}``, breaker round 23, e) was ``unverified · openclaw_failed`` → "Make the OpenClaw CLI run",
    though the CLI ran (exit 0): it is ``not_understood`` too, naming the object's keys."""
    home, spec = healthy_home
    r, d = _check(home, spec, future_search(mode))
    assert r.canary.outcome == "found", r.canary
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), (d.verdict, d.reason, d.evidence)
    assert "memory status --json" in d.evidence[0] and named in d.evidence[0], d.evidence
    assert not r.probe_errors, r.probe_errors


@pytest.mark.parametrize("mode", ["engine", "noid"])
def test_a_field_no_builtin_rule_reads_may_change(healthy_home, future_search, mode):
    """Breaker round 23 (e): ``status.backend`` renamed, search hits without ``id``/``textScore``. On the builtin
    engine no rule reads them (the backend and the hits' engine matter only where QMD is configured; the canary is
    read from its ``path``), so the check stays healthy — a field nothing reads is no reason to refuse."""
    home, spec = healthy_home
    r, d = _check(home, spec, future_search(mode))
    assert r.canary.outcome == "found" and d.verdict is Verdict.HEALTHY, (d.verdict, d.reason, d.evidence)


@pytest.mark.parametrize(("mode", "named"), [("status-segv", "SIGSEGV"), ("status-kill", "SIGKILL"),
                                           ("status-twice", "second JSON document"),
                                           ("search-twice", "second JSON document")])
def test_an_answer_from_a_process_that_did_not_end_well_is_not_healthy(healthy_home, future_search, mode, named):
    """Breaker round 24 (n): the real 2026.9.6 answer printed whole, then the process killed by SIGSEGV/SIGKILL
    (a crashing build, a kill by the OOM killer), or followed by a second JSON document. clawprobe said healthy
    for a status killed by a signal (an exit 1 was already unverified: the signal was filed as "explained" though
    no rule read it) and for either answer printed twice (it read the first, ignored the second). Now
    ``unverified`` naming the exit or the second document; the search's two answers give no canary outcome."""
    home, spec = healthy_home
    r, d = _check(home, spec, future_search(mode))
    assert d.verdict is Verdict.UNVERIFIED and d.exit_code != 0, (d.verdict, d.reason, d.evidence)
    assert any(named in e and f"memory {mode.split('-')[0]}" in e for e in d.evidence), d.evidence
    if mode == "search-twice":
        assert r.canary.outcome is None and d.reason == "not_understood", (r.canary, d.reason)
    assert "index" not in (d.next_action.command or "").split(), d.next_action.command


@pytest.mark.parametrize(("stdout", "two"), [
    ('[{"agentId": "main", "status": {}}]\n[]\n', True), ('{"results": []}{"results": []}', True),
    ('[memory] sync\n{"results": []}\n[memory] done {x}\n', False), ('{"results": [{"path": "[a]"}]}', False),
    ('{"results": []}\nwarning: {"a" not json\n', False), ('[1/2] {"results": []}', False)])
def test_a_second_json_document_is_named(stdout, two):
    assert (second_json_value(stdout, "x") is not None) is two


@pytest.mark.parametrize(("stdout", "unread"), [
    ('[{"agentId": "main", "status": {"backend": "builtin"}}]', False), ("[]", False),
    ('[{"agentId": "ops-bot", "memory": {"backend": "builtin"}}]', True), ('["main"]', True),
    ('[{"agentId": "main", "status": {"backend": "qmd"}}, {"agentId": "b", "state": {}}]', True),
    ('{"agents": [{"agentId": "main", "status": {}}]}', True), ('{"ok": false, "error": {"message": "x"}}', False)])
def test_which_status_answers_are_understood(stdout, unread):
    res = parse_status(stdout, "", 0)
    assert (res.not_understood is not None) is unread
    assert res.error is None if unread else True  # a shape it cannot read is no failed call


@pytest.mark.parametrize("line", [
    "{at} ERROR [memory] Memory sync failed (ops-bot): SQLITE_IOERR: disk I/O error",
    '{{"time": "{at}", "level": "error", "subsystem": "memory", "msg": "Memory search failed: embeddings quota"}}'])
def test_a_log_line_about_memory_in_an_unknown_format_is_not_healthy(healthy_home, testbed, line):
    """A memory ERROR in the gateway log, written in a format that is no OpenClaw JSON log record (plain text; JSON
    with other field names): clawprobe skipped it and said healthy; now ``unverified · not_understood`` quoting it."""
    home, spec = healthy_home
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    before = home.log_file.read_text() if home.log_file.exists() else ""
    home.log_file.write_text(before + line.format(at=at) + "\n")
    try:
        r, d = _check(home, spec, testbed.openclaw(OC_LATEST))
    finally:
        home.log_file.write_text(before)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), (d.verdict, d.reason, d.evidence)
    assert any("gateway log" in e and "format clawprobe does not read" in e for e in d.evidence), d.evidence


QMD_WRAPPER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "$(cat {ver})"; exit 0; fi
exec {real} "$@"
"""


def test_a_qmd_newer_than_measured_is_never_healthy(oc_home_factory, testbed, tmp_path_factory):
    """QMD on 2026.7.35 (agent ``research``, search mode): the real qmd 2.8.3 behind a wrapper whose ``--version``
    says 3.0.0 or 2.9.0 — clawprobe said healthy for a qmd release it never measured; now ``unverified ·
    not_understood`` naming it, while the same qmd saying 2.8.3 is healthy."""
    from tests.testbed import OC_QMD, qmd_config
    root = tmp_path_factory.mktemp("qmd-future")
    ver, wrapper = root / "version", root / "qmd"
    ver.write_text("qmd 2.8.3 (facd35e)")
    wrapper.write_text(QMD_WRAPPER.format(ver=ver, real=testbed.qmd))
    wrapper.chmod(0o755)
    home = oc_home_factory(qmd_config(str(wrapper), "search", agents={"list": [{"id": "research", "default": True}]}),
                           name="qmd-future", agent_id="research")
    home.write_memory_md("# Memory\n\nThe backup window opens at 02:00.\n")
    spec = plant(home)
    made = run_openclaw(home, OC_QMD, "memory", "index", "--agent", "research", timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    for said, healthy in (("qmd 3.0.0 (abc1234)", False), ("qmd 2.8.3 (facd35e)", True)):
        ver.write_text(said)
        probe.clear_caches()
        ctx = probe.discover(env=home.env((), {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD))}))
        r = probe.collect(ctx, "research", canary=spec)
        d = diagnose(r, r.checked_at)
        assert r.canary.outcome == "found", r.canary
        if healthy:
            assert d.verdict is Verdict.HEALTHY, d.evidence
        else:
            assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), (d.verdict, d.reason, d.evidence)
            assert any("qmd 3.0.0" in e for e in d.evidence), d.evidence


@pytest.mark.parametrize(("version", "understood"), [
    ("2.8.3", True), ("2.0.1", True), ("1.0.7", True), (None, True), ("2.8.4", False), ("2.9.0", False),
    ("3.0.0", False), ("2.9.0-rc.1", False), ("next", False)])
def test_the_allow_list_of_measured_qmd_releases(version, understood):
    assert (qmd_version_gap(version) is None) is understood


def test_a_search_that_answered_whole_then_crashed_is_not_said_to_crash_with_no_output(healthy_home, future_search):
    """Breaker round 24 (n, 4): the real search's hits printed whole, the canary among them, then SIGSEGV. clawprobe
    said ``memory_unavailable · search_crash`` — "crashes natively (no output) … index first" — on a full index.
    The crash stays a failed search (its exit is quoted), but neither "no output" nor an index run."""
    home, spec = healthy_home
    r, d = _check(home, spec, future_search("search-segv"))
    assert d.verdict is not Verdict.HEALTHY and d.reason != "search_crash", (d.verdict, d.reason, d.evidence)
    assert r.builtin.unavailable_reason != "search_crash", r.builtin
    assert any("-11" in e or "SIGSEGV" in e for e in d.evidence), d.evidence
    assert "index" not in (d.next_action.command or "").split(), d.next_action.command
