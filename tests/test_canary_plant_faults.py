"""Canary plant/rotate/remove are all or nothing, on real file systems that really fail.

Each failure — clawprobe's record dir unwritable or impossible, the memory dir unwritable, missing, a file, a
dangling symlink, a full disk (a real 16 KiB tmpfs), a read-only file system (a real tmpfs remounted
read-only), a file clawprobe cannot read, an operator's file appearing mid-way — must leave the workspace
and clawprobe's record exactly as before (no new token in the file, no half-written record, no temp file
left), with a plain-words message (no exception class name, no traceback) and exit 3.

The tests run as root, which ignores file modes: the command line then runs with CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH dropped (:func:`tests.hardening_helpers.drop_file_permission_override`), so ``chmod 555``
really denies writes. The tmpfs tests mount in a private user + mount namespace (``unshare -rm``): nothing
is mounted on the host and the mount vanishes with the child.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw
from tests.hardening_helpers import (
    REPO,
    assert_clean_stderr,
    drop_file_permission_override,
    run_clawprobe,
)

OBEY_MODES = drop_file_permission_override if os.geteuid() == 0 else None
CLASS_NAMES = ("PermissionError", "OSError", "FileNotFoundError", "NotADirectoryError", "CanaryError", "Errno")


def snap(*roots: Path, exact: bool = True) -> dict[str, tuple]:
    """Every entry under ``roots`` (hidden temp files included): kind, mode, content hash and, with ``exact``,
    a file's inode and mtime (so "as before" means untouched, not rewritten with the same bytes)."""
    out: dict[str, tuple] = {}

    def visit(p: Path) -> None:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            out[str(p)] = ("absent",)
            return
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            out[str(p)] = ("link", os.readlink(p))
        elif stat.S_ISDIR(st.st_mode):
            out[str(p)] = ("dir", mode)
            for child in sorted(os.listdir(p)):
                visit(p / child)
        elif stat.S_ISREG(st.st_mode):
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p)] = ("file", mode, digest, st.st_ino, st.st_mtime_ns) if exact else ("file", mode, digest)
        else:
            out[str(p)] = ("other", mode)

    for r in roots:
        visit(Path(r))
    return out


def home(tmp_path: Path, memory: bool = True) -> tuple[dict[str, str], Path, Path]:
    """(env, workspace, data dir): an OpenClaw config naming the workspace, clawprobe's data dir beside it."""
    state, ws, data = tmp_path / "state", tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    if memory:
        (ws / "memory").mkdir()
        (ws / "memory" / "note.md").write_text("# an operator's note\n")
    state.mkdir()
    (state / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(data), "LANG": "C.UTF-8"}
    return env, ws, data


def cli(env: dict[str, str], *args: str, obey_modes: bool = False) -> tuple[int, str, str]:
    rc, out, err = run_clawprobe(["canary", *args], env, timeout=60, preexec=OBEY_MODES if obey_modes else None)
    assert_clean_stderr(err)
    return rc, out, err


def assert_plain_failure(rc: int, err: str, *words: str) -> None:
    assert rc == 3, err
    assert not any(c in err for c in CLASS_NAMES), err
    for w in words:
        assert w in err, err


# ------------------------------------------------------------------------------------------ clawprobe's record


def test_rotate_with_an_unwritable_record_dir_changes_nothing(tmp_path):
    """The tester's reproduction: ``chmod 555 <data>/canary`` then ``canary rotate --yes`` used to put the new
    token in the workspace and keep the old one in the record (``show`` then said "modified")."""
    env, ws, data = home(tmp_path)
    assert cli(env, "plant", "--yes")[0] == 0
    (data / "canary").chmod(0o555)
    before = snap(ws, data)
    for action in ("rotate", "remove"):
        rc, _, err = cli(env, action, "--yes", obey_modes=True)
        assert_plain_failure(rc, err, f"cannot {action} the canary", "cannot write clawprobe's record",
                             "permission denied", "CLAWPROBE_DATA_DIR", "nothing was changed")
        assert snap(ws, data) == before
    rc, out, _ = cli(env, "show")
    assert rc == 0 and "(present)" in out and "exactly the planted content" in out


