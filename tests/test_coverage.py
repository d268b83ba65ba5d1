"""Per-root coverage (issue 13 "coverage, measured"): real files scanned by the engines' own rules
(:mod:`clawprobe.core.probes.workspace`), turned into per-root facts (:mod:`clawprobe.core.probes.coverage`), and
judged (``retrieval_failed · unsearchable_notes``, ``stale_index · source_behind``) — with varied roots, names,
agent ids and engines. No program runs here: the scans read real directories, the receipts are the healthy
recorded ones with the measured coverage put in."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import coverage as cov
from clawprobe.core.probes import workspace as ws
from clawprobe.core.probes.qmd_index import IndexedDoc
from clawprobe.core.probes.qmd_yml import QmdCollection
from clawprobe.core.receipt import Coverage, SourceCoverage
from clawprobe.core.replay import load_receipts
from clawprobe.core.report import to_text
from clawprobe.core.verdicts import Verdict
from clawprobe.core.view import coverage_fact
from tests.rw_support import action_texts, bundle
from tests.test_spec_replay import DATA

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _write(root, rel: str, text: str = "# Note\n\nsomething to remember\n"):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _by_source(sources: list[SourceCoverage]) -> dict[str, SourceCoverage]:
    return {c.source: c for c in sources}


# ---- the scan → per-root facts ----------------------------------------------------------------------------

def test_builtin_roots_lowercase_memory_md_symlinked_extra_root_and_symlinked_note(tmp_path):
    wsp, outside = tmp_path / "workspace", tmp_path / "vault"
    _write(wsp, "memory.md")  # lowercase: not a root memory file on 2026.7.35 / 2026.9.6
    _write(wsp, "memory/2026-11-30.md")
    _write(wsp, "memory/.drafts/plan.md")  # builtin indexes hidden dirs under memory/
    _write(outside, "trip.md")
    _write(outside, "deep/budget.md")
    _write(outside, "photo.txt", "not a note")
    os.symlink(outside / "trip.md", wsp / "memory" / "linked-trip.md")
    os.symlink(outside, tmp_path / "vault-link")
    scan = ws.scan_builtin(str(wsp), [str(tmp_path / "vault-link")])
    got = _by_source(cov.from_scan(scan, None))
    assert list(got) == ["MEMORY.md", "memory/", str(tmp_path / "vault-link")]
    assert got["MEMORY.md"].skipped == {"case_mismatch": 1} and got["MEMORY.md"].skipped_notes == [
        "memory.md (case_mismatch)"]
    assert got["memory/"].expected == 2 and got["memory/"].skipped == {"symlink": 1}
    assert got[str(tmp_path / "vault-link")].skipped == {"symlink": 2}  # the notes behind the symlinked root
    assert all(c.indexed is None for c in got.values())  # no index compared: not measured, never "0 indexed"


def test_qmd_collections_hidden_notes_count_dependency_dirs_and_config_dirs_do_not(tmp_path):
    wsp = tmp_path / "ws-scout"
    _write(wsp, "MEMORY.md")
    _write(wsp, "notes/a.md")
    _write(wsp, "notes/.archive/old-plan.md")
    _write(wsp, "notes/.archive/2025/older.md")
    _write(wsp, "notes/.obsidian/app.json", "{}")  # a hidden dir with no notes in it
    _write(wsp, "notes/node_modules/pkg/README.md")  # a dependency's readme: not the operator's note
    _write(wsp, "notes/readme.txt", "outside every pattern")
    cols = [QmdCollection(name="memory-root-scout", path=str(wsp), pattern="MEMORY.md"),
            QmdCollection(name="notes-scout", path=str(wsp / "notes"), pattern="**/*.md")]
    scan = ws.scan_qmd(cols, str(wsp))
    docs = [IndexedDoc("memory-root-scout", "MEMORY.md", ws.content_hash(str(wsp / "MEMORY.md"))[0] or "")]
    got = _by_source(cov.from_scan(scan, ws.compare_qmd(scan, docs, NOW)))
    root, notes = got["memory-root-scout"], got["notes-scout"]
    assert (root.expected, root.indexed, root.missing, root.skipped) == (1, 1, 0, {})
    assert (notes.expected, notes.indexed, notes.missing, notes.missing_examples) == (1, 0, 1, ["notes/a.md"])
    assert notes.skipped == {"hidden_path": 2}  # both notes under .archive/, none under .obsidian/ or node_modules/
    assert notes.skipped_notes == ["notes/.archive (hidden_path)"]


def test_a_symlink_inside_a_dependency_dir_hides_no_notes(tmp_path):
    """A venv under an extra path (RW31's kind): its ``lib64 -> lib`` symlink is skipped, but what lies behind it
    is a package's files, not the operator's notes."""
    wsp, proj = tmp_path / "w", tmp_path / "proj"
    _write(wsp, "MEMORY.md")
    _write(proj, "plan.md")
    _write(proj, ".venv/lib/python3.12/site-packages/pkg/README.md")
    os.symlink(proj / ".venv" / "lib", proj / ".venv" / "lib64")
    _write(tmp_path / "elsewhere", "idea.md")
    os.symlink(tmp_path / "elsewhere" / "idea.md", proj / "idea-link.md")  # a note no root reaches: it counts
    os.symlink(proj / "plan.md", proj / "plan-link.md")  # the same text as plan.md, indexed there: hides nothing
    got = _by_source(cov.from_scan(ws.scan_builtin(str(wsp), [str(proj)]), None))
    assert got[str(proj)].skipped == {"symlink": 1}
    assert got[str(proj)].skipped_notes == ["../proj/idea-link.md (symlink)"]


def test_symlink_loops_and_dangling_links_hide_no_notes(tmp_path):
    """``memory/loop -> .``, ``memory/deep/up -> ../..``, ``memory/ws -> <workspace>`` and a dangling
    ``memory/gone.md``: OpenClaw skips them and indexes every real note, so none is an unsearchable note (breaker
    round 5: "6 notes skipped (symlink)" made a healthy install ``retrieval_failed``)."""
    wsp = tmp_path / "w"
    _write(wsp, "MEMORY.md")
    _write(wsp, "memory/real.md")
    _write(wsp, "memory/deep/inner.md")
    os.symlink(".", wsp / "memory" / "loop")
    os.symlink("../..", wsp / "memory" / "deep" / "up")
    os.symlink(wsp, wsp / "memory" / "ws")
    os.symlink(tmp_path / "nowhere.md", wsp / "memory" / "gone.md")
    scan = ws.scan_builtin(str(wsp))
    got = _by_source(cov.from_scan(scan, None))
    assert got["memory/"].expected == 2 and got["memory/"].skipped == {}
    assert scan.skipped_counts.get("symlink") == 4  # each is still a skip the scan saw


def test_clawprobes_own_hidden_canary_is_not_an_operator_note(tmp_path):
    from clawprobe.core.canary import canary_text

    wsp = tmp_path / "w"
    _write(wsp, "memory/.drafts/clawprobe-canary.md", canary_text("CLAWPROBE-CANARY-7QF3K2MXA9DZL4WB"))
    _write(wsp, "memory/.probe/renamed.md", canary_text("CLAWPROBE-CANARY-AAAAAAAAAAAAAAAA"))  # found by content
    _write(wsp, "memory/.drafts/mine.md")
    got = _by_source(cov.from_scan(ws.scan_qmd(ws.default_qmd_collections("main", str(wsp)), str(wsp)), None))
    assert got["memory-dir-main"].skipped == {"hidden_path": 1}  # only the operator's mine.md
    from clawprobe.core.canary import HEADER

    assert ws.CANARY_HEADER == HEADER.encode()


def test_qmd_lowercase_root_file_is_a_case_mismatch_of_the_root_collection(tmp_path):
    wsp = tmp_path / "w"
    _write(wsp, "memory.md")
    cols = ws.default_qmd_collections("desk", str(wsp))
    got = _by_source(cov.from_scan(ws.scan_qmd(cols, str(wsp)), None))
    assert got["memory-root-desk"].skipped == {"case_mismatch": 1}
    assert got["memory-dir-desk"].expected == 0 and not got["memory-dir-desk"].skipped


@pytest.mark.parametrize("source,indexed,on_disk,missing", [("sessions", 1762, 1763, 1), ("sessions", 0, 4, 4),
                                                            ("transcripts", 9, 9, 0), ("sessions", 12, 10, 0)])
def test_status_sources_read_the_gap(source, indexed, on_disk, missing):
    (c,) = cov.status_sources({source: indexed}, {source: on_disk, "memory": 99})
    assert (c.source, c.measured_by, c.expected, c.missing) == (source, "status", on_disk, missing)


def test_status_sources_leave_disk_scanned_roots_alone():
    assert cov.status_sources({"memory": 1}, {"memory": 5}) == []
    assert cov.status_sources({}, {"memory-dir-main": 3}, measured=["memory-dir-main"]) == []


def test_side_effect_names_the_files_the_probe_synced(tmp_path):
    wsp = tmp_path / "w"
    note = _write(wsp, "memory/ferry.md")
    cols = ws.default_qmd_collections("main", str(wsp))
    before = ws.compare_qmd(ws.scan_qmd(cols, str(wsp)), [], NOW)
    docs = [IndexedDoc("memory-dir-main", "ferry.md", ws.content_hash(str(note))[0] or "")]
    after = ws.compare_qmd(ws.scan_qmd(cols, str(wsp)), docs, NOW)
    said = cov.side_effect(before, after)
    assert said is not None and "1 file(s) unindexed before" in said and "memory/ferry.md" in said
    assert cov.side_effect(after, after) is None and cov.side_effect(None, after) is None
    # the other way round: a note deleted from disk that the probe's sync dropped from the index is said as that
    note.unlink()
    ghost = ws.compare_qmd(ws.scan_qmd(cols, str(wsp)), docs, NOW)
    said = cov.side_effect(ghost, ws.compare_qmd(ws.scan_qmd(cols, str(wsp)), [], NOW))
    assert said is not None and "1 file(s) gone from disk were dropped from the index (memory/ferry.md)" in said
    assert "unindexed before" not in said


def test_memory_md_that_is_not_a_regular_file_is_a_skipped_note(tmp_path):
    """``MEMORY.md`` replaced by a directory (holding a note) or a FIFO: the builtin engine indexes regular files
    only, so the long-term notes drop out of search — a ``not_a_file`` skip the coverage counts (never read: a
    FIFO would block)."""
    wsp = tmp_path / "w"
    _write(wsp, "memory/a.md")
    (wsp / "MEMORY.md").mkdir()
    (wsp / "MEMORY.md" / "x.md").write_text("# x\n")
    scan = ws.scan_builtin(str(wsp))
    (root,) = [c for c in cov.from_scan(scan, None) if c.source == "MEMORY.md"]
    assert root.skipped == {"not_a_file": 1} and scan.skipped_counts == {"not_a_file": 1}
    (wsp / "MEMORY.md" / "x.md").unlink()
    (wsp / "MEMORY.md").rmdir()
    os.mkfifo(wsp / "MEMORY.md")
    scan = ws.scan_builtin(str(wsp))
    (root,) = [c for c in cov.from_scan(scan, None) if c.source == "MEMORY.md"]
    assert root.skipped == {"not_a_file": 1} and "not a regular file" in scan.skipped[0].detail


# ---- judged --------------------------------------------------------------------------------------------

def _healthy_qmd():
    (r,) = load_receipts(DATA / "spec-1-bm25-pending-healthy.json")
    return r


def _notes(source: str, reason: str, *paths: str) -> SourceCoverage:
    return SourceCoverage(source=source, measured_by="disk_scan", expected=3, indexed=3, skipped={reason: len(paths)},
                          skipped_notes=[f"{p} ({reason})" for p in paths])


@pytest.mark.parametrize("source,reason,paths", [
    ("memory-dir-main", "hidden_path", ("memory/.drafts/plan.md",)),
    ("memory-root-ops", "case_mismatch", ("memory.md",)),
    ("~/vault", "symlink", ("../vault/trip.md", "../vault/budget.md")),
])
def test_notes_a_rule_skips_are_not_healthy_and_are_named(source, reason, paths):
    r = _healthy_qmd()
    assert diagnose(r, r.checked_at).verdict == Verdict.HEALTHY
    r.coverage = Coverage(sources=[_notes(source, reason, *paths)], measured="before_probe")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "unsearchable_notes")
    assert d.evidence[0].startswith(f"{source}: {len(paths)} note(s) skipped by the engine's rules")
    assert all(p in d.evidence[0] for p in paths) and "never be found" in d.evidence[-1]
    says, todo, dont = action_texts(d)
    assert "searchable" in says and "move or rename" in todo
    assert "--force" not in todo and "rebuild" not in todo and "re-index or rebuild first" in dont


def test_an_empty_note_is_counted_but_never_fails_the_install():
    """Breaker round 10, s10: a 0-byte ``touch``ed daily note (qmd skips it) was ``retrieval_failed`` (exit 2, a page)
    while every note with content was found: an empty note holds nothing to find. Beside a hidden note it is still
    named among the skipped ones."""
    r = _healthy_qmd()
    r.coverage = Coverage(sources=[_notes("memory-dir-main", "empty_file", "memory/2026-12-03.md")], measured="before_probe")
    assert diagnose(r, r.checked_at).verdict == Verdict.HEALTHY
    both = _notes("memory-dir-main", "empty_file", "memory/2026-12-03.md")
    both.skipped["hidden_path"] = 1
    r.coverage = Coverage(sources=[both], measured="before_probe")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "unsearchable_notes")
    assert "1 empty file, 1 hidden path" in d.evidence[0]


def test_builtin_healthy_receipt_with_a_lowercase_root_file(tmp_path):
    """The recorded builtin RW53 receipt (healthy · status_misreport) with a real scan's coverage put in."""
    wsp = tmp_path / "workspace"
    _write(wsp, "MEMORY.md")
    _write(wsp, "Memory.md")  # a second root file differing in case only
    r = bundle("RW53")
    r.coverage = Coverage(sources=cov.from_scan(ws.scan_builtin(str(wsp)), None), measured="after_probe")
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "unsearchable_notes")
    assert "Memory.md (case_mismatch)" in d.evidence[0]


