"""Incremental disk-vs-index comparison for the QMD backend, driven by a file watcher.

A full scan of a 100,000-file memory tree and its comparison with 100,000 index rows costs seconds; the
live dashboard probes every few seconds. :class:`WorkspaceCache` keeps, per walked directory, the files
qmd would index (``clawprobe.core.probes.workspace`` rules) and that directory's comparison with the index, and
re-does only what changed:

* a directory is re-listed when the watcher reports a path in it (:meth:`WorkspaceCache.mark`), and a new
  subdirectory is walked whole; a vanished one is forgotten with its subtree;
* a directory's comparison is recomputed when it was re-listed or when the index changed (a new read of
  ``index.sqlite``: :meth:`clawprobe.core.probes.qmd_index.QmdIndexFacts.docs_by_dir`);
* literal patterns (``MEMORY.md``) are checked on every probe (one ``lstat``).

A full scan happens on the first probe, after :meth:`WorkspaceCache.invalidate` (the operator's ``r``, a
watcher overflow or failure), when the collections change, and at least every ``max_age_s`` (600 s) as a
safety net for events a watcher can miss. A collection with several patterns, or a scan that hits its
cap, is not cached: those probes do a full scan, as without a cache. The results equal a full
:func:`~clawprobe.core.probes.workspace.scan_qmd` + :func:`~clawprobe.core.probes.workspace.compare_qmd` (tested with real
file events in ``tests/test_workspace_cache.py``); only the method text differs, and says so.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from itertools import chain

from clawprobe.core.probes import coverage as cov
from clawprobe.core.probes.qmd_index import QmdCollection, QmdIndexFacts
from clawprobe.core.probes.workspace import (
    DEFAULT_MAX_ENTRIES,
    DEFAULT_MAX_FILES,
    Comparison,
    DiskFile,
    DiskScan,
    QmdRules,
    _Bucket,
    _Budget,
    _Scan,
    compare_qmd,
    finish_comparison,
    glob_path_skips,
    judge_qmd_file,
    qmd_ghost,
    scan_qmd,
)
from clawprobe.core.receipt import SourceCoverage

MAX_AGE_S = 600.0
WATCH_GRACE_S = 1.0
MAX_DIRTY = 50_000
BURST_PATHS = 1_000
MAX_LINKED = 2_000  #: hard-linked files re-checked by lstat on every probe; more → no cache
_UNBOUNDED = 10**12


def _changed(f: DiskFile) -> bool:
    """True when a hard-linked file's ``lstat`` differs from the scan (it can be edited through a link
    outside the watched dirs, which inotify never reports)."""
    try:
        st = os.lstat(f.abs_path)
    except OSError:
        return True
    return (st.st_mtime_ns, st.st_size) != (f.mtime_ns, f.size)


class _Collection:
    """One collection's cached walk: its rules and ``{abs dir: bucket}``."""

    def __init__(self, rules: QmdRules, buckets: dict[str, _Bucket]) -> None:
        self.rules, self.buckets = rules, buckets
        self.literals: DiskScan | None = None  # the literal patterns' files and skips, as the last probe found them

    def local(self, path: str) -> str | None:
        """``path`` (a real path) when it is inside this collection's resolved root, else ``None``."""
        root = self.rules.root
        return path if path == root or path.startswith(root + os.sep) else None

    def is_start(self, path: str) -> bool:
        """True when ``path`` is a walk's start dir or above one (its change needs a full scan)."""
        return any(start == path or start.startswith(path + os.sep) for start, _r, _d in self.rules.walks)

    def drop(self, dirs: Iterable[str]) -> None:
        """Forget the buckets of ``dirs`` and everything below them."""
        for d in dirs:
            for k in [k for k in self.buckets if k == d or k.startswith(d + os.sep)]:
                del self.buckets[k]


