"""clawprobe as the reaper of what its children leave behind (Linux: ``PR_SET_CHILD_SUBREAPER``).

A program that detaches a grandchild (``setsid`` + double fork: the middle process exits at once) takes it
out of every tree psutil can walk from the child, and out of the child's process group and session; by
default it is re-parented to init and outlives the run. With clawprobe marked as *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER, 1)``, Linux ≥ 3.4, through ctypes) the kernel re-parents it to clawprobe
instead: it becomes a direct child that clawprobe did not spawn, which :func:`orphans` finds and
:func:`reap` collects after it is killed. Elsewhere :func:`become_subreaper` is a no-op returning False and
only the tree psutil sees is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
import time
from collections.abc import Iterable

import psutil

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
CREATE_TIME_SLACK_S = 0.02  # psutil's create_time counts clock ticks (10 ms) from the boot time

#: Held around every spawn and every orphan sweep, so a sweep never takes a child that was just forked
#: for a run as an orphan before the run registered it (re-entrant: a sweep may run inside a spawn).
SPAWN_LOCK = threading.RLock()
_state: dict[str, bool] = {}


def become_subreaper() -> bool:
    """Mark this process as child subreaper, once (later calls return the first answer). True on Linux when
    ``prctl`` succeeded; False elsewhere or when it failed (the detached-grandchild kill is then best effort)."""
    if "on" in _state:
        return _state["on"]
    _state["on"] = ok = _prctl(PR_SET_CHILD_SUBREAPER, 1)
    return ok


def _prctl(option: int, arg: int) -> bool:
    """``prctl(option, arg)`` through ctypes; True when it succeeded (False off Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0) == 0)
    return False


def renew_after_fork() -> bool:
    """In a forked child of a subreaper: mark it again (``fork(2)`` does not pass the mark on), so what the
    child's own runs detach is re-parented to the child, which kills it; False where the parent was not one."""
    if not _state.pop("on", False):
        return False
    return become_subreaper()


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: int, parent: int) -> bool:
    """Ask the kernel to send this process ``sig`` when ``parent`` (the pid that forked it) dies (Linux
    ``PR_SET_PDEATHSIG``); when it is already gone, ``sig`` is raised here at once. False elsewhere or when
    ``prctl`` failed (the process then outlives its parent until its own work ends)."""
    ok = _prctl(PR_SET_PDEATHSIG, sig)
    if ok and os.getppid() != parent:  # it died between the fork and the prctl
        os.kill(os.getpid(), sig)
    return ok


def active() -> bool:
    """True once :func:`become_subreaper` succeeded in this process (then re-parented orphans are ours)."""
    return _state.get("on", False)


def orphans(since: float, exclude: Iterable[int] = ()) -> list[int]:
    """PIDs of this process's direct children that a run re-parented to it: started at or after ``since``
    (the psutil ``create_time`` of the run's child: the same clock, whose boot-time offset is in whole
    seconds), not in ``exclude`` (the children clawprobe spawned and still waits for), and not in this
    process's own session (a process this program forked itself without a new session is not a run's).
    Zombies included (they only need reaping). Source: psutil's process table."""
    skip = set(exclude)
    own_sid = os.getsid(0)
    out: list[int] = []
    with contextlib.suppress(psutil.Error):
        kids = psutil.Process().children(recursive=False)
        for p in kids:
            if p.pid in skip:
                continue
            try:
                if p.create_time() + CREATE_TIME_SLACK_S < since or os.getsid(p.pid) == own_sid:
                    continue
            except (psutil.Error, OSError):
                continue
            out.append(p.pid)
    return out


def reap(pids: Iterable[int], timeout_s: float) -> list[int]:
    """Collect the exit status of each of ``pids`` (killed orphans re-parented to this process), waiting at
    most ``timeout_s`` overall; returns the PIDs still not reaped. A PID that is not our child is skipped."""
    left = list(pids)
    end = time.monotonic() + timeout_s
    while left:
        still = []
        for pid in left:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            except OSError:
                continue
            if done == 0:
                still.append(pid)
        left = still
        if not left or time.monotonic() >= end:
            break
        time.sleep(0.01)
    return left
