"""``gc_paused``: the collector is off inside every hold — nested, or held by several threads at once — and
back to its previous state only when the last hold ends (an already disabled collector stays disabled). The
dashboard's start-up is one of those holds: from before the toolkit's import until its first frame is on
screen, and never left held after ``run`` returns."""

from __future__ import annotations

import argparse
import gc
import threading
from unittest import mock

from clawprobe.cli import dashboard
from clawprobe.core.gc_pause import end_startup, gc_paused, hold_startup
from tests.hardening_helpers import svg_text


def test_nested_and_concurrent_holds_restore_the_collector_once_the_last_ends():
    assert gc.isenabled()
    entered, release = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(10)
            seen.append(gc.isenabled())

    with gc_paused():
        t = threading.Thread(target=other)
        t.start()
        assert entered.wait(10)
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled(), "the other thread still holds it"
    release.set()
    t.join(10)
    assert seen == [False] and gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_start_up_hold_is_one_hold_among_the_others_and_ends_once():
    """A probe's hold that ends inside the start-up hold leaves the collector off; the start-up hold's end
    (twice, or with no hold) turns it back on exactly once."""
    end_startup()  # no hold: nothing happens
    assert gc.isenabled()
    hold_startup()
    hold_startup()  # once per process
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the start-up hold is still held"
    finally:
        end_startup()
    assert gc.isenabled()
    end_startup()
    assert gc.isenabled()


def test_the_dashboard_holds_the_collector_until_its_first_frame_and_never_after_a_refusal():
    seen: list[bool] = []

    class Probe:  # stands in for the App: what run() sees while it starts and runs it
        return_code = 0
        live = None  # (a demo: no live source to close)
        refused = None  # (no --agent refused)

        def interrupt(self, code: int) -> None:  # Ctrl-C's handler (never called here)
            raise AssertionError("no SIGINT in this test")

        def run(self, mouse: bool) -> int:
            seen.append(gc.isenabled())
            return 0

    args = argparse.Namespace(command="demo", scenario=None, list=False, agent=None)
    with mock.patch.object(dashboard, "build_app", lambda a: (seen.append(gc.isenabled()), Probe())[1]), \
            mock.patch.object(dashboard, "has_terminal", lambda *a: True):
        assert dashboard.run(args) == 0
    assert seen == [False, False] and gc.isenabled(), "held while the App is built and started, released after"
    bad = argparse.Namespace(command="demo", scenario="no such scenario", list=False, agent=None)
    assert dashboard.run(bad) == 3 and gc.isenabled()


async def test_the_app_ends_the_hold_once_its_first_frame_is_on_screen():
    from clawprobe.tui.app import ClawprobeApp

    hold_startup()
    try:
        app = ClawprobeApp(demo_index=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert "rule 13/13" in svg_text(app.export_screenshot()), "the first verdict frame"
            assert gc.isenabled(), "it is painted: the collector runs again"
    finally:
        end_startup()
