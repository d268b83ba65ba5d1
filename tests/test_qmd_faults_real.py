"""QMD faults on the real programs (qmd 2.8.3, OpenClaw 2026.7.35 from the test bed), each with the narrow
repair its evidence names — and, where it can be run here, the repair itself run and re-probed:

* ``memory.qmd.command`` is a program that is not qmd (``/bin/true``, ``/bin/echo``, a script that exits 0
  silently): ``qmd_unavailable · not_qmd``, its store command never run, the qmd found on PATH pinned;
* ``memory.qmd.command`` a command line (``"<node> <qmd launcher>"``): OpenClaw runs only its first word, so the
  repair pins the launcher the line names, never "install qmd";
* ``includeDefaultMemory: false`` and no ``paths``: no collection, so nothing is ever indexed — not "awaiting the
  update cycle" (breaker round 7, w13: the real 2026.7.35 status says ``qmd-collections-empty``);
* the agent's ``index.sqlite`` damaged (pages overwritten, truncated, header overwritten) or unreadable
  (``chmod 000`` for a check run without CAP_DAC_OVERRIDE): the index fault is named, freshness is not
  "ok", the damaged index is moved aside and OpenClaw indexes the agent again;
* a retrieval timeout: index held by a writer (the holder's pid named), a qmd that hangs on ``search``
  in search mode (never "switch to search mode");
* a memory note qmd cannot read: the file and the permission fix are named, not a re-index;
* qmd's own launcher (``#!/usr/bin/env node``) pinned while an older Node comes first on the shell's PATH: OpenClaw
  2026.7.35 puts its own Node first (its start-up PATH rewrite), so qmd runs — never a ``native_binding`` crash
  measured under the wrong Node; the real ``openclaw memory search`` is the truth; likewise a qmd only in
  ``~/.local/bin`` (off the shell's PATH) is found, as that rewrite appends it;
* a 30-day update interval and a note the index never took in: stale once the gateway's file watcher should
  have synced it (OpenClaw's default 5 m lease for a change on disk), not "awaiting update" for 30 days;
* vsearch with only the generate model missing: the warm-up that really requests that model (a local
  HTTP server stands in for Hugging Face), where ``qmd embed`` requests nothing;
* no ``openclaw`` executable: never "everything passes";
* a copyable retrieval command, pasted into bash as is, finds the canary.

Each state is built once per module (``real_state``); OpenClaw runs only where its behaviour is the point
(the lock and the hang through ``openclaw memory search``, and the managed re-index after the move).
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import collect, discover, fast
from clawprobe.core.probes.qmd_index import managed_collection_names
from clawprobe.core.verdicts import Verdict
from tests.hardening_helpers import (
    check_env,
    drop_file_permission_override,
    fake_program,
    run_clawprobe,
)
from tests.rw_support import context, live, plant, search_only
from tests.testbed import (
    OC_QMD,
    OpenClawHome,
    qmd_config,
    qmd_env,
    run_openclaw,
    run_process,
    run_qmd,
    use_local_embed_model,
)

HOLDER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA locking_mode=EXCLUSIVE")
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE documents SET title = title WHERE id = 1")
print("locked", flush=True)
time.sleep(120)
"""


def _index(home: OpenClawHome, testbed) -> None:
    root, mem = managed_collection_names(home.agent_id)
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        res = run_qmd(home, None, *args, testbed=testbed)
        assert res.rc == 0, res.stderr


def _home(parent: Path, testbed, name: str, config: dict | None = None, notes: int = 8) -> tuple[OpenClawHome, object]:
    """A QMD home (search mode, qmd on PATH) with MEMORY.md, ``notes`` notes and a clawprobe canary, indexed
    by the real qmd into the agent's managed collections."""
    home = OpenClawHome.create(parent, prefix=f"{name}-")
    home.write_config(config or qmd_config("qmd", "search"))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    for i in range(notes):
        home.write_memory(f"note-{i}.md", f"# Note {i}\n\n" + f"body of note {i}, line\n" * 150)
    spec = plant(home)
    _index(home, testbed)
    return home, spec


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    return tmp_path_factory.mktemp("qmd-faults")


def _ctx(home, testbed):
    return context(home, testbed, OC_QMD, [testbed.bin_dir])


def _commands(action) -> list[str]:
    return [c for c in [action.command, *(s.command for s in action.steps)] if c]


def _check_nodac(home: OpenClawHome, testbed, data: Path) -> tuple[dict, dict]:
    """``clawprobe check --json --no-openclaw`` as a user without root's permission override."""
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data),
                                 preexec=drop_file_permission_override)
    assert "Traceback" not in err, err
    (entry,) = json.loads(out)["receipts"]
    assert entry["exit_code"] == rc
    return entry["diagnosis"], entry["receipt"]


