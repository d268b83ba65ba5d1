"""Can the gateway start the configured qmd, and does qmd's store really open?

Gather (:func:`gather`): resolve ``memory.qmd.command`` as OpenClaw spawns it — absolute path as is, a
relative path against the agent workspace (the qmd child's cwd), a bare name through the PATH of the
*gateway's* environment (on 2026.7.x the PATH as the gateway rewrites it at start-up —
:mod:`.openclaw_path`: its own Node's bin dir, ``/usr/bin``, ``/bin`` first, the usual user bin dirs last — then
``qmd-manager`` ``buildQmdProcessPath``); read the launcher's ``#!`` line; run ``qmd --version``; then
run ``qmd ls`` on a *scratch* index in a private temporary XDG home (:mod:`.qmd_scratch`, removed
afterwards) — a store command that opens an index and loads the native SQLite binding. Never on the agent's
index: after a crashed writer that child would checkpoint the ``-wal`` into ``index.sqlite`` and delete the
sidecars, and it would turn a 0-byte ``index.sqlite`` into a full index (seen with qmd 2.8.3). Facts about
the agent's index come from clawprobe's read-only reader; a writer that blocks readers is seen in
``/proc/locks``. ``qmd status`` is never run. The store command is skipped when the index does not exist yet
(nothing of the agent's to check it against).

A program that answers ``--version`` without identifying as qmd (``qmd 2.8.3 (facd35e)``, qmd's own
``--version`` line) is not qmd — ``/bin/true`` exits 0 with nothing, ``/bin/echo`` echoes — and its store
command is never run (it could be any program, run in the workspace). When the configured command is not a
usable qmd, a real one is looked for (:func:`find_candidate`: the gateway PATH, the qmd child's PATH, the shell's PATH and the
usual per-user install dirs, each checked with ``--version``) so the repair can name its path.

Interpret (:func:`interpret`; the SQLite-error tags below come from a store command run on the agent's
index, i.e. recorded bundles — a live check names them from the read-only reader, and ``index_locked``
from ``/proc/locks``): the receipt's :class:`~clawprobe.core.receipt.QmdFacts` with a failure tag —
``command_missing`` (absolute path gone), ``not_on_path``, ``not_executable``, ``not_qmd`` (``--version``
does not identify as qmd), ``service_path`` (the launcher's interpreter is not on the gateway PATH:
``env: 'node': No such file``, exit 127), ``native_binding`` (``--version`` works, the store command
crashes: SIGSEGV or a binding error), ``timeout``, ``version_failed``; and, from the SQLite error the store
command printed (``SqliteError: …`` + ``code: 'SQLITE_…'``, better-sqlite3's format): ``index_corrupt``
(SQLITE_CORRUPT, "database disk image is malformed"), ``index_not_database`` (SQLITE_NOTADB),
``index_unreadable`` (SQLITE_CANTOPEN/EACCES/SQLITE_READONLY: the index's permissions or owner), or
``index_locked`` (SQLITE_BUSY: a writer holds the index — inconclusive, ``store_ok`` stays ``None``; the
holders psutil can see are named). Any other store failure is ``store_failed`` with the error line, not
the stack frame above it.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.locate import QmdHome
from clawprobe.core.probes.file_locks import blocking_writer
from clawprobe.core.probes.fileinfo import open_regular
from clawprobe.core.probes.qmd_index import IndexHolder, index_holders
from clawprobe.core.probes.qmd_scratch import scratch_home
from clawprobe.core.proc import run
from clawprobe.core.receipt import LockHolder, QmdFacts
from clawprobe.core.redaction import redact_text
from clawprobe.core.runrecord import RunRecord, record_run

VERSION_TIMEOUT_S = 10.0
STORE_TIMEOUT_S = 20.0
STORE_BUSY_TIMEOUT_MS = "2000"  # QMD_SQLITE_BUSY_TIMEOUT for the store check: a locked index answers SQLITE_BUSY
_LOCKED = re.compile(r"SQLITE_BUSY|SQLITE_LOCKED|database is locked", re.I)
STORE_ARGS = ("ls",)
_VERSION = re.compile(r"(?m)^\s*qmd\s+v?(\d+\.\d+\.\d+[0-9A-Za-z.+-]*)")
#: SQLite faults of the agent's index, as better-sqlite3 reports them (``SqliteError: <msg>`` + ``code: 'SQLITE_…'``),
#: checked in this order (seen with qmd 2.8.3: a page overwritten / the file truncated → SQLITE_CORRUPT, the
#: header overwritten → SQLITE_NOTADB, ``chmod 000`` without CAP_DAC_OVERRIDE → SQLITE_CANTOPEN).
INDEX_FAULTS: tuple[tuple[str, re.Pattern], ...] = (
    ("index_corrupt", re.compile(r"SQLITE_CORRUPT|database disk image is malformed", re.I)),
    ("index_not_database", re.compile(r"SQLITE_NOTADB|file is not a database|file is encrypted", re.I)),
    ("index_unreadable", re.compile(r"SQLITE_CANTOPEN|SQLITE_PERM|SQLITE_READONLY|SQLITE_AUTH|unable to open database "
                                    r"file|attempt to write a readonly database|EACCES|EPERM|permission denied", re.I)),
)
INDEX_FAULT_TAGS = frozenset(t for t, _ in INDEX_FAULTS) | {"index_locked"}
_ERROR_LINE = re.compile(r"^\s*(?:[A-Za-z]+Error|Error)(?:\s*\[[A-Z_]+\])?:\s*\S")
_SQLITE_CODE = re.compile(r"code:\s*'?(SQLITE_[A-Z_]+)")
_NODE_FOOTER = re.compile(r"^\s*Node\.js v\d")
#: user-level install dirs a qmd is often in when the service PATH lacks it (checked after the PATHs)
USER_BIN_DIRS = (".npm-global/bin", ".bun/bin", ".local/bin", ".volta/bin", ".deno/bin")
SYSTEM_BIN_DIRS = ("/usr/local/bin", "/opt/homebrew/bin")
MAX_CANDIDATES = 3
_CANDIDATE_NOTE = " — qmd {version} answers `--version` at {path}"
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
    two runs as printed (:class:`~clawprobe.core.runrecord.RunRecord`: redacted, ≤ 64 KiB a stream);
    ``store_skipped``: why the store command did not run.
    """

    model_config = ConfigDict(extra="forbid")
    command: str
    how: str
    path_dirs: list[str] = Field(default_factory=list)
    path_source: str | None = None
    resolved_path: str | None = None
    exists: bool = False
    is_dir: bool = False  # the resolved path is a directory (exists is False: not a file)
    executable: bool = False
    interpreter: str | None = None
    interpreter_path: str | None = None
    version: RunRecord | None = None
    store: RunRecord | None = None
    store_skipped: str | None = None
    index_path: str | None = None
    #: where the program says its index is (``qmd --help``'s ``Index:`` line) when given a scratch home's XDG
    #: dirs — as OpenClaw gives it the agent's — and where that would be (``index_given``); run only while the
    #: agent's index does not exist: a wrapper that sets its own XDG_CACHE_HOME/INDEX_PATH puts it elsewhere
    index_reported: str | None = None
    index_given: str | None = None
    index_path_env: str | None = None  #: INDEX_PATH of the gateway's environment, which OpenClaw passes to qmd
    index_mode: str | None = None
    candidate: str | None = None
    candidate_version: str | None = None
    candidate_searched: bool = False
    package: str | None = None
    holders: list[IndexHolder] = Field(default_factory=list)
    store_scratch: bool = False  # the store command ran on a scratch index (live checks); False: recorded on the agent's
    writer_pid: int | None = None  # a process holding a write lock that blocks readers of the agent's index


