"""Where the running gateway's log really is, and a log that cannot show a fallback (real OpenClaw 2026.7.35,
qmd 2.8.3, a real ``openclaw gateway run``; tester's brk-verdict repro-1/-2/-3).

* A relative ``logging.file`` is resolved by OpenClaw against the writing process's working directory: the
  gateway's ``/proc/<pid>/cwd``, not the config dir. clawprobe read ``<config dir>/oclogs/gw.log`` (never
  written), missed the gateway's fallback and said healthy.
* The dated default log is named by the WRITING process's local date (its ``TZ``): every such file written
  in the window is read, whatever date its name carries.
* ``logging.level: "error"`` drops the WARN line a fallback writes: with a gateway running, nothing else
  proving its backend, the verdict is unverified · log_blind, never healthy.

The gateway starts with qmd off its PATH (one fallback at its first search), then qmd is put on that PATH:
the gateway stays on builtin (sticky) while a fresh CLI process finds the canary through qmd.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import _log_plan, clear_caches, collect, discover, fast
from clawprobe.core.probes import openclaw_log as oclog
from tests.test_probes_env_real import plant, shell_env
from tests.testbed import OC_QMD, gateway, qmd_config, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


def invoke_search(gw, query: str) -> str:
    """The gateway's own ``memory_search`` tool (``POST /tools/invoke``), its answer as text."""
    req = urllib.request.Request(f"http://127.0.0.1:{gw.port}/tools/invoke", method="POST",
                                 data=json.dumps({"tool": "memory_search", "args": {"query": query}}).encode(),
                                 headers={"Authorization": f"Bearer {gw.token}", "content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.read().decode()


def sticky_gateway(home, testbed, gwbin: Path):
    """The gateway with ``gwbin`` (no qmd yet: :func:`_fall_back` puts it there later) as its PATH."""
    return gateway(home, OC_QMD, path_dirs=[gwbin], testbed=testbed)


def _build(oc_home_factory, testbed, name: str, logging: dict):
    home = oc_home_factory(qmd_config("qmd", "search", logging=logging), name=name)
    home.write_memory_md("# Memory\n\nThe staging database lives on host db-stage-04.\n")
    spec = plant(home)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    gwbin = home.root / "gwbin"
    gwbin.mkdir()
    return home, spec, gwbin


def _fall_back(gw, gwbin: Path, testbed, spec) -> None:
    first = invoke_search(gw, spec.token)
    assert "builtin" in first, first[:500]
    (gwbin / "qmd").symlink_to(testbed.qmd)  # qmd installed now: the gateway stays on builtin
    time.sleep(1)
    again = invoke_search(gw, spec.token)
    assert "builtin" in again, again[:500]


def test_a_relative_logging_file_is_read_where_the_gateway_writes_it(oc_home_factory, testbed):
    home, spec, gwbin = _build(oc_home_factory, testbed, "rellog", {"file": "oclogs/gw.log"})
    with sticky_gateway(home, testbed, gwbin) as gw:
        _fall_back(gw, gwbin, testbed, spec)
        clear_caches()
        ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
        assert ctx.gateway is not None and ctx.gateway.process is not None
        assert ctx.gateway.process.cwd == str(home.root)  # /proc/<pid>/cwd of the real gateway
        written = home.root / "oclogs" / "gw.log"
        assert written.is_file() and not (home.state_dir / "oclogs" / "gw.log").exists()
        paths, blind = _log_plan(ctx, datetime.now(UTC))
        assert (paths, blind) == ([str(written)], None)
        r = fast(ctx, "main", None)
        d = diagnose(r)
        assert d.verdict.value == "fallback_active", d.evidence
        assert r.backend.fallback_reason is not None and "qmd binary unavailable" in (r.backend.fallback_detail or "")
    # no gateway: the relative path is said to be unresolvable, nothing is guessed
    clear_caches()
    ctx = discover(env=shell_env(home, testbed, [testbed.bin_dir]))
    paths, blind = _log_plan(ctx, datetime.now(UTC))
    assert paths == [] and blind is not None and "'oclogs/gw.log' is relative" in blind and "no running gateway" in blind


def test_a_log_level_above_warn_leaves_the_gateways_backend_unproven(oc_home_factory, testbed):
    home, spec, gwbin = _build(oc_home_factory, testbed, "quietlog", {})
    home.update_config({"logging": {"file": str(home.log_file), "level": "error"}})
    with sticky_gateway(home, testbed, gwbin) as gw:
        _fall_back(gw, gwbin, testbed, spec)
        assert not any("falling back to builtin" in m for m in home.log_messages())  # the WARN was dropped
        clear_caches()
        env = shell_env(home, testbed, [testbed.bin_dir])
        r = collect(discover(env=env), "main", canary=spec)
        d = diagnose(r)
        # a fresh CLI process finds the canary through qmd; the gateway serves builtin — not healthy
        assert r.canary.outcome == "found"
        assert (d.verdict.value, d.reason) == ("unverified", "log_blind"), d.evidence
        assert r.backend.gateway_unproven and 'logging.level "error"' in r.backend.gateway_unproven
        assert any('logging.level "error"' in e for e in d.evidence)


def test_dated_default_logs_are_chosen_by_mtime_not_by_clawprobes_date(tmp_path):
    """Real files: a gateway in UTC+14 writes tomorrow's name (by clawprobe's date), one in UTC-11 yesterday's;
    a file last written three days ago is outside the window; another profile's file is not this one's."""
    now = datetime.now(UTC)
    names = {f"openclaw-{(now + timedelta(days=1)).strftime('%Y-%m-%d')}.log": now,
             f"openclaw-{(now - timedelta(days=1)).strftime('%Y-%m-%d')}.log": now - timedelta(hours=3),
             f"openclaw-{(now - timedelta(days=3)).strftime('%Y-%m-%d')}.log": now - timedelta(days=3),
             f"openclaw-work-{now.strftime('%Y-%m-%d')}.log": now,
             "openclaw-notes.log": now}
    for n, t in names.items():
        p = tmp_path / n
        p.write_text("{}\n")
        os.utime(p, (t.timestamp(), t.timestamp()))

    def default_for(d: datetime) -> str:
        return str(tmp_path / f"openclaw-{d.strftime('%Y-%m-%d')}.log")

    got = oclog.log_files(None, now, default_for)
    want = sorted(str(tmp_path / n) for n in list(names)[:2])
    assert got == want
    # a gateway running for four days: its start bounds the window instead
    got = oclog.log_files(None, now, default_for, since=now - timedelta(days=4))
    assert got == sorted(str(tmp_path / n) for n in list(names)[:3])
    assert oclog.log_files(str(tmp_path / "missing.log"), now, default_for) == []


def test_a_log_this_user_cannot_read_leaves_the_gateways_backend_unproven(oc_home_factory, testbed, tmp_path):
    """The gateway's log written by another user (``/tmp/openclaw`` is ``0700``, a ``logging.file`` of mode
    ``0600``): clawprobe read it as an empty log, so the gateway's fallback line was never seen — a fresh CLI
    process finds the canary through qmd, and the check said HEALTHY while the gateway served builtin. Here the
    log is write-only (``0200``: the gateway and the CLI still append to it) and ``clawprobe check`` runs without
    the capability that lets root read it anyway (``setpriv``: what any other user has). Now the log is named as
    unreadable: ``unverified · log_blind``, never healthy."""
    home = oc_home_factory(qmd_config("qmd", "search", logging={}), name="deniedlog")
    home.write_memory_md("# Memory\n\nThe staging database lives on host db-stage-04.\n")
    gwbin = home.root / "gwbin"
    gwbin.mkdir()
    env = {**shell_env(home, testbed, [testbed.bin_dir]), "CLAWPROBE_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    argv = [sys.executable, "-m", "clawprobe", "--agent", "main"]
    planted = subprocess.run([*argv, "canary", "plant", "--yes"], env=env, capture_output=True, text=True, timeout=120)
    assert planted.returncode == 0, planted.stderr
    assert run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed).rc == 0
    with sticky_gateway(home, testbed, gwbin) as gw:
        assert "builtin" in invoke_search(gw, "staging database")
        (gwbin / "qmd").symlink_to(testbed.qmd)  # qmd installed now: the gateway stays on builtin
        assert any("falling back to builtin" in m for m in home.log_messages())
        os.chown(home.log_file, 65534, 65534)  # the gateway's user's, 0600 (OpenClaw's own mode for it)
        home.log_file.chmod(0o600)
        unprivileged = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
        assert subprocess.run([*unprivileged, "cat", str(home.log_file)], capture_output=True, timeout=30).returncode
        got = subprocess.run([*unprivileged, *argv, "check", "--json"], env=env, capture_output=True, text=True,
                             timeout=300)
        os.chown(home.log_file, 0, 0)
    assert "Traceback" not in got.stderr, got.stderr
    (r,) = json.loads(got.stdout)["receipts"]
    assert (r["verdict"], r["reason"], got.returncode) == ("unverified", "log_blind", 3), r["diagnosis"]["evidence"]
    assert any(f"{home.log_file} cannot be read by this user" in e for e in r["diagnosis"]["evidence"]), r
