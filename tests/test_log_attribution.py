"""Log records that are not this agent's, and state clawprobe must not create.

OpenClaw's default log (``/tmp/openclaw/openclaw-YYYY-MM-DD.log``) is shared by every OpenClaw process of
the user: other installs, other ``HOME``s, CLI runs under an older config. Found by a fresh tester: a line
from another install made a fresh home ``fallback_active``, and another install's ``qmd sync completed``
made a never-indexed home look fresh. Here the same records reach the real probe through ``logging.file``
(the parser and the scope are the same for both files; writing into the real shared ``/tmp/openclaw`` from a
test would pollute every other OpenClaw on the machine).

Also: ``openclaw memory search`` builds a missing QMD index (real 2026.7.35), so the slow probe does not run
it on a never-indexed agent, and no CLI runs at all when the state dir does not exist.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import CanarySpec, clear_caches, discover, fast, slow
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_log as oclog
from tests.testbed import OC_QMD, OpenClawHome, qmd_config

NOW = datetime.now(UTC).replace(microsecond=0)
TOKEN = "CLAWPROBE-CANARY-LOGSCOPE00000001"


def record(at: datetime, message: str, level: str = "WARN") -> str:
    """One tslog record as OpenClaw 2026.7.35 writes it (subsystem memory)."""
    return json.dumps({"0": '{"subsystem":"memory"}', "1": message, "time": at.isoformat(),
                       "_meta": {"logLevelName": level, "name": '{"subsystem":"memory"}'}})


def facts(lines: list[str], scope: oclog.LogScope) -> oclog.LogFacts:
    return oclog.interpret(oclog.parse_lines(lines)[0], scope=scope)


# ---- the scope, pure --------------------------------------------------------------------------------------

def test_a_fallback_naming_another_qmd_command_is_another_installs():
    scope = oclog.LogScope(agent_id="main", qmd_commands=["qmd"])
    lines = [record(NOW, "qmd binary unavailable (sk-SEC…MAND); falling back to builtin: spawn sk-SEC…MAND ENOENT")]
    assert facts(lines, scope).fallbacks == []
    own = [record(NOW, "qmd binary unavailable (qmd); falling back to builtin: spawn qmd ENOENT")]
    assert [f.tag for f in facts(own, scope).fallbacks] == ["binary_unavailable"]


def test_a_masked_command_matches_the_configured_one():
    scope = oclog.LogScope(agent_id="main", qmd_commands=["sk-SECRET-COMMAND"])
    lines = [record(NOW, "qmd binary unavailable (sk-SEC…MAND); falling back to builtin: spawn sk-SEC…MAND ENOENT")]
    assert [f.tag for f in facts(lines, scope).fallbacks] == ["binary_unavailable"]
    other = oclog.LogScope(agent_id="main", qmd_commands=["sk-SECRET-OTHER"])
    assert facts(lines, other).fallbacks == []


def test_collections_of_another_agent_are_not_this_agents():
    msg = "qmd memory failed; switching to builtin index: Error: qmd search failed: collection memory-alt-research is not usable"
    assert facts([record(NOW, msg)], oclog.LogScope(agent_id="main")).fallbacks == []
    assert [f.tag for f in facts([record(NOW, msg)], oclog.LogScope(agent_id="research")).fallbacks] == ["runtime_error"]
    dashed = msg.replace("memory-alt-research", "memory-dir-my-agent")
    assert len(facts([record(NOW, dashed)], oclog.LogScope(agent_id="my-agent")).fallbacks) == 1


def test_state_records_older_than_the_configuration_are_dropped_syncs_and_reloads_kept():
    scope = oclog.LogScope(agent_id="main", qmd_commands=["qmd"], not_before=NOW - timedelta(seconds=60))
    old = NOW - timedelta(seconds=120)
    lines = [
        record(old, "gateway ready", "INFO"),
        record(old, "qmd binary unavailable (qmd); falling back to builtin: spawn qmd ENOENT"),
        record(old, "qmd embed failed (interval): Error: timed out; backing off for 60s"),
        record(old, 'qmd sync completed for agent "main" reason=interval durationMs=400', "INFO"),
        record(old, "config change detected; evaluating reload (memory.qmd.command)", "INFO"),
        record(NOW, "qmd search denied by scope (channel=x, chatType=group, session=s)"),
    ]
    f = facts(lines, scope)
    assert f.fallbacks == [] and f.embed_failures == []
    assert [s.reason for s in f.syncs] == ["interval"] and len(f.boots) == 1
    assert [c.keys for c in f.config_changes] == [["memory.qmd.command"]]
    assert len(f.scope_denials) == 1  # after not_before: current


# ---- the probe on real files ------------------------------------------------------------------------------

def _write_log(home: OpenClawHome, lines: list[str]) -> None:
    home.log_file.parent.mkdir(parents=True, exist_ok=True)
    home.log_file.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    for p in [path, *path.rglob("*")]:
        os.utime(p, (t, t))


@pytest.fixture(scope="module")
def never_indexed(tmp_path_factory, testbed) -> OpenClawHome:
    """A QMD home (real qmd on PATH) whose agent was never indexed, with notes an hour old and a log holding
    another install's fallback and a sync line for the same agent id."""
    home = OpenClawHome.create(tmp_path_factory.mktemp("never-indexed"))
    home.write_config(qmd_config("qmd", "search", provider="none"))
    home.write_memory_md()
    home.write_canary(TOKEN)
    _age(home.workspace, 3600)
    _write_log(home, [
        record(NOW - timedelta(seconds=30), 'qmd sync completed for agent "main" reason=cli durationMs=300', "INFO"),
        record(NOW - timedelta(seconds=20), "qmd binary unavailable (/opt/other/qmd); falling back to builtin: spawn "
               "/opt/other/qmd ENOENT"),
    ])
    return home


