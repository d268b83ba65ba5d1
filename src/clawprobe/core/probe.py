"""The probe orchestrator: find the install, run the probes, fill one :class:`~clawprobe.core.receipt.Receipt` per agent.

* :func:`discover` — locate the state dir, config, agents, the ``openclaw`` executable and its version,
  the gateway (never raises; ``installed`` False + ``reason`` when there is nothing to probe).
* :func:`fast` — everything except the ``openclaw`` CLI: config, gateway env + log, qmd binary + store
  check (cached per binary identity, see :data:`QMD_CHECK_TTL_S`), QMD/builtin index read-only, workspace
  vs index freshness, model cache. Merges the last :class:`SlowEvidence` (``None`` → those facts stay
  unproven).
* :func:`slow` — the 3–6 s ``openclaw`` CLI probes: ``memory status --json``, the canary retrieval
  ``memory search TOKEN --json`` and a direct qmd cross-check with the agent's XDG env.
* :func:`collect` = slow (optional) + fast. :func:`watch_targets` — what a file change re-probes.

Every command runs through :func:`clawprobe.core.proc.run` with an environment built here: the gateway's PATH/HOME/
OPENCLAW_* (or the service file's, or the shell's, said in ``gateway.env_source``), never the caller's whole
environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from clawprobe.core.evidence import CanarySpec, DirectQmd, Evidence, Extra, SlowEvidence, StoreEvidence
from clawprobe.core.gc_pause import gc_paused
from clawprobe.core.interpret import SEARCH_HUNG, canary_facts, interpret, slow_facts
from clawprobe.core.locate import (
    GATEWAY_CONFIG_SOURCE,
    Located,
    QmdHome,
    adds_node_dir_to_qmd_path,
    agent_ids,
    config_path,
    default_agent_id,
    default_log_file,
    has_qmd_backend,
    home_dir,
    normalize_agent_id,
    profile_state_dirs,
    qmd_home,
    refused_agent,
    workspace_dir,
)
from clawprobe.core.locate import (
    state_dir as locate_state_dir,
)
from clawprobe.core.mapping import as_mapping
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes import version_fact
from clawprobe.core.probes.config import ConfigSnapshot, MemorySettings, config_facts, log_file_for, memory_settings, read_config
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.probes.openclaw_path import bootstrap_path
from clawprobe.core.probes.service_runtime import service_cli
from clawprobe.core.probes.state_db import writer_version
from clawprobe.core.probes.workspace_cache import WorkspaceCache
from clawprobe.core.proc import run
from clawprobe.core.receipt import BackendFacts, BuiltinFacts, Finding, QmdFacts, Receipt, StatusClaim
from clawprobe.core.redaction import redact_text
from clawprobe.core.runrecord import RunRecord, record_run
from clawprobe.core.shell import word as shell_word

if TYPE_CHECKING:
    from clawprobe.core.probes.qmd_index import IndexedDoc
    from clawprobe.core.probes.qmd_yml import QmdCollection

QMD_CHECK_TTL_S = 300.0  # a qmd binary/store check is re-run after this, or at once when its inputs change
DIRECT_QMD_TIMEOUT_S = 15.0
# clawprobe's own settings that probes honour (paths and thresholds, never secrets).
CLAWPROBE_ENV_KEYS = ("CLAWPROBE_OPENCLAW", "CLAWPROBE_DATA_DIR", "CLAWPROBE_STALL_AFTER_S", "CLAWPROBE_WARMUP_WINDOW_S")
SHELL_ENV_KEYS = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "USER", "LOGNAME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")


class WatchTarget(BaseModel):
    """A path whose change should trigger a re-probe. ``kind``: ``config``, ``workspace``, ``memory``,
    ``extra``, ``qmd_index``, ``models``, ``log``. For a missing path, ``path`` is its nearest existing
    parent and ``exists`` is False (``wanted`` keeps the original)."""

    model_config = ConfigDict(extra="forbid")
    path: str
    kind: str
    exists: bool
    wanted: str | None = None


class ProbeContext(BaseModel):
    """Where the OpenClaw install is (source: environment, filesystem, process table, ``openclaw --version``).

    ``env`` holds only non-secret keys of the caller's environment (PATH, HOME, TMPDIR, OPENCLAW_*…).
    ``openclaw`` is the argv prefix that runs the CLI (``[wrapper]`` or ``[node, openclaw.mjs]``), with
    ``openclaw_source``. ``agents`` are the configured agent ids, the default first.
    """

    model_config = ConfigDict(extra="forbid")
    installed: bool
    reason: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    state_dir: Located
    config_path: Located
    config: ConfigSnapshot
    openclaw: list[str] | None = None
    openclaw_source: str | None = None
    openclaw_version: str | None = None
    version_error: str | None = None
    agents: list[str] = Field(default_factory=list)
    default_agent: str = "main"
    gateway: gw.GatewayEvidence | None = None
    discovered_at: datetime | None = None
    #: the values of the ``${VAR}`` the config references, from the caller's environment — passed to clawprobe's own
    #: ``openclaw`` runs only (they may be credentials: never serialized, printed or stored)
    _config_vars: dict[str, str] = PrivateAttr(default_factory=dict)

    def config_vars(self) -> dict[str, str]:
        """The referenced variables' values for an ``openclaw`` child (see ``_config_vars``)."""
        return dict(self._config_vars)


# --------------------------------------------------------------------------------------------------------
# discover
# --------------------------------------------------------------------------------------------------------

_VERSION_CACHE: dict[str, tuple[str | None, str | None]] = {}  # version_fact.identity as JSON → answer
_LOCK = threading.Lock()


def _safe_shell_env(env: Mapping[str, str]) -> dict[str, str]:
    out = {k: env[k] for k in SHELL_ENV_KEYS if env.get(k)}
    out.update(gw.safe_env({k: v for k, v in env.items() if k.startswith("OPENCLAW_")}))
    out.update({k: env[k] for k in CLAWPROBE_ENV_KEYS if env.get(k)})
    return out


def openclaw_version(argv: list[str], env: Mapping[str, str], *, keep_out: str | None = None,
                     cwd: str | None = None) -> tuple[str | None, str | None]:
    """(version, error) from ``openclaw --version`` run in ``cwd`` (:func:`_version_cwd`), cached per identity of
    the program that answers (:mod:`.probes.version_fact`): in this process (an error too), and a version across
    processes (not inside ``keep_out``, the OpenClaw state dir)."""
    key = version_fact.identity(argv, env)
    memo = json.dumps(key)
    with _LOCK:
        if memo in _VERSION_CACHE:
            return _VERSION_CACHE[memo]
    version: str | None = version_fact.load(argv, key)
    err = None
    if version is None:
        p = oc.run_version(argv, env, cwd=cwd)
        version = oc.parse_version(p.stdout)
        err = None if version else (p.reason or f"`openclaw --version` exit {p.rc}: "
                                              f"{redact_text((p.stderr or p.stdout).strip())[:200]}")
        if version:
            version_fact.save(argv, key, version, keep_out=keep_out)
    with _LOCK:
        _VERSION_CACHE[memo] = (version, err)
    return version, err


def _version_cwd(gwe: gw.GatewayEvidence | None, env: Mapping[str, str]) -> str | None:
    """Where ``openclaw --version`` runs: the running gateway's working directory, else the CLI environment's home
    (where the operator's shell and a user service start), else ``/``. Not ``/`` by default: OpenClaw's launcher
    on a Node it cannot run on (2026.9.6 under Node 20) retries with a ``node`` from PATH, but refuses one under its
    working directory — under ``/`` every one — so the probe failed where the operator's shell answered (breaker
    round 23, #2)."""
    p = gwe.process if gwe is not None else None
    for d in ((p.cwd if p is not None else None), env.get("HOME")):
        if d and os.path.isdir(d):
            return d
    return None


def _find_openclaw(explicit: str | None, env: Mapping[str, str], gwe: gw.GatewayEvidence | None
                   ) -> tuple[list[str] | None, str | None]:
    if explicit:
        return [explicit], "--openclaw"
    if env.get("CLAWPROBE_OPENCLAW"):
        return [env["CLAWPROBE_OPENCLAW"]], "$CLAWPROBE_OPENCLAW"
    p = gwe.process if gwe else None
    if p is not None and p.exe and p.script and os.path.isfile(p.script):
        return [p.exe, p.script], f"running gateway (pid {p.pid})"
    svc = gwe.service if gwe is not None and p is None else None
    if gwe is not None and svc is not None and (svc.runtime is None or svc.runtime.supported is not False):
        cli = service_cli(svc.argv, [d for d in gw.effective_env(gwe)[0].get("PATH", "").split(os.pathsep) if d])
        if cli is not None:
            return cli, f"the gateway's service file ({svc.file})"
    gw_path = (p.env.get("PATH") if p is not None else None) or ""
    for path, where in ((gw_path, "gateway PATH"), (env.get("PATH", ""), "shell PATH")):
        found = shutil.which("openclaw", path=path) if path else None
        if found:
            return [found], where
    return None, None


def discover(state_dir: str | None = None, config: str | None = None, env: Mapping[str, str] | None = None,
             *, openclaw: str | None = None, now: datetime | None = None) -> ProbeContext:
    """Locate the OpenClaw install like OpenClaw does. Never raises for a missing install.

    ``env`` defaults to ``os.environ``; it is used for locations and ``${VAR}`` only — the context keeps a
    non-secret subset. ``openclaw`` (or ``$CLAWPROBE_OPENCLAW``) pins the CLI to run; otherwise the running
    gateway's own binary, then ``openclaw`` on the gateway PATH, then on the shell PATH.
    """
    src = dict(os.environ if env is None else env)
    shell = _safe_shell_env(src)
    st = locate_state_dir(src, state_dir)
    cp = config_path(src, st.path, config)
    snap = read_config(cp.path, src, st.path)
    reload_mode = memory_settings(snap.tree, "main").reload_mode if snap.error is None else None
    gwe = gw.gather(st.path, shell, reload_mode)
    if config is None and not src.get("OPENCLAW_CONFIG_PATH"):  # the gateway's own config, where it names one
        cp, snap = _gateway_config(gwe, st, src, cp, snap)
    resolved, snap = _with_gateway_vars(gwe, st, src, cp, snap)
    argv, how = _find_openclaw(openclaw, src, gwe)
    refs = {n: resolved[n] for n in snap.env_names if resolved.get(n)}
    version = err = None
    if argv is not None:
        venv = _cli_env(shell, gwe, st, cp, refs)
        version, err = openclaw_version(argv, venv, keep_out=st.path, cwd=_version_cwd(gwe, venv))
    installed = os.path.isdir(st.path) or snap.exists or argv is not None or gwe.process is not None
    reason = None
    if not installed:
        reason = (f"no OpenClaw install found: no state dir at {st.path} ({st.source}), no config, no running "
                  "gateway, and no `openclaw` on PATH" + _profile_hint(src, st))
    ids = agent_ids(snap.tree) if snap.error is None else ["main"]
    ctx = ProbeContext(installed=installed, reason=reason, env=shell, state_dir=st, config_path=cp, config=snap,
                        openclaw=argv, openclaw_source=how, openclaw_version=version, version_error=err, agents=ids,
                        default_agent=default_agent_id(snap.tree) if snap.error is None else "main", gateway=gwe,
                        discovered_at=now or datetime.now(UTC))
    ctx._config_vars = refs
    return ctx




