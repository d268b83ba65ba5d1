"""A config change while the openclaw CLI lane runs: the lane runs again under the new config whether the run
that was overtaken answered or failed, decided in one place (``LiveSource.slow_outdated``: the config files'
identity when the lane started vs on disk when it ends) — with no file watcher to report the change; a run
that failed under an unchanged config is not run again (no retry loop).

The CLI lane's program run (``clawprobe.core.probe.slow``) is scripted: its first call edits the config while it
"runs", then fails or answers; later calls answer. The rest is real (discovery with a stand-in ``openclaw``,
the fast lane, the App).
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from clawprobe.core import probe
from clawprobe.core.probe import clear_caches
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.dashboard_support import wait_for
from tests.hardening_helpers import fake_program
from tests.testbed import OpenClawHome, builtin_config

VERSION_OK = 'if [ "$1" = "--version" ]; then echo "OpenClaw 2026.7.35 (fake)"; exit 0; fi\n'


@pytest.fixture
def home_env(tmp_path):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()
    oc_fake = fake_program(tmp_path / "openclaw", VERSION_OK)
    clear_caches()
    return home, home.env([], {"CLAWPROBE_OPENCLAW": str(oc_fake), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})


def scripted_slow(monkeypatch, home: OpenClawHome, first: str) -> list[str]:
    """``probe.slow`` whose first call edits the config mid-run and then ``first`` (``fail``: raises,
    ``answer``: returns, ``fail-unchanged``: raises without an edit); the config text each call saw."""
    original = probe.slow
    calls: list[str] = []

    def slow(ctx, agent_id, now, **kw):
        calls.append(home.config_path.read_text())
        if len(calls) == 1:
            if first != "fail-unchanged":  # the operator saves the config while the CLI runs
                home.config_path.write_text(json.dumps(json.loads(calls[0]), indent=4) + "\n")
            if first.startswith("fail"):
                raise RuntimeError("openclaw memory status crashed")
        return original(ctx, agent_id, now, **kw)

    monkeypatch.setattr(probe, "slow", slow)
    return calls


@pytest.mark.parametrize("first", ["fail", "answer"])
async def test_a_cli_lane_overtaken_by_a_config_change_runs_again_answered_or_failed(home_env, monkeypatch, first):
    home, env = home_env
    calls = scripted_slow(monkeypatch, home, first)
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: len(calls) >= 2 and not app._slow_pending and "main" in app._slow, 60,
                       "the CLI lane run again under the new config")
        assert len(calls) == 2 and calls[1] != calls[0]  # the second run was under the edited config
        assert "openclaw CLI" not in app._lanes.get("main", {})  # the lane ended: no longer checking
        assert not app.live.slow_outdated("main")


async def test_a_cli_lane_that_failed_under_an_unchanged_config_is_not_run_again(home_env, monkeypatch):
    home, env = home_env
    calls = scripted_slow(monkeypatch, home, "fail-unchanged")
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: calls and not app._slow_pending, 60, "the CLI lane failing")
        await wait_for(pilot, lambda: "openclaw CLI" not in app._lanes.get("main", {}), 10, "the lane ended")
        await pilot.pause(1.0)
        assert len(calls) == 1 and "main" not in app._slow and not app._slow_pending


@pytest.mark.parametrize("first", ["fail", "answer"])
async def test_an_overtaken_cli_lane_paints_the_new_config_before_it_has_run_again(home_env, monkeypatch, first):
    """No watcher reported the edit (it came before the watcher watched, or while it was down): the end of the
    overtaken run is where it is noticed, and the new config is painted then — not only after the CLI lane
    has run again (3–6 s more, 10 s and more on a loaded host) — with the CLI lane reading checking."""
    home, env = home_env
    original = probe.slow
    calls: list[int] = []
    gate = threading.Event()
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)

    def slow(ctx, agent_id, now, **kw):
        calls.append(1)
        if len(calls) == 1:
            end = time.monotonic() + 30  # the start-up's fast probes are done: nothing else will start one
            while (app._fast_busy or "qmd binary" in app._lanes.get("main", {})) and time.monotonic() < end:
                time.sleep(0.05)
            tree = json.loads(home.config_path.read_text())
            tree["agents"]["defaults"]["memorySearch"]["enabled"] = True  # a memory setting: a new config hash
            home.config_path.write_text(json.dumps(tree, indent=2) + "\n")
            if first == "fail":
                raise RuntimeError("openclaw memory status crashed")
        else:
            gate.wait(60)  # the run under the new config is still going
        return original(ctx, agent_id, now, **kw)

    monkeypatch.setattr(probe, "slow", slow)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.report is not None and app.report.current is not None, 60, "the first frame")
        before = app.report.current.receipt.config.hash
        try:
            await wait_for(pilot, lambda: len(calls) == 2, 60, "the CLI lane started again")
            await wait_for(pilot, lambda: app.report.current.receipt.config.hash != before, 10,
                           "a receipt of the new config while the CLI lane runs again")
            assert "openclaw CLI" in app.report.current.checking and "main" not in app._slow
        finally:
            gate.set()
        await wait_for(pilot, lambda: not app._slow_pending and "main" in app._slow, 60, "the CLI lane's answers")
        assert len(calls) == 2
