"""Where OpenClaw keeps things, resolved exactly as OpenClaw resolves them, per version era.

Sources (read in the installed OpenClaw 2026.7.35 / 2026.9.6 packages and openclaw-memory.md §2):
``config-utils`` ``resolveStateDir`` / ``resolveAgentWorkspaceDir`` / ``resolveDefaultAgentWorkspaceDir`` /
``normalizeAgentId``; field report §8 (default workspace per release). Pure functions of an environment
mapping and the parsed config: no I/O except ``os.path.exists`` where OpenClaw itself checks existence,
and the front-door checks of operator input (:func:`missing_explicit`, :func:`agent_dirs`), which stat
and list only — nothing here creates or writes anything.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from pydantic import BaseModel, ConfigDict

from clawprobe.core.mapping import as_mapping
from clawprobe.core.shell import word as shell_word

DEFAULT_AGENT_ID = "main"
STATE_DIRNAME = ".openclaw"
LEGACY_STATE_DIRNAMES = (".clawdbot",)
CONFIG_NAMES = ("openclaw.json", "clawdbot.json")
QMD_REMOVED_IN = (2026, 8, 1)  # docs/concepts/memory-builtin.md "Migrating from QMD"
NODE_DIR_APPENDED_FROM = (2026, 7, 0)  # 2026.7.35 qmd-manager buildQmdProcessPath; 2026.4.x lacks it (RW05) — boundary is a guess
STATE_DIR_WORKSPACE_FROM = (2026, 8, 1)  # 2026.9.6 puts the default workspace under $OPENCLAW_STATE_DIR; 7.35 does not

_VALID_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.I)
_INVALID_CHARS = re.compile(r"[^a-z0-9_-]+")
_CALVER = re.compile(r"(\d{4})\.(\d{1,2})\.(\d{1,3})")


class Located(BaseModel):
    """A resolved path and the rule that produced it (e.g. ``"$OPENCLAW_STATE_DIR"``, ``"default"``)."""

    model_config = ConfigDict(extra="forbid")
    path: str
    source: str


def calver(version: str | None) -> tuple[int, int, int] | None:
    """``"OpenClaw 2026.7.35 (aa94808)"`` or ``"2026.7.35"`` → ``(2026, 7, 35)``; ``None`` when absent."""
    m = _CALVER.search(version or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def has_qmd_backend(version: str | None) -> bool | None:
    """True up to 2026.7.x (QMD backend present), False from 2026.8.1 (removed), None when unknown."""
    v = calver(version)
    return None if v is None else v < QMD_REMOVED_IN


def adds_node_dir_to_qmd_path(version: str | None) -> bool:
    """Whether this build appends its own Node's bin dir to the qmd child PATH (2026.7.35 does; 2026.4 did not)."""
    v = calver(version)
    return v is not None and NODE_DIR_APPENDED_FROM <= v < QMD_REMOVED_IN


def _clean(value: str | None) -> str | None:
    v = (value or "").strip()
    return None if not v or v in ("undefined", "null") else v


def home_dir(env: Mapping[str, str]) -> str:
    """OpenClaw's home: ``$OPENCLAW_HOME``, else ``$HOME``/``$USERPROFILE``, else the OS home."""
    return _clean(env.get("OPENCLAW_HOME")) or _clean(env.get("HOME")) or _clean(env.get("USERPROFILE")) \
        or os.path.expanduser("~")


def user_path(value: str, env: Mapping[str, str], base: str | None = None) -> str:
    """OpenClaw's ``resolveUserPath``: ``~`` → home; relative → against ``base`` (default: cwd); normalized."""
    v = value.strip()
    if not v:
        return v
    if v == "~" or v.startswith(("~/", "~\\")):
        v = home_dir(env) + v[1:]
    return os.path.normpath(os.path.join(base or os.getcwd(), v))


