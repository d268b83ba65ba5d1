"""The gateway's PATH read from a systemd user unit the way systemd builds it, against the real qmd 2.8.3 and
OpenClaw 2026.7.35 (breaker round 14, F3–F6).

qmd lives only in ``optbin``, which the operator's shell has on its PATH. Each unit gives the gateway a PATH
without it — through a drop-in that resets ``EnvironmentFile=``, a backslash-continued ``Environment=``, an
``ExecStart=/usr/bin/env PATH=…`` wrapper, a dash-prefix drop-in (``openclaw-.service.d/``) — and every one was
called healthy: OpenClaw under that PATH logs ``spawn qmd ENOENT`` and serves builtin. The control unit (PATH with
``optbin``) resolves qmd. No gateway runs: the unit is the only source of the service's environment.
"""

from __future__ import annotations

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, discover, fast
from tests.testbed import OC_QMD, qmd_config

pytest_plugins = ["tests.conftest_testbed"]


@pytest.fixture(scope="module")
def unit_home(oc_home_factory, testbed):
    home = oc_home_factory(qmd_config("qmd", "search"), name="unit env")
    home.write_memory_md("# Memory\n\nThe build host is kb-7.\n")
    optbin = home.root / "opt bin"
    optbin.mkdir()
    (optbin / "qmd").symlink_to(testbed.qmd)
    units = home.home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    return home, optbin, units


def _check(home, optbin, testbed):
    clear_caches()
    env = home.env([optbin, testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD))})
    r = fast(discover(env=env), "main", None)
    d = diagnose(r)
    return r, d


def _write(units, files: dict[str, str]) -> None:
    for f in sorted(units.rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    for rel, text in files.items():
        p = units / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _layouts(state, optbin, home_dir) -> dict[str, dict[str, str]]:
    good, bare = f'"PATH={optbin}:/usr/bin:/bin"', '"PATH=/usr/bin:/bin"'
    sd = f'"OPENCLAW_STATE_DIR={state}"'
    run = "ExecStart=/usr/bin/openclaw gateway run\n"
    return {
        "control": {"openclaw-gateway.service": f"[Service]\nEnvironment={sd} {good}\n{run}"},
        "envfile reset by a drop-in": {
            "openclaw-gateway.service": f"[Service]\nEnvironment={sd}\nEnvironmentFile=%h/gw.env\n{run}",
            "openclaw-gateway.service.d/override.conf": f"[Service]\nEnvironmentFile=\nEnvironment={bare}\n",
        },
        "continued line": {"openclaw-gateway.service": f"[Service]\nEnvironment={sd} \\\n    {bare}\n{run}"},
        "env wrapper": {"openclaw-gateway.service":
                        f"[Service]\nEnvironment={sd} {good}\nExecStart=/usr/bin/env PATH=/usr/bin:/bin openclaw gateway\n"},
        "dash-prefix drop-in": {
            "openclaw-gateway.service": f"[Service]\nEnvironment={sd} {good}\n{run}",
            "openclaw-.service.d/10-path.conf": f"[Service]\nEnvironment={bare}\n",
        },
    }


def test_the_gateway_path_is_the_one_systemd_builds(unit_home, testbed):
    home, optbin, units = unit_home
    (home.home / "gw.env").write_text(f"PATH={optbin}:/usr/bin:/bin\n")
    for name, files in _layouts(home.state_dir, optbin, home.home).items():
        _write(units, files)
        r, d = _check(home, optbin, testbed)
        assert r.gateway.env_source == "systemd", (name, r.gateway)
        if name == "control":
            assert r.qmd.resolves is True and str(optbin) in r.gateway.path_dirs, (name, r.qmd)
            assert d.verdict.value != "qmd_unavailable", (name, d.evidence)
        else:
            assert r.gateway.path_dirs == ["/usr/bin", "/bin"], (name, r.gateway.path_dirs)
            assert (d.verdict.value, d.reason) == ("qmd_unavailable", "not_on_path"), (name, d.evidence)
