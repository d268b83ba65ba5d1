"""``clawprobe canary plant|rotate|remove|show [--agent ID] [--yes]`` (headless, no textual).

``plant``/``rotate``/``remove`` write only ``<workspace>/memory/clawprobe-canary.md`` and clawprobe's own
record (``clawprobe.core.canary``), all or nothing: when any write fails, both are left exactly as they were and the
message says which step failed, where and why in plain words. They ask for confirmation on a terminal;
without a terminal they refuse unless ``--yes`` is given (exit 3). ``show`` only reads, and says what is at
the canary path: ``present``, ``modified`` (clawprobe's header, other content), ``foreign`` (not
clawprobe's), ``unreadable`` (permission denied or an I/O error: whose it is is unknown) or ``missing``.
Exit codes: 0 done, 3 could not run (no install, bad config, unknown agent, refused, a foreign or
unreadable file in the way, a failed write).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING, TextIO

from clawprobe.cli.main import EXIT_CANNOT_RUN, emit, warn
from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw

if TYPE_CHECKING:
    from clawprobe.core.probe import ProbeContext

EXIT_OK = 0


def _fail(msg: str) -> int:
    warn(msg, "clawprobe canary")
    return EXIT_CANNOT_RUN


def _resolve(args: argparse.Namespace) -> tuple[str, str, ProbeContext] | str:
    """(agent id, workspace, the discovered install) from the install, or an error message."""
    from clawprobe.core.locate import UnknownAgent, check_agent_id, has_qmd_backend, known_agents, refused_agent
    from clawprobe.core.probe import discover, workspace_of
    from clawprobe.core.probes.config_schema import validate_memory

    ctx = discover(getattr(args, "state_dir", None), getattr(args, "config", None))
    if not ctx.installed:
        return ctx.reason or "no OpenClaw install found"
    # a config this OpenClaw rejects (a parse error, or a key its schema refuses) says nothing reliable about
    # where the agents' workspaces are: nothing is planted until it loads
    e = ctx.config.error or validate_memory(ctx.config.tree, ctx.openclaw_version, ctx.config.path)
    if e is not None:
        where = ":".join(str(x) for x in (e.file or ctx.config_path.path, e.line, e.column) if x is not None)
        return f"the OpenClaw config does not load ({where}: {e.message}); fix it first"
    if not getattr(args, "agent", None) and len(ctx.agents) > 1 and has_qmd_backend(ctx.openclaw_version) is False:
        # 2026.8+ retired the agents' ``default`` markers: an operation with no agent has no owner ("Multiple agents
        # are configured, but this operation has no explicit owner"), so a canary is not planted for a guess
        return (f"{len(ctx.agents)} agents are configured and OpenClaw {ctx.openclaw_version} names no default one: "
                f"say which with --agent ({', '.join(ctx.agents)})")
    rejected = _openclaw_rejects(ctx) if getattr(args, "action", None) in ("plant", "rotate") else None
    if rejected is not None:
        return f"the OpenClaw config does not load ({rejected}); fix it first"
    try:
        agent = check_agent_id(getattr(args, "agent", None) or ctx.default_agent,
                               known_agents(ctx.config.tree, ctx.state_dir.path))
    except UnknownAgent as e:
        return str(e)
    if getattr(args, "action", None) in ("plant", "rotate") and (
            why := refused_agent(ctx.config.tree, ctx.state_dir.path, agent, ctx.openclaw_version)):
        return why  # a removed agent's canary is planted for no search (its left-over one may still be removed)
    ws = workspace_of(ctx, agent)  # a relative workspace as the running gateway resolves it
    return agent, ws.path, ctx


#: explainers that mean OpenClaw would never index a file at the path (``missing`` only means: not there yet; a
#: symlinked memory dir is written through with a note: the agent writes its notes there too, RW29)
def _gateway_home(ctx: ProbeContext) -> str:
    """The home the gateway reads ``~`` with (:func:`clawprobe.core.probe.gateway_home`: its process's, its service's)."""
    from clawprobe.core.probe import gateway_home

    return gateway_home(ctx)


NEVER_INDEXED = ("pattern_excluded", "not_in_collection", "hidden_path", "case_mismatch")


def _never_indexed(ctx: ProbeContext, agent: str, workspace: str, target: str) -> str | None:
    """Why a canary written at ``target`` would never be indexed for ``agent`` — the engine's rules (QMD: the
    managed pair bound to this workspace, as OpenClaw re-binds them, unless ``includeDefaultMemory: false``, and
    the custom collections of its ``index.yml``; builtin: ``memory/`` and the extra paths), the same explainers
    the check's miss reads — or ``None``."""
    from clawprobe.core.locate import has_qmd_backend
    from clawprobe.core.memory_sources import explain_canary
    from clawprobe.core.probes.config import memory_settings

    s = memory_settings(ctx.config.tree, agent)
    engine = "qmd" if s.configured_backend == "qmd" and has_qmd_backend(ctx.openclaw_version) is not False \
        else "builtin"
    cols: list = []
    if engine == "qmd":  # the managed pair as OpenClaw binds it to this workspace (it re-binds a stale index.yml)
        from clawprobe.core.probes import qmd_index as qi
        from clawprobe.core.probes.workspace import default_qmd_collections

        managed = qi.managed_collection_names(agent)
        cols = [c for c in qi.read_qmd_yml(qi.qmd_paths(ctx.state_dir.path, agent).yml).collections
                if c.name not in managed]
        cols = (default_qmd_collections(agent, workspace) if s.include_default_memory else []) + cols \
            + _configured_collections(ctx, agent, workspace)  # before its first index run too
    rel = os.path.relpath(target, workspace)
    found = explain_canary(rel, workspace, engine, agent, s.extra_paths, ctx.state_dir.path, cols,
                           home=_gateway_home(ctx))
    return next((msg for tag, msg in found if tag in NEVER_INDEXED), None)


