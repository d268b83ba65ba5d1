"""The command line's front door: operator input that is wrong (a misspelt state dir/config, an unknown
agent, a usage error, no terminal) ends with exit 3 and a clear line, writes nothing; every output path
survives a closed pipe and never prints terminal control codes; Prometheus textfiles are always
rewritten; replay reads clawprobe's own history.

Real invocations of ``clawprobe.cli.main.main`` (in-process) or ``python -m tui`` (subprocess), on real files.
"""

from __future__ import annotations

import argparse
import json
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from clawprobe.cli.main import main
from clawprobe.core import history, probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.durations import human_duration
from clawprobe.core.locate import (
    UnknownAgent,
    agent_dirs,
    check_agent_id,
    known_agents,
    missing_explicit,
    state_dir,
)
from clawprobe.core.prometheus import render
from clawprobe.core.replay import (
    MAX_BYTES,
    ReplayError,
    latest_per_agent,
    load_receipts,
    parse_receipts,
)
from clawprobe.core.report import (
    ProbeFailure,
    printable,
    receipt_line,
    to_json,
    to_text,
)
from tests.promtext import file_samples, samples

ROOT = Path(__file__).resolve().parent.parent
REPLAY = ROOT / "tests" / "data" / "replay"
SPEC2 = REPLAY / "spec-2-qmd-missing.json"  # qmd_unavailable, exit 2, checked 2026-11-30T03:00:00Z


@pytest.fixture
def install(shell):
    """A state dir with two configured agents (main, work) and one more known only by its agents/ dir."""
    st = shell / "state"
    (st / "agents" / "old").mkdir(parents=True)
    (st / "openclaw.json").write_text('{agents: {list: [{id: "main"}, {id: "work"}]}}')
    return st


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# --------------------------------------------------------------------------------------------------------
# 1. an explicit state dir / config that does not exist
# --------------------------------------------------------------------------------------------------------

def test_missing_explicit_rule():
    env = {"HOME": "/h"}
    assert missing_explicit(state_dir(env), "state dir") is None  # the default location may be absent
    msg = missing_explicit(state_dir(env, "/nonexistent/typo"), "state dir")
    assert msg == "no OpenClaw state dir at /nonexistent/typo (from --state-dir)"
    msg = missing_explicit(state_dir({"OPENCLAW_STATE_DIR": "/nonexistent/env"}), "state dir")
    assert msg == "no OpenClaw state dir at /nonexistent/env (from $OPENCLAW_STATE_DIR)"


@pytest.mark.parametrize("cmd", [["check"], ["check", "--json"], ["walk"], ["canary", "show"],
                                 ["canary", "plant", "--yes"], []])
def test_a_misspelt_state_dir_is_refused_by_every_probing_command(shell, capsys, cmd):
    typo = shell / "typo"
    before = _tree(shell)
    rc, out, err = _run(capsys, "--state-dir", str(typo), *cmd)
    assert rc == 3
    assert f"no OpenClaw state dir at {typo} (from --state-dir)" in err and "Traceback" not in err
    assert not typo.exists() and _tree(shell) == before  # nothing written anywhere (data dir included)
    if "--json" in cmd:
        doc = json.loads(out)
        assert doc["exit_code"] == 3 and doc["receipts"] == [] and "no OpenClaw state dir" in doc["errors"][0]["reason"]


def test_canary_plant_refuses_a_config_openclaw_rejects(shell, capsys):
    """A config that parses but whose memory keys OpenClaw's schema refuses (``memory.qmd.updateInterval``: the key
    is ``update.interval``) says nothing reliable about the workspaces: the canary is not planted anywhere."""
    state, ws = shell / "home" / ".openclaw", shell / "ws"
    (ws / "memory").mkdir(parents=True)
    state.mkdir()
    (state / "openclaw.json").write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(ws)}}, "memory": {"backend": "qmd", "qmd": {"updateInterval": "5m"}}}))
    before = _tree(shell)
    rc, _, err = _run(capsys, "canary", "plant", "--yes")
    assert rc == 3 and "the OpenClaw config does not load" in err and "memory.qmd.updateInterval" in err, err
    assert _tree(shell) == before


