"""Store probes and canary against states the real OpenClaw CLIs build (2026.7.35 and 2026.9.6).

OpenClaw calls (3–13 s each) are few and module-scoped: one ``memory index`` per builtin release, and for the
2026.7.35 QMD backend one ``memory index`` plus three ``memory search`` calls (the canary, a lowercase
``memory.md`` token, a hidden-dir token).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw
from clawprobe.core.probe import CanarySpec, canary_facts
from clawprobe.core.probes.builtin_index import (
    builtin_findings,
    corruption,
    read_builtin_index,
    to_builtin_facts,
)
from clawprobe.core.probes.config import memory_settings
from clawprobe.core.probes.openclaw_cli import parse_search
from clawprobe.core.probes.qmd_index import configured_collections, qmd_paths, read_qmd_index
from clawprobe.core.probes.workspace import (
    compare_builtin,
    compare_qmd,
    explain_path,
    indexes_user_md,
    scan_builtin,
    scan_qmd,
)
from tests.testbed import (
    OC_LATEST,
    OC_QMD,
    builtin_config,
    qmd_config,
    run_openclaw,
    run_qmd,
    unique_token,
)

# --------------------------------------------------------------------------------------------------------
# builtin engine, both releases
# --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def builtin_home(oc_home_factory, testbed, real_state, tmp_path_factory):
    def build(version: str):
        picked = tmp_path_factory.mktemp(f"picked-{version}")  # 2026.9.6: an extra dir filtered by a pattern
        for rel in ("keep/a.md", "keep/deep/b.md", "drop/c.md", "top.md", "keep/.dot.md"):
            (picked / rel).parent.mkdir(parents=True, exist_ok=True)
            (picked / rel).write_text(f"# {rel}\n\nbody\n")
        extra = {"memory": {"search": {"extraPaths": [{"path": str(picked), "pattern": "keep/**/*.md"},
                                                      "plain.txt"]}}} if version == OC_LATEST else {}
        home = oc_home_factory(builtin_config("none", version=version, **extra), name=f"builtin-{version}")
        vault = tmp_path_factory.mktemp(f"vault-{version}")
        (vault / "MEMORY.md").write_text(f"# Vault memory\n\n{unique_token('VAULTROOT')}\n")
        (vault / "note.md").write_text(f"# Vault note\n\n{unique_token('VAULTNOTE')}\n")
        home.symlink("MEMORY.md", vault / "MEMORY.md")  # RW29: symlinked root memory file
        home.symlink("memory/linked.md", vault / "note.md")
        home.write_memory("a.md", "# A\n\nalpha\n")
        home.write_memory("Meeting.MD", "# Meeting\n\nnever indexed: the name is not *.md\n")
        home.write_memory("todo.markdown", "# Todo\n\nnever indexed either\n")
        home.write_file("plain.txt", "an extra file that is not Markdown: never indexed\n")
        home.write_file("USER.md", "# User\n\nprefers tea\n")  # indexed from 2026.9.6 on, not by 2026.7.35
        home.write_memory(".hidden/h.md", "# H\n\nhidden\n")
        home.write_memory("node_modules/pkg/README.md", "# pkg\n\nreadme\n")
        res = run_openclaw(home, version, "memory", "index", testbed=testbed)
        assert res.rc == 0, res.stderr
        return home
    return lambda version: real_state(("builtin", version), lambda: build(version))


@pytest.mark.parametrize("version", [OC_QMD, OC_LATEST])
def test_builtin_store_tables_and_scanner_match_the_real_index(builtin_home, version):
    home = builtin_home(version)
    facts = read_builtin_index(home.state_dir, home.agent_id)
    assert facts.layout == "agent-db" and facts.open.state == "ok" and facts.path == str(home.builtin_db())
    assert facts.meta.provider == "none" and facts.meta.model == "fts-only" and facts.meta.fts_only
    assert facts.fts_table is True and facts.quick_check == []
    indexed = {s.path for s in facts.sources if s.source == "memory"}
    assert indexes_user_md(version, ()) is (version == OC_LATEST) and ("USER.md" in indexed) is (version == OC_LATEST)
    assert indexes_user_md(None, indexed) is (version == OC_LATEST), "an unknown build: the index decides"
    settings = memory_settings(json.loads(home.config_path.read_text()), home.agent_id)
    scan = scan_builtin(str(home.workspace), settings.extra_paths, user_md=indexes_user_md(version, indexed),
                        patterns=settings.extra_path_patterns)
    assert {f.key for f in scan.files} == indexed, "clawprobe's builtin scanner = the real one"
    if version == OC_LATEST:  # the {path, pattern} entry: only keep/**/*.md, no dotfile
        picked = {p for p in indexed if "picked" in p}
        assert sorted(p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in picked) == ["deep/b.md", "keep/a.md"]
    assert "MEMORY.md" not in indexed and "memory/linked.md" not in indexed and "memory/.hidden/h.md" in indexed
    skipped = {k.rel: k.reason for k in scan.skipped}
    assert "memory/Meeting.MD" not in indexed and skipped["memory/Meeting.MD"] == "case_mismatch"
    assert "memory/todo.markdown" not in indexed and skipped["memory/todo.markdown"] == "pattern_excluded"
    cmp = compare_builtin(scan, facts.sources, datetime.now(UTC))
    assert cmp.changes == [] and cmp.method.startswith("disk matches index")
    b = to_builtin_facts(facts, "none")
    assert b.fts_only is True and b.provider_resolved == "none" and b.unavailable_reason is None
    assert builtin_findings(facts) == []


@pytest.mark.parametrize("version", [OC_QMD, OC_LATEST])
def test_symlinked_memory_md_is_explained_rw29(builtin_home, version):
    home = builtin_home(version)
    found = explain_path("MEMORY.md", str(home.workspace), engine="builtin")
    assert [e.tag for e in found] == ["symlink"] and "->" in found[0].message
    c = cn.explain(cn.Canary(outcome="miss", expected_path="memory/linked.md"), str(home.workspace), engine="builtin")
    assert c.reason == "symlink"


def test_new_file_after_index_is_not_in_the_index_rw16(builtin_home):
    home = builtin_home(OC_QMD)
    facts = read_builtin_index(home.state_dir, home.agent_id)
    p = home.write_memory("2026-11-30.md", "# today\n\ncodeword\n")
    mtime = datetime.fromtimestamp(p.stat().st_mtime_ns / 1e9, tz=UTC)
    try:
        cmp = compare_builtin(scan_builtin(str(home.workspace)), facts.sources, datetime.now(UTC))
    finally:
        p.unlink()
    assert [(c.rel, c.kind) for c in cmp.changes] == [("memory/2026-11-30.md", "new")]
    assert cmp.last_proven_current == mtime


@pytest.mark.parametrize("version", [OC_QMD, OC_LATEST])
def test_corrupt_copy_of_a_real_builtin_index_rw39(builtin_home, version, tmp_path):
    home = builtin_home(version)
    src = home.builtin_db()
    dst = tmp_path / "state" / "agents" / home.agent_id / "agent" / src.name
    dst.parent.mkdir(parents=True)
    shutil.copyfile(src, dst)
    for side in ("-wal",):
        if Path(str(src) + side).exists():
            shutil.copyfile(str(src) + side, str(dst) + side)
    data = bytearray(dst.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, 3 * page):  # scribble over every third page after the root
        data[start + 8:start + page] = b"\xa5" * (page - 8)
    dst.write_bytes(bytes(data))
    before = src.stat().st_mtime_ns
    facts = read_builtin_index(tmp_path / "state", home.agent_id)
    assert corruption(facts), (facts.open, facts.quick_check)
    b = to_builtin_facts(facts, "none")
    assert b.unavailable_reason == "index_corrupt" and str(dst) in b.unavailable_detail
    assert src.stat().st_mtime_ns == before


# --------------------------------------------------------------------------------------------------------
# QMD backend (2026.7.35): canary found, lowercase memory.md and hidden dir not indexed
# --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qmd_backend(oc_home_factory, testbed, tmp_path_factory):
    home = oc_home_factory(qmd_config("qmd", "search"), name="qmd-backend")
    data_root = tmp_path_factory.mktemp("clawprobe-data")
    lower, hidden = unique_token("LOWERTOK"), unique_token("HIDDENTOK")
    home.write_file("memory.md", f"# lower\n\nThe lowercase token is {lower}.\n")
    home.write_memory(".hidden/secret.md", f"# hidden\n\nThe hidden token is {hidden}.\n")
    home.write_memory("ok.md", "# ok\n\nan ordinary note\n")
    rec = cw.plant(home.workspace, home.agent_id, root=data_root)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    out = {"home": home, "record": rec, "lower": lower, "hidden": hidden}
    for key, token in (("s_canary", rec.token), ("s_lower", lower), ("s_hidden", hidden)):
        out[key] = run_openclaw(home, OC_QMD, "memory", "search", token, "--json", path_dirs=[testbed.bin_dir],
                                testbed=testbed)
    out["facts"] = read_qmd_index(qmd_paths(home.state_dir, home.agent_id), {})
    return out


def _eval(r, path: str, token: str) -> cn.Canary:
    """The production path: the real ``memory search --json`` parsed, then the receipt's canary part."""
    spec = CanarySpec(token=token, expected_path=path, content_sha256=None, planted_at=None)
    return canary_facts(spec, parse_search(r.stdout, r.stderr, r.rc, r.seconds), None, 60.0, None)


