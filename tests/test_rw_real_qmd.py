"""RW cases of the QMD backend on the real programs: qmd 2.8.3 and OpenClaw 2026.7.35 (the last build with the
QMD backend), offline, through ``clawprobe.core.probe`` (discover/fast/slow) and ``clawprobe.core.interpret``.

Homes are built once per module; the shared QMD home (``qmd_home``) serves RW21/RW27/RW42 and the hidden-path
and JSON5-control variants with one ``memory status`` and three ``memory search`` calls. Where a case needs a
piece that cannot exist here (an old build's status text, a doctor warning, a 2026.2 search failure), that
piece comes from a recorded step dir and is added on top of the real receipt.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from clawprobe.core.evidence import Extra, Step
from clawprobe.core.interpret import refine
from clawprobe.core.probe import DirectQmd, SlowEvidence, collect, fast, slow
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.recorded import direct_from_output, load_step
from tests.rw_support import DATA, after_lease, check, context, live, plant, search_only
from tests.testbed import OC_QMD, qmd_config, run_openclaw, run_process, run_qmd

QMD_JSON5 = """// RW test home, written as JSON5 on purpose (RW02 control: comments, trailing commas, unquoted keys, quotes)
{{
  memory: {{
    backend: 'qmd',
    qmd: {{ command: 'qmd', searchMode: "search",{scope} }},
  }},
  agents: {{
    defaults: {{
      workspace: '{ws}',
      memorySearch: {{ enabled: true, }},  // RW42: no embedding provider configured
    }},
  }},
  logging: {{ file: '{log}', }},
}}
"""


def _json5(home, scope: str = "") -> str:
    return QMD_JSON5.format(ws=home.workspace, log=home.log_file, scope=scope)


@pytest.fixture(scope="module")
def qmd_home(oc_home_factory, testbed):
    """QMD search mode, qmd on the PATH, a canary and a hidden canary; stages: status+search, hidden search,
    then scope deny + search."""
    home = oc_home_factory(None, name="rwqmd")
    home.write_config(_json5(home))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    spec = plant(home)
    hidden = plant(home, "memory/.drafts/clawprobe-canary.md")
    # indexed first, as an operator does: clawprobe never runs the search that would build a missing index
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    now = datetime.now(UTC)
    ev = slow(ctx, "main", now, canary=spec)
    healthy = live(ctx, "main", ev, now)
    ev_hidden = search_only(ctx, "main", hidden, now)
    hidden_r = live(ctx, "main", ev_hidden, now)
    home.write_config(_json5(home, " scope: { default: 'deny', rules: [] },"))
    ctx_deny = context(home, testbed, OC_QMD, [testbed.bin_dir])
    ev_deny = search_only(ctx_deny, "main", spec, now)
    return {"home": home, "spec": spec, "ev": ev, "healthy": healthy, "hidden": hidden_r, "denied": live(ctx_deny, "main",
                                                                                                         ev_deny, now)}


def test_rw02_json5_control_parses_clean_and_openclaw_agrees(qmd_home):
    r, ev = qmd_home["healthy"], qmd_home["ev"]
    assert r.config.error is None and r.config.configured_backend == "qmd"  # a strict-JSON parser would flag it
    assert ev.status_run.rc == 0 and ev.search_run.rc == 0  # the real 2026.7.35 loads the same JSON5 file


def test_rw21_search_mode_needs_no_vectors(qmd_home):
    r = qmd_home["healthy"]
    assert (r.canary.outcome, r.backend.effective, r.qmd.version) == ("found", "qmd", "2.8.3")
    assert r.vectors.vector_rows == 0 and r.vectors.pending and r.vectors.pending > 0  # never embedded, not needed
    text = load_step(DATA / "RW21" / "steps" / "status-text")  # the 2026.5 wording (7.35 prints "skipped")
    r2 = refine(r, Extra(tree={}, status_text=oc.parse_status_text(text.stdout)))
    d = check("RW21", r2, evidence="real 2026.7.35 QMD search mode (0 vectors, canary found) + recorded 2026.5 "
                                   "status text")
    assert "vectors not required in search mode" in d.disagreements[-1].measured


def test_rw42_doctor_provider_warning_under_qmd(qmd_home):
    r = qmd_home["healthy"]
    assert r.config.provider is None and r.canary.outcome == "found"  # no provider at all, QMD answers
    doctor = load_step(DATA / "RW42" / "steps" / "doctor")
    r2 = refine(r, Extra(tree={}, doctor=doctor))
    d = check("RW42", r2, evidence="real 2026.7.35 QMD search mode without a provider (canary found) + recorded "
                                   "2026.2 doctor warning")
    assert d.disagreements[-1].tool == "openclaw doctor" and "QMD is the effective backend" in d.disagreements[-1].measured


def test_hidden_path_canary_real(qmd_home):
    r = qmd_home["hidden"]
    check("HIDDEN-qmd", r, evidence="real 2026.7.35 QMD: canary under memory/.drafts/, `memory search` empty")
    assert r.canary.outcome == "miss" and "dot-path" in r.canary.detail


def test_rw27_cli_probe_denied_by_scope(qmd_home):
    r = qmd_home["denied"]
    check("RW27", r, evidence="real 2026.7.35: scope {default: deny, rules: []}, `memory search` exit 0 + denial")
    assert r.canary.outcome == "denied"
    assert "channel=cli, chatType=direct, session=agent:main:cli:direct:memory-search" in r.canary.detail


# ---- reachability --------------------------------------------------------------------------------------------

def test_rw04a_configured_command_removed(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("/nonexistent/bin/qmd", "search"), name="rw04a")
    home.write_memory_md()
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    r = collect(ctx, "main")  # memory status runs too: its fallback to builtin is the consequence
    d = check("RW04a", r, evidence="real 2026.7.35: memory.qmd.command /nonexistent/bin/qmd; status stderr falls back")
    assert r.qmd.failure_detail.startswith("/nonexistent/bin/qmd does not exist")  # + the working qmd found on PATH
    assert r.backend.effective == "builtin" and "spawn /nonexistent/bin/qmd ENOENT" in r.backend.fallback_detail
    assert "/nonexistent" not in (d.next_action.command or "")


def test_rw04b_bare_qmd_not_on_gateway_path(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config(None, "search"), name="rw04b")
    ctx = context(home, testbed, OC_QMD, [])
    r = fast(ctx, "main", None)
    check("RW04b", r, evidence="real 2026.7.35 config without command; PATH=/usr/bin:/bin (no qmd)")
    assert r.qmd.command == "qmd" and "'qmd' is not on the gateway's PATH from shell" in r.qmd.failure_detail


def test_rw05_variant_real_launcher_per_era(oc_home_factory, testbed, tmp_path):
    """qmd's real launcher (``#!/usr/bin/env node``) behind a systemd unit whose PATH has no node: the
    2026.4 rule gives qmd exactly that PATH (flagged); 2026.7.35 appends its own Node dir (not flagged)."""
    launcher = testbed.root / "qmd" / "node_modules" / "@tobilu" / "qmd" / "bin" / "qmd"
    empty = tmp_path / "unit-bin"
    empty.mkdir()
    home = oc_home_factory(qmd_config(str(launcher), "search"), name="rw05")
    unit = home.home / ".config" / "systemd" / "user" / "openclaw-gateway.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(f"[Service]\nExecStart=/usr/bin/openclaw gateway run\nEnvironment=PATH={empty}\n"
                    f"Environment=OPENCLAW_STATE_DIR={home.state_dir}\n")
    ctx = context(home, testbed, OC_QMD)
    old_era = fast(ctx.model_copy(update={"openclaw_version": "2026.4.5"}), "main", None)
    check("RW05-era-735", old_era, evidence="real qmd launcher, real unit file; the 2026.4 child-PATH rule")
    assert old_era.gateway.env_source == "systemd" and old_era.gateway.path_dirs == [str(empty)]
    pkg = testbed.openclaw_package(OC_QMD)
    new_era = fast(ctx.model_copy(update={"openclaw": [str(testbed.node), str(pkg / "openclaw.mjs")]}), "main", None)
    assert new_era.openclaw.version == OC_QMD and new_era.qmd.resolves is True and new_era.qmd.version == "2.8.3"


def test_rw09_native_binding(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config(str(testbed.qmd_node20), "search"), name="rw09")
    home.write_memory_md()
    made = run_qmd(home, "main", "collection", "add", str(home.workspace), "--name", "memory-root-main", "--mask",
                   "MEMORY.md", testbed=testbed)  # the agent's index, made while the install still worked
    assert made.rc == 0, made.stderr
    ctx = context(home, testbed, OC_QMD)
    r = fast(ctx, "main", None)
    check("RW09", r, evidence="real qmd 2.8.3 under Node 20: `--version` exit 0, `qmd ls` on the agent index SIGSEGV")
    assert r.qmd.version == "2.8.3" and r.qmd.resolves is True and r.qmd.store_ok is False
    assert "SIGSEGV" in r.qmd.failure_detail


# ---- retrieval / freshness -------------------------------------------------------------------------------------

def test_rw10_lowercase_memory_md_real(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="rw10")
    spec = plant(home, "memory.md")  # the only root memory file, lowercase
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    now = datetime.now(UTC)
    r = live(ctx, "main", search_only(ctx, "main", spec, now), now)
    check("RW10-lowercase", r, evidence="real 2026.7.35 QMD: canary only in a lowercase root memory.md")
    assert r.canary.outcome == "miss" and "only MEMORY.md is a root memory file" in r.canary.detail


def test_rw14_collections_in_default_store(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="rw14")
    home.write_memory_md()
    spec = plant(home)
    default_env = {"PATH": "/usr/bin:/bin", "HOME": str(home.home), "TMPDIR": str(home.tmp_dir), "NO_COLOR": "1"}
    made = run_process([testbed.qmd, "collection", "add", str(home.workspace / "memory"), "--name", "notes"],
                       env=default_env, cwd=home.root, timeout=60)  # by hand, in the DEFAULT store
    assert made.rc == 0, made.stderr
    assert run_qmd(home, "main", "collection", "list", testbed=testbed).rc == 0  # the managed store: no collections
    direct = run_qmd(home, "main", "search", spec.token, "--json", "-c", "memory-root-main", "-c", "memory-dir-main",
                     testbed=testbed)
    assert direct.rc == 1 and "Collection not found: memory-root-main" in direct.stderr + direct.stdout
    failed = load_step(DATA / "RW14" / "steps" / "search")  # 2026.2: 7.35 would create the collections itself
    now = datetime.now(UTC)
    ev = SlowEvidence(taken_at=now, agent_id="main", canary=spec,
                      search=oc.parse_search(failed.stdout, failed.stderr, failed.rc, failed.seconds),
                      direct=direct_from_output(Step(name="direct", rc=direct.rc, stdout=direct.stdout,
                                                     stderr=direct.stderr, seconds=direct.seconds), spec.token,
                                                spec.expected_path))
    r = live(ctx := context(home, testbed, OC_QMD, [testbed.bin_dir]), "main", ev, now)
    check("RW14", r, evidence="real qmd 2.8.3 stores (default store with a collection, managed store empty) + "
                              "recorded 2026.2 `memory search` failure")
    assert "notes (" in r.canary.detail and "collections were built in the wrong store" in r.canary.detail
    assert ctx.config.error is None and isinstance(ev.direct, DirectQmd) and ev.direct.found is False


@pytest.fixture(scope="module")
def ghost_home(oc_home_factory, testbed):
    """RW15: two notes indexed by one real OpenClaw search; then one is edited (token C → D), then the other deleted."""
    home = oc_home_factory(qmd_config("qmd", "search"), name="rw15")
    home.write_memory_md()
    gone = plant(home, "memory/clawprobe-canary.md")
    edited = plant(home, "memory/rotated.md")
    ctx = context(home, testbed, OC_QMD, [testbed.bin_dir])
    first = search_only(ctx, "main", gone, datetime.now(UTC))  # the first search indexes everything
    assert first.search.hits, first.search
    new = plant(home, "memory/rotated.md")  # rotation: same file, new token
    edit_r = fast(ctx, "main", None)
    outputs = {}
    for tok in (edited.token, new.token):
        res = run_qmd(home, "main", "search", tok, "--json", testbed=testbed)
        outputs[tok] = res.stdout
    (home.workspace / gone.expected_path).unlink()
    del_r = fast(ctx, "main", None)
    old = run_qmd(home, "main", "search", gone.token, "--json", testbed=testbed)
    return {"ctx": ctx, "edit": edit_r, "del": del_r, "outputs": outputs, "edited": edited, "new": new,
            "old_out": old.stdout, "gone": gone}


def test_rw15_deleted_note_still_served(ghost_home):
    g = ghost_home
    r = g["del"]
    r = refine(r, Extra(tree={}, old_token_outputs={g["gone"].token: g["old_out"]}))
    check("RW15", r, now=after_lease(r), evidence="real qmd 2.8.3 + 2026.7.35: note indexed, deleted; direct "
                                                      "qmd still finds its token")
    assert r.canary.old_token_found is True and "memory/clawprobe-canary.md" in r.freshness.ghost_files


def test_rw15_variant_edited_note(ghost_home):
    from clawprobe.core.canary import token_found
    g = ghost_home
    assert token_found(g["outputs"][g["edited"].token], g["edited"].token)  # the old text is still served
    assert not token_found(g["outputs"][g["new"].token], g["new"].token)  # the new text cannot be found
    r = g["edit"]
    r = refine(r, Extra(tree={}, old_token_outputs={g["edited"].token: g["outputs"][g["edited"].token]}))
    check("RW15-edit", r, now=after_lease(r), evidence="real: rotated canary, old token still found by direct qmd")
    assert r.freshness.unindexed_files == ["memory/rotated.md"] and not r.freshness.ghost_files


def test_a_unit_without_path_is_judged_with_the_managers_path_not_the_shells(oc_home_factory, testbed):
    """A systemd user unit that sets no PATH, no gateway running: the service gets systemd's default PATH, not the
    login shell's. qmd resolves from this shell (the test bed's bin dir is on its PATH) but not from the service,
    so the verdict is qmd_unavailable — never healthy — and the repair pins the qmd the shell found (it is
    installed: "install qmd" would be wrong)."""
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.probes.gateway import SYSTEMD_DEFAULT_PATH

    home = oc_home_factory(qmd_config("qmd", "search"), name="unitnopath")
    unit = home.home / ".config" / "systemd" / "user" / "openclaw-gateway.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(f"[Service]\nExecStart=/usr/bin/openclaw gateway run\nEnvironment=OPENCLAW_STATE_DIR={home.state_dir}\n")
    r = fast(context(home, testbed, OC_QMD, [testbed.bin_dir]), "main", None)
    assert r.gateway.env_source == "systemd" and r.gateway.path_dirs == SYSTEMD_DEFAULT_PATH.split(":")
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "not_on_path")
    assert r.qmd.candidate_path == str(testbed.bin_dir / "qmd") and r.qmd.candidate_version == "2.8.3"
    assert str(testbed.bin_dir / "qmd") in (d.next_action.command or "") and "install" not in d.next_action.title.lower()
    assert any(f.tag == "service_manager_path" and SYSTEMD_DEFAULT_PATH in f.message for f in r.findings)


def test_session_memory_switched_on_but_never_exported_is_not_healthy(qmd_home):
    """The real healthy QMD receipt (memory canary found) with the operator's session-memory opt-in in the config
    (``experimental.sessionMemory``, ``sources: [memory, sessions]``): without ``memory.qmd.sessions.enabled`` no
    transcript ever reaches QMD — retrieval_failed · sessions_export, whatever the memory canary says; with it,
    or without the opt-in, healthy."""
    from clawprobe.core.diagnosis import diagnose

    r = qmd_home["healthy"]
    assert diagnose(r, r.checked_at).verdict.value == "healthy"
    search = {"experimental": {"sessionMemory": True}, "sources": ["memory", "sessions"]}
    tree = {"memory": {"backend": "qmd", "qmd": {"searchMode": "search"}}, "agents": {"defaults": {"memorySearch": search}}}

    def verdict(t: dict) -> tuple[str, str | None, str | None]:
        d = diagnose(refine(r, Extra(tree=t)), r.checked_at)
        return d.verdict.value, d.reason, d.next_action.command

    assert verdict(tree) == ("retrieval_failed", "sessions_export", "openclaw config set memory.qmd.sessions.enabled true")
    exported = {**tree, "memory": {"backend": "qmd", "qmd": {"searchMode": "search", "sessions": {"enabled": True}}}}
    assert verdict(exported)[0] == "healthy"
    assert verdict({**tree, "agents": {"defaults": {"memorySearch": {"sources": ["memory"]}}}})[0] == "healthy"
    # the opt-in is the agent's own: set on its entry only (fails), or opted out on its entry under opted-in defaults
    own = {"memory": tree["memory"], "agents": {"list": [{"id": "main", "default": True, "memorySearch": search}]}}
    assert verdict(own)[:2] == ("retrieval_failed", "sessions_export")
    out = {**tree, "agents": {**tree["agents"], "list": [{"id": "main", "memorySearch": {"sources": ["memory"]}}]}}
    assert verdict(out)[0] == "healthy"
