"""File watching for the live dashboard: which paths to watch, which changes matter, the awatch loop.

Targets come from ``clawprobe.core.probe.watch_targets(ctx, agent_id)`` (``WatchTarget(path, kind, exists)``): the
workspace ``MEMORY.md`` and ``memory/`` tree, extra paths, the config file and its ``$include``s, the
agent's QMD index dir, the model cache. The pure part (:func:`plan`, :func:`affected`) decides:

* existing directories are watched recursively; files are watched through their parent directory
  (editors replace files by rename, which a watch on the file itself would lose), non-recursively;
* a target that does not exist yet is watched from its nearest existing parent; when something on the
  way to it appears, the plan is rebuilt (:func:`needs_replan`) so the new directory is watched itself;
* a change matters only if it is a target, lies under a target directory, or lies on the way to a
  missing target — everything else in a watched parent (logs, sessions, editor swap files) is ignored.

The I/O part (:func:`watch`) runs ``watchfiles.awatch`` (Rust notify, inotify on Linux; polling when
``WATCHFILES_FORCE_POLLING`` is set) with a short debounce: a burst such as a ``git checkout`` of
thousands of files arrives as a few batches, each becoming one :class:`FilesChanged` per agent, and the
App coalesces those again into at most a few probes per second.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchfiles import DefaultFilter, awatch

DEBOUNCE_MS = 200  #: longest a batch is held before it is yielded (watchfiles default 1600 ms feels stuck)
STEP_MS = 80  #: quiet time that ends a batch early
FILE_KINDS = ("config", "log", "file")  #: WatchTarget kinds that name a single file
MEMORY_KINDS = frozenset({"memory", "extra"})  #: WatchTarget kinds whose files an engine indexes


@dataclass(frozen=True)
class Target:
    """One thing to watch for one agent. ``kind`` is the WatchTarget kind (``workspace``, ``config``…)."""

    agent_id: str
    path: Path
    kind: str
    exists: bool
    is_dir: bool


@dataclass
class WatchPlan:
    """Where to put the OS watches for a set of targets (pure data, see :func:`plan`)."""

    targets: list[Target]
    recursive: list[Path] = field(default_factory=list)
    flat: list[Path] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when nothing can be watched (no target and no existing parent)."""
        return not (self.recursive or self.flat)


def _nearest_existing(p: Path) -> Path | None:
    for cand in (p, *p.parents):
        if cand.exists():
            return cand
    return None


def targets_from(agent_id: str, watch_targets: Iterable[Any]) -> list[Target]:
    """Turn ``clawprobe.core.probe.WatchTarget`` objects (``path``, ``kind``, ``exists``) into :class:`Target` s.

    A missing target comes as its nearest existing parent in ``path`` with the wanted path in ``wanted``;
    the wanted path is what is matched. Reads the file system only to tell a file from a directory
    (``Path.is_dir``); a missing path counts as a directory unless its kind names a file (``config``,
    ``log``) or it has a suffix (``MEMORY.md``).
    """
    out = []
    for t in watch_targets:
        p = Path(str(getattr(t, "wanted", None) or t.path)).expanduser()
        exists = p.exists()
        is_dir = p.is_dir() if exists else (t.kind not in FILE_KINDS and not p.suffix)
        out.append(Target(agent_id=agent_id, path=p, kind=str(t.kind), exists=exists, is_dir=is_dir))
    return out


