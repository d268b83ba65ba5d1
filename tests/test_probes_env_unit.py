"""probes-env, fast tests: command runner, locations, JSON5 config, CLI/log parsers (recorded real outputs),
history, Prometheus. Real programs are only /bin/sh & co. here; the OpenClaw/qmd runs are in
test_probes_env_real.py."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
import pytest

from clawprobe.core import history
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import Located, agent_ids, default_agent_id, normalize_agent_id, workspace_dir
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes.config import (
    config_facts,
    memory_settings,
    parse_duration_s,
    read_config,
    retired_keys,
    validate_memory,
)
from clawprobe.core.proc import run
from clawprobe.core.prometheus import render
from clawprobe.core.receipt import Receipt
from clawprobe.core.replay import load_receipts
from tests.promtext import samples

REC = Path(__file__).parent / "data" / "recorded"
NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def rec(scenario: str, step: str) -> tuple[str, str, int]:
    d = REC / scenario / step
    out = next(d.glob("stdout.*")).read_text()
    return out, (d / "stderr.txt").read_text(), json.loads((d / "meta.json").read_text())["rc"]


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.proc
# ---------------------------------------------------------------------------------------------------

def test_run_missing_binary_is_rc_127_not_an_exception():
    r = run(["/nonexistent/bin/qmd", "--version"], {"PATH": "/usr/bin"}, 5)
    assert r.rc == 127 and "not found" in r.reason


def test_run_not_executable_is_rc_126(tmp_path):
    f = tmp_path / "script"
    f.write_text("#!/bin/sh\necho hi\n")
    r = run([str(f)], {"PATH": "/usr/bin:/bin"}, 5)
    assert r.rc == 126 and "permission" in r.reason


def test_run_uses_exactly_the_given_environment():
    r = run(["/usr/bin/env"], {"PATH": "/usr/bin:/bin", "ONLY_THIS": "1"}, 5)
    keys = {line.split("=", 1)[0] for line in r.stdout.splitlines()}
    assert keys == {"PATH", "ONLY_THIS"}


def test_timeout_kills_the_whole_tree():
    r = run(["/bin/sh", "-c", "sleep 60 & echo $!; sleep 60"], {"PATH": "/usr/bin:/bin"}, 1.0)
    # -9 when the shell itself got SIGKILL first; 137 when it saw its foreground child die first and exited.
    assert r.timed_out and r.killed and (r.rc < 0 or r.rc == 128 + 9)
    child = int(r.stdout.split()[0])
    time.sleep(0.2)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.locate
# ---------------------------------------------------------------------------------------------------

def test_default_workspace_depends_on_the_release():
    env = {"HOME": "/h", "OPENCLAW_STATE_DIR": "/s"}
    st = Located(path="/s", source="$OPENCLAW_STATE_DIR")
    assert workspace_dir({}, "main", env, st, "2026.7.35").path == "/h/.openclaw/workspace"
    assert workspace_dir({}, "main", env, st, "2026.9.6").path == "/s/workspace"
    cfg = {"agents": {"defaults": {"workspace": "~/ws"}, "list": [{"id": "main"}, {"id": "Ops Bot"}]}}
    assert workspace_dir(cfg, "main", env, st, "2026.7.35").path == "/h/ws"  # 7.35: the first entry owns it
    assert workspace_dir(cfg, "ops-bot", env, st, "2026.7.35").path == "/h/ws/ops-bot"
    # 2026.9.6: the one entry marked default owns it; with explicit ownership nobody does (every agent <ws>/<id>)
    marked = {"agents": {"defaults": {"workspace": "~/ws"}, "entries": {"main": {"default": True}, "ops": {}}}}
    assert workspace_dir(marked, "main", env, st, "2026.9.6").path == "/h/ws"
    assert workspace_dir(marked, "ops", env, st, "2026.9.6").path == "/h/ws/ops"
    explicit = {"agents": {**marked["agents"], "ownership": "explicit"}}
    assert workspace_dir(explicit, "main", env, st, "2026.9.6").path == "/h/ws/main"
    sole = {"agents": {"defaults": {"workspace": "~/ws"}, "ownership": "explicit", "entries": {"work": {}}}}
    assert workspace_dir(sole, "work", env, st, "2026.9.6").path == "/h/ws"
    assert workspace_dir({"agents": {"list": [{"id": "a"}, {"id": "b"}]}}, "b", env, st, "2026.7.35").path == "/s/workspace-b"


def test_agents_and_default_agent():
    cfg = {"agents": {"list": [{"id": "Main"}, {"id": "Ops Bot", "default": True}]}}
    assert default_agent_id(cfg) == "ops-bot"
    assert agent_ids(cfg) == ["ops-bot", "main"]
    assert agent_ids({}) == ["main"]
    assert normalize_agent_id("  ") == "main"


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.probes.config
# ---------------------------------------------------------------------------------------------------

JSON5_OK = """// generated by hand
{
  memory: {
    backend: 'qmd',          // single quotes, unquoted keys
    qmd: { searchMode: "search", update: { interval: '1h30m', }, },
  },
  agents: { defaults: { memorySearch: { provider: 'none', }, }, },
}
"""


def write(tmp: Path, name: str, text: str | bytes) -> str:
    p = tmp / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


def test_json5_features_parse_clean(tmp_path):
    snap = read_config(write(tmp_path, "openclaw.json", JSON5_OK), {})
    assert snap.error is None
    s = memory_settings(snap.tree, "main")
    assert (s.configured_backend, s.search_mode, s.update_interval_s, s.provider) == ("qmd", "search", 5400.0, "none")


def test_raw_newline_in_a_string_reports_its_line_and_column(tmp_path):
    lines = ["{"] + [f"  k{i}: {i}," for i in range(1, 14)] + ['  bad: "first half', 'second half",', "}"]
    assert lines[14].startswith("  bad")  # line 15 holds the raw line break
    snap = read_config(write(tmp_path, "openclaw.json", "\n".join(lines)), {})
    e = snap.error
    assert e.kind == "parse" and e.line == 15 and e.column == len(lines[14]) + 1
    assert "line break inside a string" in e.message
    d = diagnose(Receipt(checked_at=NOW, config=config_facts(snap, "main", "2026.7.35", None)))
    assert d.verdict.value == "config_invalid" and d.reason == "parse" and f":15:{e.column}" in d.evidence[0]


@pytest.mark.parametrize("text,line,col", [("{\n  a: 1,\n  b: [1,2,,]\n}", 3, 11), ("{a: 1", 1, 1), ("{a:1} x", 1, 7)])
def test_other_parse_errors_carry_line_and_column(tmp_path, text, line, col):
    e = read_config(write(tmp_path, "c.json", text), {}).error
    assert (e.kind, e.line, e.column) == ("parse", line, col)


def test_includes_file_and_array_relative_to_the_including_file(tmp_path):
    (tmp_path / "inc").mkdir()
    write(tmp_path / "inc", "a.json5", "{ memory: { qmd: { searchMode: 'query' } }, logging: { file: '/l.log' } }")
    write(tmp_path / "inc", "b.json5", "{ $include: './c.json5' }")
    write(tmp_path / "inc", "c.json5", "{ memory: { backend: 'qmd' } }")
    snap = read_config(write(tmp_path, "openclaw.json", "{ $include: ['./inc/a.json5', './inc/b.json5'] }"), {})
    assert snap.error is None and len(snap.files) == 4
    s = memory_settings(snap.tree, "main")
    assert (s.configured_backend, s.search_mode, s.log_file) == ("qmd", "query", "/l.log")


@pytest.mark.parametrize("body,needle", [
    ("{ $include: './missing.json5' }", "does not exist"),
    ("{ $include: './broken.json5' }", "does not parse"),
    ("{ $include: './loop.json5' }", "circular"),
    ("{ $include: 42 }", "path or a list"),
])
def test_broken_includes_are_kind_include(tmp_path, body, needle):
    write(tmp_path, "broken.json5", "{ a: ")
    write(tmp_path, "loop.json5", "{ $include: './loop.json5' }")
    e = read_config(write(tmp_path, "openclaw.json", body), {}).error
    assert e.kind == "include" and needle in e.message


def test_env_substitution_escape_and_missing(tmp_path):
    p = write(tmp_path, "openclaw.json", "{ memory: { backend: 'qmd', qmd: { command: '${QMD_BIN}', "
                                          "searchMode: '$${NOT_EXPANDED}' } } }")
    snap = read_config(p, {"QMD_BIN": "/opt/qmd/bin/qmd"})
    assert snap.tree["memory"]["qmd"] == {"command": "/opt/qmd/bin/qmd", "searchMode": "${NOT_EXPANDED}"}
    e = read_config(p, {}).error
    assert e.kind == "env" and "QMD_BIN" in e.message and e.key_path == "memory.qmd.command"


def test_non_utf8_and_symlink_loop(tmp_path):
    e = read_config(write(tmp_path, "enc.json", b'{ a: "caf\xe9" }'), {}).error
    assert e.kind == "encoding" and e.line == 1
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    assert read_config(str(loop), {}).error.kind == "unreadable"


def test_secrets_never_leave_the_config_module(tmp_path):
    p = write(tmp_path, "openclaw.json", "{ agents: { defaults: { memorySearch: { provider: 'openai', remote: "
                                          "{ apiKey: 'sk-SECRET-123', headers: { Authorization: 'Bearer XYZ' } } } } },"
                                          " gateway: { auth: { token: 'tok-SECRET' }, reload: { mode: 'off' } } }")
    snap = read_config(p, {})
    dumped = snap.model_dump_json() + memory_settings(snap.tree, "main").model_dump_json()
    for secret in ("sk-SECRET-123", "Bearer XYZ", "tok-SECRET"):
        assert secret not in dumped
    assert memory_settings(snap.tree, "main").reload_mode == "off"


def test_memory_hash_covers_memory_settings_only(tmp_path):
    base = {"memory": {"backend": "qmd"}, "agents": {"defaults": {"memorySearch": {"remote": {"apiKey": "a"}}}},
            "channels": {"x": 1}}
    h = memory_settings(base, "main").hash
    other = json.loads(json.dumps(base))
    other["channels"]["x"] = 2
    other["agents"]["defaults"]["memorySearch"]["remote"]["apiKey"] = "b"
    assert memory_settings(other, "main").hash == h
    other["memory"]["qmd"] = {"searchMode": "query"}
    assert memory_settings(other, "main").hash != h


def test_schema_rejections_and_retired_keys():
    e = validate_memory({"memory": {"backend": "some-memory-plugin"}}, "2026.7.35")
    assert (e.kind, e.key_path, e.allowed) == ("schema", "memory.backend", ["builtin", "qmd"])
    e = validate_memory({"memory": {"qmd": {"searchMode": 5}}}, "2026.7.35")
    assert e.key_path == "memory.qmd.searchMode"
    e = validate_memory({"memory": {"qmd": {"limits": {"timeoutMs": "4s"}}}}, "2026.7.35")
    assert e.key_path == "memory.qmd.limits.timeoutMs"
    qmd_cfg = {"memory": {"backend": "qmd", "qmd": {}}, "agents": {"defaults": {"memorySearch": {}}}}
    assert validate_memory(qmd_cfg, "2026.9.6") is None
    assert retired_keys(qmd_cfg) == ["memory.backend", "memory.qmd", "agents.defaults.memorySearch"]


@pytest.mark.parametrize("raw,secs", [("5m", 300), ("1h30m", 5400), ("90", 5400), ("45s", 45), ("2d", 172800),
                                      ("500ms", 0.5), ("5 m", None), ("m5", None), ("", None)])
def test_duration_semantics(raw, secs):
    assert parse_duration_s(raw) == secs


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.probes.openclaw_cli — recorded real outputs replayed through the parsers
# ---------------------------------------------------------------------------------------------------

def test_qmd_not_on_path_status_and_search_show_the_fallback():
    st = oc.parse_status(*rec("735-qmd-not-on-path", "status"))
    assert st.entry("main").backend == "builtin"
    assert st.stderr.fallback == "binary_unavailable" and st.stderr.fallback_command == "qmd"
    se = oc.parse_search(*rec("735-qmd-not-on-path", "search"))
    assert se.shape == "builtin" and se.hits[0].path == "memory/canary.md"
    assert oc.effective_backend(st.entry("main"), st.stderr, se)[0] == "builtin"


def test_qmd_search_has_the_qmd_shape_and_status_agrees():
    st = oc.parse_status(*rec("735-qmd-path-search", "status"))
    se = oc.parse_search(*rec("735-qmd-path-search", "search"))
    assert st.entry("main").backend == "qmd" and se.shape == "qmd"
    claims = oc.status_claims("qmd", st.entry("main"), se, "search")
    assert [c.agrees for c in claims if c.claim.startswith("backend")] == [True]


def test_status_backend_qmd_with_builtin_hits_is_a_disagreement():
    st = oc.parse_status(*rec("735-qmd-path-search", "status"))
    se = oc.parse_search(*rec("735-builtin-none", "search"))
    claim = next(c for c in oc.status_claims("qmd", st.entry("main"), se, "search") if c.claim.startswith("backend"))
    assert not claim.agrees and "builtin" in claim.measured


def test_crashing_qmd_search_and_scope_denial_and_retired_config():
    se = oc.parse_search(*rec("735-qmd-node20-command", "search"))
    assert se.rc == 1 and se.stderr.crash_signal == "SIGSEGV" and se.error
    se = oc.parse_search(*rec("735-qmd-scope-deny", "search"))
    assert se.hits == [] and "denied by scope" in se.stderr.scope_denied
    st = oc.parse_status(*rec("96-qmd-keys-rejected", "status"))
    assert "Invalid config" in st.error and 'Unrecognized keys: "backend", "qmd"' in st.stderr.invalid_config


def test_lenient_status_and_search_failure_texts():
    st = oc.parse_status("Memory search disabled.\n", "", 0)
    assert st.disabled and not st.entries
    se = oc.parse_search("", "Memory search failed: qmd query QMDCANARY-9876-LOTUS --json -n 4 -c memory-root-main "
                             "-c memory-dir-main timed out after 4000ms\n", 1)
    assert se.stderr.timeout_ms == 4000 and se.error
    assert oc.parse_version("OpenClaw 2026.7.35 (aa94808)\n") == "2026.7.35"
    assert oc.version_facts("OpenClaw 2026.9.6 (eb377ac)") == ("2026.9.6", False)


# ---------------------------------------------------------------------------------------------------
# clawprobe.core.probes.openclaw_log
# ---------------------------------------------------------------------------------------------------

def test_recorded_logs_give_syncs_and_fallbacks():
    lines = (REC / "735-qmd-absolute-command" / "index" / "log.jsonl").read_text().splitlines()
    facts = oclog.interpret(oclog.parse_lines(lines)[0], "main")
    assert facts.last_sync.reason == "cli" and facts.last_sync.duration_s == pytest.approx(0.198)
    lines = (REC / "735-qmd-not-on-path" / "search" / "log.jsonl").read_text().splitlines()
    facts = oclog.interpret(oclog.parse_lines(lines)[0], "main")
    assert facts.last_fallback.tag == "binary_unavailable" and facts.last_fallback.at is not None


def _line(msg: str, at: datetime, sub: str = "gateway/reload") -> str:
    return json.dumps({"0": json.dumps({"subsystem": sub}), "1": msg, "_meta": {"logLevelName": "INFO"},
                       "time": at.isoformat()})


def test_drift_follows_what_the_gateway_applied():
    t = NOW
    off = [_line("gateway ready", t, "gateway"),
           _line("config change detected; evaluating reload (memory.qmd.searchMode, channels.x)", t + timedelta(seconds=5)),
           _line("config reload disabled (gateway.reload.mode=off)", t + timedelta(seconds=5))]
    d, keys, detail = oclog.drift(oclog.interpret(oclog.parse_lines(off)[0]))
    assert d is True and keys == ["memory.qmd.searchMode"] and "reload disabled" in detail
    restarted = off + [_line("gateway ready", t + timedelta(seconds=9), "gateway")]
    assert oclog.drift(oclog.interpret(oclog.parse_lines(restarted)[0]))[0] is False
    hot = off[:2] + [_line("config hot reload applied (memory.qmd.searchMode)", t + timedelta(seconds=6))]
    assert oclog.drift(oclog.interpret(oclog.parse_lines(hot)[0]))[0] is False
    assert oclog.drift(oclog.LogFacts())[0] is None


def test_garbage_lines_are_skipped_and_the_tail_is_bounded(tmp_path):
    p = tmp_path / "openclaw.log"
    good = _line('qmd sync completed for agent "main" reason=interval durationMs=1500', NOW, "memory")
    with open(p, "w") as f:
        f.write("x" * 3_000_000 + "\n")  # a huge first line the bounded tail never reaches
        f.write("not json\n{\"partial\": \n" + good + "\n")
    facts = oclog.read_log([str(p)], "main", max_bytes=64 * 1024)
    assert facts.skipped == 2 and facts.last_sync.duration_s == 1.5 and facts.normal_update_s() == 1.5


# ---------------------------------------------------------------------------------------------------
# history, baseline, prometheus
# ---------------------------------------------------------------------------------------------------

def test_history_append_is_bounded_and_baseline_roundtrips(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "MAX_RECORDS", 3)
    for i in range(5):
        history.append(Receipt(checked_at=NOW + timedelta(seconds=i)), "unverified", "/s", tmp_path)
    saved = load_receipts(tmp_path / history.HISTORY_FILE)  # the reader replay and the dashboard use
    assert [r.checked_at.second for r in saved] == [2, 3, 4]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert history.load_baseline("/s", "main", tmp_path) is None
    history.accept_baseline("/s", "main", "abc", tmp_path)
    assert history.load_baseline("/s", "main", tmp_path) == "abc"



def test_a_damaged_baseline_file_reads_as_no_baseline_and_is_replaced_on_accept(tmp_path):
    for junk in (b"\xff\xfegarbage{", b"{not json", b"[1, 2]"):  # not UTF-8, not JSON, not an object
        (tmp_path / history.BASELINE_FILE).write_bytes(junk)
        assert history.load_baseline("/s", "main", tmp_path) is None
        history.accept_baseline("/s", "main", "abc", tmp_path)
        assert history.load_baseline("/s", "main", tmp_path) == "abc"

def test_prometheus_textfile_format():
    r = Receipt(checked_at=NOW)
    r.vectors.pending = 27
    text = render([(r, diagnose(r))], {"main": 4.2}, NOW)
    m = samples(text)
    assert m['clawprobe_verdict{agent="main",tag="no_canary",verdict="unverified"}'] == 1
    assert m['clawprobe_verdict{agent="main",tag="",verdict="healthy"}'] == 0
    assert m['clawprobe_pending_embeddings{agent="main"}'] == 27
    assert m['clawprobe_probe_duration_seconds{agent="main"}'] == 4.2
    assert m["clawprobe_up"] == 0  # no OpenClaw version measured: nothing proved by the CLI
    assert text.count("# TYPE clawprobe_verdict gauge") == 1 and text.endswith("\n")


def test_a_service_without_path_gets_its_managers_path_never_the_shells(tmp_path):
    """systemd: a unit without ``PATH=`` runs with the user manager's PATH — ``~/.config/environment.d`` when a file
    there sets it (``$PATH`` expanded from the default), else systemd's default; launchd: its default."""
    from clawprobe.core.probes import gateway as gw

    state = tmp_path / ".openclaw"
    units = tmp_path / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway.service").write_text("[Service]\nExecStart=/usr/bin/openclaw gateway run\n")
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and (svc.path_from, svc.env["PATH"]) == ("default", gw.SYSTEMD_DEFAULT_PATH)
    envd = tmp_path / ".config" / "environment.d"
    envd.mkdir()
    (envd / "10-npm.conf").write_text('# npm globals\nPATH="$HOME/.npm-global/bin:${PATH}"\n')
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and svc.path_from == "environment.d"
    assert svc.env["PATH"] == f"{tmp_path}/.npm-global/bin:{gw.SYSTEMD_DEFAULT_PATH}"
    shell = {"PATH": "/home/op/bin:/usr/bin", "HOME": str(tmp_path)}
    env, source = gw.effective_env(gw.GatewayEvidence(state_dir=str(state), shell_env=shell, service=svc))
    assert source == "systemd" and env["PATH"] == svc.env["PATH"]
    (units / "openclaw-gateway.service").write_text("[Service]\nEnvironment=PATH=/opt/qmd/bin:/usr/bin\n")
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and (svc.path_from, svc.env["PATH"]) == ("unit", "/opt/qmd/bin:/usr/bin")


