"""A configured extra notes root that exists but holds none of the notes the index lists there — a volume not mounted
at its mount point — on the real OpenClaw 2026.9.6 (breaker round 26). clawprobe's own canary ``memory search``
synced first and dropped that root's rows from the index (clawprobe changed OpenClaw's state), and the check said
``healthy`` (exit 0) twice while ``openclaw memory search`` found nothing of those notes. Now the canary search is
withheld and the verdict is ``memory_unavailable · root_emptied``, the index rows are counted untouched (read-only), and the repair — bring
the notes back — makes the check healthy; so does its other branch for notes removed on purpose. The measured
fact is the index vs the disk under that root, never a message.
A root gone altogether is the same loss. Real: two index runs, four checks."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from clawprobe.core import canary_write
from clawprobe.core.shell import word
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, qmd_config, run_openclaw

AGENT = "kb-7"


def _rows(db) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute("select count(*) from memory_index_sources").fetchone()[0]


@pytest.mark.real
def test_an_emptied_extra_root_is_not_healthy_and_its_rows_survive_the_check(oc_home_factory, testbed, tmp_path):
    root = tmp_path / "kb vol"  # a mount point, with a space
    root.mkdir()
    for name, word_ in (("zeppelin.md", "ZEPPELIN-HANGAR-4"), ("ops/pager.md", "PAGER-OTTER-9")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# Note\n\nThe code is {word_}.\n")
    cfg = builtin_config("none", version=OC_LATEST, memory={"search": {"extraPaths": [str(root)]}},
                         agents={"list": [{"id": AGENT, "default": True}]})
    home = oc_home_factory(cfg, name="emptied", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, AGENT, root=data)
    made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", AGENT, timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    db = home.builtin_db(AGENT)
    away = tmp_path / "elsewhere"
    shutil.move(str(root), str(away))  # the volume unmounted: its mount point stays, empty
    root.mkdir()
    before = _rows(db)
    assert before == 4  # MEMORY.md, the canary, the two notes under the root
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST))

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert _rows(db) == before, "clawprobe's check dropped the emptied root's rows from the index"
    assert rc != 0 and got["verdict"] != "healthy", got["diagnosis"]["evidence"]
    assert (rc, got["verdict"], got["reason"]) == (2, "memory_unavailable", "root_emptied"), (
        got["diagnosis"]["evidence"], err[-300:])
    assert any(e.startswith("openclaw memory search not run (configured path emptied)")
               for e in got["receipt"]["probe_errors"])
    assert got["receipt"]["coverage"]["emptied_roots"] == {str(root): 2}
    assert got["next_command"] == f"ls -la {word(str(root))}"
    assert "memory index" not in got["next_command"]

    root.rmdir()  # the mount point gone too: the same loss, the same answer (the search dropped the rows as well)
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert _rows(db) == before, "clawprobe's check dropped the gone root's rows from the index"
    assert (rc, got["verdict"], got["reason"]) == (2, "memory_unavailable", "root_emptied"), got["diagnosis"]["evidence"]

    shutil.move(str(away), str(root))  # the repair: the volume mounted again
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]
    assert _rows(db) == before

    # emptied on purpose: the repair's other branch (drop the path from extraPaths, then the managed index) is not
    # stuck on root_emptied
    shutil.rmtree(root)
    root.mkdir()
    home.update_config({"memory": {"search": {"extraPaths": []}}})
    made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", AGENT, timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]
    assert _rows(db) == before - 2


@pytest.mark.real
def test_an_emptied_qmd_path_is_not_healthy(oc_home_factory, testbed, tmp_path):
    """2026.7.35 with qmd 2.8.3, agent ``ops-bot``, ``memory.qmd.paths`` root ``ops vol`` emptied: its ``memory
    search`` does not sync (measured: rows kept, the gone note still served), but its update drops them; clawprobe
    said ``healthy`` (exit 0, "2 deleted, still indexed · awaiting update"). Now ``memory_unavailable ·
    root_emptied``, the index untouched; the volume back, healthy."""
    root = tmp_path / "ops vol"
    root.mkdir()
    for name in ("zeppelin.md", "pager.md"):
        (root / name).write_text(f"# Note\n\nThe code for {name} is HANGAR-OTTER-4.\n")
    agent = "ops-bot"
    home = oc_home_factory(qmd_config(qmd={"paths": [{"path": str(root), "name": "opsvol"}]},
                                      agents={"list": [{"id": agent, "default": True}]}), name="qemptied", agent_id=agent)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, agent, root=data)
    made = run_openclaw(home, OC_QMD, "memory", "index", "--agent", agent, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed)
    assert made.rc == 0, made.stderr
    db = home.qmd_index(agent)

    def docs() -> int:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return con.execute("select count(*) from documents where active = 1").fetchone()[0]

    away = tmp_path / "away"
    shutil.move(str(root), str(away))
    root.mkdir()
    before = docs()
    assert before == 4
    env = check_env(home, testbed, data)
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert docs() == before
    assert (rc, got["verdict"], got["reason"]) == (2, "memory_unavailable", "root_emptied"), (
        got["diagnosis"]["evidence"], err[-300:])
    assert got["receipt"]["coverage"]["emptied_roots"] == {str(root): 2}
    assert got["next_command"] == f"ls -la {word(str(root))}"

    root.rmdir()
    shutil.move(str(away), str(root))
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]


def test_emptied_roots_reads_the_index_against_the_disk(tmp_path):
    """Only a root that holds none of the notes the index lists under it counts — empty, gone altogether, or a
    file root gone: one note left, a root the index lists nothing under, and a sibling whose name shares the prefix
    are not emptied; relative, absolute and ``~`` entries resolve as OpenClaw resolves them."""
    from clawprobe.core.probes.workspace import emptied_roots

    ws, home = tmp_path / "ws", tmp_path / "h"
    for d in ("ws", "h/notes", "mnt/a b", "mnt/a bc", "part", "fresh"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "part" / "kept.md").write_text("x")
    (tmp_path / "mnt" / "a bc" / "n.md").write_text("x")
    indexed = ["MEMORY.md", "../mnt/a b/n.md", "../mnt/a b/sub/m.md", "../part/kept.md", "../part/gone.md",
               str(home / "notes" / "q.md"), "../gone/x.md", "../mnt/a bc/n.md"]
    got = emptied_roots([str(tmp_path / "mnt" / "a b"), "../part", "~/notes", "../gone", "../fresh", "../never",
                         str(tmp_path / "mnt" / "a bc"), "../mnt/a b", "../one.md"], str(ws), str(home),
                        [*indexed, "../one.md"])
    assert got == {str(tmp_path / "mnt" / "a b"): 2, str(home / "notes"): 1, str(tmp_path / "gone"): 1,
                   str(tmp_path / "one.md"): 1}
    assert emptied_roots([], str(ws), str(home), indexed) == {}
