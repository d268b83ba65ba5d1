"""The one command runner every probe uses: explicit environment, timeout, own process group, tree kill.

Nothing here inherits the caller's environment: ``env`` is passed whole to the child. A missing or
non-executable program is a result (rc 127 / 126 with ``reason``), never an exception. On timeout the
child's whole tree (psutil children + its process group) is killed and the partial output is kept.
The same happens when the wait is interrupted (Ctrl-C, ``SystemExit`` from a SIGTERM handler) and, at
interpreter exit, to every child still running (:func:`kill_running`): a child runs in a session of its
own, so nothing else would stop it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

import psutil
from pydantic import BaseModel, ConfigDict

MAX_OUTPUT_CHARS = 4 * 1024 * 1024  # per stream; longer output is cut (a probe never needs more)
KILL_GRACE_S = 2.0

_running: set[int] = set()  # PIDs of the children run() is waiting for (any thread)
_running_lock = threading.Lock()
_stopping = threading.Event()  # set by stop(): run() starts nothing more


class ProcResult(BaseModel):
    """What one command did.

    ``rc``: the exit code; negative ``-N`` when killed by signal N (``signal`` then holds N); 127 when the
    program was not found, 126 when it could not be executed (``reason`` says why, e.g.
    ``"not found: /opt/qmd"``). ``seconds`` is wall time. ``timed_out`` is true when ``timeout_s`` passed;
    ``killed`` when clawprobe killed the process tree (timeout). Output is decoded UTF-8 (invalid bytes
    replaced) and cut at :data:`MAX_OUTPUT_CHARS` per stream.
    """

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    rc: int
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    killed: bool = False
    signal: int | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when the command ran to completion with exit code 0."""
        return self.rc == 0 and not self.timed_out


def kill_tree(pid: int, sig: int = signal.SIGKILL) -> int:
    """Kill ``pid``, every descendant psutil can see and the process group led by ``pid``.

    Returns how many processes were signalled. With SIGKILL it waits (at most :data:`KILL_GRACE_S`) until
    they are gone — children of the killed process are reaped by init, not by us. Never raises for
    processes that are already gone.
    """
    procs: list[psutil.Process] = []
    with contextlib.suppress(psutil.Error):
        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
    n = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(sig)
            n += 1
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, sig)
    if sig == signal.SIGKILL and procs:  # wait until the kernel really stopped them (bounded)
        _wait_dead([p for p in procs if p.pid != pid], KILL_GRACE_S)  # pid: its parent reaps it
    return n


def _wait_dead(procs: list[psutil.Process], timeout_s: float) -> None:
    """Wait until every process is gone or a zombie (dead, only its exit status left for whoever reaps it),
    at most ``timeout_s``. Orphans are reaped by init, which may take its time (or never, in a container
    whose PID 1 does not reap): ``psutil.wait_procs`` would wait for that reap, not for the death."""
    end = time.monotonic() + timeout_s
    left = list(procs)
    while left:
        still = []
        for p in left:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:  # is_running: same process, not a reused PID
                    still.append(p)
            except psutil.Error:  # gone (or no longer ours to see)
                continue
        left = still
        if not left or time.monotonic() >= end:
            return
        time.sleep(0.01)


def _cut(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n[clawprobe: output cut]\n"


def run(argv: Sequence[str | os.PathLike[str]], env: Mapping[str, str], timeout_s: float,
        cwd: str | os.PathLike[str] | None = None, stdin: str | None = None) -> ProcResult:
    """Run ``argv`` with exactly ``env`` (nothing inherited), in a new session, for at most ``timeout_s``.

    ``cwd`` defaults to ``/`` (a probe never depends on clawprobe's own directory). Raises nothing for
    the program: missing → rc 127, not executable / bad cwd → rc 126, timeout → ``timed_out`` with the
    tree killed. Source of every fact: the child's exit status and its stdout/stderr.
    """
    args = [os.fspath(a) for a in argv]
    t0 = time.monotonic()
    if _stopping.is_set():  # the process is going down (SIGTERM): another thread must not start a new child
        return ProcResult(argv=args, rc=-signal.SIGTERM, signal=signal.SIGTERM, reason="not started: clawprobe is stopping")
    try:
        proc = subprocess.Popen(
            args, env=dict(env), cwd=os.fspath(cwd) if cwd is not None else "/", text=True,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            encoding="utf-8", errors="replace",
        )
    except FileNotFoundError as e:
        missing = e.filename if e.filename and os.fspath(e.filename) != args[0] else args[0]
        if cwd is not None and not os.path.isdir(os.fspath(cwd)):
            return ProcResult(argv=args, rc=126, reason=f"working directory missing: {os.fspath(cwd)}",
                              seconds=time.monotonic() - t0)
        return ProcResult(argv=args, rc=127, reason=f"not found: {missing}", seconds=time.monotonic() - t0)
    except PermissionError as e:
        return ProcResult(argv=args, rc=126, reason=f"permission denied: {e.filename or args[0]}",
                          seconds=time.monotonic() - t0)
    except OSError as e:  # ENOEXEC (no shebang), ENOTDIR, E2BIG …
        return ProcResult(argv=args, rc=126, reason=f"cannot execute {args[0]}: {e.strerror or e}",
                          seconds=time.monotonic() - t0)
    timed_out = killed = False
    with _running_lock:
        _running.add(proc.pid)
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
    except BaseException as e:  # timeout, or Ctrl-C / SystemExit while waiting: the tree must not outlive us
        if not isinstance(e, subprocess.TimeoutExpired):
            kill_tree(proc.pid)
            raise
        timed_out = killed = True
        kill_tree(proc.pid)
        try:
            out, err = proc.communicate(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:  # a grandchild outside the group still holds the pipes
            kill_tree(proc.pid)
            out, err = "", ""
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=KILL_GRACE_S)
    finally:
        with _running_lock:
            _running.discard(proc.pid)
    rc = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return ProcResult(
        argv=args, rc=rc, stdout=_cut(out), stderr=_cut(err), seconds=round(time.monotonic() - t0, 4),
        timed_out=timed_out, killed=killed, signal=-rc if rc < 0 else None,
        reason=f"timed out after {timeout_s:g} s (process tree killed)" if timed_out else None,
    )


def stop() -> int:
    """The process is stopping (SIGTERM, Ctrl-C): :func:`run` starts no more children in any thread, and every
    running child's tree is killed (:func:`kill_running`); returns how many trees. Not undone."""
    _stopping.set()
    return kill_running()


@atexit.register
def kill_running() -> int:
    """Kill the tree of every child :func:`run` is still waiting for (another thread's, at exit); returns
    how many trees. Registered with ``atexit``, so a dashboard quit or a SIGTERM turned into ``SystemExit``
    leaves no ``openclaw``/``qmd`` running in its own session."""
    with _running_lock:
        pids = list(_running)
    for pid in pids:
        kill_tree(pid)
    return len(pids)
