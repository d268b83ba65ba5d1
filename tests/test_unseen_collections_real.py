"""Notes dirs added to the config (``memorySearch.extraPaths`` on the agent's entry, ``memorySearch.qmd.extraCollections``
in the defaults) that the agent's QMD index has no collection for yet (OpenClaw 2026.7.35; breaker round 9, p11).
Nothing under them is searchable until OpenClaw's next update — but the collection scan matched, so clawprobe said
``healthy``, and its own canary ``memory search`` then added the collections and indexed the notes (a write of
the index, md5 changed). Now the roots are compared with the index's collections: their notes are unreflected
changes dated no earlier than the config's last change, the canary search is withheld, the index stays
byte-identical, and ``openclaw memory index`` (run here) makes the check fresh. Real: two index runs, one full
check (status only: the search is withheld), one ``check --no-openclaw``.

Also (breaker round 22, QMD): a managed collection renamed in the agent's own store (``qmd collection rename
memory-dir-main notes``) while the config is unchanged. OpenClaw searches ``memory-dir-<id>``, qmd answers
"Collection not found", and OpenClaw refuses to re-add it because qmd keeps one collection per path and pattern
("refusing automatic rebind") — so ``openclaw memory index`` changes nothing. clawprobe said ``wrong_store`` ("the
collections were built in the default qmd store") and handed out that index run; now the holder is named and its
removal is the repair (run here: the remove, then the managed index, then the check is healthy)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time

import pytest

from clawprobe.core import canary_write
from clawprobe.core.probes.qmd_index import managed_collection_names, squatting_collections
from clawprobe.core.probes.qmd_yml import QmdCollection
from clawprobe.core.probes.unseen_collections import unseen_roots
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw, run_qmd


def test_configured_roots_without_a_collection_are_stale_and_the_search_is_withheld(oc_home_factory, testbed,
                                                                                      tmp_path):
    home = oc_home_factory(qmd_config(), name="unseen")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, "main", root=data)
    index = ("memory", "index", "--agent", "main")
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    kb, runbooks = home.root / "kb", home.root / "runbooks"
    for d, text in ((kb, "kbcharlie: the pump password rotates monthly"), (runbooks, "rbdelta: reboot the router")):
        d.mkdir()
        (d / "note.md").write_text(f"# Note\n\n{text}\n")
    cfg = qmd_config(agents={"defaults": {"memorySearch": {"qmd": {"extraCollections": [{"path": str(kb), "name": "kb"}]}}},
                             "list": [{"id": "main", "default": True, "memorySearch": {"extraPaths": [str(runbooks)]}}]})
    home.write_config(cfg)
    ago = time.time() - 600
    for p in (home.config_path, kb / "note.md", runbooks / "note.md"):
        os.utime(p, (ago, ago))
    db = home.qmd_index()
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    rc, out, err = run_clawprobe(["check", "--json"], check_env(home, testbed, data), timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"], got["reason"]) == (1, "stale_index", "dirty"), (got["diagnosis"]["evidence"], err[-300:])
    assert sorted(got["receipt"]["freshness"]["unindexed_files"]) == [str(kb / "note.md"), str(runbooks / "note.md")]
    assert got["next_command"].endswith("memory index --agent main")
    assert any("collections not in the index" in e for e in got["receipt"]["probe_errors"])
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before, "clawprobe's check wrote the QMD index"

    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data), timeout=200)
    assert json.loads(out)["receipts"][0]["receipt"]["freshness"]["stale_reason"] is None


def test_a_root_is_unseen_only_when_no_collection_covers_it(tmp_path):
    ws, kb, sub = tmp_path / "ws", tmp_path / "kb", tmp_path / "kb" / "sub"
    for d in (ws, sub):
        d.mkdir(parents=True)
    cols = [QmdCollection(name="memory-dir-main", path=str(ws / "memory"), pattern="**/*.md")]
    assert unseen_roots([str(kb), "missing-dir", f" {kb} ".strip()], cols, str(ws), None) == [str(kb)]
    covered = [*cols, QmdCollection(name="kb", path=str(kb), pattern="**/*.md")]
    assert unseen_roots([str(kb), str(sub)], covered, str(ws), None) == []


@pytest.mark.parametrize(("agent", "which", "new_name"), [("main", 1, "notes"), ("ops-bot", 0, "long-term")])
def test_a_managed_collection_renamed_in_the_store_names_the_holder_and_removing_it_repairs(
        oc_home_factory, testbed, tmp_path, agent, which, new_name):
    cfg = qmd_config(agents={"list": [{"id": agent, "default": True}]})
    home = oc_home_factory(cfg, name="renamed", agent_id=agent)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, agent, root=data)
    index = ("memory", "index", "--agent", agent)
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    managed = managed_collection_names(agent)[which]
    renamed = run_qmd(home, agent, "collection", "rename", managed, new_name, testbed=testbed)
    assert renamed.rc == 0, renamed.stderr
    env = check_env(home, testbed, data)

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"], got["reason"]) == (2, "retrieval_failed", "collection_renamed"), \
        (got["diagnosis"]["evidence"], err[-300:])
    assert got["receipt"]["qmd"]["stray_collections"] == [new_name]
    assert any(f"'{new_name}'" in e and managed in e for e in got["diagnosis"]["evidence"])
    cmd = got["next_command"]
    assert cmd.endswith(f"collection remove {new_name}") and f"agents/{agent}/qmd/xdg-config" in cmd
    assert "default qmd store" not in json.dumps(got["diagnosis"])
    if which == 0:
        return  # one agent runs the repair (each run costs OpenClaw CLI calls)
    done = subprocess.run(["bash", "-c", cmd], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]


def test_only_a_collection_with_the_managed_path_and_pattern_is_in_the_way(tmp_path):
    ws = tmp_path / "my notes ü" / "ws"
    (ws / "memory").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(ws)
    cols = [QmdCollection(name="memory-root-ops-bot", path=str(ws), pattern="MEMORY.md"),
            QmdCollection(name="daily", path=str(link / "memory"), pattern="**/*.md"),
            QmdCollection(name="txt", path=str(ws / "memory"), pattern="*.txt")]
    assert squatting_collections(cols, "ops-bot", str(ws)) == {"memory-dir-ops-bot": "daily"}
    assert squatting_collections(cols[::2], "ops-bot", str(ws)) == {}  # a pattern of its own is no obstacle
    # OpenClaw's id rewrite ("Ops.Bot" is ops-bot) decides the managed names; the root one is present
    assert squatting_collections(cols, "Ops.Bot", str(ws)) == {"memory-dir-ops-bot": "daily"}
    assert squatting_collections(cols[1:], "main", str(ws)) == {"memory-dir-main": "daily"}