def test_canary_found_through_openclaw_with_trace(qmd_backend):
    rec, facts = qmd_backend["record"], qmd_backend["facts"]
    c = _eval(qmd_backend["s_canary"], rec.rel_path, rec.token)
    assert c.outcome == "found" and c.result_shape == "qmd" and c.returned_path == "memory/clawprobe-canary.md"
    now = datetime.now(UTC)
    c = cn.trace(c, rec, qmd_docs=facts.docs, retrieved_at=now)
    assert c.planted_at == rec.planted_at and c.content_sha256 == rec.content_sha256
    assert c.indexed_at is not None and c.planted_at <= c.indexed_at <= now and c.retrieved_at == now
    assert c.embedded_at is None  # search mode: nothing embedded


def test_lowercase_memory_md_not_indexed_and_explained(qmd_backend):
    home = qmd_backend["home"]
    c = _eval(qmd_backend["s_lower"], "memory.md", qmd_backend["lower"])
    assert c.outcome == "miss"
    cols = configured_collections(qmd_backend["facts"])
    c = cn.explain(c, str(home.workspace), engine="qmd", collections=cols)
    assert c.reason == "case_mismatch" and "MEMORY.md" in c.detail


def test_hidden_dir_canary_not_indexed_and_explained(qmd_backend):
    home = qmd_backend["home"]
    c = _eval(qmd_backend["s_hidden"], "memory/.hidden/secret.md", qmd_backend["hidden"])
    assert c.outcome == "miss"
    c = cn.explain(c, str(home.workspace), engine="qmd", collections=configured_collections(qmd_backend["facts"]))
    assert c.reason == "hidden_path"


def test_managed_index_matches_clawprobes_qmd_scanner(qmd_backend, testbed):
    home, facts = qmd_backend["home"], qmd_backend["facts"]
    assert facts.missing_managed == [] and facts.open.state == "ok"
    assert {c.name for c in configured_collections(facts)} == {"memory-root-main", "memory-dir-main"}
    scan = scan_qmd(configured_collections(facts), str(home.workspace))
    assert {(f.collection, f.key) for f in scan.files} == {(d.collection, d.path) for d in facts.docs}
    cmp = compare_qmd(scan, facts.docs, datetime.now(UTC))
    assert cmp.changes == []
    direct = run_qmd(home, None, "search", qmd_backend["record"].token, "--json", "-c", "memory-dir-main",
                     testbed=testbed)
    assert cn.token_found(direct.stdout, qmd_backend["record"].token)
    results, _ = cn.parse_results(direct.stdout)
    hits = cn.token_hits(results or [], qmd_backend["record"].token)
    assert qmd_backend["record"].rel_path in [cn.result_path(h) for h in hits]