def _gateway_config(gwe: gw.GatewayEvidence, st: Located, src: Mapping[str, str], cp: Located, snap: ConfigSnapshot
                    ) -> tuple[Located, ConfigSnapshot]:
    """The config the gateway runs with when its process or service sets ``OPENCLAW_CONFIG_PATH`` and this shell
    does not (a unit's ``Environment=OPENCLAW_CONFIG_PATH=%h/etc/oc.json5``): the shell's ``<state>/openclaw.json``
    is then not the gateway's (breaker round 5: clawprobe checked an old config's workspace and its repair
    "healed" a workspace the gateway never indexes). Else ``(cp, snap)`` unchanged."""
    genv, where = gw.effective_env(gwe)
    if where == "shell" or not (genv.get("OPENCLAW_CONFIG_PATH") or "").strip():
        return cp, snap
    theirs = config_path({**src, **genv}, st.path)
    if os.path.normpath(theirs.path) == os.path.normpath(cp.path):
        return cp, snap
    label = f"{GATEWAY_CONFIG_SOURCE} ({'running process' if where == 'process' else where})"
    return Located(path=theirs.path, source=label), read_config(theirs.path, src, st.path)


def _with_gateway_vars(gwe: gw.GatewayEvidence, st: Located, src: dict[str, str], cp: Located,
                       snap: ConfigSnapshot) -> tuple[dict[str, str], ConfigSnapshot]:
    """(environment, config) with the ``${VAR}`` the config references resolved as the gateway resolves them: from
    its own environment (:func:`.probes.gateway.gateway_vars`), which wins over this shell's — a workspace
    ``${OC_NOTES}/ws`` whose variable only the service's ``Environment=`` sets is the gateway's workspace, not a
    missing one (breaker round 7, w02) —, and one the gateway's known environment does not set is unset, whatever
    this shell holds (the same reading: a ``${QMD_BIN}`` command only the shell sets was
    healthy while the gateway fell back, breaker round 15, A1); OpenClaw's dotenv files still fill it (the config
    reader) — the gateway's ``~/.config/openclaw/gateway.env`` read under the gateway's home
    (:func:`.probes.gateway.home_env`), not this shell's. Unchanged when the gateway sets none of them differently."""
    home = src.get("HOME") or os.path.expanduser("~")
    theirs, lacking = gw.gateway_vars(gwe, snap.env_names, home)
    their_home, where = gw.home_env(gwe)
    if where != "shell":  # the dotenv the gateway loads is under its own home (~/.config/openclaw/gateway.env)
        theirs = {**their_home, **theirs}
    lacks = [n for n in lacking if src.get(n)]
    if all(src.get(k) == v for k, v in theirs.items()) and not lacks:
        return src, snap
    merged = {k: v for k, v in src.items() if k not in lacks}
    merged.update(theirs)
    snap = read_config(cp.path, merged, st.path)
    err = snap.error
    if err is not None and err.kind == "env" and (name := next((n for n in lacks if f"${{{n}}}" in err.message), None)):
        _, where = gw.effective_env(gwe)
        what = f"its {where} unit {gwe.service.file}" if gwe.service is not None and where != "process" else \
            "its running process"
        snap.error = err.model_copy(update={"message": (
            f"{err.message}: this shell sets ${name}, the gateway's environment ({what}) does not — it logs "
            f"\"missing env var\" and runs without it")})
    return merged, snap


def _profile_hint(env: Mapping[str, str], st: Located) -> str:
    """Where the default state dir is missing: the profiles' state dirs that exist (``openclaw --profile work``
    keeps its state in ``~/.openclaw-work``), as the ``--state-dir`` to check them with; ``""`` otherwise."""
    if st.source.startswith(("--state-dir", "$")) or os.path.exists(st.path):
        return ""
    found = profile_state_dirs(env)
    if not found:
        return ""
    others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"; a profile's state is at {found[0]}{others}: clawprobe check --state-dir {shell_word(found[0])}"


def _cli_env(shell: Mapping[str, str], gwe: gw.GatewayEvidence | None, st: Located, cp: Located,
             config_vars: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for ``openclaw`` CLI probes: the gateway's PATH/HOME/OPENCLAW_* (else the service's or
    the shell's), the state dir/config clawprobe resolved, TMPDIR/LANG from the shell, ``NO_COLOR=1`` — and the
    ``${VAR}`` the config references (``config_vars``, :meth:`ProbeContext.config_vars`): without them OpenClaw
    reads another config ("missing env var … at memory.search.extraPaths[0]") and judges another index scope."""
    base, _ = gw.effective_env(gwe) if gwe is not None else (dict(shell), "shell")
    env = {k: v for k, v in base.items() if k in ("PATH", "HOME") or k.startswith("OPENCLAW_")}
    env.setdefault("PATH", shell.get("PATH", "/usr/bin:/bin"))
    if shell.get("HOME"):
        env.setdefault("HOME", shell["HOME"])
    for k in ("TMPDIR", "LANG"):
        if shell.get(k):
            env[k] = shell[k]
    env.setdefault("LANG", "C.UTF-8")
    env["NO_COLOR"] = "1"
    env["OPENCLAW_STATE_DIR"] = st.path
    if cp.source in ("--config", "$OPENCLAW_CONFIG_PATH") or cp.source.startswith(GATEWAY_CONFIG_SOURCE):
        env["OPENCLAW_CONFIG_PATH"] = cp.path
    for k, v in (config_vars or {}).items():
        env.setdefault(k, v)
    return env


# --------------------------------------------------------------------------------------------------------
# helpers shared by fast/slow
# --------------------------------------------------------------------------------------------------------

def _gateway_cwd(ctx: ProbeContext) -> str | None:
    """The running gateway's working directory (``/proc/<pid>/cwd``), ``None`` when none runs or it is unread."""
    p = ctx.gateway.process if ctx.gateway is not None else None
    return p.cwd if p is not None and p.cwd else None


def refused(ctx: ProbeContext, agent_id: str | None) -> str | None:
    """Why ``--agent agent_id`` names no agent the discovered OpenClaw knows
    (:func:`clawprobe.core.locate.refused_agent`: a removed agent's left-over dir on 2026.8+), or ``None`` — also
    when no id was given or the config does not load (the check says that itself)."""
    if not agent_id or ctx.config.error is not None:
        return None
    return refused_agent(ctx.config.tree, ctx.state_dir.path, agent_id, ctx.openclaw_version)


def path_env(ctx: ProbeContext) -> dict[str, str]:
    """``ctx.env`` with the gateway's home (:func:`.probes.gateway.home_env`: its process's ``HOME``/``OPENCLAW_HOME``/
    ``OPENCLAW_PROFILE``, else its service file's, else this shell's) — the environment every path the gateway
    derives from its home is resolved with here: the default workspace, ``~`` in the workspace, extra paths, QMD
    paths, the sessions export dir and ``logging.file``. A gateway run with another ``HOME`` (a service user) reads
    ``<its home>/.openclaw/workspace``, not the operator's (breaker round 21, #2: the operator's notes were
    checked and the gateway's missing workspace was never seen). clawprobe's own data dir keeps this shell's."""
    if ctx.gateway is None:
        return dict(ctx.env)
    theirs, where = gw.home_env(ctx.gateway)
    if where == "shell":
        return dict(ctx.env)
    out = {k: v for k, v in ctx.env.items() if k not in gw.HOME_KEYS or (k == "HOME" and "HOME" not in theirs)}
    out.update(theirs)
    return out


def gateway_home(ctx: ProbeContext) -> str:
    """The home directory the gateway resolves ``~`` and its default workspace with (:func:`path_env`)."""
    return home_dir(path_env(ctx))


def workspace_of(ctx: ProbeContext, agent_id: str) -> Located:
    """The agent's workspace as the running gateway resolves it (a relative one against its working directory, the
    default one and ``~`` with its home: :func:`path_env`); the one reading the probes, the canary commands and
    the dashboard use."""
    env = path_env(ctx)
    loc = workspace_dir(ctx.config.tree, agent_id, env, ctx.state_dir, ctx.openclaw_version, _gateway_cwd(ctx))
    mine = workspace_dir(ctx.config.tree, agent_id, ctx.env, ctx.state_dir, ctx.openclaw_version, _gateway_cwd(ctx))
    if os.path.normpath(mine.path) != os.path.normpath(loc.path):
        _, where = gw.home_env(ctx.gateway) if ctx.gateway is not None else ({}, "shell")
        by = "its running process" if where == "process" else f"its {where} service file"
        loc = loc.model_copy(update={"source": f"{loc.source}; the gateway's home {home_dir(env)} ({by}), not this "
                                               f"shell's {home_dir(ctx.env)}"})
    return loc


def _gateway_env(ctx: ProbeContext) -> tuple[dict[str, str], str]:
    if ctx.gateway is None:
        return dict(ctx.env), "shell"
    return gw.effective_env(ctx.gateway)


def _agent_qmd_env(ctx: ProbeContext, agent_id: str) -> tuple[dict[str, str], list[str], str, QmdHome]:
    """(qmd child env, the qmd child's PATH dirs, PATH source, QMD home) as OpenClaw builds them for this agent: on
    builds that rewrite their PATH at start-up (:mod:`.probes.openclaw_path`, 2026.7.x) the rewritten one — the
    PATH qmd is looked up on and runs with — else the gateway's PATH as found."""
    env, source = _gateway_env(ctx)
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d]
    if adds_node_dir_to_qmd_path(ctx.openclaw_version):  # the PATH the gateway really spawns qmd with (and through)
        p = ctx.gateway.process if ctx.gateway else None
        node_dir = p.node_dir if p is not None else None
        if node_dir is None and ctx.openclaw:
            node_dir = node_dir_of(ctx.openclaw, dirs)
        dirs = qb.child_path(bootstrap_path(dirs, node_dir, {"HOME": ctx.env.get("HOME", ""), **env}), node_dir)
    home = qmd_home(ctx.state_dir.path, agent_id)
    extra = {k: ctx.env[k] for k in ("TMPDIR",) if ctx.env.get(k)}
    extra.update(qb.passed_through(env))
    return qb.qmd_env(home, dirs, env.get("HOME") or ctx.env.get("HOME"), extra), dirs, source, home