def qmd_version(p: RunRecord | None) -> str | None:
    """The version when a ``--version`` run identifies as qmd — a line ``qmd <x.y.z>…`` on stdout (qmd's own
    format, ``qmd 2.8.3 (facd35e)``; every recorded qmd 2.x prints it) or stderr — else ``None`` (pure)."""
    if p is None:
        return None
    m = _VERSION.search(p.stdout or "") or _VERSION.search(p.stderr or "")
    return m[1] if m else None


def printed(p: RunRecord | None, limit: int = 120) -> str:
    """What a run printed, for the operator: its first non-empty stdout line, else stderr's, quoted; or
    ``nothing`` (pure)."""
    for text in ((p.stdout if p else ""), (p.stderr if p else "")):
        line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
        if line:
            return repr(redact_text(line)[:limit])
    return "nothing"


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
    """``buildQmdProcessPath`` of OpenClaw 2026.7.x: ``path_dirs`` (the gateway's PATH after its start-up rewrite,
    :func:`~clawprobe.core.probes.openclaw_path.bootstrap_path`) with its own Node bin dir appended if missing."""
    dirs = [d for d in path_dirs if d]
    if node_dir and node_dir not in dirs:
        dirs.append(node_dir)
    return dirs


def shebang(path: str) -> str | None:
    """The interpreter named by a script's ``#!`` line (``#!/usr/bin/env node`` → ``node``), else ``None``."""
    try:
        with open_regular(path) as f:
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


