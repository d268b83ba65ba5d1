"""Workspace scanning per engine, disk-vs-index comparison and explainers, on real files in temp dirs.

The engine rules themselves are proven against the real programs in test_stores_qmd_real.py and
test_stores_openclaw_real.py (the scanner's file set equals what the real index holds); here the edges:
caps, symlink loops, names that are not UTF-8, hashing only what changed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.probes.qmd_index import IndexedDoc, QmdCollection
from clawprobe.core.probes.workspace import (
    BuiltinSourceRow,
    compare_builtin,
    compare_qmd,
    content_hash,
    default_qmd_collections,
    dependency_bloat,
    explain_path,
    indexes_user_md,
    scan_builtin,
    scan_findings,
    scan_qmd,
    to_freshness,
)

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _w(root: Path, rel: str, text: str = "# note\n\nbody\n") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    _w(w, "MEMORY.md")
    _w(w, "memory/a.md")
    _w(w, "memory/sub/b.md")
    _w(w, "memory/.hidden/h.md")
    _w(w, "memory/node_modules/pkg/README.md")
    _w(w, "memory/empty.md", "")
    _w(w, "memory/blank.md", "  \n\ufeff\n")
    _w(w, "memory/notes.txt")
    return w


def _doc(coll: str, path: str, abs_p: Path) -> IndexedDoc:
    ms = abs_p.stat().st_mtime_ns // 1_000_000
    return IndexedDoc(collection=coll, path=path, hash=hashlib.sha256(abs_p.read_bytes()).hexdigest(),
                      modified_at=datetime.fromtimestamp(ms / 1000, tz=UTC))


def test_qmd_scan_follows_qmds_rules(ws):
    scan = scan_qmd(default_qmd_collections("main", str(ws)), str(ws))
    keys = sorted((f.collection, f.key) for f in scan.files)
    assert keys == [("memory-dir-main", "a.md"), ("memory-dir-main", "blank.md"), ("memory-dir-main", "sub/b.md"),
                    ("memory-root-main", "MEMORY.md")]
    reasons = {s.rel: s.reason for s in scan.skipped}
    assert reasons["memory/.hidden"] == "hidden_path" and reasons["memory/node_modules"] == "excluded_dir"
    assert reasons["memory/empty.md"] == "empty_file" and not scan.capped


def test_builtin_scan_follows_its_rules(ws, tmp_path):
    extra = tmp_path / "extra"
    _w(extra, "e.md")
    _w(extra, "x.txt")
    (ws / "memory.md").write_text("# lower\n")
    (ws / "memory" / "link.md").symlink_to(extra / "e.md")
    scan = scan_builtin(str(ws), [str(extra)])
    keys = sorted(f.key for f in scan.files)
    assert keys == ["../extra/e.md", "MEMORY.md", "memory/.hidden/h.md", "memory/a.md", "memory/blank.md",
                    "memory/empty.md", "memory/node_modules/pkg/README.md", "memory/sub/b.md"]
    reasons = {s.rel: s.reason for s in scan.skipped}
    assert reasons == {"memory.md": "case_mismatch", "memory/link.md": "symlink"}
    _w(ws, "memory/sub/.openclaw-repair/root-memory/MEMORY.md")  # OpenClaw's own backups: never descended
    assert "memory/sub/.openclaw-repair/root-memory/MEMORY.md" not in {f.key for f in scan_builtin(str(ws)).files}
    older = scan_builtin(str(ws), lowercase_root_indexed=True)
    assert "memory.md" in {f.key for f in older.files}


@pytest.mark.parametrize("kind", ["file", "symlink", "dir"])
def test_user_md_is_a_root_only_where_the_build_indexes_it(ws, tmp_path, kind):
    target = _w(tmp_path / "elsewhere", "USER.md")
    if kind == "file":
        (ws / "USER.md").write_text("# User\n\nprefers tea\n")
    elif kind == "symlink":
        (ws / "USER.md").symlink_to(target)
    else:
        (ws / "USER.md").mkdir()
    now_builds = scan_builtin(str(ws), user_md=indexes_user_md("OpenClaw 2026.9.6 (abc1234)", ()))
    assert ("USER.md" in {f.key for f in now_builds.files}) is (kind == "file")
    assert ("USER.md" in now_builds.roots) is (kind == "file")
    assert not any(s.rel == "USER.md" for s in now_builds.skipped), "OpenClaw passes over it without a word"
    qmd_era = scan_builtin(str(ws), user_md=indexes_user_md("2026.7.35", ["USER.md"]))
    assert "USER.md" not in {f.key for f in qmd_era.files}


def test_symlink_loops_and_bad_names_are_safe(ws):
    (ws / "memory" / "loop").symlink_to(ws / "memory")
    (ws / "memory" / "self.md").symlink_to(ws / "memory" / "self.md")
    os.close(os.open(os.path.join(os.fsencode(ws), b"memory", b"caf\xe9-latin1.md"), os.O_CREAT | os.O_WRONLY))
    for scan in (scan_qmd(default_qmd_collections("main", str(ws)), str(ws)), scan_builtin(str(ws))):
        reasons = [s.reason for s in scan.skipped]
        assert reasons.count("symlink") == 2 and "bad_name" in reasons
        scan.model_dump_json()  # no lone surrogates leak into the JSON


def test_a_note_whose_name_is_not_utf8_counts_as_skipped_by_both_engines(ws):
    """OpenClaw 2026.9.6 and qmd 2.8.3 ("Skipped 1 unreadable file(s)") never index it (breaker round 8, n02b);
    a non-note with such a name is nobody's note."""
    mem = os.path.join(os.fsencode(ws), b"memory")
    for name in (b"caf\xe9.md", b"r\xe9sum\xe9.txt"):
        os.close(os.open(os.path.join(mem, name), os.O_CREAT | os.O_WRONLY))
    for scan in (scan_qmd(default_qmd_collections("main", str(ws)), str(ws)), scan_builtin(str(ws))):
        (counts,) = [c for c in scan.root_notes.values() if "bad_name" in c]
        assert counts["bad_name"] == 1
        assert "memory/caf\ufffd.md (bad_name)" in sum(scan.root_notes_listed.values(), [])