def test_a_missed_canary_keeps_its_own_reason():
    r = _healthy_qmd()
    r.canary.outcome = "miss"
    r.coverage = Coverage(sources=[_notes("memory-dir-main", "hidden_path", "memory/.x/a.md")])
    assert diagnose(r, r.checked_at).reason != "unsearchable_notes"


@pytest.mark.parametrize("agent,source,indexed,total", [("archer", "sessions", 1762, 1763), ("ops-2", "sessions", 0, 3)])
def test_a_source_behind_disk_is_stale_without_a_time(agent, source, indexed, total):
    r = _healthy_qmd()
    r.agent_id = agent
    r.coverage = Coverage(sources=[SourceCoverage(source=source, measured_by="status", expected=total, indexed=indexed,
                                                  missing=total - indexed)])
    d = diagnose(r, r.checked_at)
    assert (d.verdict, d.reason) == (Verdict.STALE_INDEX, "source_behind")
    assert d.evidence[0] == (f"{source}: {indexed} of {total} files on disk indexed ({total - indexed} behind; "
                             "memory status sourceCounts vs scan)")
    assert d.next_action.command == f"openclaw memory status --index --agent {agent}"


def test_a_source_in_step_with_disk_is_not_stale():
    r = _healthy_qmd()
    r.coverage = Coverage(sources=[SourceCoverage(source="sessions", measured_by="status", expected=8, indexed=8)])
    assert diagnose(r, r.checked_at).verdict == Verdict.HEALTHY