def candidate_dirs(path_dirs: Sequence[str], env: Mapping[str, str], shell_dirs: Sequence[str] = ()) -> list[str]:
    """Where to look for a working qmd, in order: the gateway PATH, the qmd child's PATH (``env``), the PATH of
    the shell clawprobe runs from (``shell_dirs``: a qmd that works from a login shell but not from the service),
    then :data:`USER_BIN_DIRS` under ``env["HOME"]`` and :data:`SYSTEM_BIN_DIRS` — existing dirs only, once each."""
    home = env.get("HOME")
    dirs = [*path_dirs, *env.get("PATH", "").split(os.pathsep), *shell_dirs]
    dirs += [os.path.join(home, d) for d in USER_BIN_DIRS] if home else []
    dirs += list(SYSTEM_BIN_DIRS)
    return [d for d in dict.fromkeys(d for d in dirs if d) if os.path.isdir(d)]


def find_candidate(exclude: str | None, path_dirs: Sequence[str], env: Mapping[str, str], cwd: str | None,
                   timeout_s: float = VERSION_TIMEOUT_S, shell_dirs: Sequence[str] = (),
                   first: Sequence[str] = ()) -> tuple[str | None, str | None]:
    """``(path, version)`` of the first executable among ``first`` (absolute paths, e.g. the qmd script a
    ``memory.qmd.command`` line names after its interpreter), then ``qmd`` in :func:`candidate_dirs` (not
    ``exclude``, by real path), whose ``--version`` run with ``env`` identifies as qmd; ``(None, None)`` when
    none does. Runs at most :data:`MAX_CANDIDATES` ``--version`` commands, all within one shared deadline of
    ``timeout_s`` seconds (three hanging candidates cost ``timeout_s``, not three times it)."""
    skip = os.path.realpath(exclude) if exclude else None
    tried = 0
    deadline = time.monotonic() + timeout_s
    places = [*(p for p in first if os.path.isabs(p) and _names_qmd(p)),
              *(os.path.join(d, "qmd") for d in candidate_dirs(path_dirs, env, shell_dirs))]
    for p in dict.fromkeys(places):
        if time.monotonic() >= deadline:
            break
        if not (os.path.isfile(p) and os.access(p, os.X_OK)) or os.path.realpath(p) == skip:
            continue
        tried += 1
        v = qmd_version(record_run(run([p, "--version"], env, timeout_s, cwd=cwd, deadline=deadline)))
        if v:
            return p, v
        if tried >= MAX_CANDIDATES:
            break
    return None, None


def _names_qmd(path: str) -> bool:
    """A path that names qmd itself: a file called ``qmd…`` or one inside the npm package ``@tobilu/qmd`` (an
    argument of the configured command line is run with ``--version`` only then)."""
    try:
        return os.path.basename(path).startswith("qmd") or npm_package(os.path.realpath(path)) == "@tobilu/qmd"
    except (OSError, ValueError):
        return False


_NPM_PKG = re.compile(r"/node_modules/((?:@[^/]+/)?[^/]+)/")


def npm_package(real_path: str) -> str | None:
    """The npm package a (symlink-resolved) executable belongs to — the last ``node_modules/<pkg>/`` segment
    (``@tobilu/qmd`` is qmd; the unrelated npm package named ``qmd`` is not) — else ``None`` (pure)."""
    found = _NPM_PKG.findall(real_path.replace("\\", "/"))
    return found[-1] if found else None


#: OpenClaw 2026.7.35 spawns qmd with ``{...process.env, PATH, XDG_CONFIG_HOME, QMD_CONFIG_DIR, XDG_CACHE_HOME,
#: NO_COLOR}`` (qmd-manager): every other variable of the gateway's environment reaches qmd, and qmd reads
#: ``INDEX_PATH`` (its index, before ``XDG_CACHE_HOME``) and its own ``QMD_*`` settings
_OVERRIDDEN = {"QMD_CONFIG_DIR"}