def state_dir(env: Mapping[str, str], override: str | None = None) -> Located:
    """The state dir: ``--state-dir``, ``$OPENCLAW_STATE_DIR``, ``<home>/.openclaw``, or legacy ``.clawdbot``."""
    if override:
        return Located(path=user_path(override, env), source="--state-dir")
    if _clean(env.get("OPENCLAW_STATE_DIR")):
        return Located(path=user_path(env["OPENCLAW_STATE_DIR"], env), source="$OPENCLAW_STATE_DIR")
    home = home_dir(env)
    new = os.path.join(home, STATE_DIRNAME)
    if not os.path.exists(new):
        for legacy in LEGACY_STATE_DIRNAMES:
            if os.path.exists(os.path.join(home, legacy)):
                return Located(path=os.path.join(home, legacy), source=f"legacy <home>/{legacy}")
    src = "$OPENCLAW_HOME/.openclaw" if _clean(env.get("OPENCLAW_HOME")) else "~/.openclaw"
    return Located(path=new, source=src)


def profile_state_dirs(env: Mapping[str, str], limit: int = 5) -> list[str]:
    """The state dirs of OpenClaw profiles under the home (``openclaw --profile NAME`` keeps its state in
    ``<home>/.openclaw-NAME``; source: OpenClaw 2026.9.6 ``resolveProfileStateDir``, names ``[a-z0-9][a-z0-9_-]*``):
    the existing ones, sorted, at most ``limit`` — a hint where the default state dir is missing."""
    home = home_dir(env)
    try:
        names = sorted(n for n in os.listdir(home) if n.startswith(STATE_DIRNAME + "-")
                       and _VALID_ID.match(n[len(STATE_DIRNAME) + 1:]))  # a profile name: an agent id's pattern
    except OSError:
        return []
    return [os.path.join(home, n) for n in names if os.path.isdir(os.path.join(home, n))][:limit]


def config_path(env: Mapping[str, str], state: str, override: str | None = None) -> Located:
    """The config file: ``--config``, ``$OPENCLAW_CONFIG_PATH``, the first existing of
    ``<state>/openclaw.json`` / ``<state>/clawdbot.json``, else ``<state>/openclaw.json`` (may not exist)."""
    if override:
        return Located(path=user_path(override, env), source="--config")
    if _clean(env.get("OPENCLAW_CONFIG_PATH")):
        return Located(path=user_path(env["OPENCLAW_CONFIG_PATH"], env), source="$OPENCLAW_CONFIG_PATH")
    for name in CONFIG_NAMES:
        p = os.path.join(state, name)
        if os.path.exists(p):
            return Located(path=p, source=f"<state>/{name}")
    return Located(path=os.path.join(state, CONFIG_NAMES[0]), source="default (file absent)")


#: the config path's source when it is the running gateway's own ``OPENCLAW_CONFIG_PATH``, not this shell's
#: (``clawprobe.core.probe`` picks it; a suffix says where it was read: running process, service unit)
GATEWAY_CONFIG_SOURCE = "the gateway's $OPENCLAW_CONFIG_PATH"


class CommandLines(NamedTuple):
    """The words a printed command starts with so that, pasted into the operator's shell, it reaches the
    install clawprobe probed (:func:`command_lines`): ``openclaw`` before an OpenClaw sub-command,
    ``clawprobe`` before a clawprobe sub-command."""

    openclaw: str
    clawprobe: str


#: the state dir / config sources a printed command carries: clawprobe's own flags, and the variables of the
#: environment clawprobe ran in — often a one-shot prefix (``OPENCLAW_STATE_DIR=/srv/oc clawprobe walk``) or a
#: dashboard whose ``y`` is pasted into another pane: the shell the command is pasted into need not have them
#: (breaker round 23: the pasted ``openclaw memory index`` built a new ``~/.openclaw``)
CARRIED_STATE_SOURCES = ("--state-dir", "$OPENCLAW_STATE_DIR")
CARRIED_CONFIG_SOURCES = ("--config", "$OPENCLAW_CONFIG_PATH")