def test_huge_tree_is_capped_and_says_so(tmp_path):
    w = tmp_path / "big"
    d = w / "memory"
    for i in range(20):  # 20,000 files; bench/bench_stores.py measures a 100,000-file tree
        sub = d / f"d{i:03d}"
        sub.mkdir(parents=True)
        base = os.fspath(sub)
        for j in range(1000):
            os.close(os.open(f"{base}/n{j:04d}.md", os.O_CREAT | os.O_WRONLY, 0o644))
    scan = scan_builtin(str(w), max_files=5_000)
    assert scan.capped and "5000 files" in scan.cap_detail and len(scan.files) == 5_000
    assert [f.tag for f in scan_findings(scan)] == ["scan_capped"]
    cmp = compare_builtin(scan, [], NOW)
    assert cmp.partial and "cannot be told" in cmp.detail
    entries = scan_qmd(default_qmd_collections("main", str(w)), str(w), max_entries=2_000)
    assert entries.capped and "2000 directory entries" in entries.cap_detail


def test_compare_qmd_hashes_only_what_changed(ws):
    a, b, root = ws / "memory/a.md", ws / "memory/sub/b.md", ws / "MEMORY.md"
    docs = [_doc("memory-dir-main", "a.md", a), _doc("memory-dir-main", "sub/b.md", b),
            _doc("memory-root-main", "MEMORY.md", root), _doc("memory-dir-main", "gone.md", a)]
    os.utime(root, ns=(root.stat().st_atime_ns, root.stat().st_mtime_ns + 5_000_000_000))  # touched, same text
    b.write_text("# note\n\nchanged body\n")
    os.utime(b, ns=(0, 1_796_000_000_000_000_000))
    cmp = compare_qmd(scan_qmd(default_qmd_collections("main", str(ws)), str(ws)), docs, NOW)
    kinds = {c.rel: c.kind for c in cmp.changes}
    assert kinds == {"memory/sub/b.md": "changed", "memory/gone.md": "deleted"}
    assert cmp.hashed == 3  # MEMORY.md (touched), b.md (changed), blank.md (not indexed, whitespace-only)
    assert cmp.last_proven_current == datetime.fromtimestamp(1_796_000_000, tz=UTC)
    fresh = to_freshness(cmp)
    assert fresh.stale_reason == "ghost_content" and fresh.ghost_files == ["memory/gone.md"]
    assert fresh.unindexed_files == ["memory/sub/b.md"]