def test_state_dir_from_the_environment_and_a_file_are_refused(shell, capsys, monkeypatch):
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(shell / "nowhere"))
    rc, _, err = _run(capsys, "check")
    assert rc == 3 and f"no OpenClaw state dir at {shell / 'nowhere'} (from $OPENCLAW_STATE_DIR)" in err
    assert not (shell / "nowhere").exists()
    (shell / "afile").write_text("x")
    rc, _, err = _run(capsys, "walk", "--state-dir", str(shell / "afile"))
    assert rc == 3 and "is not a directory" in err


@pytest.mark.parametrize("marker", ["openclaw.json", "agents/ops-bot"])
def test_a_home_dir_given_as_the_state_dir_is_refused_with_its_openclaw_dir(shell, capsys, marker):
    """A new user's ``--state-dir ~`` (the home, not ``~/.openclaw``) was probed as an empty install whose repair
    was ``mkdir -p ~/workspace/memory``; it is refused, naming the state dir meant, and nothing is written."""
    home = shell / "srv-home"
    (home / ".openclaw" / marker).parent.mkdir(parents=True)
    if marker.endswith(".json"):
        (home / ".openclaw" / marker).write_text("{}")
    else:
        (home / ".openclaw" / marker).mkdir()
    before = _tree(shell)
    for cmd in (["check"], ["walk"], ["canary", "plant", "--yes"]):
        rc, out, err = _run(capsys, "--state-dir", str(home), *cmd)
        assert rc == 3 and out == "", out
        assert f"did you mean --state-dir {home / '.openclaw'}?" in err, err
    assert _tree(shell) == before
    rc, _, err = _run(capsys, "--state-dir", str(home / ".openclaw"), "check", "--no-openclaw")
    assert "did you mean" not in err  # the state dir itself is probed


def test_a_missing_config_is_refused_but_a_config_directory_is_a_verdict(install, capsys):
    rc, out, err = _run(capsys, "check", "--state-dir", str(install), "--config", "/nonexistent.json", "--no-openclaw")
    assert rc == 3 and out == ""
    assert "no OpenClaw config file at /nonexistent.json (from --config)" in err
    assert "Memory unavailable" not in out + err
    (install / "cfgdir").mkdir()
    rc, out, _ = _run(capsys, "check", "--state-dir", str(install), "--config", str(install / "cfgdir"),
                      "--no-openclaw")
    assert rc == 2 and "Config invalid" in out  # kept: the config probe reports a directory
    # the config's own unreadability is said as such, never as a memory note's (stale_index's words for the tag)
    assert "the config file cannot be read" in out and "memory note" not in out


def test_the_real_openclaw_cli_never_sees_a_misspelt_state_dir(shell, capsys, monkeypatch, testbed):
    """With the real OpenClaw CLI pinned and the slow lane on, nothing runs and nothing is created (the CLI
    would create the directory it is pointed at)."""
    monkeypatch.setenv("CLAWPROBE_OPENCLAW", str(testbed.openclaw("2026.7.35")))
    monkeypatch.setenv("PATH", f"{testbed.bin_dir}:/usr/bin:/bin")
    typo = shell / "typo"
    for cmd in (["check"], ["walk"], ["canary", "show"]):
        rc, _, err = _run(capsys, "--state-dir", str(typo), *cmd)
        assert rc == 3 and "no OpenClaw state dir" in err
    assert not typo.exists() and not (shell / "home" / ".openclaw").exists()


# --------------------------------------------------------------------------------------------------------
# 2. unknown agents
# --------------------------------------------------------------------------------------------------------