def command_lines(openclaw: Sequence[str] | None, state: Located | None, config: Located | None) -> CommandLines:
    """The command lines that make a printed repair command act on the probed install, not the shell's default.

    Inputs — ``openclaw``: the OpenClaw CLI argv prefix clawprobe runs (``ProbeContext.openclaw``: ``["openclaw"]``,
    ``["/opt/openclaw-2026.9.6"]``, ``["/usr/bin/node", "/…/openclaw.mjs"]``; ``None``: ``openclaw``);
    ``state`` / ``config``: the state dir and config file as located (:func:`state_dir`, :func:`config_path`),
    ``None`` when unknown (a replayed receipt, a support bundle).

    Which location needs words, by its ``source``:

    * ``--state-dir`` / ``--config`` — clawprobe's own flags — and ``$OPENCLAW_STATE_DIR`` /
      ``$OPENCLAW_CONFIG_PATH`` of clawprobe's environment (:data:`CARRIED_STATE_SOURCES`: a one-shot prefix, or
      a dashboard's ``y`` pasted into another pane): the shell the command is pasted into need not know them, so
      an OpenClaw command gets ``OPENCLAW_STATE_DIR=<path>`` / ``OPENCLAW_CONFIG_PATH=<path>`` before it
      (OpenClaw's own variables, read as :func:`state_dir` / :func:`config_path` read them) and a clawprobe
      command ``--state-dir <path>`` / ``--config <path>`` (accepted by ``clawprobe`` before any sub-command);
    * :data:`GATEWAY_CONFIG_SOURCE` — the gateway's own config, which clawprobe's ``openclaw`` runs are given
      (``probe._cli_env``): an OpenClaw command gets ``OPENCLAW_CONFIG_PATH=<path>``; a clawprobe command needs
      nothing (it finds the gateway's config again);
    * anything else — the defaults (``~/.openclaw``, ``<state>/openclaw.json``) are the shell's defaults:
      nothing is added (``$OPENCLAW_HOME`` is not carried: it also moves ``~`` in the config's paths).

    Paths are the located ones (absolute, normalized), each one shell word (:func:`clawprobe.core.shell.word`).
    Shapes: ``CommandLines(openclaw="OPENCLAW_STATE_DIR='/srv/my oc' /opt/openclaw-2026.9.6",
    clawprobe="clawprobe --state-dir '/srv/my oc'")``; without flags ``CommandLines("openclaw", "clawprobe")``.
    Pure; never raises.
    """
    env: list[str] = []
    flags: list[str] = []
    if state is not None and state.source in CARRIED_STATE_SOURCES:
        env.append(f"OPENCLAW_STATE_DIR={shell_word(state.path)}")
        flags += ["--state-dir", shell_word(state.path)]
    if config is not None and (config.source in CARRIED_CONFIG_SOURCES or config.source.startswith(GATEWAY_CONFIG_SOURCE)):
        env.append(f"OPENCLAW_CONFIG_PATH={shell_word(config.path)}")
        if config.source in CARRIED_CONFIG_SOURCES:
            flags += ["--config", shell_word(config.path)]
    cli = " ".join(shell_word(a) for a in openclaw) if openclaw else "openclaw"
    return CommandLines(openclaw=" ".join([*env, cli]), clawprobe=" ".join(["clawprobe", *flags]))