def passed_through(gateway_env: Mapping[str, str]) -> dict[str, str]:
    """The variables of the gateway's environment that reach its qmd children and change what qmd does:
    ``INDEX_PATH`` and ``QMD_*`` (not ``QMD_CONFIG_DIR``, which OpenClaw sets per agent) (pure)."""
    return {k: v for k, v in gateway_env.items()
            if (k == "INDEX_PATH" or k.startswith("QMD_")) and k not in _OVERRIDDEN and v}


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
           env: Mapping[str, str], index_path: str | None, *, run_store: bool = True, shell_dirs: Sequence[str] = (),
           version_timeout_s: float = VERSION_TIMEOUT_S, store_timeout_s: float = STORE_TIMEOUT_S,
           command_args: Sequence[str] = ()) -> QmdBinaryEvidence:
    """Resolve and exercise the qmd command (GATHER). ``env`` is the agent's qmd child env (:func:`qmd_env`);
    its PATH is also where the launcher's interpreter is looked up. Runs at most two short commands. The
    store command runs on a scratch index in a private temporary XDG home (:func:`scratch_home`), never on the
    agent's: it proves the binary and its native bindings (a SIGSEGV, a binding error) and writes nothing of
    theirs. Facts about the agent's index come from clawprobe's read-only reader (``qmd_index``) and, for a
    writer that blocks readers, from ``/proc/locks`` (:func:`~clawprobe.core.probes.file_locks.blocking_writer`).
    ``--version`` and the search for a working
    candidate share one deadline of ``version_timeout_s``; ``shell_dirs`` (clawprobe's own PATH) is searched
    for a candidate after the gateway's (:func:`candidate_dirs`), never used to resolve ``command``;
    ``command_args`` (the words of the configured command line after the first, which OpenClaw never passes) are
    tried first as candidates — a ``"node /…/@tobilu/qmd/bin/qmd"`` line names its qmd there."""
    how, resolved = resolve(command, path_dirs, workspace)
    ev = QmdBinaryEvidence(command=command, how=how, path_dirs=list(path_dirs), path_source=path_source,
                           resolved_path=resolved, index_path=index_path)
    cwd = workspace if workspace and os.path.isdir(workspace) else None
    deadline = time.monotonic() + version_timeout_s  # `--version` and the candidate search share it

    # a relative path with a slash ("tools/qmd") runs against the workspace (OpenClaw's spawn cwd): the operator
    # usually meant it from their home (breaker round 10, s24: "not installed anywhere" while ~/tools/qmd worked)
    home = env.get("HOME")
    meant = [os.path.join(home, command)] if home and "/" in command and not os.path.isabs(command) \
        and not command.startswith("~") else []

    def look_elsewhere() -> QmdBinaryEvidence:
        ev.candidate, ev.candidate_version = find_candidate(resolved, path_dirs, env, cwd,
                                                            max(deadline - time.monotonic(), 0.0), shell_dirs,
                                                            [*command_args, *meant])
        ev.candidate_searched = True
        return ev

    if resolved is None:
        return look_elsewhere()
    try:
        ev.package = npm_package(os.path.realpath(resolved))
    except (OSError, ValueError):
        ev.package = None
    ev.exists = os.path.isfile(resolved)
    ev.is_dir = os.path.isdir(resolved)
    ev.executable = ev.exists and os.access(resolved, os.X_OK)
    if not ev.executable:
        return look_elsewhere()
    ev.interpreter = shebang(resolved)
    child_dirs = env.get("PATH", "").split(os.pathsep)
    if ev.interpreter:
        ev.interpreter_path = ev.interpreter if os.path.isabs(ev.interpreter) and os.path.exists(ev.interpreter) \
            else which(ev.interpreter, child_dirs)
    ev.version = record_run(run([resolved, "--version"], env, version_timeout_s, cwd=cwd, deadline=deadline))
    if not ev.version.ok:
        ev.store_skipped = "qmd --version failed"
        if ev.version.timed_out or ev.version.rc in (126, 127) or qmd_version(ev.version):
            return ev  # a hang, a missing interpreter or a qmd that names itself: the fix is not another binary
        return look_elsewhere()
    if qmd_version(ev.version) is None:
        ev.store_skipped = "`--version` does not identify the program as qmd: its store command is not run"
        return look_elsewhere()
    if not run_store:
        ev.store_skipped = "store check not requested"
    elif not index_path or not os.path.isfile(index_path):
        ev.store_skipped = f"the agent's QMD index does not exist yet ({index_path}); a store command would create it"
        _where_it_indexes(ev, resolved, env, store_timeout_s)
    else:
        try:
            with scratch_home() as (scratch_env, scratch_dir):
                ev.store = record_run(run([resolved, *STORE_ARGS], {**env, **scratch_env}, store_timeout_s,
                                          cwd=scratch_dir))
                ev.store_scratch = True
        except OSError as e:
            ev.store_skipped = f"no scratch QMD home for the store check: {e.strerror or e}"
        writer = blocking_writer(index_path)
        if writer is not None:
            ev.writer_pid = writer.pid if writer.pid > 0 else None
            ev.holders = index_holders(index_path)
        if newer_sibling_index(index_path) is not None or env.get("INDEX_PATH"):  # another index beside the
            _where_it_indexes(ev, resolved, env, store_timeout_s)  # agent's, or the gateway's env names one
    if indexes_elsewhere(ev):  # the repair points memory.qmd.command at a qmd that is not this one: find one
        deadline = time.monotonic() + version_timeout_s
        return look_elsewhere()
    return ev


