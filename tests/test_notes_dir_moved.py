"""Breaker round 25: the workspace's ``memory/`` renamed (``mv memory notes``). The canary planted in it went with
the operator's notes, out of what OpenClaw indexes. clawprobe said ``retrieval_failed · canary_gone`` → "rotate the
canary"; pasted, the rotation recreated an empty ``memory/`` holding only the canary, and the next check was
HEALTHY while ``openclaw memory search`` found none of the moved notes (measured on 2026.9.6). Now the canary's
directory is measured gone and the planted file (same content hash) found where it went: ``notes_dir_moved``,
repaired by moving the directory back with a command any POSIX ``sh`` runs (``[ ! -e DST ] && [ ! -L DST ] && mv SRC
DST``; the first one, GNU ``mv -n -T``, is "illegal option" on macOS)."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from clawprobe.core import canary as cn
from clawprobe.core import canary_write
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.interpret.canary import ghost
from clawprobe.core.probe import clear_caches, discover, fast, slow
from tests.test_lease import _healthy
from tests.testbed import OC_LATEST, builtin_config, run_openclaw


@pytest.mark.parametrize("agent,new", [("main", "notes"), ("ops-bot", "archive/memory"), ("kb-7", "Notizen é")])
def test_the_canarys_directory_is_found_where_it_was_moved(tmp_path, agent, new):
    ws = tmp_path / "ws"
    ws.mkdir()
    rec = canary_write.plant(ws, agent, root=tmp_path / "data")
    (ws / "memory" / "deploy.md").write_text("# Deploy\n\nquokka pipeline\n")
    assert cn.moved_dir(rec) is None  # the planted dir exists
    (ws / new).parent.mkdir(parents=True, exist_ok=True)
    (ws / "memory").rename(ws / new)
    (ws / "decoy").mkdir()
    (ws / "decoy" / "clawprobe-canary.md").write_text("# clawprobe canary\n\nanother token\n")  # not the planted file
    assert cn.moved_dir(rec) == ("memory", new)
    (ws / new / "clawprobe-canary.md").write_text("edited\n")  # the planted content is nowhere: not a move it proves
    assert cn.moved_dir(rec) is None


def test_a_deleted_directory_or_file_is_no_move(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    rec = canary_write.plant(ws, "main", root=tmp_path / "data")
    (ws / "memory" / "clawprobe-canary.md").rename(ws / "clawprobe-canary.md")  # the file moved, its dir stays
    assert cn.moved_dir(rec) is None
    (ws / "memory").rmdir()  # the dir gone, the copy at the workspace root: no directory of notes moved
    assert cn.moved_dir(rec) is None


@pytest.mark.parametrize("outcome", ["found", "miss"])
def test_a_moved_notes_dir_is_moved_back_never_a_rotation(outcome):
    r = _healthy()
    r.config.workspace = "/srv/agents/ops bot/ws"
    r.canary.outcome = outcome
    r.canary.returned_path = "memory/clawprobe-canary.md" if outcome == "found" else None
    r.canary = ghost(r.canary, "missing", None, ("memory", "notes"))
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "notes_dir_moved")
    dst = "'/srv/agents/ops bot/ws/memory'"
    assert d.next_action.command == f"[ ! -e {dst} ] && [ ! -L {dst} ] && mv '/srv/agents/ops bot/ws/notes' {dst}"
    assert "rotate" not in d.next_action.command and "notes/" in " ".join(d.evidence)
    assert ghost(r.canary.model_copy(update={"reason": None, "outcome": "found"}), "missing").reason == "canary_gone"


def test_a_ghost_hit_does_not_say_it_got_the_path_it_expected():
    """``canary miss: expected memory/clawprobe-canary.md, got memory/clawprobe-canary.md`` read as a contradiction:
    the path is the same, the file is gone (the next line says so)."""
    r = _healthy()
    r.canary = ghost(r.canary, "missing")
    first = diagnose(r).evidence[0]
    assert first == f"canary miss: expected {r.canary.expected_path}"


@pytest.mark.real
def test_renamed_notes_dir_real(oc_home_factory, testbed, tmp_path_factory):
    """2026.9.6, agent ``kb-7``: index, rename ``memory/`` to ``notes/``, probe → ``notes_dir_moved``; the repair
    pasted into a shell puts the notes back where OpenClaw's own search finds them."""
    agent = "kb-7"
    home = oc_home_factory(builtin_config("none", version=OC_LATEST,
                                          agents={"list": [{"id": agent, "default": True}]}),
                           name="moved", agent_id=agent)
    home.write_memory_md("# Memory\n\nLong-term notes.\n")
    home.write_memory("deploy.md", "# Deploy\n\nDeploys go out via the quokka pipeline.\n")
    data = tmp_path_factory.mktemp("clawprobe-data")
    canary_write.plant(home.workspace, agent, root=data)
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", agent, testbed=testbed).rc == 0
    (home.workspace / "memory").rename(home.workspace / "notes")
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)), "CLAWPROBE_DATA_DIR": str(data)})
    clear_caches()
    ctx = discover(env=env)
    r = fast(ctx, agent, slow(ctx, agent))
    d = diagnose(r, openclaw=shlex.quote(str(testbed.openclaw(OC_LATEST))))
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "notes_dir_moved")
    assert r.canary.moved_dir == ("memory", "notes")
    ws = shlex.quote(str(home.workspace))
    move, index = d.next_action.steps[:2]
    assert d.next_action.command == move.command == f"[ ! -e {ws}/memory ] && [ ! -L {ws}/memory ] && mv {ws}/notes {ws}/memory"
    assert index.command and "memory index --agent kb-7" in index.command
    for step in (move, index):  # the walkthrough pasted into a shell, step by step
        subprocess.run(step.command, shell=True, check=True, env=env, cwd=home.root, capture_output=True, timeout=120)
    found = run_openclaw(home, OC_LATEST, "memory", "search", "--agent", agent, "quokka", "--json", testbed=testbed)
    assert found.rc == 0 and "memory/deploy.md" in found.stdout