def recorded_command_lines(openclaw: Sequence[str] | None, state: str | None, config: str | None,
                           env: Mapping[str, str]) -> tuple[CommandLines, str | None]:
    """``(command lines, state dir)`` for a check read back rather than run here (``replay``, ``--replay`` of
    the dashboard and ``walk``, a support bundle): the install it names — ``state`` (a bundle's state dir),
    else its config file's dir when that file is ``openclaw.json``/``clawdbot.json`` (OpenClaw's layout) —
    is carried as with ``--state-dir``/``--config`` (:func:`command_lines`) wherever the defaults (``env``'s
    home: :func:`state_dir`, :func:`config_path` without ``$OPENCLAW_STATE_DIR``/``$OPENCLAW_CONFIG_PATH``, which
    the shell the command is pasted into need not have — as a live check carries them) reach another one.
    Without that, a replayed ``--state-dir`` install's ``openclaw memory index`` built a new ``~/.openclaw``
    (breaker round 23). Nothing is added for the default install. Pure apart from :func:`state_dir`'s and
    :func:`config_path`'s existence checks; never raises."""
    config = (config or "").strip() or None
    if not state and config and os.path.basename(config) in CONFIG_NAMES:
        state = os.path.dirname(config)
    env = {k: v for k, v in env.items() if k not in ("OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH")}
    mine = state_dir(env)
    st = Located(path=state, source="--state-dir") if state and os.path.normpath(state) != os.path.normpath(
        mine.path) else None
    cf = None
    if config and os.path.normpath(config) != os.path.normpath(config_path(env, state or mine.path).path):
        cf = Located(path=config, source="--config")
    return command_lines(openclaw, st, cf), state


class RepairWords(TypedDict):
    """``diagnose``'s keywords that fill the repair commands for an install (:func:`recorded_repair_words`)."""

    openclaw: str | None
    state_dir: str | None
    clawprobe: str | None


def recorded_repair_words(config: str | None, env: Mapping[str, str], openclaw: Sequence[str] | None = None,
                          state: str | None = None) -> RepairWords:
    """``diagnose``'s ``openclaw``/``state_dir``/``clawprobe`` keywords for a check read back
    (:func:`recorded_command_lines` of the receipt's config file, or a bundle's ``state``): one call for
    ``replay``, the ``--replay`` dashboard and walk, and a bundle."""
    lines, state = recorded_command_lines(openclaw, state, config, env)
    return RepairWords(openclaw=lines.openclaw, state_dir=state, clawprobe=lines.clawprobe)


def normalize_agent_id(value: Any) -> str:
    """OpenClaw's ``normalizeAgentId``: trimmed, lowercased, invalid characters → ``-``, max 64, else ``main``."""
    s = str(value or "").strip()
    if not s:
        return DEFAULT_AGENT_ID
    if _VALID_ID.match(s):
        return s.lower()
    return _INVALID_CHARS.sub("-", s.lower()).strip("-")[:64] or DEFAULT_AGENT_ID


def agent_entries(cfg: Mapping[str, Any]) -> list[dict]:
    """Agent entries from ``agents.list`` (≤ 2026.7) or ``agents.entries`` (map, 2026.7+), each with ``id``."""
    agents = as_mapping(cfg.get("agents"))
    out: list[dict] = []
    if isinstance(agents.get("list"), list):
        out += [dict(e) for e in agents["list"] if isinstance(e, Mapping)]
    if isinstance(agents.get("entries"), Mapping):
        out += [dict(v, id=v.get("id", k)) for k, v in agents["entries"].items() if isinstance(v, Mapping)]
    return out


def default_agent_id(cfg: Mapping[str, Any]) -> str:
    """The entry with ``default: true``, else the first entry, else ``main``."""
    entries = agent_entries(cfg)
    if not entries:
        return DEFAULT_AGENT_ID
    chosen = next((e for e in entries if e.get("default") is True), entries[0])
    return normalize_agent_id(chosen.get("id"))