def test_agent_id_rule():
    known = ["main", "work"]
    assert check_agent_id("work", known) == "work"
    assert check_agent_id("Main", known) == "main"  # a case difference is fine
    assert check_agent_id(" main ", known) == "main"
    with pytest.raises(UnknownAgent, match=r"^no agent 'ghost' \(known: main, work\)$"):
        check_agent_id("ghost", known)
    for rewritten in ("../x", "a/b", "", "Ops Bot", "x" * 65):
        with pytest.raises(UnknownAgent, match=r"no agent .* \(known: main, work; an agent id is letters"):
            check_agent_id(rewritten, known)
    with pytest.raises(UnknownAgent, match=r"^agent 'Ops.Team' is the one OpenClaw calls ops-team .*use --agent ops-team$"):
        check_agent_id("Ops.Team", [*known, "ops-team"])  # breaker round 10, s11: "no agent" for a configured id
    with pytest.raises(UnknownAgent, match=r"^no agent '\.\./work'"):
        check_agent_id("../work", known)  # a path is never "the one" OpenClaw means
    assert check_agent_id("anything", None) == "anything"  # config does not load: spelling only
    with pytest.raises(UnknownAgent):
        check_agent_id("../x", None)


def test_known_agents_are_configured_ids_then_agent_dirs(install):
    (install / "agents" / "Bad Name").mkdir()
    (install / "agents" / "file").write_text("")
    assert agent_dirs(str(install)) == ["old"]
    assert known_agents({"agents": {"list": [{"id": "main"}, {"id": "work"}]}}, str(install)) == ["main", "work", "old"]
    assert agent_dirs(str(install / "nope")) == []


@pytest.mark.parametrize("cmd", [["check", "--no-openclaw"], ["walk"], ["canary", "show"], []])
@pytest.mark.parametrize("agent", ["ghost", "../x", "a/b"])
def test_unknown_agents_are_refused_by_every_command(install, capsys, cmd, agent):
    before = _tree(install.parent)
    rc, out, err = _run(capsys, "--state-dir", str(install), "--agent", agent, *cmd)
    assert rc == 3 and out == ""
    assert f"no agent {agent!r} (known: main, work, old" in err
    assert _tree(install.parent) == before


def test_a_case_difference_and_an_agent_dir_are_accepted(install, capsys):
    rc, out, _ = _run(capsys, "check", "--state-dir", str(install), "--agent", "Main", "--no-openclaw")
    assert rc == 3 and "agent main: Unverified" in out  # probed as main (no canary yet)
    rc, out, _ = _run(capsys, "check", "--state-dir", str(install), "--agent", "old", "--no-openclaw", "--json")
    assert rc == 3 and [e["agent_id"] for e in json.loads(out)["receipts"]] == ["old"]


# --------------------------------------------------------------------------------------------------------
# 3. Prometheus textfile
# --------------------------------------------------------------------------------------------------------

def _metrics(path: Path) -> dict[str, float]:
    return file_samples(path)


def test_textfile_is_rewritten_when_the_check_cannot_run(install, capsys):
    prom = install.parent / "clawprobe.prom"
    rc, _, _ = _run(capsys, "check", "--state-dir", str(install), "--agent", "main", "--no-openclaw",
                    "--textfile", str(prom))  # --textfile implies --format prometheus
    m = _metrics(prom)
    # a verdict, but no `openclaw` here: not proved by probes that ran → clawprobe_up 0, and why
    assert rc == 3 and m["clawprobe_up"] == 0 and m['clawprobe_agent_up{agent="main"}'] == 0
    assert m['clawprobe_verdict{agent="main",tag="no_canary",verdict="unverified"}'] == 1
    assert "# clawprobe: agent main: openclaw_not_found" in prom.read_text()
    assert stat.S_IMODE(prom.stat().st_mode) == 0o644  # node_exporter runs as another user
    prom.chmod(0o640)
    for argv in (["--agent", "ghost"], ["--state-dir", str(install.parent / "typo")]):
        rc, _, _ = _run(capsys, "check", "--state-dir", str(install), *argv, "--textfile", str(prom))
        m = _metrics(prom)
        assert rc == 3 and m["clawprobe_up"] == 0 and not any(k.startswith("clawprobe_verdict") for k in m)
        assert abs(float(m["clawprobe_last_run_timestamp_seconds"]) - datetime.now(UTC).timestamp()) < 600
        assert "# clawprobe: no " in prom.read_text()
        assert stat.S_IMODE(prom.stat().st_mode) == 0o640  # the replaced file's mode is kept
    assert not (install.parent / "typo").exists()
    assert not [p for p in install.parent.iterdir() if p.name.endswith(".tmp")]


