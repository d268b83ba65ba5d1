"""QMD index probe against the real qmd 2.8.3 with the real GGUF embed model (no openclaw call here).

One agent QMD home is built once for the module, through stages that the real qmd writes:
A (collections added, nothing embedded) → B (``qmd embed``) → C (one file edited, one added, ``qmd update``)
→ D (``qmd embed`` again). At each stage the read-only probe is compared with ``qmd status`` run on a COPY
of the store (``qmd status`` writes, so it never touches the original).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.canary import token_found
from clawprobe.core.probes.qmd_fingerprint import fingerprint
from clawprobe.core.probes.qmd_index import (
    configured_collections,
    managed_collection_names,
    qmd_findings,
    qmd_paths,
    read_qmd_index,
    to_vectors,
)
from clawprobe.core.probes.workspace import compare_qmd, scan_qmd, to_freshness
from clawprobe.core.probes.workspace_cache import WorkspaceCache
from tests.testbed import OpenClawHome, qmd_env, run_process, run_qmd, unique_token


def _snapshot(home: OpenClawHome) -> dict[str, tuple[int, int]]:
    out = {}
    for p in sorted(home.agent_dir().rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p)] = (st.st_size, st.st_mtime_ns)
    return out


def _status_on_copy(home: OpenClawHome, dest: Path, testbed) -> dict[str, int]:
    """Copy the agent's QMD home and run the real ``qmd status`` on the copy; parse its counts."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(home.agent_dir() / "qmd", dest)
    env = qmd_env(home, extra={"XDG_CONFIG_HOME": str(dest / "xdg-config"),
                               "QMD_CONFIG_DIR": str(dest / "xdg-config" / "qmd"),
                               "XDG_CACHE_HOME": str(dest / "xdg-cache")})
    r = run_process([testbed.qmd, "status"], env=env, cwd=home.root, timeout=30)
    assert r.rc == 0, r.stderr
    assert str(dest) in r.stdout, "qmd status must have read the copy"

    def num(label: str) -> int:
        m = re.search(rf"^\s*{label}:\s+(\d+)", r.stdout, re.M)
        return int(m.group(1)) if m else 0

    return {"total": num("Total"), "vectors": num("Vectors"), "pending": num("Pending"), "orphaned": num("Orphaned")}


@pytest.fixture(scope="module")
def staged(oc_home_factory, testbed, tmp_path_factory):
    home = oc_home_factory(name="qmd-stages")
    model_env = {"QMD_EMBED_MODEL": str(testbed.model)}
    root, mem = managed_collection_names(home.agent_id)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    home.write_memory("alpha.md", "# Alpha\n\nAlpha notes about gardening.\n")
    home.write_memory("sub/beta.md", "# Beta\n\nBeta notes about cycling.\n")
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        r = run_qmd(home, None, *args, extra_env=model_env, testbed=testbed)
        assert r.rc == 0, r.stderr
    paths = qmd_paths(home.state_dir, home.agent_id)
    copies = tmp_path_factory.mktemp("qmd-copies")
    st: dict = {"home": home, "paths": paths}

    def stage(name: str) -> None:
        before = _snapshot(home)
        st[name] = read_qmd_index(paths, {})
        assert _snapshot(home) == before, "the read-only probe changed the agent's QMD home"
        st[name + "_status"] = _status_on_copy(home, copies / name, testbed)
        assert _snapshot(home) == before, "qmd status on the copy touched the original"

    stage("A")
    r = run_qmd(home, None, "embed", extra_env=model_env, timeout=120, testbed=testbed)
    assert r.rc == 0, r.stderr
    stage("B")
    home.write_memory("alpha.md", "# Alpha\n\nAlpha notes about gardening, edited: tomatoes.\n")
    home.write_memory("gamma.md", "# Gamma\n\nGamma notes about chess.\n")
    upd = run_qmd(home, None, "update", extra_env=model_env, testbed=testbed)
    assert upd.rc == 0, upd.stderr
    st["update_notice"] = upd.stdout
    stage("C")
    r = run_qmd(home, None, "embed", extra_env=model_env, timeout=120, testbed=testbed)
    assert r.rc == 0, r.stderr
    stage("D")
    return st


@pytest.mark.parametrize("name", ["A", "B", "C", "D"])
def test_counts_match_real_qmd_status(staged, name):
    facts, status = staged[name], staged[name + "_status"]
    assert facts.open.state == "ok" and facts.readable
    assert facts.documents_active == status["total"]
    assert facts.vector_rows == status["vectors"]
    assert facts.pending == status["pending"]
    assert facts.orphans == status["orphaned"]


