"""Memory files on disk, scanned the way each engine scans them, compared with what the index holds.

Scanner rules (verified with the real programs here, qmd 2.8.3 and OpenClaw 2026.7.35 / 2026.9.6):

* **QMD** (``reindexCollection`` in qmd's ``store.js``): per collection, fast-glob of its pattern under
  its path with ``dot: false`` and ``followSymbolicLinks: false``; any path part starting with ``.`` is
  dropped; ``node_modules``, ``.git``, ``.cache``, ``vendor``, ``dist`` and ``build`` are ignored at any
  depth; symlinked files and dirs below the root are skipped (the root itself is resolved by
  ``qmd collection add``); whitespace-only files are skipped. The default collections are
  ``memory-root-<id>`` (workspace, ``MEMORY.md`` — case-sensitive, so a lowercase ``memory.md`` is not
  indexed) and ``memory-dir-<id>`` (``workspace/memory``, ``**/*.md``).
* **builtin** (E3+ store): ``MEMORY.md`` at the workspace root, every ``.md`` under ``memory/`` (hidden dirs,
  ``node_modules`` and empty files included), and ``extraPaths`` (dirs recursive, files as given);
  symlinks are skipped; lowercase root ``memory.md`` is skipped on 2026.7.35 and 2026.9.6 (E1/E2 builds
  indexed it). Paths are stored workspace-relative (``memory/a.md``, ``../../extra/e.md``).

Freshness (issue 3 §5): QMD stores no update time, so clawprobe proves currency from content. Files whose
mtime (QMD: ``documents.modified_at``; builtin: ``mtime``/``size``) matches the index are taken as current
without reading them; only the others are hashed (sha256 of the text, as both engines hash) and compared
with the indexed hash. ``last_proven_current`` is the time of the oldest change the index does not
reflect (a file's mtime; for a deleted-but-indexed ghost, the mtime of its nearest existing parent
dir), or the check time when disk matches the index.

Bounded: a scan stops after ``max_files`` candidate files or ``max_entries`` directory entries and says
so (``capped``); symlinks are never followed (no loops); names that are not valid UTF-8 are skipped.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat as stat_mod
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field
from wcmatch import glob as wglob

from clawprobe.core.locate import has_qmd_backend
from clawprobe.core.probes.fileinfo import open_regular, owner_mode, path_text
from clawprobe.core.probes.qmd_index import IndexedDoc, QmdCollection
from clawprobe.core.receipt import Finding, Freshness, WorkspaceState
from clawprobe.core.shell import word as shell_word
from clawprobe.core.words import FRESHNESS_GROUPS

Engine = Literal["qmd", "builtin"]
SkipReason = Literal["hidden_path", "excluded_dir", "symlink", "case_mismatch", "pattern_excluded", "empty_file",
                     "bad_name", "unreadable", "missing_root", "not_a_file", "glob_path"]
QMD_EXCLUDED_DIRS = frozenset({"node_modules", ".git", ".cache", "vendor", "dist", "build"})
DEPENDENCY_DIRS = frozenset({"node_modules", "vendor", "bower_components", "site-packages", ".venv", "venv"})
DEFAULT_MAX_FILES = 200_000
DEFAULT_MAX_ENTRIES = 1_000_000
MAX_SKIPPED_LISTED = 50
MAX_FILES_LISTED = 100
MAX_NOTES_LISTED = 10
_TOOL_DIRS = DEPENDENCY_DIRS | QMD_EXCLUDED_DIRS
#: the first line of clawprobe's own canary file (``clawprobe.core.canary.HEADER``; not imported: probes sit below
#: the canary module in the import graph — tests/test_coverage.py checks the two agree)
CANARY_HEADER = b"# clawprobe canary"
NOTES_PEEK_ENTRIES = 2000
BLOAT_SHARE = 0.5
BLOAT_MIN_FILES = 20
_GLOB_FLAGS = wglob.GLOBSTAR | wglob.BRACE | wglob.EXTGLOB
_MAGIC = set("*?[]{}()!+@")
_JS_SPACE = " \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DiskFile(NamedTuple):
    """A file the engine would index. ``key`` is what the index stores (QMD: collection-relative
    ``path``; builtin: workspace-relative ``path``); ``rel`` is workspace-relative for display.
    ``mtime_ns``, ``size`` (bytes) and ``ctime_ns`` come from ``lstat``. A tuple: a scan may hold 100,000s."""

    key: str
    collection: str | None
    rel: str
    abs_path: str
    size: int
    mtime_ns: int
    ctime_ns: int = 0


class Skipped(_M):
    """A path the engine would not index, and why (``reason`` is an explainer tag)."""

    rel: str
    reason: SkipReason
    detail: str | None = None


class DiskScan(_M):
    """The result of one bounded scan (source: ``os.scandir``/``lstat`` of the workspace and collections).

    ``skipped`` lists up to 50 examples; ``skipped_counts`` counts all by reason. ``roots`` maps each root's
    label (QMD: the collection; builtin: ``MEMORY.md``, ``memory/``, each extra path as configured) to its
    absolute path; ``root_notes`` counts, per root label and skip reason, the Markdown notes a rule skips
    (a skipped directory counts the ``.md`` files under it, bounded), ``root_notes_listed`` names up to
    10 per root as ``path (reason)`` (:mod:`clawprobe.core.probes.coverage` reads both). ``capped`` is true when
    the scan stopped at a bound (``cap_detail`` says which): conclusions about files not reached are then
    impossible, and :func:`compare` says so. ``seconds`` is wall time.
    """

    engine: Engine
    workspace: str
    roots: dict[str, str] = Field(default_factory=dict)
    files: list[DiskFile] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)
    skipped_counts: dict[str, int] = Field(default_factory=dict)
    capped: bool = False
    cap_detail: str | None = None
    entries_seen: int = 0
    seconds: float = 0.0
    root_notes: dict[str, dict[str, int]] = Field(default_factory=dict)
    root_notes_listed: dict[str, list[str]] = Field(default_factory=dict)
    #: files this process may not read (mode bits, confirmed by ``os.access``: ACLs and capabilities count), as
    #: absolute paths, at most :data:`MAX_DENIED` — an index row can match one by stat while no sync can open it
    denied: list[str] = Field(default_factory=list)


MAX_DENIED = 1_000  #: unreadable files a scan records (:attr:`DiskScan.denied`)


class _Budget:
    def __init__(self, max_files: int, max_entries: int, deadline: float | None) -> None:
        self.max_files, self.max_entries, self.deadline = max_files, max_entries, deadline
        self.files = self.entries = 0
        self.stopped: str | None = None

    def entry(self) -> bool:
        self.entries += 1
        if self.entries > self.max_entries:
            self.stopped = f"stopped after {self.max_entries} directory entries"
        elif self.deadline is not None and self.entries % 512 == 0 and time.monotonic() > self.deadline:
            self.stopped = "stopped at the time budget"
        return self.stopped is None

    def file(self) -> bool:
        self.files += 1
        if self.files > self.max_files:
            self.stopped = f"stopped after {self.max_files} files"
        return self.stopped is None


class _Bucket:
    """The files one directory contributed to a scan (for :mod:`clawprobe.core.probes.workspace_cache`)."""

    __slots__ = ("rel", "depth", "files", "linked", "subdirs", "skips", "result")

    def __init__(self, rel: str, depth: int) -> None:
        self.rel, self.depth = rel, depth
        self.files: list[DiskFile] = []
        #: the skips of this directory's entries: (abs path, reason, detail, Markdown notes it hides)
        self.skips: list[tuple[str, SkipReason, str | None, int]] = []
        self.linked: list[DiskFile] = []  # files with more than one hard link
        self.subdirs: list[str] = []
        self.result: tuple | None = None  # (docs_by_dir it was compared with, Comparison part), for the cache


class _Scan:
    def __init__(self, engine: Engine, workspace: str, budget: _Budget) -> None:
        self.out = DiskScan(engine=engine, workspace=workspace)
        self.budget = budget
        self.counts: Counter[str] = Counter()
        self.seen: dict[str | None, set[str]] = {}  # collection -> keys added (a file is listed once)
        self.buckets: dict[str, _Bucket] | None = None  # abs dir -> bucket, when a cache records the walk
        self.cur: _Bucket | None = None
        self.root: str | None = None  # the label of the root being scanned (coverage attribution)
        #: every root the scan walks, known before it starts: a skipped symlink into one hides no note
        #: (:func:`_reached_elsewhere`) — the same set for a full scan and a cache's re-listing of one dir
        self.walk_roots: list[str] = []
        self._rel_dirs: dict[str, str] = {}  # abs dir -> its workspace-relative prefix ("" for the workspace)
        self.files = self.out.files  # the list the scan fills (bound once: appended to per file)
        self._uid = os.geteuid()
        self._gids = {os.getegid(), *os.getgroups()}

    def rel(self, abs_path: str) -> str:
        """:func:`rel_to` the workspace, computed once per directory (a scan adds 100,000s of files from a
        few hundred directories; a name from ``scandir`` is never ``.``/``..``, so joining is exact)."""
        d, _, name = abs_path.rpartition("/")
        pre = self._rel_dirs.get(d)
        if pre is None:
            pre = self._rel_dirs[d] = "" if d == self.out.workspace else rel_to(self.out.workspace, d) + "/"
        return pre + name

    def enter(self, abs_dir: str, rel: str, depth: int) -> None:
        if self.buckets is not None:
            self.cur = self.buckets[abs_dir] = _Bucket(rel, depth)

    def skip(self, abs_path: str, reason: SkipReason, detail: str | None = None) -> None:
        n = _notes_at(abs_path, reason, rel_to(self.out.workspace, abs_path)) if self.root is not None else 0
        if reason == "bad_name":  # counted on the real name; recorded as UTF-8 text (U+FFFD for each bad byte)
            abs_path = path_text(abs_path)
        if n and reason == "symlink" and _reached_elsewhere(abs_path, self.walk_roots):
            n = 0
        if self.buckets is not None:  # the directory holding the entry (a dir that could not be listed: its parent)
            bucket = self.buckets.get(os.path.dirname(abs_path))
            if bucket is not None:
                bucket.skips.append((abs_path, reason, detail, n))
        self.note_skip(abs_path, reason, detail, n)

    def note_skip(self, abs_path: str, reason: SkipReason, detail: str | None, notes: int) -> None:
        """Count one skip (``notes``: the Markdown notes it hides, counted for the current root)."""
        self.counts[reason] += 1
        if len(self.out.skipped) < MAX_SKIPPED_LISTED:
            self.out.skipped.append(Skipped(rel=rel_to(self.out.workspace, abs_path), reason=reason, detail=detail))
        if self.root is not None and notes:
            per = self.out.root_notes.setdefault(self.root, {})
            per[reason] = per.get(reason, 0) + notes
            listed = self.out.root_notes_listed.setdefault(self.root, [])
            if len(listed) < MAX_NOTES_LISTED:
                listed.append(f"{rel_to(self.out.workspace, abs_path)} ({reason})")

    def add(self, key: str, collection: str | None, abs_path: str, st: os.stat_result) -> bool:
        seen = self.seen.get(collection)
        if seen is None:
            seen = self.seen[collection] = set()
        elif key in seen:
            return True
        if not self.budget.file():
            return False
        seen.add(key)
        d, _, name = abs_path.rpartition("/")  # self.rel, inlined: once per file of 100,000s
        pre = self._rel_dirs.get(d)
        f = DiskFile(key, collection, pre + name if pre is not None else self.rel(abs_path), abs_path, st.st_size,
                     st.st_mtime_ns, st.st_ctime_ns)
        self.files.append(f)
        bit = 0o400 if st.st_uid == self._uid else 0o040 if st.st_gid in self._gids else 0o004
        if not st.st_mode & bit and len(self.out.denied) < MAX_DENIED and not os.access(abs_path, os.R_OK):
            self.out.denied.append(abs_path)
        if self.cur is not None:
            self.cur.files.append(f)
            if st.st_nlink > 1:
                self.cur.linked.append(f)
        return True

    def finish(self, t0: float) -> DiskScan:
        self.out.skipped_counts = dict(self.counts)
        self.out.entries_seen = self.budget.entries
        self.out.capped = self.budget.stopped is not None
        self.out.cap_detail = self.budget.stopped
        self.out.seconds = round(time.monotonic() - t0, 4)
        return self.out


def is_canary(path: str) -> bool:
    """Whether the file is one of clawprobe's own synthetic canaries (its first line is the canary header, see
    :data:`clawprobe.core.canary.HEADER`): not an operator's note."""
    try:
        if not stat_mod.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the read
            return False
        with open_regular(path) as f:
            return f.read(len(CANARY_HEADER) + 1).rstrip(b"\r\n") == CANARY_HEADER
    except OSError:
        return False


MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")  #: names an operator writes notes under


def _not_md(name: str) -> SkipReason | None:
    """Why a Markdown note's name is not one an engine's ``*.md`` rule takes: ``case_mismatch`` (``.MD``,
    ``.Md``), ``pattern_excluded`` (``.markdown`` and its kin); ``None`` for ``*.md`` and for non-notes."""
    low = name.lower()
    if name.endswith(".md") or not low.endswith(MARKDOWN_SUFFIXES):
        return None
    return "case_mismatch" if low.endswith(".md") else "pattern_excluded"


def _reached_elsewhere(link: str, roots: Iterable[str]) -> bool:
    """True when a skipped symlink hides no note of its own: its target is gone (a dangling link holds no text),
    or lies in, is, or encloses a root the scan walks (``memory/loop -> .``, ``memory/up -> ../..``: a loop back
    into notes indexed anyway; ``memory/plan-link.md -> plan.md``: the same text, indexed at its own path)."""
    real = os.path.realpath(link)
    if not os.path.exists(real):
        return True
    for root in roots:
        r = os.path.realpath(root)
        if real == r or real.startswith(r.rstrip(os.sep) + os.sep) or r.startswith(real.rstrip(os.sep) + os.sep):
            return True
    return False


def _notes_at(abs_path: str, reason: str, rel: str) -> int:
    """How many Markdown notes a skip of ``abs_path`` (``rel`` to the workspace) hides: 1 for a ``.md`` file,
    the ``.md`` files under a skipped directory (at most :data:`NOTES_PEEK_ENTRIES` entries looked at; a
    symlinked dir is looked through once), 0 for anything in or under a dependency or build dir
    (``node_modules``, ``.venv``, ``.git`` …: not the operator's notes), for clawprobe's own canaries and for
    non-notes."""
    if reason == "missing_root" or _TOOL_DIRS.intersection(PurePosixPath(rel).parts):
        return 0
    if reason == "bad_name":  # OpenClaw and qmd (Node) read names as UTF-8: such a note is never indexed (n02b)
        try:
            return int(abs_path.lower().endswith(MARKDOWN_SUFFIXES) and stat_mod.S_ISREG(os.lstat(abs_path).st_mode))
        except OSError:
            return 0
    name = os.path.basename(abs_path)
    if name.lower().endswith(MARKDOWN_SUFFIXES) and not os.path.isdir(abs_path):
        return 0 if is_canary(abs_path) else 1
    if reason == "empty_file" or not os.path.isdir(abs_path):
        return 0
    n = seen = 0
    stack = [abs_path]
    while stack and seen < NOTES_PEEK_ENTRIES:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    seen += 1
                    if seen >= NOTES_PEEK_ENTRIES:
                        break
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif e.name.lower().endswith(".md") and e.is_file(follow_symlinks=False) and not is_canary(e.path):
                        n += 1
        except OSError:
            continue
    return n


def rel_to(workspace: str, abs_path: str) -> str:
    """``abs_path`` relative to ``workspace`` with ``/`` separators (``../`` for outside paths), as the
    builtin engine stores extra paths."""
    if abs_path.startswith(workspace) and abs_path[len(workspace):len(workspace) + 1] == "/" and "/." not in abs_path \
            and "//" not in abs_path and os.sep == "/":
        return abs_path[len(workspace) + 1:]  # the common case, without normpath's cost
    try:
        return PurePosixPath(os.path.relpath(abs_path, workspace)).as_posix()
    except ValueError:
        return abs_path


def _good_name(name: str) -> bool:
    if name.isascii():  # the common case, without an encode per entry
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_magic(segment: str) -> bool:
    return any(ch in _MAGIC for ch in segment)


def _walk(scan: _Scan, root: str, rel_prefix: str, *, max_depth: int | None,
          on_dir: Callable[[str, str, str], bool], on_file: Callable[[str, str, os.DirEntry[str]], bool], depth: int = 0,
          known: Callable[[str], bool] | None = None) -> None:
    """Iterative scandir walk under ``root`` (never follows symlinks). ``on_dir(abs, rel, name)`` returns
    True to descend; ``on_file(abs, rel, entry)`` returns False to stop the whole scan. ``depth`` is the
    depth of ``root`` below the pattern's start; a subdir for which ``known(abs)`` is true is recorded in
    its bucket but not walked again (the incremental rescan of one directory)."""
    stack: list[tuple[str, str, int]] = [(root, rel_prefix, depth)]
    while stack:
        d, rel_d, depth = stack.pop()
        try:
            it = os.scandir(d)
        except OSError as e:
            scan.skip(d, "unreadable", str(e.strerror or e))
            continue
        scan.enter(d, rel_d, depth)
        with it:
            for entry in it:
                if not scan.budget.entry():
                    return
                name = entry.name
                abs_p = entry.path  # os.path.join(d, name), already built by scandir
                if not _good_name(name):
                    scan.skip(abs_p, "bad_name", "file name is not valid UTF-8")
                    continue
                rel = f"{rel_d}/{name}" if rel_d else name
                try:
                    if entry.is_symlink():
                        if entry.name.lower().endswith(".md") or _points_to_dir(abs_p):
                            scan.skip(abs_p, "symlink", f"-> {_readlink(abs_p)}")
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if (max_depth is None or depth + 1 < max_depth) and on_dir(abs_p, rel, name):
                            if scan.cur is not None:
                                scan.cur.subdirs.append(abs_p)
                            if known is None or not known(abs_p):
                                stack.append((abs_p, rel, depth + 1))
                        continue
                    if entry.is_file(follow_symlinks=False) and on_file(abs_p, rel, entry) is False:
                        return
                except OSError as e:
                    scan.skip(abs_p, "unreadable", str(e.strerror or e))


def _points_to_dir(p: str) -> bool:
    try:
        return os.path.isdir(p)
    except OSError:
        return False


def _readlink(p: str) -> str:
    try:
        return path_text(os.readlink(p))
    except OSError:
        return "?"


def _case_sibling(directory: str, name: str) -> str | None:
    """A file in ``directory`` whose name equals ``name`` ignoring case (e.g. ``memory.md``)."""
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name != name and e.name.lower() == name.lower():
                    return os.path.join(directory, e.name)
    except OSError:
        return None
    return None


# ---------------------------------------------------------------------------------------------------
# QMD scanner
# ---------------------------------------------------------------------------------------------------