@pytest.mark.real
def test_a_second_agents_missing_workspace_is_not_pointed_at_the_default_agents_notes(oc_home_factory, testbed):
    """2026.9.6 gives a second agent ``<agents.defaults.workspace>/<id>``; the default agent keeps the defaults'
    workspace. ``ops-bot``'s workspace (not created yet) said "notes are at <main's workspace>: set the agent's
    workspace there" — sharing main's memory with ops-bot. Main's own workspace is not offered; a lone agent's still
    is (breaker round 9, p13)."""
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents={"list": [
        {"id": "main", "default": True}, {"id": "ops-bot"}]}), name="two")
    home.write_memory_md("# Memory\n\nmain's own notes.\n")
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST))})
    clear_caches()
    r = fast(discover(env=env), "ops-bot", None)
    assert r.coverage.workspace == "missing" and r.coverage.notes_nearby is None
    said = " ".join(f.message for f in r.findings)
    assert "workspace/ops-bot does not exist" in said and "notes are at" not in said
    assert fast(discover(env=env), "main", None).coverage.workspace == "dir"


def test_rotate_refuses_while_the_canarys_directory_is_moved(tmp_path):
    """The old advice pasted anyway (``canary rotate``) would recreate an empty ``memory/`` beside the moved notes:
    it refuses, naming the move back; nothing is written."""
    ws = tmp_path / "ws"
    ws.mkdir()
    data = tmp_path / "data"
    canary_write.plant(ws, "ops-bot", root=data)
    (ws / "memory").rename(ws / "notes")
    with pytest.raises(cn.CanaryError, match=r"\[ ! -e \S*/ws/memory \] && \[ ! -L \S*/ws/memory \] && mv \S*/ws/notes "):
        canary_write.rotate(ws, "ops-bot", root=data)
    assert not (ws / "memory").exists()