class WorkspaceCache:
    """The cached scan of one agent's QMD collections. :meth:`mark` and :meth:`invalidate` may be
    called from the watcher's thread while :meth:`compare_qmd` runs in a probe worker (it is serialised).

    ``clock`` returns monotonic seconds (injectable for tests); ``max_age_s`` bounds how long a cached
    scan is trusted without a full rescan. ``full_scans`` and ``dirs_relisted`` count the work done.
    """

    def __init__(self, *, max_age_s: float = MAX_AGE_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_s, self._clock = max_age_s, clock
        self._lock = threading.Lock()
        self._probe_lock = threading.Lock()
        self._dirty: set[str] = set()
        self._valid = False
        self._key: tuple | None = None
        self._scanned_at = 0.0
        self._colls: list[_Collection] = []
        self._workspace = ""
        self._roots: dict[str, str] | None = None  # watched root as given -> its real path
        self._not_before = 0.0
        self.full_scans = 0
        self.dirs_relisted = 0

    def watch(self, roots: Iterable[str] | None, *, grace_s: float = WATCH_GRACE_S) -> None:
        """The directories a watcher now covers recursively (``None``: no watcher, so nothing is cached).
        Only collections inside them are answered from the cache; a full scan that starts within
        ``grace_s`` seconds (while the OS watches are still being set up) is used once but not kept."""
        with self._lock:
            self._roots = None if roots is None else {os.path.abspath(r): os.path.realpath(r) for r in roots}
            self._valid = False
            self._not_before = self._clock() + grace_s

    def mark(self, paths: Sequence[str]) -> None:
        """One watcher batch: paths that changed (files or dirs, created, modified or deleted; absolute,
        under a root given to :meth:`watch`). A batch of :data:`BURST_PATHS` or more forgets the cache:
        inotify drops events when its queue overflows and watchfiles does not report that, so after a
        burst only a full scan is sure."""
        with self._lock:
            if len(paths) >= BURST_PATHS:
                self._dirty.clear()
                self._valid = False
                return
            roots = self._roots or {}
            for p in paths:
                p = os.path.abspath(p)
                for given, real in roots.items():
                    if given != real and (p == given or p.startswith(given + os.sep)):
                        p = real + p[len(given):]
                        break
                self._dirty.add(p)
            if len(self._dirty) > MAX_DIRTY:  # a storm: one full scan is cheaper than re-listing each path
                self._dirty.clear()
                self._valid = False

    def invalidate(self) -> None:
        """Forget the cached scan: the next probe scans everything (``r``, a watcher overflow)."""
        with self._lock:
            self._valid = False

    def _watched(self, start: str) -> bool:
        """True when a walk's start dir lies inside a watched root (literal patterns need no watch)."""
        real = os.path.realpath(start)
        return self._roots is not None and any(real == r or real.startswith(r + os.sep) for r in self._roots.values())

    def compare_qmd(self, collections: Sequence[QmdCollection], workspace: str, facts: QmdIndexFacts,
                    now: datetime, *, max_files: int = DEFAULT_MAX_FILES,
                    max_entries: int = DEFAULT_MAX_ENTRIES) -> tuple[Comparison, DiskScan | None]:
        """Disk versus ``facts`` (a readable QMD index) for ``collections``.

        Returns ``(comparison, scan)``: ``scan`` is the :class:`DiskScan` when this probe did a full scan
        (so its findings, e.g. ``scan_capped``, are reported), ``None`` when the cache answered.
        """
        key = (tuple((c.name, c.path, c.pattern, tuple(c.ignore)) for c in collections), workspace)
        with self._probe_lock:
            with self._lock:
                dirty, self._dirty = self._dirty, set()
                fresh = self._valid and self._key == key and self._clock() - self._scanned_at < self.max_age_s
            if fresh and self._update(dirty, max_files, max_entries):
                return self._compare(facts, now), None
            self.full_scans += 1
            started = self._clock()
            record: dict[str, dict] = {}
            scan = scan_qmd(collections, workspace, max_files=max_files, max_entries=max_entries, record=record)
            self._workspace = workspace
            self._colls = [_Collection(QmdRules(c), record.get(c.name, {})) for c in collections]
            with self._lock:
                linked = sum(len(b.linked) for col in self._colls for b in col.buckets.values())
                cacheable = (not scan.capped and started >= self._not_before and linked <= MAX_LINKED
                             and all(len(col.rules.patterns) == 1
                                     and all(self._watched(start) for start, _r, _d in col.rules.walks)
                                     for col in self._colls))
                self._valid, self._key, self._scanned_at = cacheable, key, started
            return compare_qmd(scan, facts.docs, now), scan

    def _update(self, dirty: set[str], max_files: int, max_entries: int) -> bool:
        """Re-list the directories ``dirty`` touches; False when only a full scan can answer."""
        for col in self._colls:
            mine = [loc for loc in map(col.local, dirty) if loc is not None]
            for loc in mine:
                if col.is_start(loc):
                    return False  # a walk's start (or a dir above it) was created, moved, removed or chmod'ed
                if loc in col.buckets:
                    col.drop([loc])  # an event on a dir itself (moved in, renamed over): walk it whole again
            todo: set[str] = set()
            for loc in mine:
                cand = os.path.dirname(loc)
                while cand not in col.buckets and len(cand) > len(col.rules.root):
                    cand = os.path.dirname(cand)
                if cand in col.buckets:
                    todo.add(cand)
            todo |= {os.path.dirname(f.abs_path) for b in list(col.buckets.values()) for f in b.linked
                     if _changed(f)}
            for d in sorted(todo, key=len):
                if d in col.buckets and not self._relist(col, d, _Budget(max_files, max_entries, None)):
                    return False
        return sum(len(b.files) for col in self._colls for b in col.buckets.values()) <= max_files

    def _relist(self, col: _Collection, d: str, budget: _Budget) -> bool:
        """List ``d`` again, walking only its new subdirs and forgetting vanished ones. False when ``d`` was
        a walk's start and is gone, or a new subtree exceeds the scan bounds (a full scan says so)."""
        old = col.buckets.pop(d)
        self.dirs_relisted += 1
        if not os.path.isdir(d) or os.path.islink(d):
            col.drop([d])
            if col.is_start(d):
                return False
            parent = os.path.dirname(d)
            return self._relist(col, parent, budget) if parent in col.buckets else True
        scan = _Scan("qmd", self._workspace, budget)
        scan.walk_roots = self._walk_roots()
        scan.buckets, scan.root = col.buckets, col.rules.c.name  # skipped notes count for this collection
        max_depth = next((m for start, _r, m in col.rules.walks if d == start or d.startswith(start + os.sep)), None)
        col.rules.walk(scan, d, old.rel, max_depth, depth=old.depth, known=col.buckets.__contains__)
        new = col.buckets.get(d)
        col.drop(set(old.subdirs) - set(new.subdirs if new is not None else ()))
        if new is not None and {f.abs_path for f in new.linked} - {f.abs_path for f in old.linked}:
            return False  # a new hard link: its other names elsewhere in the tree were scanned as single links
        return budget.stopped is None

    def _walk_roots(self) -> list[str]:
        """Every collection's resolved root: a re-listed dir's symlinks are judged as the full scan judges them."""
        return [c.rules.root for c in self._colls]

    def _compare(self, facts: QmdIndexFacts, now: datetime) -> Comparison:
        """Merge per-directory comparisons (recomputed only for re-listed dirs or a new index read)."""
        by_dir = facts.docs_by_dir()
        cmp = Comparison(engine="qmd", checked_at=now)
        total = 0
        for col in self._colls:
            name, root = col.rules.c.name, col.rules.root
            covered: set[str] = set()
            for b in col.buckets.values():
                covered.add(b.rel)
                total += len(b.files)
                if b.result is None or b.result[0] is not by_dir:
                    part = Comparison(engine="qmd", checked_at=now)
                    docs = by_dir.get((name, b.rel), {})
                    for f in b.files:
                        judge_qmd_file(part, f, docs.get(f.key))
                    on_disk = {f.key for f in b.files}
                    part.changes += [qmd_ghost(self._workspace, root, name, p, now) for p in docs if p not in on_disk]
                    b.result = (by_dir, part)
                part = b.result[1]
                cmp.matched += part.matched
                cmp.hashed += part.hashed
                cmp.changes += part.changes
            lit = _Scan("qmd", self._workspace, _Budget(_UNBOUNDED, _UNBOUNDED, None))
            lit.walk_roots = self._walk_roots()
            lit.root = name
            if os.path.isdir(root):
                for pat in col.rules.literals:
                    col.rules.literal(lit, pat)
            col.literals = lit.out
            found = {f.key for f in lit.out.files}
            for f in lit.out.files:
                judge_qmd_file(cmp, f, by_dir.get((name, f.key.rpartition("/")[0]), {}).get(f.key))
            total += len(found)
            for (coll, d), docs in by_dir.items():
                if coll == name and d not in covered:
                    cmp.changes += [qmd_ghost(self._workspace, root, name, p, now) for p in docs if p not in found]
        age = self._clock() - self._scanned_at
        return finish_comparison(cmp, now, total, how=f"; watcher-driven, last full scan {age:.0f} s ago")

    def skipped(self) -> list[tuple[str, str]]:
        """``(absolute path, reason)`` of every skip the cached directories and literal patterns recorded when each
        was last listed (what a full scan's skips hold, for ``workspace.rename_clashes``)."""
        with self._probe_lock:
            out: list[tuple[str, str]] = []
            for col in self._colls:
                if col.literals is not None:
                    out += [(sk.rel, sk.reason) for sk in col.literals.skipped]
                out += [(abs_path, reason) for b in col.buckets.values() for abs_path, reason, _d, _n in b.skips]
            return out

    def coverage(self, cmp: Comparison) -> list[SourceCoverage]:
        """Per-collection coverage (:func:`clawprobe.core.probes.coverage.assemble`, as a full scan's
        :func:`~clawprobe.core.probes.coverage.from_scan` gives it) for ``cmp``, the comparison this cache's
        :meth:`compare_qmd` answered without a scan: files per collection from the cached directories plus the
        literal patterns, skipped notes as recorded when each directory was last listed. Costs one pass over
        the directories, and over their files only when ``cmp`` lists new, changed or unreadable files."""
        with self._probe_lock:
            expected: dict[str, int] = {}
            owner: dict[str, str] = {}
            notes: dict[str, dict[str, int]] = {}
            listed: dict[str, list[str]] = {}
            wanted = {ch.rel for ch in cmp.changes if ch.kind in cov.MISSING_KINDS}
            for col in self._colls:
                name, lit, buckets = col.rules.c.name, col.literals, list(col.buckets.values())
                lit_files = lit.files if lit is not None else []
                expected[name] = len(lit_files) + sum(len(b.files) for b in buckets)
                if wanted:
                    owner.update((f.rel, name) for f in chain(lit_files, *(b.files for b in buckets)) if f.rel in wanted)
                replay = _Scan("qmd", self._workspace, _Budget(_UNBOUNDED, _UNBOUNDED, None))
                replay.root = name
                if lit is not None:  # the literal patterns' skips first, as a full scan meets them
                    replay.out.root_notes = {k: dict(v) for k, v in lit.root_notes.items()}
                    replay.out.root_notes_listed = {k: list(v) for k, v in lit.root_notes_listed.items()}
                glob_path_skips(replay, col.rules.c, col.rules.root)  # a glob path's notes: no directory records them
                for b in buckets:
                    for abs_path, reason, detail, n in b.skips:
                        replay.note_skip(abs_path, reason, detail, n)
                notes[name] = replay.out.root_notes.get(name, {})
                listed[name] = replay.out.root_notes_listed.get(name, [])
            return cov.assemble(expected, owner, cmp, notes, listed)