def _bash(cmd: str, env: dict, timeout: float = 60, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=preexec)


# ------------------------------------------------------------------------------------------------ not qmd

@pytest.fixture(scope="module")
def not_qmd(parent, testbed, real_state):
    def build():
        home, _ = _home(parent, testbed, "notqmd", notes=1)
        silent = fake_program(parent / "silent-qmd", 'echo "$@" >> "$0.argv"\nexit 0')
        out = {}
        for name, cmd in (("true", "/bin/true"), ("echo", "/bin/echo"), ("silent", str(silent))):
            home.update_config({"memory": {"qmd": {"command": cmd}}})
            r = fast(_ctx(home, testbed), "main", None)
            out[name] = (r, diagnose(r))
        return out, silent
    return real_state("not_qmd", build)


@pytest.mark.parametrize("name, printed", [("true", "printed 'true (GNU coreutils)"),
                                           ("echo", "printed 'echo (GNU coreutils)"), ("silent", "printed nothing")])
def test_a_command_that_is_not_qmd(not_qmd, testbed, name, printed):
    states, silent = not_qmd
    r, d = states[name]
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "not_qmd"), d.evidence
    assert (r.qmd.resolves, r.qmd.version, r.qmd.store_ok) == (False, None, None)
    assert printed in r.qmd.failure_detail and "store command was not run" in r.qmd.failure_detail
    assert d.next_action.command == f"openclaw config set memory.qmd.command {testbed.qmd}"  # the qmd on PATH
    assert f"qmd 2.8.3 at {testbed.qmd}" in " ".join(s.check for s in d.next_action.steps)
    if name == "silent":  # only `--version` ever ran: no store command for a program that is not qmd
        assert Path(f"{silent}.argv").read_text().split("\n") == ["--version", ""]


@pytest.fixture(scope="module")
def quiet_wrapper(parent, testbed, real_state):
    """Breaker round 23 (c): a ``memory.qmd.command`` wrapper whose ``--version`` prints nothing (exit 0) and that
    runs the real qmd for everything else — OpenClaw 2026.7.35 only keys a cache with that line, so its search (and
    the gateway's) returns qmd's hits —, and a script silent for every call; each through OpenClaw's own search."""
    def build():
        home, spec = _home(parent, testbed, "quietwrap", notes=1)
        out = {}
        for name, body in (("wrapper", f'[ "$1" = --version ] && exit 0\nexec {testbed.qmd} "$@"'),
                           ("silent", "exit 0")):
            (parent / f"quiet-{name}").mkdir()
            prog = fake_program(parent / f"quiet-{name}" / "qmd", body)
            home.update_config({"memory": {"qmd": {"command": str(prog)}}})
            ctx = _ctx(home, testbed)
            now = datetime.now(UTC)
            r = live(ctx, "main", search_only(ctx, "main", spec, now), now)
            out[name] = (r, diagnose(r))
        return out
    return real_state("quiet_wrapper", build)


def test_a_wrapper_silent_on_version_that_openclaw_searches_through_is_not_understood(quiet_wrapper):
    r, d = quiet_wrapper["wrapper"]
    assert r.qmd.failure == "not_qmd" and r.canary.outcome == "found" and r.canary.result_shape == "qmd", r.canary
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "not_understood"), d.evidence
    assert any("does not identify as qmd" in e and "printed nothing" in e and "qmd's hits" in e for e in d.evidence)
    assert "npm install" not in " ".join([d.next_action.title, *_commands(d.next_action)]), d.next_action


def test_a_program_silent_on_every_call_stays_not_qmd_through_openclaws_search(quiet_wrapper):
    r, d = quiet_wrapper["silent"]
    assert r.canary.result_shape != "qmd", r.canary
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "not_qmd"), d.evidence


# ------------------------------------------------------------------------------------------------ damaged index