@pytest.mark.parametrize("where", ["/proc/self", "a regular file"])
def test_a_data_dir_that_cannot_hold_the_record_changes_nothing(tmp_path, where):
    env, ws, _ = home(tmp_path, memory=False)  # no memory dir yet: plant must not leave a new one behind
    if where == "a regular file":
        (tmp_path / "datafile").write_text("not a dir\n")
        env["CLAWPROBE_DATA_DIR"] = str(tmp_path / "datafile")
    else:
        env["CLAWPROBE_DATA_DIR"] = where
    before = snap(ws, tmp_path / "datafile")
    for action in ("plant", "rotate"):
        rc, _, err = cli(env, action, "--yes")
        assert_plain_failure(rc, err, "create clawprobe's record dir", "CLAWPROBE_DATA_DIR", "nothing was changed")
        assert snap(ws, tmp_path / "datafile") == before


# ------------------------------------------------------------------------------------------ the memory dir


def test_an_unwritable_memory_dir_leaves_no_record_and_no_new_dirs(tmp_path):
    env, ws, data = home(tmp_path)
    (ws / "memory").chmod(0o555)
    before = snap(ws)
    rc, _, err = cli(env, "plant", "--yes", obey_modes=True)
    assert_plain_failure(rc, err, "cannot write the canary file in", "permission denied", "nothing was changed")
    assert snap(ws) == before and not data.exists()  # the record dirs created for the attempt are gone too


def test_rotate_into_an_unwritable_memory_dir_keeps_the_old_token(tmp_path):
    env, ws, data = home(tmp_path)
    assert cli(env, "plant", "--yes")[0] == 0
    (ws / "memory").chmod(0o555)
    before = snap(ws, data)
    rc, _, err = cli(env, "rotate", "--yes", obey_modes=True)
    assert_plain_failure(rc, err, "cannot write the canary file", "permission denied", "nothing was changed")
    assert snap(ws, data) == before


def test_remove_puts_the_record_back_when_the_delete_fails(tmp_path):
    """The record is saved first; the delete (an unwritable memory dir) fails after it, so the record is
    restored: still active, same token, same bytes."""
    env, ws, data = home(tmp_path)
    assert cli(env, "plant", "--yes")[0] == 0
    (ws / "memory").chmod(0o555)
    before_ws, before_data = snap(ws), snap(data, exact=False)
    rc, _, err = cli(env, "remove", "--yes", obey_modes=True)
    assert_plain_failure(rc, err, "cannot delete the canary file", "permission denied", "nothing was changed")
    assert snap(ws) == before_ws and snap(data, exact=False) == before_data
    rec = cn.load(ws, "main", root=data)
    assert rec is not None and rec.active and cn.file_state(rec) == "present"


def test_a_missing_memory_dir_is_created_for_the_canary(tmp_path):
    env, ws, data = home(tmp_path, memory=False)
    rc, out, err = cli(env, "plant", "--yes")
    assert rc == 0 and "planted" in out, err
    rec = cn.load(ws, "main", root=data)
    assert rec is not None and cn.file_state(rec) == "present"
    assert stat.S_IMODE((ws / "memory").stat().st_mode) == 0o777 & ~_umask()  # mkdir under the umask


def test_a_workspace_that_is_gone_is_not_made_anew_around_a_canary(tmp_path):
    env, ws, data = home(tmp_path, memory=False)
    ws.rmdir()  # a failed restore: the configured workspace is not there
    rc, out, err = cli(env, "plant", "--yes")
    assert rc == 3 and f"workspace {ws} does not exist" in err and "restore" in err, (out, err)
    assert not ws.exists() and cn.load(ws, "main", root=data) is None
    assert_clean_stderr(err)
    assert not any(n in err for n in CLASS_NAMES), err