_NODE_IN_WRAPPER = re.compile(r"""(/[^\s"']*/node)["'\s]""")


def node_dir_of(argv: list[str], path_dirs: list[str]) -> str | None:
    """The bin dir of the Node that runs this ``openclaw`` command: ``[node, openclaw.mjs]`` → node's dir;
    a ``#!/usr/bin/env node`` script → ``node`` on ``path_dirs``; a shell wrapper → the absolute ``…/node``
    it execs. ``None`` when it cannot be told (source: the executable's first 4 KiB)."""
    first = os.path.realpath(argv[0]) if argv else ""
    if os.path.basename(first).startswith("node") and not first.endswith((".mjs", ".js")):
        return os.path.dirname(first)
    interp = qb.shebang(first)
    if interp and os.path.basename(interp).startswith("node"):
        found = interp if os.path.isabs(interp) else qb.which(interp, path_dirs)
        return os.path.dirname(found) if found else None
    with contextlib.suppress(OSError):
        with open(first, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
        m = _NODE_IN_WRAPPER.search(head)
        if m and os.path.isfile(m[1]):
            return os.path.dirname(m[1])
    return None


_QMD_CACHE: dict[tuple, tuple[float, QmdFacts, qb.QmdBinaryEvidence]] = {}


def _qmd_key(ctx: ProbeContext, agent_id: str, s: MemorySettings, workspace: str
             ) -> tuple[tuple, dict[str, str], list[str], str, QmdHome]:
    """The qmd check's cache key (binary identity, PATH, interpreter, index presence) and its inputs."""
    env, dirs, source, home = _agent_qmd_env(ctx, agent_id)
    command = s.qmd_command or "qmd"
    how, resolved = qb.resolve(command, dirs, workspace)
    binary = tuple(version_fact.file_identity(resolved)) if resolved else None
    key = (command, tuple(s.qmd_command_args), tuple(dirs), env.get("PATH"), ctx.env.get("PATH"), binary,
           os.path.isfile(home.index), home.index, workspace, tuple(sorted(qb.passed_through(env).items())))
    return key, env, dirs, source, home


def _qmd_cached(key: tuple, now: float) -> tuple[QmdFacts, qb.QmdBinaryEvidence] | None:
    with _LOCK:
        hit = _QMD_CACHE.get(key)
    return (hit[1], hit[2]) if hit is not None and now - hit[0] <= QMD_CHECK_TTL_S else None


def check_qmd(ctx: ProbeContext, agent_id: str, *, clock: Callable[[], float] = time.monotonic) -> bool:
    """Run the agent's qmd binary + store check (``qmd --version``, then the store command: two Node starts,
    ≈ 0.4 s) and keep it in the cache a following ``gather(..., qmd_check=False)`` reads. The dashboard runs
    it in its own worker so the first frame does not wait for it. False when there is no qmd to check (the
    config does not load, names no QMD backend, or this OpenClaw has none)."""
    aid = normalize_agent_id(agent_id)
    ws = workspace_of(ctx, aid)
    if config_facts(ctx.config, aid, ctx.openclaw_version, ws.path).error is not None:
        return False
    s = memory_settings(ctx.config.tree, aid)
    if s.configured_backend != "qmd" or has_qmd_backend(ctx.openclaw_version) is False:
        return False
    _qmd_check(ctx, aid, s, ws.path, clock)
    return True


def _qmd_check(ctx: ProbeContext, agent_id: str, s: MemorySettings, workspace: str, clock: Callable[[], float]
               ) -> tuple[QmdFacts, qb.QmdBinaryEvidence]:
    """The qmd binary + store check of ``s.qmd_command``, cached while its inputs are unchanged (binary identity,
    PATH, interpreter, index presence) for at most :data:`QMD_CHECK_TTL_S`."""
    (key, env, dirs, source, home), now = _qmd_key(ctx, agent_id, s, workspace), clock()
    hit = _qmd_cached(key, now)
    if hit is not None:
        return hit
    shell = [d for d in ctx.env.get("PATH", "").split(os.pathsep) if d]
    ev = qb.gather(s.qmd_command or "qmd", dirs, source, workspace, env, home.index, shell_dirs=shell,
                   command_args=s.qmd_command_args)
    facts = qb.interpret(ev)
    with _LOCK:
        _QMD_CACHE[key] = (now, facts, ev)
    return facts, ev


def clear_caches() -> None:
    """Forget cached ``openclaw --version`` answers (kept ones too) and qmd checks and QMD index reads (tests,
    benchmarks)."""
    from clawprobe.core.probes.qmd_index import clear_read_cache

    with _LOCK:
        _VERSION_CACHE.clear()
        _QMD_CACHE.clear()
    version_fact.forget()
    clear_read_cache()


def log_scope(ctx: ProbeContext, agent_id: str) -> oclog.LogScope:
    """Which log records are ``agent_id``'s (:class:`~clawprobe.core.probes.openclaw_log.LogScope`): its configured qmd
    command (as written and resolved), and ``not_before`` = the newest of the config files' mtime and the
    running gateway's start (source: the config snapshot, the process table)."""
    aid = normalize_agent_id(agent_id)
    cmds: list[str] = []
    if ctx.config.error is None:
        s = memory_settings(ctx.config.tree, aid)
        if s.configured_backend == "qmd":
            cmds = [c for c in dict.fromkeys([s.qmd_command_raw or "qmd", s.qmd_command or "qmd"]) if c]
    marks = []
    if ctx.config.mtime:
        marks.append(datetime.fromtimestamp(ctx.config.mtime, tz=UTC))
    p = ctx.gateway.process if ctx.gateway is not None else None
    if p is not None and p.started_at is not None:
        marks.append(p.started_at)
    lf = as_mapping(as_mapping(ctx.config.tree).get("logging")).get("file") if ctx.config.error is None else None
    return oclog.LogScope(agent_id=aid, qmd_commands=cmds, not_before=max(marks) if marks else None,
                          other_agents=[a for a in ctx.agents if a != aid], writers=openclaw_packages(ctx),
                          shared=not (isinstance(lf, str) and lf.strip()),
                          gateway_since=p.started_at if p is not None else None, state_dir=ctx.state_dir.path)


_MJS = re.compile(r"""(/[^\s"'`]+/openclaw\.mjs)\b""")


def openclaw_packages(ctx: ProbeContext) -> list[str]:
    """The OpenClaw package dirs (the dir of ``openclaw.mjs``, real path) this install runs: the running
    gateway's script and the CLI clawprobe runs (its ``openclaw.mjs``, the target of an npm bin link, or the
    one a small wrapper script execs). Empty when none is known, or a gateway runs whose package is not known
    (source: the process table, the file system)."""
    found: list[str] = []
    p = ctx.gateway.process if ctx.gateway is not None else None
    cands: list[str] = []
    if p is not None:
        script = os.path.join(p.cwd, p.script) if p.script and p.cwd else p.script
        if not (script and os.path.isabs(script) and script.endswith("openclaw.mjs") and os.path.isfile(script)):
            return []  # a gateway runs from a package not known: every writer may be it
        cands.append(script)
    argv = ctx.openclaw or []
    if argv:
        real = os.path.realpath(argv[-1])
        if real.endswith(".mjs"):
            cands.append(real)
        else:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if os.path.isfile(real) and os.path.getsize(real) < 4096:
                    with open(real, "rb") as f:
                        head = f.read(4096)
                    if head.startswith(b"#!"):
                        cands += _MJS.findall(head.decode())
    for c in cands:
        if c.endswith("openclaw.mjs") and os.path.isfile(c):
            d = os.path.dirname(os.path.realpath(c))
            if d not in found:
                found.append(d)
    return found


def _unseen_roots(ctx: ProbeContext, s: MemorySettings, workspace: str, collections: Sequence[QmdCollection],
                  *, managed: bool = False) -> list[str]:
    """The agent's configured QMD roots (``memory.qmd.paths``, ``memorySearch.extraPaths`` and
    ``.qmd.extraCollections``; with ``managed``, first the workspace and its ``memory/`` unless
    ``includeDefaultMemory`` is off) that no collection of its index covers
    (:func:`~clawprobe.core.probes.unseen_collections.unseen_roots`)."""
    from clawprobe.core.probes.unseen_collections import unseen_roots

    own = [workspace, os.path.join(workspace, "memory")] if managed and s.include_default_memory else []
    return unseen_roots([*own, *_qmd_roots(s)], collections, workspace, gateway_home(ctx))


def _qmd1_index_under_qmd2(ctx: ProbeContext, aid: str, s: MemorySettings) -> bool:
    """Whether the agent's QMD index has qmd 1.x's schema (:func:`~clawprobe.core.probes.qmd_index.qmd1_schema`) while
    the configured qmd is 2.x or later (the qmd check, cached; run only for such an index): every search — OpenClaw's
    and the direct cross-check — would migrate it (breaker round 8, n05)."""
    from clawprobe.core.probes.qmd_index import qmd1_schema

    db = qmd_home(ctx.state_dir.path, aid).index
    if not (os.path.isfile(db) and qmd1_schema(db)):
        return False
    facts, _ = _qmd_check(ctx, aid, s, workspace_of(ctx, aid).path, time.monotonic)
    major = (facts.version or "").split(".", 1)[0]
    return major.isdigit() and int(major) >= 2


def _emptied_roots(ctx: ProbeContext, aid: str, s: MemorySettings) -> dict[str, int]:
    """The agent's builtin ``extraPaths`` roots (empty or gone) that hold none of the notes its index lists under them,
    each with that count (:func:`~clawprobe.core.probes.workspace.emptied_roots`; the index read read-only);
    ``{}`` without extra paths or an index."""
    if not s.extra_paths:
        return {}
    from clawprobe.core.probes.builtin_index import read_builtin_index
    from clawprobe.core.probes.workspace import emptied_roots

    facts = read_builtin_index(ctx.state_dir.path, aid, quick_check=False)
    return emptied_roots(s.extra_paths, workspace_of(ctx, aid).path, gateway_home(ctx),
                         (r.path for r in facts.sources if r.source == "memory"))


def _qmd_emptied_roots(ctx: ProbeContext, s: MemorySettings, workspace: str, cols: Sequence[QmdCollection],
                       docs: Iterable[IndexedDoc]) -> dict[str, int]:
    """The configured QMD roots (:func:`_qmd_roots`) that are gone or an empty directory while the index lists
    notes under them (:func:`~clawprobe.core.probes.workspace.emptied_roots`; a document's path is its
    collection's root joined with its qmd path). Only gone or empty: qmd may store a name other than the file's,
    so a root holding anything is never called emptied."""
    from clawprobe.core.probes.workspace import emptied_roots

    where = {c.name: c.path for c in cols if c.path}
    found = emptied_roots(_qmd_roots(s), workspace, gateway_home(ctx),
                          (os.path.join(where[d.collection], d.path) for d in docs if d.collection in where))
    return {p: n for p, n in found.items() if not os.path.isdir(p) or not _has_entries(p)}


def _has_entries(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return next(it, None) is not None
    except OSError:
        return True  # unreadable: not known to be empty


def _qmd_roots(s: MemorySettings) -> list[str]:
    """The raw QMD roots the config adds beside the workspace: ``memory.qmd.paths``, ``memorySearch.extraPaths``,
    ``memorySearch.qmd.extraCollections`` (each becomes a collection, 2026.7.35)."""
    return [*s.qmd_paths, *s.extra_paths, *s.qmd_extra_collections]


def _config_mtime(ctx: ProbeContext) -> datetime | None:
    """When the config file last changed (its mtime, UTC), ``None`` when it cannot be stat'ed."""
    try:
        return datetime.fromtimestamp(os.stat(ctx.config.path).st_mtime, tz=UTC) if ctx.config.path else None
    except OSError:
        return None


def _would_create(path: str) -> bool:
    """True when ``path`` does not exist and a process of this user could create it: its nearest existing
    ancestor is a writable directory (a file in the way, or no write permission, means it cannot)."""
    if os.path.lexists(path):
        return False
    cur = os.path.dirname(path)
    while not os.path.lexists(cur) and cur != os.path.dirname(cur):
        cur = os.path.dirname(cur)
    return os.path.isdir(cur) and os.access(cur, os.W_OK | os.X_OK)


#: the probe errors of a CLI run withheld because there is no index to probe (the rules tag them ``never_indexed``)
SEARCH_NOT_RUN_NO_INDEX = "openclaw memory search not run (no index)"
CLI_NOT_RUN_NO_INDEX = "openclaw CLI not run (no index)"
CLI_NOT_RUN_WAL = "openclaw CLI not run (a crashed writer's -wal)"
SEARCH_NOT_RUN_WORKSPACE = "openclaw memory search not run (workspace gone)"
#: withheld because the search would add configured collections to the QMD index (rules: ``collection_pending``)
SEARCH_NOT_RUN_COLLECTIONS = "openclaw memory search not run (collections not in the index)"
#: withheld because qmd 2.x would migrate a qmd 1.x index on the search's first open (rules: ``index_old_schema``)
SEARCH_NOT_RUN_OLD_SCHEMA = "openclaw memory search not run (index of qmd 1.x)"
#: withheld because the search would create a configured QMD path that does not exist (rules: ``root_missing``)
SEARCH_NOT_RUN_MISSING_ROOT = "openclaw memory search not run (configured path missing)"
#: withheld because the search would sync the index against a configured root that holds none of the notes the index
#: lists there — an empty mount point, a root gone — and drop them for good (rules: ``root_emptied``)
SEARCH_NOT_RUN_EMPTIED_ROOT = "openclaw memory search not run (configured path emptied)"


def _builtin_store(state_dir: str, agent_id: str) -> Literal["absent", "empty", "unindexed"] | None:
    """``absent`` when no layout's store file exists (:func:`~clawprobe.core.probes.builtin_index.
    builtin_store_candidates`; a ``-wal``/``-shm`` left behind does not count: the database is gone) and the CLI
    could create the newest one (:func:`_would_create`); ``empty`` when the first existing one is 0 bytes;
    ``unindexed`` when it holds no memory index (:attr:`~clawprobe.core.probes.builtin_index.BuiltinIndexFacts.
    memory_never_indexed`: the agent's database, made for its sessions); else ``None``. Source: ``lstat`` of the
    files, then the store read-only."""
    from clawprobe.core.probes.builtin_index import builtin_store_candidates, read_builtin_index

    paths = [p for _, p in builtin_store_candidates(state_dir, agent_id)]
    present = next((p for p in paths if os.path.lexists(p)), None)
    if present is None:
        return "absent" if _would_create(paths[0]) else None
    with contextlib.suppress(OSError):
        st = os.lstat(present)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            return "empty"
    return "unindexed" if read_builtin_index(state_dir, agent_id, quick_check=False).memory_never_indexed else None


def _builtin_wal_pending(state_dir: str, agent_id: str) -> str | None:
    """How the agent's builtin store has a ``-wal`` with frames no live connection holds (a writer that died
    before its checkpoint: OpenClaw closes the store with an empty ``-wal``), else ``None``. Source:
    :func:`~clawprobe.core.probes.qmd_index.index_file_findings` on the first existing store's file stats."""
    from clawprobe.core.probes.builtin_index import builtin_store_candidates
    from clawprobe.core.probes.qmd_index import index_file_findings
    from clawprobe.core.probes.sqlite_ro import inspect_header

    path = next((p for _, p in builtin_store_candidates(state_dir, agent_id) if os.path.isfile(p)), None)
    if path is None:
        return None
    o = inspect_header(path)
    if not any(f.tag == "index_wal_pending" for f in index_file_findings(o)):
        return None
    return f"has a crashed writer's -wal ({o.wal_bytes} bytes, no process holds it), which OpenClaw would checkpoint"


def would_rewrite(index: str) -> str | None:
    """Why any qmd opening the agent's index now would rewrite it, else ``None``: a 0-byte ``index.sqlite``
    (qmd builds a full index into it) or a ``-wal`` with frames that no live connection holds (the first qmd
    to close it checkpoints the WAL into ``index.sqlite`` and deletes ``-wal``/``-shm``; seen with qmd
    2.8.3). Source: :func:`~clawprobe.core.probes.qmd_index.index_file_findings` on the file stats."""
    from clawprobe.core.probes.qmd_index import index_file_findings
    from clawprobe.core.probes.sqlite_ro import inspect_header

    if not os.path.isfile(index):
        return None
    found = index_file_findings(inspect_header(index))
    return ("a 0-byte index.sqlite, which qmd would build into a full index" if any(f.tag == "index_empty" for f in found)
            else "a crashed writer's -wal, which qmd would checkpoint into index.sqlite (deleting -wal/-shm)"
            if found else None)


#: ``logging.level`` values under which OpenClaw drops the WARN line it writes on a QMD fallback (tslog's order:
#: silly < trace < debug < info < warn < error < fatal; ``silent`` writes nothing)
LEVELS_WITHOUT_WARN = frozenset({"error", "fatal", "silent", "off"})


def _log_plan(ctx: ProbeContext, now: datetime) -> tuple[list[str], str | None]:
    """(the log files to read, why they cannot show the running gateway's fallback line — else ``None``).

    A relative ``logging.file`` is resolved as OpenClaw resolves it: against the working directory of the
    process that writes it — the running gateway's (``/proc/<pid>/cwd``); with none known it is not read (no
    guess: the config dir is not where any OpenClaw writes it). The dated default log: every file of that name
    written since the gateway started (or the last two days), whatever date its name carries. A log folder
    this user cannot list, with no file found in it, is why (:func:`clawprobe.core.probes.openclaw_log.unlistable`);
    a file of these paths it cannot open is not decided here: :func:`clawprobe.core.probes.openclaw_log.read_log`
    says so from its one open of each file (``LogFacts.blind``), and the caller joins the two."""
    proc = ctx.gateway.process if ctx.gateway is not None else None
    tree = as_mapping(ctx.config.tree) if ctx.config.error is None else {}
    logging_cfg = as_mapping(tree.get("logging"))
    raw = logging_cfg.get("file")
    raw = raw.strip() if isinstance(raw, str) and raw.strip() else None
    blind: str | None = None
    if raw is not None and not os.path.isabs(raw) and not raw.startswith("~"):
        if proc is None or proc.cwd is None:
            why = "no running gateway" if proc is None else f"the gateway's (pid {proc.pid}) is not readable"
            return [], (f"logging.file {raw!r} is relative: OpenClaw resolves it against the writing process's "
                        f"working directory, and {why} — the log cannot be located")
        lf: str | None = os.path.normpath(os.path.join(proc.cwd, raw))
    else:
        lf = log_file_for(ctx.config, path_env(ctx)) if ctx.config.error is None else None
    since = proc.started_at if proc is not None else None
    paths = oclog.log_files(lf, now, lambda d: default_log_file(d, path_env(ctx)), since)
    folder = None if paths else os.path.dirname(lf or default_log_file(now, path_env(ctx)))
    if folder is not None and (denied := oclog.unlistable(folder)) is not None:
        blind = f"the log {denied}"
    elif not paths:
        blind = (f"no log file at {lf}" if lf else
                 f"no OpenClaw log in {os.path.dirname(default_log_file(now, path_env(ctx)))} written since "
                 f"{(since or now - oclog.DEFAULT_LOG_WINDOW).isoformat(timespec='seconds')}")
    level = logging_cfg.get("level")
    if isinstance(level, str) and level.strip().lower() in LEVELS_WITHOUT_WARN:
        blind = (f'logging.level "{level.strip()}" drops the WARN line OpenClaw writes when QMD falls back to '
                 "builtin" + (f"; {blind}" if blind else ""))
    return paths, blind


def _log_paths(ctx: ProbeContext, now: datetime) -> list[str]:
    return _log_plan(ctx, now)[0]


# --------------------------------------------------------------------------------------------------------
# canary (bridge to clawprobe.core.canary when it is present)
# --------------------------------------------------------------------------------------------------------

def canary_spec(ctx: ProbeContext, agent_id: str) -> tuple[CanarySpec | None, str | None]:
    """(the active canary of ``agent_id`` from clawprobe's canary record — ``clawprobe.core.canary``, in clawprobe's
    data dir for ``ctx.env`` — or ``None`` when none is planted; why the record could not be read, else ``None``:
    a data dir that is a file, unreadable or damaged record → a probe error, never "no canary planted", whose
    repair — plant one — would fail the same way)."""
    from clawprobe.core import canary as cn
    from clawprobe.core.history import data_dir

    ws = workspace_of(ctx, agent_id).path
    try:
        spec = cn.current_spec(ctx.state_dir.path, agent_id, ws, root=data_dir(ctx.env))
    except cn.CanaryError as e:
        return None, f"clawprobe's canary record not read: {e}"
    if not spec:
        return None, None
    out = CanarySpec.model_validate(spec)
    plain = os.path.normpath(os.path.join(ws, out.expected_path))
    real = os.path.realpath(plain)
    if real != plain:
        out = out.model_copy(update={"workspace": ws, "real_path": real})
    s = memory_settings(ctx.config.tree, agent_id)
    if s.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False:
        from clawprobe.core.probes.qmd_index import qmd_paths, read_qmd_yml

        out.search_paths = _collection_search_paths(read_qmd_yml(qmd_paths(ctx.state_dir.path, agent_id).yml)
                                                    .collections, real)
    return out, None


def _collection_search_paths(collections: Sequence[QmdCollection], real: str) -> list[str]:
    """``qmd/<collection>/<path in it>`` for each collection whose (real) root holds the file at ``real`` — the
    path OpenClaw's QMD search names a hit by outside the workspace (breaker round 12, s20: a canary in a
    ``memory.qmd.paths`` dir beside the workspace came back as ``qmd/team-kb/clawprobe-canary.md`` and was called
    ``wrong_source``)."""
    out = []
    for c in collections:
        root = os.path.realpath(c.path)
        if real.startswith(root.rstrip("/") + "/"):
            out.append(f"qmd/{c.name}/{os.path.relpath(real, root)}")
    return out


# --------------------------------------------------------------------------------------------------------
# slow
# --------------------------------------------------------------------------------------------------------

def _direct_qmd(ctx: ProbeContext, agent_id: str, token: str, workspace: str) -> RunRecord | None:
    """``qmd search TOKEN --json`` on the agent's managed collections with the agent's XDG env (read-only;
    skipped when the index does not exist, so nothing is created; ``QMD_SQLITE_BUSY_TIMEOUT`` 2 s unless set,
    so a locked index fails fast with SQLITE_BUSY)."""
    s = memory_settings(ctx.config.tree, agent_id)
    env, dirs, _, home = _agent_qmd_env(ctx, agent_id)
    if not os.path.isfile(home.index) or would_rewrite(home.index):
        return None
    _, resolved = qb.resolve(s.qmd_command or "qmd", dirs, workspace)
    if not resolved:
        return None
    checked, _ = _qmd_check(ctx, agent_id, s, workspace, time.monotonic)
    if checked.version is None:  # not proven to be qmd (not_qmd, crashed --version): never run it with arguments
        return None
    from clawprobe.core.probes.qmd_index import managed_collection_names

    root, mem = managed_collection_names(agent_id)
    # a writer holding the index (qmd update/embed) must cost seconds, not qmd's 120 s default busy wait
    env = {**env, "QMD_SQLITE_BUSY_TIMEOUT": env.get("QMD_SQLITE_BUSY_TIMEOUT") or qb.STORE_BUSY_TIMEOUT_MS}
    p = run([resolved, "search", token, "--json", "-n", "10", "-c", root, "-c", mem], env, DIRECT_QMD_TIMEOUT_S,
            cwd=workspace if os.path.isdir(workspace) else None)
    return record_run(p, keep=(token,))  # parsed by interpret (clawprobe.core.interpret.canary.direct_of_run)


def _direct_qmd_or_none(ctx: ProbeContext, agent_id: str, token: str, workspace: str) -> RunRecord | None:
    """:func:`_direct_qmd`, ``None`` when it raised ``OSError`` (the cross-check is optional evidence)."""
    with contextlib.suppress(OSError):
        return _direct_qmd(ctx, agent_id, token, workspace)
    return None


def slow(ctx: ProbeContext, agent_id: str, now: datetime | None = None, *, canary: CanarySpec | None = None
         ) -> SlowEvidence:
    """The ``openclaw`` CLI probes for one agent (3–15 s). ``canary`` overrides the planted canary spec.

    Runs ``memory status --json --agent ID``; when a canary exists, ``memory search TOKEN --json --agent ID``
    and (QMD configured, index present) the direct qmd cross-check — concurrently, each with its own
    timeout (the wall time is the slowest call's, not their sum). Each run is kept as printed (a
    :class:`~clawprobe.core.runrecord.RunRecord`, redacted and bounded); interpret parses them. Never raises:
    a probe that was not run says why in ``errors``.
    """
    aid = normalize_agent_id(agent_id)
    ev = SlowEvidence(taken_at=now or datetime.now(UTC), agent_id=aid)
    if ctx.openclaw is None:
        ev.errors.append("no `openclaw` executable found (gateway, PATH, $CLAWPROBE_OPENCLAW)")
        return ev
    if not os.path.isdir(ctx.state_dir.path):
        ev.errors.append(f"openclaw CLI not run: no state dir at {ctx.state_dir.path} ({ctx.state_dir.source}), "
                         "and the CLI would create one" + _profile_hint(ctx.env, ctx.state_dir))
        return ev
    cfg_error = ctx.config.error or config_facts(ctx.config, aid, ctx.openclaw_version, workspace_of(ctx, aid).path).error
    if cfg_error is not None:  # config_invalid wins whatever the CLI says (RW01: no memory probes until it loads)
        ev.errors.append(f"openclaw CLI not run: the config does not load ({cfg_error.kind})")
        return ev
    env = _cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path, ctx.config_vars())
    ev.env_source = _gateway_env(ctx)[1]
    home = env.get("HOME")
    # the CLI resolves relative config paths (a relative workspace) against its working directory: the running
    # gateway's, so it reads what the gateway's agent reads; else the home directory
    gcwd = _gateway_cwd(ctx)
    cwd = gcwd if gcwd and os.path.isdir(gcwd) else home if home and os.path.isdir(home) else None
    s0 = memory_settings(ctx.config.tree, aid)
    if s0.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False \
            and (rewrite := would_rewrite(qmd_home(ctx.state_dir.path, aid).index)) is not None:
        # OpenClaw's own CLI opens the QMD index too (`memory status` rebuilt a crashed writer's -shm, seen with
        # 2026.7.35): the evidence the operator is diagnosing must survive the check
        empty = rewrite.startswith("a 0-byte")
        ev.errors.append(f"{CLI_NOT_RUN_NO_INDEX if empty else CLI_NOT_RUN_WAL}: agent {aid}'s QMD index has {rewrite}")
        return ev
    store = None if s0.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False \
        else _builtin_store(ctx.state_dir.path, aid)
    if store is None and (wal := _builtin_wal_pending(ctx.state_dir.path, aid)) is not None:
        # every OpenClaw command opens the agent's store and checkpoints a crashed writer's -wal into it
        # (2026.9.6: -wal and -shm deleted): the state the operator is diagnosing must survive the check
        ev.errors.append(f"{CLI_NOT_RUN_WAL}: agent {aid}'s builtin store {wal}")
        return ev
    if store == "empty" or (store == "absent" and has_qmd_backend(ctx.openclaw_version) is True):
        # OpenClaw's CLI would build the store: any call a full index into a 0-byte file; 2026.7.35's `memory
        # status` an empty store where none is — so no CLI runs. 2026.9.6's status leaves a missing store absent
        # (its search builds it: withheld below) and reports a config only it rejects; a build whose version is
        # unknown (`--version` failed: a runtime it cannot start on) is asked too — its failure is the evidence.
        what = "is a 0-byte file, which OpenClaw would build into a full index" if store == "empty" else \
            "does not exist, and this OpenClaw's `memory status` would create it"
        ev.errors.append(f"{CLI_NOT_RUN_NO_INDEX}: agent {aid}'s builtin index {what}")
        # OpenClaw's own validator reads only the config: a key only it rejects still reaches config_invalid
        ev.validate_run = record_run(oc.run_validate(ctx.openclaw, env, cwd=cwd))
        return ev
    # The three calls are independent (none reads what another writes or returns), so they run at once, each
    # with its own timeout; what each proves and the order of their errors are those of running them in turn.
    pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix=f"clawprobe-{aid}")
    try:
        status = pool.submit(oc.run_status, ctx.openclaw, aid, env, cwd=cwd)
        spec, unread = (canary, None) if canary is not None else canary_spec(ctx, aid)
        if unread:
            ev.errors.append(unread)
        ev.canary = spec
        s = memory_settings(ctx.config.tree, aid)
        qmd = s.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False
        # `openclaw memory search` builds a missing QMD index (seen with 2026.7.35): that is a write of
        # their state and would turn "never indexed" into a green search. The operator runs the index.
        # (Where the index cannot be created — a file in the way — the search runs: its fallback is evidence.)
        # `openclaw memory search` builds a missing builtin store, or the memory index of one that holds none, the
        # same way (seen with 2026.9.6)
        guarded = spec is not None and (_would_create(qmd_home(ctx.state_dir.path, aid).index) if qmd
                                        else store in ("absent", "unindexed"))
        # 2026.7.35's `memory search` adds the collections the config names and the index lacks, and indexes
        # them (breaker round 9, p11) — its own managed ones too, over another agent's index copied in (p07): a
        # write of the index, and a green search on notes no update ever indexed
        unseen: list[str] = []
        if qmd and spec is not None and not guarded:
            from clawprobe.core.probes.qmd_index import qmd_paths, read_qmd_yml, store_collections

            qp, ws_path = qmd_paths(ctx.state_dir.path, aid), workspace_of(ctx, aid).path
            for cols in (read_qmd_yml(qp.yml).collections, store_collections(qp.db) if os.path.isfile(qp.db) else []):
                unseen += [p for p in (_unseen_roots(ctx, s, ws_path, cols, managed=True) if cols else [])
                           if p not in unseen]
        # a search syncs first: against a workspace that is missing or empty (an unmounted volume) it drops every
        # note from the index (seen with 2026.9.6) — the evidence, and the agent's memory once it is back
        from clawprobe.core.probes.workspace import workspace_state

        gone = spec is not None and workspace_state(workspace_of(ctx, aid).path) in ("missing", "not_dir", "empty")
        # 2026.7.35's `memory search` creates a configured collection path that does not exist (breaker round 9,
        # p14: `mkdir ~/notes-typo` by the canary search): a write outside the state dir, which also hides the typo;
        # where it cannot (a dangling symlink, round 11, s03) every search fails on it
        from clawprobe.core.probes.workspace import absent_roots

        absent = absent_roots(_qmd_roots(s), workspace_of(ctx, aid).path, gateway_home(ctx)) \
            if qmd and spec is not None and not guarded else []
        old = qmd and spec is not None and not guarded and _qmd1_index_under_qmd2(ctx, aid, s)
        # a search syncs first: against an extra root that holds none of the notes the index lists there (a volume not
        # mounted at its mount point, the root gone) 2026.9.6's `memory search` dropped them all (breaker round 26)
        emptied = _emptied_roots(ctx, aid, s) if not qmd and spec is not None and not guarded else {}
        search = direct = None
        if spec is not None and not guarded and not gone and not unseen and not absent and not old \
                and not emptied:
            remote = not qmd and (s0.provider or "").strip() not in ("", "none", "local")
            longer = {"timeout_s": oc.SEARCH_TIMEOUT_REMOTE_S} if remote else {}  # past OpenClaw's query deadline
            search = pool.submit(oc.run_search, ctx.openclaw, spec.token, aid, env, cwd=cwd, **longer)
            if qmd:
                direct = pool.submit(_direct_qmd_or_none, ctx, aid, spec.token, workspace_of(ctx, aid).path)
        status_p, validate_p = status.result()  # kept as printed; interpret parses them (interpret.runs)
        ev.status_run = record_run(status_p)
        ev.validate_run = record_run(validate_p) if validate_p is not None else None
        if guarded:
            ev.errors.append(f"{SEARCH_NOT_RUN_NO_INDEX}: agent {aid} has no {'QMD' if qmd else 'builtin'} index "
                             "yet, and the search would build it")
            return ev
        if unseen:
            ev.errors.append(f"{SEARCH_NOT_RUN_COLLECTIONS}: agent {aid}'s QMD index has no collection for "
                             f"{', '.join(unseen[:3])}, and the search would add and index it")
        if old:
            ev.errors.append(f"{SEARCH_NOT_RUN_OLD_SCHEMA}: agent {aid}'s QMD index has qmd 1.x's schema and the "
                             "installed qmd is 2.x: the search would migrate the index")
        if absent:
            ev.errors.append(f"{SEARCH_NOT_RUN_MISSING_ROOT}: agent {aid}'s configured QMD path(s) "
                             f"{', '.join(absent[:3])} do not exist, and the search would create them")
        if emptied:
            ev.errors.append(f"{SEARCH_NOT_RUN_EMPTIED_ROOT}: agent {aid}'s configured path(s) "
                             + ", ".join(f"{p} ({n} indexed note(s))" for p, n in list(emptied.items())[:3])
                             + " hold none of the notes the index lists there, and the search would drop them")
        if gone:
            ev.errors.append(f"{SEARCH_NOT_RUN_WORKSPACE}: agent {aid}'s workspace {workspace_of(ctx, aid).path} is "
                             "missing or empty, and the search would sync the index against it")
        if search is not None:
            ev.search_run = record_run(search.result(), keep=(spec.token,) if spec is not None else ())
            ev.direct_run = direct.result() if direct is not None else None
    except (KeyboardInterrupt, SystemExit):  # SIGTERM/Ctrl-C while waiting: the other calls' children die too
        from clawprobe.core.proc import stop

        stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return ev