def plan(targets: list[Target]) -> WatchPlan:
    """Decide the OS watches: recursive on existing target dirs, flat on parents of files and on the
    nearest existing parent of missing targets. Roots under another recursive root are dropped."""
    rec: set[Path] = set()
    flat: set[Path] = set()
    for t in targets:
        if t.exists and t.is_dir:
            rec.add(t.path)
        elif t.exists:
            flat.add(t.path.parent)
        else:
            parent = _nearest_existing(t.path.parent)
            if parent is not None:
                flat.add(parent)
    rec_sorted = sorted(rec, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in rec_sorted:
        if not any(p == k or k in p.parents for k in kept):
            kept.append(p)
    flat_kept = [p for p in sorted(flat) if not any(p == k or k in p.parents for k in kept)]
    return WatchPlan(targets=targets, recursive=kept, flat=flat_kept)


def _under(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


def affected(paths: Iterable[str | Path], targets: list[Target]) -> dict[str, set[str]]:
    """Which agents and target kinds a set of changed paths touches: ``{agent_id: {kind, …}}``.

    A path counts for a target when it is the target, lies under a target directory, or (missing target)
    lies on the way to it. Pure: compares paths only.
    """
    hit: dict[str, set[str]] = {}
    for raw in paths:
        p = Path(raw)
        for t in targets:
            ok = _under(p, t.path) if t.is_dir else p == t.path
            if not ok and not t.exists:
                ok = _under(t.path, p)
            if ok:
                hit.setdefault(t.agent_id, set()).add(t.kind)
    return hit


def needs_replan(paths: Iterable[str | Path], targets: list[Target]) -> bool:
    """True when a change created (or removed) something a missing (or existing) target's watch rests on:
    a path on the way to a missing target, or an existing target directory itself."""
    for raw in paths:
        p = Path(raw)
        for t in targets:
            if not t.exists and _under(t.path, p):
                return True
            if t.exists and t.is_dir and p == t.path:
                return True
    return False


class _Relevant(DefaultFilter):
    """"Does a target care", plus watchfiles' default filter (``.git``, ``__pycache__``, swap files…)
    except under memory targets, where every event counts: engines index ``node_modules/``,
    ``__pycache__/`` or a dir named ``plans.swp/``, and even a swap file moves the dir mtime that dates a
    deleted note (the workspace cache must hear all of it)."""

    def __init__(self, targets: list[Target]) -> None:
        super().__init__()
        self._targets = targets

    def __call__(self, change: Any, path: str) -> bool:
        hit = affected([path], self._targets)
        if not hit:
            return False
        if any(kinds & MEMORY_KINDS for kinds in hit.values()):
            return True
        return super().__call__(change, path)


async def _loop(roots: list[Path], recursive: bool, targets: list[Target],
                on_batch: Callable[[list[str]], bool], stop: asyncio.Event, force_polling: bool | None) -> None:
    if not roots:
        await stop.wait()
        return
    async for changes in awatch(*roots, recursive=recursive, debounce=DEBOUNCE_MS, step=STEP_MS,
                                watch_filter=_Relevant(targets), stop_event=stop,
                                force_polling=force_polling, ignore_permission_denied=True):
        if on_batch([path for _change, path in changes]):
            stop.set()
            return


async def watch(wplan: WatchPlan, on_change: Callable[[str, frozenset[str], list[str]], None], *,
                force_polling: bool | None = None, on_paths: Callable[[list[str]], None] | None = None) -> bool:
    """Watch ``wplan`` until the plan must be rebuilt; return True then (never returns otherwise).

    ``on_change(agent_id, kinds, sample_paths)`` is called once per agent per debounced batch, on the
    event loop (the App turns it into a :class:`clawprobe.tui.messages.FilesChanged`); ``on_paths(paths)`` first,
    with every relevant path of the batch. Cancel the awaiting task to stop. ``force_polling`` defaults
    to ``WATCHFILES_FORCE_POLLING`` (NFS, some containers, WSL).
    Raises ``OSError`` when the OS refuses a watch (e.g. inotify limits), or watchfiles' own error (in an
    ``ExceptionGroup``) for a path it cannot decode (a non-UTF-8 name).
    """
    stop = asyncio.Event()
    replan = False

    def batch(paths: list[str]) -> bool:
        nonlocal replan
        if on_paths is not None:
            on_paths(paths)
        for agent, kinds in affected(paths, wplan.targets).items():
            on_change(agent, frozenset(kinds), paths[:5])
        if needs_replan(paths, wplan.targets):
            replan = True
            return True
        return False

    if force_polling is None and os.environ.get("WATCHFILES_FORCE_POLLING"):
        force_polling = True
    tasks = [asyncio.create_task(_loop(wplan.recursive, True, wplan.targets, batch, stop, force_polling)),
             asyncio.create_task(_loop(wplan.flat, False, wplan.targets, batch, stop, force_polling))]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            if t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return replan