def test_a_root_whose_collection_never_indexes_the_canary_is_refused(tmp_path):
    """QMD's ``notes`` collection only takes ``*.txt``: ``canary plant --root ~/notes`` planted a canary that can
    never be indexed, and printed ``<workspace>/<abs root>/…`` — a path that does not exist (breaker round 5). It
    is refused with the collection's rule; the default root (memory-dir) is planted, its real path printed."""
    env, ws, data = home(tmp_path)
    state, notes = tmp_path / "state", tmp_path / "notes"
    notes.mkdir()
    (state / "openclaw.json").write_text(json.dumps({
        "memory": {"backend": "qmd", "qmd": {"paths": [{"path": str(notes), "name": "notes", "pattern": "*.txt"}]}},
        "agents": {"defaults": {"workspace": str(ws)}}}))
    yml = state / "agents" / "main" / "qmd" / "xdg-config" / "qmd" / "index.yml"
    yml.parent.mkdir(parents=True)
    yml.write_text(f"collections:\n  memory-root-main:\n    path: {ws}\n    pattern: MEMORY.md\n"
                   f"  memory-dir-main:\n    path: {ws}/memory\n    pattern: '**/*.md'\n"
                   f"  notes:\n    path: {notes}\n    pattern: '*.txt'\n")
    before = snap(ws, notes)
    rc, out, err = cli(env, "plant", "--yes", "--root", str(notes))
    assert rc == 3 and "would never be indexed" in err and "*.txt" in err, (out, err)
    assert snap(ws, notes) == before and not data.exists()
    rc, out, err = cli(env, "plant", "--yes")
    assert rc == 0 and f"planted: {ws}/memory/clawprobe-canary.md" in out, (out, err)


@pytest.mark.parametrize("what", ["a file", "a dangling symlink"])
def test_a_memory_path_that_is_no_dir_is_refused_and_nothing_changes(tmp_path, what):
    _, ws, data = home(tmp_path, memory=False)
    if what == "a file":
        (ws / "memory").write_text("# not a dir\n")
    else:
        (ws / "memory").symlink_to(tmp_path / "nowhere")
    before = snap(ws)
    with pytest.raises(cn.CanaryError, match="is a symlink to .* that is not a directory" if "symlink" in what
                       else "memory is not a directory"):
        cw.plant(ws, "main", root=data)
    assert snap(ws) == before and not data.exists()


def test_a_symlinked_memory_dir_is_written_through_with_a_warning(tmp_path):
    """The agent writes its notes through the link, so the canary goes there too; the operator is told that
    only QMD indexes a symlinked memory dir (the builtin scanner skips it)."""
    env, ws, data = home(tmp_path, memory=False)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "old.md").write_text("# vault note\n")
    (vault / "old.md").chmod(0o640)
    (ws / "memory").symlink_to(vault)
    rc, out, err = cli(env, "plant", "--yes")
    assert rc == 0, err
    assert "is a symlink to" in out and "builtin engine skips symlinked dirs" in out and "mode 0640" in out
    assert (vault / "clawprobe-canary.md").is_file() and (ws / "memory").is_symlink()
    rec = cn.load(ws, "main", root=data)
    assert rec is not None and cn.file_state(rec) == "present"


# ------------------------------------------------------------------------------------------ the file at the path


def test_an_unreadable_canary_is_shown_as_unreadable_and_never_replaced(tmp_path):
    env, ws, data = home(tmp_path)
    assert cli(env, "plant", "--yes")[0] == 0
    (ws / cn.CANARY_REL).chmod(0o000)
    before = snap(ws, data)
    rc, out, _ = cli(env, "show", obey_modes=True)
    assert rc == 0 and "(unreadable)" in out and "permission denied" in out and "foreign" not in out, out
    for action, words in (("rotate", "not overwriting"), ("remove", "not deleting"), ("plant", "not overwriting")):
        rc, _, err = cli(env, action, "--yes", obey_modes=True)
        assert_plain_failure(rc, err, "cannot read", "permission denied", words)
        assert snap(ws, data) == before