def _overwrite_pages(index: Path) -> None:
    """Every b-tree page after page 1 gets a garbage page header (as a torn write leaves it)."""
    b = bytearray(index.read_bytes())
    ps = int.from_bytes(b[16:18], "big")
    for page in range(1, len(b) // ps):
        b[page * ps: page * ps + 8] = b"\xff" * 8
    index.write_bytes(bytes(b))


def _truncate(index: Path) -> None:
    with open(index, "r+b") as f:
        f.truncate(10000)


def _header(index: Path) -> None:
    with open(index, "r+b") as f:
        f.write(b"X" * 16)


def _directory(index: Path) -> None:
    """A directory where the index belongs (breaker round 24): qmd cannot open it (SQLITE_CANTOPEN), so every
    `openclaw memory index`/`memory search` of the agent exits 1 — clawprobe read it as "no index path" and said
    unverified · no_canary, whose step is that same failing `memory index`."""
    index.unlink()
    index.mkdir()


DAMAGE = {"pages": (_overwrite_pages, "index_corrupt"), "truncated": (_truncate, "index_corrupt"),
          "header": (_header, "index_not_database"), "directory": (_directory, "index_not_database")}


@pytest.fixture(scope="module")
def damaged(parent, testbed, real_state):
    def build():
        home, spec = _home(parent, testbed, "damaged")
        pristine = home.qmd_index().read_bytes()
        out = {}
        for how, (damage, _) in DAMAGE.items():
            home.qmd_index().write_bytes(pristine)
            damage(home.qmd_index())
            r = fast(_ctx(home, testbed), "main", None)
            if how == "directory":  # the truth: OpenClaw's own search of the agent fails
                found = run_openclaw(home, OC_QMD, "memory", "search", spec.token, "--json", "--agent", "main",
                                     path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed)
                assert found.rc == 1 and "SQLITE_CANTOPEN" in found.stderr, (found.rc, found.stderr[-300:])
                home.qmd_index().rmdir()
                out[how] = (r, diagnose(r), b"")
                continue
            out[how] = (r, diagnose(r), home.qmd_index().read_bytes())
        home.qmd_index().write_bytes(pristine)
        return home, spec, out
    return real_state("damaged", build)


@pytest.mark.parametrize("how", list(DAMAGE))
def test_damaged_index_is_named_and_moved_aside(damaged, how):
    _, _, states = damaged
    r, d, _ = states[how]
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, DAMAGE[how][1]), d.evidence
    text = " | ".join(d.evidence)
    # the store check proves qmd on a scratch index (it never opens the agent's: issue 15); the fault is named
    # by clawprobe's own read-only open, with SQLite's words
    said = {"pages": "malformed", "truncated": "truncated: 10000 bytes on disk", "header": "not a database",
            "directory": "is a directory"}[how]
    assert r.qmd.store_ok in ((True, None) if how == "directory" else (True,)) and r.qmd.failure is None, r.qmd
    assert r.qmd.store_exit_code in ((0, None) if how == "directory" else (0,)), r.qmd
    assert "clawprobe's read-only open: QMD index" in text and said in text, text
    modes = {m.mode: m for m in d.modes}
    assert modes["search"].fresh.state == "fail" and not modes["search"].ready
    assert d.next_action.command.startswith("mkdir ") and "memory index" not in d.next_action.command
    steps = d.next_action.steps
    assert steps[1].runnable and steps[1].command == "openclaw memory index --agent main"


def test_moving_the_damaged_index_aside_then_the_managed_index_repairs_it(damaged, testbed):
    """The repair as shown: the copied command run in bash, then OpenClaw's own `memory index` (the runnable
    step); the damaged bytes are kept, the agent's index answers again."""
    home, spec, states = damaged
    r, d, damaged_bytes = states["pages"]
    home.qmd_index().write_bytes(damaged_bytes)
    for side in ("-wal", "-shm"):
        Path(f"{home.qmd_index()}{side}").unlink(missing_ok=True)
    res = _bash(d.next_action.command, {"PATH": "/usr/bin:/bin", "HOME": str(home.home)})
    assert res.returncode == 0, res.stderr
    kept = list(home.qmd_index().parent.glob("damaged-*/index.sqlite"))
    assert len(kept) == 1 and kept[0].read_bytes() == damaged_bytes and not home.qmd_index().exists()
    idx = run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert idx.rc == 0, idx.stderr
    after = fast(_ctx(home, testbed), "main", None)
    d2 = diagnose(after)
    assert d2.verdict is not Verdict.QMD_UNAVAILABLE and after.vectors.documents == 10, d2.evidence
    hit = run_qmd(home, "main", "search", spec.token, "--json", testbed=testbed)
    assert hit.rc == 0 and "clawprobe-canary.md" in hit.stdout


# ------------------------------------------------------------------------------------------------ inconsistent index
# Active document rows qmd's search cannot return: their content row gone (``content``) or their full-text row gone
# (``documents_fts``). The index opens cleanly and the canary still answers, but those notes are never found, and
# `qmd update` keeps them as "unchanged" (their files' hashes still match) — measured below on the real qmd.

LOSS = {"content": "DELETE FROM content WHERE hash IN (SELECT hash FROM documents WHERE {where})",
        "fts": "DELETE FROM documents_fts WHERE rowid IN (SELECT id FROM documents WHERE {where})"}
