"""The live dashboard on a real test-bed install (real qmd 2.8.3 + OpenClaw 2026.7.35, real files, real
inotify events): a file change re-probes and repaints without a key press; c plants the canary only after
confirmation and the slow lane then searches for it through OpenClaw; s saves the receipt; r re-runs the
openclaw CLI lane. One module-scoped state (the ``qmd_canary_home`` fixture: one ``memory index``) and one
App session keep the openclaw calls to a handful."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.screens.confirm import ConfirmScreen
from clawprobe.tui.sources import LiveSource
from tests.dashboard_support import text, wait_for
from tests.testbed import OC_QMD

CANARY = Path("memory") / "clawprobe-canary.md"




@pytest.fixture
def live_env(qmd_canary_home, testbed, tmp_path, monkeypatch):
    data = tmp_path / "clawprobe-data"
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(data))  # canary record and receipt history stay in the test
    env = qmd_canary_home.env(path_dirs=[testbed.bin_dir],
                              extra={"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)), "CLAWPROBE_DATA_DIR": str(data)})
    return qmd_canary_home, env, data


async def test_live_dashboard_follows_real_changes_and_keys(live_env):
    home, env, data = live_env
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        view = lambda: app.report.current if app.report else None

        # start: the fast lane paints first, then the openclaw CLI lane proves the effective backend
        await wait_for(pilot, lambda: view() is not None, 30, "the first fast receipt")
        # the first frame comes from the config and the index; the CLI lane starts only after it is painted,
        # so it is still running: no verdict yet (it may flip), the lanes with their elapsed time instead
        assert set(view().checking) >= {"openclaw CLI"}
        assert text(app, "#verdict-line").startswith("… CHECKING") and "openclaw CLI" in text(app, "#verdict-line")
        assert app.terminal_title == "clawprobe — checking…"
        await wait_for(pilot, lambda: view().slow_at is not None, 120, "the openclaw CLI lane")
        await wait_for(pilot, lambda: not view().checking, 30, "the proving lanes")
        assert any(lane == "qmd" for lane, *_ in app.probe_log)  # the qmd check ran in its own lane
        assert view().receipt.qmd.resolves is True and "CHECKING" not in text(app, "#verdict-line")
        assert view().receipt.backend.effective == "qmd"
        assert "✓ qmd (as configured)" in text(app, "#pane-1-body")
        assert "LIVE" in text(app, "#header-1") and "OpenClaw 2026.7.35 (QMD era)" in text(app, "#header-1")
        assert view().diagnosis.verdict.value == "unverified"  # no clawprobe canary planted yet
        assert "not indexed" not in text(app, "#countdown-body")

        # a real file change re-probes and repaints without any key press
        before = view().receipt.checked_at
        fast_before = sum(1 for lane, *_ in app.probe_log if lane == "fast")
        (home.workspace / "memory" / "2026-11-30.md").write_text("# Today\n\nA note the index has not seen.\n")
        await wait_for(pilot, lambda: view().receipt.checked_at > before and view().receipt.freshness.unindexed_files,
                       20, "a re-probe after the file change")
        assert "memory/2026-11-30.md" in view().receipt.freshness.unindexed_files
        assert "✗ new, not indexed memory/2026-11-30.md" in text(app, "#countdown-body")  # the measured list, said once

        # a burst of changes (like a checkout) becomes a few probes, not one per file
        for i in range(300):
            (home.workspace / "memory" / f"bulk-{i:03d}.md").write_text(f"bulk {i}\n")
        await wait_for(pilot, lambda: len(view().receipt.freshness.unindexed_files) > 300 or
                       "301 change" in text(app, "#countdown-body") or
                       sum(1 for lane, *_ in app.probe_log if lane == "fast") > fast_before + 1, 20, "the burst")
        await pilot.pause(2.0)
        fast_burst = sum(1 for lane, *_ in app.probe_log if lane == "fast") - fast_before
        assert 1 <= fast_burst <= 12, fast_burst

        # c asks first: n writes nothing
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 5, "the confirmation")
        await pilot.press("n")
        await pilot.pause()
        assert not (home.workspace / CANARY).exists()

        # c, y plants it; the watcher and the slow lane take it from there (no r pressed)
        slow_before = view().slow_at
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 5, "the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: (home.workspace / CANARY).exists(), 20, "the canary file")
        assert "CLAWPROBE-CANARY-" in (home.workspace / CANARY).read_text()
        assert list((data / "canary").glob("*.json")), "clawprobe.core.canary keeps its record in clawprobe's data dir"
        await wait_for(pilot, lambda: view().slow_at != slow_before and view().receipt.canary.outcome is not None,
                       150, "the canary search through OpenClaw")
        c = view().receipt.canary
        assert c.expected_path == str(CANARY) and c.planted_at is not None
        assert c.outcome == "miss"  # planted, but OpenClaw has not indexed it yet (no gateway runs here)
        d = view().diagnosis  # a miss before any update cycle could index it is waiting, not failed
        assert (d.verdict.value, d.reason) == ("unverified", "canary_not_indexed")
        assert "✓ planted" in text(app, "#pane-5-body") and "not indexed yet" in text(app, "#pane-5-body")
        assert "✗" not in text(app, "#pane-5-body"), "a canary awaiting its update is unproven, never a red miss"
        assert "canary not indexed" in text(app, "#verdict-line")  # the sub-reason in words, not its id

        # s appends the receipt to the history in clawprobe's data dir (clawprobe.core.history)
        await pilot.press("s")
        await wait_for(pilot, lambda: (data / "receipts.jsonl").exists(), 10, "the saved receipt")
        from clawprobe.core.replay import load_receipts

        (record,) = [json.loads(line) for line in (data / "receipts.jsonl").read_text().splitlines()]
        (saved,) = load_receipts(data / "receipts.jsonl")  # the reader replay and the dashboard use
        assert record["verdict"] == "unverified" and saved.agent_id == "main" and saved.canary.outcome == "miss"

        # r re-runs the openclaw CLI lane for the shown agent
        slow_before = view().slow_at
        await pilot.press("r")
        await wait_for(pilot, lambda: view().slow_at != slow_before, 150, "the re-probe")
        assert view().receipt.canary.outcome == "miss"

        # watchfiles cannot decode a non-UTF-8 dir name and stops: the operator is told (no traceback), the
        # fast lane keeps answering with full scans (no cache without a watcher), r retries the watcher
        bad = os.path.join(os.fsencode(home.workspace / "memory"), b"bad-\xff")
        os.mkdir(bad)
        with open(os.path.join(bad, b"x.md"), "wb") as f:
            f.write(b"# a note in a dir whose name is not UTF-8\n")
        stopped = lambda: [n.message for n in app._notifications if "file watching stopped" in n.message]
        await wait_for(pilot, lambda: stopped(), 20, "the watcher-stopped notification")
        assert "WatchfilesRustInternalError" in stopped()[0] and "r re-probes and retries" in stopped()[0]
        fresh_before, count_before = view().receipt.checked_at, view().receipt.freshness.unindexed_count
        (home.workspace / "memory" / "after-stop.md").write_text("# unseen by a watcher\n")
        await pilot.press("r")
        await wait_for(pilot, lambda: view().receipt.checked_at > fresh_before
                       and view().receipt.freshness.unindexed_count == count_before + 1, 30, "r after the stop")
        assert "watcher-driven" not in (view().receipt.freshness.method or "")
        await wait_for(pilot, lambda: len(stopped()) >= 2, 20, "the retried watcher failing on the same dir again")


async def test_a_config_change_while_the_cli_lane_runs_is_not_proved_by_that_run(live_env):
    """The search mode changed (search → vsearch) while the openclaw CLI lane ran: that run's answers — its
    canary searched in the old mode — were shown as the new mode's green canary, and no run followed until
    ``r`` (breaker round 19). They are set aside, the lane runs again under the new config, and what is shown
    at the end was taken after the change."""
    home, env, _ = live_env
    original = home.config_path.read_text()
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            view = lambda: app.report.current if app.report and app.report.agents else None
            await wait_for(pilot, lambda: view() is not None and app._slow_pending, 60, "the CLI lane running")
            tree = json.loads(original)
            tree["memory"]["qmd"]["searchMode"] = "vsearch"
            edited = datetime.now(UTC)
            home.config_path.write_text(json.dumps(tree))
            await wait_for(pilot, lambda: view().receipt.config.search_mode == "vsearch", 20, "a receipt of the new config")
            if app._slow_pending:  # until the lane has run under the new config, no canary answer is its proof
                assert view().slow_at is None or view().slow_at >= edited
                assert view().receipt.canary.outcome is None or view().slow_at >= edited
            await wait_for(pilot, lambda: view().slow_at is not None and not app._slow_pending, 240,
                           "the CLI lane run again under the new config")
            assert view().slow_at >= edited, "the answers shown were taken before the change"
    finally:
        home.config_path.write_text(original)