def test_a_units_drop_ins_and_environment_files_set_the_path_the_service_gets(tmp_path):
    """systemd applies a drop-in's ``Environment=`` after the unit's (later wins) and ``EnvironmentFile=`` values over
    both; an empty ``Environment=`` resets the list. Judging by the main unit alone was wrong both ways: a drop-in
    that takes qmd's dir off the PATH was called healthy, a PATH set only in an env file was called missing."""
    from clawprobe.core.probes import gateway as gw

    state = tmp_path / ".openclaw"
    units = tmp_path / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    unit = units / "openclaw-gateway.service"
    unit.write_text("[Service]\nEnvironment=PATH=/opt/qmd/bin:/usr/bin OPENCLAW_LOG_PREFIX=gw\nExecStart=/usr/bin/openclaw gateway run\n")
    drop = units / "openclaw-gateway.service.d"
    drop.mkdir()
    (drop / "override.conf").write_text("[Service]\nEnvironment=PATH=/usr/local/bin:/usr/bin:/bin\n")
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and (svc.path_from, svc.env["PATH"]) == ("unit", "/usr/local/bin:/usr/bin:/bin")
    envfile = tmp_path / "gw.env"
    envfile.write_text('# the operator\'s\nPATH="/home/op/.npm-global/bin:/usr/bin"\n')
    (drop / "zz-env.conf").write_text(f"[Service]\nEnvironmentFile=-{envfile}\nEnvironmentFile=-{tmp_path}/absent.env\n")
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and svc.env["PATH"] == "/home/op/.npm-global/bin:/usr/bin"
    (drop / "zz-env.conf").unlink()
    (drop / "override.conf").write_text("[Service]\nEnvironment=\n")  # resets the unit's assignments
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and (svc.path_from, svc.env["PATH"]) == ("default", gw.SYSTEMD_DEFAULT_PATH)
    assert "OPENCLAW_LOG_PREFIX" not in svc.env


