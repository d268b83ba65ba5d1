"""The live dashboard's first look, taken by a forked child (``clawprobe.tui.first_look``): what crosses the pipe
comes back whole, a damaged message or a failed, silent-dying or hung child leaves the parent to discover by
itself (never a wrong first frame, never a traceback), the child prints nothing on the operator's terminal, and
on a real install the child's first look is what the parent would have measured itself.

Forking runs in a fresh interpreter (``subprocess``), as in ``clawprobe``: pytest's own threads are never forked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.tui import first_look
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.demo import scenarios
from clawprobe.tui.first_look import FirstLook, decode, encode
from clawprobe.tui.sources import LiveSource
from tests.dashboard_support import text, wait_for
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, qmd_config

ROOT = Path(__file__).resolve().parent.parent


def _look() -> FirstLook:
    receipts = {r.agent_id: r for s in scenarios()[:3] for r in s.receipts}
    return FirstLook(installed=True, reason=None, agent_ids=list(receipts), receipts=receipts,
                     lines=("openclaw --state-dir /srv/oc", None), openclaw_path="/opt/oc/bin/openclaw",
                     state_dir="/srv/oc", config_seen=(("/srv/oc/openclaw.json", True, 17, 3, 9),),
                     taken_at=datetime(2026, 12, 6, 3, 0, tzinfo=UTC), ctx_blob=b"\x80\x04K\x01.")


def test_the_wire_form_round_trips_and_a_damaged_message_is_refused():
    look = _look()
    data = encode(look)
    back = decode(data)
    assert back == look and back.receipts == look.receipts and back.context() == 1
    for cut in (0, 3, 8, 9, len(data) // 2, len(data) - len(look.ctx_blob)):  # a child that died mid-write
        assert decode(data[:cut]) is None, cut
    assert decode(b"\x00" * 8 + b"{}" + b"x") is None  # no header fields
    assert decode(data.replace(b'"installed"', b'"inst4lled"')) is None


def _run(script: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    base = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_a_failed_dying_hung_or_cancelled_child_leaves_no_process_and_prints_nothing():
    p = _run("""
        import json, os, time
        from clawprobe.tui import first_look as fl

        def noisy():
            print("LEAK to stdout", flush=True)
            os.write(2, b"LEAK to stderr")
            raise RuntimeError("boom")

        out = {}
        c = fl.fork(noisy)
        out["raised"] = c.collect() is None
        c = fl.fork(lambda: os._exit(9))
        out["died"] = c.collect() is None
        c = fl.fork(lambda: time.sleep(60))
        t = time.monotonic()
        out["hung"] = c.collect(timeout=0.5) is None
        out["hung_s"] = time.monotonic() - t
        try:
            os.waitpid(c.pid, os.WNOHANG)
            out["reaped"] = False
        except ChildProcessError:
            out["reaped"] = True

        def gone(pid):
            try:
                os.waitpid(pid, os.WNOHANG)
                return False
            except ChildProcessError:
                return True

        # the App leaves while a worker waits for the child, or before anything collected it
        import threading
        c, got = fl.fork(lambda: time.sleep(60)), []
        worker = threading.Thread(target=lambda: got.append(c.collect()))
        worker.start()
        time.sleep(0.3)
        t = time.monotonic()
        c.cancel()
        worker.join(10)
        out["cancel_while_collecting"] = [got, time.monotonic() - t < 5, gone(c.pid)]
        c = fl.fork(lambda: time.sleep(60))
        c.cancel()
        out["cancel_alone"] = [gone(c.pid), c.collect()]
        print(json.dumps(out))
    """)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["raised"] and out["died"] and out["hung"] and out["reaped"], out
    assert out["hung_s"] < 5, out
    assert out["cancel_while_collecting"] == [[None], True, True] and out["cancel_alone"] == [True, None], out
    assert "LEAK" not in p.stdout + p.stderr and "Traceback" not in p.stderr


@pytest.fixture(scope="module")
def two_agents(oc_home_factory, testbed, tmp_path_factory):
    """A 2026.7.35 QMD home with two agents and a ``${QMD_BIN}`` command (its value travels only in the pickled
    context), no index yet; returns (home, env)."""
    agents = {"list": [{"id": "main", "default": True}, {"id": "ops-2"}]}
    home = oc_home_factory(qmd_config("${QMD_BIN}", "search", agents=agents), name="first-look")
    home.write_memory_md("# Memory\n\nThe operator prefers tea.\n")
    env = home.env(path_dirs=[testbed.bin_dir], extra={
        "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
        "CLAWPROBE_DATA_DIR": str(tmp_path_factory.mktemp("first-look-data")), "QMD_BIN": str(testbed.bin_dir / "qmd")})
    return home, env


#: a child whose first look hangs in a real run (``clawprobe.core.proc.run``) of a marked sleeper
HANGING_CHILD = """
import os, sys, time
from clawprobe.core import reaper
reaper.become_subreaper()  # as the clawprobe program is
from clawprobe.core.proc import run
from clawprobe.tui import first_look as fl
from clawprobe.tui.sources import LiveSource