@pytest.mark.parametrize("kind", ["operator's note", "symlink", "directory"])
def test_a_foreign_file_at_the_path_is_never_touched(tmp_path, kind):
    _, ws, data = home(tmp_path)
    p = ws / cn.CANARY_REL
    if kind == "symlink":
        (tmp_path / "elsewhere.md").write_text(cn.canary_text(cn.new_token()))
        p.symlink_to(tmp_path / "elsewhere.md")
    elif kind == "directory":
        p.mkdir()
    else:
        p.write_text("# my own notes\n")
    before = snap(ws, tmp_path / "elsewhere.md")
    for fn in (cw.plant, cw.rotate):
        with pytest.raises(cn.CanaryError, match="not overwriting"):
            fn(ws, "main", root=data)
        assert snap(ws, tmp_path / "elsewhere.md") == before and not data.exists()


def test_an_operators_file_appearing_mid_plant_is_kept_and_the_record_undone(tmp_path, monkeypatch):
    """Race: the operator writes the path after clawprobe checked it. The last step creates the file with
    ``link`` (never overwrites), fails, and the already saved record is taken back."""
    _, ws, data = home(tmp_path)
    p = ws / cn.CANARY_REL
    real = cw._note_mode  # the hook runs between the check and the commit

    def operator_writes(fd: int, workspace: str) -> int:
        p.write_text("# the operator's note, written just now\n")
        return real(fd, workspace)

    monkeypatch.setattr(cw, "_note_mode", operator_writes)
    with pytest.raises(cn.CanaryError, match="appeared while clawprobe was planting: not overwriting it"):
        cw.plant(ws, "main", root=data)
    assert p.read_text() == "# the operator's note, written just now\n"
    assert cn.load(ws, "main", root=data) is None and not data.exists()  # the dirs made for it are gone too
    assert sorted(os.listdir(ws / "memory")) == ["clawprobe-canary.md", "note.md"]


def test_a_canary_edited_mid_rotate_is_kept_and_the_old_record_restored(tmp_path, monkeypatch):
    _, ws, data = home(tmp_path)
    first = cw.plant(ws, "main", root=data)
    p = ws / cn.CANARY_REL
    record = cn.record_path(ws, "main", data)
    old_record = record.read_bytes()
    real = cw._note_mode

    def operator_edits(fd: int, workspace: str) -> int:
        p.write_text(p.read_text() + "my addition\n")
        return real(fd, workspace)

    monkeypatch.setattr(cw, "_note_mode", operator_edits)
    with pytest.raises(cn.CanaryError, match="changed while clawprobe was replacing it.*nothing was changed"):
        cw.rotate(ws, "main", root=data)
    assert p.read_text().endswith("my addition\n") and first.token in p.read_text()
    assert record.read_bytes() == old_record and os.listdir(data / "canary") == [record.name]
    assert sorted(os.listdir(ws / "memory")) == ["clawprobe-canary.md", "note.md"]


def test_concurrent_rotations_leave_the_file_and_the_record_agreeing(tmp_path):
    """Dashboard and command line at once: the record dir lock serialises them, so the file always holds the
    recorded token and every other token is retired."""
    _, ws, data = home(tmp_path)
    cw.plant(ws, "main", root=data)
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def rotate() -> None:
        start.wait()
        try:
            cw.rotate(ws, "main", root=data)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=rotate) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec = cn.load(ws, "main", root=data)
    assert errors == [] and rec is not None and cn.file_state(rec) == "present"
    assert len(rec.retired) == 6 and rec.token not in {r.token for r in rec.retired}
    assert sorted(os.listdir(ws / "memory")) == ["clawprobe-canary.md", "note.md"]
    assert os.listdir(data / "canary") == [cn.record_path(ws, "main", data).name]


# ------------------------------------------------------------------------------------------ real tmpfs: full, read-only


