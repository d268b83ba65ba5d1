"""Real bad states through the real ``clawprobe check`` command line (a child process): damaged SQLite,
files that cannot be read, names that are not UTF-8, symlink loops, a 100,000-file memory tree, a qmd that
prints garbage or fails, an ``openclaw`` that prints non-JSON. Each ends with a verdict and a reason on
stdout (text or JSON), never a traceback, and never a hang.

The SQLite damage itself (every open state, read-only guarantees) is covered at the probe level in
test_stores_sqlite.py; here the same damage goes through discovery, the qmd binary/store check with the
real qmd, the index probe, the workspace scan, the diagnosis and the printed report. One real QMD index
is built per module (two real ``qmd collection add`` calls) and copied for each state.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.core.verdicts import Verdict
from clawprobe.core.words import verdict_words
from tests.hardening_helpers import (
    assert_clean_stderr,
    check_env,
    drop_file_permission_override,
    fake_program,
    indexed_qmd_home,
    run_clawprobe,
)
from tests.test_stores_sqlite import LOCK_HOLDER, WAL_ONLY_WRITER
from tests.testbed import OpenClawHome


@pytest.fixture(scope="module")
def base(tmp_path_factory, testbed):
    parent = tmp_path_factory.mktemp("states")
    return indexed_qmd_home(parent, testbed), parent


@pytest.fixture
def home(base, tmp_path):
    """A private copy of the indexed home (same absolute layout under a new root)."""
    src, _ = base
    dst = OpenClawHome(tmp_path / "h")
    shutil.copytree(src.root, dst.root, symlinks=True)
    cfg = dict(src.config)
    cfg["agents"] = {"defaults": {"workspace": str(dst.workspace)}}
    cfg["logging"] = {"file": str(dst.log_file)}
    dst.write_config(cfg)
    return dst


def check(home: OpenClawHome, testbed, tmp_path: Path, *args: str, openclaw=None, timeout: float = 120.0,
          extra=None) -> tuple[int, dict | str, str]:
    """``clawprobe check ARGS`` as the operator runs it; JSON parsed when ``--json`` is given."""
    env = check_env(home, testbed, tmp_path / "data", openclaw=openclaw, extra=extra)
    rc, out, err = run_clawprobe(["check", *args], env, timeout=timeout)
    assert_clean_stderr(err)
    if "--json" in args:
        doc = json.loads(out)
        assert doc["exit_code"] == rc
        return rc, doc, err
    return rc, out, err


def only(doc: dict) -> tuple[dict, dict]:
    (entry,) = doc["receipts"]
    return entry, entry["receipt"]


# ------------------------------------------------------------------------------------------ SQLite

def _damage(index: Path, how: str) -> None:
    data = index.read_bytes()
    if how == "truncated":
        index.write_bytes(data[: 8192 + 100])
    elif how == "corrupt":
        third = len(data) // 3
        index.write_bytes(data[:third] + b"\xde\xad\xbe\xef" * (third // 4) + data[third + 4 * (third // 4):])
    elif how == "wal_only":  # a writer killed before its first checkpoint: content only in the -wal
        src = index.with_name("source.sqlite")
        index.rename(src)
        for side in ("-wal", "-shm"):
            Path(str(index) + side).unlink(missing_ok=True)
        subprocess.run([sys.executable, "-c", WAL_ONLY_WRITER, str(src), str(index)], check=True)
        src.unlink()
    elif how == "directory":
        os.unlink(index)
        index.mkdir()
    elif how == "fifo":
        os.unlink(index)
        os.mkfifo(index)


@pytest.mark.parametrize("how,state", [("truncated", "truncated"), ("corrupt", "corrupt"), ("wal_only", "wal_only"),
                                       ("directory", "unreadable"), ("fifo", "empty")])
def test_damaged_qmd_index(home, testbed, tmp_path, how, state):
    _damage(home.qmd_index(), how)
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw")
    entry, r = only(doc)
    assert rc == entry["exit_code"] and entry["verdict"]
    if state == "wal_only":  # readable through its WAL: the documents are there
        assert r["vectors"]["documents"] == 3, r["vectors"]
    else:
        detail = (r["vectors"]["detail"] or "") + " ".join(f["message"] for f in r["findings"])
        assert r["vectors"]["documents"] is None
        assert state.replace("_", " ") in detail.lower() or state in detail.lower(), (detail, r["qmd"])
    if how == "corrupt":  # the text report of the same state
        text_rc, text, _ = check(home, testbed, tmp_path, "--no-openclaw")
        assert text_rc == rc and f"agent main: {verdict_words(Verdict(entry['verdict']))}" in text


def test_index_locked_by_a_writer(home, testbed, tmp_path):
    """A writer inside ``BEGIN EXCLUSIVE`` (rollback journal): the real ``qmd ls`` store check and the index
    read both meet the lock. The check ends quickly and says it was a lock — not that qmd is unavailable
    (before the fix: ``qmd ls`` waited out clawprobe's 20 s timeout → ``qmd_unavailable · timeout``)."""
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(home.qmd_index()), "rollback"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw", timeout=60)
    finally:
        holder.kill()
        holder.wait()
    entry, r = only(doc)
    assert entry["verdict"] not in ("healthy", "qmd_unavailable"), entry["diagnosis"]["evidence"]
    # inconclusive, not a failure: store_ok stays unset; the lock is named (failure index_locked)
    assert r["qmd"]["resolves"] is True and r["qmd"]["store_ok"] is None and r["qmd"]["failure"] == "index_locked"
    assert "locked" in r["qmd"]["failure_detail"] and "locked" in r["vectors"]["detail"]


@pytest.mark.parametrize("key", ["command", "workspace"])
def test_a_nul_byte_in_a_config_path_is_config_invalid_naming_the_key(home, testbed, tmp_path, key):
    cfg = json.loads(json.dumps(home.config))
    if key == "command":
        cfg["memory"]["qmd"]["command"] = "qmd\u0000x"
    else:
        cfg["agents"] = {"defaults": {"workspace": str(home.workspace) + "\u0000/x"}}
    cfg.setdefault("agents", {"defaults": {"workspace": str(home.workspace)}})
    cfg["logging"] = {"file": str(home.log_file)}
    home.write_config(cfg)
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw", timeout=60)
    entry, r = only(doc)
    assert (rc, entry["verdict"], doc["errors"]) == (2, "config_invalid", [])
    assert r["config"]["error"]["key_path"] == {"command": "memory.qmd.command",
                                                "workspace": "agents.defaults.workspace"}[key]
    assert "NUL byte" in r["config"]["error"]["message"]


# ------------------------------------------------------------------------------------------ unreadable

@pytest.mark.parametrize("how", ["directory", "fifo", "symlink_loop", "dangling_include"])
def test_config_that_cannot_be_read(home, testbed, tmp_path, how):
    cfg = home.config_path
    cfg.unlink()
    if how == "directory":
        cfg.mkdir()
    elif how == "fifo":
        os.mkfifo(cfg)
    elif how == "symlink_loop":
        cfg.symlink_to(cfg)
    else:
        cfg.write_text('{ "$include": "./parts/memory.json5" }\n')
    rc, doc, _ = check(home, testbed, tmp_path, "--json", timeout=60)
    entry, r = only(doc)
    assert (rc, entry["verdict"]) == (2, "config_invalid")
    err = r["config"]["error"]
    assert err["kind"] in ("unreadable", "include") and err["message"]
    assert {"directory": "not a regular file", "fifo": "not a regular file", "symlink_loop": "symlink loop",
            "dangling_include": "does not exist"}[how] in err["message"]


def test_files_unreadable_for_the_user_running_clawprobe(fresh, testbed, tmp_path):
    """chmod 000 does not stop root, so the check runs without root's permission override
    (CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH dropped): a memory file and the QMD index it may not read, then
    the config. The config error is the verdict; nothing crashes."""
    home = fresh
    home.write_memory("private.md", "# private\n").chmod(0o000)
    home.qmd_index().chmod(0o000)
    env = check_env(home, testbed, tmp_path / "data")
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env, preexec=drop_file_permission_override)
    assert_clean_stderr(err)
    entry, r = only(json.loads(out))
    assert "permission denied" in json.dumps(r).lower(), r["vectors"]
    home.config_path.chmod(0o000)
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env, preexec=drop_file_permission_override)
    assert_clean_stderr(err)
    entry, r = only(json.loads(out))
    assert (rc, entry["verdict"]) == (2, "config_invalid")
    assert "Permission denied" in r["config"]["error"]["message"]


