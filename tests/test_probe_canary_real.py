"""The canary path end to end on the real stack, through clawprobe's own canary record (clawprobe.core.canary):
plant → index through OpenClaw → fast probe sees it indexed but not retrieved → slow probe retrieves it
through OpenClaw → healthy; the file deleted while still indexed → retrieval_failed · canary_gone; rotate → the new
token is waiting for an update, not failed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from clawprobe.core import canary_write
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, discover, fast, slow
from tests.testbed import OC_QMD, qmd_config, run_openclaw


@pytest.fixture(scope="module")
def planted(oc_home_factory, testbed, tmp_path_factory):
    home = oc_home_factory(qmd_config("qmd", "search"), name="canary")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path_factory.mktemp("clawprobe-data")
    rec = canary_write.plant(home.workspace, "main", root=data)
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)),
                                       "CLAWPROBE_DATA_DIR": str(data)})
    return home, rec, data, env


def test_indexed_canary_without_retrieval_is_not_retrieved_yet(planted):
    home, rec, _, env = planted
    clear_caches()
    r = fast(discover(env=env), "main", None)
    assert r.canary.token_sha256 == rec.token_sha256 and r.canary.expected_path == "memory/clawprobe-canary.md"
    assert r.canary.planted_at == rec.planted_at and r.canary.indexed_at is not None
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("unverified", "not_retrieved")


def test_retrieval_through_openclaw_makes_it_healthy_then_rotation_waits(planted):
    home, rec, data, env = planted
    ctx = discover(env=env)
    s = slow(ctx, "main")
    r = fast(ctx, "main", s)
    assert (r.canary.outcome, r.canary.returned_path, r.canary.result_shape) == (
        "found", "memory/clawprobe-canary.md", "qmd")
    assert r.canary.direct_qmd_found is True
    assert diagnose(r).verdict.value == "healthy"
    # The canary's token line edited on disk (breaker round 4: healthy): the index serves the planted token, the
    # file no longer holds it — the found result is stale content, never a retrieval. An edit that keeps the
    # token (a line appended) is only a changed note.
    path = home.workspace / rec.rel_path
    planted_text = path.read_text()
    path.write_text(planted_text + "an operator's line\n")
    assert fast(ctx, "main", s).canary.outcome == "found"
    path.write_text(planted_text.replace(rec.token, "CLAWPROBE-CANARY-EDITEDBYHAND0000"))  # no token shape left:
    edited = fast(ctx, "main", s)                                    # `canary rotate` would refuse the file
    assert (edited.canary.outcome, edited.canary.reason) == ("miss", "canary_edited")
    assert "no longer holds the planted token" in (edited.canary.detail or "")
    assert diagnose(edited).next_action.command.startswith("mv -n ")  # moved aside first, then rotated
    # The canary file is deleted while the index still holds it: the same retrieval now proves only that the
    # index serves a deleted note — never healthy — and the repair (rotate) works on the missing file.
    path.unlink()
    gone = fast(ctx, "main", s)
    assert (gone.canary.outcome, gone.canary.reason, gone.canary.retrieved_at) == ("miss", "canary_gone", None)
    d = diagnose(gone)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "canary_gone")
    assert d.next_action.command == "clawprobe canary rotate --agent main"
    # Rotate: the new token is on disk, not in the index. The old search evidence no longer applies to it.
    canary_write.rotate(home.workspace, "main", root=data)
    r2 = fast(ctx, "main", None)
    assert r2.canary.indexed_at is None and r2.canary.outcome is None
    assert r2.freshness.unindexed_files == ["memory/clawprobe-canary.md"]
    d = diagnose(r2)
    assert (d.verdict.value, d.reason) == ("unverified", "not_retrieved")
    # Once a whole lease has passed without an update, the unindexed canary makes the index stale.
    later = r2.checked_at + timedelta(seconds=r2.lease.seconds + 1)
    assert diagnose(fast(ctx, "main", None, later), later).verdict.value == "stale_index"