def indexes_elsewhere(ev: QmdBinaryEvidence) -> bool:
    """Whether the command keeps its index away from the XDG dirs it is given, and not because the gateway's
    ``INDEX_PATH`` says so (``index_elsewhere``: a wrapper that sets its own cache dir or ``--index``), pure."""
    if not (ev.index_reported and ev.index_given):
        return False
    reported = os.path.normpath(ev.index_reported)
    return reported != os.path.normpath(ev.index_given) and not (
        ev.index_path_env and reported == os.path.normpath(ev.index_path_env))


def newer_sibling_index(index_path: str) -> str | None:
    """Another QMD index (``<name>.sqlite``) in the agent's index dir written after ``index.sqlite`` and its
    ``-wal`` — what a qmd command that names its own index (a wrapper's ``--index work``) leaves behind while the
    agent's index stands still; ``None`` when there is none (``stat``/``scandir`` only). It makes the check ask the
    command where it indexes (:func:`_where_it_indexes`): OpenClaw's updates said "Memory index updated" and went
    to ``work.sqlite``, the check said healthy, then stale for ever (breaker round 15, A2)."""
    d, base = os.path.split(index_path)
    try:
        own = max(os.stat(p).st_mtime_ns for p in (index_path, index_path + "-wal") if os.path.exists(p))
        with os.scandir(d) as it:
            for e in it:
                if e.name != base and e.name.endswith(".sqlite") and e.is_file(follow_symlinks=False) \
                        and e.stat(follow_symlinks=False).st_mtime_ns > own:
                    return e.path
    except (OSError, ValueError):
        return None
    return None


_INDEX_LINE = re.compile(r"^Index:\s*(\S.*?)\s*$", re.M)


def _where_it_indexes(ev: QmdBinaryEvidence, resolved: str, env: Mapping[str, str], timeout_s: float) -> None:
    """``qmd --help`` with a scratch home's XDG dirs (no ``INDEX_PATH``: OpenClaw sets none): the index path it
    reports vs the one those dirs give (qmd 2.8.3 prints ``Index: <path>`` last, and makes the cache dir)."""
    try:
        with scratch_home() as (scratch_env, scratch_dir):
            given = {k: v for k, v in scratch_env.items() if k != "INDEX_PATH"}
            ev.index_path_env = env.get("INDEX_PATH") or None
            p = run([resolved, "--help"], {**env, **given}, timeout_s, cwd=scratch_dir, max_output=65536)
            m = _INDEX_LINE.search(p.stdout or "") if p.rc == 0 else None
            if m:
                ev.index_reported, ev.index_given = m[1], scratch_env["INDEX_PATH"]
    except OSError:
        return


def index_fault(p: RunRecord | None) -> str | None:
    """The index fault tag a failed store command's stderr names (:data:`INDEX_FAULTS`, or ``index_locked``
    for SQLITE_BUSY), else ``None`` (pure)."""
    if p is None or p.ok or p.timed_out:
        return None
    err = p.stderr or ""
    if _LOCKED.search(err):
        return "index_locked"
    return next((tag for tag, rx in INDEX_FAULTS if rx.search(err)), None)


