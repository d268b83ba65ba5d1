"""An index built by qmd 1.1.6, then qmd upgraded to 2.8.3 with no index run since (breaker round 8, n05). qmd 2.x
migrates a 1.x index on its first open — clawprobe's canary search did it (the file grew, ``index.yml`` was
rewritten) — and then serves 1.x's lower-cased paths (``memory.md`` for ``MEMORY.md``). The index here is the
real file qmd 1.1.6 wrote through OpenClaw 2026.7.35 (``tests/data/recorded/qmd-1.1.6-index.sqlite``: two notes,
1.x schema, no ``store_collections``). Now no search runs on it (``unverified · index_old_schema``), it stays
byte-identical, and the managed index run the repair names (run here, real 2026.7.35 + qmd 2.8.3) migrates and
re-indexes it: the check is healthy. Real: one index run, two checks."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from clawprobe.core import canary_write
from clawprobe.core.probes.qmd_index import qmd1_schema
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

QMD1_INDEX = Path(__file__).parent / "data" / "recorded" / "qmd-1.1.6-index.sqlite"


def test_a_qmd1_index_under_qmd2_is_not_searched_and_the_index_run_migrates_it(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(qmd_config(), name="qmd1")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, "main", root=data)
    db = home.qmd_index()
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(QMD1_INDEX, db)
    yml = home.qmd_xdg_config() / "qmd" / "index.yml"  # what 1.1.6 wrote through OpenClaw's `collection add`
    yml.parent.mkdir(parents=True, exist_ok=True)
    yml.write_text(f"collections:\n  memory-root-main:\n    path: {home.workspace}\n    pattern: MEMORY.md\n"
                   f"  memory-dir-main:\n    path: {home.workspace / 'memory'}\n    pattern: \"**/*.md\"\n")
    before = hashlib.sha256(db.read_bytes()).hexdigest(), yml.read_bytes()
    assert qmd1_schema(str(db))

    rc, out, err = run_clawprobe(["check", "--json"], check_env(home, testbed, data), timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"], got["reason"]) == (3, "unverified", "index_old_schema"), (got["diagnosis"]["evidence"],
                                                                                           err[-300:])
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), yml.read_bytes()) == before, "the check wrote the index"
    assert got["next_command"].endswith("memory index --agent main")

    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", "main", path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed).rc == 0
    assert not qmd1_schema(str(db))
    rc, out, _ = run_clawprobe(["check", "--json"], check_env(home, testbed, data), timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]
