"""Causes before commands (spec §10): a repair addresses the cause measured, through the real qmd resolution
(:func:`clawprobe.core.probes.qmd_binary.gather` on real files and processes) — qmd not installed at all, the
wrong npm package ``qmd``, and a working qmd in the operator's own shell when the gateway's PATH lacks it."""

from __future__ import annotations

import os
import shlex
import stat
from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.receipt import Receipt
from tests.rw_support import action_texts

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _exe(path, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return str(path)


def _receipt(tmp_path, command: str, gateway_dirs: list[str], shell_path: str) -> Receipt:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": shell_path, "HOME": str(home)}
    ev = qb.gather(command, gateway_dirs, "process", None, env, None, run_store=False)
    r = Receipt(checked_at=T0)
    r.config.configured_backend = "qmd"
    r.openclaw.version, r.openclaw.has_qmd_backend = "2026.7.35", True
    r.qmd = qb.interpret(ev)
    r.qmd.command = command
    return r


def test_qmd_not_installed_anywhere_says_install_the_right_package(tmp_path):
    empty = tmp_path / "gw-bin"
    empty.mkdir()
    r = _receipt(tmp_path, "qmd", [str(empty)], str(empty))
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "not_on_path") and r.qmd.candidate_searched
    says, todo, dont = action_texts(d)
    if r.qmd.candidate_path:
        # this host has a working qmd in its system bin dirs, so "not installed anywhere" cannot be built here:
        # the measured cause is then "installed but not on the gateway's PATH", and the repair pins that qmd
        assert d.next_action.command == f"openclaw config set memory.qmd.command {shlex.quote(r.qmd.candidate_path)}"
        assert "npm install" not in todo and "not installed" not in says
        return
    assert d.next_action.command == "npm install -g @tobilu/qmd"
    assert "not installed" in says and "npm package `qmd`" in dont
    assert "command -v qmd" not in (d.next_action.command or "")


def test_wrong_npm_package_qmd_is_replaced(tmp_path):
    real = _exe(tmp_path / "npm/lib/node_modules/qmd/bin/qmd.js", "#!/bin/sh\necho 'qmd-cli 0.4.1 — quick markdown'\n")
    bindir = tmp_path / "npm/bin"
    bindir.mkdir(parents=True)
    os.symlink(real, bindir / "qmd")
    r = _receipt(tmp_path, "qmd", [str(bindir)], str(bindir))
    assert (r.qmd.failure, r.qmd.package) == ("not_qmd", "qmd")
    d = diagnose(r)
    assert d.next_action.command == "npm uninstall -g qmd && npm install -g @tobilu/qmd"
    _, todo, _ = action_texts(d)
    assert "rebuild" not in todo


def test_the_operators_shell_has_a_working_qmd(tmp_path):
    qmd = _exe(tmp_path / "home/.bun/bin/qmd", "#!/bin/sh\necho 'qmd 2.8.3 (facd35e)'\n")
    gw = tmp_path / "gw-bin"
    gw.mkdir()
    r = _receipt(tmp_path, "qmd", [str(gw)], os.path.dirname(qmd))
    assert r.qmd.candidate_path == qmd and r.qmd.package is None
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("qmd_unavailable", "not_on_path")
    assert d.next_action.command == f"openclaw config set memory.qmd.command {qmd}"
    says, todo, _ = action_texts(d)
    assert "npm install" not in todo and "yourself" not in says


@pytest.mark.parametrize("path,pkg", [("/usr/lib/node_modules/@tobilu/qmd/dist/cli.js", "@tobilu/qmd"),
                                      ("/home/u/.npm-global/lib/node_modules/qmd/bin/qmd.js", "qmd"),
                                      (r"C:\Users\u\AppData\Roaming\npm\node_modules\qmd\cli.js", "qmd"),
                                      ("/home/u/.bun/bin/qmd", None)])
def test_npm_package(path, pkg):
    assert qb.npm_package(path) == pkg
