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


def _modules_after(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter (cwd: the repo) after running ``code``."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def _ui(modules: set[str]) -> list[str]:
    return sorted(k for k in modules if k.split(".")[0] in ("textual", "rich"))


def test_core_imports_no_ui_toolkit():
    mods = _core_modules()
    assert "clawprobe.core.diagnosis" in mods and "clawprobe.core.rules" in mods
    loaded = _modules_after(f"import importlib\nfor m in {mods!r}: importlib.import_module(m)")
    assert set(mods) <= loaded and _ui(loaded) == []


def test_headless_cli_commands_do_not_import_textual():
    loaded = _modules_after(
        "import io, contextlib\n"
        "from clawprobe.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['replay', 'tests/data/replay/spec-1-bm25-pending-healthy.json'])\n"
        "    main(['schema'])\n"
    )
    assert "clawprobe.cli.main" in loaded and _ui(loaded) == []


def test_judging_a_receipt_does_not_import_the_evidence_pipeline():
    """The dashboard's first frame, ``replay`` and ``walk`` judge receipts: importing the App and diagnosing and
    rendering a receipt must not load the probes and the evidence interpreter (≈ 0.1–0.2 s of imports, mostly
    pydantic models) — the live dashboard loads them in its discovery thread (issue 14: first frame)."""
    loaded = _modules_after(
        "import clawprobe.tui.app\n"
        "from clawprobe.core.diagnosis import diagnose\n"
        "from clawprobe.core.report import to_json, to_text\n"
        "from clawprobe.core.replay import load_receipts\n"
        "(r,) = load_receipts('tests/data/replay/spec-1-bm25-pending-healthy.json')\n"
        "to_text([(r, diagnose(r))]), to_json([(r, diagnose(r))])\n"
        "import clawprobe.tui.sources\n"  # the live parent: its first look comes from a forked child
        "clawprobe.tui.app.ClawprobeApp(demo_index=0)._downloads_hook(None, r)\n"  # nothing downloading
    )
    assert "clawprobe.core.diagnosis" in loaded and "clawprobe.tui.first_look" in loaded
    pipeline = {"clawprobe.core.interpret", "clawprobe.core.evidence", "clawprobe.core.probe", "clawprobe.core.probes.config",
                "clawprobe.core.probes.gateway", "clawprobe.core.probes.openclaw_cli", "clawprobe.core.probes.qmd_binary",
                "clawprobe.core.probes.qmd_index", "clawprobe.core.probes.workspace", "clawprobe.core.probes.builtin_index",
                "clawprobe.core.probes.models", "clawprobe.tui.screens.downloads", "yaml"}
    assert sorted(loaded & pipeline) == []