def test_compare_builtin_uses_mtime_and_size_first(ws):
    scan = scan_builtin(str(ws))
    rows = [BuiltinSourceRow(path=f.key, hash=content_hash(f.abs_path)[0], mtime_ms=f.mtime_ns / 1e6, size=f.size)
            for f in scan.files]
    cmp = compare_builtin(scan, rows, NOW)
    assert cmp.changes == [] and cmp.hashed == 0 and cmp.last_proven_current == NOW
    _w(ws, "memory/new.md", "# new\n")
    cmp = compare_builtin(scan_builtin(str(ws)), rows, NOW)
    assert [(c.rel, c.kind) for c in cmp.changes] == [("memory/new.md", "new")]
    assert to_freshness(cmp).stale_reason == "dirty"


def test_content_hash_like_node(tmp_path):
    p = tmp_path / "x.md"
    p.write_bytes(b"caf\xe9\n")  # not UTF-8: node reads it with U+FFFD
    assert content_hash(str(p)) == (hashlib.sha256("caf\ufffd\n".encode()).hexdigest(), False)
    p.write_bytes("\ufeff \n\t".encode())
    assert content_hash(str(p))[1] is True


def test_explainers(ws, tmp_path):
    cols = default_qmd_collections("main", str(ws))
    (ws / "memory.md").write_text("# lower\n")
    (ws / "memory" / "link.md").symlink_to(ws / "memory" / "a.md")

    def tags(p: str, engine: str = "qmd", **kw) -> list[str]:
        return [e.tag for e in explain_path(p, str(ws), engine=engine, collections=cols, **kw)]

    assert tags("memory/a.md") == [] and tags("MEMORY.md") == []
    assert tags("memory/.hidden/h.md") == ["hidden_path"]
    assert tags("memory.md") == ["case_mismatch"] and tags("memory.md", "builtin") == ["case_mismatch"]
    assert tags("memory/link.md") == ["symlink"] and tags("memory/link.md", "builtin") == ["symlink"]
    assert tags("memory/node_modules/pkg/README.md") == ["pattern_excluded"]
    assert tags("memory/empty.md") == ["empty_file"]
    assert tags("notes/x.md") == ["not_in_collection", "missing"]
    assert tags("memory/.hidden/h.md", "builtin") == []  # builtin indexes hidden dirs (real 7.35/9.6)
    ign = [QmdCollection(name="memory-dir-main", path=str(ws / "memory"), pattern="**/*.md", ignore=["sub/**"])]
    assert [e.tag for e in explain_path("memory/sub/b.md", str(ws), engine="qmd", collections=ign)] == ["pattern_excluded"]


def test_dependency_bloat_share():
    paths = [f"../proj/node_modules/p{i}/README.md" for i in range(18)] + [f"memory/n{i}.md" for i in range(6)]
    f = dependency_bloat(paths, "builtin index")
    assert f is not None and f.tag == "index_bloat" and "18 of 24" in f.message and "75%" in f.message
    assert dependency_bloat(paths[:10] + [f"memory/m{i}.md" for i in range(20)], "x") is None
    assert dependency_bloat(paths[:5], "x") is None


def test_a_future_mtime_proves_no_age(tmp_path):
    """A note with an mtime a day ahead (clock skew, ``touch -d``, a copied tree) that the index does not hold:
    the age of the change is unknown, so freshness is unproven — not "current until tomorrow" (which also made
    the saved receipt unreadable: evidence later than the check). A few seconds ahead is clock noise."""
    from datetime import datetime

    from clawprobe.core.probes.workspace import compare_qmd, default_qmd_collections, scan_qmd

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    note = ws / "memory" / "ahead.md"
    note.write_text("# from the future\n")
    now = datetime.now(UTC)
    cols = default_qmd_collections("main", str(ws))
    os.utime(note, (now.timestamp() + 86400, now.timestamp() + 86400))
    cmp = compare_qmd(scan_qmd(cols, str(ws)), [], now)
    assert [c.kind for c in cmp.changes] == ["new"] and cmp.last_proven_current is None
    assert "in the future" in cmp.method
    os.utime(note, (now.timestamp() + 2, now.timestamp() + 2))
    cmp = compare_qmd(scan_qmd(cols, str(ws)), [], now)
    assert cmp.last_proven_current == now


