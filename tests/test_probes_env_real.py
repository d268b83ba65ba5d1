"""probes-env against the real programs (qmd 2.8.3, OpenClaw 2026.7.35 / 2026.9.6, a real gateway).

Each state is built once per module; every ``openclaw`` call costs 3–6 s of CPU, so the tests share homes
and most assertions use the fast probe (no CLI). Bookkeeping files OpenClaw's own CLI writes when it runs
(also listed in docs/readonly.md) are named in :data:`OPENCLAW_BOOKKEEPING`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import qmd_home
from clawprobe.core.probe import CanarySpec, clear_caches, collect, discover, fast
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.receipt import Receipt
from tests.testbed import (
    OC_LATEST,
    OC_QMD,
    OpenClawHome,
    builtin_config,
    gateway,
    qmd_config,
    run_openclaw,
    unique_token,
)

pytest_plugins = ["tests.conftest_testbed"]

CANARY_REL = "memory/clawprobe-canary.md"
# Files OpenClaw's own CLI (memory status / memory search) creates or rewrites when clawprobe runs it,
# relative to the state dir. Everything else in the state dir and workspace must stay byte-identical.
OPENCLAW_BOOKKEEPING = (
    "state/openclaw.sqlite", "state/openclaw.sqlite-wal", "state/openclaw.sqlite-shm",
    "agents/main/agent/openclaw-agent.sqlite", "agents/main/agent/openclaw-agent.sqlite-wal",
    "agents/main/agent/openclaw-agent.sqlite-shm", "agents/main/agent/openclaw-agent.sqlite.reindex-lock.sqlite",
)
# SQLite's own housekeeping when a reader closes the QMD index: an empty -wal/-shm left by the writer is
# removed (index.sqlite itself is unchanged).
SQLITE_SIDECARS = ("agents/main/qmd/xdg-cache/qmd/index.sqlite-wal", "agents/main/qmd/xdg-cache/qmd/index.sqlite-shm")


def snapshot(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink():
                out[f"{root.name}/{p.relative_to(root)}"] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def shell_env(home: OpenClawHome, testbed, path_dirs, version: str = OC_QMD) -> dict:
    return home.env(path_dirs, {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(version))})


def plant(home: OpenClawHome) -> CanarySpec:
    token = unique_token()
    text = f"# clawprobe canary\n\nSynthetic canary token {token} (safe to keep).\n"
    home.write_file(CANARY_REL, text)
    return CanarySpec(token=token, expected_path=CANARY_REL, content_sha256=hashlib.sha256(text.encode()).hexdigest())


def verdict(receipt):
    d = diagnose(receipt)
    return d.verdict.value, d.reason, d


@pytest.fixture(scope="module")
def healthy_home(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="healthy")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    spec = plant(home)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    return home, spec


def test_healthy_qmd_search_mode_with_canary_and_state_untouched(healthy_home, testbed):
    home, spec = healthy_home
    clear_caches()
    before = snapshot(home.state_dir, home.workspace)
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
    r = collect(ctx, "main", canary=spec)
    after = snapshot(home.state_dir, home.workspace)
    v, reason, d = verdict(r)
    assert v == "healthy", (d.evidence, r.probe_errors)
    assert r.backend.effective == "qmd" and r.canary.outcome == "found" and r.canary.returned_path == CANARY_REL
    assert r.canary.direct_qmd_found is True and r.qmd.store_ok is True and r.qmd.version == "2.8.3"
    assert r.gateway.env_source == "shell" and reason == "env_from_shell"
    allowed = {f"state/{p}" for p in OPENCLAW_BOOKKEEPING + SQLITE_SIDECARS}
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed <= allowed, sorted(changed - allowed)
    assert f"state/{SQLITE_SIDECARS[0][:-4]}" in before and before[f"state/{SQLITE_SIDECARS[0][:-4]}"] == \
        after[f"state/{SQLITE_SIDECARS[0][:-4]}"]  # the QMD index itself is byte-identical


def test_store_command_does_not_write_the_index(healthy_home, testbed):
    home, _ = healthy_home
    qh = qmd_home(str(home.state_dir), "main")
    env = qb.qmd_env(qh, [str(testbed.bin_dir), "/usr/bin", "/bin"], str(home.home))
    qb.gather("qmd", [str(testbed.bin_dir), "/usr/bin", "/bin"], "shell", str(home.workspace), env, qh.index)
    before = snapshot(home.state_dir)
    ev = qb.gather("qmd", [str(testbed.bin_dir), "/usr/bin", "/bin"], "shell", str(home.workspace), env, qh.index)
    assert ev.store is not None and ev.store.rc == 0
    assert snapshot(home.state_dir) == before


def test_native_binding_crash_under_node20(healthy_home, testbed, tmp_path):
    src, _ = healthy_home
    home = OpenClawHome(tmp_path / "n20")
    shutil.copytree(src.root, home.root, symlinks=True)
    home.write_config(qmd_config(str(testbed.qmd_node20), "search"))
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, []))
    r = fast(ctx, "main", None)
    v, reason, d = verdict(r)
    assert (v, reason) == ("qmd_unavailable", "native_binding"), d.evidence
    assert r.qmd.version == "2.8.3" and r.qmd.store_ok is False


def test_service_path_depends_on_the_era(healthy_home, testbed, tmp_path):
    """qmd's real launcher is ``#!/usr/bin/env node``: with a PATH that has no node it exits 127 — unless the
    build appends its own Node dir to the qmd child PATH (2026.7.35 does, RW05 era note)."""
    home, _ = healthy_home
    launcher = testbed.root / "qmd" / "node_modules" / "@tobilu" / "qmd" / "bin" / "qmd"
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    qh = qmd_home(str(home.state_dir), "main")
    old = qb.gather(str(launcher), [str(empty)], "systemd", str(home.workspace),
                    qb.qmd_env(qh, [str(empty)], str(home.home)), qh.index)
    f = qb.interpret(old)
    assert f.failure == "service_path" and "node" in f.failure_detail
    dirs = qb.child_path([str(empty)], str(testbed.node.resolve().parent))
    new = qb.interpret(qb.gather(str(launcher), [str(empty)], "systemd", str(home.workspace),
                                 qb.qmd_env(qh, dirs, str(home.home)), qh.index))
    assert new.resolves and new.store_ok, new


@pytest.fixture(scope="module")
def gateway_without_qmd(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="gwpath")
    home.write_memory_md()
    spec = plant(home)
    with gateway(home, OC_QMD, path_dirs=[], testbed=testbed) as gw:
        yield home, spec, gw


def test_gateway_path_lacks_qmd_while_the_shell_has_it(gateway_without_qmd, testbed):
    home, _, gw = gateway_without_qmd
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
    r = fast(ctx, "main", None)
    v, reason, d = verdict(r)
    assert (v, reason) == ("qmd_unavailable", "not_on_path"), d.evidence
    assert r.gateway.running and r.gateway.pid == gw.pid and r.gateway.env_source == "process"
    assert str(testbed.bin_dir) not in r.gateway.path_dirs and "'qmd' is not on the gateway" in r.qmd.failure_detail


def wait_ready(home: OpenClawHome, timeout: float = 40) -> None:
    """Wait until the gateway logged ``gateway ready`` and its config watcher had time to arm."""
    deadline = time.monotonic() + timeout
    while not any("gateway ready" in m for m in home.log_messages()):
        assert time.monotonic() < deadline, home.log_messages()[-5:]
        time.sleep(0.3)
    time.sleep(2.0)


def test_absolute_qmd_command_fixes_it(gateway_without_qmd, testbed):
    home, spec, gw = gateway_without_qmd
    wait_ready(home)
    home.update_config({"memory": {"qmd": {"command": str(testbed.qmd)}}})
    deadline = time.monotonic() + 40

    def restarted_after_change() -> bool:
        msgs = home.log_messages()
        change = next((i for i, m in enumerate(msgs) if "memory.qmd.command" in m), None)
        return change is not None and any("gateway ready" in m for m in msgs[change:])

    while not restarted_after_change():
        assert time.monotonic() < deadline, home.log_messages()[-10:]
        time.sleep(0.5)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[], testbed=testbed)
    assert res.rc == 0, res.stderr
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
    r = collect(ctx, "main", canary=spec)
    v, reason, d = verdict(r)
    assert v == "healthy", (d.evidence, r.probe_errors)
    assert r.gateway.drift is False and r.qmd.resolved_path == str(testbed.qmd) and r.canary.outcome == "found"


def test_fallback_active_when_the_qmd_manager_cannot_be_built(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="fallback")
    home.write_memory_md()
    spec = plant(home)
    blocker = home.agent_dir() / "qmd"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a directory: OpenClaw cannot create the agent's QMD home here\n")
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
    r = collect(ctx, "main", canary=spec)
    v, reason, d = verdict(r)
    assert v == "fallback_active", (d.evidence, r.qmd, r.probe_errors)
    assert r.qmd.resolves is True and r.backend.effective == "builtin"
    assert r.canary.outcome == "found" and r.canary.result_shape == "builtin"


def test_backend_retired_on_2026_9_6_with_qmd_keys(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="retired")
    home.write_memory_md()
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir], OC_LATEST))
    r = collect(ctx, "main")
    v, reason, d = verdict(r)
    assert (v, reason) == ("backend_retired", "retired_keys"), d.evidence
    assert r.openclaw.version == "2026.9.6" and "memory.qmd" in r.config.retired_keys


def test_config_invalid_line_column_and_json5_control_agree_with_openclaw(oc_home_factory, testbed):
    home = oc_home_factory(None, name="badcfg")
    lines = ["{", "  // provisioned", "  agents: {", "    defaults: {", "      memorySearch: {", "        provider: 'none',",
             "      },", "    },", "  },", "  memory: {", "    backend: 'qmd',", "    qmd: {", "      searchMode: 'search',",
             "      command: 'qmd',", '      paths: [{name: "notes", path: "/srv/no', 'tes"}],', "    },", "  },", "}"]
    home.write_config("\n".join(lines) + "\n")
    clear_caches()
    r = collect(discover(env=shell_env(home, testbed, [testbed.bin_dir])), "main")
    v, reason, d = verdict(r)
    assert (v, reason) == ("config_invalid", "parse") and r.config.error.line == 15, d.evidence
    assert r.config.error.column == len(lines[14]) + 1
    oc = run_openclaw(home, OC_QMD, "config", "validate", "--json", testbed=testbed)
    assert oc.rc == 1 and "invalid character '\\\\n' at 16:0" in oc.stdout  # OpenClaw counts the next line
    home.write_config("// JSON5 control\n{\n  memory: { backend: 'qmd', qmd: { searchMode: \"search\", }, },\n"
                      "  agents: { defaults: { memorySearch: { provider: 'none', }, }, },\n}\n")
    clear_caches()
    r = fast(discover(env=shell_env(home, testbed, [testbed.bin_dir])), "main", None)
    assert r.config.error is None and r.config.configured_backend == "qmd"
    ok = run_openclaw(home, OC_QMD, "config", "validate", "--json", testbed=testbed)
    assert ok.rc == 0 and ok.json()["valid"] is True


def test_config_drift_with_a_real_gateway_and_reload_off(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search", gateway={"reload": {"mode": "off"}}), name="drift")
    home.write_memory_md()
    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir], testbed=testbed) as gw:
        clear_caches()
        ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
        wait_ready(home)
        assert fast(ctx, "main", None).gateway.drift is False
        home.update_config({"memory": {"qmd": {"searchMode": "vsearch"}}})
        deadline = time.monotonic() + 30
        while not any("config reload disabled" in m for m in home.log_messages()):
            assert time.monotonic() < deadline and gw.alive(), home.log_messages()[-5:]
            time.sleep(0.3)
        ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
        r = fast(ctx, "main", None)
        v, reason, d = verdict(r)
        assert (v, reason) == ("config_drift", "stale_manager"), d.evidence
        assert r.gateway.drift_keys == ["memory.qmd.searchMode"] and r.gateway.pid == gw.pid


def test_check_command_without_an_install_says_so(tmp_path):
    import subprocess
    import sys

    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "clawprobe", "check"], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(__file__)), timeout=60)
    assert p.returncode == 3 and "not installed" in p.stderr and "Traceback" not in p.stderr


def test_a_qmd_wrapper_that_names_its_own_index_beside_an_existing_one_is_index_elsewhere(testbed, tmp_path):
    """Breaker round 15, A2: ``memory.qmd.command`` is a wrapper ``exec qmd --index work "$@"``; the agent's
    ``index.sqlite`` already exists (built before the wrapper), so every update OpenClaw runs lands in ``work.sqlite``
    beside it and ``Memory index updated`` is printed — the check said healthy, then stale for ever. A newer sibling
    index makes the check ask the command where it indexes (its ``--help`` under a scratch home): the wrapper names
    ``work.sqlite``; the real qmd beside the same sibling names ``index.sqlite`` and passes."""
    import sqlite3

    from clawprobe.core.proc import run

    home = OpenClawHome(tmp_path / "named idx")
    home.write_config(qmd_config("qmd", "search"))
    wrap = tmp_path / "qmd-wrap"
    wrap.write_text(f'#!/bin/sh\nexec {testbed.qmd} --index work "$@"\n')
    wrap.chmod(0o755)
    qh = qmd_home(str(home.state_dir), "agent-7")
    dirs = [str(testbed.bin_dir), "/usr/bin", "/bin"]
    env = qb.qmd_env(qh, dirs, str(home.home))
    os.makedirs(os.path.dirname(qh.index), exist_ok=True)
    sqlite3.connect(qh.index).execute("CREATE TABLE t (x)").connection.close()
    os.utime(qh.index, (time.time() - 3600, time.time() - 3600))
    ev = qb.gather(str(wrap), dirs, "shell", str(home.workspace), env, qh.index)
    assert ev.index_reported is None  # no sibling yet: nothing asked beyond the usual two calls
    made = run([str(wrap), "collection", "list"], env, 60)  # the wrapper's first write: its own work.sqlite
    assert made.rc == 0 and qb.newer_sibling_index(qh.index) == os.path.join(os.path.dirname(qh.index), "work.sqlite")
    f = qb.interpret(qb.gather(str(wrap), dirs, "shell", str(home.workspace), env, qh.index))
    assert f.failure == "index_elsewhere" and "work.sqlite" in (f.failure_detail or "") and "--index" in f.failure_detail
    plain = qb.gather("qmd", dirs, "shell", str(home.workspace), env, qh.index)
    assert plain.index_reported == plain.index_given and qb.interpret(plain).failure is None


def test_a_qmd_wrapper_that_keeps_its_own_index_is_index_elsewhere(testbed, tmp_path):
    """Breaker round 6 (z23): the ``qmd`` on PATH is a site wrapper (``export XDG_CACHE_HOME=~/.cache/qmd-site``): every
    ``openclaw memory index`` ends "QMD index file not found" — clawprobe said ``never_indexed`` → that very command.
    The real qmd 2.8.3's ``--help`` under a scratch home's XDG dirs names where it really indexes; the plain qmd
    indexes where it is told. Nothing is written in the agent's state (its index dir is never given to qmd)."""
    home = OpenClawHome(tmp_path / "wrapped")
    home.write_config(qmd_config("qmd", "search"))
    site = tmp_path / "bin"
    site.mkdir()
    (site / "qmd").write_text(f'#!/bin/sh\nexport XDG_CACHE_HOME="{tmp_path}/site cache"\nexec {testbed.qmd} "$@"\n')
    (site / "qmd").chmod(0o755)
    qh = qmd_home(str(home.state_dir), "main")
    dirs = [str(site), str(testbed.bin_dir), "/usr/bin", "/bin"]
    env = qb.qmd_env(qh, dirs, str(home.home))
    before = snapshot(home.state_dir)
    ev = qb.gather("qmd", dirs, "shell", str(home.workspace), env, qh.index)
    assert ev.index_reported == f"{tmp_path}/site cache/qmd/index.sqlite" and ev.index_given
    f = qb.interpret(ev)
    assert f.failure == "index_elsewhere" and "site cache" in (f.failure_detail or "")
    plain = qb.gather("qmd", dirs[1:], "shell", str(home.workspace), env, qh.index)
    assert plain.index_reported == plain.index_given and qb.interpret(plain).failure is None
    assert snapshot(home.state_dir) == before
    r = Receipt(agent_id="main", checked_at=datetime.now(UTC))
    r.config.configured_backend, r.qmd = "qmd", f
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "index_elsewhere")
    assert d.next_action.command == f"grep -nE 'XDG_CACHE_HOME|XDG_CONFIG_HOME|INDEX_PATH|--index' {site / 'qmd'}"


