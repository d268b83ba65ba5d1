"""How the dashboard ends, in a real pty: an internal error is never the exit code of "healthy" (3 and one line
saying so), a screen it could not draw on (stderr, where the toolkit paints, not a terminal) is refused before
anything runs, and SIGHUP or SIGTERM leave no demo scratch dir (its walk records) behind (breaker round 19)."""

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

import pytest

ROOT = Path(__file__).parent.parent
CRASHING = ("import sys; from clawprobe.tui.widgets.canary_pane import CanaryPane\n"
            "def body(self, *a, **k): raise RuntimeError('injected by the test')\n"
            "CanaryPane.body = body\n"
            "from clawprobe.cli.main import main; sys.exit(main(['demo', '--scenario', '2']))")


class Pty:
    """A child on a fresh pty (stdin, stdout; stderr too unless given), its output collected."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: int | None = None) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=slave, stdout=slave,
                                     stderr=slave if stderr is None else stderr, start_new_session=True)
        os.close(slave)
        self.out = bytearray()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self.master, 65536):
                self.out += chunk

    def wait_for(self, text: bytes, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while text not in self.out and time.monotonic() < end and self.proc.poll() is None:
            time.sleep(0.05)
        assert text in self.out, f"{text!r} never shown: {bytes(self.out[-400:])!r}"

    def end(self, timeout: float = 20) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


@pytest.fixture
def env(tmp_path):
    (tmp_path / "tmp").mkdir()
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TMPDIR": str(tmp_path / "tmp"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "TEXTUAL_ANIMATIONS": "none"}


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
