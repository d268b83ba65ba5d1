"""SVG snapshots of the dashboard, one per verdict at 80×24 (plus NO_COLOR and a wide layout), on the
embedded demo scenarios with a frozen clock. Plain ``def`` tests: ``snap_compare`` runs its own loop.

Update only after looking at the report: ``pytest tests/test_dashboard_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.verdicts import LADDER
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.demo import SHOWCASE as BY_VERDICT
from clawprobe.tui.demo import find, scenarios

FROZEN = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)

@pytest.fixture(autouse=True)
def _quiet(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NO_COLOR", raising=False)


def app_for(name: str) -> ClawprobeApp:
    return ClawprobeApp(demo_index=find(name), clock=lambda: FROZEN)


def test_every_verdict_has_a_snapshot_scenario():
    assert set(BY_VERDICT) == {v.value for v in LADDER}
    for verdict, name in BY_VERDICT.items():
        (r, *_) = scenarios()[find(name)].receipts
        assert diagnose(r).verdict.value == verdict


@pytest.mark.parametrize("verdict", list(BY_VERDICT))
def test_verdict_80x24(snap_compare, verdict):
    assert snap_compare(app_for(BY_VERDICT[verdict]), terminal_size=(80, 24))


def test_no_color_80x24(snap_compare, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(app_for("spec-5-query-14-pending"), terminal_size=(80, 24))


def test_two_agents_wide_200x50(snap_compare):
    # the overview opens first with the worst agent (ops) on top; Enter opens its panes
    assert snap_compare(app_for("two-agents"), terminal_size=(200, 50), press=["enter"])


@pytest.mark.parametrize("size", [(120, 40), (200, 50)], ids=["120x40", "200x50"])
@pytest.mark.parametrize("name", ["spec-1-bm25-pending-healthy", "spec-2-qmd-missing"], ids=["healthy", "failing"])
def test_large_layouts(snap_compare, name, size):
    # panes 1–4 sized by their content, pane 6 takes the rest (no scrollbar), the footer shows the pane keys
    assert snap_compare(app_for(name), terminal_size=size)