def test_a_qmd_custom_collection_on_a_path_that_is_not_there_is_warned(fresh, testbed, tmp_path):
    """``memory.qmd.paths`` naming a directory that does not exist (a typo, an unmounted share: breaker round 7,
    w20) adds nothing to search; the builtin engine's extraPaths are warned of, and so is this, with its key."""
    gone = tmp_path / "team notes"
    fresh.update_config({"memory": {"qmd": {"paths": [{"path": str(gone), "name": "team"}]}}})
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", timeout=60)
    entry, r = only(doc)
    found = [f for f in r["findings"] if f["tag"] == "extra_path_missing"]
    assert [f["source"] for f in found] == ["config (memory.qmd.paths)"] and str(gone) in found[0]["message"]
    gone.mkdir()
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", timeout=60)
    assert not [f for f in only(doc)[1]["findings"] if f["tag"] == "extra_path_missing"]


@pytest.mark.parametrize("other", ["ops", "Night_Ops-2"])
def test_an_agents_qmd_home_copied_from_another_agents_is_warned_and_kept_out_of_its_coverage(fresh, testbed, tmp_path,
                                                                                               other):
    """breaker round 7, w14: ``cp -a agents/main/qmd agents/<other>/qmd`` — the other agent's index now holds main's
    managed collections (main's notes). Coverage counted main's roots as its own; now they are left out and named,
    with the ``qmd collection remove`` that takes them out of that index."""
    import shutil

    from clawprobe.core.locate import normalize_agent_id

    aid = normalize_agent_id(other)
    ws = tmp_path / "ws-other"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nOps runbook.\n")
    fresh.update_config({"agents": {"list": [{"id": "main", "default": True}, {"id": other, "workspace": str(ws)}]}})
    shutil.copytree(fresh.state_dir / "agents" / "main" / "qmd", fresh.state_dir / "agents" / aid / "qmd", symlinks=True)
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", "--agent", aid, timeout=60)
    entry, r = only(doc)
    (f,) = [f for f in r["findings"] if f["tag"] == "index_foreign_collections"]
    assert "memory-root-main, memory-dir-main" in f["message"] and "qmd collection remove memory-dir-main" in f["message"]
    roots = [c["source"] for c in r["coverage"]["sources"]]
    assert roots and not [s for s in roots if s.endswith("-main")], roots
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", "--agent", "main", timeout=60)
    assert not [f for f in only(doc)[1]["findings"] if f["tag"] == "index_foreign_collections"]


