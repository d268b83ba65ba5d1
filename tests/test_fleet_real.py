"""The textfile on the real stack: node_exporter (started here on a loopback port, for a bounded time) scrapes
what clawprobe wrote — ``clawprobe check --textfile`` on a real QMD install (real openclaw 2026.7.35 + qmd),
on an install without OpenClaw, on a check that cannot run, and ``clawprobe replay --textfile`` for every
verdict of the embedded scenarios — with no parse error (``node_textfile_scrape_error 0``) and every metric
and label present; ``promtool check metrics`` on each file; SIGTERM during a real check leaves a truthful
file; ``systemd-analyze verify`` on the contrib units. The Prometheus tools come from
scripts/install-promstack.sh: without them these tests FAIL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from clawprobe.core import canary_write
from tests.test_fleet_rules import SCENARIOS, replay_textfile, tool
from tests.testbed import OC_QMD, free_port, qmd_config, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]

ROOT = Path(__file__).resolve().parent.parent
NODE_EXPORTER_LIFETIME_S = 300  # the server is killed at teardown, and by timeout(1) at the latest after this
SCRAPE_TIMEOUT_S = 20


def _node_exporter_bin() -> str:
    return shutil.which("prometheus-node-exporter") or tool("node_exporter")


@pytest.fixture(scope="module")
def node_exporter(tmp_path_factory) -> Iterator[tuple[Path, str]]:
    """A real node_exporter with only the textfile collector, reading a fresh directory; (dir, metrics URL)."""
    d = tmp_path_factory.mktemp("textfile")
    port = free_port()
    argv = [tool("timeout"), str(NODE_EXPORTER_LIFETIME_S), _node_exporter_bin(), f"--web.listen-address=127.0.0.1:{port}",
            "--collector.disable-defaults", "--collector.textfile", f"--collector.textfile.directory={d}"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        end = time.monotonic() + SCRAPE_TIMEOUT_S
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                assert p.poll() is None, f"node_exporter exited: {p.stderr.read().decode() if p.stderr else ''}"
                assert time.monotonic() < end, "node_exporter did not answer"
                time.sleep(0.05)
        yield d, url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


def scrape(url: str) -> dict[str, dict[tuple, float]]:
    """name → {sorted label items → value} of one scrape."""
    text = urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT_S).read().decode()
    out: dict[str, dict[tuple, float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def written(text: str) -> dict[str, dict[tuple, float]]:
    out: dict[str, dict[tuple, float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def _cli_env(home, testbed, data: Path, *, openclaw: bool = True) -> dict[str, str]:
    extra = {"CLAWPROBE_DATA_DIR": str(data), "NODE_COMPILE_CACHE": str(testbed.compile_cache(OC_QMD))}
    if openclaw:
        extra["CLAWPROBE_OPENCLAW"] = str(testbed.openclaw(OC_QMD))
    return home.env([testbed.bin_dir] if openclaw else [], extra)


def check_textfile(env: dict[str, str], state_dir: Path, out: Path, timeout: float = 240) -> int:
    """``clawprobe check --state-dir S --textfile OUT`` as its own process; its exit code."""
    p = subprocess.run([sys.executable, "-m", "clawprobe", "check", "--state-dir", str(state_dir), "--textfile", str(out)],
                       env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=timeout)
    assert out.is_file(), p.stderr
    return p.returncode


@pytest.fixture(scope="module")
def real_files(oc_home_factory, testbed, tmp_path_factory):
    """(name → textfile text, the real QMD home, its clawprobe data dir): real checks (one openclaw-backed
    run) + the replayed scenarios."""
    out = tmp_path_factory.mktemp("written")
    home = oc_home_factory(qmd_config("qmd", "search"), name="fleet")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path_factory.mktemp("clawprobe-data")
    canary_write.plant(home.workspace, "main", root=data)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    files = {}
    rc = check_textfile(_cli_env(home, testbed, data), home.state_dir, out / "real-qmd.prom")
    files["real-qmd"] = (out / "real-qmd.prom").read_text()
    files["real-qmd rc"] = str(rc)
    bare = oc_home_factory(qmd_config("qmd", "search"), name="no-openclaw")  # an install whose CLI is gone
    # qmd_unavailable (no qmd on this PATH either): a verdict, but with no OpenClaw it is not a proven one
    assert check_textfile(_cli_env(bare, testbed, data, openclaw=False), bare.state_dir, out / "no-openclaw.prom") == 2
    files["no-openclaw"] = (out / "no-openclaw.prom").read_text()
    assert check_textfile(_cli_env(bare, testbed, data), bare.root / "typo", out / "cannot-run.prom") == 3
    files["cannot-run"] = (out / "cannot-run.prom").read_text()
    for sc in SCENARIOS:
        files[sc.stem] = replay_textfile(out, sc)
    return files, home, data


def _prom(files: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in files.items() if not k.endswith(" rc")}


def test_real_check_verdicts_and_clawprobe_up(real_files):
    files, _, _ = real_files
    real = written(files["real-qmd"])
    assert files["real-qmd rc"] == "0", files["real-qmd"]  # exit 0: healthy
    assert real["clawprobe_up"][()] == 1  # healthy: proved by the openclaw and qmd calls that ran
    (current,) = [dict(lab) for lab, v in real["clawprobe_verdict"].items() if v == 1]
    assert current["agent"] == "main" and current["verdict"] == "healthy"  # tag: a warning riding along, if any
    assert real["clawprobe_canary_found"][(("agent", "main"),)] == 1
    # the ledger of a healthy real run: every class written, nothing clawprobe cannot judge
    ledger = {dict(lab)["class"]: v for lab, v in real["clawprobe_ledger_signals"].items()}
    assert set(ledger) == {"explained", "benign", "unrecognized"} and ledger["unrecognized"] == 0
    (info,) = real["clawprobe_versions_info"]
    assert dict(info)["openclaw"] == OC_QMD and dict(info)["qmd"].startswith("2.8.3")
    # coverage, measured by the disk scan against the real index: MEMORY.md and the canary, both indexed
    mem = (("agent", "main"), ("source", "memory"))
    assert [real[f"clawprobe_coverage_{n}"][mem] for n in ("expected_files", "indexed_files", "missing_files")] == [2, 2, 0]
    bare = written(files["no-openclaw"])
    assert bare["clawprobe_up"][()] == 0 and bare["clawprobe_agent_up"][(("agent", "main"),)] == 0
    assert "# clawprobe: agent main: openclaw_not_found" in files["no-openclaw"]
    cannot = written(files["cannot-run"])
    assert cannot["clawprobe_up"][()] == 0 and "clawprobe_verdict" not in cannot
    assert "# clawprobe: " in files["cannot-run"]


def test_node_exporter_scrapes_every_file_without_error_and_with_every_metric_and_label(real_files, node_exporter):
    files, _, _ = real_files
    files = _prom(files)
    d, url = node_exporter
    seen_verdicts = set()
    for name, text in files.items():
        for old in d.iterdir():
            old.unlink()
        f = d / "clawprobe.prom"
        f.write_text(text)
        f.chmod(0o644)
        got = scrape(url)
        assert got["node_textfile_scrape_error"][()] == 0, name
        assert (("file", str(f)),) in got["node_textfile_mtime_seconds"], name
        for metric, samples in written(text).items():
            assert metric in got, (name, metric)
            for labels, value in samples.items():
                assert got[metric].get(labels) == value, (name, metric, labels)
        seen_verdicts |= {dict(lab)["verdict"] for lab, v in written(text).get("clawprobe_verdict", {}).items() if v == 1}
    assert len(seen_verdicts) == 13  # every verdict went through the real collector


def test_promtool_check_metrics_on_every_file(real_files):
    files, _, _ = real_files
    for name, text in _prom(files).items():
        p = subprocess.run([tool("promtool"), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and p.stdout == "" and p.stderr == "", (name, p.stdout, p.stderr)


def test_sigterm_during_a_real_check_leaves_clawprobe_up_0_and_why(real_files, testbed, tmp_path):
    """The last good file (clawprobe_up 1) is replaced by a truthful one when a real check is stopped by SIGTERM
    while an openclaw child runs; no child outlives clawprobe."""
    files, home, data = real_files
    out = tmp_path / "clawprobe.prom"
    out.write_text(files["real-qmd"])
    env = _cli_env(home, testbed, data)
    p = subprocess.Popen([sys.executable, "-m", "clawprobe", "check", "--state-dir", str(home.state_dir),
                          "--textfile", str(out)], env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        me = psutil.Process(p.pid)
        end = time.monotonic() + 120
        kids: list[psutil.Process] = []
        while not kids:  # wait (bounded) for an openclaw/qmd child: the check is probing
            assert p.poll() is None and time.monotonic() < end, "no child appeared"
            kids = [k for k in me.children(recursive=True) if "openclaw" in " ".join(k.cmdline()) or "qmd" in " ".join(k.cmdline())]
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert rc == 143, p.stderr.read() if p.stderr else ""
    text = out.read_text()
    m = written(text)
    assert m["clawprobe_up"][()] == 0 and "clawprobe_verdict" not in m
    assert "# clawprobe: interrupted by SIGTERM before every agent had a verdict" in text
    assert not [k for k in kids if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]


def _verify(units: list[Path], *, user: bool, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = [tool("systemd-analyze"), *(["--user"] if user else []), "verify", "--man=no", *[str(u) for u in units]]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=str(units[0].parent))


def test_systemd_units_verify(tmp_path):
    """``systemd-analyze verify`` (system and ``--user``) with ExecStart pointed at this clawprobe (it checks the
    executable exists); any warning (unknown key, bad value) fails the test."""
    exe = shutil.which("clawprobe", path=os.path.dirname(sys.executable)) or tool("clawprobe")
    base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    sysdir = tmp_path / "system"
    sysdir.mkdir()
    for u in (ROOT / "contrib" / "systemd" / "system").iterdir():
        (sysdir / u.name).write_text(u.read_text().replace("/usr/local/bin/clawprobe", exe))
    p = _verify(sorted(sysdir.iterdir()), user=False, env=base)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stdout + p.stderr
    home, run = tmp_path / "home", tmp_path / "run"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "clawprobe").symlink_to(exe)
    run.mkdir(mode=0o700)
    userdir = tmp_path / "user"
    shutil.copytree(ROOT / "contrib" / "systemd" / "user", userdir)
    p = _verify(sorted(userdir.iterdir()), user=True, env={**base, "HOME": str(home), "XDG_RUNTIME_DIR": str(run)})
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stdout + p.stderr
    broken = userdir / "clawprobe-check.service"
    broken.write_text(broken.read_text().replace("SuccessExitStatus=", "SucessExitStatus="))  # a typo must be seen
    p = _verify([broken], user=True, env={**base, "HOME": str(home), "XDG_RUNTIME_DIR": str(run)})
    assert "Unknown key" in p.stderr