class GlobMatcher:
    """``wcmatch.glob.compile(patterns, flags=flags).match(path)`` for a path string (no ``REALPATH``), from the
    same regular expressions (``wcmatch.glob.translate``) without the per-call objects: a scan matches every
    file of a 100,000-file tree (``tests/test_glob_matcher.py`` checks both methods against wcmatch itself)."""

    __slots__ = ("include", "exclude", "_tail", "_memo")

    def __init__(self, patterns: Sequence[str], flags: int) -> None:
        inc, exc = wglob.translate(list(patterns), flags=flags)
        self.include = [re.compile(x).fullmatch for x in inc]
        self.exclude = [re.compile(x).fullmatch for x in exc]
        # every pattern `**/<one segment>` (qmd's default `**/*.md`): for a path with no dot-part, `**` matches
        # any directories, so the answer is the segment's match of the basename — memoized (names repeat per dir)
        tails = [p[3:] for p in patterns if p.startswith("**/") and "/" not in p[3:] and "**" not in p[3:]]
        self._tail = GlobMatcher(tails, flags) if len(tails) == len(patterns) and not flags & wglob.NEGATE \
            and not flags & wglob.DOTGLOB else None
        self._memo: dict[str, bool] = {}

    def match(self, path: str) -> bool:
        """True when ``path`` (``/``-separated, relative) matches an include pattern and no exclude one."""
        for m in self.include:
            if m(path):
                break
        else:
            return False
        return not any(m(path) for m in self.exclude) if self.exclude else True

    def match_visible(self, path: str) -> bool:
        """:meth:`match` for a ``path`` whose parts are all non-empty and none starts with ``.`` (what a scan
        hands over: names from ``scandir``, dot-paths dropped first)."""
        if self._tail is None:
            return self.match(path)
        name = path.rpartition("/")[2]
        hit = self._memo.get(name)
        if hit is None:
            if len(self._memo) >= 65_536:
                self._memo.clear()
            hit = self._memo[name] = self._tail.match(name)
        return hit


class QmdRules:
    """qmd's scanner rules for one collection: its resolved root, literal patterns (one ``lstat`` each,
    e.g. ``MEMORY.md``) and walks (``(start dir, collection-relative prefix, max depth)``)."""

    def __init__(self, c: QmdCollection) -> None:
        self.c = c
        self.root = os.path.realpath(c.path)  # qmd collection add stores the resolved root
        self.patterns = [p.strip() for p in c.pattern.split(",") if p.strip()] or ["**/*.md"]
        self.matcher = GlobMatcher(self.patterns, _GLOB_FLAGS)
        self.ignorer = GlobMatcher(list(c.ignore), _GLOB_FLAGS | wglob.DOTGLOB) if c.ignore else None
        self.literals: list[str] = []
        self.walks: list[tuple[str, str, int | None]] = []
        self._bad: dict[str, frozenset[str]] = {}
        for pat in self.patterns:
            segs = pat.split("/")
            static: list[str] = []
            for seg in segs:
                if _is_magic(seg):
                    break
                static.append(seg)
            if len(static) == len(segs):
                self.literals.append(pat)
            else:
                start = os.path.join(self.root, *static) if static else self.root
                self.walks.append((start, "/".join(static), None if "**" in segs else len(segs) - len(static)))

    def accept(self, scan: _Scan, abs_p: str, rel: str, st: os.stat_result) -> bool:
        """Add one candidate file unless qmd would skip it; False when the scan must stop."""
        if rel.startswith(".") or "/." in rel:  # a path part starting with "."
            scan.skip(abs_p, "hidden_path", "qmd skips dot-paths")
            return True
        if not self.matcher.match_visible(rel):
            why = _not_md(rel.rpartition("/")[2])  # a note the pattern would take were its name *.md
            if why is not None and self.matcher.match(rel.rpartition(".")[0] + ".md"):
                scan.skip(abs_p, why, f"collection {self.c.name} matches {self.c.pattern!r} (case-sensitive)")
            return True
        bad = self._excluded_in(rel.rpartition("/")[0])  # qmd's **/<dir>/** ignores (pruned in walks too)
        if bad or (self.ignorer is not None and self.ignorer.match(rel)):
            scan.skip(abs_p, "pattern_excluded",
                      f"under {sorted(bad)[0]}/" if bad else f"ignored in collection {self.c.name}")
            return True
        if st.st_size == 0:
            scan.skip(abs_p, "empty_file", "qmd skips empty files")
            return True
        return scan.add(rel, self.c.name, abs_p, st)

    def _excluded_in(self, rel_dir: str) -> frozenset[str]:
        """qmd's excluded directory names among the parts of ``rel_dir`` (once per directory)."""
        bad = self._bad.get(rel_dir)
        if bad is None:
            bad = self._bad[rel_dir] = QMD_EXCLUDED_DIRS.intersection(rel_dir.split("/")) if rel_dir else frozenset()
        return bad

    def literal(self, scan: _Scan, pat: str) -> bool:
        """Check one literal pattern (a case-only sibling such as ``memory.md`` is reported)."""
        segs = pat.split("/")
        abs_p = os.path.join(self.root, *segs)
        try:
            st = os.lstat(abs_p)
        except OSError:
            sib = _case_sibling(os.path.dirname(abs_p), segs[-1])
            if sib:
                scan.skip(sib, "case_mismatch", f"collection {self.c.name} matches {pat!r} only (case-sensitive)")
            return True
        if stat_mod.S_ISLNK(st.st_mode):
            scan.skip(abs_p, "symlink", f"-> {_readlink(abs_p)}")
        elif stat_mod.S_ISREG(st.st_mode):
            return self.accept(scan, abs_p, pat, st)
        return True

    def walk(self, scan: _Scan, start: str, rel: str, max_depth: int | None, *, depth: int = 0,
             known: Callable[[str], bool] | None = None) -> None:
        """Walk ``start`` (pruning dot-dirs and qmd's excluded dirs) and add what qmd would index."""
        if depth == 0 and rel and (os.path.islink(start) or not os.path.isdir(start)):
            return

        def on_dir(abs_p: str, _rel: str, name: str) -> bool:
            if name.startswith("."):
                scan.skip(abs_p, "hidden_path", "qmd skips dot-paths")
                return False
            if name in QMD_EXCLUDED_DIRS:
                scan.skip(abs_p, "excluded_dir", f"qmd never indexes {name}/")
                return False
            return True

        def on_file(abs_p: str, frel: str, entry: os.DirEntry[str]) -> bool:
            return self.accept(scan, abs_p, frel, entry.stat(follow_symlinks=False))

        _walk(scan, start, rel, max_depth=max_depth, on_dir=on_dir, on_file=on_file, depth=depth, known=known)


GLOB_CHARS = frozenset("*?[{")  #: characters that make a configured path a wildcard to an operator, not to OpenClaw


def glob_path_skips(scan: _Scan, c: QmdCollection, root: str) -> None:
    """A collection path holding glob characters (``~/kb/*``): OpenClaw and qmd take it literally (measured with
    2026.7.35: the collection's path is ``…/kb/*`` and OpenClaw's first run creates an empty directory named ``*``),
    so the notes in the directories the glob names are never indexed — each such directory is a ``glob_path`` skip
    (its notes counted)."""
    if not GLOB_CHARS.intersection(c.path):
        return
    for match in sorted(wglob.glob(c.path, flags=_GLOB_FLAGS))[:MAX_SKIPPED_LISTED]:
        if os.path.normpath(match) != os.path.normpath(root) and not os.path.islink(match):
            scan.skip(match, "glob_path", f"collection {c.name} path {c.path} is taken literally, not as a glob")


def _qmd_collection(scan: _Scan, c: QmdCollection, buckets: dict | None = None) -> bool:
    rules = QmdRules(c)
    scan.out.roots[c.name] = rules.root
    scan.root = c.name
    glob_path_skips(scan, c, rules.root)
    if not os.path.isdir(rules.root):
        scan.skip(rules.root, "missing_root", f"collection {c.name} path does not exist")
        return True
    for pat in rules.literals:
        if not rules.literal(scan, pat):
            return False
    scan.buckets = buckets
    try:
        for start, rel, max_depth in rules.walks:
            rules.walk(scan, start, rel, max_depth)
            if scan.budget.stopped:
                return False
    finally:
        scan.buckets = scan.cur = None
    return True


def scan_qmd(collections: Sequence[QmdCollection], workspace: str, *, max_files: int = DEFAULT_MAX_FILES,
             max_entries: int = DEFAULT_MAX_ENTRIES, deadline_s: float | None = None,
             record: dict[str, dict] | None = None) -> DiskScan:
    """GATHER: the files qmd would index for ``collections`` (usually from the agent's ``index.yml``).

    ``workspace`` is only for display paths. Bounded by ``max_files``/``max_entries``/``deadline_s``.
    ``record`` (collection name → dict) receives each walked directory's files, for
    :class:`clawprobe.core.probes.workspace_cache.WorkspaceCache`.
    """
    t0 = time.monotonic()
    scan = _Scan("qmd", workspace, _Budget(max_files, max_entries, None if deadline_s is None else t0 + deadline_s))
    scan.walk_roots = qmd_walk_roots(collections)
    for c in collections:
        if not _qmd_collection(scan, c, None if record is None else record.setdefault(c.name, {})):
            break
        if os.path.normpath(c.path) == os.path.join(os.path.normpath(workspace), "memory"):
            _memory_dir_variant(scan, workspace)  # counted under the memory dir's collection
    return scan.finish(t0)


def _memory_dir_variant(scan: _Scan, workspace: str) -> None:
    """Skip a directory beside ``memory/`` whose name differs only in case (``Memory/``, a restore from a
    case-insensitive disk): no engine reads notes there (both builds list ``memory/`` only; 2026.9.6 measured,
    breaker round 10, s09b), so its notes count as skipped (``case_mismatch``)."""
    sib = _case_sibling(workspace, "memory")
    if sib and os.path.isdir(sib) and not os.path.islink(sib):
        scan.skip(sib, "case_mismatch", "notes are read from memory/ (lowercase) only")