def test_a_shared_log_line_naming_another_configured_agent_is_theirs():
    """``memory status failed (ops): …`` in a log main shares is ops's, configured or not; a line naming main too,
    or naming no agent the way a memory command's record does (``qmd embed failed (timeout): …``), counts for
    main."""
    scope = oclog.LogScope(agent_id="main", other_agents=["ops", "ops_2"])
    assert not scope.owns("memory status failed (ops): file is not a database")
    assert not scope.owns("Memory index updated (Ops_2): 3 files indexed.")
    assert scope.owns("memory status failed (main): file is not a database")
    assert scope.owns("qmd embed failed (timeout): fetch failed; backing off for 60s")
    assert scope.owns("sync (main) waited for agent ops")
    # a memory command's record names its agent: ops's even when main's config knows no ops (another install's)
    assert not oclog.LogScope(agent_id="main").owns("memory status failed (ops): file is not a database")
    # the agent in parentheses is the one the record is about, whoever the text goes on to name (2026.9.6)
    refused = ("memory search failed (ops): OpenClaw agent database /srv/oc/agents/ops/agent/openclaw-agent.sqlite "
               "belongs to agent main; requested agent ops.")
    assert not scope.owns(refused)
    assert oclog.LogScope(agent_id="ops", other_agents=["main"]).owns(refused)
    assert oclog.LogScope(agent_id="main").owns("memory sync failed (search): Error: database is not open")