INCONSISTENT = [("main", "content"), ("ops-bot", "fts")]


@pytest.fixture(scope="module")
def inconsistent(parent, testbed, real_state):
    """Per (agent, loss): a planted, indexed QMD home (notes at the workspace root, in memory/ and a nested dir),
    MEMORY.md and memory/projects/launch-plan.md made unsearchable; the real qmd's answers before and after its
    own update, and the fast probe's receipt and diagnosis."""
    import sqlite3

    from tests.hardening_helpers import indexed_qmd_home

    def build():
        out = {}
        for agent, loss in INCONSISTENT:
            home = indexed_qmd_home(parent, testbed, notes=3, name=f"lost-{loss}", agent_id=agent)
            home.write_memory("projects/launch-plan.md", "# Launch\n\nThe launch window is zanzibar week.\n")
            spec = plant(home)
            assert run_qmd(home, None, "update", testbed=testbed).rc == 0
            clean = fast(_ctx(home, testbed), agent, None)
            con = sqlite3.connect(home.qmd_index(agent))
            con.execute(LOSS[loss].format(where="path IN ('MEMORY.md', 'projects/launch-plan.md')"))
            con.commit()
            con.close()
            found = {w: run_qmd(home, None, "search", w, "--json", testbed=testbed).stdout for w in ("tea", "zanzibar")}
            assert run_qmd(home, None, "update", testbed=testbed).rc == 0
            after_update = run_qmd(home, None, "search", "zanzibar", "--json", testbed=testbed).stdout
            r = fast(_ctx(home, testbed), agent, None)
            out[(agent, loss)] = (home, spec, clean, found, after_update, r, diagnose(r))
        return out
    return real_state("inconsistent", build)


@pytest.mark.parametrize("agent,loss", INCONSISTENT)
def test_notes_the_index_lists_but_its_search_cannot_return_are_named_not_healthy(inconsistent, agent, loss):
    home, spec, clean, found, after_update, r, d = inconsistent[(agent, loss)]
    # the truth: the real qmd finds neither note, before or after its own update; the clean index had no such row
    assert json.loads(found["tea"]) == [] and json.loads(found["zanzibar"]) == [] and json.loads(after_update) == []
    assert clean.vectors.not_ready_reason != "index_inconsistent", clean.vectors.detail
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "index_inconsistent"), d.evidence
    text = " | ".join(d.evidence)
    assert f"memory-root-{agent}/MEMORY.md" in text and f"memory-dir-{agent}/projects/launch-plan.md" in text, text
    assert "note-0.md" not in text and "clawprobe-canary.md" not in text, text
    assert "2 of 6 active documents" in text, text
    # the repair moves that agent's index aside (never "wait" or a plain `memory index`, which changes nothing)
    cmd = d.next_action.command
    assert cmd.startswith("mkdir ") and str(home.qmd_index(agent)) in cmd and "memory index" not in cmd, cmd
    assert d.next_action.steps[1].command == f"openclaw memory index --agent {agent}"


def test_the_inconsistent_index_moved_aside_then_indexed_finds_the_notes_again(inconsistent, testbed):
    """The walk's first command pasted into bash, then OpenClaw's own `memory index`: the notes answer again."""
    home, spec, _, _, _, r, d = inconsistent[("ops-bot", "fts")]
    res = _bash(d.next_action.command, {"PATH": "/usr/bin:/bin", "HOME": str(home.home)})
    assert res.returncode == 0, res.stderr
    assert not home.qmd_index("ops-bot").exists() and list(home.qmd_index("ops-bot").parent.glob("damaged-*/index.sqlite"))
    idx = run_openclaw(home, OC_QMD, "memory", "index", "--agent", "ops-bot", path_dirs=[testbed.bin_dir],
                       testbed=testbed)
    assert idx.rc == 0, idx.stderr
    after = fast(_ctx(home, testbed), "ops-bot", None)
    d2 = diagnose(after)
    assert d2.verdict is not Verdict.QMD_UNAVAILABLE and after.vectors.not_ready_reason != "index_inconsistent", d2.evidence
    hit = run_qmd(home, None, "search", "zanzibar", "--json", testbed=testbed)
    assert hit.rc == 0 and "launch-plan.md" in hit.stdout, hit.stdout