def qmd_walk_roots(collections: Iterable[QmdCollection]) -> list[str]:
    """The roots qmd walks for ``collections``: each one's resolved path (pure but for ``realpath``)."""
    return [os.path.realpath(c.path) for c in collections]


def default_qmd_collections(agent_id: str, workspace: str) -> list[QmdCollection]:
    """The two collections OpenClaw creates for an agent (before ``index.yml`` exists): root + memory dir."""
    from clawprobe.core.probes.qmd_index import managed_collection_names

    root, mem = managed_collection_names(agent_id)
    return [QmdCollection(name=root, path=workspace, pattern="MEMORY.md"),
            QmdCollection(name=mem, path=os.path.join(workspace, "memory"), pattern="**/*.md")]


# ---------------------------------------------------------------------------------------------------
# builtin scanner
# ---------------------------------------------------------------------------------------------------

USER_MD = "USER.md"
#: the directory OpenClaw's root-memory migration keeps its backups in; both builds' ``listMemoryFiles`` never
#: descend into a directory of this name (``shouldDescendMemoryEntry``, 2026.7.35 and 2026.9.6)
REPAIR_DIR = ".openclaw-repair"


def indexes_user_md(version: str | None, indexed_paths: Iterable[str]) -> bool:
    """Whether the builtin engine indexes the workspace's ``USER.md``: yes on a build after the QMD era
    (2026.9.6's ``listMemoryFiles``, read in its dist and verified: its search returns ``USER.md``), no on
    2026.7.x (its ``listMemoryFiles`` takes only ``MEMORY.md`` and ``memory/``); on an unknown build, yes
    when the index already holds it (pure)."""
    era = has_qmd_backend(version)
    return era is False or (era is None and USER_MD in indexed_paths)


_MINIMATCH = wglob.GLOBSTAR | wglob.BRACE | wglob.EXTGLOB  # minimatch's defaults (no dot: `*` skips dotfiles)


def extra_pattern_match(globs: Sequence[str], rel: str) -> bool:
    """Whether a file at ``rel`` (``/``-separated, relative to its extra directory) is indexed under the
    entry's ``globs``: no globs = every file; else one must match (OpenClaw 2026.9.6's
    ``matchesExtraMemoryPathEntry``: Node's ``path.posix.matchesGlob``, i.e. minimatch with its defaults; a
    glob it cannot parse matches nothing). Pure."""
    if not globs:
        return True
    for g in globs:
        try:
            if wglob.globmatch(rel, g, flags=_MINIMATCH):
                return True
        except (ValueError, TypeError):
            continue
    return False


def _regular(path: str) -> bool:
    try:
        return stat_mod.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def extra_path_abs(raw: str, workspace: str, home: str | None) -> str:
    """A configured extra path as OpenClaw resolves it: ``~`` and a leading ``~/`` from ``home`` (else this
    process's), anything else relative to the workspace (pure). ``~name/…`` is no home to OpenClaw (both builds'
    ``expandHomePath`` and ``resolveUserPath`` expand ``~`` only before ``/`` or the end): it is a directory named
    ``~name`` in the workspace, not ``name``'s home nor ``<home>name`` (breaker round 24)."""
    if raw == "~" or raw.startswith("~/"):
        p = (home or os.path.expanduser("~")) + raw[1:]
    else:
        p = raw
    return p if os.path.isabs(p) else os.path.join(workspace, p)


def workspace_state(workspace: str) -> WorkspaceState:
    """GATHER: what is at the agent's workspace path (``lstat`` through symlinks, one ``scandir`` step):
    ``dir`` (a directory with entries), ``empty`` (a directory without any — an unmounted mount point, a wiped
    restore), ``missing`` (nothing there, or a dangling symlink), ``not_dir`` (a file), ``unreadable`` (it
    cannot be listed: permissions)."""
    try:
        if not stat_mod.S_ISDIR(os.stat(workspace).st_mode):
            return "not_dir"
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError:
        return "unreadable"
    try:
        with os.scandir(workspace) as it:
            return "dir" if next(it, None) is not None else "empty"
    except OSError:
        return "unreadable"


def near_name_findings(workspace: str) -> list[Finding]:
    """GATHER, for a workspace path that is not there: ``workspace_near_name`` when the first missing component's
    directory holds an entry whose name differs from it only in Unicode normalization (``Büro`` as NFD, the form a
    Mac's rsync writes, against an NFC config: they look the same in ``ls``, and the ``ls -la`` of the repair
    fails — breaker round 7, w21) or letter case. One ``scandir`` of that directory (at most 10,000 entries)."""
    path = os.path.abspath(workspace)
    parent, name = os.path.split(path)
    while parent != path and not os.path.isdir(parent):  # the first component that is missing
        path, (parent, name) = parent, os.path.split(parent)
    want = unicodedata.normalize("NFC", name)
    try:
        with os.scandir(parent) as it:
            names = [e.name for _, e in zip(range(10_000), it, strict=False)]
    except OSError:
        return []
    for other in names:
        if other == name:
            continue
        nfc = unicodedata.normalize("NFC", other)
        how = "Unicode normalization (NFC vs NFD)" if nfc == want else "letter case" if nfc.casefold() == \
            want.casefold() else None
        if how:
            there = os.path.join(parent, other)
            return [Finding(tag="workspace_near_name", source="disk (workspace)", message=(
                f"{there!a} exists beside the missing {path!a}: the names differ only in {how}, so they look the "
                f"same in ls; rename it to the configured name (mv -n {shell_word(there)} {shell_word(path)}) or "
                "point the config at it"))]
    return []


def notes_nearby(workspace: str) -> str | None:
    """GATHER, for a workspace path that is not there: its first existing ancestor when that holds notes — a
    ``MEMORY.md`` file or a ``memory/`` directory (``agents.defaults.workspace`` itself, while OpenClaw gives the
    agent ``<it>/<id>``: 2026.9.6 with ``agents.ownership: explicit``, breaker round 9, p13); else ``None``. Two
    ``stat`` calls per ancestor level."""
    path = os.path.abspath(workspace)
    parent = os.path.dirname(path)
    while parent != path and not os.path.isdir(parent):
        path, parent = parent, os.path.dirname(parent)
    if os.path.isfile(os.path.join(parent, "MEMORY.md")) or os.path.isdir(os.path.join(parent, "memory")):
        return parent
    return None


def memory_root_findings(workspace: str) -> list[Finding]:
    """GATHER: ``memory_not_dir`` when ``<workspace>/memory`` exists and is no directory (a file, a dangling
    symlink): OpenClaw reads no note from it, cannot write the agent's daily notes there, and no canary can be
    planted (breaker round 6: the repair said "plant a canary", which refuses). ``lstat`` only."""
    p = os.path.join(workspace, "memory")
    try:
        st = os.lstat(p)
    except OSError:
        return []
    if stat_mod.S_ISDIR(st.st_mode) or (stat_mod.S_ISLNK(st.st_mode) and os.path.isdir(p)):
        return []
    q = shell_word(p)
    return [Finding(tag="memory_not_dir", source="disk (workspace)", message=(
        f"{p} is {'a symlink to nothing' if stat_mod.S_ISLNK(st.st_mode) else 'a file'}, not the memory notes "
        f"directory: OpenClaw reads no note there and cannot write the agent's daily notes; move it aside and "
        f"create the directory: mv -n {q} {q}.moved && mkdir {q}"))]


def absent_roots(raw_paths: Iterable[str], workspace: str, home: str | None) -> list[str]:
    """GATHER: the configured roots (raw ``extraPaths`` / ``memory.qmd.paths`` / ``extraCollections`` values, resolved
    as OpenClaw resolves them) that do not exist — nothing at the path, or a dangling symlink (``stat``: 2026.7.35's
    ``collection add`` then fails ``ENOENT: mkdir`` and every ``memory search`` of the agent exits 1, breaker round
    11, s03) — in order, without repeats."""
    out: list[str] = []
    for raw in raw_paths:
        p = os.path.normpath(extra_path_abs(raw, workspace, home))
        if p not in out and not os.path.exists(p):
            out.append(p)
    return out


def emptied_roots(raw_paths: Iterable[str], workspace: str, home: str | None, indexed: Iterable[str]) -> dict[str, int]:
    """GATHER: the configured roots (raw ``extraPaths`` / ``memory.qmd.paths`` values, resolved as OpenClaw resolves
    them; a directory, or a file the index lists as itself) that hold none of the notes the index lists under them —
    an empty mount point whose volume is not mounted, a wiped restore, a root gone altogether — each with how many
    indexed notes it lists there. ``indexed``: the index's paths,
    workspace-relative or absolute (``memory_index_sources.path``; a QMD document as its collection root joined with
    its path). A root holding any one of them is not emptied (notes deleted one by one are a stale index). Measured
    with ``lexists`` per indexed path; in configured order, without repeats. OpenClaw's next sync (2026.9.6: any
    ``memory search``) drops every row listed there — so the index, not the disk, is what still holds the notes."""
    roots: list[str] = []
    for raw in raw_paths:
        p = os.path.normpath(extra_path_abs(raw, workspace, home))
        if p not in roots:
            roots.append(p)
    if not roots:
        return {}
    under: dict[str, list[str]] = {r: [] for r in roots}
    for path in indexed:
        abs_p = os.path.normpath(os.path.join(workspace, path))
        for r in roots:
            if abs_p == r or abs_p.startswith(r.rstrip("/") + "/"):
                under[r].append(abs_p)
    return {r: len(ps) for r, ps in under.items() if ps and not any(os.path.lexists(q) for q in ps)}


