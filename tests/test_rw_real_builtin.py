"""Builtin-engine RW cases on the real programs (OpenClaw 2026.7.35 and 2026.9.6, offline, ``provider: none``
unless the case is about the provider), through ``clawprobe.core.probe`` and ``clawprobe.core.interpret``.

Every home is independent, so the module fixture builds them in a small thread pool (each builder runs one or
two real ``openclaw memory search`` calls — the builtin search syncs the index itself, no ``memory index``
call is needed). Cases whose state must not be touched by OpenClaw again (a corrupt or locked index) work on
copies of a real, indexed state.
"""

from __future__ import annotations

import shutil
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import fast, slow
from tests.rw_support import after_lease, check, context, live, plant, search_only
from tests.testbed import OC_LATEST, OC_QMD, OpenClawHome, builtin_config, run_openclaw

CJK_NOTE = "# 笔记\n\n我们的项目代号是青龙计划，负责人是王小明。\n"


def _copy(src: OpenClawHome, dst_root, cfg) -> OpenClawHome:
    shutil.copytree(src.root, dst_root, symlinks=True)
    home = OpenClawHome(dst_root)
    home.write_config(cfg)
    return home


def build_plain(make, tb, tmp):
    """RW34 control → RW16 (a file added after the index), plus copies for RW39 (corrupt) and the lock case."""
    cfg = builtin_config("none")
    home = make(cfg, name="rw16")
    home.write_memory_md()
    spec = plant(home)
    for i in range(30):  # enough pages that overwritten bytes land inside table data
        home.write_memory(f"notes/n{i}.md", f"# Note {i}\n\n" + f"filler about topic {i}. " * 40 + "\n")
    ctx = context(home, tb, OC_QMD)
    now = datetime.now(UTC)
    ev = search_only(ctx, "main", spec, now)
    out = {"control": live(ctx, "main", ev, now)}
    corrupt = _copy(home, tmp / "rw39", cfg)
    db = corrupt.builtin_db()
    size = db.stat().st_size
    with open(db, "r+b") as f:  # a SIGTERM mid-write, as bytes: overwrite the middle of the file
        f.seek(size // 2)
        f.write(b"\xde\xad\xbe\xef" * 2048)
    cctx = context(corrupt, tb, OC_QMD)
    out["corrupt_fast"] = fast(cctx, "main", None)
    cev = search_only(cctx, "main", spec, datetime.now(UTC))  # how the build reacts
    out["corrupt_ev"] = cev
    out["corrupt"] = live(cctx, "main", cev)
    locked = _copy(home, tmp / "locked", cfg)
    lctx = context(locked, tb, OC_QMD)
    con = sqlite3.connect(str(locked.builtin_db()), timeout=1, isolation_level=None)
    try:
        con.execute("BEGIN EXCLUSIVE")  # another writer (a second gateway, a stuck index run)
        locked.write_memory("late.md", "# Late\n\nwritten while the index is locked\n")
        lev = search_only(lctx, "main", spec, datetime.now(UTC))
    finally:
        con.execute("ROLLBACK")
        con.close()
    out["locked"] = live(lctx, "main", lev)
    home.write_memory("2026-11-30.md", "# Today\n\nCodeword ZEBRA-WALNUT-77 noted.\n")
    out["dirty"] = live(ctx, "main", None)
    return out


def build_cjk(make, tb, tmp):
    home = make(builtin_config("none", agents={"defaults": {"memorySearch": {"store": {"fts": {"tokenizer": "trigram"}}}}}),
                name="rw26")
    home.write_memory_md()
    home.write_memory("cjk.md", CJK_NOTE)
    ctx = context(home, tb, OC_QMD)
    now = datetime.now(UTC)
    question = search_only(ctx, "main", plant_spec("青龙计划的负责人是谁", "memory/cjk.md"), now)
    literal = search_only(ctx, "main", plant_spec("青龙计划", "memory/cjk.md"), now)
    return {"question": live(ctx, "main", question, now), "literal": live(ctx, "main", literal, now)}


def plant_spec(token: str, path: str):
    from clawprobe.core.probe import CanarySpec

    return CanarySpec(token=token, expected_path=path, planted_at=datetime.now(UTC))


def build_symlinks(make, tb, tmp):
    out = {}
    home = make(builtin_config("none"), name="rw29")
    vault = home.root / "vault"
    (vault / "memory").mkdir(parents=True)
    (vault / "MEMORY.md").write_text("# Memory\n\nsynced from the vault\n")
    home.symlink("MEMORY.md", vault / "MEMORY.md")
    home.symlink("memory", vault / "memory")
    spec = plant(home, "memory/clawprobe-canary.md")  # written through the link: lands in the vault
    ctx = context(home, tb, OC_QMD)
    now = datetime.now(UTC)
    out["dir"] = live(ctx, "main", search_only(ctx, "main", spec, now), now)
    h96 = make(builtin_config("none", version=OC_LATEST), name="rw29b")
    h96.write_memory_md()
    h96.write_memory("real.md", "# Real\n\na regular file\n")
    v2 = h96.root / "vault"
    v2.mkdir()
    spec2 = plant(h96, "memory/linked.md")
    (h96.workspace / "memory" / "linked.md").rename(v2 / "linked.md")
    h96.symlink("memory/linked.md", v2 / "linked.md")
    ctx2 = context(h96, tb, OC_LATEST)
    now = datetime.now(UTC)  # after this home's canary was planted (a receipt never predates its evidence)
    out["file96"] = live(ctx2, "main", search_only(ctx2, "main", spec2, now), now)
    return out


def _deps(root, dep_dir: str, n: int) -> None:
    for i in range(n):
        p = root / dep_dir.format(i=i) / "README.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# package {i}\n\nInstall with your package manager.\n")
    for name in ("architecture.md", "runbook.md", "decisions.md"):
        (root / "docs").mkdir(exist_ok=True)
        (root / "docs" / name).write_text(f"# {name}\n\nproject notes\n")


