"""RW cases of the QMD backend that need what cannot exist here (Windows, macOS/launchd, a GPU, old builds, a
live gateway's chat turns): recorded evidence bundles (tests/data/rw) assembled by ``clawprobe.core.recorded`` through
the live probes' own parsers, then ``diagnose``. Each test also checks the evidence that led there."""

from __future__ import annotations

from tests.rw_support import check_bundle


def _claims(r):
    return [(c.tool, c.claim) for c in r.status_claims if not c.agrees]


# ---- config drift / era ----------------------------------------------------------------------------------------

def test_rw03_gateway_runs_old_memory_config():
    r, d = check_bundle("RW03")
    assert r.gateway.running and r.gateway.pid == 4242
    assert "agents.defaults.memorySearch.sources" in r.gateway.drift_keys
    assert "agents.defaults.memorySearch.experimental.sessionMemory" in r.gateway.drift_keys


def test_rw03_variant_reload_off():
    r, d = check_bundle("RW03-reload-off")
    assert r.agent_id == "ops" and r.gateway.drift_keys == ["agents.defaults.memorySearch.extraPaths"]
    assert any("reload disabled" in e.detail for e in r.backend.evidence)


def test_identity_paused_under_drift():
    r, d = check_bundle("IDENTITY-drift")
    assert set(r.gateway.drift_keys) == {"agents.defaults.memorySearch.provider", "agents.defaults.memorySearch.model"}
    assert "index-identity" in d.next_action.dont  # only after the restart, and only then, the index command


def test_rw04_status_deep_misreports_before_2026_3_31():
    r, d = check_bundle("RW04-deep")
    assert r.openclaw.version == "2026.3.12" and r.qmd.resolves is False
    assert ("openclaw memory status", "backend qmd · vector available (looks healthy)") in _claims(r)
    assert "status_misreport" in [w.tag for w in d.warnings]
    assert "/Users/sam/.bun/bin/qmd" not in (d.next_action.command or "")  # never re-pin the missing path


def test_rw04c_query_timeout():
    r, d = check_bundle("RW04c")
    assert r.canary.outcome == "timeout" and r.canary.deadline_s == 10.0 and r.canary.latency_s == 14.2
    assert r.config.search_timeout_s == 10.0
    assert any("14.2 s vs deadline 10.0 s" in e for e in d.evidence)


def test_rw04c_variant_timeout_switches_to_builtin():
    r, d = check_bundle("RW04c-fallback")
    assert r.backend.fallback_reason == "timeout" and "timed out after 10000ms" in r.backend.fallback_detail


# ---- service PATH / transport / path mangling -----------------------------------------------------------------------

def test_rw05_systemd_unit_path_lacks_node():
    r, d = check_bundle("RW05")
    assert r.gateway.env_source == "systemd" and r.gateway.path_dirs == ["/usr/local/bin", "/usr/bin", "/bin"]
    assert r.qmd.resolves is False and "'node' is not on the gateway's PATH from systemd" in r.qmd.failure_detail
    assert r.openclaw.version == "2026.4.5"


def test_rw06_launchd_minimal_path():
    r, d = check_bundle("RW06")
    assert r.gateway.env_source == "launchd" and "/usr/local/bin" not in r.gateway.path_dirs
    assert "exit 127" in r.qmd.failure_detail


def test_rw07_mcporter_spawn_einval():
    r, d = check_bundle("RW07")
    assert r.backend.effective == "builtin" and r.backend.fallback_reason == "transport_spawn"  # the consequence
    assert "mcporter" in r.qmd.failure_detail and "spawn EINVAL" in r.qmd.failure_detail


def test_rw07_variant_mcporter_missing_on_linux():
    r, d = check_bundle("RW07-linux")
    assert r.agent_id == "helper" and "spawn mcporter ENOENT" in r.qmd.failure_detail
    assert r.qmd.version == "2.8.3"  # qmd itself is fine: the transport is what fails


def test_rw08_cmd_path_mangled():
    r, d = check_bundle("RW08")
    assert "C:UserssamAppDataRoamingnpmqmd.cmd" in r.qmd.failure_detail
    claims = _claims(r)
    assert ("openclaw memory status", "Indexed: 0/37 files · 0 chunks (looks like an empty index)") in claims


def test_rw08_variant_forward_slashes():
    r, d = check_bundle("RW08-forward-slashes")
    assert r.agent_id == "work" and "D:toolsqmdqmd.cmd" in r.qmd.failure_detail


# ---- fallback ---------------------------------------------------------------------------------------------------

def test_rw10_lowercase_collection_clash():
    r, d = check_bundle("RW10")
    assert r.backend.effective == "builtin" and "memory-alt-main" in r.backend.fallback_detail
    assert r.qmd.store_ok is True  # qmd works: the clash, not the binary, switched it off


