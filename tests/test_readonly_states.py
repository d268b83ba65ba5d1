"""clawprobe leaves a crashed writer's index, and a 0-byte index, exactly as it found them — and says what they are.

The real qmd 2.8.3 indexes a home once; each state is then made from those bytes:

* ``wal+shm`` — a writer killed (SIGKILL) after committing into the ``-wal`` with auto-checkpoint off: a
  ``-wal`` with frames and its ``-shm``;
* ``wal-no-shm`` — the same with the ``-shm`` gone;
* ``empty`` — ``index.sqlite`` truncated to 0 bytes, no sidecars.

The store check used to run ``qmd ls`` on the agent's index: that child checkpointed the ``-wal`` into
``index.sqlite`` and deleted the sidecars, and built a full index into the 0-byte file. Now it runs on a
scratch index in a private temporary XDG home; the state dir and the workspace are snapshotted (content,
size, mtime of every entry) before and after ``clawprobe check --no-openclaw`` — nothing may differ — and
the receipt names the state with its sizes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clawprobe.core.probes.qmd_scratch import SCRATCH_PREFIX
from tests.hardening_helpers import assert_clean_stderr, changed, check_env, indexed_qmd_home, run_clawprobe, snapshot

CRASHED_WRITER = """
import os, signal, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
con.execute("PRAGMA wal_autocheckpoint = 0")
con.execute("CREATE TABLE crashed_writer (x)")
con.execute("INSERT INTO crashed_writer VALUES (1)")
os.kill(os.getpid(), signal.SIGKILL)
"""
STATES = ("wal+shm", "wal-no-shm", "empty")


def _sidecars(index: Path) -> list[Path]:
    return [index, Path(f"{index}-wal"), Path(f"{index}-shm")]


def _make(state: str, index: Path, pristine: dict[Path, bytes]) -> None:
    for p in _sidecars(index):
        p.unlink(missing_ok=True)
    for p, data in pristine.items():
        p.write_bytes(data)
    if state == "empty":
        for p in _sidecars(index)[1:]:
            p.unlink(missing_ok=True)
        index.write_bytes(b"")
        return
    p = subprocess.run([sys.executable, "-c", CRASHED_WRITER, str(index)], capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    wal = Path(f"{index}-wal")
    assert wal.stat().st_size > 32, "the killed writer left WAL frames"
    if state == "wal-no-shm":
        Path(f"{index}-shm").unlink()


@pytest.fixture(scope="module")
def home(tmp_path_factory, testbed):
    home = indexed_qmd_home(tmp_path_factory.mktemp("ro-states"), testbed)
    index = home.qmd_index()
    pristine = {p: p.read_bytes() for p in _sidecars(index) if p.exists()}
    data = tmp_path_factory.mktemp("ro-states-data")
    return home, index, pristine, check_env(home, testbed, data)


def _scratch_dirs() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith(SCRATCH_PREFIX)}


@pytest.mark.parametrize("state", STATES)
def test_check_no_openclaw_leaves_the_state_byte_identical_and_names_it(home, state):
    home_, index, pristine, env = home
    _make(state, index, pristine)
    sizes = {p.name: p.stat().st_size for p in _sidecars(index) if p.exists()}
    scratch_before = _scratch_dirs()
    before = snapshot(home_.state_dir, home_.workspace)
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env, timeout=120)
    assert_clean_stderr(err)
    assert changed(before, snapshot(home_.state_dir, home_.workspace)) == set(), "clawprobe check wrote their state"
    assert _scratch_dirs() == scratch_before, "the scratch QMD home was not removed"
    (entry,) = json.loads(out)["receipts"]
    r = entry["receipt"]
    assert r["qmd"]["resolves"] is True and r["qmd"]["store_ok"] is True, r["qmd"]
    found = {f["tag"]: f["message"] for f in r["findings"]}
    if state == "empty":
        assert "index.sqlite: 0 bytes" in found["index_empty"], found
    else:
        msg = found["index_wal_pending"]
        assert f"index.sqlite {sizes['index.sqlite']} bytes, -wal {sizes['index.sqlite-wal']} bytes" in msg, msg
        assert ("with its -shm" if state == "wal+shm" else "without a -shm") in msg
    assert entry["diagnosis"]["verdict"] != "healthy" or state != "empty", entry["diagnosis"]


def test_the_store_check_still_proves_qmd_on_a_scratch_index(home):
    """The pristine index: ``qmd ls`` ran (exit 0) — on a scratch home, not the agent's (its files unchanged)."""
    home_, index, pristine, env = home
    for p in _sidecars(index):
        p.unlink(missing_ok=True)
    for p, data in pristine.items():
        p.write_bytes(data)
    before = snapshot(home_.state_dir, home_.workspace)
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env, timeout=120)
    assert_clean_stderr(err)
    assert changed(before, snapshot(home_.state_dir, home_.workspace)) == set()
    r = json.loads(out)["receipts"][0]["receipt"]
    assert r["qmd"]["store_ok"] is True and r["qmd"]["store_exit_code"] == 0, r["qmd"]
    assert not {"index_wal_pending", "index_empty"} & {f["tag"] for f in r["findings"]}


