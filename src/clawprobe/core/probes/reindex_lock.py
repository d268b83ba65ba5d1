"""The builtin engine's reindex-lock sidecar and who holds it (read-only, Linux ``/proc``).

OpenClaw 2026.9.6 keeps ``<store>.reindex-lock.sqlite`` next to the agent's store
(``agents/<id>/agent/openclaw-agent.sqlite.reindex-lock.sqlite``, seen on the real build) and takes a SQLite
write transaction on it for a full reindex; another reindex is refused while it is held. The holder is
found two ways, neither opening the file: processes whose ``/proc/<pid>/fd/*`` links point at the sidecar
(or its ``-wal``/``-shm``/``-journal``), and POSIX/OFD locks on it in ``/proc/locks``
(:mod:`clawprobe.core.probes.file_locks`). ``held`` is true only for a *write* lock — an open descriptor
alone is a connection, not a held lock. The command is read from ``/proc/<pid>/cmdline`` (no environment);
``gateway`` marks a holder whose command line is an OpenClaw gateway.
"""

from __future__ import annotations

import os
import re
import time

from clawprobe.core.probes.file_locks import FileLock, locks_on, proc_locks
from clawprobe.core.receipt import ReindexLock, SidecarHolder

SUFFIX = ".reindex-lock.sqlite"
SCAN_BUDGET_S = 0.5
MAX_HOLDERS = 5
_GATEWAY = re.compile(r"\bgateway\b|openclaw-gateway", re.I)


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
    except OSError:
        return "?"
    args = re.sub(r"[\s;()]+", " ", raw.replace(b"\0", b" ").decode("utf-8", "replace")).strip() or "?"
    return args if len(args) <= 80 else args[:79] + "…"


def _fd_holders(wanted: set[str], budget_s: float) -> list[int]:
    """PIDs whose ``/proc/<pid>/fd`` links point at one of ``wanted`` (bounded by ``budget_s``)."""
    me, end = os.getpid(), time.monotonic() + budget_s
    out: list[int] = []
    try:
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if time.monotonic() > end or len(out) >= MAX_HOLDERS:
            break
        if pid == me:
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") in wanted:
                    out.append(pid)
                    break
            except OSError:
                continue
    return out


def read_reindex_lock(store: str, *, budget_s: float = SCAN_BUDGET_S,
                      locks: list[FileLock] | None = None) -> ReindexLock:
    """GATHER: the sidecar of ``store`` (the builtin store's path) and its holders. Never opens the sidecar;
    never raises."""
    path = store + SUFFIX
    out = ReindexLock(path=path)
    try:
        st = os.lstat(path)
    except OSError:
        return out
    out.exists, out.bytes = True, st.st_size
    real = os.path.realpath(path)
    all_locks = proc_locks() if locks is None else locks
    if all_locks is None:
        out.visible = False
    on = [lk for p in (real, real + "-wal", real + "-shm", real + "-journal") for lk in locks_on(p, all_locks)]
    writers = {lk.pid for lk in on if lk.write and lk.pid > 0}
    pids = list(dict.fromkeys([*sorted({lk.pid for lk in on if lk.pid > 0}),
                               *_fd_holders({real, real + "-wal", real + "-shm", real + "-journal"}, budget_s)]))
    for pid in pids[:MAX_HOLDERS]:
        cmd = _command(pid)
        out.holders.append(SidecarHolder(pid=pid, command=cmd, write_lock=pid in writers,
                                      gateway=bool(_GATEWAY.search(cmd))))
    out.held = bool(writers)
    return out