def test_systemd_specifiers_in_a_user_unit_are_expanded(tmp_path):
    """``Environment="PATH=%h/q bin:/usr/bin"`` and ``EnvironmentFile=-%h/…`` name the owner's home: read literally,
    qmd in ``~/q bin`` was "not on PATH" and the repair said install it."""
    from clawprobe.core.probes import gateway as gw

    state = tmp_path / ".openclaw"
    units = tmp_path / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    unit = units / "openclaw-gateway.service"
    unit.write_text('[Service]\nEnvironment="PATH=%h/q bin:/usr/bin" "OPENCLAW_LOG_PREFIX=100%%"\n')
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and svc.env["PATH"] == f"{tmp_path}/q bin:/usr/bin"
    assert svc.env["OPENCLAW_LOG_PREFIX"] == "100%"
    (tmp_path / ".config" / "openclaw").mkdir()
    (tmp_path / ".config" / "openclaw" / "gateway.env").write_text("PATH=/run/user/%U-not-expanded-here:/usr/bin\n")
    unit.write_text("[Service]\nEnvironmentFile=-%h/.config/openclaw/gateway.env\n")
    svc = gw.service_env(str(tmp_path), str(state))
    assert svc is not None and svc.env["PATH"] == "/run/user/%U-not-expanded-here:/usr/bin"  # file contents: verbatim


