"""Filling the repair catalog's templates for one agent and install (spec §6).

Commands, titles and texts in the catalog (``catalog/*.toml``) hold ``{key}`` placeholders (``{agent}``, ``{openclaw}``,
``{clawprobe}``, ``{qmd}``, ``{config}``, ``{state}``, ``{agent_xdg}``…; every key is one of :data:`CONTEXT_KEYS`, the keys
:func:`context` returns) filled with the real values the receipt holds — paths shell-quoted
(``shlex.quote``; a leading ``~/`` stays unquoted so the shell expands it), the canary token read from the
canary file at run time (the receipt keeps only its hash). A command needing a value the receipt does not
hold is **not offered**: :func:`fill` returns ``None`` for it and the text says what to fill in
(:data:`UNKNOWN`; no ``<placeholder>`` ever reaches a command: pasted into a shell, ``<canary`` is a
redirection).
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from typing import Literal, overload

from clawprobe.core.canary import TOKEN_PREFIX
from clawprobe.core.modes import MODELS_NEEDED
from clawprobe.core.receipt import (
    AUTO_PROVIDER,
    PROVIDER_KEY_NAMES,
    QMD_SNIPPET_DEFAULTS,
    LockHolder,
    Receipt,
    SearchMode,
    SidecarHolder,
)
from clawprobe.core.shell import bounded, move_to_free_name
from clawprobe.core.shell import word as shell_word


def _q(path: str) -> str:
    """``path`` quoted for a POSIX shell (``shlex.quote``), a leading ``~/`` left bare so the shell expands it."""
    if path == "~":
        return path
    if path.startswith("~/"):
        return "~/" + shell_word(path[2:]) if path[2:] else "~/"
    return shell_word(path)


def _state_dir(r: Receipt, state_dir: str | None) -> str:
    """The state dir to name: the caller's, else the config file's dir when it is ``…/openclaw.json``
    (OpenClaw's default layout), else ``~/.openclaw``."""
    if state_dir:
        return state_dir
    cfg = r.config.path or ""
    return os.path.dirname(cfg) if os.path.basename(cfg) == "openclaw.json" and os.path.dirname(cfg) else "~/.openclaw"


def _fetch_models(r: Receipt, qmd_cmd: str, xdg: str) -> tuple[str | None, str, str]:
    """``(command, how, roles)`` that really fetches the models the configured mode lacks (source: qmd.md §3.2
    — ``embed`` loads the embed model, and only with documents to embed; ``vsearch`` generate + embed;
    ``query`` generate, embed and rerank, with ``--intent`` so a strong BM25 hit cannot skip expansion)."""
    mode = r.config.search_mode
    needed = MODELS_NEEDED.get(mode, ())
    missing = [m for m in needed if m in (r.vectors.missing_models or [])] or list(needed)
    to_embed = bool(r.vectors.pending) or r.vectors.has_vector_table is False
    if missing == ["embed"] and to_embed or mode == "search":
        return f"{xdg} {qmd_cmd} embed", "`qmd embed` (it loads the embed model for the pending documents)", "embed"
    verb: SearchMode = "query" if mode == "query" else "vsearch"
    extra = " --intent 'model warm-up'" if verb == "query" else ""
    cmd = f"{xdg} {qmd_cmd} {verb} 'clawprobe warm-up'{extra} -n 1"
    how = f"one warm-up `qmd {verb}` (it loads {', '.join(MODELS_NEEDED[verb])})"
    if "embed" in missing and to_embed:
        cmd = f"{xdg} {qmd_cmd} embed && {cmd}"
        how = "`qmd embed`, then " + how
    return cmd, how, ", ".join(missing)


#: the bound (s) of ``{openclaw_bounded}``: an OpenClaw command that retries a provider answering late (measured:
#: ``memory status --deep`` ran more than 150 s against one answering after 120 s, breaker round 23)
BOUND_S = 90

#: what to write in a text (title, check, verify) when the receipt does not hold a value; a command that
#: needs one of these is not offered at all
UNKNOWN = {
    "qmd_abs": "the absolute path of qmd (`command -v qmd` in a shell where qmd works)",
    "qmd_found": "none found on the gateway's PATH or the usual install dirs",
    "qmd_resolved": "the qmd command's path (`command -v qmd` on the gateway's PATH)",
    "qmd_version": "of an unknown version",
    "gateway_path_env": "the gateway's PATH (not measured)",
    "token": "the canary token (`clawprobe canary show`)",
    "canary_file": "the canary file's path",
    "moved_from": "the directory the canary was planted in",
    "moved_to": "where that directory is now (see the evidence)",
    "move_back": "a move of that directory back to its old name",
    "lock_pid": "the holder's pid (not visible to this user: `fuser -v` the index as root)",
    "lock_holder": "holder not visible to this user",
    "stray_collection": "the collection holding the notes' path (`qmd collection list` with the agent's XDG dirs)",
    "unreadable_files": "the unreadable files (listed in the evidence)",
    "unreadable_list": "see the evidence",
    "warmup": "a warm-up query with the agent's XDG dirs",
    "memory_off": "the setting that switches memory search off",
    "memory_off_key": "that key (the agent's entry in agents.list: edit it in the config file)",
    "deny_kept": "plugins.deny without the memory plugin (edit the list in the config file)",
    "allow_with": "plugins.allow with the memory plugin added (edit the list in the config file)",
    "tool_off": "the tool policy key that removes memory_search",
    "tool_off_key": "that key (edit it in the config file)",
    "tool_fix": "the list with memory_search and memory_get (edit it in the config file)",
    "embed_pid": "the stalled qmd embed's pid (`pgrep -af 'qmd.*embed'`)",
    "gateway_key_export": "the gateway's provider key in this shell (no running gateway to read it from: export it as "
                          "its service sets it)",
    "gateway_keys": "the provider key the gateway's environment sets",
}



def reindex_holder(r: Receipt) -> SidecarHolder | None:
    """The process holding the builtin reindex-lock sidecar: the write-lock holder first, else any process
    that has it open (source: ``receipt.builtin.gates.reindex_lock``)."""
    lock = r.builtin.gates.reindex_lock
    if lock is None or not lock.holders:
        return None
    return next((h for h in lock.holders if h.write_lock), lock.holders[0])


def context(r: Receipt, openclaw: str | None, state_dir: str | None,
            clawprobe: str | None = None) -> dict[str, str | None]:
    """The values commands are filled with, from the receipt (``None``: not known — see :data:`UNKNOWN`).
    Paths are shell-quoted; ``openclaw`` and ``clawprobe`` are the caller's command lines (default ``openclaw`` /
    ``clawprobe``; with the probed install's location: ``clawprobe.core.locate.command_lines``), used as given."""
    agent = r.agent_id
    state = _state_dir(r, state_dir)
    q = r.qmd
    found = (q.candidate_version, q.candidate_path) if q.candidate_path else None
    # never the command measured not qmd, nor the one that keeps its index elsewhere (the wrapper to replace)
    usable = q.resolved_path if (q.resolves or q.store_ok is not None) and q.failure not in (
        "not_qmd", "index_elsewhere") else None
    qmd_abs = found[1] if found else (usable if usable and os.path.isabs(usable) else None)
    qmd_cmd = _q(q.resolved_path) if q.resolves and q.resolved_path else _q(qmd_abs or q.command or "qmd")
    home = f"{state.rstrip('/')}/agents/{agent}/qmd"
    xdg = (f"XDG_CONFIG_HOME={_q(home + '/xdg-config')} QMD_CONFIG_DIR={_q(home + '/xdg-config/qmd')} "
           f"XDG_CACHE_HOME={_q(home + '/xdg-cache')}")
    index_dir = f"{home}/xdg-cache/qmd"
    store = r.builtin.store_path or f"{state.rstrip('/')}/agents/{agent}/agent/openclaw-agent.sqlite"
    stamp = r.checked_at.strftime('%Y%m%dT%H%M%SZ')
    workspace = r.config.workspace or "~/.openclaw/workspace"
    canary_file = f"{workspace.rstrip('/')}/{r.canary.expected_path}" if r.canary.expected_path else None
    moved = r.canary.moved_dir  # the canary's directory renamed or moved (workspace-relative: planted, now)
    token = f'"$(grep -om1 \'{TOKEN_PREFIX}[A-Z2-7]*\' {_q(canary_file)})"' if canary_file else None
    holders = q.lock_holders if q.failure == "index_locked" else []
    sidecar = reindex_holder(r) if r.config.configured_backend != "qmd" else None
    if sidecar is not None:
        holders = [LockHolder(pid=sidecar.pid, what=sidecar.command)]
    unreadable = r.freshness.unreadable_files[:5]
    link = next(iter(r.coverage.linked_roots.items()), None)  # a symlinked extraPaths entry and its real path
    clash = next(iter(r.coverage.rename_clashes.items()), None)  # a skipped note and the file holding its right name
    globbed = next(iter(r.coverage.glob_roots.items()), None)  # a wildcard extraPaths entry and its directory
    fetch, fetch_how, missing = _fetch_models(r, qmd_cmd, xdg)
    mode = r.config.search_mode
    return {
        "agent": agent, "openclaw": openclaw or "openclaw", "clawprobe": clawprobe or "clawprobe", "qmd": qmd_cmd,
        "openclaw_bounded": bounded(openclaw or "openclaw", BOUND_S),  # for a command that may retry for minutes
        "qmd_abs": _q(qmd_abs) if qmd_abs else None,  # never the path just measured missing or not qmd
        "qmd_found": f"qmd {found[0]} at {found[1]}" if found else None,
        # the config value `"<path>"`, quotes included (OpenClaw honours them), as `config set` reads it: JSON
        "qmd_abs_quoted": _q(json.dumps(f'"{found[1]}"')) if found else None,
        "qmd_resolved": _q(r.qmd.resolved_path) if r.qmd.resolved_path else None,
        "qmd_version": r.qmd.version,
        "config": _q(r.config.path or "~/.openclaw/openclaw.json"), "state": _q(state), "agent_xdg": xdg,
        "gateway_path_env": f"PATH={_q(':'.join(r.gateway.path_dirs))}" if r.gateway.path_dirs else None,
        "workspace": _q(workspace), "log_glob": _log_file(r),
        "blocker_pid": str(r.freshness.write_holder.pid) if r.freshness.write_holder else None,
        "blocker": (f"pid {r.freshness.write_holder.pid}: {r.freshness.write_holder.what}"
                    if r.freshness.write_holder else None),
        "workspace_key": _q(r.config.workspace_key) if r.config.workspace_key else None,
        "state_writer": r.openclaw.state_written_by,
        "notes_nearby": _q(r.coverage.notes_nearby) if r.coverage.notes_nearby else None,
        "missing_root": _q(r.coverage.missing_roots[0]) if r.coverage.missing_roots else None,
        "emptied_root": _q(next(iter(r.coverage.emptied_roots))) if r.coverage.emptied_roots else None,
        "emptied_count": str(next(iter(r.coverage.emptied_roots.values()))) if r.coverage.emptied_roots else None,
        "missing_root_parent": _q(os.path.dirname(r.coverage.missing_roots[0])) if r.coverage.missing_roots else None,
        "linked_root": _q(link[0]) if link else None, "linked_target": _q(link[1]) if link else None,
        "clash_from": _q(clash[0]) if clash else None, "clash_to": _q(clash[1]) if clash else None,
        "glob_raw": _q(globbed[0]) if globbed else None, "glob_dir": _q(globbed[1]) if globbed else None,
        "canary_file": _q(canary_file) if canary_file else None, "token": token,
        "moved_from": _q(os.path.join(workspace, moved[0])) if moved else None,
        "moved_to": _q(os.path.join(workspace, moved[1])) if moved else None,
        "move_back": move_to_free_name(_q(os.path.join(workspace, moved[1])), _q(os.path.join(workspace, moved[0])))
        if moved else None,
        "index": _q(f"{index_dir}/index.sqlite"), "index_dir": _q(index_dir),
        "damaged_dir": _q(f"{index_dir}/damaged-{stamp}"),
        "store": _q(store), "store_dir": _q(os.path.dirname(store)), "store_aside": _q(f"{os.path.dirname(store)}/set-aside-{stamp}"),
        "lock_pid": str(holders[0].pid) if holders else None,
        "lock_holder": f"pid {holders[0].pid} ({holders[0].what})" if holders else None,
        "stray_collection": _q(q.stray_collections[0]) if q.stray_collections else None,
        "unreadable_files": " ".join(_q(os.path.join(workspace, p)) for p in unreadable) or None,  # p may be absolute
        "unreadable_list": ", ".join(unreadable) or None,
        "embed_pid": str(r.vectors.embed_running_pid) if r.vectors.embed_running_pid else None,
        "model_dir": _q(f"{home}/xdg-cache/qmd/models"),
        "mode": mode, "warmup": fetch if mode != "search" else None, "fetch_models": fetch,
        "fetch_how": fetch_how, "missing_models": missing,
        "provider": _q(r.config.provider) if r.config.provider else None,
        "provider_key": _provider_key(r), "provider_key_parent": _era_provider_key(r).rsplit(".", 1)[0],
        **_service(r),
        "memory_off": r.config.memory_off, "memory_off_key": _off_key(r.config.memory_off),
        "deny_kept": _deny_kept(r.config.memory_off), "allow_with": _allow_with(r.config.memory_off),
        "tool_off": r.config.tool_off, "tool_off_key": _q(r.config.tool_off_key) if r.config.tool_off_key else None,
        "tool_fix": _q(r.config.tool_fix) if r.config.tool_fix else None,
        "gateway_key_export": _gateway_key_export(r),
        "gateway_keys": ", ".join(n for n in r.gateway.provider_keys or [] if n in PROVIDER_KEY_NAMES[AUTO_PROVIDER])
        or None, "auto_provider": AUTO_PROVIDER,
        "sources_key": r.config.sources_key if r.config.sources_key and "[" not in r.config.sources_key else None,
        "sources_with_memory": _q(json.dumps(["memory", *(r.config.sources or [])])),
        "snippet_key": r.config.snippet_key,  # the limit that cut the canary's text, and OpenClaw's default for it
        "snippet_default": str(QMD_SNIPPET_DEFAULTS[r.config.snippet_key])
        if r.config.snippet_key in QMD_SNIPPET_DEFAULTS else None,
        "keyword_off_key": r.config.keyword_off if r.config.keyword_off and "[" not in r.config.keyword_off else None,
    }


def _gateway_key_export(r: Receipt) -> str | None:
    """``export "$(… /proc/<pid>/environ …)"``: the gateway's own provider-key variables (``receipt.gateway.provider_keys``
    of :data:`clawprobe.core.receipt.AUTO_PROVIDER`) put into a subshell's environment at run time, read from
    its running process — by name: no value is in the command, nor on any argv (``export`` is a shell builtin).
    ``None`` without a running gateway whose environment was read."""
    keys = [n for n in r.gateway.provider_keys or [] if n in PROVIDER_KEY_NAMES[AUTO_PROVIDER]]
    if not keys or r.gateway.env_source != "process" or not r.gateway.pid:
        return None
    names = "|".join(keys)
    return f"export \"$(tr '\\0' '\\n' < /proc/{r.gateway.pid}/environ | grep -m1 -E '^({names})=')\""


def _measured_list(memory_off: str | None, key: str, marker: str) -> tuple[list, str] | None:
    """``(list, plugin id)`` from a measured ``key = [...] (<marker> <id>)`` (``clawprobe.core.probes.config``:
    ``plugins.deny = [...] (blocks <id>)``, ``plugins.allow = [...] (leaves out <id>)``); ``None`` otherwise."""
    head, _, tail = (memory_off or "").partition(" = ")
    listed, _, plugin = tail.rpartition(f" ({marker} ")
    if head != key or not plugin.endswith(")"):
        return None
    try:
        items = json.loads(listed)
    except ValueError:
        return None
    return (items, plugin[:-1]) if isinstance(items, list) else None


def _deny_kept(memory_off: str | None) -> str | None:
    """``plugins.deny`` without the memory plugin, as a shell-quoted JSON list for ``openclaw config set
    plugins.deny``; ``None`` when the memory plugin is not off by that list."""
    found = _measured_list(memory_off, "plugins.deny", "blocks")
    return _q(json.dumps([d for d in found[0] if d != found[1]])) if found else None


def _allow_with(memory_off: str | None) -> str | None:
    """``plugins.allow`` with the memory plugin added, as a shell-quoted JSON list for ``openclaw config set
    plugins.allow``; ``None`` when the memory plugin is not left out by that list."""
    found = _measured_list(memory_off, "plugins.allow", "leaves out")
    return _q(json.dumps([*found[0], found[1]])) if found else None


def _off_key(memory_off: str | None) -> str | None:
    """The config key of a ``<key> = false`` that switched memory search off, for ``openclaw config set``; ``None``
    for an entry of the ``agents.list`` array (no key path names it: the prose says which to edit)."""
    key = (memory_off or "").removesuffix(" = false")
    return key if key and memory_off != key and "[" not in key else None


def _service(r: Receipt) -> dict[str, str]:
    """``{systemctl}`` and ``{unit}``: the manager and unit of the gateway's systemd service — a system unit's
    through ``sudo systemctl``, else the user's (``systemctl --user``; also when no unit was found: OpenClaw's
    ``gateway install`` writes ``openclaw-gateway.service`` there)."""
    g = r.gateway
    file = os.path.basename(g.service_file or "") if g.env_source == "systemd" else ""
    unit = shell_word(file[:-len(".service")]) if file.endswith(".service") else "openclaw-gateway"
    return {"systemctl": "sudo systemctl" if g.service_scope == "system" else "systemctl --user", "unit": unit}


def _log_file(r: Receipt) -> str:
    """The gateway log the evidence came from (an evidence source ``/path/file.log:LINE``), else OpenClaw's
    default rolling log ``/tmp/openclaw/openclaw-*.log`` (a configured ``logging.file`` wins when seen)."""
    for ev in r.backend.evidence:
        m = re.match(r"(/.+?\.(?:log|jsonl))(?::\d+)?$", ev.source or "")
        if m:
            return shell_word(m.group(1))
    return "/tmp/openclaw/openclaw-*.log"


def _provider_key(r: Receipt) -> str:
    """Where this build reads the agent's embedding provider: its own entry's key when that entry sets it (the
    override wins: ``receipt.config.provider_key``), else ``memory.search.provider`` from 2026.8 (no QMD
    backend), ``agents.defaults.memorySearch.provider`` before (2026.7.35 verified)."""
    return r.config.provider_key or _era_provider_key(r)


def _era_provider_key(r: Receipt) -> str:
    """The defaults' provider key of this build's era (pure)."""
    return "memory.search.provider" if r.openclaw.has_qmd_backend is False else "agents.defaults.memorySearch.provider"


PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@overload
def fill(text: str, ctx: dict[str, str | None], *, command: Literal[False] = False) -> str: ...
@overload
def fill(text: str | None, ctx: dict[str, str | None], *, command: bool = False) -> str | None: ...
def fill(text: str | None, ctx: dict[str, str | None], *, command: bool = False) -> str | None:
    """``text`` with its ``{key}`` placeholders filled from ``ctx``. For a command, any unknown value makes
    the whole command ``None`` (never offered half-filled); in prose an unknown value is described
    (:data:`UNKNOWN`). Unknown keys are left as they are (a literal brace in a command is not a key)."""
    if text is None:
        return None
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        key = m[1]
        if key not in ctx:
            return m[0]
        v = ctx[key]
        if v is None:
            missing = True
            return UNKNOWN.get(key, key.replace("_", " "))
        return v

    out = PLACEHOLDER.sub(sub, text)
    return None if command and missing else out


def needs(text: str | None, ctx: dict[str, str | None]) -> list[str]:
    """What a command template needs that the receipt does not hold (descriptions)."""
    return [UNKNOWN.get(k, k) for k in dict.fromkeys(PLACEHOLDER.findall(text or "")) if k in ctx and ctx[k] is None]



#: every placeholder name a catalog text may use: the keys :func:`context` fills (read off the function
#: itself, so the list cannot drift from it)
CONTEXT_KEYS: frozenset[str] = frozenset(context(Receipt(checked_at=datetime(2026, 1, 1, tzinfo=UTC)), None, None))