def test_a_plant_into_the_moved_notes_new_place_is_not_refused(tmp_path):
    """Review: the refusal guards only the gone directory (a plant there recreates it empty beside the moved notes).
    An operator who meant the move (``memorySearch.extraPaths: ["notes"]``, as the repair's own text suggests) plants
    the canary where the notes now are, ``canary plant --root notes``: that recreates nothing, and was refused with
    "move it back" — no way forward short of ``canary remove``. ``rotate`` (into the gone dir) still refuses."""
    ws = tmp_path / "ws"
    ws.mkdir()
    data = tmp_path / "data"
    canary_write.plant(ws, "ops-bot", root=data)
    (ws / "memory").rename(ws / "notes")
    rec = canary_write.plant(ws, "ops-bot", root=data, managed_root="notes")
    assert rec.rel_path == "notes/clawprobe-canary.md" and cn.file_state(rec) == "present"
    assert not (ws / "memory").exists() and cn.moved_dir(rec) is None


def test_the_search_for_a_moved_dir_stops_at_its_bound(tmp_path, monkeypatch):
    """Review: ``max_dirs`` only stopped *descending*: every directory already listed one level up was still opened
    and read (a workspace with thousands of sibling dirs was read whole). It is the number of dirs looked into."""
    ws = tmp_path / "ws"
    ws.mkdir()
    rec = canary_write.plant(ws, "main", root=tmp_path / "data")
    for i in range(30):
        (ws / f"d{i:02}").mkdir()
    (ws / "memory").rename(ws / "zz-notes")  # listed at the top, looked into 31st
    assert cn.moved_dir(rec) == ("memory", "zz-notes")
    assert cn.moved_dir(rec, max_dirs=10) is None


def _moved_back(ws, new):
    """The repair's command for ``ws``'s canary dir moved to ``new`` (the one the diagnosis offers)."""
    r = _healthy()
    r.config.workspace = str(ws)
    r.canary.outcome = "miss"
    r.canary = ghost(r.canary, "missing", None, ("memory", new))
    d = diagnose(r)
    assert d.reason == "notes_dir_moved" and d.next_action.command
    return d.next_action.command


@pytest.mark.parametrize("ws_name,new", [("ops bot", "notes"), ("it's $HOME `x`", "Notizen é"), ("kb-7", "-n")])
def test_the_move_back_pasted_into_posix_sh(tmp_path, ws_name, new):
    """The move back is pasted into ``sh`` (dash: no GNU options, as on macOS where ``mv -T`` is "illegal option" and
    nothing moved): paths with blanks, quotes, ``$`` and backticks come back whole; while ``memory`` exists (an
    empty dir made since, a file, a dangling link) nothing moves — neither over it nor into it — and it exits non-zero."""
    ws = tmp_path / ws_name
    (ws / new).mkdir(parents=True)
    (ws / new / "deploy.md").write_text("quokka\n")
    command = _moved_back(ws, new)
    assert " -T " not in command and " -n " not in command.replace(f"/{new}", "")
    dst = ws / "memory"
    for taken in ("dir", "file", "dangling"):
        if taken == "dir":
            dst.mkdir()
        elif taken == "file":
            dst.write_text("x")
        else:
            dst.symlink_to(ws / "nowhere")
        done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, timeout=30)
        assert done.returncode != 0, taken
        assert (ws / new / "deploy.md").read_text() == "quokka\n" and not (ws / new / new).exists()
        assert not (dst.is_dir() and not dst.is_symlink() and any(dst.iterdir())), taken  # nothing moved into it
        dst.rmdir() if taken == "dir" else dst.unlink()
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert (ws / "memory" / "deploy.md").read_text() == "quokka\n" and not (ws / new).exists()