def test_an_index_read_while_qmd_update_writes_it_is_not_inconsistent(parent, testbed):
    """qmd 2.8.3 writes a note's document, content and full-text rows in separate statements, so a read during
    ``qmd update`` (the gateway's periodic update, the walk's own index step) sees a few documents without their rows
    for milliseconds — measured below (breaker round 24). clawprobe said ``qmd_unavailable · index_inconsistent`` and
    handed out "move the index aside", a wrong repair for a healthy index; a document counts as lost only when a
    second read still finds it so (:data:`~clawprobe.core.probes.qmd_index.UNSEARCHABLE_RECHECK_S`)."""
    import sqlite3

    from clawprobe.core.probes import qmd_index as qi
    from tests.hardening_helpers import indexed_qmd_home

    home = indexed_qmd_home(parent, testbed, notes=1, name="mid-update", agent_id="kb-7")
    assert run_qmd(home, None, "update", testbed=testbed).rc == 0
    for i in range(3000):
        home.write_memory(f"batch/n{i:04d}.md", f"# Note {i}\n\n" + f"word{i} " * 120 + "\n")
    paths = qi.qmd_paths(str(home.state_dir), "kb-7")
    update = subprocess.Popen([str(testbed.qmd), "update"], env=qmd_env(home, None), cwd=home.root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    reads = []
    while update.poll() is None:
        qi.clear_read_cache()
        reads.append(qi.read_qmd_index(paths))
    assert update.wait() == 0, update.stderr.read()[-400:]
    during = [f for f in reads if f.documents_active and 2 < f.documents_active < 3002]
    assert len(during) >= 5, [f.documents_active for f in reads]  # the reads did land inside the update
    assert [f.unsearchable for f in during if f.unsearchable_count] == []
    # a row still missing a moment later is lost (the inconsistent index above); one restored in time is not
    con = sqlite3.connect(paths.db, isolation_level=None)
    row = con.execute("SELECT id, collection, path FROM documents WHERE path = 'batch/n0007.md'").fetchone()
    body = con.execute("SELECT filepath, title, body FROM documents_fts WHERE rowid = ?", (row[0],)).fetchone()
    con.execute("DELETE FROM documents_fts WHERE rowid = ?", (row[0],))
    later = threading.Timer(0.1, lambda: sqlite3.connect(paths.db, isolation_level=None).execute(
        "INSERT INTO documents_fts(rowid, filepath, title, body) VALUES (?, ?, ?, ?)", (row[0], *body)))
    later.start()
    qi.clear_read_cache()
    assert qi.read_qmd_index(paths).unsearchable_count == 0
    later.join()
    con.execute("DELETE FROM documents_fts WHERE rowid = ?", (row[0],))
    qi.clear_read_cache()
    gone = qi.read_qmd_index(paths)
    assert (gone.unsearchable_count, gone.unsearchable) == (1, [f"{row[1]}/{row[2]}"])


# ------------------------------------------------------------------------------------------------ unreadable

@pytest.fixture(scope="module")
def unreadable(parent, testbed, real_state, tmp_path_factory):
    """Two states checked without CAP_DAC_OVERRIDE: the index chmod 000, and a 10-minute-old note chmod 000."""
    def build():
        data = tmp_path_factory.mktemp("nodac-data")
        home, _ = _home(parent, testbed, "unreadable")
        home.qmd_index().chmod(0o000)
        index_state = _check_nodac(home, testbed, data)
        home.qmd_index().chmod(0o644)
        note = home.write_memory("private.md", "# Private\n\nthe boat is blue\n")
        old = time.time() - 600
        os.utime(note, (old, old))
        note.chmod(0o000)
        note_state = _check_nodac(home, testbed, data)
        return home, note, data, index_state, note_state
    return real_state("unreadable", build)


def test_unreadable_index_names_its_permissions(unreadable):
    home, _, _, (d, r), _ = unreadable
    assert (d["verdict"], d["reason"]) == ("qmd_unavailable", "index_unreadable"), d["evidence"]
    text = " | ".join(d["evidence"])
    # named by clawprobe's read-only open (the store check runs on a scratch index, issue 15)
    assert "clawprobe's read-only open" in text and "Permission denied" in text and "mode 0000" in text, text
    modes = {m["mode"]: m for m in d["modes"]}
    assert modes["search"]["fresh"]["state"] == "fail"
    assert d["next_action"]["command"] == f"chmod u+rw {home.qmd_index()}*"


def test_unreadable_note_is_named_and_fixed_by_its_permissions(unreadable, testbed):
    home, note, data, _, (d, r) = unreadable
    assert (d["verdict"], d["reason"]) == ("stale_index", "unreadable"), d["evidence"]
    text = " | ".join(d["evidence"])
    assert "unreadable: memory/private.md (Permission denied (mode 0000" in text
    assert "memory/private.md" in d["next_action"]["title"]
    assert d["next_action"]["command"] == f"chmod u+r {note}"
    env = qmd_env(home, "main")
    env["PATH"] = f"{testbed.bin_dir}:/usr/bin:/bin"
    upd = subprocess.run([str(testbed.qmd), "update"], env=env, capture_output=True, text=True, timeout=60,
                         preexec_fn=drop_file_permission_override)  # what `memory index` runs: it skips the file
    assert upd.returncode == 0 and "Skipped unreadable file: private.md (EACCES)" in upd.stdout + upd.stderr
    assert _check_nodac(home, testbed, data)[0]["reason"] == "unreadable"  # re-indexing changed nothing
    fix = _bash(d["next_action"]["command"], {"PATH": "/usr/bin:/bin"}, preexec=drop_file_permission_override)
    assert fix.returncode == 0, fix.stderr
    upd = subprocess.run([str(testbed.qmd), "update"], env=env, capture_output=True, text=True, timeout=60,
                         preexec_fn=drop_file_permission_override)
    assert upd.returncode == 0, upd.stderr
    d2, r2 = _check_nodac(home, testbed, data)
    assert d2["verdict"] != "stale_index" and "memory/private.md" not in r2["freshness"]["unindexed_files"]


# ------------------------------------------------------------------------------------------------ timeouts

@pytest.fixture(scope="module")
def locked(parent, testbed, real_state):
    """A writer holds the agent's index (exclusive locking mode, open transaction); the store check, then
    the canary search through the real OpenClaw."""
    def build():
        home, spec = _home(parent, testbed, "locked", notes=1)
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home.qmd_index())], stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert holder.stdout.readline().strip() == "locked"
            ctx = _ctx(home, testbed)
            now = datetime.now(UTC)
            r = live(ctx, "main", search_only(ctx, "main", spec, now), now)
        finally:
            holder.kill()
            holder.wait()
        return r, diagnose(r), holder.pid
    return real_state("locked", build)