def test_rw10_variant_other_agent_both_files():
    r, d = check_bundle("RW10-research")
    assert r.agent_id == "research" and "memory-alt-research" in r.backend.fallback_detail


def test_rw11_sticky_fallback():
    r, d = check_bundle("RW11")
    assert r.canary.direct_qmd_found is True and r.canary.outcome == "found" and r.canary.result_shape == "qmd"
    assert r.backend.effective == "builtin"  # what the gateway serves, not the fresh CLI process
    assert "since 2026-11-29T08:02:00" in r.backend.fallback_detail
    assert ("openclaw memory search (fresh CLI process)", "answered by qmd") in _claims(r)


def test_rw12_builtin_engine_under_qmd():
    r, d = check_bundle("RW12")
    assert r.backend.effective == "builtin" and "No API key found for provider gemini" in r.backend.fallback_detail


def test_rw12_variant_401_wording():
    r, d = check_bundle("RW12-401")
    assert "401 Unauthorized" in r.backend.fallback_detail


# ---- retrieval -----------------------------------------------------------------------------------------------

def test_rw13_openclaw_never_runs_the_search():
    r, d = check_bundle("RW13")
    assert r.canary.outcome == "miss" and r.canary.direct_qmd_found is True
    assert r.freshness.method.startswith("log: qmd sync completed") and r.backend.effective == "qmd"


def test_rw13_variant_other_hits():
    r, d = check_bundle("RW13-ops")
    assert r.agent_id == "ops" and r.canary.outcome == "miss" and r.canary.direct_qmd_found is True


def test_rw14_variant_recorded_2026_2_failure():
    r, d = check_bundle("RW14-2026.2")
    assert "Collection not found: memory-root-main" in r.canary.detail and r.canary.outcome == "error"


def test_rw19_old_qmd_partial_embeds():
    r, d = check_bundle("RW19")
    assert r.qmd.version == "2.5.1" and r.vectors.pending == 0 and r.vectors.partial_documents == 1
    assert ("qmd status", "Pending: 0 (no Pending line)") in _claims(r)
    assert "312" in r.vectors.detail


def test_rw21_variant_unavailable_wording():
    r, d = check_bundle("RW21-2026.5")
    assert ("openclaw memory status --deep", "Embeddings: unavailable") in _claims(r)
    assert "vectors not required in search mode" in r.status_claims[-1].measured


def test_rw23_rerank_context_vram():
    r, d = check_bundle("RW23")
    assert "failed to create any rerank context" in r.canary.detail and r.vectors.pending == 0


def test_rw23_variant_fallback_outranks():
    r, d = check_bundle("RW23-fallback")
    assert r.backend.effective == "builtin" and "rerank context" in r.backend.fallback_detail


def test_timeout_kind_slow_but_within_deadline_is_healthy():
    r, d = check_bundle("RW24-within-deadline")
    assert r.canary.outcome == "found" and r.canary.latency_s == 3.1 and r.canary.deadline_s == 4.0


def test_timeout_kind_slow_miss_is_not_a_timeout():
    r, d = check_bundle("RW24-slow-miss")
    assert r.canary.outcome == "miss" and r.canary.latency_s == 3.9
    assert ".drafts" in r.canary.detail


def test_rw25_qmd_cjk_bm25():
    r, d = check_bundle("RW25")
    assert r.qmd.version == "1.0.7" and r.canary.direct_qmd_found is False


def test_rw27_variant_2026_3_wording():
    r, d = check_bundle("RW27-unknown-context")
    assert r.agent_id == "support" and "channel=unknown, chatType=unknown" in r.canary.detail


def test_rw28_sessions_never_exported():
    r, d = check_bundle("RW28")
    assert "memory.qmd.sessions.enabled is not true" in r.canary.detail


def test_rw42_variant_recorded_2026_2():
    r, d = check_bundle("RW42-2026.2")
    assert ("openclaw doctor", r.status_claims[-1].claim) in _claims(r) and "no embedding provider" in r.status_claims[-1].claim


def test_rw44_heap_limit():
    r, d = check_bundle("RW44")
    assert "heap" in r.canary.detail and r.vectors.documents == 9120


def test_rw44_variant_fallback_outranks():
    r, d = check_bundle("RW44-fallback")
    assert r.backend.fallback_reason == "resource" and "heap" in r.backend.fallback_detail


def test_rw18_variant_cpu_vps_recorded():
    r, d = check_bundle("RW18-vps")
    assert r.vectors.pending == 1123 and "120000" in r.vectors.detail
    assert "resource" in [w.tag for w in d.warnings] and "load 16.2 on 6 cores" in d.warnings[-1].message


def test_rw20_variant_recorded_2026_5():
    r, d = check_bundle("RW20-2026.5")
    assert ("qmd update", "21193 unique hashes need vectors") in _claims(r)
    assert r.vectors.pending == 0 and r.vectors.missing_models == [] and r.vectors.download_status == "ready"
