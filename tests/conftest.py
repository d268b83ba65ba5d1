"""Shared pytest configuration. Real-program fixtures live in tests/conftest_testbed.py."""

import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

pytest_plugins = ["tests.conftest_testbed"]