def test_textfile_in_a_missing_directory_is_an_error_and_nothing_is_created(install, capsys):
    target = install.parent / "no" / "dir" / "x.prom"
    rc, out, err = _run(capsys, "check", "--state-dir", str(install), "--textfile", str(target))
    assert rc == 3 and out == ""
    assert f"the directory {target.parent} does not exist (clawprobe does not create it)" in err
    assert not (install.parent / "no").exists()


@pytest.mark.parametrize("argv,needle", [
    (["--json", "--format", "prometheus"], "--json conflicts with --format prometheus"),
    (["--json", "--textfile", "x.prom"], "--textfile writes Prometheus metrics; it cannot be combined with --json"),
    (["--format", "text", "--textfile", "x.prom"], "cannot be combined with --format text"),
])
def test_contradicting_output_options_are_usage_errors(shell, capsys, argv, needle):
    rc, out, err = _run(capsys, "check", *argv)
    assert rc == 3 and out == "" and needle in err and "usage: clawprobe check" in err
    assert not (shell / "x.prom").exists()


def test_prometheus_render_without_a_verdict():
    now = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    text = render([], {}, now, cannot_run="no agent 'ghost'\nsecond line")
    m = samples(text)
    assert m["clawprobe_up"] == 0 and m["clawprobe_last_run_timestamp_seconds"] == now.timestamp()
    assert "# clawprobe: no agent 'ghost' second line\n" in text and "clawprobe_verdict" not in text
    (r,) = load_receipts(SPEC2)
    m = samples(render([(r, diagnose(r))], {"main": 1.0}, now, [ProbeFailure(agent_id="work", reason="boom")]))
    assert m["clawprobe_up"] == 0 and m['clawprobe_exit_code{agent="work"}'] == 3
    assert m['clawprobe_verdict{agent="main",tag="not_on_path",verdict="qmd_unavailable"}'] == 1
    assert m['clawprobe_agent_up{agent="main"}'] == 1 and m['clawprobe_agent_up{agent="work"}'] == 0
    assert samples(render([(r, diagnose(r))], {}, now))["clawprobe_up"] == 1


# --------------------------------------------------------------------------------------------------------
# 4. a closed pipe keeps the exit code, quietly
# --------------------------------------------------------------------------------------------------------

def test_a_cut_pipe_keeps_the_verdicts_exit_code_and_stderr_is_clean():
    argv = [sys.executable, "-m", "clawprobe", "replay", "--json", *[str(SPEC2)] * 8]  # > a 64 KiB pipe buffer
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.read(1) == b"{"
    p.stdout.close()  # `| head -c 1`
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 2  # qmd_unavailable, not 0
    assert err == ""  # no traceback, no "Exception ignored"


def _std_fds(cmd: list[str], redirect: str) -> tuple[int, str, str]:
    """``cmd`` run by bash with ``redirect`` applied to the clawprobe process (``>&-``, ``>/dev/full``, ``2>&-``);
    returns (exit code, what bash's own stdout got, stderr)."""
    line = " ".join(f"'{a}'" for a in cmd) + f" {redirect}; echo rc=$?"
    p = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=120)
    rc = int(p.stdout.rsplit("rc=", 1)[1])
    return rc, p.stdout, p.stderr


@pytest.mark.parametrize("cmd", [["replay"], ["replay", "--json"], ["check", "--bundle"], ["--version"], ["schema"]])
def test_a_closed_stdout_is_a_closed_pipe_and_a_full_disk_is_no_verdict(cmd):
    """``clawprobe … >&-`` (cron, a daemon with fd 1 closed) and ``2>&-``: no traceback, the verdict's exit code
    stays. ``clawprobe … > /dev/full`` (``check --json > report.json`` on a full disk): the report was not written,
    so the exit code is not the verdict's (a truncated report must not read as delivered) — exit 3 and why."""
    argv = [sys.executable, "-m", "clawprobe", *cmd]
    if cmd[0] in ("replay", "check"):
        argv.append(str(SPEC2) if cmd[0] == "replay" else str(ROOT / "tests" / "data" / "bundles" / "RW05.json"))
    want = 0 if cmd[0] in ("--version", "schema") else 2
    for redirect in (">&-", "2>&-", ">&- 2>&-", "<&- >&-"):
        rc, _, err = _std_fds(argv, redirect)
        assert (rc, "Traceback" in err) == (want, False), (redirect, err)
    rc, _, err = _std_fds(argv, ">/dev/full")
    assert rc == 3 and "Traceback" not in err, err
    assert "No space left on device" in err and "not delivered" in err, err


