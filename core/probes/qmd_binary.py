"""Can the gateway start the configured qmd, and does qmd's store really open?

Gather (:func:`gather`): resolve ``memory.qmd.command`` as OpenClaw spawns it — absolute path as is, a
relative path against the agent workspace (the qmd child's cwd), a bare name through the PATH of the
*gateway's* environment (plus, on 2026.7.x, OpenClaw's own Node bin dir appended to the child PATH:
``qmd-manager`` ``buildQmdProcessPath``); read the launcher's ``#!`` line; run ``qmd --version``; then
run ``qmd ls`` with the agent's XDG env — a store command that opens the index (loading the native
SQLite binding) without writing it: verified by hashing the files before and after (tests). ``qmd status``
is never run: it creates index files. The store command is skipped when the index does not exist yet.

Interpret (:func:`interpret`): the receipt's :class:`~core.receipt.QmdFacts` with a failure tag —
``command_missing`` (absolute path gone), ``not_on_path``, ``not_executable``, ``service_path`` (the
launcher's interpreter is not on the gateway PATH: ``env: 'node': No such file``, exit 127),
``native_binding`` (``--version`` works, the store command crashes: SIGSEGV or a binding error),
``timeout``, ``version_failed``.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from core.locate import QmdHome
from core.proc import ProcResult, run
from core.receipt import QmdFacts

VERSION_TIMEOUT_S = 10.0
STORE_TIMEOUT_S = 20.0
STORE_BUSY_TIMEOUT_MS = "2000"  # QMD_SQLITE_BUSY_TIMEOUT for the store check: a locked index answers SQLITE_BUSY
_LOCKED = re.compile(r"SQLITE_BUSY|database is locked", re.I)
STORE_ARGS = ("ls",)
_VERSION = re.compile(r"qmd\s+(\d+\.\d+\.\d+\S*)")
_INTERP_MISSING = re.compile(r"env: [‘'`]?([^’'`:\s]+)[’'`]?: No such file or directory|"
                             r"/usr/bin/env: [‘'`]?([^’'`:\s]+)[’'`]?: No such file")
_BINDING = re.compile(r"Could not locate the bindings file|NODE_MODULE_VERSION|was compiled against a different "
                      r"Node\.js version|ERR_DLOPEN_FAILED|invalid ELF header|better_sqlite3\.node|"
                      r"Cannot find module .*better-sqlite3|sqlite-vec", re.I)
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGFPE}


class QmdBinaryEvidence(BaseModel):
    """Raw evidence about the qmd command (GATHER output; replayable).

    ``how``: ``absolute``, ``relative`` (to the workspace) or ``path`` (PATH lookup). ``path_dirs``: the
    PATH used for the lookup and the child, with ``path_source`` (``process``, ``systemd``, ``launchd``,
    ``shell``). ``interpreter``: the launcher's ``#!`` program (``env node`` → ``node``);
    ``interpreter_path``: where it resolves on that PATH (``None``: not found). ``version``/``store``: the
    two command results; ``store_skipped``: why the store command did not run.
    """

    model_config = ConfigDict(extra="forbid")
    command: str
    how: str
    path_dirs: list[str] = Field(default_factory=list)
    path_source: str | None = None
    resolved_path: str | None = None
    exists: bool = False
    executable: bool = False
    interpreter: str | None = None
    interpreter_path: str | None = None
    version: ProcResult | None = None
    store: ProcResult | None = None
    store_skipped: str | None = None
    index_path: str | None = None


def which(name: str, path_dirs: Sequence[str]) -> str | None:
    """The first ``<dir>/<name>`` that is an executable file, searching ``path_dirs`` in order."""
    for d in path_dirs:
        if not d:
            continue
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def child_path(path_dirs: Sequence[str], node_dir: str | None) -> list[str]:
    """The PATH OpenClaw 2026.7.x gives qmd: the gateway PATH with its own Node bin dir appended if missing."""
    dirs = [d for d in path_dirs if d]
    if node_dir and node_dir not in dirs:
        dirs.append(node_dir)
    return dirs


def shebang(path: str) -> str | None:
    """The interpreter named by a script's ``#!`` line (``#!/usr/bin/env node`` → ``node``), else ``None``."""
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    parts = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not parts:
        return None
    if os.path.basename(parts[0]) == "env":
        rest = [p for p in parts[1:] if not p.startswith("-")]
        return rest[0] if rest else None
    return parts[0]


