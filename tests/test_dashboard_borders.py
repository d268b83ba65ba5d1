"""One border style across the dashboard: every ``border``/``border-<edge>`` declaration in the shipped
Textual CSS (``clawprobe/styles/*.tcss``) and in widgets' ``DEFAULT_CSS`` uses the same line style
(``none``/``hidden`` switch a border off and are not a style)."""

from __future__ import annotations

import re
from pathlib import Path

import clawprobe.styles
import clawprobe.tui

DECL = re.compile(r"(?<![\w-])border(?:-(?:top|right|bottom|left))?\s*:\s*([a-z-]+)", re.I)
OFF = {"none", "hidden"}
STYLES = Path(clawprobe.styles.__file__).parent
TUI = Path(clawprobe.tui.__file__).parent


def border_styles(css: str) -> list[str]:
    """The line style of every border declaration in ``css`` (comments removed)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return [m.group(1).lower() for m in DECL.finditer(css)]


def test_the_parser_reads_each_kind_of_declaration():
    css = "A { border: round $a; } B { border-top: heavy red; border-left:outer $b; border-title-color: red; }"
    assert border_styles(css) == ["round", "heavy", "outer"]
    assert border_styles("/* border: tall */ C { border: none; }") == ["none"]


def test_every_stylesheet_and_default_css_uses_one_border_style():
    found: dict[str, set[str]] = {}
    sheets = sorted(STYLES.glob("*.tcss"))
    assert {p.name for p in sheets} >= {"app.tcss", "agents.tcss", "walkthrough.tcss", "downloads.tcss"}
    for path in sheets:
        for style in border_styles(path.read_text(encoding="utf-8")):
            found.setdefault(style, set()).add(path.name)
    for path in sorted(TUI.rglob("*.py")):
        for block in re.findall(r'DEFAULT_CSS\s*=\s*("""[\s\S]*?"""|"[^"\n]*")', path.read_text(encoding="utf-8")):
            for style in border_styles(block):
                found.setdefault(style, set()).add(path.name)
    used = {s: files for s, files in found.items() if s not in OFF}
    assert len(used) == 1, f"more than one border style: {used}"
    assert set(used) == {"round"}


async def test_every_pane_has_the_same_border_at_80x24_120x40_and_200x50():
    """The look, not only the line style: a pane under an open top rule at 80×24 is not a round box at 200×50."""
    from clawprobe.tui.app import ClawprobeApp
    from tests.dashboard_support import Clock

    def borders(app: ClawprobeApp) -> dict[str, tuple]:
        out = {}
        for n in range(1, 7):
            st = app.query_one(f"#pane-{n}").styles
            out[f"pane-{n}"] = tuple(edge[0] for edge in (st.border_top, st.border_right, st.border_bottom,
                                                           st.border_left))
        return out

    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        small = borders(app)
        assert set(small.values()) == {("round", "", "", "")}, small
        for size in ((120, 40), (200, 50)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert borders(app) == small, size