def test_a_system_unit_runs_as_its_user_with_the_system_managers_path(tmp_path):
    """A gateway installed as a system service (``/etc/systemd/system``, ``User=``): its state dir is the one
    under that user's home (or its ``OPENCLAW_STATE_DIR``), its PATH its own or the system manager's default —
    never the shell's, never ``environment.d`` (the user manager's) — and specifiers are the system
    manager's (``%h`` = /root, whatever ``User=`` says). A user unit for the same state dir wins."""
    import pwd

    from clawprobe.core.probes import gateway as gw

    system = tmp_path / "etc-systemd-system"
    system.mkdir()
    nobody = pwd.getpwnam("nobody").pw_dir
    shell_home = tmp_path / "op"
    (shell_home / ".config" / "environment.d").mkdir(parents=True)
    (shell_home / ".config" / "environment.d" / "path.conf").write_text("PATH=/home/op/.npm-global/bin:/usr/bin\n")
    state = tmp_path / "srv" / "state"
    unit = system / "openclaw-gateway.service"
    unit.write_text(f"[Service]\nUser=nobody\nEnvironment=OPENCLAW_STATE_DIR={state}\nExecStart=/usr/bin/openclaw gateway run\n")
    svc = gw.service_env(str(shell_home), str(state), [str(system)])
    assert svc is not None and svc.file == str(unit)
    assert (svc.path_from, svc.env["PATH"], svc.env["HOME"]) == ("default", gw.SYSTEMD_DEFAULT_PATH, nobody)
    assert gw.service_env(str(shell_home), str(tmp_path / "other"), [str(system)]) is None, "serves another dir"

    drop = system / "openclaw-gateway.service.d"
    drop.mkdir()
    (drop / "path.conf").write_text('[Service]\nEnvironment="PATH=%h/qmd bin:/usr/bin"\nUser=\n')  # runs as root
    svc = gw.service_env(str(shell_home), str(state), [str(system)])
    assert svc is not None and (svc.path_from, svc.env["PATH"]) == ("unit", f"{gw.SYSTEM_MANAGER_HOME}/qmd bin:/usr/bin")
    assert "HOME" not in svc.env, "root without User=: systemd sets no HOME"

    unit.write_text("[Service]\nExecStart=/usr/bin/openclaw gateway run\n")  # root's default state dir
    (drop / "path.conf").unlink()
    root_state = os.path.join(pwd.getpwuid(0).pw_dir, ".openclaw")
    assert gw.service_env(str(shell_home), root_state, [str(system)]).file == str(unit)
    assert gw.service_env(str(shell_home), str(state), [str(system)]) is None

    users = shell_home / ".config" / "systemd" / "user"
    users.mkdir(parents=True)
    (users / "openclaw-gateway.service").write_text(f"[Service]\nEnvironment=OPENCLAW_STATE_DIR={root_state}\n")
    svc = gw.service_env(str(shell_home), root_state, [str(system)])
    assert svc is not None and svc.file.startswith(str(users)) and svc.path_from == "environment.d"