def test_the_age_rule_still_wins_over_the_gap():
    r = _healthy_qmd()
    r.freshness.last_proven_current = r.checked_at - timedelta(days=2)
    r.freshness.stale_reason = "dirty"
    r.coverage = Coverage(sources=[SourceCoverage(source="sessions", measured_by="status", expected=2, indexed=1,
                                                  missing=1)])
    assert diagnose(r, r.checked_at).reason == "dirty"


# ---- shown ---------------------------------------------------------------------------------------------

def test_coverage_fact_words_fit_a_pane_line():
    r = _healthy_qmd()
    assert coverage_fact(r).words == "not measured"
    r.coverage = Coverage(sources=[
        SourceCoverage(source="memory-root-main", measured_by="disk_scan", expected=1, indexed=1),
        SourceCoverage(source="memory-dir-main", measured_by="disk_scan", expected=14, indexed=13, missing=1,
                       skipped={"hidden_path": 2})], measured="before_probe", probe_side_effect="synced 1")
    f = coverage_fact(r)
    assert f.state == "fail"
    assert f.words == ("2 roots · 14/15 indexed · memory-dir-main 1 behind · 2 notes skipped (hidden path) · "
                       "probe synced (measured before)")
    text = to_text([(r, diagnose(r, r.checked_at))])
    assert f"  coverage: fail — {f.words}" in text.splitlines()