def workspace_owner(cfg: Mapping[str, Any], version: str | None) -> str | None:
    """The agent that gets ``agents.defaults.workspace`` itself (every other agent gets ``<it>/<id>``), or
    ``None`` when none does.

    ≤ 2026.7 (and an unknown version): the default agent (:func:`default_agent_id`; 2026.7.35
    ``resolveAgentWorkspaceDir``). From 2026.8 (2026.9.6 ``agent-scope-config``: the legacy data owner): the one
    entry marked ``default: true`` unless ``agents.ownership`` is ``explicit``, else the sole agent (``main``
    without a roster), else none — a multi-agent roster with explicit ownership gives every agent
    ``<workspace>/<id>``. Not read: an owner OpenClaw retained from a migration in its own state."""
    v = calver(version)
    if v is None or v < STATE_DIR_WORKSPACE_FROM:
        return default_agent_id(cfg)
    agents = as_mapping(cfg.get("agents"))
    entries = agent_entries(cfg)
    marked = [e for e in entries if e.get("default") is True]
    if agents.get("ownership") != "explicit" and len(marked) == 1:
        return normalize_agent_id(marked[0].get("id"))
    if not entries:
        return None if "list" in agents or "entries" in agents else DEFAULT_AGENT_ID
    return normalize_agent_id(entries[0].get("id")) if len(entries) == 1 else None


def agent_ids(cfg: Mapping[str, Any]) -> list[str]:
    """Every configured agent id (normalized, de-duplicated, default first); ``["main"]`` when none."""
    ids = [normalize_agent_id(e.get("id")) for e in agent_entries(cfg)]
    first = default_agent_id(cfg)
    return list(dict.fromkeys([first, *ids]))


class UnknownAgent(ValueError):
    """An ``--agent`` value OpenClaw does not know; ``str()`` is the operator message, e.g.
    ``no agent 'ghost' (known: main, work)``."""


EXPLICIT_SOURCES = ("--state-dir", "$OPENCLAW_STATE_DIR", "--config", "$OPENCLAW_CONFIG_PATH")


def _holds_state(path: str) -> bool:
    """Whether ``path`` holds what an OpenClaw state dir holds: ``openclaw.json`` or an ``agents/`` dir."""
    return os.path.lexists(os.path.join(path, "openclaw.json")) or os.path.isdir(os.path.join(path, "agents"))


def missing_explicit(located: Located, kind: str) -> str | None:
    """Why an operator-given location cannot be used, or ``None``.

    ``located`` comes from :func:`state_dir` (``kind="state dir"``) or :func:`config_path` (``kind="config"``).
    Only explicit sources (``--state-dir``, ``$OPENCLAW_STATE_DIR``, ``--config``, ``$OPENCLAW_CONFIG_PATH``)
    are held to existence: a default location that is absent just means "no install here", but a
    misspelt explicit one must not be probed (OpenClaw's CLI would create it). A state dir that holds no
    OpenClaw state while its ``.openclaw`` does (a home dir given for its ``~/.openclaw``) is refused with the
    path meant: probed, it would be an empty install whose repair is "create the workspace" under the home dir.
    A config *directory* is not refused here — the config probe reports it as ``config_invalid``. I/O: a few
    ``os.stat``.
    """
    if located.source not in EXPLICIT_SOURCES:
        return None
    p = located.path
    if kind == "state dir":
        if not os.path.lexists(p):
            return f"no OpenClaw state dir at {p} (from {located.source})"
        if not os.path.isdir(p):
            return f"the OpenClaw state dir {p} (from {located.source}) is not a directory"
        inner = os.path.join(p, ".openclaw")
        if not _holds_state(p) and _holds_state(inner):  # a home dir given for its ~/.openclaw
            return (f"{p} (from {located.source}) holds no OpenClaw state (no openclaw.json, no agents/), but "
                    f"{inner} does: did you mean --state-dir {inner}?")
        return None
    if not os.path.lexists(p):
        return f"no OpenClaw config file at {p} (from {located.source})"
    if not os.path.exists(p):
        return f"the OpenClaw config {p} (from {located.source}) is a dangling symlink"
    return None


