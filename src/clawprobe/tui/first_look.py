"""The live dashboard's first look, taken by a forked child while the parent imports the toolkit.

Importing the probes (≈ 0.13 s of CPU), locating the install (a Node start for ``openclaw --version``) and the
first fast probe of every agent (config and index only, no qmd process: ≈ 0.05–0.1 s each) used to run in a
thread beside the toolkit's own start-up and shared one interpreter lock with it: on a 2-core host the first
frame came ≈ 1 s after exec. A child forked before Textual is imported runs them on the other core and hands
back what the first frame needs (measured: docs/performance.md, "stop 32").

Protocol (one anonymous pipe, child → parent, never written to disk): an 8-byte big-endian length, a JSON
header (:class:`FirstLook` without the context: agent ids, install state, the first receipts as receipt JSON,
the repair command lines, the config files' identity), then the pickled ``ProbeContext``. The context holds the
values of the ``${VAR}`` the config references (they may be credentials): it only passes from the child to the
parent that forked it, and is unpickled by the parent lazily (:meth:`FirstLook.context`) — its classes import
the probes, which the first frame does not need.

The child runs the same ``LiveSource`` code the parent would (``discover`` then ``fast``); any failure there, a
child that dies, or one slower than :data:`FIRST_LOOK_TIMEOUT_S` leaves the parent to do it itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clawprobe.core.receipt import Receipt

#: bound on waiting for the child (s): it runs ``openclaw --version`` (bounded by its own timeout) and reads files
FIRST_LOOK_TIMEOUT_S = 30.0
#: the child's exit code when the operator's Ctrl-C (SIGINT) stopped it (128 + SIGINT, as the CLI's)
INTERRUPTED = 128 + signal.SIGINT
_HEADER = struct.Struct(">Q")


@dataclass
class FirstLook:
    """What the child measured. ``receipts``: agent id → its first fast receipt (taken with ``qmd_check=False``
    at ``taken_at``, UTC). ``lines``: ``(openclaw, clawprobe)`` repair command lines
    (``clawprobe.core.locate.command_lines``). ``config_seen``: the config files' (path, exists, mtime_ns, size,
    inode) when the child read them. ``ctx_blob``: the pickled ``ProbeContext`` (see the module doc)."""

    installed: bool
    reason: str | None
    agent_ids: list[str]
    receipts: dict[str, Receipt]
    lines: tuple[str | None, str | None]
    openclaw_path: str | None
    state_dir: str | None
    config_seen: tuple
    taken_at: datetime
    ctx_blob: bytes = field(repr=False, default=b"")
    refused: str | None = None

    def context(self) -> Any:
        """The child's ``ProbeContext`` (imports ``clawprobe.core.probe``, ≈ 0.13 s the first time)."""
        return pickle.loads(self.ctx_blob)  # bytes from our own forked child, over our own pipe


