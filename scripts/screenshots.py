"""Regenerate screenshots/ from the real dashboard: one per verdict at 80×24 and 120×40 (SVG + PNG), plus
the agents overview and its failing agent (:data:`EXTRA`).

    .venv/bin/python scripts/screenshots.py [--out screenshots] [--no-png] [--only healthy,...]

The App runs headless on the embedded demo scenarios (``clawprobe.tui.demo``) with a frozen clock, so the images
are reproducible. SVG comes from ``App.export_screenshot``; PNG from cairosvg (``pip install
clawprobe[docs]``). The SVG names "Fira Code" (a browser falls back per glyph); cairo does not fall back,
and Fira Code has no ✗/⚠, so the PNG is rendered with "DejaVu Sans Mono" (Debian ``fonts-dejavu-core``;
``apt-get install -y fonts-firacode fonts-dejavu-core``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from clawprobe.tui.app import ClawprobeApp  # noqa: E402
from clawprobe.tui.demo import SHOWCASE as BY_VERDICT  # noqa: E402
from clawprobe.tui.demo import find  # noqa: E402

FROZEN = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)
SIZES = ((80, 24), (120, 40))
PNG_FONT = "DejaVu Sans Mono"


#: extra shots: name → (scenario, keys pressed first); the agents overview opens by itself with two agents
EXTRA = {"agents-overview": ("two-agents", ()), "two-agents-failing": ("two-agents", ("enter",))}


async def shoot(scenario: str, size: tuple[int, int], title: str, press: tuple[str, ...] = ()) -> str:
    """The SVG of the dashboard on ``scenario`` at ``size`` (columns, rows), after pressing ``press``."""
    app = ClawprobeApp(demo_index=find(scenario), clock=lambda: FROZEN)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        if press:
            await pilot.press(*press)
            await pilot.pause()
        return app.export_screenshot(title=title)


def to_png(svg: str, out: Path, width: int) -> None:
    """Render ``svg`` to ``out`` with cairosvg, in a font that has every glyph the dashboard uses."""
    import cairosvg

    svg = svg.replace('"Fira Code"', f'"{PNG_FONT}"').replace("Fira Code, monospace", f"{PNG_FONT}, monospace")
    cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(out), output_width=width)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "screenshots"))
    p.add_argument("--no-png", action="store_true")
    p.add_argument("--only", help="comma-separated verdicts")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.only.split(",") if args.only else [*BY_VERDICT, *EXTRA]
    for verdict in wanted:
        scenario, press = EXTRA.get(verdict, (BY_VERDICT.get(verdict), ()))
        for cols, rows in SIZES:
            name = f"{verdict}-{cols}x{rows}"
            svg = asyncio.run(shoot(scenario, (cols, rows), f"clawprobe — {verdict}", press))
            (out / f"{name}.svg").write_text(svg, encoding="utf-8")
            if not args.no_png:
                to_png(svg, out / f"{name}.png", width=cols * 12)
            print(f"{name}: {scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
