"""Shared pytest configuration. Real-program fixtures live in tests/conftest_testbed.py."""

import atexit
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
if "CLAWPROBE_CACHE_DIR" not in os.environ:  # clawprobe's fact cache: one per test session, never the user's
    os.environ["CLAWPROBE_CACHE_DIR"] = tempfile.mkdtemp(prefix="clawprobe-test-cache-")
    atexit.register(shutil.rmtree, os.environ["CLAWPROBE_CACHE_DIR"], True)

pytest_plugins = ["tests.conftest_testbed"]


@pytest.fixture
def shell(tmp_path, monkeypatch):
    """An operator shell with no OpenClaw on PATH, clawprobe's data dir in the test; returns ``tmp_path``."""
    for k in [k for k in os.environ if k.startswith(("OPENCLAW_", "CLAWPROBE_"))]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "home").mkdir()
    return tmp_path


#: the hang guard of a real-program test (s), its module fixture included: a module that builds several real
#: states (tests/test_rw_real_builtin.py: five homes, a dozen `openclaw` calls) took > 300 s (pyproject's
#: default) on a 2-core host busy with other work, though nothing hung. A guard, not a timing goal.
REAL_TIMEOUT_S = 1200


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("real") is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(REAL_TIMEOUT_S))