def test_configured_extra_paths_that_do_not_exist_are_warnings(tmp_path):
    """``~``-relative, workspace-relative and absolute entries resolve as OpenClaw resolves them; an existing
    dir or file is fine, a missing one or a dangling symlink is one ``extra_path_missing`` warning each."""
    from clawprobe.core.probes.workspace import missing_extra_paths

    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "notes").mkdir(parents=True)
    (home / "vault").mkdir(parents=True)
    (tmp_path / "one.md").write_text("# one\n")
    (ws / "dangling").symlink_to(tmp_path / "nowhere")
    paths = ["notes", "~/vault", str(tmp_path / "one.md"), "gone", "~/archive", str(tmp_path / "x"), "dangling"]
    found = missing_extra_paths(paths, str(ws), str(home))
    assert [f.tag for f in found] == ["extra_path_missing"] * 4
    assert [f.message.split(" (")[0] for f in found] == [
        "extra memory path gone", "extra memory path ~/archive", f"extra memory path {tmp_path / 'x'}",
        "extra memory path dangling"]
    assert f"({home}/archive)" in found[1].message
    (ws / "notes.txt").write_text("plain text\n")
    (ws / "notes" / "n.md").write_text("# n\n")
    found = missing_extra_paths(["notes.txt", "notes", "notes/n.md"], str(ws), str(home))
    assert [(f.tag, f.message.split(" (")[0]) for f in found] == [("extra_path_not_markdown", "extra memory path notes.txt")]
    keys = {f.key for f in scan_builtin(str(ws), ["notes.txt", "notes/n.md"]).files}
    assert keys == {"notes/n.md"}, "OpenClaw never indexes an extra file that is not Markdown"


def test_extra_path_object_entries_are_read_with_their_patterns(tmp_path):
    """2026.9.6's ``{path, pattern}`` entries: the path counts as an extra path (a missing one is warned
    about), its files are filtered by minimatch-like globs relative to it; a plain entry for the same path
    takes everything; a glob that cannot match anything leaves the root empty, never a traceback."""
    from clawprobe.core.probes.config import memory_settings
    from clawprobe.core.probes.workspace import extra_pattern_match, missing_extra_paths

    ws, picked, both = tmp_path / "ws", tmp_path / "picked", tmp_path / "both"
    for root in (picked, both):
        for rel in ("keep/a.md", "keep/x/b.md", "drop/c.md", "keep/.d.md"):
            _w(root, rel)
    tree = {"memory": {"search": {"extraPaths": [
        {"path": str(picked), "pattern": "keep/**/*.md"}, {"path": str(both), "pattern": "keep/*.md"}, str(both),
        {"path": "gone-dir", "pattern": "*.md"}, {"pattern": "no-path"}, 7]}},
        "agents": {"entries": {"ops": {"memory": {"search": {"extraPaths": [{"path": str(picked), "pattern": "drop/*"}]}}}}}}
    s = memory_settings(tree, "main")
    assert s.extra_paths == [str(picked), str(both), "gone-dir"]
    assert s.extra_path_patterns == {str(picked): ["keep/**/*.md"], "gone-dir": ["*.md"]}
    assert memory_settings(tree, "ops").extra_path_patterns[str(picked)] == ["keep/**/*.md", "drop/*"]
    scan = scan_builtin(str(ws), s.extra_paths, patterns=s.extra_path_patterns)
    keys = sorted(f.key for f in scan.files)
    assert keys == ["../both/drop/c.md", "../both/keep/.d.md", "../both/keep/a.md", "../both/keep/x/b.md",
                    "../picked/keep/a.md", "../picked/keep/x/b.md"]
    assert [f.message.split(" (")[0] for f in missing_extra_paths(s.extra_paths, str(ws), None)] == [
        "extra memory path gone-dir"]
    assert not extra_pattern_match(["[unclosed"], "a.md") and extra_pattern_match([], "any/where.md")


