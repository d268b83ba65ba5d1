"""The cyclic garbage collector held off while a probe builds 100,000s of small acyclic objects.

A workspace scan and an index read allocate a tuple per file (:class:`~clawprobe.core.probes.workspace.DiskFile`,
:class:`~clawprobe.core.probes.qmd_index.IndexedDoc`). Each allocation burst triggers CPython's generational
collections, which traverse every tracked object so far: at 100,000 notes that was 30–40 % of the store probe
(measured: read + scan + compare 1.60 s with the collector, 1.08 s without, same process and tree). Those
objects hold no reference cycles, so nothing is lost by collecting once, after the burst, instead of during it.
Nested and concurrent holds (agents probed in parallel threads) are counted: the collector runs again when the
last hold ends.

The dashboard's start-up is one more hold (:func:`hold_startup` … :func:`end_startup`): importing the toolkit, the
models and the repair catalog and composing the first frame allocate ≈ 300,000 long-lived objects, and the
collections they trigger (a full one among them) were ≈ 15 % of exec → first verdict frame (measured side by side
in ``docs/performance.md``, stop 33). The hold ends once that frame is on screen; nothing is collected meanwhile
that would not be collected then. A child forked during the hold (the dashboard's first look) inherits it and
never ends it: a short-lived process, its bursts held anyway.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_holds = 0
_was_enabled = False


_startup = False


def _hold() -> None:
    global _holds, _was_enabled
    with _lock:
        if _holds == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holds += 1


def _release() -> None:
    global _holds
    with _lock:
        _holds -= 1
        if _holds == 0 and _was_enabled:
            gc.enable()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` body (re-entrant, thread-safe); the previous state is
    restored when the last concurrent hold ends. Reference counting still frees everything acyclic at once."""
    _hold()
    try:
        yield
    finally:
        _release()


def hold_startup() -> None:
    """Hold the collector off until :func:`end_startup` (once per process; a second call does nothing)."""
    global _startup
    if not _startup:
        _startup = True
        _hold()


def end_startup() -> None:
    """End the start-up hold, if one is held (safe to call any number of times, or without a hold)."""
    global _startup
    if _startup:
        _startup = False
        _release()