def test_a_scratch_home_is_private_and_removed():
    from clawprobe.core.probes.qmd_scratch import scratch_home

    with scratch_home() as (env, d):
        assert oct(os.stat(d).st_mode & 0o777) == "0o700"
        assert env["INDEX_PATH"].startswith(d) and os.path.isdir(os.path.dirname(env["INDEX_PATH"]))
        assert all(env[k].startswith(d) for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "QMD_CONFIG_DIR"))
        Path(env["INDEX_PATH"]).write_bytes(b"x")
    assert not os.path.exists(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("state", ["wal+shm", "empty"])
def test_full_check_with_the_canary_never_lets_qmd_rewrite_the_index(home, state):
    """The whole ``clawprobe check`` (real OpenClaw 2026.7.35: ``memory status``; a planted canary, so the
    search path is asked for): OpenClaw's CLI (``memory status`` rebuilt the crashed writer's ``-shm``) and
    the direct ``qmd search`` would open the index and rewrite it, so none runs and the receipt says why."""
    home_, index, pristine, env = home
    if not (home_.workspace / "memory/clawprobe-canary.md").exists():
        rc, _, err = run_clawprobe(["canary", "plant", "--yes"], env)
        assert rc == 0, err
    _make(state, index, pristine)
    before = snapshot(home_.state_dir, home_.workspace)
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=180)
    assert_clean_stderr(err)
    assert changed(before, snapshot(home_.state_dir, home_.workspace)) == set()
    (entry,) = json.loads(out)["receipts"]
    errors = " | ".join(entry["receipt"]["probe_errors"])
    assert "openclaw CLI not run" in errors and "agent main's QMD index has a " in errors, errors
    if state == "empty":  # nothing was ever written into it: the one action is the index run, not a re-check loop
        assert entry["diagnosis"]["reason"] == "never_indexed", entry["diagnosis"]


@pytest.fixture(scope="module")
def ops_home(tmp_path_factory, testbed):
    """An ``ops-bot`` QMD home (real qmd 2.8.3) whose index a killed writer left with committed ``-wal`` frames."""
    home = indexed_qmd_home(tmp_path_factory.mktemp("ro-wal-ops"), testbed, agent_id="ops-bot", name="walops")
    env = check_env(home, testbed, tmp_path_factory.mktemp("ro-wal-ops-data"))
    rc, _, err = run_clawprobe(["canary", "plant", "--yes"], env)
    assert rc == 0, err
    index = home.qmd_index()
    _make("wal+shm", index, {p: p.read_bytes() for p in _sidecars(index) if p.exists()})
    return home, index, env


def test_a_qmd_wal_left_by_a_killed_writer_gets_the_run_that_folds_it(ops_home, testbed):
    """Breaker round 23 (r23q): a qmd child killed with its gateway (a restart) leaves the agent's QMD index with
    committed ``-wal`` frames. The check says ``unverified`` · ``wal_pending``, and its one action was
    ``openclaw memory status`` — which only reads the QMD index: the ``-wal`` stayed, the walk's "The -wal is empty
    or gone" never held, and the check said the same again. For QMD the action is the managed update
    (``memory index``, real 2026.7.35: qmd update folds the frames in), and after it the check moves on."""
    from tests.testbed import run_openclaw

    home, index, env = ops_home
    wal = Path(f"{index}-wal")
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=180)
    (entry,) = json.loads(out)["receipts"]
    d = entry["diagnosis"]
    assert (d["verdict"], d["reason"]) == ("unverified", "wal_pending"), d
    action = d["next_action"]
    assert action["command"].endswith("memory index --agent ops-bot"), action
    assert "memory status" not in action["command"]
    status = run_openclaw(home, "2026.7.35", "memory", "status", "--agent", "ops-bot", path_dirs=[testbed.bin_dir],
                          testbed=testbed)
    assert status.rc == 0, status.stderr
    assert wal.stat().st_size > 32, "memory status folded the -wal: the QMD variant is not needed"
    run = run_openclaw(home, "2026.7.35", "memory", "index", "--agent", "ops-bot", path_dirs=[testbed.bin_dir],
                       testbed=testbed, timeout=240)
    assert run.rc == 0, run.stderr
    assert not wal.exists() or wal.stat().st_size == 0, "the named action left the -wal"
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=180)
    (entry,) = json.loads(out)["receipts"]
    assert entry["diagnosis"]["reason"] != "wal_pending", entry["diagnosis"]