def test_notes_whose_names_are_not_star_md_are_skipped_notes_in_both_engines(ws):
    """``memory/Meeting.MD`` and ``memory/todo.markdown`` are notes no ``*.md`` rule takes (breaker round 4:
    2026.9.6 never indexes them and clawprobe said healthy): each is a skipped note under its root — so
    ``unsearchable_notes`` — for the builtin scan and for a QMD collection whose pattern would take it as
    ``.md``; a ``.txt`` is not a note and is not counted."""
    from clawprobe.core.probes import coverage as cov

    for name in ("Meeting.MD", "todo.markdown", "plain.txt"):
        (ws / "memory" / name).write_text("# x\n\nbody\n")
    for scan in (scan_builtin(str(ws)), scan_qmd(default_qmd_collections("main", str(ws)), str(ws))):
        reasons = {s.rel: s.reason for s in scan.skipped}
        assert reasons["memory/Meeting.MD"] == "case_mismatch" and reasons["memory/todo.markdown"] == "pattern_excluded"
        assert "memory/plain.txt" not in reasons
        root = next(c for c in cov.from_scan(scan, None) if c.source in ("memory/", "memory-dir-main"))
        assert root.skipped.get("case_mismatch") == 1 and root.skipped.get("pattern_excluded") == 1


@pytest.mark.parametrize("configured, on_disk, how", [
    ("Büro", "Bu\u0308ro", "Unicode normalization"),  # a Mac's rsync writes NFD; the config is NFC
    ("Bu\u0308ro/ws", "Büro", "Unicode normalization"),  # the other way, below a missing parent
    ("Notes", "notes", "letter case"),
    ("notes", "other", None),
])
def test_a_missing_workspace_beside_a_same_looking_name_is_pointed_at(tmp_path, configured, on_disk, how):
    """breaker round 7, w21: the workspace ``~/Büro`` (NFC) is missing while ``ls ~`` shows a ``Büro`` (NFD) —
    the repair's ``ls -la`` fails on a name that looks present. The finding names the real entry and the rename."""
    from clawprobe.core.probes.workspace import near_name_findings

    (tmp_path / on_disk).mkdir()
    found = near_name_findings(str(tmp_path / configured))
    if how is None:
        assert found == []
        return
    (f,) = found
    assert f.tag == "workspace_near_name" and how in f.message
    q = shlex.quote
    assert f"mv -n {q(str(tmp_path / on_disk))} {q(str(tmp_path / configured.split('/')[0]))}" in f.message


def test_a_case_variant_memory_dir_is_skipped_and_the_repair_lists_it(ws):
    """Breaker round 10, s09/s09b: notes restored into ``Memory/`` (capital M) beside ``memory/``, and a root
    ``Memory.md``: 2026.9.6 indexes neither, and clawprobe said ``healthy`` for ``Memory/``; the repair's ``find``,
    run, printed nothing (its ``-name memory.md`` is case-sensitive). Both engines count ``Memory/``'s notes as
    skipped under the memory dir's root; the catalog's ``find`` (run by bash here) lists both names."""
    from clawprobe.core.probes import coverage as cov
    from clawprobe.core.receipt import Receipt
    from clawprobe.core.repairs import repair_for
    from clawprobe.core.verdicts import Verdict

    _w(ws, "Memory/proj.md")
    _w(ws, "Memory/2026/old.md")
    _w(ws, "Memory.md")
    for scan in (scan_builtin(str(ws)), scan_qmd(default_qmd_collections("main", str(ws)), str(ws))):
        root = next(c for c in cov.from_scan(scan, None) if c.source in ("memory/", "memory-dir-main"))
        assert root.skipped.get("case_mismatch") == 2, root
    import subprocess

    for engine in ("builtin", "qmd"):  # round 12, s18: the builtin engine indexes hidden dirs — never listed for it
        r = Receipt(checked_at=NOW)
        r.config.workspace, r.config.configured_backend = str(ws), engine
        cmd = repair_for(Verdict.RETRIEVAL_FAILED, "unsearchable_notes", r).command
        out = set(subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30,
                                 check=True).stdout.split())
        assert {str(ws / "Memory"), str(ws / "Memory.md")} <= out, (engine, out)
        assert (str(ws / "memory" / ".hidden") in out) is (engine == "qmd"), (engine, out)


