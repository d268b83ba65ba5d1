"""Coverage measured before clawprobe's own probe changes anything, on the real OpenClaw 2026.9.6 builtin engine
(``provider: none``): RW48 (oc#119411, the watcher never reindexes while status says clean).

The state is built once per module, as the case describes it: ``openclaw memory index``, the canary planted,
``memory index`` again, then ``memory/<date>.md`` written with an mtime one hour old. The check is the whole
``clawprobe check`` path (:func:`clawprobe.core.probe.collect`): the read-only store measurement, the real
``openclaw memory status`` + ``memory search`` (which syncs the builtin index), the measurement after, and
``interpret``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from clawprobe.core import probe
from tests.rw_support import check, context, plant
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, run_openclaw

LATE = "memory/2026-11-30.md"


def _indexed_paths(db) -> set[str]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = {n for (n,) in con.execute("select name from sqlite_master where type='table'")}
        table = "memory_index_sources" if "memory_index_sources" in tables else "files"
        return {p for (p,) in con.execute(f"select path from {table}")}
    finally:
        con.close()


@pytest.fixture(scope="module")
def rw48(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="rw48")
    home.write_memory_md()
    home.write_memory("projects.md", "# Projects\n\nThe harbour survey is due in March.\n")
    first = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed)
    assert first.rc == 0, first.stderr
    spec = plant(home)
    second = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed)
    assert second.rc == 0, second.stderr
    late = home.write_memory("2026-11-30.md", "# Today\n\nThe ferry timetable changed to the winter schedule.\n")
    hour_ago = time.time() - 3600
    os.utime(late, (hour_ago, hour_ago))
    before = _indexed_paths(home.builtin_db())
    assert LATE not in before and spec.expected_path in before  # the stale state, before clawprobe looks
    ctx = context(home, testbed, OC_LATEST)
    r = probe.collect(ctx, "main", canary=spec)
    return {"home": home, "receipt": r, "spec": spec, "after": _indexed_paths(home.builtin_db())}


def test_rw48_unindexed_note_measured_before_the_probe_syncs(rw48):
    r = rw48["receipt"]
    d = check("RW48", r, evidence="real 2026.9.6 builtin: index, canary, index, then memory/2026-11-30.md an hour "
                                  "old; clawprobe check's own path (measure, openclaw CLI probes, measure)")
    assert r.freshness.unindexed_files == [LATE] and r.freshness.stale_reason == "dirty"
    age = (r.checked_at - r.freshness.last_proven_current).total_seconds()
    assert 3500 < age < 3600 + 600, age
    assert r.canary.outcome == "found"
    # the probe's own search synced the note: the receipt says so, and measured before it
    assert LATE in rw48["after"]
    assert r.coverage.measured == "before_probe"
    assert r.coverage.probe_side_effect is not None and LATE in r.coverage.probe_side_effect
    assert [w.message for w in d.warnings if w.tag == "probe_side_effect"] == [r.coverage.probe_side_effect]
    memory = next(c for c in r.coverage.sources if c.source == "memory/")
    assert (memory.measured_by, memory.missing, memory.missing_examples) == ("disk_scan", 1, [LATE])
    assert memory.expected == memory.indexed + 1
    # OpenClaw's correct `Dirty: yes` is not called a misreport
    assert not [c for c in r.status_claims if c.claim == "Dirty: yes" and not c.agrees]
    assert d.next_action.command == "openclaw memory index --agent main"
    assert any(s.command == "openclaw gateway restart" for s in d.next_action.steps)


def test_rw48_coverage_line_in_check_text(rw48):
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.report import to_text

    r = rw48["receipt"]
    text = to_text([(r, diagnose(r, r.checked_at))])
    line = next(x for x in text.splitlines() if x.strip().startswith("coverage:"))
    assert "memory/ 1 behind" in line and "probe synced (measured before)" in line, line


def test_rw48_variant_without_the_cli_nothing_to_compare(rw48, testbed):
    """``--no-openclaw``: no CLI probe ran, so no earlier measurement and no side effect to state."""
    ctx = context(rw48["home"], testbed, OC_LATEST)
    r = probe.collect(ctx, "main", datetime.now(UTC) + timedelta(seconds=1), run_slow=False)
    assert r.coverage.measured == "after_probe" and r.coverage.probe_side_effect is None
    assert r.freshness.unindexed_files == []  # the earlier check's search synced it: now current


def test_rw48_the_live_dashboard_keeps_the_verdict_measured_before_its_own_probe(rw48, testbed, tmp_path):
    """The dashboard's lanes (``tui.sources.LiveSource``: the slow lane, then fast probes) on the same dead-watcher
    state, a new note an hour old under another name: the first receipt after the CLI probe synced the index is
    ``stale_index`` as ``clawprobe check`` says (not healthy), a second probe with nothing changed keeps it, and a
    change on disk (an edit) ends the hold: then the index is measured as it is."""
    from clawprobe.core import canary_write
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.tui.sources import LiveSource

    home = rw48["home"]
    canary_write.plant(home.workspace, "main", root=tmp_path)  # the dashboard retrieves the recorded canary
    late = home.write_memory("field-notes/ferry.md", "# Ferry\n\nThe last crossing leaves at 21:40 in winter.\n")
    hour_ago = time.time() - 3600
    os.utime(late, (hour_ago, hour_ago))
    rel = "memory/field-notes/ferry.md"
    assert rel not in _indexed_paths(home.builtin_db())
    probe.clear_caches()
    live = LiveSource(env=home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                                        "CLAWPROBE_DATA_DIR": str(tmp_path)}))
    live.discover()
    slow = live.slow("main", datetime.now(UTC))
    assert rel in _indexed_paths(home.builtin_db()), "the CLI search synced the note (the side effect)"
    first = live.fast("main", slow, datetime.now(UTC))
    d = diagnose(first, first.checked_at)
    assert d.verdict.value == "stale_index" and rel in first.freshness.unindexed_files
    assert first.coverage.measured == "before_probe" and rel in (first.coverage.probe_side_effect or "")
    again = live.fast("main", slow, datetime.now(UTC))
    assert diagnose(again, again.checked_at).verdict.value == "stale_index"
    (home.workspace / "MEMORY.md").write_text("# Memory\n\nEdited by the operator.\n")
    after = live.fast("main", slow, datetime.now(UTC))
    assert after.coverage.measured == "after_probe" and after.coverage.probe_side_effect is None
    assert rel not in after.freshness.unindexed_files


def _indexed_harbour(oc_home_factory, testbed, version: str, name: str):
    """A builtin home (provider none) with MEMORY.md, one note and a canary, indexed by the real CLI once:
    (home, the note's path, the canary spec)."""
    home = oc_home_factory(builtin_config("none", version=version), name=name)
    home.write_memory_md()
    note = home.write_memory("harbour.md", "# Harbour\n\nThe survey boat is moored at pier 4.\n")
    spec = plant(home)
    made = run_openclaw(home, version, "memory", "index", "--agent", "main", timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    return home, note, spec


@pytest.mark.parametrize("version", [OC_LATEST, OC_QMD])
def test_a_deleted_builtin_index_is_never_indexed_and_the_check_does_not_rebuild_it(oc_home_factory, testbed, version):
    """The builtin store deleted under notes hours old (the operator's ``rm``, a disk cleanup; a running gateway's
    ``-wal``/``-shm`` left behind): the check measures "nothing on disk is indexed" — ``stale_index`` ·
    ``never_indexed``, the one repair ``openclaw memory index`` —, never healthy, and leaves the state as found: no
    store is created by clawprobe's own CLI probes (a builtin ``memory search`` would build it, as QMD's would).
    No CLI runs: 2026.7.35's ``memory status`` creates an empty store (the next check's search would fill it
    and call it healthy), 2026.9.6's search builds one. The same for a 0-byte store."""
    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.probes.builtin_index import builtin_store_candidates

    home, note, spec = _indexed_harbour(oc_home_factory, testbed, version, "noindex")
    two_hours_ago = time.time() - 7200
    for p in (note, home.workspace / "MEMORY.md", home.workspace / spec.expected_path):
        os.utime(p, (two_hours_ago, two_hours_ago))
    stores = [p for _, p in builtin_store_candidates(home.state_dir, "main")]
    removed = [p + suffix for p in stores for suffix in ("", "-wal", "-shm") if os.path.exists(p + suffix)]
    assert removed, "the real index run made a builtin store"
    for p in removed:
        os.unlink(p)
    for leftover in (stores[0] + "-wal", stores[0] + "-shm"):  # what a gateway that had it open leaves behind
        Path(leftover).touch()
    ctx = context(home, testbed, version)
    cli = probe.slow(ctx, "main", canary=spec)
    # 2026.7.35's `memory status` would create the store: no CLI at all; 2026.9.6's status leaves it absent
    assert (cli.status_run is None) == (version == OC_QMD) and cli.search_run is None
    assert not [p for p in stores if os.path.lexists(p)], "clawprobe's check created the store"
    r = probe.fast(ctx, "main", cli)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("stale_index", "never_indexed")
    assert "memory/harbour.md" in r.freshness.unindexed_files and "no builtin index" in (r.freshness.method or "")
    assert d.next_action.command is not None and d.next_action.command.endswith("memory index --agent main")
    assert "builtin index" in d.next_action.title
    # The same notes written just now (inside the lease): not stale yet, but nothing could be searched — the
    # one action is still the index run, never "run clawprobe check again".
    for p in (note, home.workspace / "MEMORY.md", home.workspace / spec.expected_path):
        os.utime(p, None)
    d = diagnose(fresh := probe.fast(ctx, "main", cli), fresh.checked_at)
    assert (d.verdict.value, d.reason) == ("unverified", "never_indexed")
    from clawprobe.core.modes import fresh_cell  # breaker round 12, s16: it said "ok … proven current ≤ lease"

    assert fresh_cell(fresh, fresh.checked_at).state == "unknown", fresh_cell(fresh, fresh.checked_at)
    assert d.next_action.command is not None and d.next_action.command.endswith("memory index --agent main")
    # A 0-byte store (a writer killed while creating it): no CLI runs, the file stays 0 bytes, same verdict.
    for leftover in (stores[0] + "-wal", stores[0] + "-shm"):
        os.unlink(leftover)
    Path(stores[0]).write_bytes(b"")
    empty = probe.slow(ctx, "main", canary=spec)
    assert empty.status_run is None and empty.search_run is None and os.path.getsize(stores[0]) == 0
    d = diagnose(r := probe.fast(ctx, "main", empty), r.checked_at)
    assert (d.verdict.value, d.reason) == ("unverified", "never_indexed"), d.evidence
    assert (d.next_action.command or "").endswith("memory index --agent main")


def test_a_store_that_holds_no_memory_index_is_never_indexed_and_not_built_by_the_check(oc_home_factory, testbed):
    """2026.9.6 keeps the memory index in the agent's own database (its sessions live there too), so the store
    can exist while memory was never indexed: its memory tables are empty. clawprobe's own search would build
    the index and find the canary — it said ``healthy``. The check measures "nothing on disk is indexed"
    (``stale_index`` · ``never_indexed`` beyond the lease, repair ``openclaw memory index``), withholds the search
    and leaves the tables empty."""
    import sqlite3

    from clawprobe.core.diagnosis import diagnose

    home, note, spec = _indexed_harbour(oc_home_factory, testbed, OC_LATEST, "unindexed")
    with sqlite3.connect(home.builtin_db()) as con:  # what the database holds before memory's first sync
        for table in ("memory_index_meta", "memory_index_sources", "memory_index_chunks", "memory_index_state"):
            con.execute(f"DELETE FROM {table}")
    two_hours_ago = time.time() - 7200
    for p in (note, home.workspace / "MEMORY.md", home.workspace / spec.expected_path):
        os.utime(p, (two_hours_ago, two_hours_ago))
    ctx = context(home, testbed, OC_LATEST)
    cli = probe.slow(ctx, "main", canary=spec)
    assert cli.search_run is None and cli.status_run is not None
    with sqlite3.connect(f"file:{home.builtin_db()}?mode=ro", uri=True) as con:
        assert con.execute("SELECT COUNT(*) FROM memory_index_sources").fetchone() == (0,), "the check indexed"
    r = probe.fast(ctx, "main", cli)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("stale_index", "never_indexed")
    assert "holds no memory index" in (r.freshness.method or "") and "memory/harbour.md" in r.freshness.unindexed_files
    assert d.next_action.command is not None and d.next_action.command.endswith("memory index --agent main")


def test_a_crashed_writers_wal_on_the_builtin_store_is_left_as_found(oc_home_factory, testbed):
    """A writer killed after committing into the 2026.9.6 store's ``-wal`` and before its checkpoint: every
    OpenClaw command would fold the frames into the database and delete ``-wal``/``-shm`` (breaker round 4: the
    check did, and the verdict came from the destroyed state). No CLI runs; the files stay byte for byte;
    ``unverified`` · ``wal_pending`` with OpenClaw's own run as the operator's decision."""
    import hashlib
    import subprocess
    import sys

    from clawprobe.core.diagnosis import diagnose

    home, _note, spec = _indexed_harbour(oc_home_factory, testbed, OC_LATEST, "crashed-writer")
    db = home.builtin_db()
    code = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('PRAGMA wal_autocheckpoint=0'); c.execute('DELETE FROM memory_index_chunks WHERE path = ?', "
            "('memory/harbour.md',)); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(db)], check=True, timeout=60)
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 32, "the writer left committed frames"
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (db, wal)}
    ctx = context(home, testbed, OC_LATEST)
    cli = probe.slow(ctx, "main", canary=spec)
    assert cli.status_run is None and cli.search_run is None
    r = probe.fast(ctx, "main", cli)
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (db, wal)} == digest
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("unverified", "wal_pending")
    assert d.next_action.command is not None and d.next_action.command.endswith("memory status --agent main")