def linked_roots(raw_paths: Iterable[str], workspace: str, home: str | None) -> dict[str, str]:
    """GATHER: the configured builtin ``extraPaths`` entries that are themselves symlinks to a directory or a file,
    each with its real path (``lstat`` + ``realpath``): the builtin engine never reads through a symlinked extra path
    (2026.9.6 ``listMemoryFiles``: "symlinked roots are not traversed, so configure its canonical absolute directory
    instead"; 2026.7.35 skips it silently) — breaker round 12, s05 (a dir), round 13, N3 (a file). In order, without
    repeats."""
    out: dict[str, str] = {}
    for raw in raw_paths:
        p = os.path.normpath(extra_path_abs(raw, workspace, home))
        if p not in out and os.path.islink(p) and os.path.exists(p):
            out[p] = os.path.realpath(p)
    return out


def rename_clashes(skipped: Iterable[tuple[str, str]], workspace: str) -> dict[str, str]:
    """GATHER: the skipped notes whose searchable name is already taken, each with the file that holds that name
    (``lexists``): ``memory.md`` beside a ``MEMORY.md``, ``note.MD`` or ``note.markdown`` beside a ``note.md``. The
    rename the repair names for such a note (``memory.md → MEMORY.md``) would overwrite the note the engine does
    index (breaker round 24: ``mv memory.md MEMORY.md`` on Linux, where both exist) — the two are merged instead.
    ``skipped``: ``(path, reason)`` per skip (a path relative to ``workspace`` or absolute) — a scan's listed skips
    (:func:`scan_skips`) or the dashboard cache's (``WorkspaceCache.skipped``), either engine. Absolute paths, in
    the order given."""
    out: dict[str, str] = {}
    for rel, reason in skipped:
        if reason not in ("case_mismatch", "pattern_excluded"):
            continue
        src = rel if os.path.isabs(rel) else os.path.normpath(os.path.join(workspace, rel))
        folder, name = os.path.split(src)
        low = name.lower()
        if low == "memory.md" and os.path.normpath(folder) == os.path.normpath(workspace):
            target = os.path.join(folder, "MEMORY.md")
        elif low.endswith(MARKDOWN_SUFFIXES) and not name.endswith(".md"):
            target = os.path.join(folder, name[:name.rindex(".")] + ".md")
        else:
            continue
        if target != src and os.path.lexists(target) and os.path.lexists(src):
            out[src] = target
    return out


def scan_skips(scan: DiskScan) -> list[tuple[str, str]]:
    """``(path, reason)`` of the skips ``scan`` listed (:data:`MAX_SKIPPED_LISTED`), for :func:`rename_clashes`."""
    return [(sk.rel, sk.reason) for sk in scan.skipped]


GLOB_MATCHES_MAX = 200  #: Markdown notes :func:`glob_matches` lists at most


def glob_matches(abs_path: str) -> list[str]:
    """GATHER: for an extra path that does not exist and holds wildcard characters (``notes/*.md``,
    ``~/kb/**``), the Markdown notes (regular ``*.md`` files) it matches as a shell or ``.gitignore`` glob, sorted,
    at most :data:`GLOB_MATCHES_MAX`; ``[]`` for any other path. Neither build expands ``extraPaths``: 2026.9.6's
    ``listMemoryFiles`` resolves each entry with ``path.resolve`` and ``lstat``s it (missing: skipped without a
    word), 2026.7.35's alike — so those notes are configured for memory and never searched (breaker round 24).
    A literal path that exists is what OpenClaw reads: ``[]`` when it is a file or holds a note (the operator meant
    it); an empty literal directory (``kb/*``, made by a QMD-era run) reads nothing, so the notes the wildcard names
    beside it are listed — never the literal itself."""
    if not GLOB_CHARS.intersection(abs_path):
        return []
    if os.path.lexists(abs_path):
        if not os.path.isdir(abs_path) or os.path.islink(abs_path) or _holds_md(abs_path):
            return []
    literal = os.path.normpath(abs_path)
    out = []
    for m in wglob.iglob(abs_path, flags=_GLOB_FLAGS):
        if os.path.normpath(m) == literal:
            continue
        hits = [m] if not os.path.isdir(m) or os.path.islink(m) else \
            [os.path.join(d, f) for d, _, fs in os.walk(m) for f in fs]
        out += [h for h in hits if h.endswith(".md") and os.path.isfile(h) and not os.path.islink(h)]
        if len(out) >= GLOB_MATCHES_MAX:
            break
    return sorted(set(out))[:GLOB_MATCHES_MAX]


def _holds_md(folder: str) -> bool:
    """True when a ``*.md`` file lies anywhere under ``folder`` (bounded walk: stops at the first)."""
    for n, (_, _, fs) in enumerate(os.walk(folder)):
        if any(f.endswith(".md") for f in fs) or n > 10_000:
            return True
    return False


def glob_roots(raw_paths: Iterable[str], workspace: str, home: str | None) -> dict[str, str]:
    """GATHER: the configured builtin ``extraPaths`` entries that are wildcards matching Markdown notes
    (:func:`glob_matches`), each with the directory before its first wildcard part — the path OpenClaw would read
    (2026.9.6 also takes ``{path, pattern}`` for the wildcard). In order, without repeats."""
    out: dict[str, str] = {}
    for raw in raw_paths:
        p = os.path.normpath(extra_path_abs(raw, workspace, home))
        if raw not in out and glob_matches(p):
            parts = p.split(os.sep)
            cut = next(i for i, part in enumerate(parts) if GLOB_CHARS.intersection(part))
            out[raw] = os.sep.join(parts[:cut]) or os.sep
    return out


def missing_extra_paths(extra_paths: Iterable[str], workspace: str, home: str | None,
                        key: str = "memorySearch.extraPaths") -> list[Finding]:
    """GATHER: a warning per configured extra path that cannot add anything: ``extra_path_missing`` when it
    does not exist (``stat``: a dangling symlink counts; OpenClaw's own status only lists it among its scan
    issues, ``additional memory path missing``), ``extra_path_not_markdown`` when it is a regular file whose
    name does not end in ``.md`` (both builds' ``listMemoryFiles`` take an extra file only as Markdown,
    multimodal aside) — nothing the operator pointed memory at is searched. ``key`` names the setting in the
    finding (QMD's custom collections, ``memory.qmd.paths``, are checked the same way: a collection on a path that
    is not there stays empty forever, breaker round 7, w20)."""
    out = []
    for raw in extra_paths:
        p = extra_path_abs(raw, workspace, home)
        if not os.path.exists(p):
            out.append(Finding(tag="extra_path_missing", source=f"config ({key})",
                               message=f"extra memory path {raw} ({p}) does not exist: nothing there is indexed or "
                                       "searched — fix the path in the config, or remove it"))
        elif _regular(p) and not p.endswith(".md"):
            out.append(Finding(tag="extra_path_not_markdown", source=f"config ({key})",
                               message=f"extra memory path {raw} ({p}) is a file that is not Markdown: OpenClaw "
                                       "indexes an extra file only when its name ends in .md — rename it, or "
                                       "point the entry at its directory"))
    return out


def scan_builtin(workspace: str, extra_paths: Iterable[str] = (), *, lowercase_root_indexed: bool = False,
                 user_md: bool = False, patterns: Mapping[str, Sequence[str]] | None = None, home: str | None = None,
                 max_files: int = DEFAULT_MAX_FILES, max_entries: int = DEFAULT_MAX_ENTRIES,
                 deadline_s: float | None = None) -> DiskScan:
    """GATHER: the files the builtin engine would index: ``MEMORY.md``, ``memory/**/*.md``, ``extraPaths``,
    and with ``user_md`` the workspace's ``USER.md`` (OpenClaw 2026.9.6's ``listMemoryFiles`` indexes it when
    it is a regular file; 2026.7.35's does not — decided by :func:`indexes_user_md`).

    ``extra_paths`` may be absolute, ``~``-relative (``home``) or workspace-relative; ``patterns`` maps an
    extra directory (as configured) to the globs its files must match, relative to it (2026.9.6's
    ``{path, pattern}`` entries: :func:`extra_pattern_match`). Keys are workspace-relative with ``/``, as in
    ``memory_index_sources.path``.
    """
    t0 = time.monotonic()
    extra_paths = list(extra_paths)
    scan = _Scan("builtin", workspace, _Budget(max_files, max_entries, None if deadline_s is None else t0 + deadline_s))

    def add_file(abs_p: str) -> bool:
        try:
            st = os.lstat(abs_p)
        except OSError:
            return True
        if stat_mod.S_ISLNK(st.st_mode):
            scan.skip(abs_p, "symlink", f"-> {_readlink(abs_p)}")
            return True
        if not stat_mod.S_ISREG(st.st_mode):  # MEMORY.md or an extra path file made a dir, FIFO, socket, device
            kind = "a directory" if stat_mod.S_ISDIR(st.st_mode) else "not a regular file"
            scan.skip(abs_p, "not_a_file", f"{kind}: the engine indexes regular files only")
            return True
        return scan.add(rel_to(workspace, abs_p), None, abs_p, st)

    def walk_md(root: str, globs: Sequence[str] = ()) -> None:
        if os.path.islink(root):
            scan.skip(root, "symlink", f"-> {_readlink(root)}")
            return
        if not os.path.isdir(root):
            return
        def on_file(a: str, r: str, e: os.DirEntry[str]) -> bool:
            if a.endswith(".md"):
                return add_file(a) if extra_pattern_match(globs, r) else True
            if (why := _not_md(e.name)) is not None:
                scan.skip(a, why, "the engine indexes names ending in .md (lowercase) only")
            return True

        _walk(scan, root, "", max_depth=None, on_dir=lambda a, r, n: n != REPAIR_DIR, on_file=on_file)

    root_md = os.path.join(workspace, "MEMORY.md")
    scan.walk_roots = [p for p in (root_md, os.path.join(workspace, "memory"),
                                   *(extra_path_abs(raw, workspace, home) for raw in extra_paths)) if not os.path.islink(p)]
    scan.out.roots["MEMORY.md"] = root_md
    scan.root = "MEMORY.md"
    if os.path.lexists(root_md):
        add_file(root_md)
    sib = _case_sibling(workspace, "MEMORY.md")  # memory.md, Memory.md… (Linux: a different file)
    if sib:
        if lowercase_root_indexed and os.path.basename(sib) == "memory.md":
            add_file(sib)
        else:
            scan.skip(sib, "case_mismatch", "only MEMORY.md is a root memory file on this build")
    user = os.path.join(workspace, USER_MD)
    if user_md and _regular(user):  # a symlink or a dir there is passed over by OpenClaw without a word
        scan.out.roots[USER_MD] = user
        scan.root = USER_MD
        add_file(user)
    scan.out.roots["memory/"] = os.path.join(workspace, "memory")
    scan.root = "memory/"
    walk_md(os.path.join(workspace, "memory"))
    _memory_dir_variant(scan, workspace)
    globbed: list[tuple[str, list[str]]] = []
    for raw in extra_paths:
        p = extra_path_abs(raw, workspace, home)
        if scan.budget.stopped:
            break
        scan.out.roots.setdefault(raw, p)
        scan.root = raw
        if (matched := glob_matches(p)):  # a wildcard OpenClaw takes literally: the notes it names are never read
            globbed.append((raw, matched))
        if os.path.isdir(p) and not os.path.islink(p):
            walk_md(p, (patterns or {}).get(raw, ()))  # (an empty literal dir a wildcard names: read, holds nothing)
        elif matched:
            pass
        elif p.endswith(".md") or os.path.islink(p) or not os.path.isfile(p):
            add_file(p)  # (a regular file not ending in .md is never indexed: :func:`missing_extra_paths` says so)
    taken = {os.path.realpath(f.abs_path) for f in scan.out.files}  # a wildcard's note another root indexes is fine
    for raw, matched in globbed:
        scan.root = raw
        what = "an empty directory" if os.path.isdir(extra_path_abs(raw, workspace, home)) else "which does not exist"
        for m in matched:
            if os.path.realpath(m) not in taken:
                scan.skip(m, "pattern_excluded", f"extraPaths entry {raw!r} is a glob: OpenClaw takes it as a literal "
                                                 f"path, {what}")
    return scan.finish(t0)