# --------------------------------------------------------------------------------------------------------
# fast
# --------------------------------------------------------------------------------------------------------

def _gather_stores(ctx: ProbeContext, aid: str, s: MemorySettings, workspace: str, qenv: Mapping[str, str],
                   now: datetime, scan_cache: WorkspaceCache | None = None
                   ) -> tuple[StoreEvidence, ModelCacheEvidence | None, ModelCacheEvidence | None]:
    """GATHER the stores (read-only): the index, the workspace vs the index, and (QMD) the model cache for the
    configured mode and for every role. ``scan_cache`` answers the disk-vs-index comparison incrementally when
    a watcher feeds it. Returns (stores, model cache for the mode or ``None``, model cache of every role or
    ``None``); a store module failure is the stores' ``error``."""
    with gc_paused():  # 100,000s of acyclic tuples (files, index docs): no collection pass mid-burst
        return _gather_stores_now(ctx, aid, s, workspace, qenv, now, scan_cache)


def _gather_stores_now(ctx: ProbeContext, aid: str, s: MemorySettings, workspace: str, qenv: Mapping[str, str],
                       now: datetime, scan_cache: WorkspaceCache | None
                       ) -> tuple[StoreEvidence, ModelCacheEvidence | None, ModelCacheEvidence | None]:
    st = StoreEvidence()
    foreign: list[str] = []
    cache: ModelCacheEvidence | None = None
    every: ModelCacheEvidence | None = None
    try:
        from clawprobe.core.probes import coverage as cov
        from clawprobe.core.probes import workspace as ws

        if s.configured_backend == "qmd":
            from clawprobe.core.probes import models as md
            from clawprobe.core.probes import qmd_index as qi

            facts = qi.read_qmd_index(qi.qmd_paths(ctx.state_dir.path, aid), qenv)
            st.qmd_index = facts
            st.qmd_write_holder = qi.write_holder(facts.paths.db)  # each probe: the read above is cached
            cols = qi.configured_collections(facts)
            foreign = qi.foreign_collections(cols, aid, [ws.extra_path_abs(p, workspace, gateway_home(ctx))
                                                         for p in s.qmd_paths])
            cols = [c for c in cols if c.name not in foreign] or ws.default_qmd_collections(aid, workspace)
            if facts.readable:
                if scan_cache is not None:
                    st.comparison, scan = scan_cache.compare_qmd(cols, workspace, facts, now)
                else:
                    scan = ws.scan_qmd(cols, workspace)
                    st.comparison = ws.compare_qmd(scan, facts.docs, now)
                st.scan_findings = ws.scan_findings(scan) if scan is not None else []  # a cached answer is never capped
                st.coverage = cov.from_scan(scan, st.comparison) if scan is not None \
                    else scan_cache.coverage(st.comparison) if scan_cache is not None else []
                skips = ws.scan_skips(scan) if scan is not None else scan_cache.skipped() if scan_cache is not None else []
                st.rename_clashes = ws.rename_clashes(skips, workspace)  # x.MD beside x.md: a rename would overwrite it
                st.emptied_roots = _qmd_emptied_roots(ctx, s, workspace, cols, facts.docs)
            elif facts.open.state in ("missing", "empty"):  # never indexed: every file qmd would index is unreflected
                scan = ws.scan_qmd(cols, workspace)
                st.comparison = ws.compare_qmd(scan, (), now)
                st.scan_findings = ws.scan_findings(scan)
                st.coverage = cov.from_scan(scan, st.comparison)
            unseen = _unseen_roots(ctx, s, workspace, cols)
            if unseen and st.comparison is not None:
                from clawprobe.core.probes.unseen_collections import unseen_notes

                ws.with_changes(st.comparison, unseen_notes(unseen, workspace, _config_mtime(ctx)), now)
            if s.sessions_enabled and st.comparison is not None:
                from clawprobe.core.probes import session_exports as se

                exports = se.export_dir(ctx.state_dir.path, aid, s.sessions_export_dir, workspace, gateway_home(ctx))
                sessions = os.path.join(ctx.state_dir.path, "agents", aid, "sessions")
                ws.with_changes(st.comparison, se.unexported(sessions, exports, now, s.sessions_retention_days), now)
                others = {o: se.export_dir(ctx.state_dir.path, o, s.sessions_export_dir, workspace_of(ctx, o).path,
                                           gateway_home(ctx)) for o in ctx.agents if o != aid}
                if shared := se.sharing_agents(exports, others):
                    st.scan_findings.append(_shared_exports_finding(aid, exports, shared))
            home = qmd_home(ctx.state_dir.path, aid)
            if s.search_mode != "search":
                cache = md.gather_model_cache(s.search_mode, home.xdg_config, home.xdg_cache, qenv, now=now)
            # Every role, whatever the configured mode: the readiness table answers "what would a switch need".
            every = md.gather_model_cache("query", home.xdg_config, home.xdg_cache, qenv, now=now)
        else:
            from clawprobe.core.probes import builtin_index as bi

            facts_b = bi.read_builtin_index(ctx.state_dir.path, aid)
            st.builtin_index = facts_b
            indexed = facts_b.meta is not None and facts_b.sources is not None and facts_b.open is not None \
                and facts_b.open.state not in ("missing",)
            if indexed or facts_b.memory_never_indexed:  # nothing indexed: every note on disk is unreflected
                user_md = ws.indexes_user_md(ctx.openclaw_version, (r.path for r in facts_b.sources))
                scan = ws.scan_builtin(workspace, s.extra_paths, user_md=user_md, patterns=s.extra_path_patterns,
                                       home=gateway_home(ctx))
                st.comparison = ws.compare_builtin(scan, facts_b.sources if indexed else (), now, facts_b.indexed_at)
                st.hollow_notes = bi.hollow_notes(facts_b, scan) if indexed else []
                st.scan_findings = ws.scan_findings(scan)
                st.coverage = cov.from_scan(scan, st.comparison)
                st.rename_clashes = ws.rename_clashes(ws.scan_skips(scan), workspace)
                if indexed:
                    st.emptied_roots = ws.emptied_roots(s.extra_paths, workspace, gateway_home(ctx),
                                                        (r.path for r in facts_b.sources if r.source == "memory"))
                st.glob_roots = {raw: d for raw, d in ws.glob_roots(s.extra_paths, workspace, gateway_home(ctx)).items()
                                 if scan.root_notes.get(raw, {}).get("pattern_excluded")}  # notes no other root reads
        st.scan_findings += ws.missing_extra_paths(s.extra_paths, workspace, gateway_home(ctx))
        if foreign:
            st.scan_findings.append(_foreign_finding(ctx, aid, foreign))
        if s.configured_backend == "qmd":
            st.scan_findings += ws.missing_extra_paths(s.qmd_paths, workspace, gateway_home(ctx), "memory.qmd.paths")
            st.scan_findings += ws.missing_extra_paths(s.qmd_extra_collections, workspace, gateway_home(ctx),
                                                       "memorySearch.qmd.extraCollections")
        st.missing_roots = ws.absent_roots(_qmd_roots(s) if s.configured_backend == "qmd" else s.extra_paths,
                                           workspace, gateway_home(ctx))
        if s.configured_backend != "qmd":  # qmd's `collection add` stores the resolved root: a linked root works
            st.linked_roots = ws.linked_roots(s.extra_paths, workspace, gateway_home(ctx))
        st.scan_findings += ws.memory_root_findings(workspace)
        st.workspace_state = ws.workspace_state(workspace)
        if st.workspace_state == "missing":
            st.scan_findings += ws.near_name_findings(workspace)
            st.notes_nearby = ws.notes_nearby(workspace)
            if st.notes_nearby is not None and _owned_by_another_agent(ctx, aid, st.notes_nearby):
                st.notes_nearby = None  # another agent's own notes: pointing this one there would share them
            if st.notes_nearby is None and (other := _notes_under_shell_home(ctx, aid, workspace)) is not None:
                st.notes_nearby = other
                st.scan_findings.append(_other_home_finding(ctx, workspace, other))
    except ImportError as e:
        st.error = f"store probe not available: {e}"
    except Exception as e:  # a store module bug must not turn into a traceback
        st.error = f"store probe failed: {type(e).__name__}: {e}"
    return st, cache, every