def build_bloat(make, tb, tmp):
    out = {}
    for key, version, dep in (("nm", OC_QMD, "node_modules/pkg-{i}"),
                              ("venv", OC_LATEST, ".venv/lib/python3.11/site-packages/pkg_{i}")):
        project = tmp / f"project-{key}"
        _deps(project, dep, 26)
        paths = [str(project)] if version == OC_QMD else [str(project), "~/notes-moved-away"]  # the 2nd is gone
        extra = {"agents": {"defaults": {"memorySearch": {"extraPaths": paths}}}} if version == OC_QMD \
            else {"memory": {"search": {"extraPaths": paths}}}
        home = make(builtin_config("none", version=version, **extra), name=f"rw31{key}")
        home.write_memory_md()
        spec = plant(home)
        ctx = context(home, tb, version)
        now = datetime.now(UTC)
        out[key] = live(ctx, "main", search_only(ctx, "main", spec, now), now)
    return out


def build_providers(make, tb, tmp):
    out = {}
    for key, version, cfg in (
            ("openai", OC_QMD, builtin_config("openai")),
            ("unset735", OC_QMD, builtin_config(None)),
            ("unset96", OC_LATEST, builtin_config(None, version=OC_LATEST)),
            ("voyage96", OC_LATEST, builtin_config("voyage", version=OC_LATEST)),
            ("None96", OC_LATEST, builtin_config("None", version=OC_LATEST)),
            ("unreachable96", OC_LATEST, builtin_config("openai", version=OC_LATEST, memory={"search": {"remote": {
                "apiKey": "sk-clawprobe-test-not-a-key-0000", "baseUrl": "http://127.0.0.1:9/v1"}}})),
            ("local", OC_QMD, {"agents": {"defaults": {"memorySearch": {
                "provider": "local", "local": {"modelPath": "hf:Xenova/all-MiniLM-L6-v2"}}}}})):
        home = make(cfg, name=f"prov-{key}")
        home.write_memory_md()
        spec = plant(home)
        ctx = context(home, tb, version)
        now = datetime.now(UTC)
        out[key] = live(ctx, "main", search_only(ctx, "main", spec, now), now)
    home = make(builtin_config("local", version=OC_LATEST), name="local96")  # no canary: no search runs
    home.write_memory_md()
    out["local96_index"] = run_openclaw(home, OC_LATEST, "memory", "index", testbed=tb)
    ctx = context(home, tb, OC_LATEST)
    out["local96"] = live(ctx, "main", slow(ctx, "main"))
    home = make(builtin_config("openai", version=OC_LATEST, memory={"search": {"remote": {  # never indexed (no store)
        "apiKey": "sk-clawprobe-test-not-a-key-0000", "baseUrl": "http://127.0.0.1:9/v1"}}}), name="deadend96")
    home.write_memory_md()
    plant(home)  # the check withholds its search (it would build the store) and prints the index run, which fails
    out["deadend96_index"] = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", testbed=tb)
    ctx = context(home, tb, OC_LATEST)
    out["deadend96"] = live(ctx, "main", slow(ctx, "main"))
    home = make(builtin_config(None), name="unset735-noindex")  # 7.35 resolves an unset provider to openai
    home.write_memory_md()
    plant(home)
    out["unset735_noindex_index"] = run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", testbed=tb)
    ctx = context(home, tb, OC_QMD)
    out["unset735_noindex"] = live(ctx, "main", slow(ctx, "main"))
    home = make(builtin_config("none", version=OC_LATEST), name="node20")
    home.write_memory_md()
    wrapper = home.root / "openclaw-on-node20"
    wrapper.write_text(f"#!/bin/sh\nexec {tb.node20} {tb.openclaw_package(OC_LATEST)}/openclaw.mjs \"$@\"\n")
    wrapper.chmod(0o755)
    ctx = context(home, tb, OC_LATEST, extra={"CLAWPROBE_OPENCLAW": str(wrapper)})
    ev = slow(ctx, "main")
    out["node20"] = live(ctx, "main", ev)
    out["node20_ctx"] = ctx
    return out