# ---------------------------------------------------------------------------------------------------
# compare disk with the index (hash only what changed)
# ---------------------------------------------------------------------------------------------------

class Change(_M):
    """One difference the index does not reflect. ``kind``: ``new`` (on disk, not indexed), ``changed``
    (content hash differs), ``deleted`` (indexed, gone from disk: a ghost), ``unreadable`` (its mtime says it
    is not what the index holds, and it cannot be read — qmd 2.8.3 then prints ``Skipped unreadable file:
    <path> (EACCES)`` and keeps the old row, so no update can ever catch up; ``evidence`` has the error, mode
    and owner). ``at`` (UTC) is the file's mtime, or for ``deleted`` the mtime of the nearest existing parent
    dir."""

    rel: str
    kind: Literal["new", "changed", "deleted", "unreadable"]
    at: datetime
    evidence: str
    #: ``unreadable`` only: another user owns the file (a chmod by this user cannot fix it; a chown can)
    foreign: bool = False


class Comparison(_M):
    """Disk versus index for one engine at ``checked_at``.

    ``matched`` files agree with the index (``hashed`` of them had to be read); ``changes`` lists every
    unreflected change (oldest first). ``last_proven_current`` and ``method`` feed the receipt's
    :class:`~clawprobe.core.receipt.Freshness`; ``None`` when nothing could be proven (partial scan, no index).
    """

    engine: Engine
    checked_at: datetime
    matched: int = 0
    hashed: int = 0
    changes: list[Change] = Field(default_factory=list)
    last_proven_current: datetime | None = None
    method: str | None = None
    partial: bool = False
    detail: str | None = None


def content_hash(path: str) -> tuple[str | None, bool]:
    """``(sha256 hex of the file text, whitespace_only)`` the way qmd and OpenClaw hash it (the file read
    as UTF-8 — invalid bytes replaced — then hashed as UTF-8); ``(None, False)`` when unreadable."""
    digest, blank, _ = hash_file(path)
    return digest, blank


HASH_CHUNK_BYTES = 1024 * 1024  # a note is hashed in pieces: a 1 GB note costs 1 MiB, not 1 GB (+ its text)


def hash_file(path: str) -> tuple[str | None, bool, str | None]:
    """:func:`content_hash` plus why a file could not be read: ``(None, False, "Permission denied (mode
    0000, owner uid 0; this process uid 1000)")``. A file that vanished since the scan gives
    ``(None, False, None)`` (it is judged again on the next scan, as a ghost or not at all).

    Streamed: the file is read in :data:`HASH_CHUNK_BYTES` pieces, hashed and decoded incrementally, so
    memory stays bounded whatever its size. Valid UTF-8 hashes its bytes; otherwise a second pass hashes
    the text with invalid bytes replaced (what qmd and OpenClaw hash then)."""
    try:
        digest, blank, valid = _hash_pass(path, strict=True)
        if not valid:
            digest, blank, _ = _hash_pass(path, strict=False)
    except FileNotFoundError:
        return None, False, None
    except OSError as e:
        mode = owner_mode(path, follow=False)
        return None, False, f"{e.strerror or type(e).__name__}" + (f" ({mode})" if mode else "")
    return digest, blank, None


def _hash_pass(path: str, *, strict: bool) -> tuple[str, bool, bool]:
    """One streamed pass: ``(sha256 hex, whitespace_only, valid_utf8)``. ``strict``: hash the raw bytes and
    stop at the first invalid UTF-8 (``valid_utf8`` False); else hash the text with invalid bytes replaced."""
    h = hashlib.sha256()
    dec = codecs.getincrementaldecoder("utf-8")("strict" if strict else "replace")
    blank = True
    with open_regular(path) as f:
        while True:
            chunk = f.read(HASH_CHUNK_BYTES)
            final = not chunk
            try:
                text = dec.decode(chunk, final=final)
            except UnicodeDecodeError:
                return h.hexdigest(), False, False
            h.update(chunk if strict else text.encode("utf-8"))
            blank = blank and not text.strip(_JS_SPACE)
            if final:
                return h.hexdigest(), blank, True


def _unreadable(cmp: Comparison, f: DiskFile, error: str, engine: str) -> None:
    cmp.changes.append(Change(rel=f.rel, kind="unreadable", at=_dt_ns(f.mtime_ns), foreign=_foreign(f.abs_path),
                              evidence=f"{error}: {engine} cannot read it, so no update can index it"))


def _foreign(path: str) -> bool:
    """Whether another user owns ``path`` (lstat; ``False`` when it cannot be stat-ed)."""
    try:
        return os.lstat(path).st_uid != os.geteuid()
    except OSError:
        return False


def _denied_indexed(cmp: Comparison, f: DiskFile) -> None:
    """A builtin source the index holds as it is on disk, that this user can no longer read: OpenClaw's sync
    opens every memory file and stops at the first it cannot (2026.7.35 and 2026.9.6 measured: ``sync failed
    (search): Error: EACCES: permission denied, open '…'``, nothing else indexed from then on — breaker round 7,
    w17). Dated by the
    file's ctime (when its mode or owner last changed), not its mtime."""
    try:
        st = os.lstat(f.abs_path)
    except OSError:
        return
    mode = owner_mode(f.abs_path, follow=False) or ""
    cmp.changes.append(Change(
        rel=f.rel, kind="unreadable", at=_dt_ns(max(st.st_ctime_ns, f.mtime_ns)), foreign=st.st_uid != os.geteuid(),
        evidence=f"Permission denied ({mode}): indexed, but OpenClaw's sync stops at a file it cannot read, so "
                 "no later change to any memory file is indexed"))


