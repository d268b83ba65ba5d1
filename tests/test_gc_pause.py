"""``gc_paused``: the collector is off inside every hold — nested, or held by several threads at once — and
back to its previous state only when the last hold ends (an already disabled collector stays disabled)."""

from __future__ import annotations

import gc
import threading

from clawprobe.core.gc_pause import gc_paused


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