def test_timeout_on_a_locked_index_names_the_writer(locked):
    r, d, pid = locked
    assert r.canary.outcome == "timeout" and r.qmd.failure == "index_locked" and r.qmd.store_ok is None, r.qmd
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "index_locked"), d.evidence
    assert f"held open by pid {pid}" in " ".join(d.evidence)
    assert d.next_action.command == f"ps -o pid,etime,args -p {pid}" and f"pid {pid}" in d.next_action.title
    todo = " ".join([d.next_action.title, *_commands(d.next_action)])
    assert "searchMode" not in todo and "timeoutMs" not in todo


def test_a_command_line_in_memory_qmd_command_pins_the_qmd_it_names(parent, testbed):
    """Breaker round 6 (z41): OpenClaw took ``node`` alone from ``"<node> <launcher>"`` ("Cannot find module
    '…/collection'"); the repair was ``npm install -g @tobilu/qmd`` though qmd is installed, offline."""
    launcher = testbed.root / "qmd" / "node_modules" / "@tobilu" / "qmd" / "bin" / "qmd"
    home, _ = _home(parent, testbed, "cmdline", config=qmd_config(f"{testbed.node} '{launcher}'", "search"), notes=1)
    r = fast(_ctx(home, testbed), "main", None)
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.QMD_UNAVAILABLE, "not_qmd"), d.evidence
    assert r.qmd.candidate_path == str(launcher) and r.qmd.candidate_version == "2.8.3"
    assert d.next_action.command == f"openclaw config set memory.qmd.command {launcher}"
    assert "only the first word" in d.next_action.title and "npm install" not in " ".join(_commands(d.next_action))


def test_no_default_collection_and_no_paths_is_memory_unavailable_not_awaiting(parent, testbed):
    cfg = qmd_config("qmd", "search", qmd={"includeDefaultMemory": False})
    home, _ = _home(parent, testbed, "nocollections", config=cfg, notes=1)
    d = diagnose(fast(_ctx(home, testbed), "main", None))
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "no_collections"), d.evidence
    assert d.next_action.command == "openclaw config set memory.qmd.includeDefaultMemory true"
    home.update_config({"memory": {"qmd": {"paths": [{"path": str(home.workspace / "memory"), "pattern": "**/*.md"}]}}})
    assert diagnose(fast(_ctx(home, testbed), "main", None)).reason != "no_collections"


