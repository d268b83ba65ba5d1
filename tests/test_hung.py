"""Programs that never return: a ``qmd`` or an ``openclaw`` that sleeps forever and leaves a child (one in its
process group, one in a session of its own) sleeping too. The verdict arrives within the command's timeout
+ 1 s, no process of the tree survives (checked with psutil on the PIDs the fake program recorded), and the
dashboard keeps answering keys while its slow lane hangs.

The fake programs are tiny real executables (shell scripts). The qmd case runs ``clawprobe check`` with
clawprobe's own 10 s ``qmd --version`` timeout; the openclaw cases pass a short timeout to the CLI probes
(the defaults are 60 s) so the module stays fast — the mechanism is the same ``clawprobe.core.proc.run``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.cli.main import main as cli_main
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import CanarySpec, clear_caches, discover, fast, slow
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.help import HelpScreen
from clawprobe.tui.sources import LiveSource
from tests.hardening_helpers import HANG, alive, check_env, fake_program, recorded_pids, wait_gone
from tests.testbed import OpenClawHome, builtin_config, qmd_config

CLI_TIMEOUT_S = 3.0
VERSION_OK = 'if [ "$1" = "--version" ]; then echo "OpenClaw 2026.7.35 (fake)"; exit 0; fi\n'


@pytest.fixture
def short_cli_timeouts(monkeypatch):
    """The openclaw CLI probes with a 3 s timeout instead of 60 s (same runner, same tree kill)."""
    monkeypatch.setattr(oc, "run_status", functools.partial(oc.run_status, timeout_s=CLI_TIMEOUT_S))
    monkeypatch.setattr(oc, "run_search", functools.partial(oc.run_search, timeout_s=CLI_TIMEOUT_S))


#: the dashboard test's hung-call timeout: the keys are pressed while the calls still hang, after the first fast
#: receipt — which a loaded 2-core host paints more than 3 s after the slow lane started (seen beside a suite)
DASH_TIMEOUT_S = 10.0


@pytest.fixture
def dashboard_cli_timeouts(monkeypatch):
    """The openclaw CLI probes with :data:`DASH_TIMEOUT_S` instead of 60 s (same runner, same tree kill)."""
    monkeypatch.setattr(oc, "run_status", functools.partial(oc.run_status, timeout_s=DASH_TIMEOUT_S))
    monkeypatch.setattr(oc, "run_search", functools.partial(oc.run_search, timeout_s=DASH_TIMEOUT_S))


def test_hung_qmd_through_clawprobe_check(tmp_path, testbed, monkeypatch, capsys):
    """``clawprobe check`` (its real entry point, in this process so the probe itself is timed) with a
    ``memory.qmd.command`` that never answers ``--version``: clawprobe's own 10 s timeout decides."""
    home = OpenClawHome.create(tmp_path)
    qmd = fake_program(tmp_path / "qmd", HANG)
    home.write_config(qmd_config(str(qmd), "search"))
    home.write_memory_md()
    for k, v in check_env(home, testbed, tmp_path / "data").items():
        monkeypatch.setenv(k, v)
    clear_caches()
    t0 = time.monotonic()
    rc = cli_main(["check", "--json", "--no-openclaw"])
    took = time.monotonic() - t0
    out, err = capsys.readouterr()
    (entry,) = json.loads(out)["receipts"]
    assert (rc, entry["verdict"], entry["reason"]) == (2, "qmd_unavailable", "timeout"), entry
    assert f"timed out after {qb.VERSION_TIMEOUT_S:g} s" in entry["receipt"]["qmd"]["failure_detail"]
    assert took <= qb.VERSION_TIMEOUT_S + 1.0, f"the verdict took {took:.2f} s for a {qb.VERSION_TIMEOUT_S:g} s timeout"
    pids = recorded_pids(qmd)
    assert len(pids) == 3, pids  # the script, its group child, its setsid child
    assert alive(pids) == [], "clawprobe left part of the hung qmd tree running"


def test_hung_openclaw_slow_lane(tmp_path, short_cli_timeouts):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the (hanging) search is run
    oc_fake = fake_program(tmp_path / "openclaw", VERSION_OK + HANG)
    clear_caches()
    ctx = discover(env=home.env([], {"CLAWPROBE_OPENCLAW": str(oc_fake)}))
    assert ctx.openclaw_version == "2026.7.35"
    spec = CanarySpec(token="CLAWPROBE-CANARY-AAAAAAAAAAAAAAAA", expected_path="memory/clawprobe-canary.md")
    now = datetime.now(UTC)
    t0 = time.monotonic()
    ev = slow(ctx, "main", now, canary=spec)
    r = fast(ctx, "main", ev, now)
    d = diagnose(r)
    took = time.monotonic() - t0
    st, se = ev.status_run, ev.search_run
    assert st is not None and st.timed_out and (st.seconds or 0) <= CLI_TIMEOUT_S + 1.0, st
    assert se is not None and se.timed_out and (se.seconds or 0) <= CLI_TIMEOUT_S + 1.0, se
    assert took <= 2 * (CLI_TIMEOUT_S + 1.0), took  # two hung calls, each cut at its timeout
    # the CLI hung, not qmd: unverified · openclaw_failed, and no retrieval outcome is claimed
    assert (d.verdict.value, d.reason, r.canary.outcome) == ("unverified", "openclaw_failed", None), (d, r.canary)
    assert any(e.startswith("openclaw memory status: timed out") for e in r.probe_errors), r.probe_errors
    assert any(e.startswith("openclaw memory search timed out") for e in r.probe_errors), r.probe_errors
    assert "limits.timeoutMs" not in d.next_action.title
    pids = recorded_pids(oc_fake)
    assert len(pids) >= 7, pids  # --version, then 3 per hung call
    assert alive(pids) == [], "the hung openclaw tree survived its timeout"