def resolve(command: str, path_dirs: Sequence[str], workspace: str | None) -> tuple[str, str | None]:
    """(how, resolved path or None) for ``command`` as OpenClaw's spawn resolves it."""
    if os.path.isabs(command):
        return "absolute", command
    if os.sep in command or (os.altsep and os.altsep in command):
        base = workspace or os.getcwd()
        return "relative", os.path.normpath(os.path.join(base, command))
    return "path", which(command, path_dirs)


def qmd_env(agent_home: QmdHome, path_dirs: Sequence[str], home: str | None, extra: Mapping[str, str] | None = None
            ) -> dict[str, str]:
    """The environment OpenClaw gives an agent's qmd child: PATH, HOME, the agent's XDG dirs, NO_COLOR."""
    env = {"PATH": os.pathsep.join(path_dirs), "XDG_CONFIG_HOME": agent_home.xdg_config,
           "QMD_CONFIG_DIR": agent_home.config_dir, "XDG_CACHE_HOME": agent_home.xdg_cache, "NO_COLOR": "1",
           "LANG": "C.UTF-8"}
    if home:
        env["HOME"] = home
    if extra:
        env.update(extra)
    return env


def gather(command: str, path_dirs: Sequence[str], path_source: str | None, workspace: str | None,
           env: Mapping[str, str], index_path: str | None, *, run_store: bool = True,
           version_timeout_s: float = VERSION_TIMEOUT_S, store_timeout_s: float = STORE_TIMEOUT_S) -> QmdBinaryEvidence:
    """Resolve and exercise the qmd command (GATHER). ``env`` is the agent's qmd child env (:func:`qmd_env`);
    its PATH is also where the launcher's interpreter is looked up. Runs at most two short commands; the store
    command gets ``QMD_SQLITE_BUSY_TIMEOUT`` = 2 s (unless set), so a lock held by a writer comes back as
    SQLITE_BUSY instead of being waited out until the timeout."""
    how, resolved = resolve(command, path_dirs, workspace)
    ev = QmdBinaryEvidence(command=command, how=how, path_dirs=list(path_dirs), path_source=path_source,
                           resolved_path=resolved, index_path=index_path)
    if resolved is None:
        return ev
    ev.exists = os.path.isfile(resolved)
    ev.executable = ev.exists and os.access(resolved, os.X_OK)
    if not ev.executable:
        return ev
    ev.interpreter = shebang(resolved)
    child_dirs = env.get("PATH", "").split(os.pathsep)
    if ev.interpreter:
        ev.interpreter_path = ev.interpreter if os.path.isabs(ev.interpreter) and os.path.exists(ev.interpreter) \
            else which(ev.interpreter, child_dirs)
    cwd = workspace if workspace and os.path.isdir(workspace) else None
    ev.version = run([resolved, "--version"], env, version_timeout_s, cwd=cwd)
    if not run_store:
        ev.store_skipped = "store check not requested"
    elif not ev.version.ok:
        ev.store_skipped = "qmd --version failed"
    elif not index_path or not os.path.isfile(index_path):
        ev.store_skipped = f"the agent's QMD index does not exist yet ({index_path}); a store command would create it"
    else:
        store_env = {**env, "QMD_SQLITE_BUSY_TIMEOUT": env.get("QMD_SQLITE_BUSY_TIMEOUT") or STORE_BUSY_TIMEOUT_MS}
        ev.store = run([resolved, *STORE_ARGS], store_env, store_timeout_s, cwd=cwd)
    return ev


