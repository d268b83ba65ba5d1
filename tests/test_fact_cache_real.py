"""The one-shot path with clawprobe's persisted QMD index facts (``core/probes/fact_cache.py``) equals a full
read, after real file events on a real qmd 2.8.3 index: a new note, an edit with size and mtime restored, a
delete, a rename, a new subdir, a symlinked memory root, a real ``qmd update``, and ``index.sqlite`` replaced
by another inode with its size and mtime restored. Each "one-shot" starts like a new process (the in-process
read cache cleared), so only the persisted document can answer (written from the second cold read of one index
identity on); each "full" reads with an empty cache dir.
Corrupt, foreign and other-version documents are ignored and rebuilt, never raised."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.probes import fact_cache
from clawprobe.core.probes import qmd_index as qi
from clawprobe.core.probes.workspace import compare_qmd, scan_qmd
from tests.testbed import run_qmd

NOW = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)


@pytest.fixture()
def home(oc_home_factory, testbed, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_CACHE_DIR", str(tmp_path / "cache"))
    h = oc_home_factory(name=f"fact-cache-{tmp_path.name}")
    root, mem = qi.managed_collection_names(h.agent_id)
    h.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    h.write_memory("alpha.md", "# Alpha\n\nAlpha notes about gardening.\n")
    h.write_memory("sub/beta.md", "# Beta\n\nBeta notes about cycling.\n")
    for args in (("collection", "add", str(h.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(h.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        assert run_qmd(h, None, *args, testbed=testbed).rc == 0
    reads = []
    real = qi._read_once
    monkeypatch.setattr(qi, "_read_once", lambda *a: (reads.append(1), real(*a))[1])
    h.reads = reads  # type: ignore[attr-defined]
    return h


def _result(home) -> tuple[dict, list, dict]:
    """(facts without the per-call fields, docs, comparison) of one probe's index read + scan + compare."""
    facts = qi.read_qmd_index(qi.qmd_paths(home.state_dir, home.agent_id), {})
    cmp = compare_qmd(scan_qmd(qi.configured_collections(facts), str(home.workspace)), facts.docs, NOW)
    return facts.model_dump(exclude=qi._PER_CALL), sorted(facts.docs), cmp.model_dump()


def oneshot(home):
    qi.clear_read_cache(persisted=False)  # a new process: only the persisted facts can answer
    return _result(home)


def warm(home):
    """Two new processes on an unchanged index: the first leaves a mark, the second persists the facts."""
    oneshot(home)
    return oneshot(home)


def full(home, tmp_path, monkeypatch):
    qi.clear_read_cache(persisted=False)
    empty = tmp_path / f"empty-{len(list(tmp_path.iterdir()))}"
    with monkeypatch.context() as m:
        m.setenv("CLAWPROBE_CACHE_DIR", str(empty))
        out = _result(home)
    qi.clear_read_cache(persisted=False)
    return out


def test_persisted_facts_equal_a_full_read_after_real_file_events(home, testbed, tmp_path, monkeypatch):
    first = warm(home)
    assert home.reads == [1, 1]
    assert oneshot(home) == first and home.reads == [1, 1], "the third process must be answered by the persisted facts"
    assert first == full(home, tmp_path, monkeypatch)
    mem = home.workspace / "memory"

    (mem / "new.md").write_text("# New\n\nfresh note\n")  # create
    got = oneshot(home)
    assert got == full(home, tmp_path, monkeypatch)
    assert [c["kind"] for c in got[2]["changes"]] == ["new"]

    alpha = mem / "alpha.md"  # modify: same size, mtime restored — found by its ctime (breaker round 15, A3)
    st = alpha.stat()
    alpha.write_text(alpha.read_text().replace("gardening", "gardenin!"))
    os.utime(alpha, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert oneshot(home) == full(home, tmp_path, monkeypatch)

    (mem / "sub" / "beta.md").rename(mem / "sub" / "gamma.md")  # rename
    (mem / "new.md").unlink()  # delete
    (mem / "deep" / "er").mkdir(parents=True)  # a new subdir with a note
    (mem / "deep" / "er" / "d.md").write_text("# D\n\ndeep\n")
    got = oneshot(home)
    assert got == full(home, tmp_path, monkeypatch)
    assert sorted(c["kind"] for c in got[2]["changes"]) == ["changed", "deleted", "new", "new"]
    reads = len(home.reads)

    assert run_qmd(home, None, "update", testbed=testbed).rc == 0  # a real write: the identity changes
    updated = warm(home)
    assert len(home.reads) == reads + 2 and updated == full(home, tmp_path, monkeypatch)
    assert updated[2]["changes"] == [] and updated[0]["documents_active"] == first[0]["documents_active"] + 1
    assert oneshot(home) == updated and len(home.reads) == reads + 3  # full() read once, oneshot hit the cache

    mem.rename(home.workspace / "memory-real")  # the collection's root becomes a symlink to where the notes went
    mem.symlink_to("memory-real", target_is_directory=True)
    got = oneshot(home)
    assert got == full(home, tmp_path, monkeypatch) and got[2]["changes"] == []


def test_an_index_replaced_by_another_inode_with_size_and_mtime_restored_is_read_again(home, testbed, tmp_path,
                                                                                       monkeypatch):
    db = qi.qmd_paths(home.state_dir, home.agent_id).db
    before = tmp_path / "before.sqlite"
    shutil.copy2(db, before)
    (home.workspace / "memory" / "two.md").write_text("# Two\n\nsecond note\n")
    assert run_qmd(home, None, "update", testbed=testbed).rc == 0
    after = warm(home)  # persisted under the new index's identity
    st = os.stat(db)
    tmp = Path(db + ".swap")
    shutil.copyfile(before, tmp)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, db)  # the old content under the new file's mtime (and, page-aligned, its size), another inode
    assert os.stat(db).st_ino != st.st_ino and os.stat(db).st_mtime_ns == st.st_mtime_ns
    got = oneshot(home)
    assert got != after and got == full(home, tmp_path, monkeypatch)
    assert got[0]["documents_active"] == after[0]["documents_active"] - 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other format", "other version", "other key",
                                    "not a dict", "bad rows", "fifo"])