def test_watch_stops_when_its_reader_goes_away_or_the_disk_is_full():
    """``clawprobe check --watch 1 | head -2`` and ``check --watch 1 > /dev/full``: the loop used to run on forever
    unseen (head had exited; every round was lost). It now ends after that round: the verdict's exit code for a
    closed pipe, 3 and why for the full disk; never a traceback."""
    bundle = str(ROOT / "tests" / "data" / "bundles" / "RW05.json")  # qmd_unavailable, exit 2
    argv = [sys.executable, "-m", "clawprobe", "check", "--watch", "1", "--bundle", bundle]
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline().startswith("── clawprobe check".encode())
        p.stdout.close()  # `| head -1`
        assert p.wait(timeout=30) == 2
        assert p.stderr.read() == b""
    finally:
        p.kill()
        p.wait()
        p.stderr.close()
    with open("/dev/full", "w") as full:
        q = subprocess.Popen(argv, cwd=ROOT, stdout=full, stderr=subprocess.PIPE)
        try:
            assert q.wait(timeout=30) == 3
            err = q.stderr.read().decode()
        finally:
            q.kill()
            q.wait()
            q.stderr.close()
    assert "No space left on device" in err and "Traceback" not in err, err


# --------------------------------------------------------------------------------------------------------
# 5. replay reads clawprobe's own history, BOM, one record
# --------------------------------------------------------------------------------------------------------

def _history(tmp_path: Path) -> Path:
    (r,) = load_receipts(SPEC2)
    for i, agent in enumerate(["main", "work", "main"]):
        rr = r.model_copy(update={"agent_id": agent, "checked_at": r.checked_at + timedelta(minutes=i)})
        history.append(rr, diagnose(rr).verdict.value, "/state", tmp_path)
    return tmp_path / history.HISTORY_FILE


def test_replay_reads_every_line_of_the_history(tmp_path, capsys):
    hist = _history(tmp_path)
    rc, out, _ = _run(capsys, "replay", "--json", str(hist))
    doc = json.loads(out)
    assert rc == 2 and [e["agent_id"] for e in doc["receipts"]] == ["main", "work", "main"]
    assert [r.agent_id for r in latest_per_agent(load_receipts(hist))] == ["main", "work"]
    assert latest_per_agent(load_receipts(hist))[0].checked_at.minute == 2  # the newest main


async def test_replay_into_walk_and_dashboard_shows_the_newest_receipt_per_agent(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "walks"))
    hist = _history(tmp_path)
    rc, out, _ = _run(capsys, "--replay", str(hist), "walk", "--json")
    assert rc == 2 and [w["agent_id"] for w in json.loads(out)["walks"]] == ["main", "work"]
    from clawprobe.cli.dashboard import build_app

    app = build_app(argparse.Namespace(command=None, replay=str(hist), agent="work"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert [v.agent_id for v in app.report.agents] == ["main", "work"] and app.report.selected == 1
        assert app.report.agents[0].receipt.checked_at.minute == 2  # the newest receipt of main
    with pytest.raises(ReplayError, match="no receipt for agent 'ghost' \\(it has: main, work\\)"):
        build_app(argparse.Namespace(command=None, replay=str(hist), agent="ghost"))


def test_bad_history_line_bom_and_single_record(tmp_path, capsys):
    hist = _history(tmp_path)
    lines = hist.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], '{"saved_at": "x", "receipt": {"checked_at": ', lines[1]]) + "\n")
    rc, out, err = _run(capsys, "replay", str(bad))
    assert rc == 3 and out == "" and f"clawprobe: {bad}: line 2 is not JSON" in err
    bad.write_text("\n".join([lines[0], '{"receipt": {"checked_at": "2026-11-30T03:00:00Z", "bogus": 1}}']))
    rc, _, err = _run(capsys, "replay", str(bad))
    assert rc == 3 and "line 2: entry 0 is not a valid receipt — bogus: Extra inputs" in err
    one = tmp_path / "one.json"
    one.write_text(lines[2])  # one history record on its own
    assert [r.agent_id for r in load_receipts(one)] == ["main"]
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + SPEC2.read_bytes())
    rc, out, _ = _run(capsys, "replay", str(bom))
    assert rc == 2 and "QMD unavailable" in out
    assert MAX_BYTES > history.MAX_BYTES  # a full history replays
    with pytest.raises(ReplayError, match="^f: not JSON \\(line 2, column 3"):
        parse_receipts("{\n  broken", "f")  # pretty JSON with an error is not mistaken for JSON lines


