"""Notes dirs added to the config (``memorySearch.extraPaths`` on the agent's entry, ``memorySearch.qmd.extraCollections``
in the defaults) that the agent's QMD index has no collection for yet (OpenClaw 2026.7.35; breaker round 9, p11).
Nothing under them is searchable until OpenClaw's next update — but the collection scan matched, so clawprobe said
``healthy``, and its own canary ``memory search`` then added the collections and indexed the notes (a write of
the index, md5 changed). Now the roots are compared with the index's collections: their notes are unreflected
changes dated no earlier than the config's last change, the canary search is withheld, the index stays
byte-identical, and ``openclaw memory index`` (run here) makes the check fresh. Real: two index runs, one full
check (status only: the search is withheld), one ``check --no-openclaw``."""

from __future__ import annotations

import hashlib
import json
import os
import time

from clawprobe.core import canary_write
from clawprobe.core.probes.qmd_yml import QmdCollection
from clawprobe.core.probes.unseen_collections import unseen_roots
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw


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