def _configured_collections(ctx: ProbeContext, agent: str, workspace: str) -> list:
    """``memory.qmd.paths``, then ``memorySearch.extraPaths`` and ``memorySearch.qmd.extraCollections`` dirs, as the
    collections OpenClaw makes of them (path resolved as OpenClaw resolves it, pattern default ``**/*.md``): known
    before any ``index.yml`` exists (breaker round 12, s20d: a plant into an extra path beside the workspace, which
    OpenClaw indexes as ``custom-1-<agent>``, was refused)."""
    from clawprobe.core.mapping import as_list, as_mapping
    from clawprobe.core.probes.config import memory_settings
    from clawprobe.core.probes.qmd_yml import QmdCollection
    from clawprobe.core.probes.workspace import extra_path_abs

    home = _gateway_home(ctx)
    out = []
    for e in as_list(as_mapping(as_mapping(ctx.config.tree.get("memory")).get("qmd")).get("paths")):
        if isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"].strip():
            pattern = str(e["pattern"]) if isinstance(e.get("pattern"), str) and e["pattern"] else "**/*.md"
            out.append(QmdCollection(name=str(e.get("name") or "custom"), pattern=pattern,
                                     path=extra_path_abs(e["path"], workspace, home)))
    s = memory_settings(ctx.config.tree, agent)
    for raw in [*s.extra_paths, *s.qmd_extra_collections]:
        if os.path.isdir(path := extra_path_abs(raw, workspace, home)):
            out.append(QmdCollection(name="custom", pattern="**/*.md", path=path))
    return out


def _default_root(ctx: ProbeContext, agent: str, workspace: str) -> str | None:
    """Where a plant goes without ``--root`` when ``memory/`` is no collection of the agent — QMD with
    ``memory.qmd.includeDefaultMemory: false``: the first existing dir where a configured ``memory.qmd.paths``
    collection's pattern takes the canary's file name (``projects/**/*.md`` → ``<path>/projects``; breaker round
    10, s18: the canary went to memory/, QMD never indexed it, and the check failed a working install; round 11,
    s09: a pattern below the path refused the plain plant); else ``None`` (memory/)."""
    from clawprobe.core.locate import has_qmd_backend
    from clawprobe.core.probes.config import memory_settings
    from clawprobe.core.probes.workspace import QmdRules

    s = memory_settings(ctx.config.tree, agent)
    if s.configured_backend != "qmd" or s.include_default_memory or has_qmd_backend(ctx.openclaw_version) is False:
        return None
    name = os.path.basename(cn.CANARY_REL)
    for c in _configured_collections(ctx, agent, workspace):
        rules = QmdRules(c)
        for start, prefix, _depth in rules.walks:
            if os.path.isdir(start) and rules.matcher.match_visible(f"{prefix}/{name}" if prefix else name):
                return start
    return None