def _dt_ns(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _dt_ms(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1e3, tz=UTC)


def _parent_mtime(abs_path: str) -> datetime | None:
    p = os.path.dirname(abs_path)
    while p and p != os.path.dirname(p):
        try:
            return _dt_ns(os.stat(p).st_mtime_ns)
        except OSError:
            p = os.path.dirname(p)
    return None


def _finish(cmp: Comparison, scan: DiskScan, now: datetime, total: int) -> Comparison:
    return finish_comparison(cmp, now, total, scan.cap_detail if scan.capped else None)


FUTURE_SLACK_S = 5.0  #: an mtime up to this far ahead of the check is clock noise (counted as now)


def finish_comparison(cmp: Comparison, now: datetime, total: int, cap_detail: str | None = None,
                      how: str = "") -> Comparison:
    """Sort ``cmp.changes`` and set ``last_proven_current``/``method``/``partial`` (``cap_detail``: why
    the scan stopped early, ``None`` when complete; ``how`` is appended to the method text).
    ``last_proven_current`` is the oldest unreflected change's mtime, never later than ``now``; when even
    the oldest lies more than :data:`FUTURE_SLACK_S` ahead, its age is unknown and nothing is proven."""
    cmp.changes.sort(key=lambda c: c.at)
    cmp.partial = cap_detail is not None
    if cmp.changes:
        first = cmp.changes[0]
        cmp.method = (f"disk vs index: {len(cmp.changes)} change(s) the index does not reflect, oldest "
                      f"{first.kind} {first.rel} at {first.at.isoformat(timespec='seconds')}{how}")
        if first.at <= now + timedelta(seconds=FUTURE_SLACK_S):
            cmp.last_proven_current = min(first.at, now)
        else:  # a clock ahead, `touch -d`, a copied tree: since when the index lags is unknown, so nothing is proven
            cmp.method += "; that mtime is in the future, so the age of the change is unknown"
    elif cap_detail is not None:
        cmp.method = f"partial scan ({cap_detail}): nothing proven"
    else:
        cmp.last_proven_current = now
        cmp.method = f"disk matches index ({total} files, {cmp.hashed} hashed){how}"
    if cap_detail is not None:
        cmp.detail = f"scan {cap_detail}; deleted files cannot be told from unscanned ones"
    return cmp


def _judge(cmp: Comparison, f: DiskFile, indexed_hash: str | None, digest: str | None, new_evidence: str,
           mtime_kept: bool = False) -> None:
    """Record one hashed file: ``new`` (not indexed), ``changed`` (hash differs) or matched. A change is dated by the
    file's mtime — or, when that mtime is the one the index recorded (``mtime_kept``: an edit that put it back), by
    its ctime, the only time the edit left."""
    if indexed_hash is None:
        cmp.changes.append(Change(rel=f.rel, kind="new", at=_dt_ns(f.mtime_ns), evidence=new_evidence))
    elif digest != indexed_hash:
        kept = "; its mtime is the indexed one (put back after the edit): dated by its ctime" if mtime_kept else ""
        cmp.changes.append(Change(rel=f.rel, kind="changed", at=_dt_ns(max(f.ctime_ns, f.mtime_ns) if mtime_kept
                                                                        else f.mtime_ns),
                                  evidence=f"sha256 {str(digest)[:12]} on disk ≠ {indexed_hash[:12]} indexed{kept}"))
    else:
        cmp.matched += 1


def changed_since(f: DiskFile, indexed_at: datetime | None) -> bool:
    """Whether the file's inode changed after the index took in its current content (``ctime`` later than
    ``indexed_at``; pure). An edit that puts the mtime back (``touch -r``, ``cp -p``, ``rsync -a``, a sync tool)
    leaves the mtime — and often the size — the index recorded, but not the ctime, which no user call can set:
    such a file is hashed instead of matched by its times (breaker round 15, A3/B7: the index held the old text and
    the check said "disk matches index", healthy past the lease). ``False`` when the ingest time is unknown."""
    return indexed_at is not None and f.ctime_ns > indexed_at.timestamp() * 1e9 + 1e6  # + 1 ms: the stored precision


def _qmd_same_mtime(f: DiskFile, doc: IndexedDoc | None) -> bool:
    """Whether the file's mtime equals its document's ``documents.modified_at`` (±1 ms; pure)."""
    if doc is None or doc.modified_at is None:
        return False
    return abs(int(doc.modified_at.timestamp() * 1000 + 0.5) - f.mtime_ns // 1_000_000) <= 1


def _builtin_same_mtime(f: DiskFile, row: BuiltinSourceRow | None) -> bool:
    """Whether the file's mtime equals its builtin ``files`` row's (< 1 ms; pure)."""
    return row is not None and abs(row.mtime_ms - f.mtime_ns / 1e6) < 1.0


def qmd_mtime_matches(f: DiskFile, doc: IndexedDoc | None) -> bool:
    """Whether the file's mtime equals its document's ``documents.modified_at`` (±1 ms) and it did not change
    after its content was ingested (:func:`changed_since` ``content.created_at``): then it is matched without
    being read (pure)."""
    return _qmd_same_mtime(f, doc) and not changed_since(f, doc.ingested_at if doc is not None else None)


def judge_qmd_file(cmp: Comparison, f: DiskFile, doc: IndexedDoc | None) -> None:
    """Compare one scanned file with its QMD document (``None``: not indexed). A file whose mtime equals
    ``documents.modified_at`` (:func:`qmd_mtime_matches`) is matched without reading it; any other is hashed."""
    if qmd_mtime_matches(f, doc):
        cmp.matched += 1
        return
    digest, blank, error = hash_file(f.abs_path)
    cmp.hashed += 1
    if error is not None:
        if _qmd_same_mtime(f, doc):  # its times are the indexed ones; unreadable since (a chmod/chown moved the ctime):
            cmp.matched += 1  # qmd keeps its row as it is — the scan's own finding warns that its next edit is lost
        else:
            _unreadable(cmp, f, error, "qmd")
        return
    if digest is None:  # vanished since the scan
        return
    if blank:
        if doc is not None:  # qmd skips whitespace-only files, so only an indexed one is a change
            cmp.changes.append(Change(rel=f.rel, kind="changed", at=_dt_ns(f.mtime_ns),
                                      evidence="now whitespace-only; qmd drops it on the next update"))
        return
    _judge(cmp, f, doc.hash if doc else None, digest, f"not in collection {f.collection} of the index",
           _qmd_same_mtime(f, doc))


def qmd_ghost(workspace: str, root: str, coll: str, path: str, now: datetime) -> Change:
    """The ``deleted`` change for an indexed document of ``coll`` (rooted at ``root``) missing from disk."""
    abs_p = os.path.join(root, path)
    return Change(rel=rel_to(workspace, abs_p), kind="deleted", at=_parent_mtime(abs_p) or now,
                  evidence=f"indexed in {coll} but gone from disk (ghost content)")


def compare_qmd(scan: DiskScan, docs: Sequence[IndexedDoc], now: datetime) -> Comparison:
    """INTERPRET (reads only the files whose mtime differs): QMD index documents versus a :func:`scan_qmd`."""
    cmp = Comparison(engine="qmd", checked_at=now)
    unseen: dict[tuple[str | None, str], IndexedDoc] = {(d.collection, d.path): d for d in docs}
    matched = 0
    for f in scan.files:  # a scan holds each (collection, key) once: what is left unseen is not on disk
        doc = unseen.pop((f.collection, f.key), None)
        if qmd_mtime_matches(f, doc):
            matched += 1
        else:
            judge_qmd_file(cmp, f, doc)
    cmp.matched += matched
    if not scan.capped:
        for (coll, path) in unseen:
            if coll in scan.roots:
                cmp.changes.append(qmd_ghost(scan.workspace, scan.roots[coll], coll, path, now))
    return _finish(cmp, scan, now, len(scan.files))


class BuiltinSourceRow(_M):
    """One ``memory_index_sources``/``files`` row: workspace-relative ``path``, ``hash`` (sha256 of the
    text), ``mtime_ms`` (float ms since epoch) and ``size`` (bytes)."""

    path: str
    source: str = "memory"
    hash: str
    mtime_ms: float
    size: int


def compare_builtin(scan: DiskScan, sources: Sequence[BuiltinSourceRow], now: datetime,
                    indexed_at: Mapping[str, datetime] | None = None) -> Comparison:
    """INTERPRET: builtin index sources (``source='memory'``) versus a :func:`scan_builtin`. A file whose size and
    mtime equal its row's is matched without being read, unless it changed after its chunks were written
    (``indexed_at``: path → ``MAX(chunks.updated_at)``, :func:`changed_since`)."""
    cmp = Comparison(engine="builtin", checked_at=now)
    indexed = {s.path: s for s in sources if s.source == "memory"}
    when = indexed_at or {}
    denied = set(scan.denied)
    for f in scan.files:
        row = indexed.get(f.key)
        same = row is not None and row.size == f.size and _builtin_same_mtime(f, row)
        digest = error = None
        if not same or changed_since(f, when.get(f.key)):
            digest, _, error = hash_file(f.abs_path)
            cmp.hashed += 1
        if same and (digest is None or error is not None):  # by its times; unreadable since (a chmod moved the ctime)
            if f.abs_path in denied:  # indexed as it is, but OpenClaw's sync stops at it (EACCES)
                _denied_indexed(cmp, f)
            else:
                cmp.matched += 1
        elif error is not None:
            _unreadable(cmp, f, error, "OpenClaw")
        elif digest is not None:
            _judge(cmp, f, row.hash if row else None, digest, "not in the builtin index", _builtin_same_mtime(f, row))
    if not scan.capped:
        disk = {f.key for f in scan.files}
        for path, row in indexed.items():
            if path in disk:
                continue
            abs_p = os.path.normpath(os.path.join(scan.workspace, path))
            cmp.changes.append(Change(rel=path, kind="deleted", at=_parent_mtime(abs_p) or _dt_ms(row.mtime_ms),
                                      evidence="indexed but gone from disk (or now skipped)"))
    return _finish(cmp, scan, now, len(scan.files))


def with_changes(cmp: Comparison, changes: list[Change], now: datetime) -> Comparison:
    """``cmp`` with ``changes`` measured beside the scan (unexported transcripts, notes under a root the index
    has no collection for) among its unreflected ones, its proof re-derived (the oldest change dates it); a
    partial scan stays partial."""
    if not changes:
        return cmp
    partial, detail = cmp.partial, cmp.detail
    cmp.changes += changes
    finish_comparison(cmp, now, cmp.matched)
    cmp.partial, cmp.detail = partial, detail
    return cmp


DETAIL_GROUPS = FRESHNESS_GROUPS  #: the groups of :func:`freshness_detail`, in order: label, the change kinds
GROUP_LISTED = 5


def freshness_detail(changes: Sequence[Change], listed: int = GROUP_LISTED) -> str | None:
    """One line grouping the changes by what they are (pure), e.g. ``unreadable: memory/p.md (Permission
    denied (mode 0000, owner uid 0)); changed since indexed: memory/note.md; new, not indexed: memory/a.md,
    memory/b.md and 3 more``. Each group lists its oldest ``listed`` paths; an unreadable path carries
    its error in parentheses. ``None`` without changes."""
    parts = []
    for label, kinds in DETAIL_GROUPS:
        group = [c for c in changes if c.kind in kinds]
        if not group:
            continue
        names = [f"{c.rel} ({c.evidence.split(':', 1)[0]})" if c.kind == "unreadable" else c.rel
                 for c in group[:listed]]
        more = f" and {len(group) - listed} more" if len(group) > listed else ""
        parts.append(f"{label}: " + ", ".join(names) + more)
    return "; ".join(parts) or None


def to_freshness(cmp: Comparison) -> Freshness:
    """The receipt's :class:`~clawprobe.core.receipt.Freshness` from a comparison. ``stale_reason``: ``unreadable``
    when a file the index does not reflect cannot be read (re-indexing cannot help: its permissions must be
    fixed), else ``ghost_content`` when an indexed file is gone from disk, else ``dirty`` when files changed
    or appeared; the verdict rule decides staleness from the lease. ``detail`` is :func:`freshness_detail`
    (then the scan's cap note, if any). ``unindexed_files`` lists new, changed and unreadable files, oldest
    first."""
    ghosts = [c.rel for c in cmp.changes if c.kind == "deleted"]
    unindexed = [c.rel for c in cmp.changes if c.kind != "deleted"]
    unreadable = [c.rel for c in cmp.changes if c.kind == "unreadable"]
    foreign = any(c.foreign for c in cmp.changes if c.kind == "unreadable")
    reason = "unreadable" if unreadable else "ghost_content" if ghosts else ("dirty" if unindexed else None)
    detail = "; ".join(x for x in (freshness_detail(cmp.changes), cmp.detail) if x) or None
    return Freshness(last_proven_current=cmp.last_proven_current, method=cmp.method,
                     unindexed_files=unindexed[:MAX_FILES_LISTED], ghost_files=ghosts[:MAX_FILES_LISTED],
                     unreadable_files=unreadable[:MAX_FILES_LISTED], unreadable_foreign=foreign,
                     unindexed_count=len(unindexed),
                     ghost_count=len(ghosts), stale_reason=reason, detail=detail)


# ---------------------------------------------------------------------------------------------------
# explainers and bloat
# ---------------------------------------------------------------------------------------------------

class Explainer(_M):
    """Why a path is not indexed by the engine (``tag`` is the canary sub-reason)."""

    tag: Literal["hidden_path", "case_mismatch", "symlink", "pattern_excluded", "not_in_collection", "empty_file",
                 "missing"]
    message: str


def _symlink_in(workspace: str, abs_path: str) -> str | None:
    """The first symlinked component of ``abs_path`` at or below the workspace (``None`` if none)."""
    ws = Path(workspace)
    p = Path(abs_path)
    try:
        parts = p.relative_to(ws).parts
    except ValueError:
        parts = p.parts
        ws = Path(p.anchor)
    cur = ws
    for part in parts:
        cur = cur / part
        if cur.is_symlink():
            return f"{rel_to(workspace, str(cur))} -> {_readlink(str(cur))}"
    return None


def explain_path(path: str, workspace: str, *, engine: Engine, collections: Sequence[QmdCollection] = (),
                 extra_paths: Sequence[str] = (), lowercase_root_indexed: bool = False) -> list[Explainer]:
    """Why ``path`` (workspace-relative or absolute, e.g. the canary) would not be indexed; ``[]`` when it
    would be. Most specific first. Pure apart from ``lstat``/``readlink`` of the path's components."""
    abs_p = path if os.path.isabs(path) else os.path.join(workspace, path)
    rel = rel_to(workspace, abs_p)
    out: list[Explainer] = []
    if engine == "builtin":
        link = _symlink_in(workspace, abs_p)
        if link:
            out.append(Explainer(tag="symlink", message=f"{link}: symlinks are skipped by the builtin scanner"))
    name = os.path.basename(abs_p)
    at_root = os.path.dirname(os.path.normpath(abs_p)) == os.path.normpath(workspace)
    if at_root and name.lower() == "memory.md" and name != "MEMORY.md":
        alt = any(c.pattern == name for c in collections) if engine == "qmd" else lowercase_root_indexed
        if not alt:
            out.append(Explainer(tag="case_mismatch", message=f"{rel} is not MEMORY.md: only MEMORY.md is a root memory file"))
    if engine == "qmd":
        reasons = [_qmd_reason(abs_p, rel, name, c) for c in collections]
        candidates = [r for r in reasons if r is not False]
        explainers = [r for r in candidates if r is not None]
        if len(explainers) < len(candidates):
            pass  # some collection indexes it
        elif explainers:
            out.append(explainers[0])
        elif not any(e.tag == "case_mismatch" for e in out):
            names = ", ".join(dict.fromkeys(f"{c.name} ({c.pattern})" for c in collections)) or "none configured"
            out.append(Explainer(tag="not_in_collection", message=f"{rel} matches no managed collection: {names}"))
    else:
        in_mem = rel.startswith("memory/")
        in_extra = any(_under(abs_p, x if os.path.isabs(x) else os.path.join(workspace, x)) for x in extra_paths)
        if not (rel == "MEMORY.md" or in_mem or in_extra) and not any(e.tag == "case_mismatch" for e in out):
            out.append(Explainer(tag="not_in_collection", message=f"{rel} is not MEMORY.md, under memory/ or an extra path"))
        elif (in_mem or in_extra) and not name.endswith(".md"):
            out.append(Explainer(tag="pattern_excluded", message=f"{rel} is not a .md file"))
    if os.path.lexists(abs_p) and not os.path.islink(abs_p):
        digest, blank = content_hash(abs_p)
        if digest is not None and blank and engine == "qmd":
            out.append(Explainer(tag="empty_file", message=f"{rel} is empty or whitespace-only: qmd skips it"))
    elif not os.path.lexists(abs_p):
        out.append(Explainer(tag="missing", message=f"{rel} does not exist on disk"))
    return out


def _qmd_reason(abs_p: str, rel: str, name: str, c: QmdCollection) -> Explainer | None | Literal[False]:
    """For one collection: ``False`` = its pattern cannot match ``abs_p``; ``None`` = qmd indexes it
    there; an :class:`Explainer` = it matches the pattern but qmd's scanner drops it."""
    link = None
    if _under(abs_p, c.path):  # lexical: symlinks below the collection root are skipped by qmd
        crel = PurePosixPath(os.path.relpath(os.path.abspath(abs_p), os.path.abspath(c.path)))
        link = _symlink_in(c.path, abs_p)
    else:  # the root itself may be a symlink: qmd collection add stores its resolved path
        real_dir = os.path.realpath(os.path.dirname(abs_p))
        if not _under(real_dir, os.path.realpath(c.path)):
            return False
        crel = PurePosixPath(os.path.relpath(real_dir, os.path.realpath(c.path))) / name
    posix = crel.as_posix()
    pats = [p.strip() for p in c.pattern.split(",") if p.strip()]
    if not any(wglob.globmatch(posix, p, flags=_GLOB_FLAGS | wglob.DOTGLOB) for p in pats):
        return False
    if any(p.startswith(".") for p in crel.parts):
        return Explainer(tag="hidden_path", message=f"{rel} is under a dot-path: qmd skips hidden files and dirs")
    bad = QMD_EXCLUDED_DIRS.intersection(crel.parts[:-1])
    if bad:
        return Explainer(tag="pattern_excluded", message=f"{rel} is under {sorted(bad)[0]}/, which qmd never indexes")
    if link:
        return Explainer(tag="symlink", message=f"{link}: qmd skips symlinks below a collection root")
    if any(wglob.globmatch(posix, p, flags=_GLOB_FLAGS | wglob.DOTGLOB) for p in c.ignore):
        return Explainer(tag="pattern_excluded", message=f"{rel} matches an ignore pattern of collection {c.name}")
    return None


def _under(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:
        return False


def dependency_bloat(paths: Sequence[str], source: str) -> Finding | None:
    """``index_bloat`` when dependency/vendor dirs dominate the indexed paths (RW31), with the biggest
    groups and their shares (pure; ``paths`` as the index stores them)."""
    if len(paths) < BLOAT_MIN_FILES:
        return None
    groups: Counter[str] = Counter()
    for p in paths:
        parts = PurePosixPath(p).parts
        for i, part in enumerate(parts[:-1]):
            if part in DEPENDENCY_DIRS:
                groups["/".join(parts[: i + 1])] += 1
                break
    dep = sum(groups.values())
    if dep / len(paths) < BLOAT_SHARE:
        return None
    top = ", ".join(f"{g}/ {n} ({n / len(paths):.0%})" for g, n in groups.most_common(3))
    return Finding(tag="index_bloat", source=source, message=(
        f"{dep} of {len(paths)} indexed files ({dep / len(paths):.0%}) come from dependency dirs: {top}; "
        "narrow the extra path or its pattern (no rebuild needed)"))


def scan_findings(scan: DiskScan) -> list[Finding]:
    """Warnings about the scan itself: a capped scan (the tree is too large to prove); on QMD, files this user
    may not read (:attr:`DiskScan.denied`) whose index rows still match — qmd skips them on every update
    ("Skipped unreadable file … (EACCES)"), so their next edit is never indexed (the builtin engine's sync stops
    at them: a stale index, judged by :func:`compare_builtin`)."""
    out = []
    if scan.capped:
        out.append(Finding(tag="scan_capped", source="workspace scan",
                           message=f"workspace scan {scan.cap_detail} ({scan.entries_seen} entries): freshness is "
                                   "unproven beyond it"))
    if scan.denied and scan.engine == "qmd":
        names = ", ".join(rel_to(scan.workspace, p) for p in scan.denied[:5])
        more = f" and {len(scan.denied) - 5} more" if len(scan.denied) > 5 else ""
        out.append(Finding(tag="unreadable", source="workspace scan", message=(
            f"{len(scan.denied)} memory file(s) this user cannot read: {names}{more} "
            f"({owner_mode(scan.denied[0], follow=False) or 'mode unknown'}) — qmd skips them on every update and "
            f"keeps their old rows, so their next edit is never indexed; make them readable by the gateway's user")))
    return out