def test_check_json_output_replays(capsys):
    rc, out, _ = _run(capsys, "replay", "--json", str(SPEC2))
    assert rc == 2
    assert [r.agent_id for r in parse_receipts(out, "contract")] == ["main"]


@pytest.mark.parametrize("content", [b'{"agent_id": "main", "checked', b"\xff\xfe garbage", None])
def test_replay_and_walk_json_on_unusable_input_is_still_one_document(tmp_path, capsys, content):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content)  # truncated, not UTF-8 — or (None) missing
    for argv, key in ((["replay", "--json", str(bad)], "receipts"), (["--replay", str(bad), "walk", "--json"], "walks")):
        rc, out, err = _run(capsys, *argv)
        doc = json.loads(out)
        assert rc == 3 and doc["exit_code"] == 3 and doc[key] == [], doc
        (e,) = doc["errors"]
        assert e["agent_id"] is None and str(bad) in e["reason"] and e["reason"] in err


# --------------------------------------------------------------------------------------------------------
# 6. terminal control codes never reach the terminal
# --------------------------------------------------------------------------------------------------------

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
CLEAR = "\x1b[2J"


def test_printable_escapes_c0_and_c1_but_keeps_newline_and_tab():
    assert printable(f"a{OSC52}b{CLEAR}\x9b31m\x7f\r\t\nz") == \
        "a\\x1b]52;c;aGVsbG8=\\x07b\\x1b[2J\\x9b31m\\x7f\\x0d\t\nz"
    assert printable("✓ fresh · é") == "✓ fresh · é"