def error_line(text: str | None) -> str:
    """The line that says what went wrong in a Node stack trace: ``SqliteError: <msg>`` (with its
    ``SQLITE_…`` code), else the last line that is not Node's version footer, else ``""`` (pure). Secrets
    in it are masked (:func:`clawprobe.core.redaction.redact_text`): a child's stderr enters evidence here."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    err = next((ln for ln in lines if _ERROR_LINE.match(ln)), None)
    if err is not None:
        code = _SQLITE_CODE.search(text or "")
        return (redact_text(err)[:300] + (f" ({code[1]})" if code and code[1] not in err else ""))
    rest = [ln for ln in lines if not _NODE_FOOTER.match(ln) and ln not in ("}", "^")]
    return redact_text(rest[-1])[:300] if rest else ""


def _crashed(p: RunRecord) -> str | None:
    """A crash description when the process died by a fatal signal (directly or via a shell: 128+N)."""
    sig = p.signal if p.signal is not None else (p.rc - 128 if p.rc is not None and 128 < p.rc < 160 else None)
    if sig is not None and sig in {int(s) for s in _CRASH_SIGNALS}:
        return f"killed by {signal.Signals(sig).name} (exit {p.rc})"
    if _BINDING.search(p.stderr or ""):
        return "native binding error: " + _first_line(p.stderr, _BINDING)
    return None


def _first_line(text: str, pattern: re.Pattern) -> str:
    for line in (text or "").splitlines():
        if pattern.search(line):
            return redact_text(line.strip())[:300]
    return redact_text((text or "").strip().splitlines()[-1])[:300] if (text or "").strip() else ""


def _with_candidate(f: QmdFacts, ev: QmdBinaryEvidence) -> QmdFacts:
    f.candidate_searched, f.package = ev.candidate_searched, ev.package
    if ev.candidate and ev.candidate_version:
        f.candidate_path, f.candidate_version = ev.candidate, ev.candidate_version
        f.failure_detail = (f.failure_detail or "") + _CANDIDATE_NOTE.format(version=ev.candidate_version,
                                                                             path=ev.candidate)
    return f


def interpret(ev: QmdBinaryEvidence) -> QmdFacts:
    """The receipt's ``qmd`` facts from the evidence (pure). A working qmd found elsewhere
    (:func:`find_candidate`) is ``candidate_path``/``candidate_version`` (and named at the end of
    ``failure_detail``); the processes holding a locked index are ``lock_holders``."""
    f = QmdFacts(command=ev.command, resolved_path=ev.resolved_path)
    where = f"PATH from {ev.path_source}" if ev.path_source else "PATH"
    if ev.resolved_path is None:
        f.resolves, f.failure = False, "not_on_path"
        f.failure_detail = f"{ev.command!r} is not on the gateway's {where}: {os.pathsep.join(ev.path_dirs) or '(empty)'}"
        return _with_candidate(f, ev)
    if ev.is_dir:
        f.resolves, f.failure = False, "not_executable"
        f.failure_detail = f"{ev.resolved_path} is a directory, not an executable"
        return _with_candidate(f, ev)
    if not ev.exists:
        f.resolves = False
        f.failure = "command_missing" if ev.how in ("absolute", "relative") else "not_on_path"
        f.failure_detail = f"{ev.resolved_path} does not exist" + (" (relative to the workspace)" if ev.how == "relative" else "")
        return _with_candidate(f, ev)
    if not ev.executable:
        f.resolves, f.failure = False, "not_executable"
        f.failure_detail = f"{ev.resolved_path} is not executable"
        return _with_candidate(f, ev)
    v = ev.version
    if v is None:
        return f
    f.version = qmd_version(v)
    if v.ok and f.version is None:
        f.resolves, f.failure = False, "not_qmd"
        f.failure_detail = (f"{ev.resolved_path} is not qmd: `--version` printed {printed(v)} (exit {v.rc}), where qmd "
                            "prints `qmd <version> (<commit>)`; its store command was not run")
        return _with_candidate(f, ev)
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
        return _with_candidate(f, ev)
    f.resolves = True
    s = ev.store
    if ev.index_reported and ev.index_given and os.path.normpath(ev.index_reported) != os.path.normpath(ev.index_given):
        if ev.index_path_env and os.path.normpath(ev.index_reported) == os.path.normpath(ev.index_path_env):
            opens = os.path.isdir(os.path.dirname(ev.index_path_env))  # qmd makes the file, never its directory
            f.index_path_env = ev.index_path_env
            f.failure_detail = (
                f"the gateway's environment sets INDEX_PATH={ev.index_path_env}; OpenClaw passes its environment to "
                "qmd and qmd opens INDEX_PATH before the agent's XDG dirs, so the gateway searches and updates that "
                "index, never the agent's own — which is the one `openclaw memory` from a shell without the "
                "variable, and this check, read" + (
                    "" if opens else f"; its directory {os.path.dirname(ev.index_path_env)} does not exist, so every "
                                     "qmd call of the gateway fails (\"Cannot open database because the directory "
                                     "does not exist\") and OpenClaw falls back to builtin"))
            if not opens:
                f.failure = "index_path_env"
            return f
        f.failure = "index_elsewhere"
        f.failure_detail = (f"{ev.resolved_path} keeps its index at {ev.index_reported} whatever XDG dirs it is given "
                            f"(`--help` with a scratch home's: not {ev.index_given}) — a wrapper that sets its own "
                            "XDG_CACHE_HOME or INDEX_PATH, or names its own --index: OpenClaw's index runs never "
                            "reach the agent's index (\"QMD index file not found\", or updates that land elsewhere)")
        return _with_candidate(f, ev)  # a qmd that is not this command: what memory.qmd.command should name
    if s is None:
        f.failure_detail = ev.store_skipped
        return f
    f.store_exit_code = s.rc
    if s.timed_out:
        f.store_ok, f.failure, f.failure_detail = False, "timeout", f"`qmd {' '.join(STORE_ARGS)}` {s.reason}"
        return f
    where = "a scratch index (a private temporary QMD home)" if ev.store_scratch else "the agent's index"
    crash = _crashed(s)
    if crash:
        f.store_ok, f.failure = False, "native_binding"
        f.failure_detail = f"`qmd --version` works but `qmd {' '.join(STORE_ARGS)}` on {where} crashed: {crash}"
        return f
    cmd = f"`qmd {' '.join(STORE_ARGS)}`"
    if ev.store_scratch and s.rc == 0 and ev.writer_pid is not None:
        f.failure = "index_locked"
        f.lock_holders = [LockHolder(pid=h.pid, what=h.what) for h in ev.holders]
        if not f.lock_holders and ev.writer_pid is not None:
            f.lock_holders = [LockHolder(pid=ev.writer_pid, what="a process (not visible to this user)")]
        held = "".join(f"; held open by pid {h.pid} ({h.what})" for h in f.lock_holders)
        f.failure_detail = (f"the agent's QMD index {ev.index_path or ''} is locked by another process (a write lock "
                            f"that blocks every reader, /proc/locks){held}: the store check is inconclusive, "
                            f"qmd itself runs ({cmd} on {where} exit 0)")
        return f
    fault = index_fault(s)
    if fault == "index_locked":
        f.failure = "index_locked"
        f.lock_holders = [LockHolder(pid=h.pid, what=h.what) for h in ev.holders]
        held = "".join(f"; held open by pid {h.pid} ({h.what})" for h in ev.holders)
        f.failure_detail = (f"{cmd} found the agent's QMD index {ev.index_path or ''} locked by another process "
                            f"(SQLITE_BUSY after {int(STORE_BUSY_TIMEOUT_MS) / 1000:.0f} s)"
                            f"{held or '; the holder is not visible to this user'}"
                            ": the store check is inconclusive, qmd itself runs")
        return f
    if s.rc != 0:
        f.store_ok, f.failure = False, fault or "store_failed"
        what = {"index_corrupt": "is damaged (corrupt)", "index_not_database": "is not a SQLite database",
                "index_unreadable": "cannot be opened by qmd (permissions or owner"
                                    + (f": {ev.index_mode}" if ev.index_mode else "") + ")"}.get(fault or "")
        f.failure_detail = f"{cmd} on {where} exit {s.rc}: {s.reason or error_line(s.stderr) or f'exit {s.rc}'}" + (
            f" — the agent's QMD index {ev.index_path} {what}" if what and not ev.store_scratch else "")
        return f
    f.store_ok = True
    return f