@pytest.fixture(scope="module")
def old_node_first(parent, testbed, real_state):
    """The qmd launcher pinned as the command; the shell's PATH starts with a dir whose ``node`` is Node 20 (qmd's
    native binding is built for Node 24: under Node 20 every store command is killed by SIGSEGV)."""
    def build():
        launcher = testbed.root / "qmd" / "node_modules" / "@tobilu" / "qmd" / "bin" / "qmd"
        home, spec = _home(parent, testbed, "oldnode", config=qmd_config(str(launcher), "search"), notes=1)
        old = parent / "old-node-bin"
        old.mkdir(exist_ok=True)
        (old / "node").unlink(missing_ok=True)
        (old / "node").symlink_to(testbed.node20.resolve())
        r = fast(context(home, testbed, OC_QMD, [old]), "main", None)
        truth = run_openclaw(home, OC_QMD, "memory", "search", spec.token, "--json", path_dirs=[old], testbed=testbed)
        return r, diagnose(r), truth, spec, old
    return real_state("old_node_first", build)


def test_openclaw_runs_qmd_under_its_own_node_whatever_comes_first_on_path(old_node_first, testbed):
    r, d, truth, spec, old = old_node_first
    hits = [x for x in truth.json()["results"] if x["path"] == spec.expected_path]
    assert truth.rc == 0 and hits and hits[0]["snippet"].startswith("@@ "), truth.stderr  # qmd's snippet: not builtin
    assert (r.qmd.resolves, r.qmd.store_ok, r.qmd.failure) == (True, True, None), r.qmd
    assert d.verdict != Verdict.QMD_UNAVAILABLE, d.evidence
    assert r.qmd.version == "2.8.3"


def test_a_qmd_in_the_users_local_bin_off_path_is_found_as_openclaw_finds_it(parent, testbed):
    home, spec = _home(parent, testbed, "localbin", notes=1)  # memory.qmd.command: "qmd"
    (home.home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    (home.home / ".local" / "bin" / "qmd").symlink_to(testbed.qmd)
    r = fast(context(home, testbed, OC_QMD, []), "main", None)
    assert (r.qmd.resolves, r.qmd.resolved_path) == (True, str(home.home / ".local" / "bin" / "qmd")), r.qmd
    truth = run_openclaw(home, OC_QMD, "memory", "search", spec.token, "--json", testbed=testbed)
    hits = [x for x in truth.json()["results"] if x["path"] == spec.expected_path]
    assert truth.rc == 0 and hits and hits[0]["snippet"].startswith("@@ "), truth.stderr  # qmd's snippet: not builtin


@pytest.fixture(scope="module")
def long_interval(parent, testbed, real_state):
    """``update.interval: "30d"``, indexed by the real qmd, then ``memory/later.md`` written after the index: the
    fast receipt with that change 10 min old and 1 min old (watcher on, OpenClaw's default), then 10 min old with
    ``memorySearch.sync.watch: false``."""
    def build():
        cfg = qmd_config("qmd", "search", qmd={"update": {"interval": "30d"}})
        home, _ = _home(parent, testbed, "interval30d", config=cfg, notes=1)
        later = home.write_memory("later.md", "# Later\n\nKIWI-MONTH-77 is the door code.\n")
        out = {}
        for name, age, watch in (("old", 600, None), ("new", 60, None), ("old-unwatched", 600, False)):
            if watch is not None:
                home.update_config({"agents": {"defaults": {"memorySearch": {"sync": {"watch": watch}}}}})
            os.utime(later, (time.time() - age, time.time() - age))
            r = fast(_ctx(home, testbed), "main", None)
            out[name] = (r, diagnose(r))
        return out
    return real_state("long_interval", build)


def test_a_change_older_than_the_watchers_lease_is_stale_whatever_the_interval(long_interval):
    r, d = long_interval["old"]
    assert r.freshness.unindexed_files == ["memory/later.md"] and r.lease.seconds == 420.0
    assert (d.verdict, d.reason) == (Verdict.STALE_INDEX, "dirty"), d.evidence
    assert "memory.qmd.update.interval = 30d" in r.lease.interval_source
    line = next(e for e in d.evidence if e.startswith("lease interval 300 s: memory.qmd.update.interval = 30d"))
    assert line.endswith("syncs a change seconds after it, so the change gets OpenClaw's default 5m"), line
    assert d.next_action.command == "openclaw memory index --agent main"
    r, d = long_interval["new"]  # a minute old: the watcher may still be on its way
    assert r.lease.seconds == 420.0 and d.verdict != Verdict.STALE_INDEX, d.evidence
    r, d = long_interval["old-unwatched"]  # no watcher: only the 30-day interval would take it in
    assert r.lease.seconds == 30 * 86400 + 120.0 and d.verdict != Verdict.STALE_INDEX, d.evidence


@pytest.fixture(scope="module")
def hanging(parent, testbed, real_state):
    """qmd behind a wrapper that hangs on `search` (everything else is the real qmd); search mode."""
    def build():
        wrapper = fake_program(parent / "hang-qmd", f'if [ "$1" = search ]; then sleep 20; fi\nexec {testbed.qmd} "$@"')
        home, spec = _home(parent, testbed, "hanging", config=qmd_config(str(wrapper), "search"), notes=1)
        ctx = _ctx(home, testbed)
        now = datetime.now(UTC)
        r = live(ctx, "main", search_only(ctx, "main", spec, now), now)
        return r, diagnose(r), wrapper
    return real_state("hanging", build)


def test_search_mode_timeout_never_suggests_search_mode(hanging):
    r, d, wrapper = hanging
    assert r.config.search_mode == "search" and r.canary.outcome == "timeout" and r.qmd.store_ok is True
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "timeout"), d.evidence
    todo = " ".join([d.next_action.title, *_commands(d.next_action)])
    assert "searchMode" not in todo
    assert f"timeout 60 {wrapper} search clawprobe --json -n 5" in d.next_action.command