def _openclaw_rejects(ctx: ProbeContext) -> str | None:  # a plant/rotate writes: worth one CLI call
    """OpenClaw's own ``config validate --json`` issues, one line, when it rejects the config; ``None`` when
    it accepts it, cannot say (no CLI, a failed run: the check will tell) or need not be asked — on a
    2026.7.x build clawprobe's schema is OpenClaw's (:mod:`clawprobe.core.probes.config_schema`), on a later or
    unknown one it is lenient, and only OpenClaw's validator knows (≈ 3.5 s). No config file at all is no
    rejection: OpenClaw runs on its defaults (``memory status`` works), though ``config validate`` says "file not
    found"."""
    from clawprobe.core.locate import has_qmd_backend
    from clawprobe.core.probe import _cli_env
    from clawprobe.core.probes import openclaw_cli as oc
    from clawprobe.core.runrecord import record_run

    if ctx.openclaw is None or has_qmd_backend(ctx.openclaw_version) is True:
        return None
    if not os.path.lexists(ctx.config_path.path):  # nothing to validate: OpenClaw runs on its defaults
        return None
    env = _cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path, ctx.config_vars())
    v = oc.validate_of_run(record_run(oc.run_validate(ctx.openclaw, env, cwd=env.get("HOME"))))
    if v.valid is not False:
        return None
    issues = "; ".join(f"{i.path}: {i.message}" for i in v.issues[:3]) or "invalid"
    return f"openclaw config validate: {v.path or ctx.config_path.path}: {issues}"


def _placement(args: argparse.Namespace, workspace: str) -> tuple[str | None, str | None]:
    """(managed root, script) for plant/rotate: ``--root`` as given; ``--script auto`` → the unspaced script
    (CJK, Thai…) the notes use most (:func:`clawprobe.core.probes.note_scripts.note_scripts`), else none."""
    from clawprobe.core.probes.note_scripts import UNSPACED, note_scripts

    root = getattr(args, "root", None)
    script = getattr(args, "script", None)
    if script in (None, "none"):
        return root, None
    if script == "auto":
        seen = note_scripts(workspace, [root] if root else [])
        top = max(((n, s) for s, n in seen.items() if s in UNSPACED and s in cn.SCRIPT_ALPHABETS), default=None)
        return root, top[1] if top else None
    return root, script


def _confirm(question: str, yes: bool, stdin: TextIO, out: TextIO) -> bool | None:
    """True/False from the operator; ``None`` when there is no terminal to ask and no ``--yes``."""
    if yes:
        return True
    if not stdin.isatty():
        return None
    out.write(f"{question} [y/N] ")
    out.flush()
    answer = stdin.readline().strip().lower()
    return answer in ("y", "yes")


_NEXT = {  # ``{cp}``: ``clawprobe`` with the probed install's flags (``--state-dir``/``--config``), ``{a}`` the agent
    "missing": "plant it again: {cp} canary rotate --agent {a}",
    "modified": "someone edited it; replace it with a fresh token: {cp} canary rotate --agent {a}",
    "foreign": "clawprobe will not overwrite it; move that file away, then: {cp} canary rotate --agent {a}",
    "unreadable": "fix its owner or mode (OpenClaw must read it too), then: {cp} canary show --agent {a}",
}


def _lines(ctx: ProbeContext) -> tuple[str, str]:
    """(openclaw, clawprobe) command prefixes that act on the probed install when pasted into a shell that does not
    know its ``--state-dir``/``--config`` (:func:`clawprobe.core.locate.command_lines`)."""
    from clawprobe.core.locate import command_lines

    lines = command_lines(ctx.openclaw, ctx.state_dir, ctx.config_path)
    return lines.openclaw, lines.clawprobe


def _mode(mode: int | None) -> str:
    return f", mode {mode:04o}" if mode is not None else ""


def _show(rec: cn.CanaryRecord | None, workspace: str, agent: str, cp: str = "clawprobe") -> int:
    if rec is None:
        emit(f"no canary planted for agent {agent} (workspace {workspace}); plant one with: "
             f"{cp} canary plant --agent {agent}")
        return EXIT_OK
    emit(f"agent:          {rec.agent_id}")
    if rec.active:
        f = cn.check_file(rec)
        emit(f"file:           {workspace}/{rec.rel_path} ({f.state})")
        emit(f"file state:     {f.state} — {f.detail}{_mode(f.mode)}")
        if f.state in _NEXT:
            emit(f"next:           {_NEXT[f.state].format(cp=cp, a=agent)}")
    else:
        emit(f"file:           {workspace}/{rec.rel_path} (removed)")
    for note in cn.placement_notes(workspace):
        emit(f"note:           {note}")
    emit(f"token:          {rec.token}" + ("" if rec.active else " (retired)"))
    emit(f"token sha256:   {rec.token_sha256}")
    emit(f"content sha256: {rec.content_sha256}")
    emit(f"planted at:     {rec.planted_at.isoformat(timespec='seconds')}")
    if rec.removed_at:
        emit(f"removed at:     {rec.removed_at.isoformat(timespec='seconds')}")
    if rec.retired:
        emit(f"retired tokens: {len(rec.retired)} (a retired token that is still found means a stale index)")
    emit(f"record:         {cn.record_path(workspace, agent)}")
    return EXIT_OK