def test_a_relative_workspace_is_resolved_against_the_home_and_named(tmp_path, monkeypatch):
    """``workspace: "notes-ws"`` means a different directory for every working directory OpenClaw starts in:
    clawprobe resolves it against the home (where its own OpenClaw calls run, and a user service starts), not
    against its own cwd, and names the hazard (``workspace_relative``); ``~`` and absolute paths are not relative."""
    from clawprobe.core.locate import Located, is_relative, relative_workspace, workspace_dir

    monkeypatch.chdir(tmp_path)
    env = {"HOME": "/home/op"}
    state = Located(path="/home/op/.openclaw", source="~/.openclaw")
    cfg = {"agents": {"defaults": {"workspace": "notes-ws"},
                      "list": [{"id": "main", "default": True}, {"id": "ops", "workspace": "~/ops"}]}}
    ws = workspace_dir(cfg, "main", env, state, "2026.9.6")
    assert ws.path == "/home/op/notes-ws" and "relative" in ws.source
    assert relative_workspace(cfg, "main", "2026.9.6") == "notes-ws"
    assert relative_workspace(cfg, "ops", "2026.9.6") is None and workspace_dir(cfg, "ops", env, state, None).path == "/home/op/ops"
    assert [is_relative(v) for v in ("./ws", "ws/x", "~", "~/ws", "/srv/ws", " ")] == [True, True, False, False, False, False]


def test_the_gateway_units_config_path_is_the_config_checked(tmp_path):
    """The unit sets ``OPENCLAW_CONFIG_PATH=%h/etc/oc.json5``, the operator's shell does not, and an old
    ``~/.openclaw/openclaw.json`` names another workspace: the gateway runs with the unit's file, so that is the
    config checked (breaker round 5: clawprobe read the old one, and its repair made a workspace the gateway never
    indexes "healthy"). ``--config`` or the shell's own variable still win."""
    from clawprobe.core import probe

    home = tmp_path / "home"
    state = home / ".openclaw"
    (home / "etc").mkdir(parents=True)
    state.mkdir()
    (home / "etc" / "oc.json5").write_text('{ agents: { defaults: { workspace: "/srv/real-ws" } } }')
    (state / "openclaw.json").write_text('{"agents": {"defaults": {"workspace": "/srv/old-ws"}}}')
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway.service").write_text(
        "[Service]\nExecStart=/usr/bin/openclaw gateway run\nEnvironment=OPENCLAW_CONFIG_PATH=%h/etc/oc.json5\n")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    ctx = probe.discover(env=env, openclaw="/nonexistent/openclaw")
    assert ctx.config_path.path == str(home / "etc" / "oc.json5") and "gateway" in ctx.config_path.source
    assert probe.workspace_of(ctx, "main").path == "/srv/real-ws"
    mine = probe.discover(env={**env, "OPENCLAW_CONFIG_PATH": str(state / "openclaw.json")}, openclaw="/nonexistent/x")
    assert mine.config_path.path == str(state / "openclaw.json")
    flag = probe.discover(config=str(state / "openclaw.json"), env=env, openclaw="/nonexistent/openclaw")
    assert probe.workspace_of(flag, "main").path == "/srv/old-ws"


@pytest.mark.parametrize("var, where", [("OC_NOTES", "Environment"), ("TEAM_DIR_2", "EnvironmentFile")])
def test_a_config_variable_only_the_gateway_unit_sets_resolves_as_the_gateway_resolves_it(tmp_path, var, where):
    """The workspace is ``${VAR}/ws`` and only the gateway's unit sets VAR (``Environment=`` or an
    ``EnvironmentFile=``): the gateway's workspace is that one, not a missing ``~/${VAR}/ws`` (breaker round 7, w02:
    memory_unavailable · workspace_missing for a healthy gateway). The unit's value wins over the shell's, and the
    CLI probes get it; no value reaches the stored context."""
    from clawprobe.core import probe

    home = tmp_path / "home"
    state = home / ".openclaw"
    state.mkdir(parents=True)
    (state / "openclaw.json").write_text("{ agents: { defaults: { workspace: \"${" + var + "}/ws\" } } }")
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    line = (f"Environment={var}=%h/notes" if where == "Environment"
            else "EnvironmentFile=-%h/.config/oc.env")
    (home / ".config" / "oc.env").write_text(f"# notes\n{var}={home}/notes\n")
    (units / "openclaw-gateway.service").write_text(
        f"[Service]\nExecStart=/nonexistent/openclaw gateway run\n{line}\n")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    ctx = probe.discover(env=env, openclaw="/nonexistent/openclaw")
    assert probe.workspace_of(ctx, "main").path == str(home / "notes" / "ws")
    assert ctx.config.missing_env == [] and ctx.config_vars() == {var: str(home / "notes")}
    assert str(home / "notes") not in ctx.model_dump_json().replace(str(home / "notes" / "ws"), "")
    shell = probe.discover(env={**env, var: "/elsewhere"}, openclaw="/nonexistent/openclaw")
    assert probe.workspace_of(shell, "main").path == str(home / "notes" / "ws")
    (units / "openclaw-gateway.service").unlink()
    bare = probe.discover(env=env, openclaw="/nonexistent/openclaw")
    assert bare.config.missing_env == [var]


