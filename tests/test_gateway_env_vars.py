"""A ``${VAR}`` the config references is resolved as the gateway resolves it (breaker round 15, A1): the operator's
shell sets ``$QMD_BIN`` but the gateway's systemd unit does not, so OpenClaw in the gateway logs "missing env var"
and falls back to builtin — clawprobe used to take the shell's value and call the install healthy. Now a variable
the gateway's known environment lacks is unset (``config_invalid · env``, naming the variable and the unit), unless
the unit, ``environment.d`` or OpenClaw's own ``<state>/.env`` sets it; with no gateway environment known, the
shell's is the best evidence and is used. Pure discovery over real files (no OpenClaw program needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose

QMD = "/opt/qmd tools/bin/qmd"


def _home(tmp: Path, *, unit_env: list[str] | None, key: str = "command", var: str = "QMD_BIN") -> tuple[Path, Path]:
    home, state = tmp / "home", tmp / "state dir"
    (state).mkdir(parents=True)
    (home).mkdir()
    qmd: dict = {"searchMode": "search", key: f"${{{var}}}"} if key == "command" else \
        {"searchMode": "search", "command": "qmd", "paths": [{"path": f"${{{var}}}", "name": "kb"}]}
    (state / "openclaw.json").write_text(json.dumps({"memory": {"backend": "qmd", "qmd": qmd}}))
    if unit_env is not None:
        d = home / ".config" / "systemd" / "user"
        d.mkdir(parents=True)
        lines = [f"Environment=\"{e}\"" for e in [f"OPENCLAW_STATE_DIR={state}", "PATH=/usr/bin:/bin", *unit_env]]
        (d / "openclaw-gateway.service").write_text("[Service]\n" + "\n".join(lines) + "\nExecStart=/usr/bin/false\n")
    return home, state


def _discover(home: Path, state: Path, **shell: str) -> probe.ProbeContext:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", **shell}
    return probe.discover(state_dir=str(state), env=env, openclaw=str(home / "no-openclaw-here"))


@pytest.mark.parametrize("var", ["QMD_BIN", "OC_QMD_2"])
def test_a_variable_only_the_shell_sets_is_unset_for_a_gateway_whose_unit_lacks_it(tmp_path, var):
    home, state = _home(tmp_path, unit_env=[], var=var)
    ctx = _discover(home, state, **{var: QMD})
    err = ctx.config.error
    assert err is not None and err.kind == "env", err
    assert f"${{{var}}} is not set (referenced at memory.qmd.command)" in err.message
    assert f"this shell sets ${var}" in err.message and "openclaw-gateway.service" in err.message
    assert QMD not in err.message  # a value is never shown (it may be a secret)
    assert var not in ctx.config_vars()  # clawprobe's own openclaw runs do not get it either
    d = diagnose(probe.fast(ctx, "main", None, qmd_check=False))
    assert (d.verdict.value, d.reason) == ("config_invalid", "env"), d.evidence
    assert str(state) + "/.env" in d.next_action.title.replace("'", "")


@pytest.mark.parametrize("where", ["unit", "environment.d", "dotenv"])
def test_a_variable_the_gateway_gets_is_resolved_as_it_sees_it(tmp_path, where):
    home, state = _home(tmp_path, unit_env=[f"QMD_BIN={QMD}"] if where == "unit" else [])
    if where == "environment.d":
        (home / ".config" / "environment.d").mkdir(parents=True)
        (home / ".config" / "environment.d" / "50-qmd.conf").write_text(f"QMD_BIN={QMD}\n")
    if where == "dotenv":
        (state / ".env").write_text(f"QMD_BIN={QMD}\n")
    for shell in ({"QMD_BIN": "/shell/only/qmd"}, {}):  # the shell's value never decides; nor does its absence
        ctx = _discover(home, state, **shell)
        assert ctx.config.error is None, (shell, ctx.config.error)
        assert ctx.config.tree["memory"]["qmd"]["command"] == QMD, shell


@pytest.mark.parametrize("unset", ["UnsetEnvironment=QMD_BIN", f'UnsetEnvironment="QMD_BIN={QMD}" OTHER'])
def test_a_variable_the_unit_unsets_is_unset_whoever_set_it(tmp_path, unset):
    """Breaker round 16, C2: ``UnsetEnvironment=QMD_BIN`` in the unit while environment.d and the shell set it —
    systemd applies it last, so the gateway runs without it (OpenClaw: backend builtin); clawprobe said healthy."""
    home, state = _home(tmp_path, unit_env=[])
    unit = home / ".config" / "systemd" / "user" / "openclaw-gateway.service"
    unit.write_text(unit.read_text().replace("[Service]\n", f"[Service]\n{unset}\n"))
    (home / ".config" / "environment.d").mkdir(parents=True)
    (home / ".config" / "environment.d" / "50-qmd.conf").write_text(f"QMD_BIN={QMD}\n")
    ctx = _discover(home, state, QMD_BIN=QMD)
    assert ctx.config.error is not None and ctx.config.error.kind == "env", ctx.config.error
    assert "this shell sets $QMD_BIN" in ctx.config.error.message
    unit.write_text(unit.read_text().replace(unset, "UnsetEnvironment=SOMETHING_ELSE"))
    assert _discover(home, state, QMD_BIN=QMD).config.error is None


def test_with_no_gateway_environment_known_the_shells_value_is_used(tmp_path):
    home, state = _home(tmp_path, unit_env=None)
    ctx = _discover(home, state, QMD_BIN=QMD)
    assert ctx.config.error is None and ctx.config.tree["memory"]["qmd"]["command"] == QMD


def test_a_qmd_path_variable_the_unit_lacks_is_unset_too(tmp_path):
    home, state = _home(tmp_path, unit_env=[], key="paths", var="TEAM_KB")
    ctx = _discover(home, state, TEAM_KB=str(tmp_path))
    assert ctx.config.error is not None and "$TEAM_KB" in ctx.config.error.message


@pytest.mark.parametrize("var,svc", [("QMD_BIN", "svc home"), ("OC_QMD_2", "oc")])
def test_the_gateways_dotenv_is_read_under_the_gateways_home_not_this_shells(tmp_path, var, svc):
    """OpenClaw loads ``~/.config/openclaw/gateway.env`` under *its* home when the state dir is that home's
    ``.openclaw``. A unit run with ``HOME=<service home>`` whose ``${VAR}`` only that file sets is resolved — it was
    read under the operator's HOME, so clawprobe said ``config_invalid · env`` for a gateway that has the variable;
    the same file under the operator's HOME is not the gateway's."""
    home, their_home = tmp_path / "operator", tmp_path / svc
    state = their_home / ".openclaw"
    state.mkdir(parents=True)
    (state / "openclaw.json").write_text(json.dumps({"memory": {"backend": "qmd", "qmd": {
        "searchMode": "search", "command": f"${{{var}}}"}}}))
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway.service").write_text(
        f'[Service]\nEnvironment="HOME={their_home}"\nEnvironment="OPENCLAW_STATE_DIR={state}"\n'
        'Environment="PATH=/usr/bin:/bin"\nExecStart=/usr/bin/false\n')
    dotenv = their_home / ".config" / "openclaw" / "gateway.env"
    dotenv.parent.mkdir(parents=True)
    dotenv.write_text(f"{var}={QMD}\n")
    ctx = _discover(home, state)
    assert ctx.config.error is None, ctx.config.error
    assert ctx.config.tree["memory"]["qmd"]["command"] == QMD
    mine = home / ".config" / "openclaw" / "gateway.env"  # the operator's own file is not the gateway's
    mine.parent.mkdir(parents=True)
    dotenv.rename(mine)
    err = _discover(home, state).config.error
    assert err is not None and err.kind == "env" and f"${{{var}}} is not set" in err.message, err
