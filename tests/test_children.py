"""Children are bounded while they run: output capped per stream as it is read (the tree killed when the cap is
passed, and the verdict says so), one shared deadline for several candidates, and the whole tree — detached
grandchildren (``setsid`` + double fork) included — dead and reaped when the run ends.

The hostile programs are tiny real executables (shell scripts: ``yes``, ``head -c``, ``setsid``); the
clawprobe runs are the real command line in a child process, so its peak RSS is its own (``wait4``).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from clawprobe.core import reaper
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.proc import MAX_OUTPUT_BYTES, run
from clawprobe.core.walk_run import MAX_LINE_CHARS, OUTPUT_TAIL_LINES, run_streaming
from tests.hardening_helpers import (
    HANG,
    assert_clean_stderr,
    fake_program,
    recorded_pids,
    run_clawprobe,
    tree_environ,
    wait_gone,
)
from tests.testbed import OpenClawHome, builtin_config, qmd_config

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
MAX_RSS = 300 * 1024 * 1024
VERSION_OK = 'if [ "$1" = "--version" ]; then echo "OpenClaw 2026.7.35 (fake)"; exit 0; fi\n'
#: a detached sleeper: the middle shell calls setsid() and exits at once, so the sleeper is nobody's
#: descendant any more (not in the child's group, not in its session)
SUBREAPER_RUN = """
import json, sys
from clawprobe.core import reaper
assert reaper.become_subreaper()
from clawprobe.core.proc import run
from clawprobe.core.walk_run import run_streaming
kind, prog, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
env = {"PATH": "/usr/bin:/bin"}
if kind == "run":
    r = run([prog], env, timeout)
    print(json.dumps({"rc": r.rc, "stdout": r.stdout, "timed_out": r.timed_out, "killed": r.killed}))
else:
    o = run_streaming([prog], env, timeout_s=timeout)
    print(json.dumps({"status": o.status, "tail": o.output_tail}))