def test_a_corrupt_or_foreign_cache_document_is_ignored_and_rebuilt(home, tmp_path, monkeypatch, damage):
    first = warm(home)
    (doc,) = (fact_cache.cache_dir() / p for p in os.listdir(fact_cache.cache_dir())
              if p.startswith("qmd-index-") and not p.startswith("qmd-index-seen-"))
    text = doc.read_text()
    data = json.loads(text)
    if damage == "garbage":
        doc.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        doc.write_text(text[: len(text) // 2])
    elif damage == "not a dict":
        doc.write_text("[1, 2, 3]")
    elif damage == "fifo":  # breaker round 24: reading a FIFO here blocked every later check forever
        doc.unlink()
        os.mkfifo(doc)
    else:
        if damage == "other format":
            data["format"] += 1
        elif damage == "other version":
            data["clawprobe"] = "0.0.0-foreign"
        elif damage == "other key":
            data["key"] = data["key"].replace("[", "[1,", 1)
        elif damage == "bad rows":
            data["data"]["docs"] = [["only", "three", "fields"]]
        doc.write_text(json.dumps(data))
    reads = len(home.reads)
    assert oneshot(home) == first == full(home, tmp_path, monkeypatch)
    assert len(home.reads) == reads + 2  # ignored (read again), then full()'s own read
    assert oneshot(home) == first and len(home.reads) == reads + 2  # … and rewritten by the first


def test_the_cache_lives_in_clawprobes_dir_is_private_and_bounded(home, tmp_path, monkeypatch):
    oneshot(home)
    d = fact_cache.cache_dir()
    assert d == tmp_path / "cache" / "facts" and os.stat(d).st_mode & 0o777 == 0o700
    assert not any(p.name.startswith(("qmd-index-", ".tmp-")) for p in Path(home.state_dir).rglob("*"))
    last = fact_cache.MAX_FILES + 4
    for i in range(last + 1):
        assert fact_cache.save("test", f"/src/{i}", [i], {"n": i})
        os.utime(fact_cache._file("test", f"/src/{i}", None), (1_000_000_000 + i, 1_000_000_000 + i))  # distinct past ages
    fact_cache.save("test", f"/src/{last}", [last], {"n": last})  # prunes by age
    assert len([p for p in d.iterdir() if p.suffix == ".json"]) == fact_cache.MAX_FILES
    assert fact_cache.load("test", f"/src/{last}", [last]) == {"n": last}
    assert fact_cache.load("test", "/src/0", [0]) is None  # the oldest went
    monkeypatch.setenv("CLAWPROBE_CACHE_DIR", "/proc/clawprobe-cannot-write-here")
    assert fact_cache.save("test", "/src/x", [1], {}) is False  # no exception: the cache is an optimisation
    inside = Path(home.state_dir) / "agents" / home.agent_id / "qmd" / "xdg-cache"  # e.g. XDG_CACHE_HOME of qmd
    monkeypatch.setenv("CLAWPROBE_CACHE_DIR", str(inside))
    warm(home)
    assert not (inside / "facts").exists(), "the cache must never be written inside OpenClaw's state"
    monkeypatch.setenv("CLAWPROBE_CACHE_DIR", str(tmp_path / "cache"))
    warm(home)
    assert len(list(d.glob("qmd-index-*"))) == 2  # the mark and the facts
    qi.clear_read_cache()  # what tests and benchmarks call for a cold read: the persisted documents go too
    assert not list(d.glob("qmd-index-*")) and fact_cache.load("test", f"/src/{last}", [last]) == {"n": last}