def _umask() -> int:
    m = os.umask(0o022)
    os.umask(m)
    return m


def _in_namespace(scenario: str, base: str) -> None:
    """Child side (run under ``unshare -rm``): mount a 16 KiB tmpfs at ``<base>/mnt`` holding the workspace
    (``*:ws``) or clawprobe's data dir (``*:data``), plant a canary, fill the tmpfs (``full:*``) or remount it
    read-only (``readonly:*``), then run rotate, remove and plant with the real command line; prints JSON
    ``{action: [rc, stdout, stderr, nothing_changed]}``."""
    base_p = Path(base)
    mnt = base_p / "mnt"
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0755", "tmpfs", str(mnt)], check=True)
    kind, on = scenario.split(":")
    env, ws, _ = home(mnt if on == "ws" else base_p)
    data = mnt / "data" if on == "data" else base_p / "data"
    env["CLAWPROBE_DATA_DIR"] = str(data)
    obs: dict[str, list[object]] = {"first plant": list(cli(env, "plant", "--yes"))}
    if kind == "readonly":
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
    for action in ("rotate", "remove", "plant"):
        if kind == "full":  # (again before each action: a delete frees space)
            fd = os.open(mnt / f"fill-{action}", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
            finally:
                os.close(fd)
        # the workspace untouched (inodes, mtimes); the record with the same bytes (put back from a copy)
        before = snap(ws), snap(data, exact=False)
        obs[action] = [*cli(env, action, "--yes"), (snap(ws), snap(data, exact=False)) == before]
    print(json.dumps(obs))


EXPECT = {  # what each action must do once the tmpfs is full / read-only
    "full:ws": {"rotate": "fails", "remove": "works", "plant": "fails"},  # deleting needs no space
    "full:data": {"rotate": "fails", "remove": "fails", "plant": "refused"},
    "readonly:ws": {"rotate": "fails", "remove": "fails", "plant": "refused"},  # remove: the record is put back
    "readonly:data": {"rotate": "fails", "remove": "fails", "plant": "refused"},
}


@pytest.mark.parametrize("scenario", list(EXPECT))
def test_a_full_or_read_only_file_system_changes_nothing(tmp_path, scenario):
    (tmp_path / "mnt").mkdir()
    code = f"from tests.test_canary_plant_faults import _in_namespace; _in_namespace({scenario!r}, {str(tmp_path)!r})"
    p = subprocess.run(["unshare", "-rm", sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       check=False, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stderr
    obs = json.loads(p.stdout)
    assert obs["first plant"][0] == 0, obs["first plant"]
    full = scenario.startswith("full")
    why = "no space left on device" if full else "read-only file system"
    fix = "free some space on that file system" if full else "remount it read-write"
    for action, expected in EXPECT[scenario].items():
        rc, out, err, same = obs[action]
        if expected == "works":
            assert rc == 0 and not same and "removed" in out, err
        elif expected == "refused":
            assert rc == 3 and same and "already planted" in err, err
        else:
            assert_plain_failure(rc, err, f"cannot {action} the canary", why, fix, "nothing was changed")
            assert same, (action, err)


def test_a_quoted_tilde_root_is_the_home_openclaw_reads_it_as(tmp_path):
    """``--root "~/kb"`` (quoted: the shell left ``~``) was read as ``<workspace>/~/kb`` and refused, while the
    config's ``~/kb`` extra path is the home's (breaker round 13, N5)."""
    env, ws, data = home(tmp_path)
    kb = Path(env["HOME"]) / "kb"
    kb.mkdir(parents=True)
    (tmp_path / "state" / "openclaw.json").write_text(json.dumps({
        "agents": {"defaults": {"workspace": str(ws), "memorySearch": {"extraPaths": ["~/kb"]}}}}))
    rc, out, err = cli(env, "plant", "--yes", "--root", "~/kb")
    assert rc == 0 and f"planted: {kb}/clawprobe-canary.md" in out, (out, err)
    assert not (ws / "~").exists()