def _owned_by_another_agent(ctx: ProbeContext, aid: str, path: str) -> bool:
    """GATHER: whether ``path`` is the workspace of another agent this install knows (:func:`workspace_of`): a
    second agent ``ops-bot`` gets ``<agents.defaults.workspace>/ops-bot`` (2026.9.6) while the default agent
    ``main`` keeps the defaults' workspace itself, so the notes above ops-bot's missing workspace are main's —
    "set the agent's workspace there" would make ops-bot read and write main's memory (breaker round 25)."""
    from clawprobe.core.locate import known_agents

    want = os.path.normpath(path)
    for other in known_agents(ctx.config.tree, ctx.state_dir.path, ctx.openclaw_version):
        if other != aid and os.path.normpath(workspace_of(ctx, other).path) == want:
            return True
    return False


def _notes_under_shell_home(ctx: ProbeContext, aid: str, workspace: str) -> str | None:
    """GATHER: the agent's workspace as this shell's home would give it, when the gateway's home gives another
    (:func:`path_env`) and that one holds notes (``MEMORY.md`` or ``memory/``) — where an operator's own
    ``openclaw memory index`` and canary plant went while the gateway, run with another ``HOME``, reads a
    workspace that does not exist (breaker round 21, #2); else ``None``. Two ``stat`` calls."""
    mine = workspace_dir(ctx.config.tree, aid, ctx.env, ctx.state_dir, ctx.openclaw_version, _gateway_cwd(ctx)).path
    if os.path.normpath(mine) == os.path.normpath(workspace):
        return None
    if os.path.isfile(os.path.join(mine, "MEMORY.md")) or os.path.isdir(os.path.join(mine, "memory")):
        return mine
    return None