@pytest.mark.parametrize("roots", [["memory-root-main"], ["memory-root-ops-bot", "memory-dir-ops-bot", "notes-extra"]])
def test_no_note_on_disk_and_none_indexed_covers_nothing_it_is_not_ok(roots):
    """"0/0 indexed" used to read ``coverage: ok``: no note on disk and none in the index proves no coverage."""
    r = _healthy_qmd()
    r.coverage = Coverage(sources=[SourceCoverage(source=s, measured_by="disk_scan", expected=0, indexed=0)
                                   for s in roots], measured="before_probe")
    f = coverage_fact(r)
    assert f.state == "unknown" and f.words.endswith("0/0 indexed · no memory file: nothing to cover"), f
    r.coverage.sources[0] = SourceCoverage(source=roots[0], measured_by="disk_scan", expected=1, indexed=1)
    assert coverage_fact(r).state == "ok", "one covered note is coverage"
    r.coverage.sources[0] = SourceCoverage(source=roots[0], measured_by="disk_scan", expected=0, indexed=0,
                                           skipped={"hidden_path": 1})
    assert coverage_fact(r).state == "fail", "a skipped note is not vacuous"


def test_files_behind_inside_the_lease_are_awaiting_the_update_not_a_failure_beside_healthy():
    r = _healthy_qmd()  # proven current inside its lease (the verdict: healthy)
    r.coverage = Coverage(sources=[
        SourceCoverage(source="memory-dir-ops", measured_by="disk_scan", expected=3, indexed=2, missing=1)])
    assert diagnose(r, r.checked_at).verdict == Verdict.HEALTHY
    f = coverage_fact(r)
    assert (f.state, f.words) == ("warn", "1 root · 2/3 indexed · memory-dir-ops 1 behind · awaiting update")
    r.freshness.last_proven_current = r.checked_at - timedelta(seconds=r.lease.seconds + 1)  # the lease ran out
    assert diagnose(r, r.checked_at).verdict == Verdict.STALE_INDEX
    assert coverage_fact(r).state == "fail" and "awaiting" not in coverage_fact(r).words
    r = _healthy_qmd()  # a gap only OpenClaw's status measures fails the fresh cell: never "awaiting"
    r.coverage = Coverage(sources=[SourceCoverage(source="sessions", measured_by="status", expected=2, indexed=1,
                                                  missing=1)])
    assert coverage_fact(r).state == "fail"


