"""A stalled first-run model download whose qmd process still lives (breaker round 15, A4): it holds qmd's embed
lock, so the fetch the check printed (`qmd embed && qmd vsearch …`) printed "Another embed process is already
running. Skipping.", exited 0 in under a second and changed nothing — the next check printed it again. The stall
is now the sub-reason whatever the vector store says, and the action stops that process first."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts

SCENARIOS = Path(__file__).resolve().parent.parent / "src" / "clawprobe" / "tui" / "demo" / "scenarios"


def _receipt(name: str, mode: str):
    (r,) = load_receipts(next(SCENARIOS.glob(f"*{name}*.json")))
    r = r.model_copy(deep=True)
    r.config.search_mode = mode
    return r


@pytest.mark.parametrize(("name", "mode"), [("rw22-model-download", "vsearch"), ("rw22-model-download", "query"),
                                            ("query-14-pending", "query")])
def test_a_stalled_download_with_its_process_alive_is_stopped_first(name, mode):
    r = _receipt(name, mode)
    r.vectors.download_status, r.vectors.embed_running_pid = "stalled", 31337
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("vector_not_ready", "download_stalled"), d.evidence
    assert d.next_action.command == "kill 31337"
    assert "embed running (pid 31337)" in d.evidence
    assert "/xdg-cache/qmd/models" in d.next_action.title and "qmd embed" not in (d.next_action.command or "")


def test_without_a_live_process_the_fetch_is_the_action():
    r = _receipt("rw22-model-download", "vsearch")
    r.vectors.download_status, r.vectors.embed_running_pid = "stalled", None
    d = diagnose(r)
    assert d.reason != "download_stalled" and "kill" not in (d.next_action.command or "")

