"""Whether this agent's tool policy leaves it the ``memory_search`` tool (pure; source: the config tree).

The memory plugin can be loaded and its index healthy while the agent never gets the tool: OpenClaw filters every
agent's tools through its tool policy, and ``openclaw memory search`` (the CLI) ignores that policy — the gateway's
``tools.invoke`` then answers ``not_found`` "Tool not available: memory_search" (breaker round 21, D). Read in
OpenClaw 2026.7.35 and 2026.9.6 (``agent-tools.policy``, ``tool-policy-pipeline``, ``tool-policy-match``,
``tool-catalog``), the same in both eras:

* layers, each of which must keep the tool: the profile (the agent's ``tools.profile``, else ``tools.profile``;
  its allow list widened by the agent's ``tools.alsoAllow``, else ``tools.alsoAllow``), ``tools.byProvider`` (per
  model provider), ``tools.allow``/``alsoAllow``/``deny``, the agent's own ``tools`` (``agents.list[i].tools``,
  ``agents.entries.<id>.tools``) and its ``byProvider``, the sandbox's policy when a sandbox mode is on;
* profiles: ``minimal`` and ``messaging`` leave ``memory_search``/``memory_get`` out, ``coding`` and ``full``
  (``*``) keep them; a name OpenClaw does not know restricts nothing there (clawprobe says it cannot tell);
* a list entry matches after trim + lower case: the name, a ``*`` glob, ``group:memory`` / ``group:openclaw``
  (both hold the memory tools), ``group:plugins`` and the memory plugin's id (its tools are the plugin's);
  deny wins; an allow list that is empty or absent allows everything; ``alsoAllow`` without ``allow`` is ``*``.

Not evaluated (they narrow only some chats, not the agent): channel group and sender policies
(``channels.*.groups.*.tools``, ``toolsBySender``), sub-agent sessions, and ``gateway.tools`` (the gateway's own
HTTP surface). What clawprobe cannot evaluate with certainty is said in ``unknown``, never taken as available.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clawprobe.core.locate import agent_entry, agent_key

MEMORY_TOOLS = ("memory_search", "memory_get")
#: OpenClaw's built-in profiles (``CORE_TOOL_PROFILES``) → whether they include ``memory_search``
PROFILES = {"minimal": False, "coding": True, "messaging": False, "full": True}
#: the core groups that hold the memory tools (``CORE_TOOL_GROUPS``); ``group:plugins``: every plugin tool
MEMORY_GROUPS = frozenset({"group:memory", "group:openclaw", "group:plugins"})
SANDBOX_ON = ("all", "non-main")


@dataclass(frozen=True)
class ToolPolicy:
    """``removed``: the key and value that take ``memory_search`` from this agent (words); ``key``/``fix``: the
    key to set and the value (a list) that restores it with the least change; ``unknown``: why the policy could
    not be evaluated with certainty. All ``None``: the agent has the tool."""

    removed: str | None = None
    key: str | None = None
    fix: list[str] | None = None
    unknown: str | None = None


class _Unknown(Exception):
    pass


def _matches(entry: object, tool: str, plugin: str) -> bool:
    if not isinstance(entry, str):
        raise _Unknown(f"a non-text entry {json.dumps(entry, default=str)}")
    e = entry.strip().lower()
    if e in (tool, plugin) or e in MEMORY_GROUPS:
        return True
    return "*" in e and re.fullmatch(".*".join(re.escape(p) for p in e.split("*")), tool) is not None


def _list(tools: Mapping[str, Any], name: str, key: str) -> list | None:
    value = tools.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise _Unknown(f"{key}.{name} is not a list")
    return value


def _layer(tools: Mapping[str, Any], key: str, plugin: str) -> ToolPolicy | None:
    """One allow/alsoAllow/deny layer (``pickSandboxToolPolicy`` + ``createToolPolicyMatcher``): what removes
    ``memory_search`` there, with the fix, or ``None``."""
    deny = _list(tools, "deny", key)
    if deny and any(_matches(e, "memory_search", plugin) for e in deny):
        kept = [e for e in deny if not any(_matches(e, t, plugin) for t in MEMORY_TOOLS)]
        return ToolPolicy(f"{key}.deny = {json.dumps(deny)}", f"{key}.deny", kept)
    allow, also = _list(tools, "allow", key), _list(tools, "alsoAllow", key)
    if allow:  # absent or empty: everything (alsoAllow alone is "*" plus it)
        if not any(_matches(e, "memory_search", plugin) for e in [*allow, *(also or [])]):
            return ToolPolicy(f"{key}.allow = {json.dumps(allow)} (leaves out memory_search)", f"{key}.allow",
                              [*allow, *(t for t in MEMORY_TOOLS if t not in allow)])
    return None


def _profile(agent_tools: Mapping[str, Any], akey: str | None, tools: Mapping[str, Any],
             plugin: str) -> ToolPolicy | None:
    on_agent = agent_tools.get("profile") is not None
    profile = agent_tools.get("profile") if on_agent else tools.get("profile")
    if profile is None:
        return None
    pkey = f"{akey}.tools.profile" if on_agent else "tools.profile"
    if not isinstance(profile, str) or profile not in PROFILES:
        raise _Unknown(f"{pkey} = {json.dumps(profile, default=str)} is not a profile clawprobe knows "
                       f"({', '.join(PROFILES)})")
    if PROFILES[profile]:
        return None
    if (also := _list(agent_tools, "alsoAllow", f"{akey}.tools")) is not None and akey is not None:
        also_key = f"{akey}.tools.alsoAllow"
    elif (also := _list(tools, "alsoAllow", "tools")) is not None:
        also_key = "tools.alsoAllow"
    else:
        also, also_key = [], f"{akey}.tools.alsoAllow" if on_agent else "tools.alsoAllow"
    if any(_matches(e, "memory_search", plugin) for e in also):
        return None
    return ToolPolicy(f'{pkey} = "{profile}" (a profile without memory_search)', also_key,
                      [*also, *(t for t in MEMORY_TOOLS if t not in also)])


def _by_provider(tools: Mapping[str, Any], key: str, plugin: str) -> None:
    """``byProvider`` applies by the model's provider, which the config alone does not settle: an entry that would
    remove the tool makes the answer unknown."""
    by = tools.get("byProvider")
    if by is None:
        return
    if not isinstance(by, Mapping):
        raise _Unknown(f"{key}.byProvider is not a map")
    for name, entry in by.items():
        where = f"{key}.byProvider.{name}"
        if not isinstance(entry, Mapping):
            raise _Unknown(f"{where} is not a map")
        profile = entry.get("profile")
        if profile is not None and (not isinstance(profile, str) or not PROFILES.get(profile, False)) and not any(
                _matches(e, "memory_search", plugin) for e in _list(entry, "alsoAllow", where) or []):
            raise _Unknown(f"{where}.profile = {json.dumps(profile, default=str)} may leave out memory_search for "
                           "that provider's models")
        if _layer(entry, where, plugin) is not None:
            raise _Unknown(f"{where} removes memory_search for that provider's models")


def tool_policy(tree: Mapping[str, Any], agent_id: str, memory_plugin: str | None) -> ToolPolicy:
    """Whether ``agent_id`` gets ``memory_search`` from the tool policy of ``tree`` (see the module doc)."""
    plugin = (memory_plugin or "").strip().lower() or "memory-core"
    try:
        tools = tree.get("tools")
        if tools is not None and not isinstance(tools, Mapping):
            raise _Unknown("tools is not a map")
        tools = tools or {}
        entry = agent_entry(tree, agent_id) or {}
        akey = agent_key(tree, agent_id)
        agent_tools = entry.get("tools")
        if agent_tools is not None and not isinstance(agent_tools, Mapping):
            raise _Unknown(f"{akey or 'the agent entry'}.tools is not a map")
        agent_tools = agent_tools or {}
        agent_where = f"{akey}.tools" if akey else "the agent's tools"
        defaults = tree.get("agents", {}).get("defaults") if isinstance(tree.get("agents"), Mapping) else None
        found = _profile(agent_tools, akey, tools, plugin)
        _by_provider(tools, "tools", plugin)
        _by_provider(agent_tools, agent_where, plugin)
        found = found or _layer(tools, "tools", plugin) or _layer(agent_tools, agent_where, plugin)
        if found is not None:
            return found
        dtools = defaults.get("tools") if isinstance(defaults, Mapping) else None
        if dtools is not None and (not isinstance(dtools, Mapping) or _profile(dtools, "agents.defaults", {}, plugin)
                                   or _layer(dtools, "agents.defaults.tools", plugin)):
            raise _Unknown("agents.defaults.tools would remove memory_search where OpenClaw applies it")
        mode = _sandbox_mode(entry, defaults)
        if mode in SANDBOX_ON:
            raise _Unknown(f'sandbox mode "{mode}": sandboxed sessions get the sandbox tool policy, whose default '
                           "leaves out memory_search")
    except _Unknown as e:
        return ToolPolicy(unknown=str(e))
    return ToolPolicy()


def _sandbox_mode(entry: Mapping[str, Any], defaults: Any) -> object:
    own = entry.get("sandbox")
    if isinstance(own, Mapping) and own.get("mode") is not None:
        return own.get("mode")
    d = defaults.get("sandbox") if isinstance(defaults, Mapping) else None
    return d.get("mode") if isinstance(d, Mapping) else None
