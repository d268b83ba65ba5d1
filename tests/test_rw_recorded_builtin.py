"""RW cases of the builtin engine (and era boundaries) that need what cannot exist here — remote providers,
an Ollama server, other Node builds, old OpenClaw releases, a live chat turn — replayed from recorded evidence
bundles through ``clawprobe.core.recorded`` (the live probes' own parsers), plus two real recordings of the test bed
(tests/data/recorded, referenced read-only)."""

from __future__ import annotations

from tests.rw_support import check_bundle


def _claims(r):
    return [(c.tool, c.claim) for c in r.status_claims if not c.agrees]


def test_retired_keys_on_2026_9_6():
    r, d = check_bundle("RETIRED-96")
    assert r.openclaw.has_qmd_backend is False and {"memory.backend", "memory.qmd"} <= set(r.config.retired_keys)
    assert r.config.error is None  # retired, not "invalid": the same file loads on 2026.7.35


def test_retired_variant_backend_key_only():
    r, d = check_bundle("RETIRED-backend-only")
    assert r.agent_id == "writer" and r.config.retired_keys == ["memory.backend"]


def test_rw16_dirty_codeword_recorded():
    r, d = check_bundle("RW16")
    assert r.freshness.unindexed_files == ["memory/2026-11-30.md"] and "Dirty: yes" in r.freshness.detail
    assert r.canary.outcome == "miss"


def test_rw24_tool_deadline_shorter_than_latency():
    r, d = check_bundle("RW24")
    assert (r.canary.outcome, r.canary.latency_s, r.canary.deadline_s) == ("timeout", 17.3, 15.0)
    assert r.canary.returned_path == "memory/clawprobe-canary.md"  # the CLI did find it: not a miss
    assert any("17.3 s vs deadline 15.0 s" in e for e in d.evidence)


def test_timeout_kind_seconds_wording():
    r, d = check_bundle("RW24-seconds-wording")
    assert r.agent_id == "analyst" and r.canary.deadline_s == 8.0 and r.canary.outcome == "timeout"


def test_rw30_symlinked_root_file_aborts_sync():
    r, d = check_bundle("RW30")
    assert "USER.md -> ../../vault/USER.md" in r.freshness.detail
    assert r.freshness.last_proven_current.isoformat().startswith("2026-11-30T01:10")


def test_rw30_variant_memory_md():
    r, d = check_bundle("RW30-memory-md")
    assert "MEMORY.md -> ../../vault/MEMORY.md" in r.freshness.detail


def test_rw30_variant_nested_daily_note():
    r, d = check_bundle("RW30-daily-note")
    assert r.agent_id == "ops" and "memory/daily/2026-11-29.md ->" in r.freshness.detail


def test_rw32_extra_paths_dropped():
    r, d = check_bundle("RW32")
    assert "tasks/ (0 of 2 indexed)" in r.canary.detail and "ideas/ (0 of 1 indexed)" in r.canary.detail
    assert r.freshness.last_proven_current is None  # a drop after a successful index is not staleness


def test_rw33_variant_2026_9_6_recording():
    r, d = check_bundle("RW33-96")
    assert r.openclaw.version == "2026.9.6" and "missing-provider-auth" in r.builtin.unavailable_detail


def test_rw33_variant_mistral_401():
    r, d = check_bundle("RW33-mistral")
    assert r.config.provider_explicit and "401" in r.builtin.unavailable_detail


def test_rw33_variant_unknown_words_exit_status():
    r, d = check_bundle("RW33-exit")
    assert r.agent_id == "research" and r.config.provider_explicit and r.canary.outcome == "error"
    assert "exits 1 with provider 'mistral' pinned" in r.builtin.unavailable_detail
    assert "HTML maintenance page" in r.builtin.unavailable_detail  # OpenClaw's own words, quoted


def test_rw34_disabled_without_provider():
    r, d = check_bundle("RW34")
    assert r.config.provider is None and "no embeddings provider available" in r.builtin.unavailable_detail


def test_identity_mismatch_in_status_keyword_search_works():
    r, d = check_bundle("IDENTITY-96")
    assert r.builtin.fts_only is True and r.canary.outcome == "found"
    claim = ("openclaw memory status --json",
             "indexIdentity mismatched (index was built for model fts-only, expected text-embedding-3-small)")
    assert claim in _claims(r)


def test_rw35_local_model_load_error():
    r, d = check_bundle("RW35")
    assert "quantization" in r.builtin.unavailable_detail


def test_rw35_variant_degrading_build():
    r, d = check_bundle("RW35-degrading")
    assert r.builtin.fts_only is True and "local model load failed" in (r.builtin.degraded_reason or "")


def test_rw36_ollama_batches_time_out():
    r, d = check_bundle("RW36")
    assert "12 of 52 files on disk stay unindexed" in r.freshness.detail
    assert "the provider probe still says ready" in r.freshness.detail


def test_rw36_variant_never_indexed():
    check_bundle("RW36-never-indexed")


def test_rw37_runtime_without_node_sqlite():
    r, d = check_bundle("RW37")
    assert "Node v22.12.0" in r.builtin.unavailable_detail and "red herring" in r.builtin.unavailable_detail


def test_rw38_no_fts5_keyword_half_empty():
    r, d = check_bundle("RW38")
    assert r.canary.outcome == "miss" and "no such module: fts5" in r.canary.detail


def test_rw38_variant_no_provider():
    r, d = check_bundle("RW38-no-provider")
    assert "no embedding provider is left" in r.builtin.unavailable_detail


def test_rw40_rebuild_always_fails():
    r, d = check_bundle("RW40")
    assert "--force" in r.builtin.unavailable_detail and "EACCES" not in r.builtin.unavailable_detail


def test_rw41_vector_store_unknown():
    r, d = check_bundle("RW41")
    assert ("openclaw memory status", "Vector: unknown") in _claims(r)


def test_rw41_variant_unprobed_wording():
    r, d = check_bundle("RW41-unprobed")
    assert ("openclaw memory status", "Vector: indexed (unprobed)") in _claims(r)


def test_rw28_variant_sources_gate():
    r, d = check_bundle("RW28-builtin-sources")
    assert r.agent_id == "ops" and "sources does not include \"sessions\"" in r.canary.detail
