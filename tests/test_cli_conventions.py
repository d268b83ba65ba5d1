"""Command-line conventions: ``-V``, ``--color auto|always|never`` (NO_COLOR wins), shell completion for
bash/zsh/fish, and ``check --watch N`` as a plain terminal loop."""

from __future__ import annotations

import argparse

import pytest

from clawprobe.cli import check
from clawprobe.cli.main import apply_color, completion_script, main


def test_dash_capital_v_prints_the_version(capsys):
    assert main(["-V"]) == 0
    assert capsys.readouterr().out.startswith("clawprobe ")


def test_color_never_sets_no_color_always_forces_unless_no_color_is_set():
    env: dict[str, str] = {}
    apply_color("never", env)
    assert env == {"NO_COLOR": "1"}
    env = {}
    apply_color("always", env)
    assert env == {"FORCE_COLOR": "1"}
    env = {"NO_COLOR": "1"}
    apply_color("always", env)
    assert env == {"NO_COLOR": "1"}  # NO_COLOR still wins
    env = {}
    apply_color("auto", env)
    assert env == {}


def test_no_color_flag_and_bad_color_value(capsys):
    from clawprobe.cli.main import _parser

    assert _parser().parse_args(["--no-color", "check"]).color == "never"
    assert main(["--color", "sometimes", "check"]) == 3


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_the_commands_and_options(shell, capsys):
    assert main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert "check" in out and "demo" in out and "watch" in out and "color" in out
    assert completion_script(shell) == out


def test_check_watch_repeats_until_interrupted(monkeypatch, capsys):
    rounds = []
    monkeypatch.setattr(check, "run_once", lambda args: rounds.append(1) or 2)
    naps = []

    def sleep(s):
        naps.append(s)
        if len(naps) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # main turns it into exit 130
        check.run(argparse.Namespace(watch=5.0), sleep=sleep)
    assert rounds == [1, 1] and naps == [5.0, 5.0]
    out = capsys.readouterr().out
    assert out.count("── clawprobe check · ") == 2 and out.count("── exit 2") == 2


@pytest.mark.parametrize("fmt", [{"json": True}, {"format": "json"}, {"format": "prometheus"}])
def test_check_watch_refuses_machine_output_on_stdout(monkeypatch, capsys, fmt):
    """``check --watch 5 --json`` headed each round with a text line, so stdout was no JSON document (README: --json
    is always one valid document) and ran forever: a usage error at once; --textfile keeps its loop."""
    monkeypatch.setattr(check, "run_once", lambda args: pytest.fail("probed"))
    assert check.run(argparse.Namespace(watch=5.0, **fmt)) == 3
    out, err = capsys.readouterr()
    assert out == "" and "--watch prints rounds for a terminal" in err
    rounds: list[int] = []
    monkeypatch.setattr(check, "run_once", lambda args: rounds.append(1) or 0)

    def sleep(_s):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check.run(argparse.Namespace(watch=5.0, textfile="/x/clawprobe.prom"), sleep=sleep)
    assert rounds == [1]


@pytest.mark.parametrize("every", [-1.0, 0.0, float("nan")])
def test_check_watch_rejects_a_non_positive_interval(capsys, every):
    assert check.run(argparse.Namespace(watch=every)) == 3  # 0 was one silent run, not the loop asked for
    assert "--watch needs a positive number of seconds" in capsys.readouterr().err


def test_ctrl_c_before_a_command_runs_exits_130_not_a_traceback(monkeypatch):
    """A SIGINT while ``main`` still sets up (here: while it applies the colour choice, before the command's
    module is imported) is exit 130 like one inside a command — it escaped as a KeyboardInterrupt traceback."""
    import clawprobe.cli.main as cli_main

    def interrupted(_choice):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "apply_color", interrupted)
    try:
        rc: int | str = main(["demo", "--list"])
    except KeyboardInterrupt:
        rc = "KeyboardInterrupt escaped main()"
    assert rc == cli_main.EXIT_INTERRUPTED == 130