def test_stage_story_pending_zero_after_real_embed_and_orphans_after_edit(staged):
    a, b, c, d = (staged[k] for k in "ABCD")
    assert a.pending == 3 and a.has_vector_table is False and to_vectors(a).not_ready_reason == "no_vector_store"
    assert b.pending == 0 and b.has_vector_table is True and b.vector_dims == 384
    assert to_vectors(b).not_ready_reason is None
    assert c.pending == 2 and c.orphans == 1 and to_vectors(c).not_ready_reason == "pending"
    assert d.pending == 0 and d.orphans == 1  # orphans stay until `qmd cleanup` (RW43)
    assert d.last_embed_at > b.last_embed_at and d.last_ingest_at > b.last_ingest_at


def test_update_notice_misreports_pending_rw20(staged):
    m = re.search(r"\((\d+) unique hashes need vectors\)", staged["update_notice"])
    assert m, staged["update_notice"]
    notice = int(m.group(1))
    # the notice counts against qmd's default model; the probe (like `qmd status`) uses the configured one
    assert notice != staged["C"].pending == staged["C_status"]["pending"]
    assert notice == staged["C"].documents_active


def test_fingerprint_and_model_come_from_index_yml(staged, testbed):
    d = staged["D"]
    assert d.embed_model.model == str(testbed.model) and d.embed_model.source == "index.yml"
    assert fingerprint("hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf") == "c37385"
    con = sqlite3.connect(f"file:{staged['paths'].db}?mode=ro&immutable=1", uri=True)
    stored = {r[0] for r in con.execute("SELECT DISTINCT embed_fingerprint FROM content_vectors")}
    con.close()
    assert stored == {fingerprint(str(testbed.model))} == {d.embed_model.fingerprint}
    assert [g.current for g in d.inventory] == [True]


def test_switched_model_gives_fingerprint_mismatch_then_mixed_fingerprints(staged, testbed, tmp_path):
    """Point the copy's index.yml at the same GGUF through another path: a different fingerprint (real)."""
    home = staged["home"]
    dest = tmp_path / "qmd"
    shutil.copytree(home.agent_dir() / "qmd", dest)
    alias = tmp_path / "alias-model.gguf"
    alias.symlink_to(testbed.model)
    yml = dest / "xdg-config" / "qmd" / "index.yml"
    yml.write_text(yml.read_text().replace(str(testbed.model), str(alias)))
    state = tmp_path / "state"
    (state / "agents" / home.agent_id).mkdir(parents=True)
    (state / "agents" / home.agent_id / "qmd").symlink_to(dest)
    paths = qmd_paths(state, home.agent_id)
    before = read_qmd_index(paths, {})
    assert before.embed_model.fingerprint != staged["D"].embed_model.fingerprint
    assert before.pending == before.documents_active
    assert to_vectors(before).not_ready_reason == "fingerprint_mismatch"
    env = qmd_env(home, extra={"XDG_CONFIG_HOME": str(dest / "xdg-config"), "QMD_CONFIG_DIR": str(dest / "xdg-config" / "qmd"),
                               "XDG_CACHE_HOME": str(dest / "xdg-cache")})
    r = run_process([testbed.qmd, "embed"], env=env, cwd=home.root, timeout=120)
    assert r.rc == 0, r.stderr
    after = read_qmd_index(paths, {})
    assert after.pending == 0
    assert "mixed_fingerprints" in [f.tag for f in qmd_findings(after)]


def test_stale_and_foreign_embed_lock(staged, tmp_path):
    home = staged["home"]
    dest = tmp_path / "state" / "agents" / home.agent_id / "qmd"
    shutil.copytree(home.agent_dir() / "qmd", dest)
    paths = qmd_paths(tmp_path / "state", home.agent_id)
    Path(paths.lock).write_text(f"{os.getpid()}\n")  # alive, but not qmd (qmd's own liveness rule)
    f = read_qmd_index(paths, {})
    assert f.lock.exists and f.lock.pid == os.getpid() and f.lock.pid_alive is False
    assert "stale_embed_lock" in [x.tag for x in qmd_findings(f)]
    assert to_vectors(f).embed_running_pid is None


def test_disk_matches_index_then_new_file_is_unindexed(staged):
    home, d = staged["home"], staged["D"]
    now = datetime.now(UTC)
    scan = scan_qmd(configured_collections(d), str(home.workspace))
    cmp = compare_qmd(scan, d.docs, now)
    assert cmp.changes == [] and cmp.last_proven_current == now and cmp.hashed == 0
    assert cmp.method.startswith("disk matches index")


