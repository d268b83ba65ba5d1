"""Pane 6's command line keeps what will run readable: the program and its verb stay on screen at 80
columns in every demo scenario (of a compound ``a && b`` the first command's and the last one's;
assignments' values, then paths, are cut before the tail), still one line,
still copied whole with ``y`` — also in a frame drawn before the pane's first layout."""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.widgets import Static

from clawprobe.core.view import shown_command
from clawprobe.tui import demo
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.widgets.action_pane import ActionPane, command_line, early_width
from clawprobe.tui.widgets.fit import and_segments, cells_plain, command_head, fit_command
from tests.dashboard_support import Clock, demo_panes

QMD_ENV = ("XDG_CONFIG_HOME=~/.openclaw/agents/main/qmd/xdg-config "
           "QMD_CONFIG_DIR=~/.openclaw/agents/main/qmd/xdg-config/qmd "
           "XDG_CACHE_HOME=~/.openclaw/agents/main/qmd/xdg-cache ")


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))


def test_command_head_names_the_program_and_verb():
    assert command_head(QMD_ENV + "/usr/local/bin/qmd search x") == (3, "qmd", "search")
    assert command_head("openclaw memory index --agent main") == (0, "openclaw", "memory")
    assert command_head("(test ! -e ~/q || cp -a ~/q ~/q.bak) && openclaw doctor --fix") == (0, "test", "")
    assert command_head("PATH=/usr/bin:/bin command -v qmd") == (1, "command", "")


def test_assignments_then_paths_shrink_before_the_tail():
    cmd = QMD_ENV + "/usr/local/bin/qmd cleanup --dry-run"
    assert fit_command(cmd, 250) == cmd
    assert fit_command(cmd, 90) == "XDG_CONFIG_HOME=… QMD_CONFIG_DIR=… XDG_CACHE_HOME=… /usr/local/bin/qmd cleanup --dry-run"
    assert fit_command(cmd, 40) == "… /usr/local/bin/qmd cleanup --dry-run"
    assert fit_command(cmd, 30) == "… /usr/…/bin/qmd cleanup --dr…"
    assert fit_command("OPENCLAW_STATE_DIR=/srv/oc/state openclaw memory index --agent main", 60) == \
        "OPENCLAW_STATE_DIR=… openclaw memory index --agent main"
    assert fit_command("OPENCLAW_STATE_DIR=/srv/oc/state openclaw memory index --agent main", 50) == \
        "… openclaw memory index --agent main"
    assert fit_command("openclaw config get memory.qmd.scope", 20) == "openclaw config get…"


@pytest.mark.parametrize("width", [12, 20, 35, 37, 57, 96])
@pytest.mark.parametrize("cmd", [QMD_ENV + "/usr/local/bin/qmd query 'clawprobe warm-up' -n 1",
                                 "(test ! -e ~/.openclaw/agents/main/qmd || cp -a ~/.openclaw/agents/main/qmd "
                                 "~/.openclaw/agents/main/qmd.bak) && openclaw doctor --fix"])
def test_a_fitted_command_is_one_line_within_its_width(cmd, width):
    line = command_line(cmd, width)
    assert "\n" not in line and cells_plain(line) <= width and line.startswith("$ ")


@pytest.mark.parametrize(("state", "agent", "openclaw"), [("~/.openclaw", "main", "openclaw"),
                                                          ("/srv/oc/state", "ops-bot", "/opt/oc/bin/openclaw")])
def test_a_compound_command_keeps_its_last_command_whole(state, agent, openclaw):
    """``backup && openclaw doctor --fix``: the command that changes something is never the part cut away;
    the backup before it is cut instead (its program stays)."""
    q = f"{state}/agents/{agent}/qmd"
    cmd = f"(test ! -e {q} || cp -a {q} {q}.bak) && {openclaw} doctor --fix"
    assert and_segments(cmd) == [f"(test ! -e {q} || cp -a {q} {q}.bak)", f"{openclaw} doctor --fix"]
    assert and_segments("printf 'a && b' && qmd update") == ["printf 'a && b'", "qmd update"]
    for width in (34, 40, 57, 70):
        line = fit_command(cmd, width)
        assert cells_plain(line) <= width and line.startswith("(test ") and "……" not in line, line
        assert "openclaw doctor -" in line.split(" && ")[-1], line
    assert fit_command(cmd, 60).endswith(" && " + openclaw + " doctor --fix")