def test_replay_and_walk_text_escape_control_codes_and_json_round_trips(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    doc = json.loads(SPEC2.read_text())
    doc["agent_id"] = f"evil{OSC52}{CLEAR}\x9b2J"
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps(doc))
    for argv in (["replay", str(evil)], ["--replay", str(evil), "walk"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 2 and "evil\\x1b]52;c;aGVsbG8=\\x07\\x1b[2J\\x9b2J" in out
        assert not any(c in out + err for c in "\x1b\x07\x9b")
    rc, out, _ = _run(capsys, "replay", "--json", str(evil))
    assert not any(c in out for c in "\x1b\x07\x9b")
    assert json.loads(out)["receipts"][0]["agent_id"] == doc["agent_id"]
    named = tmp_path / f"x{CLEAR}.json"
    named.write_text("{")
    rc, _, err = _run(capsys, "replay", str(named))
    assert rc == 3 and "x\\x1b[2J.json" in err and "\x1b" not in err


# --------------------------------------------------------------------------------------------------------
# 7. which time a replay was judged at, in human durations
# --------------------------------------------------------------------------------------------------------

def test_human_durations():
    assert [human_duration(s) for s in (0, 42, 60, 1020, 1025, 7500, 86400, 100800, -42)] == \
        ["0 s", "42 s", "1 min", "17 min", "17 min", "2 h 5 min", "1 d", "1 d 4 h", "42 s"]


def test_old_receipt_says_when_it_was_judged():
    (r,) = load_receipts(SPEC2)  # checked 03:00:00Z, lease ends 03:05:00Z
    d = diagnose(r)
    later = r.checked_at + timedelta(days=1, hours=4)
    line = receipt_line(d, clock=later)
    assert line == ("receipt: judged at the receipt's check time 2026-11-30T03:00:00Z; it is now 1 d 4 h old and "
                    "expired (valid until 2026-11-30T03:05:00Z) — use --now now to judge it at the clock")
    assert receipt_line(d, clock=r.checked_at + timedelta(minutes=2)).endswith(
        "still valid until 2026-11-30T03:05:00Z (3 min left)")
    assert receipt_line(d, clock=r.checked_at + timedelta(seconds=5)) == \
        "receipt: checked 2026-11-30T03:00:00Z, valid until 2026-11-30T03:05:00Z (5 min left)"
    d2 = diagnose(r, later)
    assert receipt_line(d2, later) == ("receipt: judged at 2026-12-01T07:00:00Z; checked 2026-11-30T03:00:00Z, 1 d 4 h "
                                       "before; EXPIRED at 2026-11-30T03:05:00Z (the lease ended 1 d 3 h earlier)")
    assert "checked 0 s ago" not in to_text([(r, d)], clock=later)


def test_replay_cli_text_states_the_judged_time(capsys):
    rc, out, _ = _run(capsys, "replay", str(SPEC2))
    assert rc == 2 and "judged at the receipt's check time 2026-11-30T03:00:00Z; it is now" in out
    rc, out, _ = _run(capsys, "replay", "--now", "2026-11-30T03:17:00Z", str(SPEC2))
    assert "judged at 2026-11-30T03:17:00Z; checked 2026-11-30T03:00:00Z, 17 min before; EXPIRED" in out


# --------------------------------------------------------------------------------------------------------
# 8. usage errors are UNKNOWN (3), not CRITICAL (2)
# --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["bogus"], ["--replay"], ["check", "--format", "xml"], ["replay"],
                                  ["canary", "explode"]])
def test_usage_errors_exit_3_with_usage(capsys, argv):
    rc, out, err = _run(capsys, *argv)
    assert rc == 3 and out == "" and "usage: clawprobe" in err and "error:" in err