def agent_dirs(state: str) -> list[str]:
    """Agent ids that have a ``<state>/agents/<id>/`` directory (sorted; only names that are already
    normalized ids). I/O: one ``os.scandir``; an absent or unreadable dir gives ``[]``."""
    try:
        with os.scandir(os.path.join(state, "agents")) as it:
            names = [e.name for e in it if e.is_dir()]
    except OSError:
        return []
    return sorted(n for n in names if _VALID_ID.match(n) and n == n.lower())


def known_agents(cfg: Mapping[str, Any], state: str, version: str | None = None) -> list[str]:
    """The agent ids OpenClaw knows for this install: the configured ids (default first, see
    :func:`agent_ids`), then every ``<state>/agents/<id>/`` dir not configured (:func:`agent_dirs`) — but only
    while ``version`` may be 2026.7.x or older (2026.7.35 probes such an agent; 2026.9.6 answers every memory
    command for it with ``Unknown agent id "<id>"``, with or without a roster: measured). Pure but for one
    ``os.scandir``."""
    dirs = agent_dirs(state) if has_qmd_backend(version) is not False else []
    return list(dict.fromkeys([*agent_ids(cfg), *dirs]))


def refused_agent(cfg: Mapping[str, Any], state: str, agent_id: str, version: str | None) -> str | None:
    """Why ``--agent agent_id`` names no agent this OpenClaw ``version`` knows, or ``None``.

    The front door (``clawprobe.cli.main.preflight``) runs before the version is known and accepts a
    ``<state>/agents/<id>/`` dir; from 2026.8.1 OpenClaw refuses an id its config does not list (a removed
    agent's left-over state dir), so probing it would judge a workspace and index nothing can search. Pure
    but for one ``os.scandir``."""
    known = known_agents(cfg, state, version)
    if agent_id in known:
        return None
    names = ", ".join(k for k in known if k) or "none configured"
    left = " (its state dir under agents/ is left over from a removed agent)" if agent_id in agent_dirs(state) else ""
    return (f"no agent {agent_id!r} in the config (known: {names}){left}: OpenClaw {version} refuses an agent its "
            f"config does not list (\"Unknown agent id\") — add it back to the config to probe it")


def check_agent_id(value: str, known: list[str] | None) -> str:
    """The agent id for an operator's ``--agent value``; raises :class:`UnknownAgent`.

    Accepted when OpenClaw's :func:`normalize_agent_id` changes nothing but case and surrounding blanks
    (``Main`` → ``main``) and the id is in ``known`` (:func:`known_agents`). ``known=None`` (the config
    does not load, so the configured ids are unknown) checks the spelling only. Refused: ids that
    normalization would rewrite into another id (``../x`` → ``x``, ``a/b`` → ``a-b``, ``""`` → ``main``) —
    probing a different agent than the one asked for would be a silent lie — and ids OpenClaw has no
    config entry or state dir for — a configured id OpenClaw rewrites (``Ops.Team`` → ``ops-team``) is refused
    with the id to use. Pure.
    """
    raw = str(value)
    want = raw.strip()
    norm = normalize_agent_id(want)
    names = ", ".join(known) if known else "none configured"
    if want and norm != want.lower() and known is not None and norm in known and "/" not in want and ".." not in want:
        raise UnknownAgent(f"agent {raw!r} is the one OpenClaw calls {norm} (it rewrites ids to letters, digits, "
                           f"'_' and '-'): use --agent {norm}")
    if not want or norm != want.lower():
        raise UnknownAgent(f"no agent {raw!r} (known: {names}; an agent id is letters, digits, '_' and '-')")
    if known is not None and norm not in known:
        raise UnknownAgent(f"no agent {raw!r} (known: {names})")
    return norm


def agent_entry(cfg: Mapping[str, Any], agent_id: str) -> dict | None:
    """The config entry of ``agent_id`` (matched after normalization), or ``None``."""
    want = normalize_agent_id(agent_id)
    return next((e for e in agent_entries(cfg) if normalize_agent_id(e.get("id")) == want), None)


