"""Only regular files are replaced, and the temp files of interrupted writes are swept by the next run.

* ``check --textfile`` at a FIFO, a symlink and a character device (``os.mknod``, as root) in a temp dir:
  exit 3 with a message naming what the target is; the target is untouched (same inode, mode, link
  target, and the link's target file unchanged). ``atomic_write`` itself refuses them too.
* ``kill -9`` mid-write: a real child process runs clawprobe's real writer (``canary plant`` /
  ``history.append``) and is killed by SIGKILL at the moment it would rename its temp file (its
  ``os.replace`` sends the signal), which leaves ``.clawprobe-canary.md.*.tmp`` in the workspace and
  ``.receipts.jsonl.*.tmp`` in the data dir. The next ``clawprobe canary plant`` / ``check --save`` removes
  exactly those and says so; a look-alike that a live writer holds (``flock``), a file with another name
  and a symlink of the right name are left alone.
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.core.history import NotARegularFile, atomic_write
from tests.hardening_helpers import REPO, assert_clean_stderr, check_env, run_clawprobe
from tests.testbed import OpenClawHome, builtin_config


def _ident(p: Path) -> tuple:
    st = os.lstat(p)
    return st.st_ino, st.st_mode, st.st_rdev, st.st_mtime_ns, os.readlink(p) if stat.S_ISLNK(st.st_mode) else None


@pytest.fixture
def targets(tmp_path):
    fifo = tmp_path / "metrics.fifo"
    os.mkfifo(fifo)
    real = tmp_path / "real.prom"
    real.write_text("clawprobe_up 1\n")
    link = tmp_path / "link.prom"
    link.symlink_to(real)
    dev = tmp_path / "null-device"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the /dev/null device, as root
    return {"FIFO": fifo, "symbolic link": link, "character device": dev}, real


@pytest.mark.parametrize("kind", ["FIFO", "symbolic link", "character device"])
def test_textfile_refuses_a_target_that_is_not_a_regular_file(kind, targets, tmp_path):
    paths, real = targets
    target = paths[kind]
    before, real_before = _ident(target), real.read_bytes()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "no-install"),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data"), "LANG": "C.UTF-8", "NO_COLOR": "1"}
    rc, out, err = run_clawprobe(["check", "--textfile", str(target), "--no-openclaw"], env, timeout=60)
    assert rc == 3, (rc, out, err)
    assert_clean_stderr(err)
    assert f"refusing to replace {target}: it is a {kind}" in err, err
    assert _ident(target) == before and real.read_bytes() == real_before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("kind", ["FIFO", "symbolic link", "character device"])
def test_atomic_write_never_replaces_a_special_file(kind, targets):
    paths, real = targets
    target = paths[kind]
    before = _ident(target)
    with pytest.raises(NotARegularFile, match="not a regular file"):
        atomic_write(target, "x\n")
    assert _ident(target) == before and real.read_text() == "clawprobe_up 1\n"
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]


_KILLED_MID_WRITE = """
import os, signal, sys
from datetime import UTC, datetime
real_replace = os.replace
def die(src, dst, *a, **kw):
    if str(src).endswith(".tmp"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *a, **kw)
os.replace = die
what, where, agent = sys.argv[1:4]
if what == "canary":
    from clawprobe.core import canary_write
    canary_write.plant(where, agent)
else:
    from clawprobe.core import history
    from clawprobe.core.receipt import Receipt
    history.append(Receipt(agent_id=agent, checked_at=datetime.now(UTC)), "healthy", where)
"""


def _killed_mid_write(what: str, where: Path, agent: str, env: dict) -> None:
    """Run clawprobe's real writer in a child that SIGKILLs itself where it would rename its temp file."""
    full = {**env, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, what, str(where), agent], env=full,
                       capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr)


@pytest.fixture
def install(tmp_path, testbed):
    home = OpenClawHome.create(tmp_path, prefix="sweep-")
    home.write_config(builtin_config("none"))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "clawprobe-data"
    return home, check_env(home, testbed, data), data