@pytest.mark.parametrize("other", ["ops-bot", "kb-7"])
def test_an_agents_qmd_home_that_is_a_symlink_to_anothers_names_the_link_not_a_collection_remove(
        fresh, testbed, tmp_path, other):
    """breaker round 26: ``ln -s ../main/qmd agents/<other>/qmd`` — one QMD home for two agents, not a copy. The
    warning called it "a QMD home copied from theirs" and offered ``qmd collection remove memory-root-main …`` with
    <other>'s XDG dirs: pasted (measured with 2026.7.35 + qmd 2.8.3), it deleted main's collections from main's own
    index (the next search re-added them: a loop). Now the shared directory is named, with the link to remove;
    pasted, <other> gets its own index and the warning is gone, main's notes untouched."""
    from tests.testbed import OC_QMD, run_openclaw

    ws = tmp_path / f"ws-{other}"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\nOps runbook.\n")
    fresh.update_config({"agents": {"list": [{"id": "main", "default": True}, {"id": other, "workspace": str(ws)}]}})
    link = fresh.state_dir / "agents" / other / "qmd"
    link.parent.mkdir(parents=True)
    link.symlink_to("../main/qmd")
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", "--agent", other, timeout=60)
    (f,) = [f for f in only(doc)[1]["findings"] if f["tag"] == "index_foreign_collections"]
    assert "XDG_CONFIG_HOME=" not in f["message"], f["message"]  # no runnable remove
    assert f"rm {link}" in f["message"] and f"memory index --agent {other}" in f["message"], f["message"]

    link.unlink()  # the repair as worded: the link only
    made = run_openclaw(fresh, OC_QMD, "memory", "index", "--agent", other, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed)
    assert made.rc == 0, made.stderr
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", "--agent", other, timeout=60)
    assert not [f for f in only(doc)[1]["findings"] if f["tag"] == "index_foreign_collections"]
    assert not link.is_symlink() and fresh.qmd_index(other).is_file()
    rc, doc, _ = check(fresh, testbed, tmp_path, "--json", "--no-openclaw", "--agent", "main", timeout=60)
    assert only(doc)[1]["coverage"]["sources"], "main's collections are still in main's index"