def test_index_elsewhere_names_the_real_qmd_and_the_pasted_repair_gives_the_agent_its_index(oc_home_factory, testbed,
                                                                                             tmp_path):
    """Breaker round 23: the index_elsewhere walk's "Point OpenClaw at the qmd binary itself" step printed ``openclaw
    config set memory.qmd.command /path/to/the/real/qmd`` to copy; pasted (real 2026.7.35) it was accepted, the next
    index fell back to builtin and the re-probe said command_missing. The step now names a working qmd found
    beside the wrapper (the candidate search), never the wrapper; with none found it is not offered to copy."""
    from clawprobe.core.locate import Located, command_lines
    from tests.testbed import run_process

    home = oc_home_factory(name="wrapped-r23", agent_id="ops-bot")
    wrap = home.root / "site-bin" / "qmd-wrap"
    wrap.parent.mkdir()
    wrap.write_text(f'#!/bin/sh\nXDG_CACHE_HOME="{home.root}/site cache" exec {testbed.qmd} "$@"\n')
    wrap.chmod(0o755)
    home.write_config(qmd_config(str(wrap), "search"))
    home.update_config({"agents": {"list": [{"id": "Ops.Bot", "default": True}]}})
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "ops-bot", path_dirs=[testbed.bin_dir],
                        testbed=testbed).rc != 0  # "QMD index file not found": the wrapper indexed elsewhere
    clear_caches()
    env = shell_env(home, testbed, [testbed.bin_dir])
    ctx = discover(env=env)
    lines = command_lines(ctx.openclaw, Located(path=str(home.state_dir), source="--state-dir"), None)
    r = collect(ctx, "ops-bot", run_slow=False)
    d = diagnose(r, openclaw=lines.openclaw, state_dir=str(home.state_dir), clawprobe=lines.clawprobe)
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "index_elsewhere"), d.evidence
    step = next(s for s in d.next_action.steps if s.title == "Point OpenClaw at the qmd binary itself")
    assert step.command is not None and step.command.endswith(f"config set memory.qmd.command {testbed.qmd}")
    # no working qmd beside the wrapper: the step is not offered to copy, and says what it needs
    alone = qb.interpret(qb.gather(str(wrap), ["/usr/bin", "/bin"], "shell", str(home.workspace),
                                   qb.qmd_env(qmd_home(str(home.state_dir), "ops-bot"), ["/usr/bin", "/bin"],
                                              str(home.home)), home.qmd_index("ops-bot").as_posix()))
    assert alone.failure == "index_elsewhere" and alone.candidate_path is None
    step = next(s for s in diagnose(r.model_copy(update={"qmd": alone})).next_action.steps
                if s.title == "Point OpenClaw at the qmd binary itself")
    assert step.command is None and "absolute path of qmd" in step.check
    operator = {k: v for k, v in env.items() if k not in ("OPENCLAW_STATE_DIR", "CLAWPROBE_OPENCLAW")}
    operator["HOME"] = str(tmp_path)
    for title in ("Point OpenClaw at the qmd binary itself", "Index"):
        cmd = next(s.command for s in d.next_action.steps if s.title == title)
        res = run_process(["bash", "-c", cmd or ""], env=operator, cwd=tmp_path, timeout=240)
        assert res.rc == 0, res
    assert home.qmd_index("ops-bot").is_file() and not (tmp_path / ".openclaw").exists()