def hang():
    run(["/bin/sh", "-c", "sleep 1000.%s"], {"PATH": "/usr/bin:/bin"}, 600)
"""


def _sleepers(mark: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and f"sleep\0{mark}".encode() in (d / "cmdline").read_bytes():
                out.append(int(d.name))
        except OSError:
            continue
    return out


def _gone_within(mark: str, seconds: float) -> list[int]:
    end = time.monotonic() + seconds
    while (left := _sleepers(mark)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def test_ctrl_c_the_parents_death_or_leaving_early_leave_no_process_behind():
    mark = str(os.getpid())
    # the operator's Ctrl-C reaches the child while its run is in flight: the run's tree dies with it
    p = _run(HANGING_CHILD % mark + """
c = fl.fork(hang)
time.sleep(0.8)
os.kill(c.pid, 2)
print(c.collect(timeout=10) is None)
""")
    assert p.returncode == 0 and p.stdout.strip() == "True", p.stderr
    assert _gone_within(f"1000.{mark}", 5) == []
    # the terminal closes (the whole group gets SIGHUP), or the child is killed outright (OOM killer, kill -9):
    # its run's tree dies with it, or is swept and reaped by the parent
    for sig in (1, 9):
        p = _run(HANGING_CHILD % mark + f"""
c = fl.fork(hang)
time.sleep(0.8)
os.kill(c.pid, {sig})
print(c.collect(timeout=10) is None)
""")
        assert p.returncode == 0 and p.stdout.strip() == "True", p.stderr
        assert _gone_within(f"1000.{mark}", 5) == [], sig
    # the parent dies before it could clean up (SIGTERM before the App's handler, a lost SSH session)
    p = _run(HANGING_CHILD % mark + """
c = fl.fork(hang)
time.sleep(0.8)
print(c.pid, flush=True)
os._exit(0)
""")
    assert p.returncode == 0 and p.stdout.strip().isdigit(), p.stderr
    assert _gone_within(f"1000.{mark}", 5) == []
    # the dashboard leaves while its discovery waits for the child: it does not start over by itself
    p = _run(HANGING_CHILD % mark + """
import threading
LiveSource._first_look = lambda self: hang()
LiveSource._discover_now = lambda self: print("rediscovered", flush=True)
live = LiveSource()
live.prefetch()
t = threading.Thread(target=live.discover)
t.start()
time.sleep(0.8)
t0 = time.monotonic()
live.close()
t.join(10)
print(not t.is_alive(), time.monotonic() - t0 < 5, live.ctx is None)
""")
    assert p.returncode == 0 and p.stdout.split() == ["True", "True", "True"], (p.stdout, p.stderr)
    assert _gone_within(f"1000.{mark}", 5) == []


def test_a_child_stopped_by_ctrl_c_is_not_taken_over_by_a_discovery_of_the_parents_own():
    """The Ctrl-C reached the child (the terminal's whole foreground group got it, the dashboard too, which is
    leaving — its own handler may not have run yet): the discovery waiting for the child does not start
    ``openclaw --version`` itself (a hung one held the exit for its 20 s timeout); it says why nothing was
    located."""
    mark = str(os.getpid())
    p = _run(HANGING_CHILD % mark + """