def test_a_qmd_note_another_user_made_private_is_warned_while_its_row_still_matches(fresh, testbed, tmp_path):
    """A note the index holds as it is on disk, re-owned by uid 1001 with mode 0600 (breaker round 7, w17's kind on
    QMD): qmd skips it on every update and keeps its row, so nothing is stale yet — but its next edit is never
    indexed: a warning naming it, its mode and owner (clawprobe runs without root's permission override)."""
    note = fresh.workspace / "memory" / "note-1.md"
    os.chown(note, 1001, 1001)
    note.chmod(0o600)
    env = check_env(fresh, testbed, tmp_path / "data")
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env, preexec=drop_file_permission_override)
    assert_clean_stderr(err)
    entry, r = only(json.loads(out))
    (f,) = [f for f in r["findings"] if f["tag"] == "unreadable"]
    assert "memory/note-1.md" in f["message"] and "owner uid 1001" in f["message"], f
    assert r["freshness"]["stale_reason"] is None, r["freshness"]


def test_only_another_agents_managed_collections_are_foreign():
    """Managed names of other ids are foreign; this agent's own (sanitized id), custom names, and a custom
    collection the operator named ``memory-dir-team`` on one of the agent's own ``memory.qmd.paths`` are not."""
    from clawprobe.core.probes.qmd_index import QmdCollection, foreign_collections

    cols = [QmdCollection(name=n, path=p) for n, p in (
        ("memory-root-main", "/ws-main"), ("memory-dir-main", "/ws-main/memory"), ("memory-dir-night-ops", "/ws/memory"),
        ("team", "/team"), ("memory-dir-team", "/srv/team notes"))]
    assert foreign_collections(cols, "Night_Ops", ["/srv/team notes/"]) == ["memory-root-main", "memory-dir-main"]
    assert foreign_collections(cols, "main", []) == ["memory-dir-night-ops", "memory-dir-team"]


FIFO_PLACES = {
    ".env": lambda h: h.state_dir / ".env",
    "systemd unit": lambda h: h.home / ".config" / "systemd" / "user" / "openclaw-gateway.service",
    "MEMORY.md": lambda h: h.workspace / "MEMORY.md",
    "memory note": lambda h: h.workspace / "memory" / "note-fifo.md",
    "log file": lambda h: h.log_file,
    "embed lock": lambda h: h.qmd_xdg_cache() / "qmd" / ".qmd-embed.lock",
}


def test_fifos_where_files_are_expected_never_block(home, testbed, tmp_path):
    """A FIFO blocks whoever opens it for reading. One at every place clawprobe reads a file (found by this
    test: ``<state>/.env``, the systemd unit and the canary file/record blocked ``check``/``canary show``
    forever). ``index.yml`` is read by clawprobe too (checked directly here: the real ``qmd ls`` itself
    blocks on it until clawprobe's 20 s store timeout, which test_hung covers)."""
    from clawprobe.core.probes.qmd_index import read_qmd_yml

    env = check_env(home, testbed, tmp_path / "data")
    rc, _, err = run_clawprobe(["canary", "plant", "--yes"], env)
    assert rc == 0, err
    canary = home.workspace / "memory" / "clawprobe-canary.md"
    canary.unlink()
    for where in [*FIFO_PLACES.values(), lambda h: canary]:
        p = where(home)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.unlink(missing_ok=True)
        os.mkfifo(p)
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw", timeout=60)
    entry, r = only(doc)
    assert entry["verdict"] and rc in (1, 2, 3)
    rc, out, err = run_clawprobe(["canary", "show"], env, timeout=60)
    assert_clean_stderr(err)
    assert rc == 0 and "(foreign)" in out, out
    yml = home.qmd_xdg_config() / "qmd" / "index.yml"
    yml.unlink()
    os.mkfifo(yml)
    assert read_qmd_yml(yml).error == "unreadable: not a regular file"


# ------------------------------------------------------------------------------------------ names, loops, size

@pytest.fixture
def fresh(testbed, tmp_path):
    """A home indexed for this test alone (the index names its workspace by absolute path)."""
    return indexed_qmd_home(tmp_path, testbed)