"""
DETACH = '(setsid sh -c "sleep 600 & echo \\$! >> $PIDS")\n'


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.proc.run
# ---------------------------------------------------------------------------------------------------

def test_a_flood_on_stdout_is_cut_at_the_cap_and_the_tree_killed():
    r = run(["/usr/bin/yes"], ENV, 60)
    assert r.output_capped == "stdout" and r.killed and not r.timed_out and not r.ok
    assert len(r.stdout.encode()) == MAX_OUTPUT_BYTES
    assert r.reason == "output cap reached: stdout passed 4 MiB (process tree killed)"


def test_a_flood_on_stderr_is_named_as_stderr():
    r = run(["/bin/sh", "-c", "echo fine; yes >&2"], ENV, 60)
    assert r.output_capped == "stderr" and r.stdout == "fine\n" and "stderr passed" in r.reason


def test_output_under_the_cap_is_kept_whole():
    r = run(["/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x"], ENV, 60)
    assert r.ok and r.output_capped is None and r.stdout == "x" * 3_000_000


def test_stdin_is_fed_and_the_answer_read():
    r = run(["/bin/cat"], ENV, 30, stdin="hello\n" * 50_000)
    assert r.ok and r.stdout == "hello\n" * 50_000


def _as_clawprobe(kind: str, prog: Path, timeout_s: float) -> dict:
    """Run ``prog`` through :func:`run` (``kind`` ``run``) or the walkthrough's :func:`run_streaming` in a
    fresh Python that is the child subreaper — as the ``clawprobe`` program is (its front door sets it; this
    test process is not made one)."""
    p = subprocess.run([sys.executable, "-c", SUBREAPER_RUN, kind, str(prog), str(timeout_s)], capture_output=True,
                       text=True, timeout=120, cwd=Path(__file__).parent.parent)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_a_detached_grandchild_of_a_child_that_exits_dies_with_the_run(tmp_path):
    prog = fake_program(tmp_path / "detacher", DETACH + "echo done\n")
    r = _as_clawprobe("run", prog, 30)
    assert r["rc"] == 0 and r["stdout"] == "done\n", r
    pids = recorded_pids(prog)
    assert len(pids) == 2
    assert wait_gone(pids, 3.0) == [], "the setsid + double-forked sleeper outlived the run"


#: a detached shell that stays and waits for its own child (breaker, stop 32: the stray shell was killed, the
#: sleeper under it lived on)
DETACH_WAITING = ('setsid sh -c "echo \\$\\$ >> $PIDS; sleep 600 & echo \\$! >> $PIDS; wait" '
                  "</dev/null >/dev/null 2>&1 &\nsleep 0.3\n")


def test_a_detached_shell_and_the_child_it_waits_for_die_with_the_run(tmp_path):
    prog = fake_program(tmp_path / "detach-waiting", DETACH_WAITING + "echo done\n")
    r = _as_clawprobe("run", prog, 30)
    assert r["rc"] == 0 and r["stdout"] == "done\n", r
    pids = recorded_pids(prog)
    assert len(pids) == 3, pids  # the script, the detached shell, its sleeper
    assert wait_gone(pids, 3.0) == [], "the detached shell's own child outlived the run"


def test_a_detached_grandchild_of_a_hung_child_dies_at_the_timeout(tmp_path):
    prog = fake_program(tmp_path / "hanger", DETACH + HANG)
    r = _as_clawprobe("run", prog, 1.0)
    assert r["timed_out"] and r["killed"], r
    pids = recorded_pids(prog)
    assert len(pids) == 4
    assert wait_gone(pids, 3.0) == [], "a process of the hung tree outlived the run"


def test_the_library_alone_does_not_make_its_host_a_subreaper():
    assert reaper.active() is False  # this test process imported clawprobe.core and ran commands above


def test_a_shared_deadline_stops_a_run_before_its_own_timeout():
    r = run(["/bin/sleep", "30"], ENV, 30, deadline=time.monotonic() + 0.5)
    assert r.timed_out and r.killed and r.reason.startswith("timed out after 0.")


def test_three_hanging_candidates_share_one_deadline(tmp_path):
    """``memory.qmd.command`` is not on the gateway PATH; three dirs each hold a ``qmd`` that hangs on
    ``--version``. The search for a working candidate has one budget (the version timeout), not one each."""
    dirs = []
    for i in range(3):
        d = tmp_path / f"bin{i}"
        d.mkdir()
        fake_program(d / "qmd", HANG)
        dirs.append(str(d))
    env = {**ENV, "PATH": ":".join([*dirs, "/usr/bin", "/bin"])}
    t0 = time.monotonic()
    ev = qb.gather("qmd-missing", dirs, "process", None, env, None, version_timeout_s=2.0)
    took = time.monotonic() - t0
    assert ev.candidate is None and ev.resolved_path is None
    assert took < 2.0 + 1.0, f"{took:.1f} s: each candidate got its own timeout"
    for d in dirs:
        assert wait_gone(recorded_pids(Path(d) / "qmd"), 3.0) == []


# ---------------------------------------------------------------------------------------------------
# through `clawprobe check`
# ---------------------------------------------------------------------------------------------------

def _check(home: OpenClawHome, tmp_path: Path, extra: dict, args: list[str]) -> tuple[int, dict, str, int]:
    env = home.env(["/usr/bin", "/bin"], {"CLAWPROBE_DATA_DIR": str(tmp_path / "data"), **extra})
    peak: list[int] = []
    rc, out, err = run_clawprobe(["check", "--json", *args], env, timeout=120, peak=peak)
    assert_clean_stderr(err)
    return rc, json.loads(out), err, peak[0]


def test_a_qmd_that_floods_gives_a_verdict_naming_the_cap_in_bounded_memory(tmp_path):
    home = OpenClawHome.create(tmp_path)
    qmd = fake_program(tmp_path / "qmd", "exec yes\n")
    home.write_config(qmd_config(str(qmd), "search"))
    home.write_memory_md()
    rc, doc, _, peak = _check(home, tmp_path, {}, ["--no-openclaw"])
    (entry,) = doc["receipts"]
    r = entry["receipt"]
    assert entry["diagnosis"]["verdict"] == "qmd_unavailable", entry["diagnosis"]
    assert r["qmd"]["resolves"] is False and "output cap reached: stdout passed 4 MiB" in r["qmd"]["failure_detail"]
    assert peak < MAX_RSS, f"peak RSS {peak / 2**20:.0f} MiB"
    assert wait_gone(recorded_pids(qmd), 3.0) == []


def test_an_openclaw_that_prints_a_gigabyte_gives_a_verdict_naming_the_cap_in_bounded_memory(tmp_path):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the CLI is run (it would create a missing one)
    oc = fake_program(tmp_path / "openclaw", VERSION_OK + "head -c 1000000000 /dev/zero | tr '\\0' x\nexit 0\n")
    rc, doc, _, peak = _check(home, tmp_path, {"CLAWPROBE_OPENCLAW": str(oc)}, [])
    (entry,) = doc["receipts"]
    assert entry["diagnosis"]["verdict"] != "healthy", entry["diagnosis"]
    assert "output cap reached: stdout passed 4 MiB" in json.dumps(entry), entry
    assert "no status JSON" not in json.dumps(entry["diagnosis"])
    assert peak < MAX_RSS, f"peak RSS {peak / 2**20:.0f} MiB"


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.walk_run (the repair command a walkthrough runs)
# ---------------------------------------------------------------------------------------------------

def test_a_repair_command_that_floods_one_endless_line_is_read_in_bounded_pieces(tmp_path):
    lines: list[int] = []
    out = run_streaming(["/bin/sh", "-c", "head -c 50000000 /dev/zero | tr '\\0' x"], ENV, timeout_s=60,
                        on_line=lambda ln: lines.append(len(ln)))
    assert out.status == "ok" and sum(lines) == 50_000_000
    assert max(lines) <= MAX_LINE_CHARS and len(out.output_tail) <= OUTPUT_TAIL_LINES


def test_a_repair_command_leaves_no_detached_grandchild(tmp_path):
    prog = fake_program(tmp_path / "repair", DETACH + "echo done\n")
    out = _as_clawprobe("walk", prog, 30)
    assert out["status"] == "ok" and out["tail"] == ["done"], out
    assert wait_gone(recorded_pids(prog), 3.0) == []


# ---------------------------------------------------------------------------------------------------
# the suite's own process-table helper (test_secrets read a zombie's environ and raised)
# ---------------------------------------------------------------------------------------------------

def test_tree_environ_skips_a_zombie_descendant_and_reads_the_rest(tmp_path):
    """A process whose child exited unreaped (its parent became ``sleep``, which never waits): psutil lists
    the zombie among the children and raises ZombieProcess for its environ; the helper skips it."""
    marker = tmp_path / "zombie.pid"
    parent = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os._exit(0)\n"  # never waited for: a zombie
              f"open({str(marker)!r}, 'w').write(str(pid))\nos.execv('/bin/sleep', ['sleep', '60'])\n")
    proc = subprocess.Popen([sys.executable, "-c", parent], env={**ENV, "MARK": "root"})
    try:
        end = time.monotonic() + 30
        zombie = None
        while time.monotonic() < end:
            if marker.exists() and marker.read_text().strip():
                with contextlib.suppress(psutil.Error):
                    z = psutil.Process(int(marker.read_text()))
                    if z.status() == psutil.STATUS_ZOMBIE:
                        zombie = z
                        break
            time.sleep(0.02)
        assert zombie is not None, "the zombie child appeared"
        with pytest.raises(psutil.ZombieProcess):  # what the old loop in test_secrets ran into
            zombie.environ()
        # the parent may still be inside its execve of sleep: between the switch to the new image and the set-up
        # of its stack, /proc/<pid>/environ reads empty (seen once on a loaded host: KeyError 'MARK')
        while time.monotonic() < end and "MARK" not in psutil.Process(proc.pid).environ():
            time.sleep(0.02)
        envs = tree_environ(proc.pid)
        assert envs[proc.pid]["MARK"] == "root" and zombie.pid not in envs
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_the_peak_rss_measured_is_clawprobes_own_not_the_test_processs(tmp_path):
    """The bound above is clawprobe's: a child exec'd straight from a pytest process inherits its high-water RSS
    (Linux keeps ``maxrss`` across ``execve``), so a worker that once held 337 MiB read every clawprobe run as
    337 MiB (fv50). Here this process first touches 320 MiB; ``clawprobe --version`` still measures its own."""
    ballast = bytearray(320 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    peak: list[int] = []
    rc, out, err = run_clawprobe(["--version"], ENV, timeout=60, peak=peak)
    del ballast
    assert (rc, err) == (0, "") and out.startswith("clawprobe ")
    assert 5 * 2**20 < peak[0] < 150 * 2**20, f"peak RSS {peak[0] / 2**20:.0f} MiB"