def _other_home_finding(ctx: ProbeContext, workspace: str, notes: str) -> Finding:
    """``workspace_other_home``: the gateway's workspace (from its home) is missing; the notes sit where this
    shell's home puts it."""
    _, where = gw.home_env(ctx.gateway) if ctx.gateway is not None else ({}, "shell")
    by = "its running process" if where == "process" else f"its {where} service file"
    return Finding(tag="workspace_other_home", source=f"the gateway's environment ({by})", message=(
        f"the gateway runs with HOME {gateway_home(ctx)} ({by}), so its workspace is {workspace}, which does not "
        f"exist; the notes are at {notes}, under this shell's HOME {home_dir(ctx.env)} — the gateway's agent never "
        "reads them (commands run from this shell index and search them): set the agent's workspace to that "
        "absolute path"))


def _foreign_finding(ctx: ProbeContext, aid: str, names: list[str]) -> Finding:
    """``index_foreign_collections``: the agent's QMD home holds another agent's managed collections (a home copied
    from theirs); left out of this agent's coverage, named with the command that removes them from this index — or,
    when the home is the other agent's own directory (a symlink: :func:`~clawprobe.core.probes.qmd_index.same_home`),
    with the link to remove instead: there the remove would take the other agent's collections from its index."""
    from clawprobe.core.probes import qmd_index as qi

    p = qi.qmd_paths(ctx.state_dir.path, aid)
    if (same := qi.same_home(ctx.state_dir.path, aid, [o for o in ctx.agents if o != aid])) is not None:
        other, link = same  # one directory, not a copy: removing "their" collections removes them from theirs
        owner = aid if link == qmd_home(ctx.state_dir.path, aid).root else other
        fix = (f"with the gateway stopped, rm {shell_word(link)} (the link only; its target stays agent "
               f"{other if owner == aid else aid}'s), then `openclaw memory index --agent {owner}` builds "
               f"{owner}'s own") if link else "give each agent its own directory there (OpenClaw makes one per agent)"
        return Finding(tag="index_foreign_collections", source=f"QMD home of agent {aid} (agents/<id>/qmd)",
                       message=f"agent {aid}'s QMD home is agent {other}'s own directory"
                               f"{f' ({link} is a symlink)' if link else ''}: one index holds both agents' "
                               f"collections ({', '.join(names)}), so a `qmd collection remove` there removes "
                               f"them from {other}'s index too — don't; {fix}")
    xdg = f"XDG_CONFIG_HOME={shell_word(p.xdg_config)} XDG_CACHE_HOME={shell_word(p.xdg_cache)}"
    fix = " && ".join(f"{xdg} qmd collection remove {shell_word(n)}" for n in names)
    return Finding(tag="index_foreign_collections", source=f"QMD index of agent {aid} (index.yml, store_collections)",
                   message=f"agent {aid}'s QMD index holds collections OpenClaw manages for another agent "
                           f"({', '.join(names)}): a QMD home copied from theirs — their notes sit in this index "
                           f"(left out of this agent's coverage). Remove them with the gateway stopped: {fix}")


