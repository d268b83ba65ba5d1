"""The one command runner every probe uses: explicit environment, deadline, bounded output, tree kill.

Nothing here inherits the caller's environment: ``env`` is passed whole to the child. A missing or
non-executable program is a result (rc 127 / 126 with ``reason``), never an exception.

Bounds, all enforced while the child runs:

* **time** — ``timeout_s`` (and an optional shared ``deadline`` on the monotonic clock, so several commands
  share one budget); when it passes the tree is killed and the partial output kept (``timed_out``);
* **output** — each stream is read incrementally (never ``communicate()``'s unbounded buffers) and at most
  :data:`MAX_OUTPUT_BYTES` are kept; one byte more kills the tree (``output_capped`` names the stream), so a
  program that floods (``yes``) costs megabytes, not gigabytes;
* **the tree** — the child runs in a session of its own; on Linux the clawprobe program is the *child
  subreaper* (:mod:`clawprobe.core.reaper`, set at the front door), so a grandchild that detaches
  (``setsid`` + double fork) is re-parented to clawprobe instead of init and is killed and reaped when its
  run ends. Every run ends with its tree gone.

The same happens when the wait is interrupted (Ctrl-C, ``SystemExit`` from a SIGTERM handler) and, at
interpreter exit, to every child still running (:func:`kill_running`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from io import IOBase
from typing import TYPE_CHECKING

import psutil
from pydantic import BaseModel, ConfigDict

from clawprobe.core import reaper

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

MAX_OUTPUT_BYTES = 4 * 1024 * 1024  # per stream; one byte more kills the tree (a probe never needs more)
MAX_OUTPUT_CHARS = MAX_OUTPUT_BYTES  # the older name (kept for callers)
KILL_GRACE_S = 2.0
DRAIN_AFTER_EXIT_S = 1.0  # after the child exited and its tree was killed, how long its pipes may take to close
_CHUNK = 64 * 1024

_running: set[int] = set()  # PIDs of the children run() is waiting for (any thread)
_running_lock = reaper.SPAWN_LOCK  # one lock: no orphan sweep runs between a fork and its registration
_stopping = threading.Event()  # set by stop(): run() starts nothing more


class ProcResult(BaseModel):
    """What one command did.

    ``rc``: the exit code; negative ``-N`` when killed by signal N (``signal`` then holds N); 127 when the
    program was not found, 126 when it could not be executed (``reason`` says why, e.g.
    ``"not found: /opt/qmd"``). ``seconds`` is wall time. ``timed_out`` is true when ``timeout_s`` (or the
    shared deadline) passed; ``output_capped`` names the stream (``"stdout"``/``"stderr"``) that passed
    :data:`MAX_OUTPUT_BYTES`; ``killed`` when clawprobe killed the process tree (either reason; ``reason``
    says which, e.g. ``"output cap reached: stdout passed 4 MiB (process tree killed)"``). Output is decoded
    UTF-8 (invalid bytes replaced), at most :data:`MAX_OUTPUT_BYTES` bytes per stream.
    """

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    rc: int
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    killed: bool = False
    output_capped: str | None = None
    signal: int | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """True when the command ran to completion with exit code 0 (not timed out, output not capped)."""
        return self.rc == 0 and not self.timed_out and self.output_capped is None


def output_cap_reason(stream: str, cap: int = MAX_OUTPUT_BYTES) -> str:
    """The operator's words for a run stopped at the output cap (pure): ``output cap reached: stdout passed
    4 MiB (process tree killed)``."""
    size = f"{cap / (1024 * 1024):g} MiB" if cap >= 1024 * 1024 else f"{cap} bytes"
    return f"output cap reached: {stream} passed {size} (process tree killed)"


def start_time(pid: int) -> float:
    """psutil's start time of ``pid`` — the clock :func:`clawprobe.core.reaper.orphans` compares with (it is
    derived from the boot time in whole seconds, so it is not ``time.time()``); now − 1 s when it is gone."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return time.time() - 1.0


