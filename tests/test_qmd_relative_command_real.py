"""``memory.qmd.command: "tools/qmd"`` — a relative path, meant from the operator's home (breaker round 10, s24).
OpenClaw spawns it from the workspace, where it does not exist, and falls back to builtin: the verdict
``qmd_unavailable · command_missing`` is right, but clawprobe said qmd was "not installed anywhere" and printed
``npm install -g @tobilu/qmd`` while ``~/tools/qmd`` was a working qmd 2.8.3. Now that path is a candidate, and the
action pins it absolute. Real: the test bed's qmd, two ``--version`` runs."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.receipt import Receipt
from clawprobe.core.repairs import repair_for
from clawprobe.core.verdicts import Verdict


def test_a_relative_qmd_command_meant_from_home_is_found_and_pinned(testbed, tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "tools").mkdir(parents=True)
    ws.mkdir()
    os.symlink(testbed.bin_dir / "qmd", home / "tools" / "qmd")
    ev = qb.gather("tools/qmd", ["/usr/bin", "/bin"], "process", str(ws), {"PATH": "/usr/bin:/bin", "HOME": str(home)},
                   None)
    f = qb.interpret(ev)
    assert (f.resolves, f.failure) == (False, "command_missing")
    assert f.candidate_path == str(home / "tools" / "qmd") and f.candidate_version.startswith("2.")
    r = Receipt(checked_at=datetime.now(UTC))
    r.config.configured_backend, r.qmd = "qmd", f
    a = repair_for(Verdict.QMD_UNAVAILABLE, "command_missing", r)
    assert a.command == f"openclaw config set memory.qmd.command {home / 'tools' / 'qmd'}"