def _ctx(home: OpenClawHome, testbed):
    clear_caches()
    return discover(env=home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
                                                      "CLAWPROBE_DATA_DIR": str(home.root / "clawprobe")}))


def test_another_installs_records_neither_fall_back_nor_freshen(never_indexed, testbed):
    r = fast(_ctx(never_indexed, testbed), "main", None, NOW)
    assert r.backend.fallback_reason is None, r.backend.fallback_detail
    assert r.freshness.method.startswith("no QMD index at ") and r.freshness.stale_reason == "never_indexed"
    assert sorted(r.freshness.unindexed_files) == ["MEMORY.md", "memory/canary.md"]
    d = diagnose(r, NOW)
    assert (d.verdict.value, d.reason) == ("stale_index", "never_indexed")
    assert "memory index --agent main" in (d.next_action.command or "") and "never been built" in d.next_action.title


def test_a_fallback_from_before_the_config_fix_is_history(tmp_path, testbed):
    home = OpenClawHome.create(tmp_path)
    home.write_config(qmd_config("qmd", "search", provider="none"))
    home.write_memory_md()
    before = datetime.fromtimestamp(home.config_path.stat().st_mtime, tz=UTC) - timedelta(seconds=30)
    line = "qmd binary unavailable (qmd); falling back to builtin: spawn qmd ENOENT"
    _write_log(home, [record(before, line)])
    assert fast(_ctx(home, testbed), "main", None, NOW).backend.fallback_reason is None
    after = datetime.now(UTC)
    _write_log(home, [record(before, line), record(after, line)])  # the fixed config fell back again
    r = fast(_ctx(home, testbed), "main", None, after)
    # no gateway process runs: a CLI run's line, cited, not a gateway in fallback (tester A5)
    assert r.backend.fallback_reason is None and any(e.at == after for e in r.backend.evidence)
    ctx = _ctx(home, testbed)
    assert ctx.gateway is not None
    running = gw.GatewayProcess(pid=4242, started_at=before - timedelta(seconds=60), state_dir=str(home.state_dir))
    ctx = ctx.model_copy(update={"gateway": ctx.gateway.model_copy(update={"processes": [running]})})
    r = fast(ctx, "main", None, after)  # a gateway running since before the fix: its fallback it is
    assert r.backend.fallback_reason == "binary_unavailable" and r.backend.fallback_at == after


def test_the_slow_probe_never_builds_a_missing_index(never_indexed, testbed):
    """Real openclaw 2026.7.35: `memory search` would create the index (seen by hand); slow() runs only
    `memory status`, which leaves it absent, and says why the retrieval was not run."""
    ctx = _ctx(never_indexed, testbed)
    spec = CanarySpec(token=TOKEN, expected_path="memory/canary.md")
    ev = slow(ctx, "main", NOW, canary=spec)
    assert ev.status_run is not None and ev.search_run is None and ev.direct_run is None
    assert any("has no QMD index yet, and the search would build it" in e for e in ev.errors), ev.errors
    assert not never_indexed.qmd_index().exists()
    assert not never_indexed.qmd_xdg_config().exists()
    d = diagnose(fast(ctx, "main", ev, NOW), NOW)
    assert (d.verdict.value, d.reason) == ("stale_index", "never_indexed")
    # notes written just now (inside the lease): not stale yet, but nothing could be searched — the next action is
    # the index run, not "run clawprobe check again" (which would withhold the search again, forever)
    _age(never_indexed.workspace, 0)
    try:
        now = datetime.now(UTC)
        d = diagnose(fast(ctx, "main", ev, now), now)
        assert (d.verdict.value, d.reason) == ("unverified", "never_indexed")
        assert (d.next_action.command or "").endswith("memory index --agent main")
    finally:
        _age(never_indexed.workspace, 3600)


def test_no_cli_runs_without_a_state_dir(tmp_path, testbed):
    home = OpenClawHome.create(tmp_path)
    home.write_config(qmd_config("qmd", "search"))
    missing = tmp_path / "typo-state"
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
                                       "OPENCLAW_STATE_DIR": str(missing)})
    clear_caches()
    ctx = discover(env=env)
    ev = slow(ctx, "main", NOW, canary=CanarySpec(token=TOKEN, expected_path="memory/canary.md"))
    assert ev.status_run is None and ev.search_run is None
    assert ev.errors == [f"openclaw CLI not run: no state dir at {missing} ($OPENCLAW_STATE_DIR), "
                         "and the CLI would create one"]
    assert not missing.exists()


def test_memory_issues_quoting_credentials_are_masked_where_the_log_is_read():
    """Breaker round 7 (w25): the log's memory ERROR/WARN lines reached ``clawprobe bundle`` verbatim
    (``log.issues[].detail``) — an OpenAI 401 echoing the key, a ``?key=`` URL, a Bearer header, URL userinfo —
    while every other output masked them at the ledger. The evidence holds them masked from the start."""
    secret = "SECRET789q1w2e3r4t5y6u"
    lines = [record(NOW, f"memory sync failed (search): Error: 401 Incorrect API key provided: sk-proj-{secret}", "ERROR"),
             record(NOW, f"embeddings failed: 400 https://generativelanguage.googleapis.com/v1/x?key=AIza{secret}"),
             record(NOW, f'memory sync failed: {{"Authorization":"Bearer {secret}"}} to http://admin:{secret}@10.0.0.5:8080')]
    got = facts(lines, oclog.LogScope(agent_id="main"))
    assert len(got.issues) == 3 and not any(secret in e.detail for e in got.issues), got.issues
    assert "401 Incorrect API key provided" in got.issues[0].detail
