"""Printed repair commands reach the install clawprobe probed (tester B4).

``clawprobe check --state-dir S`` (or ``--config C``) printed ``openclaw config set …`` and ``clawprobe check --agent
main``: pasted into the operator's shell they acted on ``~/.openclaw``. The location now travels with the command
(``clawprobe.core.locate.command_lines``): ``OPENCLAW_STATE_DIR=S`` / ``OPENCLAW_CONFIG_PATH=C`` before an OpenClaw
command, ``clawprobe --state-dir S [--config C]`` for clawprobe's. Recorded receipts, no real OpenClaw.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from clawprobe.cli.main import main
from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import GATEWAY_CONFIG_SOURCE, CommandLines, Located, command_lines
from clawprobe.core.replay import load_receipts
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk import run_step, start_walk
from clawprobe.core.walk_run import NotAllowed, allowed_run, check_allowed

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "src" / "clawprobe" / "tui" / "demo" / "scenarios"
KEYWORD_ONLY = SCENARIOS / "11-rw34-auto-provider-keyword-only.json"  # config set memory.search.provider none
STALE = ROOT / "tests" / "data" / "replay" / "spec-4-stale-721s.json"  # memory index, then re-probe
NO_CANARY = SCENARIOS / "13-first-run-no-canary.json"  # clawprobe canary plant

S = "/srv/my oc"  # a state dir with a blank: quoted in every command
C = "/etc/oc conf/openclaw.json"
OC = ["/opt/openclaw-2026.9.6"]
FLAGGED = command_lines(OC, Located(path=S, source="--state-dir"), Located(path=C, source="--config"))


def _one(path: Path):
    (r,) = load_receipts(path)
    return r


def _commands(d) -> list[str | None]:
    return [d.next_action.command, *(s.command for s in d.next_action.steps)]


def test_command_lines_carry_only_clawprobes_own_flags():
    state, config = Located(path=S, source="--state-dir"), Located(path=C, source="--config")
    assert command_lines(OC, state, None) == CommandLines(
        "OPENCLAW_STATE_DIR='/srv/my oc' /opt/openclaw-2026.9.6", "clawprobe --state-dir '/srv/my oc'")
    assert command_lines(None, None, config) == CommandLines(
        "OPENCLAW_CONFIG_PATH='/etc/oc conf/openclaw.json' openclaw", "clawprobe --config '/etc/oc conf/openclaw.json'")
    assert FLAGGED == CommandLines(
        "OPENCLAW_STATE_DIR='/srv/my oc' OPENCLAW_CONFIG_PATH='/etc/oc conf/openclaw.json' /opt/openclaw-2026.9.6",
        "clawprobe --state-dir '/srv/my oc' --config '/etc/oc conf/openclaw.json'")
    # clawprobe's own environment's variables (a one-shot prefix, a y pasted into another pane) are carried too
    env_state = Located(path=S, source="$OPENCLAW_STATE_DIR")
    env_config = Located(path=C, source="$OPENCLAW_CONFIG_PATH")
    assert command_lines(OC, env_state, env_config) == FLAGGED
    # the defaults resolve the same when pasted: nothing added
    default = (Located(path="/h/.openclaw", source="~/.openclaw"), Located(path="/h/.openclaw/openclaw.json",
                                                                           source="<state>/openclaw.json"))
    assert command_lines(None, *default) == CommandLines("openclaw", "clawprobe")
    node = ["/usr/bin/node", "/opt/oc/openclaw.mjs"]
    assert command_lines(node, None, None).openclaw == "/usr/bin/node /opt/oc/openclaw.mjs"
    # the gateway's own config: clawprobe's openclaw runs get it, so do the printed ones; clawprobe finds it again
    gateway = Located(path=C, source=f"{GATEWAY_CONFIG_SOURCE} (systemd)")
    assert command_lines(None, None, gateway) == CommandLines(
        "OPENCLAW_CONFIG_PATH='/etc/oc conf/openclaw.json' openclaw", "clawprobe")


def test_a_config_set_repair_and_its_step_carry_the_location():
    d = diagnose(_one(KEYWORD_ONLY), openclaw=FLAGGED.openclaw, state_dir=S, clawprobe=FLAGGED.clawprobe)
    assert d.verdict is Verdict.KEYWORD_ONLY
    want = ("OPENCLAW_STATE_DIR='/srv/my oc' OPENCLAW_CONFIG_PATH='/etc/oc conf/openclaw.json' "
            "/opt/openclaw-2026.9.6 config set memory.search.provider none")
    assert d.next_action.command == want
    assert want in _commands(d)[1:]
    assert _commands(d)[-1] == ("clawprobe --state-dir '/srv/my oc' --config '/etc/oc conf/openclaw.json' "
                                "check --agent main")


def test_memory_index_and_the_reprobe_carry_the_location():
    lines = command_lines(OC, Located(path=S, source="--state-dir"), None)
    d = diagnose(_one(STALE), openclaw=lines.openclaw, state_dir=S, clawprobe=lines.clawprobe)
    by_title = {s.title: s.command for s in d.next_action.steps}
    assert d.next_action.command == by_title["Run the managed update"] == \
        "OPENCLAW_STATE_DIR='/srv/my oc' /opt/openclaw-2026.9.6 memory index --agent main"
    assert by_title["Re-probe"] == "clawprobe --state-dir '/srv/my oc' check --agent main"
    plant = diagnose(_one(NO_CANARY), openclaw=lines.openclaw, state_dir=S, clawprobe=lines.clawprobe)
    assert plant.next_action.command == "clawprobe --state-dir '/srv/my oc' canary plant --agent main"


@pytest.mark.parametrize("path", [KEYWORD_ONLY, STALE, NO_CANARY])
def test_without_the_flags_the_commands_are_unchanged(path):
    r = _one(path)
    plain = command_lines(None, Located(path="/h/.openclaw", source="~/.openclaw"),
                          Located(path="/h/.openclaw/openclaw.json", source="<state>/openclaw.json"))
    assert _commands(diagnose(r, openclaw=plain.openclaw, clawprobe=plain.clawprobe)) == _commands(diagnose(r))
    assert not any("OPENCLAW_" in c or "--state-dir" in c or "--config" in c for c in _commands(diagnose(r)) if c)


def test_the_walk_still_runs_the_prefixed_index_command():
    lines = command_lines(OC, Located(path=S, source="--state-dir"), Located(path=C, source="--config"))
    w = start_walk(diagnose(_one(STALE), openclaw=lines.openclaw, clawprobe=lines.clawprobe), openclaw=OC)
    step = next(s for s in w.steps if s.title == "Run the managed update")
    assert step.allowed and step.refused is None
    assert allowed_run(step.command or "", agent_id="main", openclaw=OC) == (
        [*OC, "memory", "index", "--agent", "main"], {"OPENCLAW_STATE_DIR": S, "OPENCLAW_CONFIG_PATH": C})
    assert check_allowed(step.command or "", agent_id="main", openclaw=OC) == [*OC, "memory", "index", "--agent", "main"]
    refused = {
        "OPENCLAW_HOME=/x openclaw memory index --agent main": "environment prefix",
        "OPENCLAW_STATE_DIR=/a OPENCLAW_STATE_DIR=/b openclaw memory index --agent main": "environment prefix",
        "OPENCLAW_STATE_DIR= openclaw memory index --agent main": "environment prefix",
        "OPENCLAW_STATE_DIR=/a XDG_CACHE_HOME=/x openclaw memory index --agent main": "environment prefix",
        "OPENCLAW_STATE_DIR=/a": "no command",
        "OPENCLAW_STATE_DIR=/a openclaw memory index --force --agent main": "--force",
        "OPENCLAW_STATE_DIR=/a qmd update": "not OpenClaw.s CLI",
    }
    for cmd, why in refused.items():
        with pytest.raises(NotAllowed, match=why.replace("-", r"\-")):
            check_allowed(cmd, agent_id="main")


def test_a_step_run_gets_the_location_in_its_environment(tmp_path):
    cli = tmp_path / "bin" / "openclaw"
    cli.parent.mkdir()
    cli.write_text('#!/bin/sh\necho "state=$OPENCLAW_STATE_DIR config=${OPENCLAW_CONFIG_PATH:-unset} args=$*"\n')
    cli.chmod(0o755)
    lines = command_lines([str(cli)], Located(path=S, source="--state-dir"), None)
    w = start_walk(diagnose(_one(STALE), openclaw=lines.openclaw, clawprobe=lines.clawprobe), openclaw=[str(cli)])
    w.current = next(s.index for s in w.steps if s.title == "Run the managed update")
    out = run_step(w, confirmed_by="alice", env={"PATH": "/usr/bin:/bin", "OPENCLAW_STATE_DIR": "/home/x/.openclaw"},
                   openclaw=[str(cli)], timeout_s=30)
    assert out.status == "ok" and out.argv == [str(cli), "memory", "index", "--agent", "main"]
    assert out.output_tail == ["state=/srv/my oc config=unset args=memory index --agent main"]


# --------------------------------------------------------------------------------------------------------
# the command line: check and walk print what they probed
# --------------------------------------------------------------------------------------------------------

@pytest.fixture
def located(shell, monkeypatch):
    """The operator shell (tests/conftest.py) with a state dir (a blank in its name) whose probe returns a
    recorded keyword-only receipt."""
    tmp_path = shell
    recorded = _one(KEYWORD_ONLY)
    monkeypatch.setattr(probe, "collect", lambda ctx, agent, *a, **kw: recorded.model_copy(update={"agent_id": agent}))
    st = tmp_path / "my oc"
    st.mkdir()
    (st / "openclaw.json").write_text('{"agents": {"list": [{"id": "main"}]}}')
    return st


def _check(capsys, *argv: str) -> dict:
    main([*argv, "--json", "--no-openclaw"])
    return json.loads(capsys.readouterr().out)["receipts"][0]


def test_check_and_walk_with_state_dir_print_commands_for_that_install(located, capsys):
    s = located.as_posix()
    doc = _check(capsys, "check", "--state-dir", s)
    assert doc["next_command"] == f"OPENCLAW_STATE_DIR='{s}' openclaw config set memory.search.provider none"
    assert doc["diagnosis"]["next_action"]["steps"][-1]["command"] == f"clawprobe --state-dir '{s}' check --agent main"
    main(["--state-dir", s, "walk", "--json"])
    steps = json.loads(capsys.readouterr().out)["walks"][0]["steps"]
    assert steps[1]["command"] == doc["next_command"] and steps[-1]["command"] == doc["diagnosis"]["next_action"]["steps"][-1]["command"]


def test_check_with_config_or_the_environments_state_dir_carries_it_and_the_default_adds_nothing(located, capsys, monkeypatch):
    c = (located / "openclaw.json").as_posix()
    doc = _check(capsys, "check", "--config", c)
    assert doc["next_command"] == f"OPENCLAW_CONFIG_PATH='{c}' openclaw config set memory.search.provider none"
    assert doc["diagnosis"]["next_action"]["steps"][-1]["command"] == f"clawprobe --config '{c}' check --agent main"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", located.as_posix())  # maybe a one-shot prefix: carried all the same
    s = located.as_posix()
    doc = _check(capsys, "check")
    assert doc["next_command"] == f"OPENCLAW_STATE_DIR='{s}' openclaw config set memory.search.provider none"
    assert doc["diagnosis"]["next_action"]["steps"][-1]["command"] == f"clawprobe --state-dir '{s}' check --agent main"
    monkeypatch.delenv("OPENCLAW_STATE_DIR")
    monkeypatch.setenv("HOME", str(located.parent / "home"))
    (located.parent / "home" / ".openclaw").mkdir(parents=True, exist_ok=True)
    (located.parent / "home" / ".openclaw" / "openclaw.json").write_text('{"agents": {"list": [{"id": "main"}]}}')
    doc = _check(capsys, "check")  # the default install: the pasting shell's default too, nothing added
    assert doc["next_command"] == "openclaw config set memory.search.provider none"
    assert doc["diagnosis"]["next_action"]["steps"][-1]["command"] == "clawprobe check --agent main"


# --------------------------------------------------------------------------------------------------------
# the real bug, end to end: the printed command pasted into a shell whose HOME is elsewhere (test bed)
# --------------------------------------------------------------------------------------------------------

def test_the_pasted_config_set_changes_the_probed_config_and_creates_nothing_in_home(oc_home_factory, testbed,
                                                                                      tmp_path):
    from clawprobe.cli.main import _parser
    from tests.testbed import OC_LATEST, openclaw_env, run_process

    home = oc_home_factory({"agents": {"list": [{"id": "main"}]}}, name="my oc")  # a blank in the state dir
    state = home.state_dir.as_posix()
    assert " " in state
    lines = command_lines([str(testbed.openclaw(OC_LATEST))], Located(path=state, source="--state-dir"), None)
    d = diagnose(_one(KEYWORD_ONLY), openclaw=lines.openclaw, state_dir=state, clawprobe=lines.clawprobe)
    operator = tmp_path / "operator"
    operator.mkdir()
    env = {**openclaw_env(home, OC_LATEST), "HOME": str(operator)}
    del env["OPENCLAW_STATE_DIR"]  # the operator's shell knows nothing of the probed install
    res = run_process(["bash", "-c", d.next_action.command or ""], env=env, cwd=operator, timeout=90)
    assert res.rc == 0, res
    assert json.loads((home.state_dir / "openclaw.json").read_text())["memory"]["search"]["provider"] == "none"
    assert not (operator / ".openclaw").exists()
    reprobe = _commands(d)[-1] or ""
    assert _parser().parse_args(shlex.split(reprobe)[1:]).state_dir == state  # the re-probe names it too


# --------------------------------------------------------------------------------------------------------
# a check read back (replay, --replay walk/dashboard, a bundle): its commands reach the install it names
# --------------------------------------------------------------------------------------------------------

def test_recorded_lines_carry_the_install_unless_it_is_the_default(tmp_path):
    from clawprobe.core.locate import recorded_command_lines

    st = tmp_path / "my oc"
    st.mkdir()
    (st / "openclaw.json").write_text("{}")
    cfg = (st / "openclaw.json").as_posix()
    other = {"HOME": str(tmp_path / "home")}
    assert recorded_command_lines(None, None, cfg, other) == (CommandLines(
        f"OPENCLAW_STATE_DIR={shlex.quote(st.as_posix())} openclaw", f"clawprobe --state-dir {shlex.quote(st.as_posix())}"),
        st.as_posix())
    # the variable may be a one-shot prefix of the check, not this shell's: carried as a live check carries it
    assert recorded_command_lines(None, None, cfg, {**other, "OPENCLAW_STATE_DIR": st.as_posix()})[0] == \
        recorded_command_lines(None, None, cfg, other)[0]
    default = tmp_path / "home" / ".openclaw"  # the default install: nothing added
    assert recorded_command_lines(None, None, (default / "openclaw.json").as_posix(), other)[0] == \
        CommandLines("openclaw", "clawprobe")
    elsewhere = (tmp_path / "etc oc.json").as_posix()  # a config outside the state dir: the default state, its config
    assert recorded_command_lines(None, None, elsewhere, other)[0] == CommandLines(
        f"OPENCLAW_CONFIG_PATH={shlex.quote(elsewhere)} openclaw", f"clawprobe --config {shlex.quote(elsewhere)}")
    assert recorded_command_lines(None, None, None, other) == (CommandLines("openclaw", "clawprobe"), None)


def test_a_replayed_walk_of_a_state_dir_install_indexes_that_install_not_home(oc_home_factory, testbed, tmp_path):
    """Breaker round 23: ``clawprobe --replay receipts.jsonl walk`` of a ``check --state-dir S --save`` printed a bare
    ``openclaw memory index --agent main``; pasted into the operator's shell it built a new ``~/.openclaw`` (state
    database and the agent's store) and the re-probe then checked that. Real 2026.9.6, the index run for real."""
    from tests.testbed import OC_LATEST, builtin_config, openclaw_env, run_process

    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="my oc 'r23'")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    store = home.builtin_db()
    assert not store.exists()
    operator = tmp_path / "operator"
    operator.mkdir()
    bindir = tmp_path / "bin"  # `openclaw` on the operator's PATH, as an install puts it there
    bindir.mkdir()
    (bindir / "openclaw").symlink_to(testbed.openclaw(OC_LATEST))
    env = {**openclaw_env(home, OC_LATEST), "HOME": str(operator), "PATH": f"{bindir}:/usr/bin:/bin",
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    del env["OPENCLAW_STATE_DIR"]  # the operator's shell knows nothing of the probed install
    py = [sys.executable, "-m", "clawprobe.cli.main"]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    saved = run_process([*py, "--state-dir", str(home.state_dir), "check", "--save", "--no-openclaw"], env=env,
                        cwd=operator, timeout=120)
    assert saved.rc in (1, 2, 3), saved
    walked = run_process([*py, "--replay", str(tmp_path / "data" / "receipts.jsonl"), "walk", "--json"], env=env,
                         cwd=operator, timeout=60)
    steps = json.loads(walked.stdout)["walks"][0]["steps"]
    index = next(s["command"] for s in steps if s["command"] and " memory index " in s["command"])
    assert index.startswith(f"OPENCLAW_STATE_DIR={shlex.quote(home.state_dir.as_posix())} "), index
    res = run_process(["bash", "-c", index], env=env, cwd=operator, timeout=120)
    assert res.rc == 0, res
    assert store.exists() and not (operator / ".openclaw").exists()
    reprobe = next(s["command"] for s in steps if s["command"] and " check " in s["command"])
    assert f"--state-dir {shlex.quote(home.state_dir.as_posix())}" in reprobe


def test_a_one_shot_state_dir_prefix_is_carried_so_the_pasted_index_reaches_that_install(oc_home_factory, testbed,
                                                                                         tmp_path):
    """Breaker round 23: ``OPENCLAW_STATE_DIR=S clawprobe walk`` (a one-shot prefix; the operator's shell does not
    export it) printed a bare ``openclaw memory index --agent main``; pasted, it built a new ``~/.openclaw``. Real
    2026.9.6, the printed index run for real in a shell without the variable."""
    from tests.testbed import OC_LATEST, builtin_config, openclaw_env, run_process

    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="one shot")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    operator = tmp_path / "operator"
    operator.mkdir()
    env = {**openclaw_env(home, OC_LATEST), "HOME": str(operator), "PATH": "/usr/bin:/bin",
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data"), "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
           "PYTHONPATH": str(ROOT / "src")}
    walked = run_process([sys.executable, "-m", "clawprobe.cli.main", "walk", "--json"], env=env,
                         cwd=operator, timeout=120)  # OPENCLAW_STATE_DIR=S clawprobe walk
    assert walked.stdout, walked
    steps = json.loads(walked.stdout)["walks"][0]["steps"]
    index = next(s["command"] for s in steps if s["command"] and " memory index " in s["command"])
    del env["OPENCLAW_STATE_DIR"]  # the shell it is pasted into
    res = run_process(["bash", "-c", index], env=env, cwd=operator, timeout=120)
    assert res.rc == 0, res
    assert home.builtin_db().exists() and not (operator / ".openclaw").exists(), index
