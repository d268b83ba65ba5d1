"""Permission faults are verdicts: as a real non-root user (uid 65534 through ``setpriv``), a state dir with
mode 000 or a config file with mode 000 is ``config_invalid`` naming the path, its mode and its owner — never
the defaults of an absent install (the default workspace) and never a raw ``PermissionError``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.hardening_helpers import REPO, assert_clean_stderr

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def install():
    """An install in a world-traversable dir (pytest's tmp dir is root's alone): QMD configured, a custom
    workspace, root-owned like a service account's files seen by another user."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.fail("these tests run as root and switch to uid 65534 with setpriv (util-linux)")
    root = Path(tempfile.mkdtemp(prefix="clawprobe-perm-", dir="/tmp"))
    root.chmod(0o755)
    state, ws, home = root / "state", root / "my-workspace", root / "home"
    for d in (state, ws, home):
        d.mkdir()
    (state / "openclaw.json").write_text(json.dumps({"memory": {"backend": "qmd", "qmd": {"command": "qmd"}},
                                                     "agents": {"defaults": {"workspace": str(ws)}}}))
    yield root, state
    state.chmod(0o755)
    shutil.rmtree(root)


def _check_as_nobody(root: Path, state: Path) -> tuple[int, dict, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root / "home"), "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(root / "data"), "PYTHONPATH": str(REPO), "LANG": "C.UTF-8", "NO_COLOR": "1"}
    p = subprocess.run([*NOBODY, sys.executable, "-m", "clawprobe", "check", "--json", "--no-openclaw"], env=env,
                       cwd="/tmp", capture_output=True, text=True, timeout=120)
    assert_clean_stderr(p.stderr)
    return p.returncode, json.loads(p.stdout), p.stderr


def _assert_config_invalid(doc: dict, err: str, names: str) -> None:
    (entry,) = doc["receipts"]
    r = entry["receipt"]
    assert entry["verdict"] == "config_invalid" and entry["reason"] == "unreadable", entry["diagnosis"]["evidence"]
    msg = r["config"]["error"]["message"]
    assert names in msg and "mode 0000, owner uid 0; this process uid 65534" in msg, msg
    text = json.dumps(doc) + err
    assert "PermissionError" not in text and "Errno" not in text, text
    assert r["config"]["workspace"] is None, r["config"]  # not <state>/workspace, the default of no config


def test_a_state_dir_with_mode_000_is_config_invalid_naming_it(install):
    root, state = install
    state.chmod(0o000)
    rc, doc, err = _check_as_nobody(root, state)
    assert rc == 2, (rc, err)
    _assert_config_invalid(doc, err, f"the directory {state} is not searchable by this user")


def test_an_unreadable_config_file_is_config_invalid_naming_its_mode_and_owner(install):
    root, state = install
    (state / "openclaw.json").chmod(0o000)
    rc, doc, err = _check_as_nobody(root, state)
    assert rc == 2, (rc, err)
    _assert_config_invalid(doc, err, "config file cannot be read: Permission denied")
    assert doc["receipts"][0]["receipt"]["config"]["error"]["file"] == str(state / "openclaw.json")