async def test_dashboard_answers_keys_while_the_slow_lane_hangs(tmp_path, dashboard_cli_timeouts):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the (hanging) search is run
    oc_fake = fake_program(tmp_path / "openclaw", VERSION_OK + HANG)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(oc_fake), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    clear_caches()
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(100, 30)) as pilot:
        async def until(cond, timeout: float, what: str) -> None:
            end = time.monotonic() + timeout
            while not cond():
                assert time.monotonic() < end, f"timed out waiting for {what}"
                await pilot.pause(0.05)

        await until(lambda: app.report is not None and app.report.current is not None, 20, "the first fast receipt")
        await until(lambda: len(recorded_pids(oc_fake)) >= 4, 10, "the slow lane to start openclaw")
        hung_since = time.monotonic()
        assert "main" in app._slow_pending

        # keys while the CLI hangs: help opens and closes, panes take focus, r is accepted
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("2")
        assert app.focused is not None and app.query_one("#pane-2") in [app.focused, *app.focused.ancestors]
        await pilot.press("5")
        assert app.query_one("#pane-5") in [app.focused, *app.focused.ancestors]
        answered = time.monotonic() - hung_since
        assert "main" in app._slow_pending, "keys were answered while the slow lane was still hung"
        assert answered < DASH_TIMEOUT_S

        # then the slow lane gives up at its timeout and the verdict says why
        await until(lambda: "main" not in app._slow_pending, DASH_TIMEOUT_S + 5, "the slow lane timeout")
        assert time.monotonic() - hung_since <= DASH_TIMEOUT_S + 1.0
        await until(lambda: any("timed out" in e for e in app.report.current.receipt.probe_errors), 5, "the verdict")
        assert app.report.current.diagnosis.verdict.value == "unverified"
    assert wait_gone(recorded_pids(oc_fake), 1.0) == []


def default_sigint() -> None:
    """``preexec_fn``: SIGINT back to its default action in the child (an ignored signal is inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_check_stopped_mid_probe_leaves_no_child_running(tmp_path, sig, code):
    """``clawprobe check`` stopped by cron's ``timeout`` (SIGTERM), Ctrl-C (SIGINT) or a lost SSH session (SIGHUP)
    while it waits on a hung ``openclaw``: it exits 128 + N and the child's tree — in a session of its own —
    goes with it."""
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the (hanging) search is run
    oc_fake = fake_program(tmp_path / "openclaw", VERSION_OK + HANG)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(oc_fake), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    argv = [sys.executable, "-c", "import sys; from clawprobe.cli.main import main; sys.exit(main(sys.argv[1:]))", "check"]
    # the test sends SIGINT: the child must have its default action even when this suite runs as a background
    # job of a script (`pytest … &`), which starts with SIGINT ignored — an ignored SIGINT stays ignored in
    # the child (and Python then installs no KeyboardInterrupt handler)
    proc = subprocess.Popen(argv, env=env, cwd=Path(__file__).parent.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=default_sigint)
    end = time.monotonic() + 60
    while len(recorded_pids(oc_fake)) < 4 and time.monotonic() < end:  # --version, then a hung call (3 PIDs)
        time.sleep(0.05)
    assert len(recorded_pids(oc_fake)) >= 4, proc.communicate(timeout=70)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=15)
    assert proc.returncode == code, err
    assert b"Traceback" not in err, err
    assert wait_gone(recorded_pids(oc_fake), 3.0) == [], "the hung openclaw tree outlived clawprobe"


def test_the_dashboard_on_a_lost_terminal_exits_at_once_and_leaves_no_child(tmp_path):
    """SIGHUP (the SSH session went away) while the openclaw CLI lane waits on a hung ``openclaw``: the
    dashboard does not try to restore a terminal that is gone (it could block writing to it) — it kills the
    lanes' trees and exits 129 at once (breaker rounds 17/18)."""
    import pty

    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()
    oc_fake = fake_program(tmp_path / "openclaw", VERSION_OK + HANG)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(oc_fake), "CLAWPROBE_DATA_DIR": str(tmp_path / "data"),
                        "TERM": "xterm-256color"})
    master, slave = pty.openpty()
    argv = [sys.executable, "-c", "import sys; from clawprobe.cli.main import main; sys.exit(main())"]
    proc = subprocess.Popen(argv, env=env, cwd=Path(__file__).parent.parent, stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True)
    os.close(slave)
    drained = threading.Thread(target=lambda: _drain(master), daemon=True)
    drained.start()
    try:
        end = time.monotonic() + 60
        while len(recorded_pids(oc_fake)) < 4 and time.monotonic() < end:  # --version, then a hung call (3 PIDs)
            time.sleep(0.05)
        assert len(recorded_pids(oc_fake)) >= 4, "the openclaw CLI lane never started"
        proc.send_signal(signal.SIGHUP)
        assert proc.wait(timeout=10) == 129
        assert wait_gone(recorded_pids(oc_fake), 3.0) == [], "the hung openclaw tree outlived the dashboard"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):
        while os.read(fd, 65536):
            pass
