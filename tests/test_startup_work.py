"""Work the first frame does not need is not done before it (issue 14): pydantic's plugin scan, and validating
every demo scenario to show one. Each check runs in a fresh interpreter (the state is per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent

SPY = """
import pydantic.plugin._loader as loader
seen = []
real = loader.entry_points
def spy(**kw):
    seen.append(kw.get("group"))
    return real(**kw)
loader.entry_points = spy
"""


def _run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_command_line_builds_its_models_without_scanning_for_plugins():
    assert _run(SPY + "import clawprobe.cli.main, clawprobe.core.receipt, clawprobe.tui.state\nprint(seen)") == "[]"


def test_the_library_alone_leaves_pydantic_as_it_is():
    """``clawprobe.core`` is a library: a host application's pydantic plugins still load."""
    assert _run(SPY + "import clawprobe.core.receipt\nprint(seen)") == "['pydantic']"


def test_showing_one_demo_scenario_validates_that_one_only():
    code = ("from clawprobe.tui import demo\n"
            "i = demo.find('rw27')\n"
            "s = demo.scenario(i)\n"
            "print(i, s.name, sorted(demo._PARSED), demo.count())")
    index, name, parsed, count = _run(code).split(" ", 3)
    assert name == "rw27-scope-denied"
    assert parsed == f"[{index}]"
    assert int(count) == len(list((ROOT / "src/clawprobe/tui/demo/scenarios").glob("*.json")))


def test_names_and_find_read_the_same_scenarios_as_the_validated_list():
    from clawprobe.tui import demo

    every = demo.scenarios()
    assert demo.names() == [s.name for s in every]
    assert [demo.find(s.name) for s in every] == list(range(len(every)))
    assert [demo.find(str(i)) for i in range(1, len(every) + 1)] == list(range(len(every)))