def _decoys(d: Path, name: str) -> tuple[Path, Path, Path, int]:
    """A held look-alike (flock-ed by this process), another name, and a symlink of the right name."""
    held = d / f".{name}.held0000.tmp"
    held.write_text("a live writer's temp file\n")
    fd = os.open(held, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    other = d / f".{name}.not-ours.tmp"
    other.write_text("not clawprobe's\n")
    link = d / f".{name}.link0000.tmp"
    link.symlink_to(other)
    return held, other, link, fd


def test_a_canary_plant_killed_mid_write_leaves_a_temp_file_the_next_run_removes(install):
    home, env, data = install
    _killed_mid_write("canary", home.workspace, home.agent_id, {**env, "CLAWPROBE_DATA_DIR": str(data)})
    memdir = home.workspace / "memory"
    stale = sorted(p for p in memdir.iterdir() if p.name.startswith(".clawprobe-canary.md.") and p.name.endswith(".tmp"))
    assert len(stale) == 1, list(memdir.iterdir())
    held, other, link, fd = _decoys(memdir, "clawprobe-canary.md")
    try:
        rc, out, err = run_clawprobe(["canary", "plant", "--yes"], env, timeout=60)
        assert rc == 0, (rc, out, err)
        assert f"removed {stale[0]}: a temp file an interrupted canary action left behind" in err, err
        assert not stale[0].exists()
        assert held.exists() and other.exists() and link.is_symlink()
        assert (memdir / "clawprobe-canary.md").is_file()
        assert not [p for p in (data / "canary").iterdir() if p.name.endswith(".tmp")]
    finally:
        os.close(fd)


def test_a_check_save_killed_mid_write_leaves_a_temp_file_the_next_run_removes(install):
    home, env, data = install
    _killed_mid_write("history", data, home.agent_id, env)
    stale = sorted(data.glob(".receipts.jsonl.*.tmp"))
    assert len(stale) == 1, list(data.iterdir())
    held, other, link, fd = _decoys(data, "receipts.jsonl")
    try:
        rc, out, err = run_clawprobe(["check", "--save", "--no-openclaw"], env, timeout=120)
        assert rc in (0, 1, 2, 3) and "agent main" in out, (rc, out, err)
        assert_clean_stderr(err)
        assert f"removed {stale[0]}: a temp file an interrupted `check --save` left behind" in err, err
        assert not stale[0].exists() and (data / "receipts.jsonl").is_file()
        assert held.exists() and other.exists() and link.is_symlink()
    finally:
        os.close(fd)


def test_canary_plant_never_replaces_a_record_that_is_a_symlink(tmp_path):
    from clawprobe.core import canary_write
    from clawprobe.core.canary import CanaryError, record_path

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    root = tmp_path / "data"
    rp = record_path(ws, "main", root)
    rp.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"  # a dangling link: read as "no record", then it would be replaced
    rp.symlink_to(elsewhere)
    with pytest.raises(CanaryError, match="refusing to replace .*: it is a symbolic link, not a regular file"):
        canary_write.plant(ws, "main", root=root)
    assert rp.is_symlink() and os.readlink(rp) == str(elsewhere) and not elsewhere.exists()
    assert list((ws / "memory").iterdir()) == [] and [p.name for p in rp.parent.iterdir()] == [rp.name]


@pytest.mark.parametrize("name", [".lock", "receipts.jsonl", "baselines.json"])
def test_a_fifo_in_the_data_dir_never_blocks_check_save(install, name):
    """Breaker round 24: a FIFO at the data dir's lock file, history or baselines blocked ``check --save``
    forever (the open waited for a writer). It now ends with its report and a message naming the file; the
    FIFO is left as found."""
    home, env, data = install
    data.mkdir(parents=True, exist_ok=True)
    fifo = data / name
    os.mkfifo(fifo)
    before = _ident(fifo)
    rc, out, err = run_clawprobe(["check", "--save", "--no-openclaw"], env, timeout=60)
    assert rc in (0, 1, 2, 3) and "agent main" in out, (rc, out, err)
    assert "Traceback" not in err and name in err, err
    assert _ident(fifo) == before