def kill_tree(pid: int, sig: int = signal.SIGKILL, *, since: float | None = None) -> int:
    """Kill ``pid``, every descendant psutil can see, the process group led by ``pid`` and — with ``since``
    (the psutil ``create_time`` of the run's child) — the detached orphans of that run that were re-parented
    to clawprobe (:func:`clawprobe.core.reaper.orphans`), which are then reaped.

    Returns how many processes were signalled. With SIGKILL it waits (at most :data:`KILL_GRACE_S`) until
    they are gone. Never raises for processes that are already gone.
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
    if since is not None:
        n += sweep_orphans(since, sig, exclude={pid})
    return n


def sweep_orphans(since: float, sig: int = signal.SIGKILL, *, exclude: set[int] | frozenset[int] = frozenset()) -> int:
    """Kill the orphans re-parented to clawprobe that started at or after ``since`` (psutil's clock, see
    :func:`start_time`) — each with every descendant psutil can see (a detached ``sh`` and the ``sleep`` under
    it) — and reap them and, once re-parented in turn, those descendants. Only with clawprobe the child
    subreaper (:func:`clawprobe.core.reaper.active`); returns how many processes were signalled."""
    if not reaper.active():
        return 0
    n = 0
    for _ in range(2):  # the strays, then what they had started (re-parented to us when they died)
        with _running_lock:
            strays = reaper.orphans(since, exclude=_running | set(exclude))
            for o in strays:
                tree: list[psutil.Process] = []
                with contextlib.suppress(psutil.Error):
                    tree = psutil.Process(o).children(recursive=True)
                for p in tree:
                    with contextlib.suppress(psutil.Error):
                        p.send_signal(sig)
                        n += 1
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(o, sig)
                    n += 1
        if not strays:
            break
        reaper.reap(strays, KILL_GRACE_S)
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


class _Pump:
    """Reads a child's stdout/stderr incrementally (and feeds its stdin), keeping at most ``cap`` bytes each."""

    def __init__(self, proc: subprocess.Popen, stdin: bytes | None, cap: int) -> None:
        self.cap = cap
        self.sel = selectors.DefaultSelector()
        self.bufs: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self.capped: str | None = None
        for name in ("stdout", "stderr"):
            f = getattr(proc, name)
            os.set_blocking(f.fileno(), False)
            self.sel.register(f, selectors.EVENT_READ, name)
        self.stdin = memoryview(stdin) if stdin is not None else None
        if proc.stdin is not None:
            if self.stdin:
                os.set_blocking(proc.stdin.fileno(), False)
                self.sel.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
            else:
                proc.stdin.close()

    @property
    def open(self) -> bool:
        return bool(self.sel.get_map())

    def step(self, wait_s: float) -> None:
        """Move what is ready within ``wait_s`` seconds; sets ``capped`` when a stream passes the cap."""
        for key, _ in self.sel.select(max(wait_s, 0.0)):
            f, name = key.fileobj, key.data
            if name == "stdin":
                assert self.stdin is not None
                try:
                    n = os.write(f.fileno(), self.stdin[:_CHUNK])  # type: ignore[union-attr]
                except (BrokenPipeError, BlockingIOError, OSError) as e:
                    n = 0 if isinstance(e, BlockingIOError) else len(self.stdin)
                self.stdin = self.stdin[n:]
                if not self.stdin:
                    self._close(f)
                continue
            try:
                chunk = os.read(f.fileno(), _CHUNK)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self._close(f)
                continue
            buf = self.bufs[name]
            room = self.cap - len(buf)
            buf += chunk[:max(room, 0)]
            if len(chunk) > room and self.capped is None:
                self.capped = name

    def _close(self, f: FileDescriptorLike) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.sel.unregister(f)
        if isinstance(f, IOBase):  # the selector holds the Popen pipes (file objects), never bare fds
            with contextlib.suppress(OSError):
                f.close()

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            self._close(key.fileobj)
        self.sel.close()

    def text(self, name: str) -> str:
        return bytes(self.bufs[name]).decode("utf-8", "replace")


def run(argv: Sequence[str | os.PathLike[str]], env: Mapping[str, str], timeout_s: float,
        cwd: str | os.PathLike[str] | None = None, stdin: str | None = None, *,
        deadline: float | None = None, max_output: int = MAX_OUTPUT_BYTES) -> ProcResult:
    """Run ``argv`` with exactly ``env`` (nothing inherited), in a new session, for at most ``timeout_s``
    seconds — and never past ``deadline`` (a ``time.monotonic()`` value shared by several runs) — keeping
    at most ``max_output`` bytes of each stream.

    ``cwd`` defaults to ``/`` (a probe never depends on clawprobe's own directory). Raises nothing for
    the program: missing → rc 127, not executable / bad cwd → rc 126, time up → ``timed_out``, output past the
    cap → ``output_capped``; in both the tree (detached grandchildren included) is killed and ``reason`` says
    why. When the child exits, what it left running is killed too. Source of every fact: the child's exit
    status and its stdout/stderr.
    """
    args = [os.fspath(a) for a in argv]
    t0 = time.monotonic()
    if _stopping.is_set():  # the process is going down (SIGTERM): another thread must not start a new child
        return ProcResult(argv=args, rc=-signal.SIGTERM, signal=signal.SIGTERM, reason="not started: clawprobe is stopping")
    end = t0 + max(timeout_s, 0.0)
    if deadline is not None:
        end = min(end, deadline)
    try:
        with _running_lock:
            proc = subprocess.Popen(
                args, env=dict(env), cwd=os.fspath(cwd) if cwd is not None else "/",
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            )
            _running.add(proc.pid)
        started = start_time(proc.pid)
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
    pump = _Pump(proc, stdin.encode("utf-8") if stdin is not None else None, max_output)
    try:
        exited_at: float | None = None
        while pump.open or proc.poll() is None:
            now = time.monotonic()
            if pump.capped is not None:
                break
            if proc.poll() is not None:
                if exited_at is None:  # exited; what it left holding the pipes dies with it
                    exited_at = now
                    kill_tree(proc.pid, since=started)
                elif now - exited_at > DRAIN_AFTER_EXIT_S:
                    break
            elif now >= end:
                timed_out = True
                break
            pump.step(min(end - now, 0.1) if proc.poll() is None else 0.05)
            if not pump.open and proc.poll() is None:  # pipes closed, child still running: just wait
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=max(min(end - time.monotonic(), 0.1), 0.0))
        if timed_out or pump.capped is not None:
            killed = True
        kill_tree(proc.pid, since=started)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_GRACE_S)
    except BaseException:  # Ctrl-C / SystemExit while waiting: the tree must not outlive us
        kill_tree(proc.pid, since=started)
        raise
    finally:
        pump.close()
        with _running_lock:
            _running.discard(proc.pid)
    rc = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    reason = None
    if pump.capped is not None:
        reason = output_cap_reason(pump.capped, max_output)
    elif timed_out:
        budget = timeout_s if end >= t0 + timeout_s else round(max(end - t0, 0.0), 1)
        reason = f"timed out after {budget:g} s (process tree killed)"
    return ProcResult(
        argv=args, rc=rc, stdout=pump.text("stdout"), stderr=pump.text("stderr"),
        seconds=round(time.monotonic() - t0, 4), timed_out=timed_out, killed=killed,
        output_capped=pump.capped, signal=-rc if rc < 0 else None, reason=reason,
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
