"""A workspace path that holds a literal ``${VAR}`` (the variable unset where OpenClaw read the config) names the
variable in the evidence — OpenClaw keeps the text and the directory does not exist (breaker round 15, B6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts

SCENARIOS = Path(__file__).resolve().parent.parent / "src" / "clawprobe" / "tui" / "demo" / "scenarios"


@pytest.mark.parametrize("path", ["/srv/${OC_ROOT}/ws", "/home/op/${NOTES}/${TEAM_2}/workspace"])
def test_a_workspace_path_holding_an_unset_variable_names_the_variable(path):
    """Breaker round 15, B6: ``agents.defaults.workspace: "${OC_ROOT}/ws"`` with the variable unset — OpenClaw keeps
    the text, the directory does not exist, and the evidence used to say only that (and 'set an absolute path')."""
    (r,) = load_receipts(next(SCENARIOS.glob("*bm25-pending-healthy*.json")))
    r = r.model_copy(deep=True)
    r.config.workspace, r.coverage.workspace, r.freshness.ghost_count = path, "missing", 3
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "workspace_missing"), d.evidence
    named = re.findall(r"\$\{(\w+)\}", path)
    assert all(f"${{{n}}}" in d.evidence[0] for n in named) and "literally" in d.evidence[0]
    r.config.workspace = "/srv/plain/ws"
    assert "literally" not in diagnose(r).evidence[0]