@pytest.fixture(scope="module")
def states(oc_home_factory, testbed, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rw-builtin")
    builders = {"plain": build_plain, "cjk": build_cjk, "links": build_symlinks, "bloat": build_bloat,
                "prov": build_providers}
    with ThreadPoolExecutor(3) as pool:
        futures = {k: pool.submit(f, oc_home_factory, testbed, tmp) for k, f in builders.items()}
        return {k: f.result() for k, f in futures.items()}


def test_rw34_control_provider_none_is_healthy(states):
    r = states["plain"]["control"]
    check("RW34-control", r, evidence="real 2026.7.35 builtin, provider none: `memory search` finds the canary")
    assert r.builtin.fts_only is True and r.config.provider == "none" and r.canary.result_shape == "builtin"


def test_rw16_new_file_after_index_real(states):
    r = states["plain"]["dirty"]
    check("RW16-real", r, now=after_lease(r), evidence="real 2026.7.35: indexed, then memory/2026-11-30.md written; "
                                                       "checked a lease later (no OpenClaw call: its search would sync)")
    assert r.freshness.unindexed_files == ["memory/2026-11-30.md"]


def test_rw39_corrupt_builtin_index(states):
    s = states["plain"]
    before = s["corrupt_fast"]
    check("RW39", before, evidence="real 2026.7.35 builtin index copy with overwritten bytes: read-only quick_check")
    assert "quick_check" in before.builtin.unavailable_detail
    after = s["corrupt"]  # the build's own reaction: no recovery, FTS unavailable, an empty answer
    reaction = " ".join(s["corrupt_ev"].search.stderr.lines)  # wording depends on where the damage lands
    assert "fts unavailable" in reaction and not s["corrupt_ev"].search.hits, reaction
    d = check("RW39", after, evidence="real 2026.7.35: the corrupt copy probed, then searched by OpenClaw (malformed)")
    assert after.canary.outcome in ("miss", "error") and "openclaw-agent.sqlite" in d.next_action.dont


def test_locked_builtin_index_real(states):
    r = states["plain"]["locked"]
    check("LOCKED-735", r, evidence="real 2026.7.35: another connection holds BEGIN EXCLUSIVE on the builtin index")
    assert "database is locked" in r.builtin.unavailable_detail and r.canary.outcome != "found"


def test_rw26_builtin_cjk_question(states):
    r, control = states["cjk"]["question"], states["cjk"]["literal"]
    check("RW26", r, evidence="real 2026.7.35 builtin, tokenizer trigram: the question misses, the literal run hits")
    assert control.canary.outcome == "found" and control.canary.returned_path == "memory/cjk.md"
    assert "trigram" in r.canary.detail


def test_rw29_symlinked_memory_dir(states):
    r = states["links"]["dir"]
    check("RW29", r, evidence="real 2026.7.35 builtin: MEMORY.md and memory/ are symlinks into a vault")
    assert "memory -> " in r.canary.detail and "symlinks are skipped" in r.canary.detail


def test_rw29_variant_single_file_on_2026_9_6(states):
    r = states["links"]["file96"]
    check("RW29-96-file", r, evidence="real 2026.9.6 builtin: memory/linked.md is a symlink")
    assert "memory/linked.md -> " in r.canary.detail and r.openclaw.version == OC_LATEST


def test_rw31_extra_paths_dependency_bloat(states):
    r = states["bloat"]["nm"]
    d = check("RW31", r, evidence="real 2026.7.35 builtin: extraPaths = a project with 26 node_modules READMEs")
    assert r.canary.outcome == "found" and "node_modules" in next(w.message for w in d.warnings if w.tag == "index_bloat")


def test_rw31_variant_venv_on_2026_9_6(states):
    r = states["bloat"]["venv"]
    d = check("RW31-96-venv", r, evidence="real 2026.9.6 builtin: extraPaths = a project whose .venv dominates")
    assert ".venv" in next(w.message for w in d.warnings if w.tag == "index_bloat")
    gone = [w.message for w in d.warnings if w.tag == "extra_path_missing"]
    assert len(gone) == 1 and "~/notes-moved-away" in gone[0] and "does not exist" in gone[0]


def test_rw33_explicit_provider_down(states):
    r = states["prov"]["openai"]
    check("RW33", r, evidence="real 2026.7.35: provider openai without a key, `memory search` exit 1")
    assert "No API key found for provider" in r.builtin.unavailable_detail


def test_a_provider_word_openclaw_does_not_know_is_pinned_not_unset(states):
    """``provider: "None"`` (capital N) on 2026.9.6 (7.35 alike, measured): OpenClaw's names are case-sensitive, so
    index and search fail "Unknown memory embedding provider: None". clawprobe took it for ``none`` (or for an unset
    provider: ``implicit_provider``, "unset/auto") — breaker round 23, F3. It is a pinned provider that fails closed,
    and the repair names the provider's name among what to fix, at the era's key."""
    r = states["prov"]["None96"]
    d = diagnose(r)
    assert r.config.provider_explicit and (d.verdict.value, d.reason) == ("memory_unavailable", "explicit_provider"), \
        d.evidence
    assert "Unknown memory embedding provider: None" in " ".join(d.evidence)
    steps = " ".join(f"{s.title} {s.check}" for s in d.next_action.steps)
    assert "provider name" in steps and "memory.search.provider none" in steps, steps


def test_explicit_provider_unreachable_is_memory_unavailable_not_waiting(states):
    """2026.9.6, provider openai pinned, its endpoint refuses connections (nothing listens on port 9): the
    search's bootstrap sync fails with ``fetch failed`` — the engine fails closed, not "wait for the update"."""
    r = states["prov"]["unreachable96"]
    d = diagnose(r)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "explicit_provider", 2), d.evidence
    assert "fetch failed" in r.builtin.unavailable_detail
    assert "sk-clawprobe-test-not-a-key-0000" not in r.model_dump_json()


