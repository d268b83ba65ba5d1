"""Shared pytest configuration. Real-program fixtures live in tests/conftest_testbed.py."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
if "CLAWPROBE_CACHE_DIR" not in os.environ:  # clawprobe's fact cache: one per test session, never the user's
    os.environ["CLAWPROBE_CACHE_DIR"] = tempfile.mkdtemp(prefix="clawprobe-test-cache-")
    atexit.register(shutil.rmtree, os.environ["CLAWPROBE_CACHE_DIR"], True)

pytest_plugins = ["tests.conftest_testbed"]