def workspace_key(cfg: Mapping[str, Any], agent_id: str) -> str | None:
    """The config key that sets ``agent_id``'s own workspace, as ``openclaw config set`` takes it (pure):
    ``agents.entries.<key>.workspace`` (the 2026.8+ map), ``agents.list[<i>].workspace`` (the array: 2026.7.35's
    ``config set`` takes the index, measured), ``agents.defaults.workspace`` without a roster; ``None`` when a
    roster exists and holds no entry for the agent (a key would have to create one)."""
    key = agent_key(cfg, agent_id)
    if key is not None:
        return f"{key}.workspace"
    return None if agent_entries(cfg) else "agents.defaults.workspace"


def agent_key(cfg: Mapping[str, Any], agent_id: str) -> str | None:
    """The config key of ``agent_id``'s own entry as ``openclaw config set`` takes it (pure):
    ``agents.entries.<key>`` (the 2026.8+ map) or ``agents.list[<i>]`` (the array); ``None`` without one."""
    agents = as_mapping(cfg.get("agents"))
    want = normalize_agent_id(agent_id)
    if isinstance(agents.get("entries"), Mapping):
        for k, v in agents["entries"].items():
            if isinstance(v, Mapping) and normalize_agent_id(v.get("id", k)) == want and "." not in str(k):
                return f"agents.entries.{k}"
    if isinstance(agents.get("list"), list):
        for i, e in enumerate(agents["list"]):
            if isinstance(e, Mapping) and normalize_agent_id(e.get("id")) == want:
                return f"agents.list[{i}]"
    return None


def workspace_dir(cfg: Mapping[str, Any], agent_id: str, env: Mapping[str, str], state: Located,
                  version: str | None, cwd: str | None = None) -> Located:
    """The agent's workspace as OpenClaw resolves it.

    ``cwd``: the running gateway's working directory (``/proc/<pid>/cwd``), which a relative configured
    workspace is resolved against — the gateway's reading is the one its agent searches; ``None`` when no
    gateway runs (or its directory is unreadable): then the home directory (:func:`_configured`).

    Order: the agent entry's ``workspace``; ``agents.defaults.workspace`` for its owner (:func:`workspace_owner`;
    other agents get ``<it>/<id>``);
    the default agent's built-in default, which depends on the release (field report §8): 2026.7.35 uses
    ``<home>/.openclaw/workspace`` even with ``$OPENCLAW_STATE_DIR``; 2026.9.6 uses
    ``$OPENCLAW_STATE_DIR/workspace``. Unknown version: whichever candidate exists (else the newer rule).
    Other agents without a setting: ``<state>/workspace-<id>``.
    """
    aid = normalize_agent_id(agent_id)
    entry = agent_entry(cfg, aid) or {}
    if isinstance(entry.get("workspace"), str) and entry["workspace"].strip():
        return _configured(entry["workspace"], env, f"agent {aid} workspace", cwd)
    agents = as_mapping(cfg.get("agents"))
    defaults = as_mapping(agents.get("defaults"))
    fallback = defaults.get("workspace") if isinstance(defaults.get("workspace"), str) else None
    if aid == workspace_owner(cfg, version):
        if fallback and fallback.strip():
            return _configured(fallback, env, "agents.defaults.workspace", cwd)
        profile = _clean(env.get("OPENCLAW_PROFILE"))
        name = f"workspace-{profile}" if profile and profile.lower() != "default" else "workspace"
        old = Located(path=os.path.join(home_dir(env), STATE_DIRNAME, name),
                      source="default <home>/.openclaw/workspace (OpenClaw ≤ 2026.7)")
        state_set = state.source in ("$OPENCLAW_STATE_DIR", "--state-dir")
        new = Located(path=os.path.join(state.path, "workspace"),
                      source="default $OPENCLAW_STATE_DIR/workspace (OpenClaw ≥ 2026.8)") if state_set else old
        v = calver(version)
        if v is not None:
            return new if v >= STATE_DIR_WORKSPACE_FROM else old
        if os.path.isdir(old.path) and not os.path.isdir(new.path):
            return old.model_copy(update={"source": old.source + ", version unknown, exists"})
        return new.model_copy(update={"source": new.source + ", version unknown"})
    if fallback and fallback.strip():
        base = _configured(fallback, env, "agents.defaults.workspace/<id>", cwd)
        return base.model_copy(update={"path": os.path.join(base.path, aid)})
    return Located(path=os.path.join(state.path, f"workspace-{aid}"), source="default <state>/workspace-<id>")


