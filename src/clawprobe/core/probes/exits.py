"""What an exit status says, with no output to read: a native crash, a kill, or a plain failure (pure).

Sources: POSIX ``128 + N`` shell statuses and Python's negative ``returncode`` for a child killed by
signal N; Windows NTSTATUS codes as unsigned or signed 32-bit exit codes (``0xC0000005`` access
violation = 3221225477 = -1073741819, seen in oc#118724 from ``node.exe``).
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Literal

#: Windows NTSTATUS crash codes → name.
NTSTATUS: dict[int, str] = {
    0xC0000005: "STATUS_ACCESS_VIOLATION",
    0xC000001D: "STATUS_ILLEGAL_INSTRUCTION",
    0xC00000FD: "STATUS_STACK_OVERFLOW",
    0xC0000409: "STATUS_STACK_BUFFER_OVERRUN",
    0xC0000374: "STATUS_HEAP_CORRUPTION",
    0xC0000135: "STATUS_DLL_NOT_FOUND",
    0xC0000139: "STATUS_ENTRYPOINT_NOT_FOUND",
}
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGFPE}
KILL_SIGNALS = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}

ExitKind = Literal["ok", "exit", "timed_out", "native_crash", "killed", "signal"]


@dataclass(frozen=True)
class ExitFact:
    """``kind`` of the exit and a one-line ``text`` naming the code (``exit 3221225477 (0xC0000005
    STATUS_ACCESS_VIOLATION: a native crash)``)."""

    kind: ExitKind
    text: str


def _sig_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def describe_exit(rc: int | None, timed_out: bool = False) -> ExitFact:
    """Classify one exit status (pure). ``rc < 0`` is Python's "killed by signal -rc"; 129–159 the shell's
    ``128 + N``; NTSTATUS codes (unsigned or signed) are native crashes on Windows."""
    if timed_out:
        return ExitFact("timed_out", "killed at clawprobe's deadline (timed out)")
    if rc in (0, None):
        return ExitFact("ok", "exit 0")
    code = rc & 0xFFFFFFFF if rc < -255 else rc
    if code in NTSTATUS:
        return ExitFact("native_crash", f"exit {rc} (0x{code:08X} {NTSTATUS[code]}: a native crash, no output)")
    if rc < 0 or 129 <= rc <= 159:
        n = -rc if rc < 0 else rc - 128
        name = _sig_name(n)
        how = f"killed by {name}" if rc < 0 else f"exit {rc} (128 + {n}: {name})"
        if n in CRASH_SIGNALS:
            return ExitFact("native_crash", f"{how}: a native crash")
        if n in KILL_SIGNALS:
            return ExitFact("killed", f"{how}: killed from outside (OOM killer, a timeout, an operator)")
        return ExitFact("signal", how)
    return ExitFact("exit", f"exit {rc}")


__all__ = ["CRASH_SIGNALS", "KILL_SIGNALS", "NTSTATUS", "ExitFact", "describe_exit"]