def test_usage_error_exit_code_of_the_real_process():
    p = subprocess.run([sys.executable, "-m", "clawprobe", "bogus"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert p.returncode == 3 and "invalid choice: 'bogus'" in p.stderr and "Traceback" not in p.stderr


def test_help_texts(capsys):
    for sub, needle in ((["check"], "--json      print the JSON contract"),
                        (["walk"], "--json                print the walkthrough as JSON"),
                        (["schema"], "print the diagnosis schema"), (["demo"], "--no-mouse")):
        rc, out, _ = _run(capsys, *sub, "--help")
        assert rc == 0 and needle.split()[0] in out
        assert " ".join(needle.split()[1:]) in " ".join(out.split())
    rc, out, _ = _run(capsys, "demo", "--help")
    assert "leave the mouse to the terminal" in " ".join(out.split())


# --------------------------------------------------------------------------------------------------------
# 9. the dashboard needs a terminal
# --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["demo"], ["--replay", str(SPEC2)], []])
def test_dashboard_without_a_terminal_refuses_at_once(tmp_path, argv):
    (tmp_path / "state").mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "state"),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "clawprobe", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 3 and p.stdout == ""
    assert "the dashboard needs a terminal; use `clawprobe check` for scripts/cron" in p.stderr
    assert "Traceback" not in p.stderr


def test_build_app_needs_no_terminal_and_run_checks_the_terminal_last(capsys):
    from clawprobe.cli.dashboard import build_app, has_terminal, run

    assert not has_terminal()  # pytest captures stdout: not a terminal, yet the App is built (Pilot tests)
    assert build_app(argparse.Namespace(command="demo", scenario="3", agent=None)).demo_index == 2
    assert run(argparse.Namespace(command="demo", scenario="nope", list=False, agent=None)) == 3
    assert "'nope' is not a demo scenario" in capsys.readouterr().err  # bad input is named before the tty


# --------------------------------------------------------------------------------------------------------
# 10. small ones
# --------------------------------------------------------------------------------------------------------

def test_demo_scenario_by_its_list_number(capsys):
    from clawprobe.tui.demo import ScenarioError, find, scenarios

    assert find("3") == 2 and find("1") == 0
    assert find(str(len(scenarios()))) == len(scenarios()) - 1
    for bad in ("0", str(len(scenarios()) + 1)):
        with pytest.raises(ScenarioError, match=f"there is no demo scenario {int(bad)}: choose 1–"):
            find(bad)
    rc, out, _ = _run(capsys, "demo", "--list")
    assert rc == 0 and out.splitlines()[4].split()[:2] == ["3", scenarios()[2].name]
    rc, _, err = _run(capsys, "demo", "--scenario", "99")
    assert rc == 3 and "there is no demo scenario 99" in err


def test_walk_without_an_install_says_it_once(shell, capsys):
    rc, _, err = _run(capsys, "walk")
    assert rc == 3 and err.count("no OpenClaw install found") == 1


def test_one_agents_probe_error_keeps_the_others(shell, capsys, monkeypatch):
    st = shell / "state"
    st.mkdir()
    (st / "openclaw.json").write_text('{"agents": {"list": [{"id": "main"}, {"id": "work"}]}}')
    real = probe.collect

    def collect(ctx, agent, *args, **kwargs):  # a bug inside one agent's probes (the known ones are fixed)
        if agent == "main":
            raise ValueError("embedded null byte")
        return real(ctx, agent, *args, **kwargs)

    monkeypatch.setattr(probe, "collect", collect)
    rc, out, err = _run(capsys, "check", "--state-dir", str(st), "--json", "--no-openclaw")
    doc = json.loads(out)
    assert rc == 3 == doc["exit_code"]
    assert [e["agent_id"] for e in doc["receipts"]] == ["work"]
    assert doc["errors"] == [{"agent_id": "main", "reason": "probing failed: ValueError: embedded null byte",
                              "exit_code": 3}]
    assert "probing agent main failed: ValueError: embedded null byte" in err
    rc, out, _ = _run(capsys, "check", "--state-dir", str(st), "--no-openclaw")
    assert rc == 3 and "agent work: Unverified" in out and "agent main: COULD NOT PROBE" in out
    rc, out, _ = _run(capsys, "--state-dir", str(st), "walk", "--json")
    walk = json.loads(out)
    assert rc == 3 and [w["agent_id"] for w in walk["walks"]] == ["work"] and walk["errors"][0]["agent_id"] == "main"


def test_json_contract_lists_failures_and_the_worst_code():
    (r,) = load_receipts(SPEC2)
    doc = json.loads(to_json([(r, diagnose(r))], [ProbeFailure(agent_id="work", reason="x")]))
    assert doc["exit_code"] == 2 and doc["errors"][0]["exit_code"] == 3  # 2 outranks 3
    assert json.loads(to_json([], [ProbeFailure(reason="no install")]))["exit_code"] == 3


@pytest.mark.parametrize("option", ["--state-dir", "--config"])
@pytest.mark.parametrize("cmd", [["check"], ["check", "--json"], ["canary", "plant", "--yes"]])
def test_an_empty_state_dir_or_config_is_refused_not_replaced_by_the_default_install(shell, capsys, option, cmd):
    """``clawprobe --state-dir "$DIR" check`` with ``DIR`` unset: the empty option was dropped and the default
    install (``~/.openclaw``, here a real one with agent ``kb-7``) probed and judged instead — another install's
    verdict, or a canary planted in it. Now exit 3 and why, nothing probed or written."""
    default = shell / "home" / ".openclaw"
    default.mkdir(parents=True, exist_ok=True)
    (default / "openclaw.json").write_text('{agents: {list: [{id: "kb-7"}]}}')
    before = _tree(shell)
    rc, out, err = _run(capsys, option, "", *cmd)
    assert rc == 3 and f"{option} is empty" in err and "Traceback" not in err, (out, err)
    assert "kb-7" not in out and _tree(shell) == before
