"""The command palette provider (Ctrl+P or ``:``): every dashboard action by name, offering only what works
in the current mode (e.g. scenario commands only in ``clawprobe demo``, canary/save only live)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from clawprobe.tui.app import ClawprobeApp

PANE_NAMES = ("backend", "modes", "freshness", "embeddings", "canary", "next action")


def commands_for(app: ClawprobeApp) -> list[tuple[str, str, Callable[[], object]]]:
    """``(name, help, callback)`` for every command that makes sense right now."""
    out: list[tuple[str, str, Callable[[], object]]] = [
        ("Help", "keys, panes, verdict ladder", app.action_help),
        ("Open repair walkthrough", "step by step for the shown verdict", app.action_walkthrough),
        ("Copy next command", "OSC 52 clipboard", app.action_copy_command),
    ]
    if app.check_action("reprobe", ()):
        out.append(("Re-probe", "run the probes again now", app.action_reprobe))
    if app.check_action("canary", ()):
        out.append(("Plant canary", "asks for confirmation first", app.action_canary))
    if app.check_action("save", ()):
        out.append(("Save receipt", "append to the receipt history", app.action_save))
    if app.check_action("next_agent", ()):
        out.append(("Next agent", "show the next agent", app.action_next_agent))
    for i, name in enumerate(PANE_NAMES, start=1):
        out.append((f"Focus pane {i}: {name}", f"key {i}", partial(app.action_focus_pane, i)))
    if app.demo_index is not None:
        from clawprobe.tui import demo

        for i, s in enumerate(demo.scenarios()):
            out.append((f"Demo: {s.name}", s.title, partial(app._load_scenario, i)))
    return out


class DashboardCommands(Provider):
    """Palette entries for the dashboard's actions and, in the demo, every scenario by name."""

    async def discover(self) -> AsyncIterator[DiscoveryHit]:  # type: ignore[override]
        for name, help_text, cb in commands_for(self.app):  # type: ignore[arg-type]
            yield DiscoveryHit(name, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, cb in commands_for(self.app):  # type: ignore[arg-type]
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, help=help_text)
