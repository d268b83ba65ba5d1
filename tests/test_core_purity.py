"""core/ never imports textual or rich: proven in a fresh interpreter, importing every core module."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import clawprobe.core

ROOT = Path(__file__).resolve().parent.parent


def _core_modules() -> list[str]:
    names = ["clawprobe.core"]
    for m in pkgutil.walk_packages(clawprobe.core.__path__, prefix="clawprobe.core."):
        names.append(m.name)
    return names


def test_core_imports_no_ui_toolkit():
    mods = _core_modules()
    assert "clawprobe.core.diagnosis" in mods and "clawprobe.core.rules" in mods
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_headless_cli_commands_do_not_import_textual():
    code = (
        "import sys, io, contextlib\n"
        "from clawprobe.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['replay', 'tests/data/replay/spec-1-bm25-pending-healthy.json'])\n"
        "    main(['schema'])\n"
        "print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