def _shared_exports_finding(aid: str, exports: str, others: list[str]) -> Finding:
    """``sessions_export_shared``: the agent's session export dir is also another agent's
    (:func:`clawprobe.core.probes.session_exports.sharing_agents`); each one's export run deletes the other's
    exports, so an index run of one agent drops the others' transcripts."""
    return Finding(tag="sessions_export_shared", source="memory.qmd.sessions.exportDir (resolved per agent)",
                   message=f"agent {aid} exports its session transcripts to {exports}, and so does agent(s) "
                           f"{', '.join(others)}: each agent's export deletes every other export there, so an index "
                           "run of one drops the others' transcripts from their index (a running gateway loses "
                           "them all) — `openclaw memory index` cannot make both stick")


def _index_written_at(ctx: ProbeContext, aid: str) -> datetime | None:
    """The newest mtime of the agent's ``index.sqlite`` or its ``-wal`` (UTC); ``None`` without an index."""
    db = qmd_home(ctx.state_dir.path, aid).index
    times = []
    for p in (db, db + "-wal"):
        with contextlib.suppress(OSError):
            times.append(os.stat(p).st_mtime)
    if not os.path.isfile(db) or not times:
        return None
    return datetime.fromtimestamp(max(times), tz=UTC)


def _gather_extra(ctx: ProbeContext, aid: str, s: MemorySettings, workspace: str, st: StoreEvidence,
                  slow_ev: SlowEvidence | None) -> Extra:
    """GATHER what the refinement reads beyond the stores and the CLI: the agent's session transcripts
    (newest 3 files, tail), the managed-vs-default QMD store, the builtin tokenizer, non-regular memory
    sources, host load — and, only when the canary retrieval missed (:func:`clawprobe.core.interpret.canary_facts`
    says ``miss``/``wrong_source``: the 1 s dashboard tick must not scan for nothing), the path explainers
    and the extra-path counts. Read-only; bounded."""
    from clawprobe.core import memory_sources as msrc

    spec = slow_ev.canary if slow_ev is not None else None
    qmd = s.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False
    parsed = slow_facts(slow_ev, qmd) if slow_ev is not None else None
    missed = spec is not None and parsed is not None and not parsed.cli_hung and \
        canary_facts(spec, parsed.search, None, None, None).outcome in ("miss", "wrong_source")

    index_dir = os.path.dirname(qmd_home(ctx.state_dir.path, aid).index) if qmd else None
    from clawprobe.core.probes.builtin_index import builtin_store_candidates

    store_dir = os.path.dirname(builtin_store_candidates(ctx.state_dir.path, aid)[0][1])  # 2026.6+: agents/<id>/agent
    x = Extra(host=msrc.host_facts(ctx.state_dir.path if os.path.isdir(ctx.state_dir.path) else None,
                                   index_dir if index_dir and os.path.isdir(index_dir) else None,
                                   store_dir if os.path.isdir(store_dir) else None))
    sessions = os.path.join(ctx.state_dir.path, "agents", aid, "sessions")
    if os.path.isdir(sessions):
        with contextlib.suppress(OSError):
            jsonl = [os.path.join(sessions, n) for n in os.listdir(sessions) if n.endswith(".jsonl")]
            x.tool_results = msrc.tool_results(sorted(jsonl, key=os.path.getmtime)[-3:])
            if has_qmd_backend(ctx.openclaw_version) is False:  # 2026.8+ reads sessions from its database only
                x.legacy_transcripts = sum(1 for p in jsonl if os.path.isfile(p) and not os.path.islink(p))
    ws_ok = os.path.isdir(workspace)
    engine = "qmd" if s.configured_backend == "qmd" else "builtin"
    expected = spec.expected_path if spec is not None and missed else None
    if ws_ok and expected:
        from clawprobe.core.probes import qmd_index as qi

        cols = qi.configured_collections(st.qmd_index) if st.qmd_index is not None else []
        x.explainers = msrc.explain_canary(expected, workspace, engine, aid, s.extra_paths, ctx.state_dir.path, cols,
                                           home=gateway_home(ctx))
    if engine == "qmd":
        from clawprobe.core.probes import qmd_index as qi

        facts = st.qmd_index
        if facts is not None and facts.open.state != "missing" and facts.missing_managed and s.include_default_memory:
            default = qi.default_store_path(ctx.env)
            summary = qi.read_store_summary(default) if default and os.path.isfile(default) else None
            x.wrong_store_detail = qi.wrong_store_detail(facts, summary)
            x.collection_squatters = qi.squatting_collections(facts.yml.collections, aid, workspace)
    else:
        b = st.builtin_index
        x.builtin_tokenizer = b.meta.fts_tokenizer if b is not None and b.meta else None
        from clawprobe.core.probes.builtin_index import reindex_orphans

        x.reindex_orphans = reindex_orphans(ctx.state_dir.path, aid)
        if b is not None and b.path:
            from clawprobe.core.probes.reindex_lock import read_reindex_lock

            x.reindex_lock = read_reindex_lock(b.path)
        if ws_ok:
            from clawprobe.core.probes.note_scripts import note_scripts

            x.note_scripts = note_scripts(workspace, s.extra_paths, binary=x.binary_notes)
            x.non_regular_files = msrc.non_regular_files(workspace, s.extra_paths)
            if s.extra_paths and expected:
                x.default_root_files, x.extra_path_files = msrc.extra_path_counts(workspace, s.extra_paths,
                                                                                  gateway_home(ctx))
    return x