def test_non_utf8_names_and_symlink_loops(fresh, testbed, tmp_path):
    home = fresh
    mem = os.fsencode(home.workspace / "memory")
    for raw in (b"caf\xe9-latin1.md", b"\xff\xfe.md", b"nul\x01ctl.md"):
        with open(os.path.join(mem, raw), "wb") as f:
            f.write(b"# note\n\nbody\n")
    os.mkdir(os.path.join(mem, b"dir-\xe9"))
    (home.workspace / "memory" / "loop").symlink_to(home.workspace / "memory")
    (home.workspace / "memory" / "self.md").symlink_to(home.workspace / "memory" / "self.md")
    (home.workspace / "memory" / "a").symlink_to(home.workspace / "memory" / "b")
    (home.workspace / "memory" / "b").symlink_to(home.workspace / "memory" / "a")
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw")
    entry, r = only(doc)
    assert entry["verdict"] and r["freshness"]
    text_rc, text, _ = check(home, testbed, tmp_path, "--no-openclaw")
    assert text_rc == rc


def test_hundred_thousand_memory_files_finish_bounded(fresh, testbed, tmp_path):
    """100,000 unindexed files under memory/ (below the 200,000-file scan cap): the check scans them all,
    counts every one, lists only 100, and finishes (timing is measured in bench/, the child's peak memory
    is bounded here)."""
    home = fresh
    mem = home.workspace / "memory" / "bulk"
    for i in range(100):  # hard links (one inode per dir): 100,000 regular-file entries, made 8× faster
        d = mem / f"d{i:03d}"
        d.mkdir(parents=True)
        base = os.fspath(d)
        (d / "n0000.md").write_text(f"# note {i}\n")
        for j in range(1, 1000):
            os.link(f"{base}/n0000.md", f"{base}/n{j:04d}.md")
    peak: list[int] = []  # this check's own peak RSS (wait4 rusage of that child alone, not the session's)
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, tmp_path / "data"),
                                 timeout=300, peak=peak)
    assert_clean_stderr(err)
    entry, r = only(json.loads(out))
    tags = [f["tag"] for f in r["findings"]]
    assert "scan_capped" not in tags, tags
    assert r["freshness"]["unindexed_count"] == 100_000 and len(r["freshness"]["unindexed_files"]) == 100
    assert len(out) < 2**20, f"the receipt JSON is {len(out)} bytes"
    assert 0 < peak[0] < 400 * 2**20, f"clawprobe check peaked at {peak[0] / 2**20:.0f} MiB"


# ------------------------------------------------------------------------------------------ broken programs

GARBAGE = r"printf '\033[31m\377\376garbage\000\n{not json\n'"


@pytest.mark.parametrize("kind", ["garbage", "exit1", "crash"])
def test_broken_qmd(home, testbed, tmp_path, kind):
    body = {"garbage": f"{GARBAGE}\nexit 0",
            "exit1": "echo 'qmd: something went wrong' >&2\nexit 1",
            "crash": "kill -SEGV $$"}[kind]
    qmd = fake_program(tmp_path / "qmd", body)
    home.write_config({**home.config, "memory": {"backend": "qmd", "qmd": {"command": str(qmd)}}})
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw")
    entry, r = only(doc)
    if kind == "garbage":  # it runs and exits 0, but nothing it says is a qmd version: it is not qmd
        assert r["qmd"]["version"] is None and r["qmd"]["resolves"] is False and r["qmd"]["failure"] == "not_qmd"
        assert entry["verdict"] == "qmd_unavailable" and entry["diagnosis"]["reason"] == "not_qmd", entry
    else:
        assert entry["verdict"] == "qmd_unavailable", entry
        assert r["qmd"]["failure"] in ("version_failed", "native_binding"), r["qmd"]
        assert r["qmd"]["failure_detail"]


