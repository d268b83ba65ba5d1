"""How the dashboard ends, in a real pty: an internal error is never the exit code of "healthy" (3 and one line
saying so), a screen it could not draw on (stderr, where the toolkit paints, not a terminal) is refused before
anything runs, SIGHUP or SIGTERM leave no demo scratch dir (its walk records) behind (breaker round 19), and a
Ctrl-C (SIGINT) while the App is still starting exits 130, never 0, with no child left (the first look's)."""

from __future__ import annotations

import contextlib
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from clawprobe.cli.main import EXIT_INTERRUPTED
from tests.hardening_helpers import HANG, fake_program, recorded_pids, wait_gone

ROOT = Path(__file__).parent.parent
ALT_SCREEN = b"\x1b[?1049h"  #: the toolkit's driver took the screen: the App is starting, no frame drawn yet
CRASHING = ("import sys; from clawprobe.tui.widgets.canary_pane import CanaryPane\n"
            "def body(self, *a, **k): raise RuntimeError('injected by the test')\n"
            "CanaryPane.body = body\n"
            "from clawprobe.cli.main import main; sys.exit(main(['demo', '--scenario', '2']))")


class Pty:
    """A child on a fresh pty (stdin, stdout; stderr too unless given), its output collected."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: int | None = None) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=slave, stdout=slave,
                                     stderr=slave if stderr is None else stderr, start_new_session=True,
                                     preexec_fn=_default_sigint)
        os.close(slave)
        self.out = bytearray()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self.master, 65536):
                self.out += chunk

    def wait_for(self, text: bytes, timeout: float = 30, step: float = 0.05) -> None:
        end = time.monotonic() + timeout
        while text not in self.out and time.monotonic() < end and self.proc.poll() is None:
            time.sleep(step)
        assert text in self.out, f"{text!r} never shown: {bytes(self.out[-400:])!r}"

    def end(self, timeout: float = 20) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def _default_sigint() -> None:
    """``preexec_fn``: SIGINT back to its default action (a suite run as a background job starts with it
    ignored, and an ignored signal stays ignored in the child)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def env(tmp_path):
    (tmp_path / "tmp").mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TMPDIR": str(tmp_path / "tmp"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "TEXTUAL_ANIMATIONS": "none",
            "PYTHONPATH": str(ROOT / "src")}  # the code of this checkout, not an installed one


def test_a_dashboard_that_crashes_exits_3_not_0(env):
    run = Pty([sys.executable, "-c", CRASHING], env)
    assert run.end(timeout=60) == 3
    assert b"injected by the test" in run.out and b"the dashboard stopped on an internal error" in run.out


def test_stderr_that_is_not_a_terminal_is_refused_before_anything_runs(env, tmp_path):
    with open(tmp_path / "err.log", "wb") as err:
        run = Pty([sys.executable, "-m", "clawprobe", "demo"], env, stderr=err.fileno())
        assert run.end(timeout=60) == 3
    assert "the dashboard needs a terminal" in (tmp_path / "err.log").read_text()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
def test_a_lost_or_stopped_demo_leaves_no_scratch_dir(env, tmp_path, sig):
    run = Pty([sys.executable, "-m", "clawprobe", "demo", "--scenario", "15"], env)
    run.wait_for(b"rule ")
    os.write(run.master, b"\r")  # Enter: the walkthrough, which records the walk in the demo's scratch dir
    end = time.monotonic() + 30
    while not list((tmp_path / "tmp").rglob("*.json")) and time.monotonic() < end:
        time.sleep(0.05)
    assert list((tmp_path / "tmp").rglob("*.json")), "the walkthrough wrote no walk record"
    run.proc.send_signal(sig)
    assert run.end() == 128 + sig
    assert list((tmp_path / "tmp").iterdir()) == []


def _interrupt(run: Pty, to_group: bool) -> None:
    """SIGINT as a Ctrl-C typed on the terminal sends it (the whole foreground group: the first look's child
    too), or to the dashboard's process alone."""
    if to_group:
        os.killpg(run.proc.pid, signal.SIGINT)
    else:
        run.proc.send_signal(signal.SIGINT)


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "kill-int"])
@pytest.mark.parametrize("when", ["starting", "shown"])
def test_sigint_to_the_demo_exits_130_not_0(env, to_group, when):
    """While the App starts (its screen taken, the first frame not drawn: it used to end in a toolkit traceback)
    and once it is shown (it used to exit 0, "healthy")."""
    run = Pty([sys.executable, "-m", "clawprobe", "demo"], env)
    if when == "starting":
        run.wait_for(ALT_SCREEN, step=0.002)
        assert b"rule " not in run.out  # the first frame (the banner's "rule N/13") is not drawn yet
    else:
        run.wait_for(b"rule ")
    _interrupt(run, to_group)
    assert run.end() == EXIT_INTERRUPTED == 130
    assert b"Traceback" not in run.out and run.out.rfind(b"\x1b[?1049l") > run.out.rfind(ALT_SCREEN)  # restored


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "kill-int"])
@pytest.mark.parametrize("when", ["starting", "locating"])
def test_sigint_while_the_live_dashboard_locates_exits_130_and_leaves_no_child(env, tmp_path, to_group, when):
    """The first look's forked child is still locating the install (its ``openclaw --version`` hangs) when the
    SIGINT comes — while the App starts, or once it shows "locating OpenClaw…" and waits for the child: exit
    130 at once — not after the version call's 20 s timeout (a child stopped by the same Ctrl-C is not taken
    over by a discovery of the dashboard's own) — and neither the child nor anything it started is left."""
    oc_fake = fake_program(tmp_path / "openclaw", HANG)  # --version never answers
    (tmp_path / "state").mkdir()
    env = {**env, "OPENCLAW_STATE_DIR": str(tmp_path / "state"), "CLAWPROBE_OPENCLAW": str(oc_fake),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"}
    run = Pty([sys.executable, "-m", "clawprobe"], env)
    run.wait_for(ALT_SCREEN if when == "starting" else b"locating OpenClaw", step=0.002)
    end = time.monotonic() + 30
    while len(recorded_pids(oc_fake)) < 3 and time.monotonic() < end:  # the script, its two sleeps
        time.sleep(0.01)
    assert len(recorded_pids(oc_fake)) >= 3, bytes(run.out[-400:])
    children = [c.pid for c in psutil.Process(run.proc.pid).children(recursive=True)]
    assert children, "no first-look child in flight"
    t0 = time.monotonic()
    _interrupt(run, to_group)
    assert run.end(timeout=15) == EXIT_INTERRUPTED
    assert time.monotonic() - t0 < 10
    assert wait_gone([*children, *recorded_pids(oc_fake)], 3.0) == []
    assert b"Traceback" not in run.out