def test_a_gateway_unit_for_another_state_dir_is_pointed_at_when_none_serves_this_one(tmp_path):
    """breaker round 7, w04: the only gateway unit serves ``--profile work`` (``OPENCLAW_STATE_DIR=%h/.openclaw-work``)
    while ``~/.openclaw`` holds an old install: the check of ``~/.openclaw`` says where the gateway is. Once a unit
    serves the checked state dir, nothing is said."""
    from clawprobe.core import probe

    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    (home / ".openclaw" / "openclaw.json").write_text('{ agents: { defaults: { workspace: "/srv/old-ws" } } }')
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway-work.service").write_text(
        "[Service]\nExecStart=/nonexistent/openclaw --profile work gateway run\n"
        "Environment=OPENCLAW_STATE_DIR=%h/.openclaw-work\n")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    work = str(home / ".openclaw-work")  # (a gateway of another install running on this host is named too)
    ctx = probe.discover(env=env, openclaw="/nonexistent/openclaw")
    assert ctx.gateway is not None and work in ctx.gateway.elsewhere
    r = probe.fast(ctx, "main", None, qmd_check=False)
    (f,) = [f for f in r.findings if f.tag == "gateway_elsewhere" and work in f.message]
    assert f"clawprobe check --state-dir {work}" in f.message
    (units / "openclaw-gateway.service").write_text("[Service]\nExecStart=/nonexistent/openclaw gateway run\n")
    ctx = probe.discover(env=env, openclaw="/nonexistent/openclaw")
    assert work not in ctx.gateway.elsewhere and not [f for f in probe.fast(ctx, "main", None, qmd_check=False).findings
                                                      if f.tag == "gateway_elsewhere" and work in f.message]


def test_this_homes_own_profile_is_named_before_other_users_running_gateways(tmp_path):
    """The gateway hint names one state dir: with more gateways running on the host (other users', other homes)
    than the hint keeps, this HOME's own unit for ``--profile work`` was cut (the host's running gateways came
    first) and the hint named a stranger's install — the test above failed whenever a busy host ran six gateways.
    This HOME's installs come first; the others are still counted. Real processes named like a respawned
    gateway, each serving its own state dir outside this HOME."""
    import subprocess

    from clawprobe.core import probe

    home = tmp_path / "home"
    (home / ".openclaw").mkdir(parents=True)
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway-work.service").write_text(
        "[Service]\nExecStart=/nonexistent/openclaw --profile work gateway run\n"
        "Environment=OPENCLAW_STATE_DIR=%h/.openclaw-work\n")
    strangers = [str(tmp_path / f"other-user-{i}" / ".openclaw") for i in range(6)]
    procs = [subprocess.Popen(["bash", "-c", "exec -a openclaw-gateway sleep 60"], env={"OPENCLAW_STATE_DIR": d,
                                                                                        "PATH": "/usr/bin:/bin"})
             for d in strangers]
    try:
        ctx = probe.discover(env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, openclaw="/nonexistent/openclaw")
        assert ctx.gateway is not None and ctx.gateway.other_gateways >= 6
        assert ctx.gateway.elsewhere[0] == str(home / ".openclaw-work"), ctx.gateway.elsewhere
        (f,) = [f for f in probe.fast(ctx, "main", None, qmd_check=False).findings if f.tag == "gateway_elsewhere"]
        assert f"serves {home / '.openclaw-work'} (and " in f.message, f.message
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_a_profile_only_install_is_pointed_at(tmp_path):
    """OpenClaw used only as ``openclaw --profile work`` keeps its state in ``~/.openclaw-work``; with no
    ``~/.openclaw`` a plain check said "no state dir" and offered itself again (breaker round 5). It names the
    profile's state dir and the ``--state-dir`` to check it with; an explicit state dir gets no such hint."""
    from clawprobe.core import probe

    home = tmp_path / "home"
    (home / ".openclaw-work").mkdir(parents=True)
    (home / ".openclaw-backup.tar").mkdir()  # not a profile name: never offered
    env = {"HOME": str(home), "PATH": "/nonexistent"}
    ctx = probe.discover(env=env)
    assert not ctx.installed and f"--state-dir {home}/.openclaw-work" in (ctx.reason or "")
    assert ".openclaw-backup.tar" not in (ctx.reason or "")
    given = probe.discover(state_dir=str(tmp_path / "elsewhere"), env=env)
    assert "a profile's state" not in (given.reason or "")


