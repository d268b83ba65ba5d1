"""The notes gone from under the index: the agent's workspace deleted (a failed restore, a moved directory) or
empty (a volume not mounted at its mount point) while the index still holds what was there (breaker round 5).
clawprobe's own ``openclaw memory search`` synced first and emptied a 2026.9.6 index (2 files → 0) and then
said ``canary_gone`` → "rotate the canary", which writes into the empty path. Now no search runs, the index is
left as found, and the verdict is ``memory_unavailable`` · ``workspace_missing`` — bring the notes back. One
real index run per engine (2026.9.6 builtin, 2026.7.35 QMD), then ``probe.collect`` as ``clawprobe check``
runs it."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.view import agent_facts
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, qmd_config


def _rows(db) -> int:
    with sqlite3.connect(f"file:{db}?immutable=1", uri=True) as con:
        table = "memory_index_sources" if db.name.startswith("openclaw-agent") else "documents"
        return con.execute(f"select count(*) from {table}").fetchone()[0]


@pytest.mark.parametrize("version, how", [(OC_LATEST, "missing"), (OC_QMD, "empty")])
def test_a_gone_workspace_is_said_and_its_index_left_as_found(oc_home_factory, testbed, version, how):
    cfg = builtin_config("none", version=version) if version == OC_LATEST else qmd_config()
    home = oc_home_factory(cfg, name=f"gone-{how}")
    path_dirs = [testbed.bin_dir] if version == OC_QMD else []
    spec = indexed(home, testbed, version, path_dirs)
    db = home.builtin_db() if version == OC_LATEST else home.qmd_index()
    before = _rows(db)
    assert before == 2  # MEMORY.md and the canary
    if how == "missing":
        shutil.rmtree(home.workspace)
    else:  # the mount point stays, its volume is not mounted
        for p in home.workspace.iterdir():
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    ctx = context(home, testbed, version, path_dirs=path_dirs)
    r = probe.collect(ctx, "main", canary=spec)  # the planted canary: a search would run
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "workspace_missing"), (d.evidence, r.probe_errors)
    assert r.coverage.workspace == how and r.freshness.ghost_count == 2
    assert str(home.workspace) in d.evidence[0] and d.next_action.command == f"ls -la {home.workspace}"
    assert "memory index" not in (d.next_action.command or "") and "canary" not in (d.next_action.command or "")
    assert agent_facts(r, d, r.checked_at).coverage.state == "fail"
    assert any(e.startswith(probe.SEARCH_NOT_RUN_WORKSPACE) for e in r.probe_errors)
    assert _rows(db) == before  # the index as found: nothing synced it against the empty path
    assert home.workspace.exists() == (how == "empty")  # and nothing created the missing workspace
