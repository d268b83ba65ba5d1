"""pytest plugin for real-stack tests (register with ``pytest_plugins = ["tests.conftest_testbed"]``).

Fixtures:
  ``testbed``            session: the installed real programs; FAILS (never skips) if the install script was not run.
  ``oc_home_factory``    module: ``make(config=None, *, name="oc", agent_id="main") -> OpenClawHome`` — throwaway
                         homes under pytest's tmp dir, built once per module by the module's own fixtures.
  ``real_state``         module: ``real_state(key, build)`` memo — returns ``build()``'s value, built once per
                         module per key (each openclaw call costs 3–6 s of CPU; build each state ONCE).
  ``qmd_canary_home``    module: a 2026.7.35 QMD-backend home (searchMode "search", qmd on PATH) with MEMORY.md and
                         ``memory/canary.md`` holding ``home.canary_token``, already ``memory index``-ed (1 openclaw call).

Any test that uses ``testbed`` (directly or through another fixture) is marked ``real``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.testbed import (
    OC_QMD,
    OpenClawHome,
    RunResult,
    Testbed,
    qmd_config,
    run_openclaw,
    unique_token,
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "testbed" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real)


@pytest.fixture(scope="session")
def testbed() -> Testbed:
    return Testbed.require()


@pytest.fixture(scope="module")
def oc_home_factory(tmp_path_factory: pytest.TempPathFactory, testbed: Testbed) -> Callable[..., OpenClawHome]:
    parent = tmp_path_factory.mktemp("oc-homes")

    def make(config: dict | str | None = None, *, name: str = "oc", agent_id: str = "main") -> OpenClawHome:
        home = OpenClawHome.create(parent, prefix=f"{name}-", agent_id=agent_id)
        if config is not None:
            home.write_config(config)
        return home

    return make


class _StateMemo:
    def __init__(self) -> None:
        self._built: dict[Any, Any] = {}

    def __call__(self, key: Any, build: Callable[[], Any]) -> Any:
        if key not in self._built:
            self._built[key] = build()
        return self._built[key]


@pytest.fixture(scope="module")
def real_state() -> Iterator[_StateMemo]:
    yield _StateMemo()


@pytest.fixture(scope="module")
def qmd_canary_home(oc_home_factory: Callable[..., OpenClawHome], testbed: Testbed) -> OpenClawHome:
    home = oc_home_factory(qmd_config("qmd", "search"), name="qmd-canary")
    token = unique_token()
    home.write_memory_md("# Memory\n\nThe user prefers tea over coffee.\n")
    home.write_canary(token)
    res: RunResult = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, f"memory index failed rc={res.rc}\n{res.stdout}\n{res.stderr}"
    return home