# ------------------------------------------------------------------------------------------------ models

class _HubLog(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):
        type(self).requests.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def hub():
    """A local stand-in for Hugging Face (HF_ENDPOINT): it records the paths asked for and answers 404."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HubLog)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", _HubLog.requests
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def vsearch_generate_missing(parent, testbed, real_state):
    def build():
        home, _ = _home(parent, testbed, "vsearch", config=qmd_config("qmd", "vsearch"), notes=1)
        use_local_embed_model(home, testbed=testbed)
        emb = run_qmd(home, None, "embed", testbed=testbed, timeout=120)
        assert emb.rc == 0, emb.stderr
        r = fast(_ctx(home, testbed), "main", None)
        return home, r, diagnose(r)
    return real_state("vsearch", build)


def test_generate_model_missing_gets_the_warm_up_that_fetches_it(vsearch_generate_missing, hub):
    home, r, d = vsearch_generate_missing
    assert r.vectors.pending == 0 and "generate" in r.vectors.missing_models
    assert (d.verdict, d.reason) == (Verdict.VECTOR_NOT_READY, "model_download"), d.evidence
    cmd = d.next_action.command
    assert "vsearch 'clawprobe warm-up' -n 1" in cmd and " embed" not in cmd
    url, requests = hub
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home.home), "HF_ENDPOINT": url, "MODEL_ENDPOINT": url}
    requests.clear()
    old = cmd.replace("vsearch 'clawprobe warm-up' -n 1", "embed")  # what the repair used to offer
    assert _bash(old, env).returncode == 0 and requests == []  # nothing to embed: no model is fetched
    _bash(cmd, env)  # fails here (the stand-in answers 404), after asking for the model
    assert any("qmd-query-expansion-1.7B-q4_k_m.gguf" in p for p in requests), requests


# ------------------------------------------------------------------------------------------------ no openclaw

def test_no_openclaw_executable_is_never_everything_passes(testbed, tmp_path):
    home = OpenClawHome.create(tmp_path, prefix="nocli-")
    home.write_config(qmd_config("qmd", "search"))
    home.write_memory_md()
    env = home.env([testbed.bin_dir])  # the test bed's bin dir has openclaw-<version>, no `openclaw`
    ctx = discover(env=env)
    assert ctx.openclaw is None
    r = collect(ctx, "main")
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.UNVERIFIED, "openclaw_not_found"), d.evidence
    assert d.next_action.command == "command -v openclaw" and "CLAWPROBE_OPENCLAW" in d.next_action.title
    assert "Everything measured passes" not in d.next_action.why


# ------------------------------------------------------------------------------------------------ copyable commands

def test_the_copyable_search_command_runs_as_pasted(parent, testbed):
    """The retrieval repair's direct search, pasted into bash as is: the token comes from the canary file."""
    home, spec = _home(parent, testbed, "paste", notes=1)
    r = fast(_ctx(home, testbed), "main", None)
    r.canary = r.canary.model_copy(update={"expected_path": spec.expected_path, "outcome": "miss"})
    d = diagnose(r)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "miss")
    res = _bash(d.next_action.command, {"PATH": "/usr/bin:/bin", "HOME": str(home.home)})
    assert res.returncode == 0, res.stderr
    assert [h["file"] for h in json.loads(res.stdout)] == ["qmd://memory-dir-main/clawprobe-canary.md"]
    assert spec.token not in d.next_action.command  # read at run time, never stored in the receipt


def test_nothing_of_these_states_is_left_running(parent, locked, hanging):
    """The lock holder and the hanging wrapper (with its sleep) are gone once their states are built."""
    out = run_process(["pgrep", "-f", str(parent)], env={"PATH": "/usr/bin:/bin"}, cwd="/", timeout=10)
    assert out.stdout.strip() == "", out.stdout
