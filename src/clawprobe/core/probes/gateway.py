"""The gateway's environment (where qmd is resolved from) and whether it applied the config on disk.

Gather (:func:`find_gateways`, :func:`service_env`): scan the process table with psutil for
``openclaw … gateway run`` / ``node …/openclaw.mjs gateway …`` / ``openclaw-gateway`` processes and keep the
ones serving THIS state dir (their ``OPENCLAW_STATE_DIR``, else ``<OPENCLAW_HOME|HOME>/.openclaw``, or a
``--profile``). From their environment only ``PATH``, ``HOME`` and non-secret ``OPENCLAW_*`` keys are read, and the
NAMES (never values) of the embedding-provider key variables it sets (:func:`provider_key_names`).
Without a running gateway: the systemd user unit ``openclaw-gateway*.service`` (``Environment=``, its drop-ins and
``EnvironmentFile=``s: :func:`unit_env`), then a system unit of that name (run as its ``User=``), then the
launchd plist ``ai.openclaw.gateway*.plist`` (``EnvironmentVariables``); else the caller's shell, said
plainly. The command line is never stored (it may hold ``--token``).

Interpret (:func:`interpret`): :class:`~clawprobe.core.receipt.GatewayFacts`. Drift comes from what the gateway
APPLIED, read in its log (:func:`clawprobe.core.probes.openclaw_log.drift`): a memory key change followed by
``config reload disabled (gateway.reload.mode=off)`` (or ignored/failed) is drift; a hot reload or a
restart (``gateway ready``) after it is applied. Process start time vs file mtime alone is not used.
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import re
import shlex
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import psutil
from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.probes.fileinfo import open_regular
from clawprobe.core.probes.openclaw_log import LogFacts, drift
from clawprobe.core.probes.service_runtime import ServiceRuntime, env_wrapper, exec_start, measure
from clawprobe.core.probes.systemd_unit import service_settings
from clawprobe.core.receipt import PROVIDER_KEY_NAMES, GatewayFacts
from clawprobe.core.redaction import looks_secret

_SECRETISH = re.compile(r"TOKEN|SECRET|KEY|PASSW|AUTH|CRED|COOKIE", re.I)
#: locations, used verbatim (a path is never judged by its shape)
_LOCATION_KEYS = frozenset({"PATH", "HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH", "OPENCLAW_HOME",
                            "OPENCLAW_PROFILE", "OPENCLAW_LOG_PREFIX", "INDEX_PATH"})
SYSTEMD_GLOB = "openclaw-gateway*.service"
#: the PATH systemd gives a service whose unit sets none (systemd.exec(5), "Environment variables in spawned
#: processes": the manager's compiled-in default; split-usr builds list /sbin and /bin too)
SYSTEMD_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: launchd's PATH for an agent whose plist sets none (launchd.plist(5): ``/usr/bin:/bin:/usr/sbin:/sbin``)
LAUNCHD_DEFAULT_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
LAUNCHD_GLOB = "ai.openclaw.gateway*.plist"
#: ``%h`` of the system manager, whatever ``User=`` says (systemd.unit(5), "Specifiers")
SYSTEM_MANAGER_HOME = "/root"
#: where the system manager reads units, in its order (systemd.unit(5), "System Unit Search Path")
SYSTEM_UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
                    "/lib/systemd/system", "/usr/lib/systemd/system")
#: the user manager's directories after ``~/.config/systemd/user`` whose drop-ins also apply to a user unit
#: (systemd.unit(5), "User Unit Search Path")
USER_UNIT_DIRS = ("/etc/systemd/user", "/run/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user")
_SERVER_SUBCOMMANDS = ("run", "start", "serve")


def safe_env(env: Mapping[str, str]) -> dict[str, str]:
    """Only ``PATH``, ``HOME``, ``OPENCLAW_*`` and what reaches qmd from it (``INDEX_PATH``, ``QMD_*``: OpenClaw
    2026.7.35 spawns qmd with its whole environment) — keys whose name does not look like a credential; of those,
    a value that looks like one (:func:`clawprobe.core.redaction.looks_secret`, e.g. ``OPENCLAW_GATEWAY_URL=
    https://u:pw@host``) is dropped too, except the location keys (paths, used verbatim)."""
    return {k: v for k, v in env.items()
            if k in ("PATH", "HOME") or (k.startswith(("OPENCLAW_", "QMD_")) or k == "INDEX_PATH")
            and not _SECRETISH.search(k) and (k in _LOCATION_KEYS or not looks_secret(v))}


class GatewayProcess(BaseModel):
    """A running gateway process (source: the process table via psutil).

    ``started_at`` is the process create time (UTC); ``node_dir`` the directory of its executable when it
    is a Node binary (OpenClaw 2026.7 appends it to qmd's PATH); ``env`` the safe subset of its environment.
    """

    model_config = ConfigDict(extra="forbid")
    pid: int
    ppid: int | None = None
    started_at: datetime | None = None
    exe: str | None = None
    node_dir: str | None = None
    script: str | None = None
    profile: str | None = None
    state_dir: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    env_readable: bool = True
    #: its working directory (``/proc/<pid>/cwd``): what OpenClaw resolves a relative workspace and a relative
    #: ``logging.file`` against;
    #: ``None`` when not readable (another user's process) or not recorded
    cwd: str | None = None


class ServiceEnv(BaseModel):
    """Environment found in a service definition (systemd user or system unit, launchd plist): safe keys only."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["systemd", "launchd"]
    file: str
    env: dict[str, str] = Field(default_factory=dict)
    #: where ``env["PATH"]`` came from: the definition itself (``unit``/``plist``), the user manager's
    #: ``~/.config/environment.d/*.conf`` (``environment.d``), or the manager's default PATH for services
    #: (``default``: the definition sets none, and the service never sees the login shell's PATH)
    path_from: Literal["unit", "plist", "environment.d", "default"] = "unit"
    #: whose manager runs it: the user's (a user unit, a LaunchAgent) or the system's (a system unit)
    scope: Literal["user", "system"] = "user"
    #: the command it starts (systemd ``ExecStart=``, launchd ``ProgramArguments``; specifiers not expanded)
    argv: list[str] = Field(default_factory=list)
    #: the Node that command would run OpenClaw with, measured when no gateway process runs
    runtime: ServiceRuntime | None = None


class GatewayEvidence(BaseModel):
    """Everything gathered about the gateway of one state dir (replayable)."""

    model_config = ConfigDict(extra="forbid")
    state_dir: str
    processes: list[GatewayProcess] = Field(default_factory=list)
    other_gateways: int = 0
    #: of ``other_gateways``, those whose environment could not be read (another user's, a zombie): which state
    #: dir they serve is unknown — ``None`` when not counted (evidence written before this count existed)
    unattributed: int | None = None
    #: when no gateway process or service serves this state dir: the state dirs that running gateways or the
    #: user's gateway units serve instead (``--profile work``'s ``~/.openclaw-work``), at most 5
    elsewhere: list[str] = Field(default_factory=list)
    service: ServiceEnv | None = None
    shell_env: dict[str, str] = Field(default_factory=dict)
    reload_mode: str | None = None
    log: LogFacts | None = None
    errors: list[str] = Field(default_factory=list)
    #: the NAMES (never values) of the embedding-provider key variables (:data:`PROVIDER_KEY_NAMES`) the gateway's
    #: own environment sets non-empty — its running process's, else its service definition's; ``None`` when neither
    #: is known (clawprobe's ``openclaw`` runs never carry them, so they can resolve another provider)
    provider_keys: list[str] | None = None

    @property
    def process(self) -> GatewayProcess | None:
        """The gateway process whose parent is not itself a gateway (the one the service started)."""
        pids = {p.pid for p in self.processes}
        roots = [p for p in self.processes if p.ppid not in pids]
        return next(iter(roots or self.processes), None)


def _norm(path: str | None) -> str | None:
    if not path:
        return None
    with contextlib.suppress(OSError):
        return os.path.realpath(path)
    return os.path.normpath(path)


def is_gateway_cmdline(cmdline: Sequence[str]) -> bool:
    """``openclaw[-x.y.z] gateway …``, ``node …/openclaw.mjs gateway …`` or the respawned ``openclaw-gateway``."""
    if not cmdline:
        return False
    first = os.path.basename(cmdline[0])
    if first == "openclaw-gateway" or cmdline[0].startswith("openclaw-gateway"):
        return True
    args = list(cmdline[:4])
    if not any("openclaw" in os.path.basename(a) for a in args) or "gateway" not in args[1:]:
        return False
    i = args.index("gateway")
    sub = cmdline[i + 1] if i + 1 < len(cmdline) else "run"
    return sub in _SERVER_SUBCOMMANDS or sub.startswith("-")


def _profile(cmdline: Sequence[str]) -> str | None:
    for i, a in enumerate(cmdline):
        if a == "--profile" and i + 1 < len(cmdline):
            return cmdline[i + 1]
        if a.startswith("--profile="):
            return a.split("=", 1)[1]
    return None


def state_dir_of(env: Mapping[str, str], profile: str | None = None) -> str | None:
    """The state dir a process with this environment serves (OpenClaw's rule; ``--profile X`` → ``~/.openclaw-X``)."""
    if env.get("OPENCLAW_STATE_DIR", "").strip():
        return os.path.expanduser(env["OPENCLAW_STATE_DIR"].strip())
    home = env.get("OPENCLAW_HOME", "").strip() or env.get("HOME", "").strip()
    if not home:
        return None
    if profile and profile != "default":
        return os.path.join(home, f".openclaw-{profile}")
    return os.path.join(home, ".openclaw")


def find_gateways(state_dir: str, others_seen: list[str] | None = None,
                  unreadable: list[int] | None = None) -> tuple[list[GatewayProcess], int]:
    """Gateway processes serving ``state_dir`` and the count of gateways serving other state dirs (whose state
    dirs, when readable, are appended to ``others_seen``; the pids of those whose environment is not readable
    to ``unreadable``)."""
    want = _norm(state_dir)
    mine: list[GatewayProcess] = []
    others = 0
    for proc in psutil.process_iter(["pid", "ppid", "cmdline", "create_time", "exe"]):
        info = proc.info
        cmd = info.get("cmdline") or []
        if not is_gateway_cmdline(cmd):
            continue
        readable = True
        try:
            env = safe_env(proc.environ())
        except (psutil.AccessDenied, psutil.ZombieProcess, psutil.NoSuchProcess, OSError):
            env, readable = {}, False
        profile = _profile(cmd)
        served = _norm(state_dir_of(env, profile)) if readable else None
        if served != want:
            others += 1
            if served and others_seen is not None:
                others_seen.append(served)
            if not readable and unreadable is not None:
                unreadable.append(info["pid"])
            continue
        exe = info.get("exe") or None
        started = datetime.fromtimestamp(info["create_time"], UTC) if info.get("create_time") else None
        script = next((a for a in cmd[1:3] if a.endswith((".mjs", ".js"))), None)
        cwd: str | None = None
        with contextlib.suppress(psutil.Error, OSError):
            cwd = proc.cwd() or None
        mine.append(GatewayProcess(
            pid=info["pid"], ppid=info.get("ppid"), started_at=started, exe=exe,
            node_dir=os.path.dirname(exe) if exe and os.path.basename(exe).startswith("node") else None,
            script=script, profile=profile, state_dir=served, env=env, env_readable=readable,
            cwd=cwd))
    return mine, others


def _systemd_env(settings: Sequence[tuple[str, str]]) -> tuple[dict[str, str], list[str]]:
    """``Environment=`` assignments of a unit's settings (:func:`systemd_unit.service_settings`; quoted, several
    per line, later ones win, an empty ``Environment=`` resets the list) and its ``EnvironmentFile=`` paths in
    order (an empty one resets that list: systemd.exec(5))."""
    env: dict[str, str] = {}
    files: list[str] = []
    for key, value in settings:
        if key == "EnvironmentFile":
            files = [*files, value] if value else []
            continue
        if key != "Environment":
            continue
        if not value:
            env.clear()
            continue
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        for p in parts:
            if "=" in p:
                k, v = p.split("=", 1)
                env[k] = v
    return env, files


def _env_file(path: str) -> dict[str, str]:
    """``KEY=VALUE`` lines of an ``EnvironmentFile=`` (``#``/``;`` comments, optional quotes); a leading ``-``
    (optional file) is dropped; missing or unreadable → ``{}``."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        with open_regular(path.lstrip("-")) as f:  # a FIFO named there would block the read
            text = f.read(100_000).decode("utf-8", errors="replace")
        for line in text.splitlines():
            line = line.strip()
            key, eq, value = line.partition("=")
            if eq and key and not line.startswith(("#", ";")):
                out[key.strip()] = value.strip().strip('"').strip("'")
    return out


_SPECIFIER = re.compile(r"%([%hUutT])")


def expand_specifiers(value: str, home: str, *, system: bool = False) -> str:
    """The systemd specifiers a unit's paths use (systemd.unit(5)): ``%h`` home, ``%u`` user name, ``%U`` uid,
    ``%t`` runtime dir, ``%T`` ``/tmp``, ``%%`` a percent sign — those of the user running the manager, never
    ``User=``'s. A user unit (``home``: its owner's) runs as its owner: this process's user and uid,
    ``/run/user/<uid>``; the system manager's (``system``) are ``/root``, ``root``, ``0``, ``/run``. Others are
    kept as written."""
    import getpass

    if system:
        values = {"%": "%", "h": SYSTEM_MANAGER_HOME, "u": "root", "U": "0", "t": "/run", "T": "/tmp"}
    else:
        uid = os.getuid()
        values = {"%": "%", "h": home, "U": str(uid), "t": f"/run/user/{uid}", "T": "/tmp"}
    return _SPECIFIER.sub(lambda m: values[m[1]] if m[1] in values else getpass.getuser(), value)


def _settings(unit: Path, system: bool) -> list[tuple[str, str]]:
    """The unit's ``[Service]`` settings with the drop-ins of its manager's load path."""
    return service_settings(unit, SYSTEM_UNIT_DIRS if system else USER_UNIT_DIRS)


def unit_env(unit: Path, home: str | None = None, *, system: bool = False) -> dict[str, str]:
    """The environment a systemd unit gives its service: the unit's ``Environment=`` lines, then its drop-ins'
    (later assignments win), then the ``EnvironmentFile=`` files of all of them (their values override
    ``Environment=``, systemd.exec(5)), then the ``VAR=value`` words of an ``ExecStart=/usr/bin/env …`` (env(1)
    sets them for the program it starts); with ``home`` (or ``system``), specifiers in the values and file paths
    are expanded (:func:`expand_specifiers`). Unreadable parts are skipped."""
    settings = _settings(unit, system)
    env, files = _systemd_env(settings)
    wrapped, cleared, _ = env_wrapper(exec_start(settings))
    if home is not None or system:
        env, wrapped = ({k: expand_specifiers(v, home or SYSTEM_MANAGER_HOME, system=system) for k, v in e.items()}
                        for e in (env, wrapped))
        files = [expand_specifiers(f, home or SYSTEM_MANAGER_HOME, system=system) for f in files]
    for path in files:
        env.update(_env_file(path))
    return {**({} if cleared else env), **wrapped}


def unit_argv(unit: Path, *, system: bool = False) -> list[str]:
    """The program and arguments the unit's ``ExecStart=`` runs, an ``env`` wrapper's words taken off."""
    return env_wrapper(exec_start(_settings(unit, system)))[2]


def unit_user(unit: Path) -> str | None:
    """The last ``User=`` of the unit and its drop-ins (an empty one resets it), ``None`` when unset."""
    user = None
    for key, value in _settings(unit, True):
        if key == "User":
            user = value or None
    return user


def _system_service_home(user: str | None) -> str | None:
    """The HOME of a system service: ``User=``'s home from the password database (systemd sets ``$HOME``
    for it), else root's (no ``User=``: it runs as root and OpenClaw falls back to ``os.homedir()``);
    ``None`` for a user this host does not know."""
    import pwd

    try:
        return pwd.getpwnam(user).pw_dir if user else pwd.getpwuid(0).pw_dir
    except (KeyError, OSError):
        return None


_ENV_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def environment_d_path(home: str) -> str | None:
    """The PATH the systemd user manager gives its services from ``~/.config/environment.d/*.conf``
    (:func:`environment_d_vars`), or ``None`` when no file sets it."""
    return environment_d_vars(home).get("PATH")


def _with_path(kind: Literal["systemd", "launchd"], file: str, env: dict[str, str], home: str,
               argv: list[str]) -> ServiceEnv:
    """The service's safe env with the PATH it really runs with: its own, else the manager's (never the shell's)."""
    safe = safe_env(env)
    if "PATH" in safe:
        return ServiceEnv(kind=kind, file=file, env=safe, path_from="unit" if kind == "systemd" else "plist", argv=argv)
    extra = environment_d_path(home) if kind == "systemd" else None
    default = SYSTEMD_DEFAULT_PATH if kind == "systemd" else LAUNCHD_DEFAULT_PATH
    return ServiceEnv(kind=kind, file=file, env={**safe, "PATH": extra or default},
                      path_from="environment.d" if extra else "default", argv=argv)


def _system_unit(unit: Path, want: str | None) -> ServiceEnv | None:
    """A system unit serving ``want``: run as its ``User=`` (HOME theirs, systemd sets it) or root; its PATH
    its own, else the system manager's default (``environment.d`` is the user manager's only)."""
    user = unit_user(unit)
    home = _system_service_home(user)
    env = unit_env(unit, system=True)
    if home is None or _norm(state_dir_of({"HOME": home, **env})) != want:
        return None
    if user:
        env.setdefault("HOME", home)
    safe, argv = safe_env(env), unit_argv(unit, system=True)
    if "PATH" in safe:
        return ServiceEnv(kind="systemd", file=str(unit), env=safe, path_from="unit", scope="system", argv=argv)
    return ServiceEnv(kind="systemd", file=str(unit), env={**safe, "PATH": SYSTEMD_DEFAULT_PATH}, path_from="default",
                      scope="system", argv=argv)


def service_env(home: str, state_dir: str, system_dirs: Sequence[str] = SYSTEM_UNIT_DIRS) -> ServiceEnv | None:
    """The gateway service definition for ``state_dir`` under ``home``: a systemd user unit, else a system
    unit (``system_dirs``, first match wins, as systemd's own search order), else a launchd plist. Its
    ``env["PATH"]`` is always the one the service gets (:attr:`ServiceEnv.path_from`)."""
    want = _norm(state_dir)
    d = Path(home) / ".config" / "systemd" / "user"
    for unit in sorted(d.glob(SYSTEMD_GLOB)) if d.is_dir() else []:
        if not unit.is_file():  # a FIFO would block the read
            continue
        env = unit_env(unit, home)
        served = _norm(state_dir_of({"HOME": home, **env}))
        if served == want:
            return _with_path("systemd", str(unit), env, home, unit_argv(unit))
    for sd in map(Path, system_dirs):
        for unit in sorted(sd.glob(SYSTEMD_GLOB)) if sd.is_dir() else []:
            found = _system_unit(unit, want) if unit.is_file() else None
            if found is not None:
                return found
    agents = Path(home) / "Library" / "LaunchAgents"
    for plist in sorted(agents.glob(LAUNCHD_GLOB)) if agents.is_dir() else []:
        if not plist.is_file():
            continue
        try:
            with open(plist, "rb") as f:
                data = plistlib.load(f)
        except (OSError, plistlib.InvalidFileException, ValueError):
            continue
        env = {str(k): str(v) for k, v in (data.get("EnvironmentVariables") or {}).items()}
        if _norm(state_dir_of({"HOME": home, **env})) == want:
            args = data.get("ProgramArguments")
            argv = [str(a) for a in args] if isinstance(args, list) else []
            return _with_path("launchd", str(plist), env, home, argv)
    return None


def _plist_env(path: str) -> dict[str, str]:
    """A launchd plist's ``EnvironmentVariables`` (``{}`` when unreadable or not a plist)."""
    try:
        with open(path, "rb") as f:
            data = plistlib.load(f)
    except (OSError, plistlib.InvalidFileException, ValueError):
        return {}
    env = data.get("EnvironmentVariables") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}


#: variables every service gets from its manager whatever its unit says (systemd.exec(5) "Environment variables in
#: spawned processes"; launchd sets the same login basics)
MANAGER_VARS = frozenset({"HOME", "USER", "LOGNAME", "SHELL", "PATH", "LANG", "XDG_RUNTIME_DIR", "INVOCATION_ID",
                          "JOURNAL_STREAM", "MANAGERPID", "SYSTEMD_EXEC_PID", "TMPDIR"})


def environment_d_vars(home: str) -> dict[str, str]:
    """Every variable the systemd user manager gives its services from ``~/.config/environment.d/*.conf``
    (environment.d(5): ``KEY=VALUE`` lines, files in name order, ``$VAR``/``${VAR}`` expanded from earlier
    assignments and the manager's default PATH and HOME); ``{}`` when there is none. Unreadable files are skipped.
    May hold credentials."""
    d = Path(home) / ".config" / "environment.d"
    env = {"PATH": SYSTEMD_DEFAULT_PATH, "HOME": home}
    out: dict[str, str] = {}
    for conf in sorted(d.glob("*.conf")) if d.is_dir() else []:
        if conf.is_file():  # a FIFO would block the read
            for key, value in _env_file(str(conf)).items():
                env[key] = out[key] = _ENV_REF.sub(lambda m: env.get(m[1] or m[2], ""), value)
    return out


def unit_unset(unit: Path, *, system: bool = False) -> list[tuple[str, str | None]]:
    """The unit's and its drop-ins' ``UnsetEnvironment=`` entries: ``(name, None)`` unsets the name, ``(name, value)``
    only that assignment; an empty ``UnsetEnvironment=`` resets the list (systemd.exec(5))."""
    out: list[tuple[str, str | None]] = []
    for key, value in _settings(unit, system):
        if key != "UnsetEnvironment":
            continue
        if not value.strip():
            out = []
            continue
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
        out += [(w.split("=", 1)[0], w.split("=", 1)[1]) if "=" in w else (w, None) for w in words]
    return out


def service_environment(svc: ServiceEnv, home: str) -> tuple[dict[str, str], frozenset[str]]:
    """(variables, names unset) of the environment a service definition gives the gateway, as its manager builds
    it (may hold credentials: never stored or printed): a user unit's ``environment.d`` first, then the unit's own
    (:func:`unit_env`: ``Environment=``, ``EnvironmentFile=``, drop-ins, an ``env`` wrapper), and last its
    ``UnsetEnvironment=`` (:func:`unit_unset`), which systemd applies after everything else, manager variables too
    (breaker round 16, C1/C2: a ``${QMD_BIN}`` set only by environment.d was "not set"; one the unit unsets was
    healthy); a launchd plist's ``EnvironmentVariables``."""
    if svc.kind == "launchd":
        return _plist_env(svc.file), frozenset()
    system = svc.scope == "system"
    unit = Path(svc.file)
    env = {**({} if system else environment_d_vars(home)), **unit_env(unit, home, system=system)}
    unset: set[str] = set()
    for name, value in unit_unset(unit, system=system):
        if value is None or env.get(name) == value:
            env.pop(name, None)
            unset.add(name)
    return env, frozenset(unset)


def _gateway_environment(ev: GatewayEvidence, home: str) -> tuple[dict[str, str] | None, frozenset[str] | None]:
    """(variables, names a service unsets) of the gateway's known environment: its running process's exact environ
    (nothing unset beyond it), else its service definition's; ``(None, None)`` when neither is known or readable."""
    p = ev.process
    if p is not None and p.env_readable:
        try:
            return psutil.Process(p.pid).environ(), None
        except (psutil.Error, OSError):
            return None, None
    if ev.service is None:
        return None, None
    return service_environment(ev.service, home)


def gateway_vars(ev: GatewayEvidence, names: Sequence[str], home: str) -> tuple[dict[str, str], list[str]]:
    """``(set, lacking)`` for the variables ``names`` in the environment the gateway runs with, read once: its
    running process's own (``/proc/<pid>/environ`` via psutil, exact), else its service definition's
    (:func:`service_environment`). ``set``: their values; ``lacking``: the names it does not set — for a service,
    unless its manager gives every service that name (:data:`MANAGER_VARS`) and the unit does not unset it.
    ``({}, [])`` when only this shell is known (no process, no service) or nothing can be read. OpenClaw's own
    dotenv files are not consulted here: the config reader adds them (:func:`.config.runtime_dotenv`).

    Used only to resolve the ``${VAR}`` the gateway's config references, as it resolves them: a workspace
    ``${OC_NOTES}/ws`` only the unit sets is the gateway's (breaker round 7 w02); a ``${QMD_BIN}`` only the
    operator's shell sets is unset for the gateway — it logs "missing env var" and falls back to builtin (breaker
    round 15, A1). The values may be credentials: never stored, printed or put in evidence."""
    want = list(dict.fromkeys(names))
    full, unset = _gateway_environment(ev, home) if want else (None, None)
    if full is None:
        return {}, []
    values = {k: v for k, v in full.items() if k in want}
    lacking = [n for n in want if n not in full and (unset is None or n not in MANAGER_VARS or n in unset)]
    return values, lacking


def provider_key_names(ev: GatewayEvidence, home: str) -> list[str] | None:
    """The names of :data:`PROVIDER_KEY_NAMES` the gateway's known environment sets non-empty (its running
    process's ``/proc/<pid>/environ``, else its service definition's, :func:`_gateway_environment`), in the
    table's order; ``None`` when neither is known or readable. Values are read to test them for emptiness only:
    never kept, stored or printed."""
    full, _ = _gateway_environment(ev, home)
    if full is None:
        return None
    names = [n for group in PROVIDER_KEY_NAMES.values() for n in group]
    return [n for n in names if (full.get(n) or "").strip()]


def user_unit_state_dirs(home: str) -> list[str]:
    """The state dirs the user's systemd gateway units serve (``OPENCLAW_STATE_DIR``/``OPENCLAW_HOME`` of each
    unit, its drop-ins and environment files; unreadable units skipped)."""
    d = Path(home) / ".config" / "systemd" / "user"
    out = []
    for unit in sorted(d.glob(SYSTEMD_GLOB)) if d.is_dir() else []:
        if unit.is_file():
            served = _norm(state_dir_of({"HOME": home, **unit_env(unit, home)}))
            if served:
                out.append(served)
    return out


def gather(state_dir: str, shell_env: Mapping[str, str], reload_mode: str | None, log: LogFacts | None = None
           ) -> GatewayEvidence:
    """Process table + service files (GATHER). ``log`` is the already-read log (its drift lines)."""
    ev = GatewayEvidence(state_dir=state_dir, shell_env=safe_env(shell_env), reload_mode=reload_mode, log=log)
    served: list[str] = []
    unreadable: list[int] = []
    try:
        ev.processes, ev.other_gateways = find_gateways(state_dir, served, unreadable)
        ev.unattributed = len(unreadable)
    except (psutil.Error, OSError) as e:
        ev.errors.append(f"process table not readable: {e}")
    home = shell_env.get("HOME") or os.path.expanduser("~")
    if ev.process is None or not ev.process.env_readable:
        ev.service = service_env(home, state_dir)
    if ev.process is None and ev.service is None:  # this HOME's own installs (its units, then its running
        # profiles) first: another user's gateway on a shared host is the least likely one meant
        ours = os.path.join(os.path.realpath(home), "")
        found = [d for d in dict.fromkeys([*user_unit_state_dirs(home), *served]) if d != _norm(state_dir)]
        ev.elsewhere = sorted(found, key=lambda d: not d.startswith(ours))[:5]
    if ev.process is None and ev.service is not None and ev.service.argv:
        ev.service.runtime = measure(ev.service.argv, {**ev.shell_env, **ev.service.env})
    ev.provider_keys = provider_key_names(ev, home)
    return ev


def none_running(ev: GatewayEvidence | None) -> bool:
    """Measured that no gateway process can be serving this state dir (pure): the process table was read, no
    gateway process serves it, and every other gateway process's state dir was read (another user's gateway,
    whose environment is hidden, may be this one). ``False`` when any of that is unknown. A recording says
    the same with its gateway ``source`` ``systemd``/``launchd``/``shell`` (no process was found)."""
    if ev is None or ev.processes or any(e.startswith("process table not readable") for e in ev.errors):
        return False
    return (ev.unattributed == 0) if ev.unattributed is not None else ev.other_gateways == 0


def effective_env(ev: GatewayEvidence) -> tuple[dict[str, str], Literal["process", "systemd", "launchd", "shell"]]:
    """(PATH/HOME/OPENCLAW_* the gateway runs with, source): ``process``, ``systemd``, ``launchd`` or ``shell``.

    For a service file, keys the unit does not set come from the shell (HOME); its PATH is the unit's own,
    else the manager's (:func:`service_env`), never the shell's — a login shell's PATH is not a service's.
    """
    p = ev.process
    if p is not None and p.env_readable and p.env:
        return dict(p.env), "process"
    if ev.service is not None:
        return {**ev.shell_env, **ev.service.env}, ev.service.kind
    return dict(ev.shell_env), "shell"


#: the variables OpenClaw derives its home-relative paths from: the default workspace ``<home>/.openclaw/workspace``
#: (``workspace-<profile>``), ``~`` in a configured path (``resolveUserPath``), the default state dir
HOME_KEYS = ("HOME", "OPENCLAW_HOME", "OPENCLAW_PROFILE")


def home_env(ev: GatewayEvidence) -> tuple[dict[str, str], Literal["process", "systemd", "launchd", "shell"]]:
    """(the :data:`HOME_KEYS` the gateway runs with, source) — the one place that decides the gateway's home
    (pure): its running process's own (no key of this shell mixed in: a shell's ``OPENCLAW_HOME`` is not the
    gateway's), else its service file's ``Environment=`` over this shell's (:func:`effective_env`: a system unit's
    ``User=`` home), else this shell's. A gateway run with another ``HOME`` (a service user) has another default
    workspace and another ``~`` than the operator's shell (breaker round 21, #2)."""
    env, where = effective_env(ev)
    return {k: env[k] for k in HOME_KEYS if (env.get(k) or "").strip()}, where


def interpret(ev: GatewayEvidence) -> GatewayFacts:
    """The receipt's ``gateway`` facts (pure)."""
    env, source = effective_env(ev)
    p = ev.process
    svc = ev.service if source in ("systemd", "launchd") else None
    g = GatewayFacts(running=p is not None, pid=p.pid if p else None, env_source=source,
                     path_dirs=[d for d in env.get("PATH", "").split(os.pathsep) if d], reload_mode=ev.reload_mode,
                     service_file=svc.file if svc else None, service_scope=svc.scope if svc else None,
                     runtime_fault=runtime_fault(svc.runtime) if svc and p is None and svc.runtime else None,
                     provider_keys=ev.provider_keys if source != "shell" else None)
    if p is None or ev.log is None:
        return g
    since = p.started_at
    facts = ev.log
    if since is not None:
        facts = facts.model_copy(update={
            "config_changes": [c for c in facts.config_changes if c.at is None or c.at >= since],
            "boots": [b for b in facts.boots if b >= since]})
    d, keys, detail = drift(facts)
    g.drift, g.drift_keys = d, keys
    if d:
        g.drift_reason = "stale_manager"
    return g


def runtime_fault(rt: ServiceRuntime) -> str | None:
    """Why the service cannot start this OpenClaw (pure): its Node does not run, or is outside the range the
    openclaw package requires; ``None`` when it is supported or not judged."""
    if rt.version is None:
        return f"the service's Node {rt.node} does not run ({rt.error}): the gateway cannot start"
    if rt.supported is False:
        return (f"the service runs OpenClaw under Node {rt.version.lstrip('v')} ({rt.node}); this OpenClaw requires "
                f"Node {rt.required} (engines.node of {os.path.dirname(os.path.realpath(rt.entry or ''))}): "
                "the gateway cannot start")
    return None


def drift_detail(ev: GatewayEvidence) -> str | None:
    """The log line that decided a drift (for the receipt's evidence), or ``None``."""
    if ev.log is None:
        return None
    _, keys, detail = drift(ev.log)
    return f"{detail} after a change of {', '.join(keys)}" if keys else None