def test_a_failed_index_run_on_a_dead_endpoint_is_memory_unavailable_not_never_indexed(states):
    """2026.9.6, provider openai pinned, nothing indexed yet, its endpoint refuses (breaker round 10, s02): the check
    withholds its search (it would build the store) and prints ``memory index``; the operator runs it and it fails
    (``Memory index failed (main): fetch failed | bad port``, in the log). The next check used to say
    ``unverified · never_indexed`` and print the same index run again, for ever; it now reads the failed run in the
    log as the pinned provider failing closed, its retries included (no ``[unrecognized]`` line)."""
    assert states["prov"]["deadend96_index"].rc == 1, states["prov"]["deadend96_index"].stderr[-300:]
    r = states["prov"]["deadend96"]
    d = diagnose(r)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "explicit_provider", 2), d.evidence
    assert "fetch failed" in (r.builtin.unavailable_detail or ""), r.builtin.unavailable_detail
    assert not [e.line for e in r.ledger if e.kind == "unrecognized"], r.ledger
    assert "memory index" not in d.next_action.command


def test_an_unset_provider_whose_index_run_fails_on_2026_7_35_is_memory_unavailable_not_never_indexed(states):
    """2026.7.35, provider unset, no key, canary planted, never indexed (breaker round 15, B1): the check withholds
    its search and printed ``memory index``, which fails ("No API key found for provider \"openai\"": 7.35 resolves
    an unset provider to openai and fails closed) — and the next check printed it again. The failed index run and
    status' resolved provider now make it the provider failing closed, with the provider fix as the action."""
    assert states["prov"]["unset735_noindex_index"].rc == 1, states["prov"]["unset735_noindex_index"].stderr[-300:]
    r = states["prov"]["unset735_noindex"]
    d = diagnose(r)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "implicit_provider", 2), d.evidence
    assert r.config.provider is None and "No API key found" in (r.builtin.unavailable_detail or "")
    assert "memory index" not in d.next_action.command and "provider none" in d.next_action.command


