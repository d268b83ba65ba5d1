"""Vector readiness cases on the real programs (qmd 2.8.3, OpenClaw 2026.7.35, the real all-MiniLM GGUF model).

Three homes, each built once: an interrupted embed (RW17), an embed killed at ``embedTimeoutMs`` (RW18), and
an embedded home that walks through RW22 → RW20 → RW43 (query mode without the generate/rerank models, the
``qmd update`` notice after a real embed, orphaned vectors after repeated edits). Offline, only the
query-expansion/rerank models cannot exist here: their recorded pieces (a vsearch hit, the recorded host's
model cache, a kernel OOM line) are added where the case needs them.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from clawprobe.core.evidence import Extra, HostRecord
from clawprobe.core.interpret import refine
from clawprobe.core.probe import SlowEvidence, fast
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.probes.qmd_index import update_notice_count
from clawprobe.core.recorded import load_step
from tests.rw_support import DATA, check, context, live, plant, search_only
from tests.testbed import OC_QMD, qmd_config, run_openclaw, run_qmd, use_local_embed_model

TOKEN = "CLAWPROBE-CANARY-7QF3K2MXA9DZL4WB"  # the recorded RW20 vsearch hit holds this synthetic token
OOM = ("[Sun Nov 30 02:58:11 2026] Out of memory: Killed process 48211 (node) total-vm:9123456kB, "
       "anon-rss:6543210kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:14336kB oom_score_adj:0")


@pytest.fixture(scope="module")
def interrupted(oc_home_factory, testbed):
    """RW17: indexed in search mode (the canary found), then vsearch configured and a real `qmd embed` of the
    default model cut off (it is still fetching the model) — the way an update cycle kills it."""
    home = oc_home_factory(qmd_config("qmd", "search"), name="rw17")
    home.write_memory_md()
    spec = plant(home)
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    now = datetime.now(UTC)
    ev = search_only(ctx, "main", spec, now)
    assert ev.search.hits, ev.search
    cut = run_qmd(home, "main", "embed", timeout=6, testbed=testbed)
    assert cut.timed_out, cut
    search_mode = live(ctx, "main", ev, now)
    home.update_config({"memory": {"qmd": {"searchMode": "vsearch"}}})
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    return home, live(ctx, "main", ev, now), search_mode


def test_rw17_embed_interrupted(interrupted):
    home, r, _ = interrupted
    d = check("RW17", r, evidence="real qmd 2.8.3: `qmd embed` killed mid-run (lock left), vsearch configured")
    assert r.vectors.pending == r.vectors.documents == 2 and r.vectors.vector_rows == 0
    assert "stale_embed_lock" in [w.tag for w in d.warnings]


def test_rw17_control_search_mode_is_healthy(interrupted):
    _, _, r = interrupted
    d = check("RW17-search-mode", r, evidence="real: the same index with 2 pending, searchMode search")
    assert r.vectors.pending == 2 and r.canary.outcome == "found"
    assert [m.mode for m in d.modes if m.ready] == ["search"]


def test_rw18_embed_killed_at_timeout(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "vsearch", qmd={"update": {"embedTimeoutMs": 3000}}), name="rw18")
    home.write_memory_md()
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0 and "qmd embed timed out after 3000ms" in res.stderr, res
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    r = live(ctx, "main", None)
    check("RW18", r, evidence="real 2026.7.35 `memory index` (vsearch, embedTimeoutMs 3000): embed killed, logged")
    assert "embedTimeoutMs = 3000 ms" in r.vectors.detail and r.vectors.pending


@pytest.fixture(scope="module")
def embedded(oc_home_factory, testbed):
    """Index + real embeddings through OpenClaw (QMD_EMBED_MODEL = the local GGUF at its first index), then the
    RW22, RW20 and RW43 stages on the same index."""
    home = oc_home_factory(qmd_config("qmd", "vsearch"), name="rw20")
    home.write_memory_md()
    spec = plant(home, token=TOKEN)
    for i in range(10):
        home.write_memory(f"notes/n{i}.md", f"# Note {i}\n\nTopic {i}: version one of this note.\n")
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], timeout=180,
                       extra_env={"QMD_EMBED_MODEL": str(testbed.model)}, testbed=testbed)
    assert res.rc == 0, res
    use_local_embed_model(home, testbed=testbed)  # index.yml keeps the model qmd embedded with
    out = {"home": home, "spec": spec}
    # RW22: query mode — embeddings complete, the generate/rerank models were never fetched (offline)
    home.update_config({"memory": {"qmd": {"searchMode": "query"}}})
    out["rw22"] = fast(context(home, testbed, OC_QMD, [testbed.bin_dir]), "main", None)
    # RW20: edit the notes, then the managed-store update/embed a user runs, then `qmd update` again
    home.update_config({"memory": {"qmd": {"searchMode": "vsearch"}}})
    for i in range(10):
        home.write_memory(f"notes/n{i}.md", f"# Note {i}\n\nTopic {i}: version two of this note.\n")
    for args in (("update",), ("embed",)):
        assert run_qmd(home, "main", *args, timeout=120, testbed=testbed).rc == 0
    notice = run_qmd(home, "main", "update", testbed=testbed)
    out["notice"] = update_notice_count(notice.stdout + notice.stderr)
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    out["rw20_real"] = r = live(ctx, "main", None)
    hit = load_step(DATA / "RW20" / "steps" / "search")  # a vsearch hit needs the query-expansion model
    cache = ModelCacheEvidence.model_validate_json((DATA / "RW20" / "model-cache.json").read_text())
    ev = SlowEvidence(taken_at=r.checked_at, agent_id="main", canary=spec,
                      search=oc.parse_search(hit.stdout, hit.stderr, hit.rc, hit.seconds))
    out["rw20"] = live(ctx, "main", ev, r.checked_at,
                       extra=Extra(tree={}, qmd_update_notice=out["notice"]), model_cache=cache)
    # RW43: more edits, update + embed again: the old vectors stay as orphans until `qmd cleanup`
    for i in range(10):
        home.write_memory(f"notes/n{i}.md", f"# Note {i}\n\nTopic {i}: version three of this note.\n")
    for args in (("update",), ("embed",)):
        assert run_qmd(home, "main", *args, timeout=120, testbed=testbed).rc == 0
    home.update_config({"memory": {"qmd": {"searchMode": "search"}}})
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    now = datetime.now(UTC)
    out["rw43"] = live(ctx, "main", search_only(ctx, "main", spec, now), now)
    return out


def test_rw22_first_semantic_query_models(embedded):
    r = embedded["rw22"]
    assert r.vectors.pending == 0 and r.vectors.vector_rows and r.vectors.missing_models == ["generate", "rerank"]
    r = refine(r, Extra(tree={}, host=HostRecord(cpus=4, mem_total_bytes=8 * 1024**3, kernel_log=OOM)))
    d = check("RW22", r, evidence="real: 12 docs embedded with the local GGUF, query mode, generate/rerank models "
                                  "absent + recorded kernel OOM line")
    assert "resource" in [w.tag for w in d.warnings] and "Out of memory: Killed process 48211" in d.warnings[-1].message
    query = next(m for m in d.modes if m.mode == "query")
    assert query.vectors.state == "ok" and query.models.state == "fail"


def test_rw20_update_notice_misreports(embedded):
    real, r, n = embedded["rw20_real"], embedded["rw20"], embedded["notice"]
    assert n is not None and n > 0 and real.vectors.pending == 0  # the notice counts against qmd's default model
    d = check("RW20", r, evidence=f"real qmd 2.8.3 + local GGUF: embed done, `qmd update` still says {n} hashes "
                                  "need vectors; recorded vsearch hit and the recorded host's model cache")
    assert ("qmd update", f"{n} unique hashes need vectors") in [(c.tool, c.claim) for c in d.disagreements]
    assert r.vectors.orphans == 10 and r.vectors.vector_rows == 22  # the first edit round: no bloat yet


def test_rw43_orphaned_vectors(embedded):
    r = embedded["rw43"]
    d = check("RW43", r, evidence="real qmd 2.8.3: 12 docs, two rounds of edits + update + embed, no cleanup")
    assert r.vectors.orphans == 20 and r.vectors.vector_rows == 32 and r.canary.outcome == "found"
    assert "20 of 32 vector chunks (62%)" in next(w.message for w in d.warnings if w.tag == "index_bloat")
