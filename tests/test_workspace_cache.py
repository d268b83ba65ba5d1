"""The watcher-driven workspace cache answers exactly what a full scan + compare answers.

Real files, real inotify events (watchfiles), a QMD index built from the files' own hashes and mtimes
(what ``qmd update`` stores; the real-qmd path is covered in test_stores_qmd_real.py). After every kind of
change — edit, new file, new dir, delete, dir delete and rename, hidden and excluded dirs, empty file,
symlink — the cached comparison equals a fresh :func:`scan_qmd` + :func:`compare_qmd`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import watchfiles

from clawprobe.core.probes.coverage import from_scan
from clawprobe.core.probes.models import EmbedLock
from clawprobe.core.probes.qmd_fingerprint import ModelChoice
from clawprobe.core.probes.qmd_index import IndexedDoc, QmdIndexFacts, QmdPaths
from clawprobe.core.probes.sqlite_ro import SqliteOpen
from clawprobe.core.probes.workspace import compare_qmd, default_qmd_collections, scan_qmd
from clawprobe.core.probes.workspace_cache import BURST_PATHS, MAX_DIRTY, WorkspaceCache
from clawprobe.tui.watch import Target, _Relevant

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def index_of(ws: Path, collections) -> QmdIndexFacts:
    """Facts of an index that holds every file qmd would index now (hash + mtime as qmd stores them)."""
    scan = scan_qmd(collections, str(ws))
    docs = [IndexedDoc(collection=f.collection, path=f.key, hash=hashlib.sha256(Path(f.abs_path).read_bytes()).hexdigest(),
                       modified_at=datetime.fromtimestamp(f.mtime_ns // 1_000_000 / 1000, tz=UTC))
            for f in scan.files]
    paths = QmdPaths(agent_id="main", xdg_config="x", xdg_cache="x", yml="x", db="x", lock="x", models_dir="x")
    return QmdIndexFacts(paths=paths, open=SqliteOpen(path="x", state="ok"), yml={"path": "x"}, docs=docs,
                         embed_model=ModelChoice(model="m", source="qmd default", fingerprint="f"),
                         lock=EmbedLock(path="x", exists=False), documents_active=len(docs))


def summary(cmp) -> tuple:
    return (cmp.matched, sorted((c.rel, c.kind) for c in cmp.changes), cmp.last_proven_current is not None)


def coverage_summary(rows) -> list[tuple]:
    """Per-root coverage without the choice of its first missing examples (changes of one mtime may come in
    another order) nor the order of the skipped notes (a cache lists directories in another order)."""
    return [(c.source, c.expected, c.indexed, c.missing, len(c.missing_examples), c.skipped, sorted(c.skipped_notes))
            for c in rows]


class Events:
    """A real watchfiles watcher on ``root`` in a thread, with the dashboard's own event filter
    (:class:`clawprobe.tui.watch._Relevant` for a memory target); :meth:`after` runs a change and returns the paths."""

    def __init__(self, root: Path) -> None:
        self.root, self.got, self.stop = root, [], threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "watcher did not start"

    def _run(self) -> None:
        target = Target(agent_id="main", path=self.root, kind="memory", exists=True, is_dir=True)
        for changes in watchfiles.watch(self.root, stop_event=self.stop, debounce=100, step=20, rust_timeout=100,
                                        yield_on_timeout=True, watch_filter=_Relevant([target])):
            self.ready.set()
            self.got.extend(p for _c, p in changes)

    def after(self, change) -> list[str]:
        self.got.clear()
        change()
        last, quiet = len(self.got), time.monotonic()
        while time.monotonic() - quiet < 0.6:
            time.sleep(0.05)
            if len(self.got) != last:
                last, quiet = len(self.got), time.monotonic()
        return list(self.got)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "ws"
    (w / "memory" / "a" / "deep").mkdir(parents=True)
    (w / "memory" / "b").mkdir()
    (w / "MEMORY.md").write_text("# root\n")
    for i in range(5):
        (w / "memory" / "a" / f"n{i}.md").write_text(f"# a{i}\n")
        (w / "memory" / "b" / f"n{i}.md").write_text(f"# b{i}\n")
    (w / "memory" / "a" / "deep" / "d.md").write_text("# deep\n")
    # An hour old, as a workspace indexed before it is edited is: an edit made within the same
    # filesystem timestamp tick (a few ms) as the file's creation would keep its mtime, and the
    # comparison would match it on mtime without reading it (clawprobe.core.probes.workspace.judge_qmd_file).
    hour_ago = time.time() - 3600
    for p in w.rglob("*"):
        os.utime(p, (hour_ago, hour_ago), follow_symlinks=False)
    return w


def _write(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _swap(x: Path, y: Path) -> None:
    tmp = x.with_name("swap-tmp")
    x.rename(tmp)
    y.rename(x)
    tmp.rename(y)


def _move_in(mem: Path, dirname: str, name: str) -> None:
    staged = mem.parent / "staging" / dirname
    _write(staged / name, "# staged elsewhere, moved in whole\n")
    staged.rename(mem / dirname)


def _edit_via_link(note: Path) -> None:
    """Append through a hard link outside the watched memory/ dir (made before the first scan, as a
    backup tool would): inotify reports nothing, the cache re-checks hard-linked files by lstat."""
    with open(note.parents[2] / "outside-link.md", "a") as f:
        f.write("edited through a hard link\n")


def _link_inside_then_edit(note: Path, link: Path) -> None:
    """A new hard link inside the tree (the watcher reports it, but not that ``note`` gained a link),
    then an edit through it: ``note`` changed too."""
    os.link(note, link)
    time.sleep(0.4)  # its own batch: the cache sees the new link before the edit
    with open(link, "a") as f:
        f.write("edited through the new link\n")


RESCANS = {"hard link made inside, then edited"}  # a new in-tree link: the other name was scanned unlinked
CHANGES = [
    ("edit", lambda w: (w / "memory/a/n1.md").write_text("# edited\n")),
    ("hard link edited outside", lambda w: _edit_via_link(w / "memory/a/n4.md")),
    ("hard link made inside, then edited", lambda w: _link_inside_then_edit(w / "memory/b/n0.md", w / "memory/a/l0.md")),
    ("new file", lambda w: _write(w / "memory/b/new.md", "# new\n")),
    ("new dir tree", lambda w: (_write(w / "memory/c/x/y.md", "# y\n"), _write(w / "memory/c/z.md", "# z\n"))),
    ("delete file", lambda w: (w / "memory/b/n2.md").unlink()),
    ("delete dir", lambda w: shutil.rmtree(w / "memory/a/deep")),
    ("rename dir", lambda w: (w / "memory/b").rename(w / "memory/b2")),
    ("hidden dir", lambda w: _write(w / "memory/.hidden/h.md", "# h\n")),
    ("excluded dir", lambda w: _write(w / "memory/node_modules/p/readme.md", "# p\n")),
    ("pycache dir", lambda w: _write(w / "memory/__pycache__/x.md", "# x\n")),
    ("empty file", lambda w: (w / "memory/a/empty.md").write_text("")),
    ("blank file", lambda w: (w / "memory/a/n3.md").write_text("  \n")),
    ("symlink", lambda w: (w / "memory/a/link.md").symlink_to(w / "memory/a/n0.md")),
    ("dir swap by renames", lambda w: _swap(w / "memory/a", w / "memory/c")),
    ("dir named like a swap file", lambda w: _move_in(w / "memory", "plans.swp", "p.md")),
    ("root MEMORY.md edit", lambda w: (w / "MEMORY.md").write_text("# root 2\n")),
    ("MEMORY.md deleted", lambda w: (w / "MEMORY.md").unlink()),
]


def test_every_change_kind_matches_a_full_scan(ws):
    os.link(ws / "memory/a/n4.md", ws / "outside-link.md")
    cols = default_qmd_collections("main", str(ws))
    facts = index_of(ws, cols)
    cache = WorkspaceCache()
    cache.watch([str(ws / "memory")], grace_s=0)
    events = Events(ws / "memory")
    try:
        first, scan = cache.compare_qmd(cols, str(ws), facts, NOW)
        assert scan is not None and cache.full_scans == 1
        assert summary(first) == (12, [], True)
        for name, change in CHANGES:
            paths = events.after(lambda change=change: change(ws))
            if name.startswith("root") or name.startswith("hard link"):
                assert paths == [] or all("memory" in p for p in paths)  # not under the watched memory/
            cache.mark(paths)
            cached, scan = cache.compare_qmd(cols, str(ws), facts, NOW)
            full_scan = scan_qmd(cols, str(ws))
            full = compare_qmd(full_scan, facts.docs, NOW)
            if name in RESCANS:
                assert scan is not None, f"{name}: only a full scan is sure here"
            else:
                assert scan is None, f"{name}: the cache should have answered"
                assert "watcher-driven" in cached.method
                # the coverage the dashboard shows (and unsearchable_notes judges) is the full scan's too
                assert coverage_summary(cache.coverage(cached)) == coverage_summary(from_scan(full_scan, full)), name
            assert summary(cached) == summary(full), name
        assert cache.full_scans == 1 + len(RESCANS)
        kinds = dict((rel, kind) for rel, kind in summary(cached)[1])
        # a and c were swapped: a's indexed notes are gone from a/ and new (unindexed) under c/
        assert kinds["memory/a/n1.md"] == "deleted" and kinds["memory/c/n1.md"] == "new"
        assert kinds["memory/a/x/y.md"] == "new" and kinds["memory/plans.swp/p.md"] == "new"
        assert kinds["memory/b/n2.md"] == "deleted" and kinds["memory/a/deep/d.md"] == "deleted"
        assert kinds["memory/__pycache__/x.md"] == "new" and kinds["MEMORY.md"] == "deleted"
        assert "memory/.hidden/h.md" not in kinds and "memory/c/empty.md" not in kinds
        assert "memory/c/n3.md" not in kinds  # whitespace-only and not indexed there: qmd skips it
    finally:
        events.close()


def test_a_new_index_read_recompares_without_rescanning(ws):
    cols = default_qmd_collections("main", str(ws))
    cache = WorkspaceCache()
    cache.watch([str(ws / "memory")], grace_s=0)
    old = index_of(ws, cols)
    (ws / "memory/a/n1.md").write_text("# edited, and the watcher saw it\n")
    cache.compare_qmd(cols, str(ws), old, NOW)
    cache.mark([str(ws / "memory/a/n1.md")])
    stale, _ = cache.compare_qmd(cols, str(ws), old, NOW)
    assert [c.kind for c in stale.changes] == ["changed"]
    updated, scan = cache.compare_qmd(cols, str(ws), index_of(ws, cols), NOW)  # qmd update ran
    assert scan is None and updated.changes == [] and cache.full_scans == 1


def test_no_watcher_grace_age_and_r_force_full_scans(ws):
    cols = default_qmd_collections("main", str(ws))
    facts = index_of(ws, cols)
    t = [1000.0]
    cache = WorkspaceCache(max_age_s=600, clock=lambda: t[0])
    for _ in range(2):  # no watcher: every probe scans
        assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None
    cache.watch([str(ws / "memory")], grace_s=1.0)
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None  # inside the grace: used, not kept
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None
    t[0] += 1.5
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None  # kept from here
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is None
    t[0] += 601
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None  # the safety-net rescan
    cache.invalidate()
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None
    cache.watch([str(ws / "elsewhere")], grace_s=0)  # memory/ not watched: never cached
    for _ in range(2):
        assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None


def test_symlinked_workspace_events_map_to_the_real_root(tmp_path, ws):
    link = tmp_path / "ws-link"
    link.symlink_to(ws)
    cols = default_qmd_collections("main", str(link))
    facts = index_of(link, cols)
    cache = WorkspaceCache()
    cache.watch([str(link / "memory")], grace_s=0)
    cache.compare_qmd(cols, str(link), facts, NOW)
    (ws / "memory/b/n4.md").write_text("# changed through the real path\n")
    cache.mark([str(link / "memory/b/n4.md")])  # the watcher reports the path it was given
    cached, scan = cache.compare_qmd(cols, str(link), facts, NOW)
    assert scan is None and [c.kind for c in cached.changes] == ["changed"]
    assert summary(cached) == summary(compare_qmd(scan_qmd(cols, str(link)), facts.docs, NOW))


def test_event_storm_and_a_huge_new_subtree_fall_back_to_a_bounded_full_scan(ws):
    cols = default_qmd_collections("main", str(ws))
    facts = index_of(ws, cols)
    cache = WorkspaceCache()
    cache.watch([str(ws / "memory")], grace_s=0)
    cache.compare_qmd(cols, str(ws), facts, NOW)
    cache.mark([str(ws / "memory" / f"gone-{i}.md") for i in range(BURST_PATHS)])  # one burst: events may be lost
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None and cache.full_scans == 2
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is None
    for start in range(0, MAX_DIRTY + 1, BURST_PATHS - 1):  # many small batches before one probe
        cache.mark([str(ws / "memory" / f"gone-{i}.md") for i in range(start, start + BURST_PATHS - 1)])
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is not None and cache.full_scans == 3
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is None
    for i in range(30):  # a new dir with more files than the bound: the re-list stops, a full scan says why
        _write(ws / "memory" / "bulk" / f"n{i}.md", f"# {i}\n")
    cache.mark([str(ws / "memory" / "bulk")])
    cmp, scan = cache.compare_qmd(cols, str(ws), facts, NOW, max_files=25)
    assert scan is not None and scan.capped and cmp.partial and "25 files" in scan.cap_detail
    assert cache.compare_qmd(cols, str(ws), facts, NOW, max_files=25)[1] is not None  # capped: never cached


@pytest.mark.parametrize("glob_path", ["kb/*", "kb/{one,two}"])
def test_a_glob_collection_path_keeps_its_skipped_notes_in_the_cached_coverage(ws, glob_path):
    """A QMD collection whose path holds a glob is taken literally (OpenClaw makes an empty dir of that name): the
    notes the glob names are ``glob_path`` skips in a full scan (breaker round 24). The cache answered the next
    probes from its directories' recorded skips, which never held them, so the dashboard dropped the skip — and
    with it ``unsearchable_notes`` — after its first scan. The cached coverage equals the full scan's."""
    from clawprobe.core.probes.qmd_index import QmdCollection

    for d in ("one", "two"):
        _write(ws / "kb" / d / "n.md", f"# {d}\n")
    (ws / glob_path).mkdir()  # what OpenClaw's first run made
    cols = [*default_qmd_collections("main", str(ws)), QmdCollection(name="kb", path=str(ws / glob_path), pattern="**/*.md")]
    facts = index_of(ws, cols)
    cache = WorkspaceCache()
    cache.watch([str(ws / "memory"), str(ws / glob_path)], grace_s=0)
    cache.compare_qmd(cols, str(ws), facts, NOW)
    cached, scan = cache.compare_qmd(cols, str(ws), facts, NOW)
    full_scan = scan_qmd(cols, str(ws))
    want = coverage_summary(from_scan(full_scan, compare_qmd(full_scan, facts.docs, NOW)))
    assert any(row[0] == "kb" and row[5] == {"glob_path": 2} for row in want), want
    assert scan is None and coverage_summary(cache.coverage(cached)) == want