def run(args: argparse.Namespace, *, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    """Run one canary action; returns the exit code. Never raises for bad input."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    try:
        resolved = _resolve(args)
    except OSError as e:
        return _fail(f"cannot locate the install: {cn.describe_os_error(e)}")
    except Exception as e:  # discovery must not end in a traceback
        return _fail(f"cannot locate the install (internal error, please report it: {type(e).__name__}: {e})")
    if isinstance(resolved, str):
        return _fail(resolved)
    agent, workspace, ctx = resolved
    for p in cw.sweep_stale(workspace, agent):
        warn(f"removed {p}: a temp file an interrupted canary action left behind", "clawprobe canary")
    try:
        if args.action == "show":
            return _show(cn.load(workspace, agent), workspace, agent, _lines(ctx)[1])
        root, script = _placement(args, workspace)
        if root is not None and (root == "~" or root.startswith("~/")):  # as OpenClaw reads `~` in its paths (N5)
            root = _gateway_home(ctx) + root[1:]
        if root is None and args.action == "plant" and (root := _default_root(ctx, agent, workspace)) is not None:
            emit(f"memory/ is no QMD collection of agent {agent} (memory.qmd.includeDefaultMemory = false): the "
                 f"canary goes to {root}, the first dir its configured paths index (--root DIR chooses another)", out)
        rec0 = None
        if args.action in ("remove", "rotate"):  # a rotate keeps the planted canary's root (breaker round 13, N2)
            with contextlib.suppress(cn.CanaryError):  # the action itself reports an unreadable record
                rec0 = cn.load(workspace, agent)
        rel = (f"{root}/{os.path.basename(cn.CANARY_REL)}" if root else
               (rec0.rel_path if rec0 is not None and rec0.active else cn.CANARY_REL))
        target = os.path.normpath(os.path.join(workspace, rel))  # an absolute --root stays itself
        if args.action in ("plant", "rotate") and (never := _never_indexed(ctx, agent, workspace, target)):
            return _fail(f"a canary at {target} would never be indexed: {never} — plant it in a root OpenClaw "
                         "indexes for this agent (--root DIR)")
        also = f" with a {script} token (the script the notes use)" if script and args.action != "remove" else ""
        what = {
            "plant": f"Write a synthetic canary (no real data) to {target}{also}",
            "rotate": f"Replace the canary token in {target} (the old token is retired){also}",
            "remove": f"Delete the canary file {target}",
        }[args.action]
        ok = _confirm(f"{what} for agent {agent}?", bool(getattr(args, "yes", False)), stdin, out)
        if ok is None:
            return _fail(f"refusing to {args.action} without confirmation: no terminal to ask. "
                         f"Re-run with --yes to {what[0].lower() + what[1:]}.")
        if not ok:
            emit("nothing written", out)
            return EXIT_CANNOT_RUN
        if args.action == "remove":
            rec = cw.remove(workspace, agent)
        else:
            act = cw.plant if args.action == "plant" else cw.rotate
            rec = act(workspace, agent, managed_root=root, script=script)
    except cn.CanaryError as e:
        return _fail(str(e))
    except OSError as e:  # clawprobe.core.canary turns its own failures into CanaryError; this is a last resort
        return _fail(f"cannot {args.action} the canary: {cn.describe_os_error(e)}")
    if rec is None:
        emit(f"no canary planted for agent {agent}: nothing removed", out)
        return EXIT_OK
    if args.action == "remove":
        emit(f"removed {target}; its token is retired (still finding it later means a stale index)", out)
    else:
        f = cn.check_file(rec)
        emit(f"{'planted' if args.action == 'plant' else 'rotated'}: {target}{_mode(f.mode)}", out)
        for note in cn.placement_notes(workspace):
            emit(f"note: {note}", out)
        emit(f"token sha256 {rec.token_sha256[:16]}…, content sha256 {rec.content_sha256[:16]}…", out)
        oc, cp = _lines(ctx)
        emit(f"OpenClaw indexes it on its next update; to prove it now: {oc} memory index --agent {agent}, "
             f"then {cp} check --agent {agent}", out)
    return EXIT_OK
