"""OpenClaw 2026.7.35's start-up PATH rewrite (``src/infra/path-env.ts`` ``ensureOpenClawCliOnPath``), as
:func:`clawprobe.core.probes.openclaw_path.bootstrap_path` reproduces it; the real qmd child's PATH it was measured
against is in ``tests/test_qmd_faults_real.py`` (qmd run under OpenClaw's own Node)."""

from __future__ import annotations

import os

from clawprobe.core.probes.openclaw_path import bootstrap_path


def test_node_dir_and_system_dirs_first_existing_user_dirs_last(tmp_path):
    home, node, svc = tmp_path / "home", tmp_path / "node-24" / "bin", tmp_path / "svc-bin"
    for d in (node, svc, home / ".bun" / "bin", home / ".local" / "bin", tmp_path / "pnpm"):
        d.mkdir(parents=True)
    env = {"HOME": str(home), "PNPM_HOME": str(tmp_path / "pnpm"), "NPM_CONFIG_PREFIX": "relative/prefix"}
    got = bootstrap_path([str(svc), "/usr/bin", str(tmp_path / "gone")], str(node), env)
    lead = [str(node), "/usr/bin", "/bin", str(svc), str(tmp_path / "gone")]  # an entry already on PATH stays
    assert got[:5] == lead
    rest = got[5:]
    assert rest.index(str(tmp_path / "pnpm")) < rest.index(str(home / ".local" / "bin")) < rest.index(
        str(home / ".bun" / "bin"))
    assert ("/usr/local/bin" in rest) is os.path.isdir("/usr/local/bin")
    assert not any("relative" in d for d in got) and len(got) == len(set(got))


def test_a_process_already_bootstrapped_keeps_its_path(tmp_path):
    env = {"HOME": str(tmp_path), "OPENCLAW_PATH_BOOTSTRAPPED": "1"}
    assert bootstrap_path(["/opt/x/bin", " ", "/usr/bin"], str(tmp_path), env) == ["/opt/x/bin", "/usr/bin"]