def test_the_early_width_is_never_wider_than_the_laid_out_pane():
    assert [early_width(w) for w in (80, 120, 200)] == [36, 56, 96]


def shown_line(app: ClawprobeApp) -> str | None:
    body = app.query_one("#pane-6-body", Static)
    lines = [x for x in Content.from_markup(body._clawprobe_text).plain.splitlines()  # type: ignore[attr-defined]
             if x.startswith("$ ")]
    return lines[0] if lines else None


async def check_every_scenario(app: ClawprobeApp, pilot, width_of) -> list[tuple]:
    bad = []
    async for _ in demo_panes(app, pilot):
        command, _ = shown_command(app.report.current.diagnosis.next_action)
        if command:
            keep = []
            for seg in dict.fromkeys([and_segments(command)[0], and_segments(command)[-1]]):  # first and last
                _, program, verb = command_head(seg)
                keep += [program] + ([verb] if verb else [])
            line = shown_line(app)
            words = (line or "").split(" ")
            width = width_of(app)
            if (line is None or cells_plain(line) > width
                    or not all(any(w.lstrip("(") == k or w.endswith("/" + k) for w in words) for k in keep)):
                bad.append((app.report.scenario, line, keep, width))
            await pilot.press("6", "y")
            if app.clipboard != command:
                bad.append((app.report.scenario, "y copied", app.clipboard))
            await pilot.press("escape")
    return bad


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_scenarios_command_keeps_its_program_and_verb_visible(size):
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=size) as pilot:
        bad = await check_every_scenario(app, pilot, lambda a: a.query_one("#pane-6-body").content_size.width)
    assert bad == [], "\n".join(map(str, bad))


async def test_a_frame_before_the_panes_layout_never_wraps_the_command(monkeypatch):
    """A busy host draws frames before pane 6 is refitted to its laid-out width (on_resize): the text set at
    mount must fit already."""
    monkeypatch.setattr(ActionPane, "on_resize", lambda self, event: None)
    app = ClawprobeApp(demo_index=demo.find("rw22-model-download"), clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        line = shown_line(app)
        assert line is not None and cells_plain(line) <= app.query_one("#pane-6-body").content_size.width, line
        assert "qmd query" in line


@pytest.mark.parametrize("command,program,verb", [
    ("clawprobe --state-dir /tmp/wt-r24s-scratch/homes/three-kkbcydcl/state canary plant --agent research",
     "clawprobe", "canary"),
    ("clawprobe --config /srv/agents/prod-eu-west-1/openclaw.json canary plant --agent ops-bot", "clawprobe", "canary"),
    ("clawprobe --state-dir '/srv/my oc/state' canary plant --agent main", "clawprobe", "canary"),
    ("openclaw --profile ops memory index --agent main", "openclaw", "memory"),
])
def test_global_options_before_the_verb_give_way_before_the_verb(command, program, verb):
    """A live install's repair names its state dir before the sub-command (``clawprobe --state-dir <dir> canary
    plant …``): pane 6 showed ``clawprobe --state-dir /tmp/…/three-…`` at 80 columns, the verb cut away (breaker
    round 24). The verb is found past global options, and their values give way (``…``) before it does."""
    assert command_head(command)[1:] == (program, verb)
    for width in (38, 30):
        shown = fit_command(command, width)
        assert cells_plain(shown) <= width and shown.startswith(program + " "), (width, shown)
        assert f" {verb} " in shown + " " or shown.endswith(f" {verb}"), (width, shown)
    assert fit_command(command, 200) == command