def _put_back(p: Path, text: str) -> None:
    """Edit ``p`` and put its mtime back, as ``touch -r``, ``cp -p`` or a sync tool does; the ctime moves on."""
    st = p.stat()
    p.write_text(text, encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("same_size", [True, False])
def test_an_edit_that_puts_the_mtime_back_is_seen_by_its_ctime_in_both_engines(ws, same_size):
    """Breaker round 15, A3 (QMD) and B7 (builtin, same size): the index holds the old text, the mtime (and the size)
    are what it recorded — only the ctime, which no user call can set back, says the file changed after its content
    was ingested. The file is hashed, the change found and dated by that ctime (not the old mtime: the lease starts
    at the edit). A file untouched since it was ingested is still matched without being read."""
    note = ws / "memory" / "a.md"
    os.utime(note, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # an old note
    cols = default_qmd_collections("main", str(ws))
    # indexed just after the newest note was written (the fixture writes a.md before others: on a busy host they
    # can come more than a few ms later, and a note written after the ingest is rightly read again)
    newest = max(p.stat().st_ctime_ns for p in ws.rglob("*") if p.is_file())
    ingested = datetime.fromtimestamp(newest / 1e9 + 0.002, tz=UTC)  # indexed just after its write
    time.sleep(0.05)  # the edit comes later than that (ctime has ns resolution; the ingest time is stored in ms)
    scan = scan_qmd(cols, str(ws))
    docs = [_doc(f.collection or "", f.key, Path(f.abs_path))._replace(ingested_at=ingested) for f in scan.files]
    rows = [BuiltinSourceRow(path=f.key, hash=content_hash(f.abs_path)[0] or "", mtime_ms=f.mtime_ns / 1e6, size=f.size)
            for f in scan_builtin(str(ws)).files]
    indexed_at = {r.path: ingested for r in rows}
    assert compare_qmd(scan, docs, NOW).hashed == 0 and compare_builtin(scan_builtin(str(ws)), rows, NOW, indexed_at).hashed == 0
    old = note.read_text()
    _put_back(note, old.replace("body", "BODY") if same_size else old + "more text\n")
    ctime = datetime.fromtimestamp(note.stat().st_ctime_ns / 1e9, tz=UTC)
    for cmp in (compare_qmd(scan_qmd(cols, str(ws)), docs, NOW),
                compare_builtin(scan_builtin(str(ws)), rows, NOW, indexed_at)):
        (ch,) = cmp.changes
        assert (ch.rel, ch.kind, cmp.hashed) == ("memory/a.md", "changed", 1)
        assert abs((ch.at - ctime).total_seconds()) < 1e-3 and "dated by its ctime" in (ch.evidence or "")
    # without the ingest times (an older reader, a recording) the times decide, as before
    assert compare_builtin(scan_builtin(str(ws)), rows, NOW).changes == [] if same_size else True


def test_a_collection_known_twice_is_named_once(ws):
    """The configured collections and index.yml's can name the same one: the refusal listed `notes (daily/*.md)`
    twice (breaker round 15)."""
    cols = default_qmd_collections("main", str(ws))
    (e,) = [e for e in explain_path("notes/x.md", str(ws), engine="qmd", collections=[*cols, *cols])
            if e.tag == "not_in_collection"]
    assert all(e.message.count(f"{c.name} ({c.pattern})") == 1 for c in cols), e.message


def test_a_chmod_moves_the_ctime_but_changes_nothing(ws):
    """Breaker round 16: notes chmod'ed past the lease (ctime moves, content the same) are read once and matched — not
    stale — in both engines."""
    note = ws / "memory" / "a.md"
    cols = default_qmd_collections("main", str(ws))
    # indexed just after the newest note was written (the fixture writes a.md before others: on a busy host they
    # can come more than a few ms later, and a note written after the ingest is rightly read again)
    newest = max(p.stat().st_ctime_ns for p in ws.rglob("*") if p.is_file())
    ingested = datetime.fromtimestamp(newest / 1e9 + 0.002, tz=UTC)
    time.sleep(0.05)
    docs = [_doc(f.collection or "", f.key, Path(f.abs_path))._replace(ingested_at=ingested) for f in scan_qmd(cols, str(ws)).files]
    rows = [BuiltinSourceRow(path=f.key, hash=content_hash(f.abs_path)[0] or "", mtime_ms=f.mtime_ns / 1e6, size=f.size)
            for f in scan_builtin(str(ws)).files]
    note.chmod(0o600)
    for cmp in (compare_qmd(scan_qmd(cols, str(ws)), docs, NOW),
                compare_builtin(scan_builtin(str(ws)), rows, NOW, {r.path: ingested for r in rows})):
        assert (cmp.changes, cmp.hashed) == ([], 1), cmp.changes