@pytest.mark.parametrize("agent_id", ["main", "ops-bot"])
def test_node20_launcher_recovers_like_the_operators_shell(testbed, tmp_path, agent_id):
    """An ``openclaw`` launcher pinned to Node 20 (2026.9.6 needs 24.16+): OpenClaw's launcher retries with the
    ``node`` on PATH, but refuses a candidate under its working directory — and under ``/`` every path is. Run from
    the operator's home (or the gateway's dir) it answers; clawprobe's ``--version`` ran in ``/`` and said "the
    openclaw CLI failed", a repair the operator's shell then "passed" (breaker round 23, #2); with it answering, the
    launcher's "Retrying with …" line on every memory command was an unrecognized signal."""
    home = OpenClawHome.create(tmp_path, prefix=f"n20-{agent_id}-", agent_id=agent_id)
    agents = {"agents": {"list": [{"id": agent_id, "default": True}]}} if agent_id != "main" else {}
    home.write_config(builtin_config("none", version=OC_LATEST, **agents))
    home.write_memory_md("# Memory\n\nThe tea is oolong.\n")
    spec = plant(home)
    rc, _, err, _ = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", agent_id, path_dirs=[testbed.bin_dir])
    assert rc == 0, err
    launcher_dir = tmp_path / "pinned bin"
    launcher_dir.mkdir()
    launcher = launcher_dir / "openclaw"
    launcher.write_text(f'#!/bin/sh\nexec "{testbed.node20}" "{testbed.openclaw_package(OC_LATEST) / "openclaw.mjs"}" "$@"\n')
    launcher.chmod(0o755)
    env = home.env([launcher_dir, testbed.bin_dir])  # testbed's `node` is a symlink to Node 24 (like nvm's)
    env.pop("CLAWPROBE_OPENCLAW", None)
    clear_caches()
    ctx = discover(env=env)
    assert ctx.openclaw == [str(launcher)]
    assert (ctx.openclaw_version, ctx.version_error) == (OC_LATEST, None)
    r = collect(ctx, agent_id, canary=spec)
    retried = [e for e in r.ledger if "Retrying with" in e.line]
    assert retried and {e.kind for e in retried} == {"benign"}, r.ledger  # the launcher did retry, and it is read
    assert [e.line for e in r.ledger if e.kind == "unrecognized"] == []
    v, _, d = verdict(r)
    # (another gateway still running on the host — a test's that just ended — adds a gateway_elsewhere hint: a fact
    # of the host, not of the launcher)
    assert v == "healthy" and [w.tag for w in d.warnings if w.tag != "gateway_elsewhere"] == [], (d.evidence, d.warnings)