@dataclass
class Child:
    """A first look in flight: the child's pid and the read end of its pipe. :meth:`collect` (one thread) and
    :meth:`cancel` (another, e.g. the App leaving) may race: the child is reaped and the pipe closed once."""

    pid: int
    fd: int
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _collecting: bool = False
    _done: bool = False
    forked_at: float = field(default_factory=time.time)  # wall clock (orphans started later are the child's)
    interrupted: bool = False  #: the child ended by a SIGINT (the terminal's Ctrl-C), known once it is reaped

    def arrived(self, timeout: float = 0.0) -> bool:
        """Whether the child's message (or its end) can be read now, waiting up to ``timeout`` s; reads nothing."""
        try:
            return bool(select.select([self.fd], [], [], timeout)[0])
        except (OSError, ValueError):
            return True  # collect() then finds out, at once

    def collect(self, timeout: float = FIRST_LOOK_TIMEOUT_S) -> FirstLook | None:
        """Wait (≤ ``timeout`` s from the fork) for the child's first look; ``None`` when it failed, died, was
        cancelled or ran out of time (it is then killed). Reaps the child and closes the pipe."""
        with self._lock:
            if self._done:
                return None
            self._collecting = True
        chunks: list[bytes] = []
        try:
            while True:
                left = timeout - (time.monotonic() - self.started)
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    self.kill()
                    return None
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError:
            return None
        finally:
            self._finish()
        return decode(b"".join(chunks))

    def kill(self) -> None:
        """Kill the child and every process it started (``clawprobe.core.proc.kill_tree``)."""
        from clawprobe.core.proc import kill_tree

        kill_tree(self.pid)

    def cancel(self) -> None:
        """The first look is no longer wanted (the dashboard is leaving): kill it; a :meth:`collect` under way
        then ends at once and reaps it, else it is reaped here."""
        self.kill()
        with self._lock:
            if self._collecting:
                return
        self._finish()

    def _finish(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        with contextlib.suppress(OSError):
            os.close(self.fd)
        status = 0
        with contextlib.suppress(OSError):
            status = os.waitpid(self.pid, 0)[1]
        self.interrupted = os.waitstatus_to_exitcode(status) in (INTERRUPTED, -signal.SIGINT)
        if status != 0:  # killed (by us, a signal, the OOM killer) or failed: what its runs left is ours now
            from clawprobe.core.proc import sweep_orphans

            sweep_orphans(self.forked_at - 1.0)  # psutil's clock is within 1 s of time.time()


def fork(take: Any) -> Child | None:
    """Fork a child that calls ``take()`` (→ :class:`FirstLook`) and sends its result back; ``None`` off Linux
    or when the fork fails. Call it before any thread is started (forking a threaded process may copy
    a held lock). The child never returns: it leaves with ``os._exit`` (no atexit handlers, no stdio flush of
    the parent's buffers) and never touches the terminal."""
    if not sys.platform.startswith("linux"):  # fork without exec is not safe with macOS's frameworks
        return None
    try:
        r, w = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid:
        os.close(w)
        return Child(pid=pid, fd=r)
    code = 1
    try:  # the child: SIGINT (the operator's Ctrl-C) and SIGTERM end it through Python's exceptions, so a run in
        os.close(r)  # flight kills its tree first (clawprobe.core.proc.run); so does its parent's death
        for sig in (signal.SIGTERM, signal.SIGHUP):  # SIGHUP: the terminal closed (the whole group gets it)
            signal.signal(sig, _terminate)
        from clawprobe.core import reaper

        reaper.die_with_parent(signal.SIGTERM, os.getppid())
        reaper.renew_after_fork()  # what its runs detach comes back to it, not to the parent
        quiet = os.open(os.devnull, os.O_RDWR)  # nothing it or its children print reaches the terminal
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        data = encode(take())
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
        code = 0
    except KeyboardInterrupt:  # the operator's Ctrl-C: it reached the whole foreground group, the parent too
        code = INTERRUPTED
    except BaseException:  # the parent does it itself; nothing may escape a forked child
        code = 1
    finally:
        os._exit(code)


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def encode(look: FirstLook) -> bytes:
    """The wire form of ``look`` (see the module doc)."""
    header = json.dumps({
        "installed": look.installed, "reason": look.reason, "agent_ids": look.agent_ids,
        "receipts": {a: r.model_dump_json() for a, r in look.receipts.items()}, "lines": list(look.lines),
        "openclaw_path": look.openclaw_path, "state_dir": look.state_dir,
        "config_seen": [list(c) for c in look.config_seen], "taken_at": look.taken_at.isoformat(),
        "refused": look.refused,
    }).encode()
    return _HEADER.pack(len(header)) + header + look.ctx_blob


def decode(data: bytes) -> FirstLook | None:
    """:func:`encode`'s inverse; ``None`` for a short or malformed message (a child that died mid-write)."""
    try:
        (n,) = _HEADER.unpack_from(data)
        head = json.loads(data[_HEADER.size:_HEADER.size + n])
        blob = data[_HEADER.size + n:]
        if not blob:
            return None
        return FirstLook(
            installed=bool(head["installed"]), reason=head["reason"], agent_ids=[str(a) for a in head["agent_ids"]],
            receipts={a: Receipt.model_validate_json(j) for a, j in head["receipts"].items()},
            lines=(head["lines"][0], head["lines"][1]), openclaw_path=head["openclaw_path"],
            state_dir=head["state_dir"], config_seen=tuple(tuple(c) for c in head["config_seen"]),
            taken_at=datetime.fromisoformat(head["taken_at"]).astimezone(UTC), ctx_blob=blob,
            refused=head["refused"])
    except (struct.error, ValueError, KeyError, TypeError, IndexError):
        return None
