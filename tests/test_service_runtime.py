"""The gateway service's own Node (breaker round 6, z29): a user unit whose ExecStart runs OpenClaw 2026.9.6 under
Node 20 crash-loops ("node:sqlite is unavailable") while every `openclaw` command from a Node-24 shell works —
clawprobe said healthy. Now the unit's interpreter is measured (its own ``--version``) against the openclaw
package's ``engines.node``: ``memory_unavailable`` · ``gateway_runtime``. Real Node binaries and real OpenClaw
packages of the test bed; no OpenClaw command runs."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import gateway
from clawprobe.core.probes.service_runtime import exec_start, interpreter, satisfies
from clawprobe.core.probes.systemd_unit import assignments
from clawprobe.core.receipt import Receipt
from tests.testbed import OC_LATEST, OC_QMD


@pytest.mark.parametrize(("version", "required", "ok"), [
    ("v20.20.2", ">=24.16.0 <25 || >=26.1.0", False),
    ("v24.22.3", ">=24.16.0 <25 || >=26.1.0", True),
    ("v24.15.9", ">=24.16.0 <25 || >=26.1.0", False),
    ("v25.0.0", ">=24.16.0 <25 || >=26.1.0", False),
    ("v26.1.0", ">=24.16.0 <25 || >=26.1.0", True),
    ("v22.23.5", ">=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0", True),
    ("v22.22.2", ">=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0", False),
    ("v24.22.3", "^24.0.0", None),  # syntax beyond comparator sets: not judged
])
def test_npm_comparator_sets(version, required, ok):
    assert satisfies(version, required) is ok


def test_exec_start_is_the_last_one_with_its_prefixes_dropped():
    unit = "[Service]\nExecStart=/bin/false\nExecStart=\nExecStart=-/opt/node20/bin/node '/srv/oc dir/openclaw.mjs' gateway run\n"
    assert exec_start(assignments(unit)) == ["/opt/node20/bin/node", "/srv/oc dir/openclaw.mjs", "gateway", "run"]
    assert exec_start(assignments("[Service]\nExecStart=\n")) == [] and exec_start(assignments("ExecStart=\"unclosed\n")) == []


def _unit(home, exec_line: str, path: str) -> None:
    d = home / ".config" / "systemd" / "user"
    d.mkdir(parents=True, exist_ok=True)
    (d / "openclaw-gateway.service").write_text(f"[Service]\nExecStart={exec_line}\nEnvironment=PATH={path}\n")


def _judged(home, state) -> Receipt:
    ev = gateway.gather(str(state), {"HOME": str(home), "PATH": "/usr/bin:/bin"}, None)
    r = Receipt(agent_id="ops", checked_at=datetime.now(UTC))
    r.gateway = gateway.interpret(ev)
    return r


def test_a_unit_on_an_unsupported_node_is_memory_unavailable(tmp_path, testbed):
    home, state = tmp_path / "home", tmp_path / "home" / ".openclaw"
    state.mkdir(parents=True)
    entry = testbed.openclaw_package(OC_LATEST) / "openclaw.mjs"
    _unit(home, f"{testbed.node20} {entry} gateway run", "/usr/bin:/bin")
    r = _judged(home, state)
    assert r.gateway.runtime_fault is not None and "Node 20.20.2" in r.gateway.runtime_fault
    assert ">=24.16.0 <25 || >=26.1.0" in r.gateway.runtime_fault
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "gateway_runtime")
    assert d.next_action.command == "systemctl --user edit --full openclaw-gateway"
    # the same unit on the test bed's Node 24: supported, no fault
    _unit(home, f"{testbed.node} {entry} gateway run", "/usr/bin:/bin")
    assert _judged(home, state).gateway.runtime_fault is None
    # 2026.7.35 supports Node 22/24 but not 20: its own package decides
    _unit(home, f"{testbed.node20} {testbed.openclaw_package(OC_QMD) / 'openclaw.mjs'} gateway run", "/usr/bin:/bin")
    assert ">=22.22.3" in (_judged(home, state).gateway.runtime_fault or "")


def test_a_script_unit_runs_the_node_its_shebang_finds_on_the_units_path(tmp_path, testbed):
    home, state = tmp_path / "home", tmp_path / "home" / ".openclaw"
    state.mkdir(parents=True)
    old = tmp_path / "old-node-bin"
    old.mkdir()
    os.symlink(testbed.node20, old / "node")  # `#!/usr/bin/env node` finds Node 20 first on the unit's PATH
    entry = testbed.openclaw_package(OC_LATEST) / "openclaw.mjs"
    assert entry.read_bytes().startswith(b"#!/usr/bin/env node")
    assert interpreter([str(entry), "gateway"], [str(old)]) == (str(old / "node"), str(entry))
    _unit(home, f"{entry} gateway run", f"{old}:/usr/bin:/bin")
    assert "Node 20.20.2" in (_judged(home, state).gateway.runtime_fault or "")
    assert interpreter(["/bin/sh", "-c", "exec openclaw"], ["/usr/bin"]) == (None, None)  # a wrapper: not judged


def test_the_cli_probes_run_the_build_the_units_gateway_runs_not_the_shells(tmp_path, testbed):
    """Breaker round 7 (w03): a unit pinned to 2026.7.35 (QMD) while the shell's ``openclaw`` is 2026.9.6 — clawprobe
    probed with 9.6 and said ``backend_retired`` → ``openclaw doctor`` (whose ``--fix`` would migrate the state
    away from the gateway's build). With no gateway running, the unit's ``ExecStart`` names the CLI to run."""
    from clawprobe.core.probe import discover
    from clawprobe.core.probes.service_runtime import service_cli

    home, state, shell_bin = tmp_path / "home", tmp_path / "home" / ".openclaw", tmp_path / "shell-bin"
    state.mkdir(parents=True)
    shell_bin.mkdir()
    (shell_bin / "openclaw").symlink_to(testbed.openclaw(OC_LATEST))
    pinned = testbed.openclaw(OC_QMD)
    _unit(home, f"{pinned} --profile work gateway run --port 18789", "/usr/bin:/bin")
    ctx = discover(env={"HOME": str(home), "PATH": f"{shell_bin}:/usr/bin:/bin", "OPENCLAW_STATE_DIR": str(state)})
    assert ctx.openclaw == [str(pinned), "--profile", "work"] and ctx.openclaw_version == OC_QMD
    assert "service file" in (ctx.openclaw_source or "")
    entry = testbed.openclaw_package(OC_LATEST) / "openclaw.mjs"
    assert service_cli([str(testbed.node), str(entry), "gateway", "run"], []) == [str(testbed.node), str(entry)]
    assert service_cli([str(pinned), "doctor"], []) is None and service_cli(["/nonexistent/openclaw", "gateway"], []) is None
    assert service_cli(["node", "gateway"], ["/usr/bin"]) is None  # node without its entry script