def test_a_deleted_note_still_served_is_said_inside_the_lease_and_fails_after_it():
    """breaker round 7, w07: a note deleted after the index is still served; inside the lease the verdict is healthy
    (the update has time left) and coverage said ``ok 2/2`` — now it says the deleted note, as awaiting."""
    r = _healthy_qmd()
    r.coverage = Coverage(sources=[SourceCoverage(source="memory-dir-main", measured_by="disk_scan", expected=2,
                                                  indexed=2)], workspace="dir")
    r.freshness.ghost_files, r.freshness.ghost_count = ["memory/old-plan.md"], 1
    assert diagnose(r, r.checked_at).verdict == Verdict.HEALTHY
    f = coverage_fact(r)
    assert (f.state, f.words) == ("warn", "1 root · 2/2 indexed · 1 deleted, still indexed · awaiting update")
    r.freshness.last_proven_current = r.checked_at - timedelta(seconds=r.lease.seconds + 1)
    assert coverage_fact(r).state == "fail" and "awaiting" not in coverage_fact(r).words


def test_coverage_is_in_the_receipt_schema():
    from clawprobe.core.receipt import Receipt

    props = Receipt.model_json_schema()["properties"]
    assert "coverage" in props


@pytest.mark.parametrize("agent", ["main", "ops-bot"])
def test_notes_without_text_in_the_index_are_not_covered_and_not_awaiting(agent):
    """breaker round 26: notes the builtin index lists with their current hash but no chunk read ``coverage: ok —
    3/3 indexed`` beside the retrieval_failed · notes_without_text verdict; they are not covered, and no update
    cycle brings them back (a plain index run skips them), so never ``awaiting update``."""
    r = _healthy_qmd()
    r.coverage = Coverage(sources=[
        SourceCoverage(source=f"memory-root-{agent}", measured_by="disk_scan", expected=1, indexed=1),
        SourceCoverage(source=f"memory-dir-{agent}", measured_by="disk_scan", expected=3, indexed=3)],
        hollow_notes=["MEMORY.md", "memory/2026-12-01.md"])
    f = coverage_fact(r)
    assert (f.state, f.words) == ("fail", "2 roots · 2/4 indexed · 2 without text in the index"), f
    r.coverage.sources[1] = SourceCoverage(source=f"memory-dir-{agent}", measured_by="disk_scan", expected=3,
                                           indexed=2, missing=1)
    assert coverage_fact(r).state == "fail" and "awaiting" not in coverage_fact(r).words
