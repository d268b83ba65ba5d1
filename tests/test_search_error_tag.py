"""A canary search that ended in an error nothing narrower explains is ``retrieval_failed · search_error`` — not
``miss`` with "inspect collection scope, file pattern…" (breaker round 15: a qmd whose search exits 1 with
``SqliteError: database disk image is malformed``). The action reruns the same search to read the error whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts

SCENARIOS = Path(__file__).resolve().parent.parent / "src" / "clawprobe" / "tui" / "demo" / "scenarios"


@pytest.mark.parametrize("detail", ["SqliteError: database disk image is malformed", "TypeError: x is not a function",
                                    "exit 1"])
@pytest.mark.parametrize("scenario", ["bm25-pending-healthy", "rw34-auto-provider-keyword-only"])
def test_a_search_that_errored_is_a_search_error(scenario, detail):
    (r,) = load_receipts(next(SCENARIOS.glob(f"*{scenario}*.json")))
    r = r.model_copy(deep=True)
    if r.config.configured_backend != "qmd":
        r.config.provider = "none"  # keyword-only by choice: healthy until the search errs
        assert diagnose(r).verdict.value == "healthy"
    r.canary.outcome, r.canary.reason, r.canary.detail = "error", None, detail
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "search_error"), (d.verdict, d.reason, d.evidence)
    assert "memory search" in (d.next_action.command or "") and "error" in d.next_action.title
