"""Colour as a terminal shows it: on a 16-colour terminal (``TERM=xterm``, Rich downgrading each colour to
the nearest of the 16 ANSI colours) a ``?`` unproven cell, the accent (focused pane, footer keys, the
command) and a warning are never the failure red, ``✗`` stays red and ``✓`` green; and the verdict's level
word is bold in its level's colour, the strongest colour on screen (spec: the verdict and the next action
get the strongest colour). Checked on the running dashboard's cells over every demo scenario."""

from __future__ import annotations

import colorsys

import pytest
from rich.color import Color

from clawprobe.styles.theme import THEME, standard_number
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.widgets.fmt import LEVEL_WORD
from tests.dashboard_support import Clock, demo_panes

WORD_LEVEL = {word: lv for lv, word in LEVEL_WORD.items()}
LEVEL_VAR = {"ok": "success", "warn": "warning", "unknown": "warning", "fail": "error"}


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("NO_COLOR", raising=False)


def screen_cells(app: ClawprobeApp) -> list[list[tuple[str, int | None, bool]]]:
    """Per screen row, each cell as (character, its foreground's 16-colour number or ``None``, bold) — what
    a ``TERM=xterm`` terminal is sent for the current frame."""
    rows = []
    for strip in app.screen._compositor.render_strips():
        row = []
        for seg in strip:
            style = seg.style
            fg = style.color if style is not None else None
            if style is not None and style.reverse:
                fg = style.bgcolor
            num = None
            if fg is not None and fg.triplet is not None:
                num = standard_number(fg.triplet.hex)
            for ch in seg.text:
                row.append((ch, num, bool(style and style.bold)))
        rows.append(row)
    return rows


def test_the_four_meanings_are_four_colours_in_16_colour_mode():
    nums = {name: standard_number(getattr(THEME, name)) for name in ("success", "warning", "error", "accent")}
    assert len(set(nums.values())) == 4, nums
    assert nums["error"] in (1, 9) and nums["success"] in (2, 10) and nums["warning"] in (3, 11), nums


def test_the_accent_is_calmer_than_every_level_colour():
    def saturation(hex_colour: str) -> float:
        r, g, b = Color.parse(hex_colour).get_truecolor()
        return colorsys.rgb_to_hls(r / 255, g / 255, b / 255)[2]

    accent = saturation(THEME.accent)
    for name in ("success", "warning", "error"):
        assert accent < saturation(getattr(THEME, name)), name


async def test_no_unknown_or_accent_cell_is_failure_red_in_16_colours():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    red = standard_number(THEME.error)
    wrong: list[tuple[str | None, int, str]] = []
    async with app.run_test(size=(80, 24)) as pilot:
        async for _ in demo_panes(app, pilot):
            await pilot.press("6")  # the focused pane's border and title in the accent
            await pilot.pause()
            rows = screen_cells(app)
            for y, row in enumerate(rows):
                for ch, num, _ in row:
                    if ch == "?" and num == red:
                        wrong.append((app.report.scenario, y, "? is failure red"))
                    plain = num is None
                    if ch == "✗" and not plain and num != red:
                        wrong.append((app.report.scenario, y, f"✗ is colour {num}"))
                    if ch == "✓" and not plain and num not in (2, 10):
                        wrong.append((app.report.scenario, y, f"✓ is colour {num}"))
            if any(num == red for _, num, _ in rows[-1]):
                wrong.append((app.report.scenario, len(rows) - 1, "a footer key is failure red"))
            pane = app.query_one("#pane-6")
            title_row = rows[pane.region.y]
            border = title_row[pane.region.x:pane.region.right]
            if any(num == red for _, num, _ in border):
                wrong.append((app.report.scenario, pane.region.y, "the focused pane's rule is failure red"))
            await pilot.press("escape")
    assert wrong == [], "\n".join(map(str, wrong))


async def test_the_verdict_word_is_bold_in_its_level_colour():
    app = ClawprobeApp(demo_index=0, clock=Clock())
    async with app.run_test(size=(80, 24)) as pilot:
        seen = set()
        async for _ in demo_panes(app, pilot):
            line = app.query_one("#verdict-line")
            row = screen_cells(app)[line.region.y][line.region.x:line.region.right]
            text = "".join(ch for ch, _, _ in row)
            (word,) = [w for w in WORD_LEVEL if text.startswith(w)] or [None]
            if word is None:  # EXPIRED prefix or a checking line: not a verdict word
                continue
            lv = WORD_LEVEL[word]
            want = standard_number(app.theme_variables[LEVEL_VAR[lv]])
            cells = row[:len(word)]
            assert all(bold and num == want for ch, num, bold in cells if ch != " "), (app.report.scenario, cells)
            seen.add(lv)
    assert seen == {"ok", "warn", "unknown", "fail"}


async def test_the_modes_cursor_cell_keeps_its_state_colour():
    """The modes table's cursor cell is drawn in its state's colour (a ``✗`` under the cursor stays red, a
    ``✓`` green), focused or not — the cursor's own foreground never hides the state it points at."""
    app = ClawprobeApp(demo_index=0, clock=Clock())
    red = standard_number(THEME.error)
    wrong: list[tuple[str | None, bool, str, int | None]] = []
    seen = 0
    async with app.run_test(size=(80, 24)) as pilot:
        async for _ in demo_panes(app, pilot):
            table = app.query_one("#modes-table")
            if not table.display:
                continue
            for focused in (False, True):
                if focused:
                    await pilot.press("2")
                    await pilot.pause()
                rows = screen_cells(app)
                r = table.region
                cursor = table.cursor_coordinate
                glyph = str(table.get_cell_at(cursor)).strip()
                for y in range(r.y, r.bottom):
                    for ch, num, _ in rows[y][r.x:r.right]:
                        if (ch == "✗" and num != red) or (ch == "✓" and num not in (2, 10)):
                            wrong.append((app.report.scenario, focused, ch, num))
                seen += glyph in ("✗", "✓")
            await pilot.press("escape")
    assert seen > 10
    assert wrong == [], "\n".join(map(str, wrong))