def test_a_pinned_provider_whose_search_exits_non_zero_is_memory_unavailable(states):
    """2026.9.6, provider voyage pinned: every ``memory search`` exits 1 ("Unknown memory embedding provider: voyage":
    a provider this build does not ship, ``provider_missing`` since breaker round 5): the pinned provider fails
    closed, so memory is unavailable, not a retrieval miss — OpenClaw's own words from this check's search quoted."""
    r = states["prov"]["voyage96"]
    d = diagnose(r)
    assert (d.verdict.value, d.reason, d.exit_code) == ("memory_unavailable", "explicit_provider", 2), d.evidence
    detail = r.builtin.unavailable_detail or ""
    assert "Unknown memory embedding provider: voyage" in detail and "openclaw memory search" in detail, detail


def test_rw34_variant_2026_7_35_fails_closed(states):
    r = states["prov"]["unset735"]
    check("RW34-735", r, evidence="real 2026.7.35: provider unset → openai, no key: search exit 0, [] + sync failure")
    assert r.config.provider is None and r.canary.outcome == "miss" and "sync failed" in r.builtin.unavailable_detail


def test_rw34_variant_2026_9_6_keyword_only(states):
    r = states["prov"]["unset96"]
    check("RW34-96", r, evidence="real 2026.9.6: provider unset, no key: FTS search finds the canary")
    assert r.builtin.fts_only is True and r.canary.outcome == "found"


def test_rw35_variant_2026_7_35_real(states):
    r = states["prov"]["local"]
    check("RW35-735", r, evidence="real 2026.7.35: provider local with an hf: id; no local embedding runtime")
    assert "llama-cpp-provider" in r.builtin.unavailable_detail or "local" in r.builtin.unavailable_detail


def test_rw35_variant_2026_9_6_no_canary_real(states):
    index = states["prov"]["local96_index"]
    assert index.rc != 0 and "local" in index.stderr + index.stdout  # the state: OpenClaw's index run fails on it
    r = states["prov"]["local96"]
    check("RW35-96-nocanary", r, evidence="real 2026.9.6: provider local without the llama.cpp plugin, no canary; "
                                          "`memory index` failed, status counts 0 files")
    assert r.canary.planted_at is None and "local" in r.builtin.unavailable_detail


def test_rw37_variant_2026_9_6_on_node20(states):
    r = states["prov"]["node20"]
    check("RW37-96-node20", r, evidence="real 2026.9.6 run by the system Node 20: refuses to start (node:sqlite)")
    assert "Node 20" in r.builtin.unavailable_detail and any("--version" in e for e in r.probe_errors)
