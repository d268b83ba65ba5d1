"""``--color`` / ``--no-color`` after the sub-command that paints (``clawprobe demo --color always``: a usage
error before, only the global position worked), and shell completion of ``demo --scenario`` (the numbers
``demo --list`` prints and the names), run through a real bash."""

from __future__ import annotations

import subprocess

import pytest

from clawprobe.cli.main import _parser, completion_script, main
from clawprobe.tui import demo


@pytest.fixture()
def env(monkeypatch):
    for name in ("NO_COLOR", "FORCE_COLOR"):  # set first, so whatever main() sets is undone after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    import os

    return os.environ


@pytest.mark.parametrize(("argv", "color"), [
    (["demo", "--color", "always", "--list"], "always"), (["demo", "--no-color", "--list"], "never"),
    (["demo", "--color=never", "--list"], "never"), (["--color", "always", "demo", "--list"], "always"),
    (["--no-color", "demo", "--list"], "never"), (["demo", "--list"], "auto"),
])
def test_color_is_accepted_after_demo_and_the_global_one_still_stands(argv, color, env, capsys):
    assert _parser().parse_args(argv).color == color
    assert main(argv) == 0
    assert "two-agents" in capsys.readouterr().out
    assert (env.get("FORCE_COLOR"), env.get("NO_COLOR")) == {"always": ("1", None), "never": (None, "1"),
                                                             "auto": (None, None)}[color]


def test_a_bad_color_after_demo_is_a_usage_error(capsys):
    assert main(["demo", "--color", "sometimes", "--list"]) == 3


def _bash_complete(words: list[str]) -> list[str]:
    script = completion_script("bash")
    line = " ".join(words)
    probe = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
             f"COMP_POINT={len(line)}; _shtab_clawprobe; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.mark.parametrize(("typed", "expected"), [("rw4", ["rw43-index-bloat"]), ("two", ["two-agents"]),
                                                 ("1", ["1", "10", "11", "12", "13", "14", "15", "16", "17", "18"])])
def test_bash_completes_demo_scenario_numbers_and_names(typed, expected):
    assert sorted(_bash_complete(["clawprobe", "demo", "--scenario", typed])) == sorted(expected)
    assert len(_bash_complete(["clawprobe", "demo", "--scenario", "''"])) == 2 * len(demo.scenarios())


def test_zsh_and_fish_list_the_scenarios_for_demo_scenario():
    names = [s.name for s in demo.scenarios()]
    zsh = next(ln for ln in completion_script("zsh").splitlines() if '"--scenario[' in ln)
    assert all(n in zsh for n in names) and " 18 " in zsh
    fish = next(ln for ln in completion_script("fish").splitlines() if "-l scenario" in ln)
    assert "__fish_seen_subcommand_from demo" in fish and " -x -a '1 2 " in fish and all(n in fish for n in names)