@pytest.mark.parametrize("kind", ["html", "version_garbage", "exit1_trace"])
def test_openclaw_printing_non_json(home, testbed, tmp_path, kind):
    version = "echo 'OpenClaw 2026.7.35 (fake)'" if kind != "version_garbage" else GARBAGE
    rest = {"html": "echo '<html><body>502 Bad Gateway</body></html>'\nexit 0",
            "version_garbage": f"{GARBAGE}\nexit 0",
            "exit1_trace": "echo 'TypeError: Cannot read properties of undefined' >&2\n"
                           "echo '    at Object.<anonymous> (/x/openclaw.mjs:1:1)' >&2\nexit 1"}[kind]
    oc = fake_program(tmp_path / "openclaw", f'if [ "$1" = "--version" ]; then {version}; exit 0; fi\n{rest}')
    rc, doc, _ = check(home, testbed, tmp_path, "--json", openclaw=oc)
    entry, r = only(doc)
    assert rc == 3 and entry["verdict"] == "unverified", entry
    errors = " | ".join(r["probe_errors"])
    assert "openclaw memory status" in errors, errors
    if kind == "version_garbage":
        assert "openclaw --version" in errors and r["openclaw"]["version"] is None
    text_rc, text, _ = check(home, testbed, tmp_path, openclaw=oc)
    assert text_rc == 3 and "Unverified" in text


def test_state_dir_is_a_file(testbed, tmp_path):
    (tmp_path / "not-a-dir").write_text("x")
    env = {"PATH": f"{testbed.bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    rc, out, err = run_clawprobe(["check", "--state-dir", str(tmp_path / "not-a-dir")], env)
    assert_clean_stderr(err)
    assert rc == 3 and (out + err).strip()


def test_fifos_in_a_builtin_workspace_and_its_sessions_never_block(tmp_path, testbed):
    """The builtin engine's readers too (breaker round 4: a ``memory/inbox.md`` pipe — a sync tool's — hung
    ``check``, ``check --json`` and ``--no-openclaw`` forever, and SIGTERM left no document): the notes' script
    count, the transcripts' ``sessions.json`` and a ``.jsonl``, and an ``EnvironmentFile=`` of the unit. Every
    one a FIFO, the check still gives its one document (2026.9.6 passes over a pipe in ``memory/`` silently)."""
    home = OpenClawHome.create(tmp_path)
    home.write_config({"memory": {"search": {"provider": "none"}}})
    home.write_memory_md()
    home.write_memory("a.md", "# A\n\nalpha\n")
    sessions = home.agent_dir() / "sessions"
    units = home.home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "openclaw-gateway.service").write_text(f"[Service]\nEnvironmentFile={home.home}/gateway.env\n"
                                                    f"Environment=OPENCLAW_STATE_DIR={home.state_dir}\n")
    for p in (home.workspace / "memory" / "inbox.md", sessions / "sessions.json", sessions / "chat-1.jsonl",
              home.home / "gateway.env"):
        p.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(p)
    oc = fake_program(tmp_path / "openclaw", 'echo "OpenClaw 2026.9.6 (fake)"')
    rc, doc, _ = check(home, testbed, tmp_path, "--json", "--no-openclaw", openclaw=oc, timeout=60)
    entry, r = only(doc)
    assert entry["verdict"] and rc in (1, 2, 3) and r["coverage"]["sources"], r


def test_a_builtin_store_this_user_cannot_open_is_memory_unavailable_naming_its_owner(oc_home_factory, testbed, tmp_path):
    """The agent's 2026.9.6 store owned by another user, mode 0600 (a ``sudo -u other openclaw memory index``):
    clawprobe and the real OpenClaw, both run as a user the modes hold for, cannot open it ("unable to open
    database file"). It came out a canary ``miss`` with "inspect the canary's path" (breaker round 4); it is
    ``memory_unavailable`` · ``index_unreadable`` naming the store's mode and owner."""
    from tests.rw_support import plant
    from tests.testbed import OC_LATEST, builtin_config, run_openclaw

    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="foreign-store")
    home.write_memory_md()
    plant(home)
    assert run_openclaw(home, OC_LATEST, "memory", "index", timeout=240, testbed=testbed).rc == 0
    for p in home.builtin_db().parent.iterdir():
        os.chown(p, 1001, 1001)
        p.chmod(0o600)
    env = check_env(home, testbed, tmp_path / "data", openclaw=testbed.openclaw(OC_LATEST))
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=240, preexec=drop_file_permission_override)
    assert_clean_stderr(err)
    entry, r = only(json.loads(out))
    assert (rc, entry["verdict"], entry["reason"]) == (2, "memory_unavailable", "index_unreadable"), entry["diagnosis"]
    assert "owner uid 1001" in r["builtin"]["unavailable_detail"], r["builtin"]
    assert "unable to open database file" in r["builtin"]["unavailable_detail"]
