"""Model cache + download watcher on real files: ipull-format partial downloads growing under an injected
clock, completion by rename, local GGUF models, and a real offline ``qmd embed`` that can never start its
download (alive lock PID, no model file) → stalled within the warm-up window's bound."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.downloads import DownloadPolicy, DownloadWatcher, apply_to_vectors, assess, format_downloads, should_open
from clawprobe.core.probes.models import (
    DEFAULT_MODELS,
    EXPECTED_BYTES,
    agent_qmd_dirs,
    cache_file_name,
    gather_model_cache,
    ipull_progress,
    model_cache_dir,
)
from clawprobe.core.proc import kill_tree
from clawprobe.core.receipt import ConfigFacts, Receipt
from clawprobe.core.verdicts import Verdict
from tests.downloads_ipull import CHUNK, IpullDownload
from tests.testbed import OpenClawHome, qmd_env, run_qmd

MiB = 1024 * 1024


class Clock:
    """An injectable UTC clock that starts at the real time and moves only when told."""

    def __init__(self) -> None:
        self.t = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


def _dirs(tmp_path: Path, agent: str = "main") -> tuple[Path, Path, Path]:
    cfg, cache = agent_qmd_dirs(tmp_path / "state", agent)
    models = model_cache_dir(cache)
    models.mkdir(parents=True)
    return cfg, cache, models


def _qmd_receipt(mode: str = "vsearch") -> Receipt:
    return Receipt(checked_at=datetime.now(UTC),
                   config=ConfigFacts(configured_backend="qmd", search_mode=mode))


def test_cache_file_names_follow_node_llama_cpp():
    names = {role: cache_file_name(uri) for role, uri in DEFAULT_MODELS.items()}
    assert names == {"embed": "hf_ggml-org_embeddinggemma-300M-Q8_0.gguf",
                     "generate": "hf_tobil_qmd-query-expansion-1.7B-q4_k_m.gguf",
                     "rerank": "hf_ggml-org_qwen3-reranker-0.6b-q8_0.gguf"}
    assert set(names.values()) == set(EXPECTED_BYTES)
    # repo name kept when the file does not start with it; a branch and sub-folders are kept too
    assert cache_file_name("hf:Qwen/Qwen3-Embedding-0.6B-GGUF/model-q8.gguf") == "hf_Qwen_Qwen3-Embedding-0.6B-GGUF_model-q8.gguf"
    assert cache_file_name("hf:u/m-GGUF/sub/m-Q4.gguf#dev") == "hf_u_m-GGUF_dev_sub_m-Q4.gguf"
    assert cache_file_name("hf:user/model:Q4_K_M") is None
    assert cache_file_name("/models/x.gguf") is None


def test_search_mode_needs_no_model_and_query_needs_three(tmp_path):
    cfg, cache, _ = _dirs(tmp_path)
    env = {"HOME": str(tmp_path)}
    ev = gather_model_cache("search", cfg, cache, env)
    rep, _ = assess(ev, ev.taken_at)
    assert ev.models == [] and rep.status == "ready"
    assert apply_to_vectors(_qmd_receipt("search").vectors, rep).missing_models == []
    ev = gather_model_cache("query", cfg, cache, env)
    assert [m.spec.role for m in ev.models] == ["embed", "generate", "rerank"]
    rep, _ = assess(ev, ev.taken_at)
    assert rep.status == "missing" and rep.missing_roles == ["embed", "generate", "rerank"]


def test_ipull_download_progress_eta_stall_and_completion(tmp_path):
    cfg, cache, models = _dirs(tmp_path)
    # the agent's index.yml names a custom embed model (qmd writes a models: block like this)
    (cfg / "qmd").mkdir(parents=True)
    uri = "hf:acme/tiny-embed-GGUF/tiny-embed-Q8_0.gguf"
    (cfg / "qmd" / "index.yml").write_text(f"collections: {{}}\nmodels:\n  embed: {uri}\n", encoding="utf-8")
    env = {"HOME": str(tmp_path), "QMD_EMBED_MODEL": "hf:ignored/x-GGUF/x.gguf"}  # index.yml wins over env
    final = models / "hf_acme_tiny-embed-Q8_0.gguf"
    total = 3 * CHUNK + 123_457
    dl = IpullDownload(final, total)
    clock = Clock()
    policy = DownloadPolicy(stall_after_s=120, warmup_window_s=1800, rate_window_s=60)
    w = DownloadWatcher(policy, clock)
    w.first_semantic_probe()

    def look():
        return w.observe(gather_model_cache("vsearch", cfg, cache, env, now=clock()))

    dl.start(0)
    first = look()
    emb = first.models[0]
    assert emb.name == final.name and emb.state == "downloading"
    assert emb.total_bytes == total  # apparent size − trailer, exact
    assert emb.done_bytes is not None and emb.done_bytes < 64 * 1024  # sparse: only the trailer block
    assert first.status == "waiting"
    assert should_open(None, first)

    dl.complete(0)
    clock.advance(10)
    r = look()
    emb = r.models[0]
    assert abs(emb.done_bytes - CHUNK) <= 8192  # allocated blocks, not the apparent size
    assert emb.rate_bps == pytest.approx((emb.done_bytes - first.models[0].done_bytes) / 10)
    assert emb.eta_s == pytest.approx((total - emb.done_bytes) / emb.rate_bps)
    assert r.status == "waiting" and "progressing, not a failure" in r.detail  # bytes arrive at a measured rate
    assert not should_open(first, r)
    # the trailer agrees with the blocks: one complete chunk
    ev = gather_model_cache("vsearch", cfg, cache, env)
    assert ev.models[0].trailer["chunks"] == [2, 0, 0, 0] and ev.models[0].trailer["chunkSize"] == CHUNK
    assert ev.models[0].spec.source == "index.yml" and ev.models[0].spec.uri == uri

    dl.start(1)
    dl.complete(1)
    clock.advance(10)
    r = look()
    assert r.models[0].state == "downloading" and r.models[0].done_bytes > 2 * CHUNK - 8192

    # no growth: still "downloading" just before the stall time, stalled from it on
    clock.advance(119)
    assert look().models[0].state == "downloading"
    clock.advance(1)
    r = look()
    emb = r.models[0]
    assert emb.state == "stalled" and r.status == "stalled"
    assert emb.stalled_since is not None and emb.rate_bps is None and emb.eta_s is None
    assert any("no growth since" in e for e in r.evidence)
    vec = apply_to_vectors(_qmd_receipt().vectors, r)
    rec = _qmd_receipt().model_copy(update={"vectors": vec})
    d = diagnose(rec, clock())
    assert (d.verdict, d.reason) == (Verdict.VECTOR_NOT_READY, "model_download")
    assert any("stalled" in e for e in d.evidence)
    lines = format_downloads(vec, clock())
    assert lines[0] == "models: stalled" and "stalled" in lines[1] and final.name in lines[1]

    # growth resumes, then ipull truncates and renames: complete
    dl.complete(2)
    clock.advance(5)
    assert look().models[0].state == "downloading"
    dl.finish()
    clock.advance(5)
    r = look()
    assert r.models[0].state == "complete" and r.models[0].done_bytes == total
    assert not final.with_name(final.name + ".ipull").exists()
    assert r.missing_roles == ["generate"]  # vsearch also needs the query-expansion model
    assert r.status == "missing"


def test_trailer_alone_gives_progress_when_blocks_are_unknown(tmp_path):
    cfg, cache, models = _dirs(tmp_path)
    name = cache_file_name(DEFAULT_MODELS["embed"])
    dl = IpullDownload(models / name, 4 * CHUNK)
    dl.complete(0)
    dl.complete(2)
    dl.start(1)
    ev = gather_model_cache("vsearch", cfg, cache, {"HOME": str(tmp_path)})
    e = ev.models[0]
    assert e.trailer["chunks"] == [2, 1, 2, 0]
    done, total = ipull_progress(e.model_copy(update={"ipull": e.ipull.model_copy(update={"allocated": None})}))
    assert (done, total) == (2 * CHUNK, 4 * CHUNK)
    assert e.spec.expected_bytes == EXPECTED_BYTES[name]


def test_past_the_window_a_progressing_download_is_a_failure(tmp_path):
    cfg, cache, models = _dirs(tmp_path)
    dl = IpullDownload(models / cache_file_name(DEFAULT_MODELS["embed"]), 8 * CHUNK)
    clock = Clock()
    w = DownloadWatcher(DownloadPolicy(stall_after_s=60, warmup_window_s=100), clock)
    w.first_semantic_probe()
    for i in range(4):
        dl.complete(i)
        clock.advance(30)
        r = w.observe(gather_model_cache("vsearch", cfg, cache, {}, now=clock()))
        assert r.models[0].state == "downloading"
    assert r.status == "failed" and "window" in r.evidence[-1]


def test_corrupt_and_local_models(tmp_path, testbed):
    tb = testbed
    cfg, cache, models = _dirs(tmp_path)
    env = {"HOME": str(tmp_path), "QMD_EMBED_MODEL": str(tb.model)}
    ev = gather_model_cache("vsearch", cfg, cache, env)
    rep, _ = assess(ev, ev.taken_at)
    assert rep.models[0].state == "complete" and ev.models[0].spec.local  # the real GGUF on disk
    gen = models / cache_file_name(DEFAULT_MODELS["generate"])
    gen.write_bytes(b"<!DOCTYPE html><html>captive portal</html>")
    rep, _ = assess(gather_model_cache("vsearch", cfg, cache, env), ev.taken_at)
    assert rep.models[1].state == "corrupt" and rep.status == "failed"
    gen.write_bytes(b"GGUF" + b"\0" * 100)  # magic, but truncated
    rep, _ = assess(gather_model_cache("vsearch", cfg, cache, env), ev.taken_at)
    assert rep.models[1].state == "size_mismatch"
    env["QMD_EMBED_MODEL"] = "models/missing.gguf"  # relative to the workspace (qmd's cwd)
    ev = gather_model_cache("vsearch", cfg, cache, env, base_dir=tmp_path)
    assert ev.models[0].spec.path == str(tmp_path / "models" / "missing.gguf")
    assert assess(ev, ev.taken_at)[0].models[0].state == "missing"


@pytest.fixture(scope="module")
def offline_embed(testbed):
    """A real agent QMD store and a real ``qmd embed`` with the default (remote) embed model, offline."""
    tb = testbed
    home = OpenClawHome.create()
    home.write_memory_md("# Memory\n\nOffline embed test.\n")
    home.write_memory("notes.md", "# Notes\n\nSomething to embed.\n")
    res = run_qmd(home, None, "collection", "add", str(home.workspace / "memory"), "--name", "memory-dir-main",
                  "--mask", "**/*.md", testbed=tb)
    assert res.rc == 0, res.stderr
    proc = subprocess.Popen([str(tb.qmd), "embed"], env=qmd_env(home), cwd=str(home.workspace),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    yield home, proc
    kill_tree(proc.pid)
    proc.wait(timeout=10)
    home.cleanup()


def test_real_offline_qmd_embed_is_a_stall_not_a_download(offline_embed):
    home, proc = offline_embed
    cfg, cache = home.qmd_xdg_config(), home.qmd_xdg_cache()
    lock = cache / "qmd" / ".qmd-embed.lock"
    deadline = time.monotonic() + 30
    while not lock.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert lock.exists(), f"qmd embed took no lock (rc={proc.poll()})"
    time.sleep(2.0)  # real time passes: the downloader retries, no file appears
    clock = Clock()
    policy = DownloadPolicy(stall_after_s=20, warmup_window_s=1800)
    w = DownloadWatcher(policy, clock)
    w.first_semantic_probe()
    env = {"HOME": str(home.home)}
    r = w.observe(gather_model_cache("vsearch", cfg, cache, env, now=clock()))
    emb = r.models[0]
    assert proc.poll() is None, "offline qmd embed is expected to hang in the download lookup"
    tree = psutil.Process(proc.pid)
    assert r.embed_pid in {tree.pid, *(c.pid for c in tree.children(recursive=True))}
    assert emb.state == "starting" and r.status == "waiting"
    assert "no bytes received yet" in r.detail and "progressing" not in r.detail  # nothing moves: never "progressing"
    models_dir = cache / "qmd" / "models"
    assert not models_dir.exists() or list(models_dir.iterdir()) == []  # no model file, no .ipull
    clock.advance(20)
    r = w.observe(gather_model_cache("vsearch", cfg, cache, env, now=clock()))
    emb = r.models[0]
    assert proc.poll() is None
    assert emb.state == "stalled" and r.status == "stalled", r.detail
    assert r.window_ends_at is not None and clock() < r.window_ends_at  # stalled well within the window
    assert "never appeared" in emb.detail and str(r.embed_pid) in emb.detail
    rec = _qmd_receipt()
    rec = rec.model_copy(update={"vectors": apply_to_vectors(rec.vectors, r)})
    d = diagnose(rec, clock())
    # the stalled process holds qmd's embed lock: the action stops it first (breaker round 15, A4)
    assert (d.verdict, d.reason) == (Verdict.VECTOR_NOT_READY, "download_stalled")
    assert rec.vectors.embed_running_pid == r.embed_pid and rec.vectors.download_status == "stalled"
    assert d.next_action.command == f"kill {r.embed_pid}"
    # a one-shot reading (no history) dates the stall from the lock's mtime
    one, _ = assess(gather_model_cache("vsearch", cfg, cache, env), datetime.now(UTC) + timedelta(seconds=25),
                    policy)
    assert one.models[0].state == "stalled"
    # kill the embed (process tree): the lock stays behind but its PID is dead → nothing is downloading
    kill_tree(proc.pid)
    proc.wait(timeout=10)
    assert lock.exists()
    r = w.observe(gather_model_cache("vsearch", cfg, cache, env, now=clock()))
    assert r.embed_pid is None and r.models[0].state == "missing" and r.status == "missing"
    assert os.path.exists(lock)


def test_one_shot_reading_dates_the_window_from_the_cache_and_policy_from_env(tmp_path):
    cfg, cache, models = _dirs(tmp_path)
    dl = IpullDownload(models / cache_file_name(DEFAULT_MODELS["embed"]), 4 * CHUNK)
    dl.complete(0)  # just written: growing now
    two_hours_ago = time.time() - 7200
    os.utime(models, (two_hours_ago, two_hours_ago))  # the .ipull appeared two hours ago
    ev = gather_model_cache("vsearch", cfg, cache, {})
    now = datetime.now(UTC)
    rep, _ = assess(ev, now, DownloadPolicy(warmup_window_s=1800))
    assert rep.models[0].state == "downloading"
    assert rep.status == "failed" and rep.window_started_at < now - timedelta(minutes=119)
    rep, _ = assess(ev, now, DownloadPolicy(warmup_window_s=3 * 3600))
    assert rep.status == "waiting"
    pol = DownloadPolicy.from_env({"CLAWPROBE_STALL_AFTER_S": "45", "CLAWPROBE_WARMUP_WINDOW_S": "oops"})
    assert (pol.stall_after_s, pol.warmup_window_s) == (45.0, 1800.0)
    from clawprobe.core.downloads import watcher_for
    w = watcher_for(("state", "main-test"))
    assert watcher_for(("state", "main-test")) is w
    first = w.observe(ev, now)
    dl.complete(1)
    second = w.observe(gather_model_cache("vsearch", cfg, cache, {}), now + timedelta(seconds=5))
    assert first.models[0].rate_bps is None and second.models[0].rate_bps == pytest.approx(
        (second.models[0].done_bytes - first.models[0].done_bytes) / 5)


def test_unparsable_index_yml_is_reported_and_defaults_apply(tmp_path):
    cfg, cache, _ = _dirs(tmp_path)
    (cfg / "qmd").mkdir(parents=True)
    (cfg / "qmd" / "index.yml").write_text("models: [\n", encoding="utf-8")
    ev = gather_model_cache("query", cfg, cache, {"QMD_RERANK_MODEL": "/models/rr.gguf"})
    assert ev.config_error and "YAML" in ev.config_error and ev.config_models is None
    assert [(m.spec.role, m.spec.source) for m in ev.models] == [
        ("embed", "qmd default"), ("generate", "qmd default"), ("rerank", "env QMD_RERANK_MODEL")]