def test_a_data_dir_that_is_a_file_is_a_probe_error_not_no_canary(tmp_path):
    """``CLAWPROBE_DATA_DIR`` pointing at a regular file: the planted canary's record cannot be read. It was
    "no canary planted" with the repair `canary plant`, which fails the same way (breaker round 5)."""
    from clawprobe.core import probe

    state, ws = tmp_path / ".openclaw", tmp_path / "ws"
    state.mkdir()
    (ws / "memory").mkdir(parents=True)
    (state / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    (tmp_path / "data").write_text("x\n")
    env = {"HOME": str(tmp_path), "PATH": "/nonexistent", "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    spec, why = probe.canary_spec(probe.discover(env=env), "main")
    assert spec is None and why is not None and "not a directory" in why and "CLAWPROBE_DATA_DIR" in why


def test_a_canary_file_without_a_record_is_said_not_no_canary(tmp_path):
    """The workspace renamed with its canary (config updated), or clawprobe's data dir restored from another host:
    the file is there, the record is for another workspace path, and the check said "no canary planted" — false
    (breaker round 5). It says what is on disk and still asks for a plant (a new record)."""
    from clawprobe.core import probe
    from clawprobe.core.canary import canary_text, new_token
    from clawprobe.core.diagnosis import diagnose

    state, ws = tmp_path / ".openclaw", tmp_path / "ws-2026"
    state.mkdir()
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "clawprobe-canary.md").write_text(canary_text(new_token()))
    (state / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}},
                                                     "memory": {"search": {"provider": "none"}}}))
    env = {"HOME": str(tmp_path), "PATH": "/nonexistent", "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    r = probe.fast(probe.discover(env=env), "main", None)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("unverified", "no_canary")
    assert any("a clawprobe canary file is at memory/clawprobe-canary.md" in e for e in d.evidence), d.evidence
    assert d.next_action.command == "clawprobe canary plant --agent main"


@pytest.mark.parametrize(("agents", "aid", "key"), [
    ({"entries": {"desk": {}, "ops": {"workspace": "/w"}}}, "desk", "agents.entries.desk.workspace"),
    ({"entries": {"Ops-7": {}}}, "ops-7", "agents.entries.Ops-7.workspace"),   # the map's own key, as written
    ({"list": [{"id": "main"}, {"id": "ops"}]}, "ops", "agents.list[1].workspace"),  # 2026.7.35 config set takes it
    ({"list": [{"id": "main"}]}, "ops", None),                                 # no entry: a key would create one
    ({}, "main", "agents.defaults.workspace"),
])
def test_the_workspace_key_names_the_agents_own_entry(agents, aid, key):
    from clawprobe.core.locate import workspace_key

    assert workspace_key({"agents": agents}, aid) == key


def test_notes_above_a_missing_workspace_are_found(tmp_path):
    from clawprobe.core.probes.workspace import notes_nearby

    ws = tmp_path / "workspace"
    ws.mkdir()
    assert notes_nearby(str(ws / "desk" / "deeper")) is None
    (ws / "memory").mkdir()
    assert notes_nearby(str(ws / "desk" / "deeper")) == str(ws)  # the first existing ancestor
    (ws / "memory").rmdir()
    (ws / "MEMORY.md").write_text("x")
    assert notes_nearby(str(ws / "desk")) == str(ws)


def test_absent_roots_are_resolved_as_openclaw_resolves_them(tmp_path):
    from clawprobe.core.probes.workspace import absent_roots

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (home / "notes").mkdir()
    (ws / "dangling").symlink_to(tmp_path / "nowhere")  # OpenClaw's mkdir through it fails: absent (round 11, s03)
    got = absent_roots(["~/notes", "~/notes-typo", "kb", "dangling", "~/notes-typo/", str(tmp_path / "x")], str(ws),
                       str(home))
    assert got == [str(home / "notes-typo"), str(ws / "kb"), str(ws / "dangling"), str(tmp_path / "x")]


@pytest.mark.parametrize(("backend", "mode", "shown"), [("qmd", "search", False), ("qmd", "vsearch", True),
                                                         ("qmd", "query", True), ("builtin", "search", True)])
def test_pending_embeddings_are_not_exported_where_the_mode_never_embeds(backend, mode, shown):
    """Breaker round 10, s12: a healthy QMD ``search``-mode agent exported ``clawprobe_pending_embeddings 2`` — BM25
    never embeds, so it never drains — and the shipped ``ClawprobePendingEmbeddingsNotDraining`` fired (promtool)
    90 min after deploy with ``verdict="vector_not_ready"``."""
    r = Receipt(checked_at=NOW)
    r.config.configured_backend, r.config.search_mode = backend, mode
    r.vectors.pending = 2
    m = samples(render([(r, diagnose(r))], {}, NOW))
    assert ('clawprobe_pending_embeddings{agent="main"}' in m) is shown


def test_an_update_in_progress_is_told_from_a_foreign_writer_by_its_program():
    """Breaker round 11, s12: ``sqlite3 …/agents/main/qmd/…/index.sqlite`` holding the index's write lock passed for
    qmd itself ("/qmd/" in its arguments). The program and its first argument decide."""
    import subprocess
    import sys

    import psutil

    from clawprobe.core.probes.qmd_index import _is_updater

    foreign = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)",
                                "/srv/oc/agents/main/qmd/xdg-cache/qmd/index.sqlite"])
    qmd = subprocess.Popen(["bash", "-c", "exec -a qmd sleep 30"])
    try:
        end = time.monotonic() + 20
        while psutil.Process(qmd.pid).cmdline()[:1] != ["qmd"] and time.monotonic() < end:  # until bash has exec'd
            time.sleep(0.05)
        assert _is_updater(psutil.Process(foreign.pid)) is False
        assert _is_updater(psutil.Process(qmd.pid)) is True
    finally:
        for p in (foreign, qmd):
            p.kill()
            p.wait()