def _crashed(p: ProcResult) -> str | None:
    """A crash description when the process died by a fatal signal (directly or via a shell: 128+N)."""
    sig = p.signal if p.signal is not None else (p.rc - 128 if 128 < p.rc < 160 else None)
    if sig is not None and sig in {int(s) for s in _CRASH_SIGNALS}:
        return f"killed by {signal.Signals(sig).name} (exit {p.rc})"
    if _BINDING.search(p.stderr or ""):
        return "native binding error: " + _first_line(p.stderr, _BINDING)
    return None


def _first_line(text: str, pattern: re.Pattern) -> str:
    for line in (text or "").splitlines():
        if pattern.search(line):
            return line.strip()[:300]
    return (text or "").strip().splitlines()[-1][:300] if (text or "").strip() else ""


def interpret(ev: QmdBinaryEvidence) -> QmdFacts:
    """The receipt's ``qmd`` facts from the evidence (pure)."""
    f = QmdFacts(command=ev.command, resolved_path=ev.resolved_path)
    where = f"PATH from {ev.path_source}" if ev.path_source else "PATH"
    if ev.resolved_path is None:
        f.resolves, f.failure = False, "not_on_path"
        f.failure_detail = f"{ev.command!r} is not on the gateway's {where}: {os.pathsep.join(ev.path_dirs) or '(empty)'}"
        return f
    if not ev.exists:
        f.resolves = False
        f.failure = "command_missing" if ev.how in ("absolute", "relative") else "not_on_path"
        f.failure_detail = f"{ev.resolved_path} does not exist" + (" (relative to the workspace)" if ev.how == "relative" else "")
        return f
    if not ev.executable:
        f.resolves, f.failure = False, "not_executable"
        f.failure_detail = f"{ev.resolved_path} is not executable"
        return f
    v = ev.version
    if v is None:
        return f
    m = _VERSION.search(v.stdout or "")
    f.version = m[1] if m else None
    if v.timed_out:
        f.resolves, f.failure, f.failure_detail = False, "timeout", f"`qmd --version` {v.reason}"
        return f
    if not v.ok:
        missing = _INTERP_MISSING.search(v.stderr or "")
        if v.rc == 127 and (missing or (ev.interpreter and ev.interpreter_path is None)):
            interp = (missing and (missing[1] or missing[2])) or ev.interpreter
            f.resolves, f.failure = False, "service_path"
            f.failure_detail = (f"{ev.resolved_path} starts with #!…{interp}, and {interp!r} is not on the gateway's "
                                f"{where} ({os.pathsep.join(ev.path_dirs) or '(empty)'}): exit 127")
            return f
        crash = _crashed(v)
        f.resolves = False
        f.failure = "native_binding" if crash and "binding" in crash else ("not_executable" if v.rc == 126 else "version_failed")
        f.failure_detail = "`qmd --version` failed: " + (crash or v.reason or _first_line(v.stderr, re.compile(".")) or f"exit {v.rc}")
        return f
    f.resolves = True
    s = ev.store
    if s is None:
        f.failure_detail = ev.store_skipped
        return f
    f.store_exit_code = s.rc
    if s.timed_out:
        f.store_ok, f.failure, f.failure_detail = False, "timeout", f"`qmd {' '.join(STORE_ARGS)}` {s.reason}"
        return f
    crash = _crashed(s)
    if crash:
        f.store_ok, f.failure = False, "native_binding"
        f.failure_detail = f"`qmd --version` works but `qmd {' '.join(STORE_ARGS)}` on the agent's index crashed: {crash}"
        return f
    if s.rc != 0 and _LOCKED.search(s.stderr or ""):
        f.failure_detail = (f"`qmd {' '.join(STORE_ARGS)}` found the agent's QMD index locked by another process "
                            "(SQLITE_BUSY): the store check is inconclusive, qmd itself runs")
        return f
    if s.rc != 0:
        f.store_ok, f.failure = False, "store_failed"
        f.failure_detail = f"`qmd {' '.join(STORE_ARGS)}` exit {s.rc}: " + _first_line(s.stderr, re.compile("."))
        return f
    f.store_ok = True
    return f