def gather(ctx: ProbeContext, agent_id: str, slow_ev: SlowEvidence | None, now: datetime | None = None, *,
           clock: Callable[[], float] = time.monotonic, baseline_hash: str | None = None,
           scan_cache: WorkspaceCache | None = None, stores_before: StoreEvidence | None = None,
           qmd_check: bool = True) -> Evidence:
    """GATHER everything except the ``openclaw`` CLI (which is ``slow_ev``, the last CLI probe, may be
    ``None``) into one :class:`~clawprobe.core.evidence.Evidence`: config, gateway + log, qmd binary + store
    check (cached), the index and workspace, model cache, the canary record, transcripts, explainers, host.
    ``stores_before`` is :func:`measure_before`'s measurement, taken before ``slow_ev`` ran (kept as
    ``Evidence.stores_before``). ``qmd_check=False`` runs no qmd process: the qmd check is taken from the
    cache (:func:`check_qmd`) or left unmeasured. Read-only; never raises for a broken install (errors land
    in ``errors``)."""
    at = now or datetime.now(UTC)
    aid = normalize_agent_id(agent_id)
    errors: list[str] = []
    if ctx.version_error:
        errors.append(f"openclaw --version: {ctx.version_error}")
    ws = workspace_of(ctx, aid)
    ev = Evidence(agent_id=aid, checked_at=at, origin="live", openclaw_version=ctx.openclaw_version,
                  config=ctx.config, workspace=ws.path, baseline_hash=baseline_hash, errors=errors,
                  state_dir=ctx.state_dir.path, openclaw=ctx.openclaw,
                  slow=slow_ev if slow_ev is not None and slow_ev.agent_id == aid else None,
                  stores_before=stores_before)
    if ctx.gateway is not None:
        paths, blind = _log_plan(ctx, at)
        ev.log = oclog.read_log(paths, aid, scope=log_scope(ctx, aid))
        # a file read_log could not open (paths found) and a plan's own gap (none found, a level that drops WARN)
        ev.log.blind = "; ".join(x for x in (blind, ev.log.blind) if x) or None
        ev.gateway = ctx.gateway.model_copy(update={"log": None})
    writer = writer_version(ctx.state_dir.path)  # read even when the config is rejected: a rollback's tell
    if config_facts(ctx.config, aid, ctx.openclaw_version, ws.path).error is not None:
        ev.extra = Extra(state_db_writer=writer)
        return ev
    s = memory_settings(ctx.config.tree, aid)
    qenv, _, _, _ = _agent_qmd_env(ctx, aid)
    qmd = s.configured_backend == "qmd"
    # The qmd check (two Node starts, ≈ 0.4 s of waiting) and the store reads (Python, read-only) are
    # independent — neither reads what the other writes — so the check waits in its own thread meanwhile.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"clawprobe-qmd-{aid}")
    try:
        check = None
        if qmd and has_qmd_backend(ctx.openclaw_version) is not False and qmd_check:
            check = pool.submit(_qmd_check, ctx, aid, s, ws.path, clock)
        elif qmd and has_qmd_backend(ctx.openclaw_version) is not False:  # only a check already made (cached)
            hit = _qmd_cached(_qmd_key(ctx, aid, s, ws.path)[0], clock())
            ev.qmd_binary = hit[1] if hit is not None else None
        if not qmd or has_qmd_backend(ctx.openclaw_version) is not False:
            ev.stores, ev.model_cache, ev.model_cache_all = _gather_stores(ctx, aid, s, ws.path, qenv, at, scan_cache)
        if check is not None:
            _, ev.qmd_binary = check.result()
    except (KeyboardInterrupt, SystemExit):  # SIGTERM/Ctrl-C while waiting: the check's children die too
        from clawprobe.core.proc import stop

        stop()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if qmd:
        ev.qmd_index_written_at = _index_written_at(ctx, aid)
    from clawprobe.core import canary as cn
    from clawprobe.core.history import data_dir

    try:
        record = cn.load(ws.path, aid, root=data_dir(ctx.env))
        ev.canary_record = record if record is not None and record.active else None
        ev.canary_file = cn.file_state(ev.canary_record) if ev.canary_record is not None else None
        if ev.canary_file in ("modified", "foreign") and ev.canary_record is not None:
            ev.canary_token_on_disk = cn.token_on_disk(ev.canary_record)
        if ev.canary_file == "missing" and ev.canary_record is not None:
            ev.canary_moved_dir = cn.moved_dir(ev.canary_record)
        if record is None:  # a canary file with no record of this workspace: moved with it, or another host's
            from clawprobe.core.probes.workspace import is_canary

            ev.canary_unrecorded = cn.CANARY_REL if is_canary(os.path.join(ws.path, cn.CANARY_REL)) else None
    except cn.CanaryError as e:
        errors.append(f"canary record: {e}")
    try:
        ev.extra = _gather_extra(ctx, aid, s, ws.path, ev.stores or StoreEvidence(), ev.slow)
        ev.extra.state_db_writer = writer
    except Exception as e:  # a gather bug must not turn into a traceback
        errors.append(f"refinement evidence failed: {type(e).__name__}: {e}")
    return ev


def fast(ctx: ProbeContext, agent_id: str, slow_ev: SlowEvidence | None, now: datetime | None = None, *,
         clock: Callable[[], float] = time.monotonic, baseline_hash: str | None = None,
         scan_cache: WorkspaceCache | None = None, qmd_check: bool = True) -> Receipt:
    """:func:`gather` then :func:`clawprobe.core.interpret.interpret`: the receipt of everything except the
    ``openclaw`` CLI, merged with ``slow_ev`` (the last CLI probe, may be ``None``).

    Target ≤ 80 ms on a 100-file workspace with the qmd check cached (measured in bench/run.py).
    ``baseline_hash`` is the accepted memory-config hash (``clawprobe check --accept-baseline``).
    ``scan_cache`` is for a caller with a file watcher that feeds it changed paths (the dashboard): the
    workspace comparison is then incremental; without it every probe scans the whole tree.
    """
    return interpret(gather(ctx, agent_id, slow_ev, now, clock=clock, baseline_hash=baseline_hash,
                            scan_cache=scan_cache, qmd_check=qmd_check))

def measure_before(ctx: ProbeContext, agent_id: str, now: datetime | None = None) -> StoreEvidence | None:
    """GATHER the read-only store measurement (index, disk vs index, per-root coverage) *before* any
    ``openclaw`` CLI runs: on builtin, ``memory search`` syncs the index, so a measurement after it would
    hide notes unindexed for hours (RW48). ``None`` when the config does not load or the backend is one this
    OpenClaw no longer has. Never raises."""
    aid = normalize_agent_id(agent_id)
    ws_path = workspace_of(ctx, aid).path
    if ctx.config.error is not None or config_facts(ctx.config, aid, ctx.openclaw_version, ws_path).error is not None:
        return None
    s = memory_settings(ctx.config.tree, aid)
    if s.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is False:
        return None
    qenv, _, _, _ = _agent_qmd_env(ctx, aid)
    st, _, _ = _gather_stores(ctx, aid, s, ws_path, qenv, now or datetime.now(UTC))
    return st


def collect(ctx: ProbeContext, agent_id: str, now: datetime | None = None, run_slow: bool = True, *,
            canary: CanarySpec | None = None, baseline_hash: str | None = None) -> Receipt:
    """:func:`measure_before`, :func:`slow` (optional), then :func:`fast`: one complete receipt. ``clawprobe
    check`` uses it."""
    at = now or datetime.now(UTC)
    before = measure_before(ctx, agent_id, at) if run_slow else None
    s = slow(ctx, agent_id, at, canary=canary) if run_slow else None
    checked = now or datetime.now(UTC)  # after the 3–15 s CLI probes: their log lines are not "later"
    return interpret(gather(ctx, agent_id, s, checked, baseline_hash=baseline_hash, stores_before=before))


# --------------------------------------------------------------------------------------------------------
# watch targets
# --------------------------------------------------------------------------------------------------------

def _target(path: str, kind: str) -> WatchTarget:
    p = os.path.abspath(path)
    if os.path.exists(p):
        return WatchTarget(path=p, kind=kind, exists=True)
    cur = p
    while cur != os.path.dirname(cur) and not os.path.exists(cur):
        cur = os.path.dirname(cur)
    return WatchTarget(path=cur, kind=kind, exists=False, wanted=p)


def watch_targets(ctx: ProbeContext, agent_id: str) -> list[WatchTarget]:
    """Paths whose change should re-probe ``agent_id``: config + ``$include``s, workspace ``MEMORY.md`` and
    ``memory/``, extra paths, the agent's QMD index dir, the model cache, the log file."""
    aid = normalize_agent_id(agent_id)
    out = [_target(f, "config") for f in dict.fromkeys([ctx.config_path.path, *ctx.config.files])]
    ws = workspace_of(ctx, aid).path
    out += [_target(os.path.join(ws, "MEMORY.md"), "memory"), _target(os.path.join(ws, "memory"), "memory")]
    if ctx.config.error is None:
        s = memory_settings(ctx.config.tree, aid)
        from clawprobe.core.locate import user_path

        out += [_target(user_path(p, path_env(ctx), ws), "extra") for p in [*s.extra_paths, *s.qmd_paths]]
        if s.configured_backend == "qmd":
            home = qmd_home(ctx.state_dir.path, aid)
            out += [_target(os.path.dirname(home.index), "qmd_index"), _target(home.models, "models")]
    out += [_target(p, "log") for p in _log_paths(ctx, datetime.now(UTC))]
    seen: set[tuple[str, str]] = set()
    uniq = []
    for t in out:
        if (t.path, t.kind) not in seen:
            seen.add((t.path, t.kind))
            uniq.append(t)
    return uniq


__all__ = ["SEARCH_HUNG", "ProbeContext", "SlowEvidence", "CanarySpec", "DirectQmd", "WatchTarget", "discover", "gather", "fast",
           "slow", "collect", "watch_targets", "canary_facts", "clear_caches", "StatusClaim", "BackendFacts",
           "BuiltinFacts"]