def is_relative(value: str) -> bool:
    """Whether a configured path is resolved against a process's working directory (not ``~``, not absolute)."""
    v = value.strip()
    return bool(v) and not (v == "~" or v.startswith(("~/", "~\\")) or os.path.isabs(v))


def _configured(raw: str, env: Mapping[str, str], source: str, cwd: str | None = None) -> Located:
    """A configured workspace. A relative one is resolved by OpenClaw against each process's working directory:
    with a running gateway's ``cwd`` known, against it (the gateway's agent searches that one); otherwise
    clawprobe resolves it against the home directory — where its own OpenClaw calls run and a user service
    starts — and says so in the source (the ``workspace_relative`` finding names the hazard)."""
    if not is_relative(raw):
        return Located(path=user_path(raw, env), source=source)
    if cwd:
        return Located(path=user_path(raw, env, base=cwd),
                       source=f"{source} (relative: resolved against the gateway's working directory {cwd})")
    home = home_dir(env)
    return Located(path=user_path(raw, env, base=home), source=f"{source} (relative: resolved against {home})")


def relative_workspace(cfg: Mapping[str, Any], agent_id: str, version: str | None) -> str | None:
    """The configured workspace string that applies to ``agent_id`` when it is relative (:func:`is_relative`),
    else ``None`` (pure; the same precedence as :func:`workspace_dir`)."""
    aid = normalize_agent_id(agent_id)
    entry = agent_entry(cfg, aid) or {}
    own = entry.get("workspace")
    if isinstance(own, str) and own.strip():
        return own if is_relative(own) else None
    fallback = as_mapping(as_mapping(cfg.get("agents")).get("defaults")).get("workspace")
    return fallback if isinstance(fallback, str) and is_relative(fallback) else None


class QmdHome(BaseModel):
    """The per-agent QMD home OpenClaw manages (qmd-manager: XDG dirs per agent)."""

    model_config = ConfigDict(extra="forbid")
    root: str
    xdg_config: str
    xdg_cache: str
    config_dir: str
    index: str
    models: str


def qmd_home(state: str, agent_id: str) -> QmdHome:
    """``<state>/agents/<id>/qmd/{xdg-config,xdg-cache}``; index ``xdg-cache/qmd/index.sqlite``."""
    root = os.path.join(state, "agents", normalize_agent_id(agent_id), "qmd")
    cfg, cache = os.path.join(root, "xdg-config"), os.path.join(root, "xdg-cache")
    return QmdHome(root=root, xdg_config=cfg, xdg_cache=cache, config_dir=os.path.join(cfg, "qmd"),
                   index=os.path.join(cache, "qmd", "index.sqlite"), models=os.path.join(cache, "qmd", "models"))


def default_log_file(now: datetime, env: Mapping[str, str]) -> str:
    """OpenClaw's shared JSON-lines log for ``now``'s local date: ``/tmp/openclaw/openclaw-YYYY-MM-DD.log``
    (``$OPENCLAW_PROFILE`` adds ``-<profile>``). Used when the config sets no ``logging.file``."""
    profile = _clean(env.get("OPENCLAW_PROFILE"))
    stem = f"openclaw-{profile}" if profile and profile.lower() != "default" else "openclaw"
    return str(Path("/tmp/openclaw") / f"{stem}-{now.astimezone().strftime('%Y-%m-%d')}.log")