import signal, threading
from clawprobe.tui.sources import INTERRUPTED
LiveSource._first_look = lambda self: hang()
LiveSource._discover_now = lambda self: print("rediscovered", flush=True)
live = LiveSource()
live.prefetch()
child = live._child
t = threading.Thread(target=live.discover)
t.start()
time.sleep(0.8)
os.kill(child.pid, signal.SIGINT)
t.join(10)
print(not t.is_alive(), child.interrupted, live.reason == INTERRUPTED, live.installed)
""")
    assert p.returncode == 0 and p.stdout.split() == ["True", "True", "True", "False"], (p.stdout, p.stderr)
    assert _gone_within(f"1000.{mark}", 5) == []


def test_the_childs_first_look_is_what_the_parent_measures_itself(two_agents, testbed):
    home, env = two_agents
    p = _run("""
        import json, threading
        from datetime import UTC, datetime
        from clawprobe.core.diagnosis import diagnose
        from clawprobe.tui.sources import LiveSource

        pre = LiveSource()
        pre.prefetch()
        forked = pre._child is not None and threading.active_count() == 1
        pre.discover()
        first = pre.first_receipts()
        lines, sd, path = pre.command_lines(), pre.state_dir(), pre.openclaw_path()  # before the context loads
        own = LiveSource()
        own.discover()
        now = datetime.now(UTC)
        mine = {a: own.fast(a, None, now, qmd_check=False) for a in own.agent_ids}
        tag = lambda r: [diagnose(r).verdict.value, diagnose(r).reason, r.config.configured_backend, r.config.qmd_command]
        print(json.dumps({
            "forked": forked, "agents": [pre.agent_ids, own.agent_ids], "installed": [pre.installed, own.installed],
            "lines": [lines, own.command_lines()], "state_dir": [sd, own.state_dir()],
            "path": [path, own.openclaw_path()], "tags": {a: [tag(first[a]), tag(mine[a])] for a in mine},
            "vars": [pre.ctx.config_vars() == own.ctx.config_vars(), sorted(pre.ctx.config_vars())],
            "version": [pre.ctx.openclaw_version, own.ctx.openclaw_version], "again": pre.first_receipts(),
        }))
    """, env=env)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["forked"] is True
    assert out["agents"] == [["main", "ops-2"], ["main", "ops-2"]] and out["installed"] == [True, True]
    for key in ("lines", "state_dir", "path", "version"):
        assert out[key][0] == out[key][1] and out[key][0], key
    assert out["version"][0] == OC_QMD
    assert out["vars"] == [True, ["QMD_BIN"]]
    for agent, (child, parent) in out["tags"].items():
        assert child == parent, agent
        assert child[2] == "qmd" and child[3] == str(testbed.bin_dir / "qmd"), agent  # ${QMD_BIN} resolved
    assert out["again"] == {}  # the first receipts are handed over once


def test_the_live_dashboard_refuses_without_a_terminal_before_it_forks(tmp_path):
    (tmp_path / "state").mkdir()
    env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "state"),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    t = time.monotonic()
    p = _run("""
        import sys
        from clawprobe.tui import first_look
        first_look.fork = lambda take: sys.exit("forked")
        from clawprobe.cli.main import main
        sys.exit(main([]))
    """, env=env)
    assert p.returncode == 3 and "the dashboard needs a terminal" in p.stderr and "forked" not in p.stderr
    assert time.monotonic() - t < 30


@pytest.mark.parametrize("arrived", [True, False], ids=["in-before-mount", "still-running-at-mount"])
async def test_the_dashboard_paints_the_childs_receipt_first_then_proves_it(two_agents, monkeypatch, arrived):
    # the child's work runs in-process here (forking pytest's threads is unsafe) through the same wire form;
    # its message is in when the App mounts (painted at once, no "locating" frame) or not yet (a worker waits)
    home, env = two_agents

    class InProcess:
        def __init__(self, take):
            self.look = first_look.decode(first_look.encode(take()))

        def arrived(self, timeout=0.0):
            return arrived

        def collect(self):
            return self.look

    monkeypatch.setattr(first_look, "fork", InProcess)
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", env["CLAWPROBE_DATA_DIR"])
    live = LiveSource(env=env, agent="ops-2")
    live.prefetch()
    taken = live._child.look.receipts["ops-2"].checked_at
    app = ClawprobeApp(live=live, watch=False, fast_refresh_s=None)
    async with app.run_test(size=(80, 24)) as pilot:
        view = lambda: app.report.current if app.report and app.report.agents else None
        if arrived:
            assert view() is not None and app.report.note is None  # painted from it at mount
        await wait_for(pilot, lambda: view() is not None, 30, "the first frame")
        assert view().receipt.checked_at == taken and view().agent_id == "ops-2"  # the child's, no fast lane run
        assert text(app, "#verdict-line").startswith("… CHECKING") and set(view().checking) == {"qmd binary",
                                                                                                  "openclaw CLI"}
        await wait_for(pilot, lambda: not view().checking, 120, "the qmd and openclaw CLI lanes")
        assert [lane for lane, *_ in app.probe_log][:1] in (["qmd"], ["slow"])  # lanes first, then fast probes
        assert {"qmd", "slow", "fast"} <= {lane for lane, *_ in app.probe_log}
        assert view().receipt.checked_at > taken and view().slow_at is not None
        assert view().receipt.qmd.resolves is True and view().receipt.backend.effective is not None
        assert "CHECKING" not in text(app, "#verdict-line")


def test_a_start_up_note_ends_with_the_first_receipt_and_other_notes_stay():
    # breaker, stop 32: "locating OpenClaw…" stayed above a settled ✓ HEALTHY when the child's look came after mount
    from clawprobe.tui.state import LOCATING, READING, DashboardReport, make_view, replace_agent

    r = scenarios()[0].receipts[0]
    now = r.checked_at
    for note, kept in ((LOCATING, None), (READING, None), ("replayed from /srv/receipts.jsonl", "replayed from "
                                                                                               "/srv/receipts.jsonl")):
        report = replace_agent(DashboardReport(source="live", evaluated_at=now, note=note), make_view(r, now), now)
        assert report.note == kept and [a.agent_id for a in report.agents] == [r.agent_id]


def test_a_config_fixed_after_discovery_is_the_one_the_cli_lane_runs_with(oc_home_factory, testbed, tmp_path):
    # breaker, stop 32: a config broken at launch and fixed 0.6 s later stayed "openclaw CLI not run: the
    # config does not load" for good, while `clawprobe check` said healthy
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="fixed-after-start")
    home.write_memory_md("# Memory\n\nThe operator prefers tea.\n")
    good = home.config_path.read_text()
    home.config_path.write_text('{ memory: { search: ')
    env = home.env(path_dirs=[testbed.bin_dir], extra={
        "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    live = LiveSource(env=env)
    live.discover()
    assert live.ctx.config.error is not None
    home.config_path.write_text(good)
    evidence = live.slow("main", datetime.now(UTC))
    assert not any("config does not load" in e for e in evidence.errors), evidence.errors
    assert live.ctx.config.error is None


async def test_an_agent_added_to_the_config_after_start_is_probed_and_a_removed_one_leaves(
        oc_home_factory, testbed, tmp_path, monkeypatch):
    # breaker, stop 32: an agent added 0.6 s after launch never appeared, even after r
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="agent-added")
    home.write_memory_md("# Memory\n\nThe operator prefers tea.\n")
    env = home.env(path_dirs=[testbed.bin_dir], extra={
        "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", env["CLAWPROBE_DATA_DIR"])
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(100, 30)) as pilot:
        ids = lambda: [a.agent_id for a in app.report.agents] if app.report else []
        await wait_for(pilot, lambda: ids() == ["main"] and not app.report.current.checking, 120, "main settled")
        home.update_config({"agents": {"list": [{"id": "main", "default": True}, {"id": "dev-2"}]}})
        app.request_fast("main", "test: the config changed")  # what the watcher does on a config event
        await wait_for(pilot, lambda: ids() == ["main", "dev-2"], 30, "the new agent")
        dev = lambda: next(a for a in app.report.agents if a.agent_id == "dev-2")
        await wait_for(pilot, lambda: not dev().checking and dev().slow_at is not None, 120, "dev-2's lanes")
        home.update_config({"agents": {"list": [{"id": "dev-2", "default": True}]}})
        app.request_fast("dev-2", "test: the config changed")
        await wait_for(pilot, lambda: ids() == ["dev-2"], 30, "main gone")