def test_ghost_content_rw15_old_token_still_found(oc_home_factory, testbed):
    """Delete a note after a real `qmd update`: the index still serves it (ghost), until the next update."""
    home = oc_home_factory(name="qmd-ghost")
    root, mem = managed_collection_names(home.agent_id)
    token = unique_token("GHOSTTOK")
    home.write_memory_md()
    note = home.write_memory("trip.md", f"# Trip\n\nThe ferry code is {token}.\n")
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        assert run_qmd(home, None, *args, testbed=testbed).rc == 0
    note.unlink()
    search = run_qmd(home, None, "search", token, "--json", "-c", root, "-c", mem, testbed=testbed)
    assert search.rc == 0 and token_found(search.stdout, token), "real qmd still serves the deleted note"
    now = datetime.now(UTC)
    facts = read_qmd_index(qmd_paths(home.state_dir, home.agent_id), {})
    fresh = to_freshness(compare_qmd(scan_qmd(configured_collections(facts), str(home.workspace)), facts.docs, now))
    assert fresh.ghost_files == ["memory/trip.md"] and fresh.stale_reason == "ghost_content"
    parent_mtime = datetime.fromtimestamp((home.workspace / "memory").stat().st_mtime_ns / 1e9, tz=UTC)
    assert fresh.last_proven_current == parent_mtime
    cache = WorkspaceCache()  # the dashboard's path: a full scan once, then the watcher-driven cache
    cache.watch([str(home.workspace / "memory")], grace_s=0)
    assert to_freshness(cache.compare_qmd(configured_collections(facts), str(home.workspace), facts, now)[0]) \
        .ghost_files == ["memory/trip.md"]
    assert run_qmd(home, None, "update", testbed=testbed).rc == 0
    again = run_qmd(home, None, "search", token, "--json", "-c", root, "-c", mem, testbed=testbed)
    assert not token_found(again.stdout, token)
    before = facts
    facts = read_qmd_index(qmd_paths(home.state_dir, home.agent_id), {})
    assert facts.docs_by_dir() is not before.docs_by_dir(), "qmd's write must invalidate the cached index read"
    assert facts.documents_active == before.documents_active - 1
    fresh = to_freshness(compare_qmd(scan_qmd(configured_collections(facts), str(home.workspace)), facts.docs, now))
    assert fresh.ghost_files == [] and fresh.last_proven_current == now
    cached, scan = cache.compare_qmd(configured_collections(facts), str(home.workspace), facts, now)
    assert scan is None and cached.changes == [] and cached.last_proven_current == now  # no rescan needed
    assert read_qmd_index(qmd_paths(home.state_dir, home.agent_id), {}).docs_by_dir() is facts.docs_by_dir()


def test_missing_index_stays_missing(oc_home_factory):
    home = oc_home_factory(name="qmd-missing")
    paths = qmd_paths(home.state_dir, home.agent_id)
    f = read_qmd_index(paths, {})
    assert f.open.state == "missing" and not f.readable and f.missing_managed == list(managed_collection_names("main"))
    assert not Path(paths.db).parent.exists(), "reading must never create the QMD home"
    v = to_vectors(f)
    assert v.pending is None and "missing" in (v.detail or "")


def test_wrong_store_rw14(oc_home_factory, testbed):
    """Collections built by hand in the default qmd store; the agent's managed store lacks memory-root-<id>."""
    from clawprobe.core import canary as cn
    from clawprobe.core.probes.qmd_index import default_store_path, read_store_summary, wrong_store_detail

    home = oc_home_factory(name="qmd-wrong-store")
    home.write_memory_md("# Memory\n\nnotes\n")
    home.write_memory("a.md", "# A\n\nalpha\n")
    plain = {"PATH": "/usr/bin:/bin", "HOME": str(home.home), "TMPDIR": str(home.tmp_dir), "NO_COLOR": "1"}
    r = run_process([testbed.qmd, "collection", "add", str(home.workspace / "memory"), "--name", "notes"],
                    env=plain, cwd=home.root, timeout=30)
    assert r.rc == 0, r.stderr  # the user's own store: ~/.cache/qmd/index.sqlite
    r = run_qmd(home, None, "collection", "add", str(home.workspace / "memory"), "--name", "mynotes", testbed=testbed)
    assert r.rc == 0, r.stderr  # the managed store exists, but without OpenClaw's collections
    root, _ = managed_collection_names(home.agent_id)
    miss = run_qmd(home, None, "search", "alpha", "-c", root, "--json", testbed=testbed)
    assert miss.rc == 1 and f"Collection not found: {root}" in (miss.stderr + miss.stdout)
    facts = read_qmd_index(qmd_paths(home.state_dir, home.agent_id), {})
    assert facts.missing_managed == list(managed_collection_names(home.agent_id))
    default = read_store_summary(default_store_path(plain))
    assert default.path == str(home.home / ".cache" / "qmd" / "index.sqlite") and default.collections == {"notes": 1}
    detail = wrong_store_detail(facts, default)
    assert "notes (1 docs)" in detail and "wrong store" in detail
    c = cn.explain(cn.Canary(outcome="miss", expected_path="memory/a.md"), str(home.workspace), engine="qmd",
                   collections=configured_collections(facts), wrong_store_detail=detail)
    assert c.reason == "wrong_store"
