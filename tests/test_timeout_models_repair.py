"""A QMD search that times out in a model-backed mode while the mode's models are not in the cache waits on a
first-run download (breaker round 21, finding 5: 2026.7.35, query mode offline → ``fallback_active · timeout`` with
"use BM25 search mode or a larger timeout" while the models pane showed `qmd embed` still looking up a download).
Spec §10: a repair is never a longer timeout for a hang, and a mode switch changes the operator's choice instead of
the cause. The measured cause picks the action: the missing models fetched (``model_missing``) or a stalled
download stopped first (``download_stalled``), then the gateway restarted. Pure, built receipts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import Receipt
from clawprobe.core.verdicts import Verdict

T0 = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)


def _receipt(mode: str, missing: list[str], *, fallback: bool = True, stalled_pid: int | None = None,
             agent: str = "main") -> Receipt:
    r = Receipt(checked_at=T0, agent_id=agent)
    r.openclaw.version, r.openclaw.has_qmd_backend = "2026.7.35", True
    r.config.configured_backend, r.config.search_mode = "qmd", mode  # type: ignore[assignment]
    r.config.path, r.config.workspace = "/srv/oc/openclaw.json", "/srv/ws"
    r.qmd.command, r.qmd.resolved_path, r.qmd.resolves, r.qmd.store_ok = "qmd", "/usr/local/bin/qmd", True, True
    r.freshness.last_proven_current = T0
    r.vectors.pending, r.vectors.has_vector_table, r.vectors.missing_models = 0, True, missing
    if stalled_pid:
        r.vectors.download_status, r.vectors.embed_running_pid = "stalled", stalled_pid  # type: ignore[assignment]
    if fallback:
        r.backend.effective, r.backend.fallback_reason = "builtin", "timeout"  # type: ignore[assignment]
    else:
        r.backend.effective = "qmd"  # type: ignore[assignment]
        r.canary.expected_path, r.canary.outcome = "memory/clawprobe-canary.md", "timeout"  # type: ignore[assignment]
        r.canary.planted_at = T0
    return r


def _told(d) -> str:
    a = d.next_action
    return "\n".join(x for x in [a.title, a.command or "", *[f"{s.title} {s.check} {s.command or ''}" for s in a.steps]])


@pytest.mark.parametrize("mode,missing,agent", [("query", ["generate", "rerank"], "main"),
                                                ("query", ["embed", "generate", "rerank"], "Ops.2"),
                                                ("vsearch", ["embed"], "research")])
def test_a_fallback_timeout_with_the_modes_models_missing_fetches_them_and_restarts(mode, missing, agent):
    d = diagnose(_receipt(mode, missing, agent=agent), T0)
    assert (d.verdict, d.reason) == (Verdict.FALLBACK_ACTIVE, "timeout"), d.evidence
    told = _told(d)
    assert "searchMode" not in told and "timeoutMs" not in (d.next_action.command or "")
    assert "config set" not in told  # neither a mode switch nor a longer timeout
    cmd = d.next_action.command or ""
    assert f"qmd {mode} 'clawprobe warm-up'" in cmd and f"agents/{agent}/qmd/xdg-cache" in cmd
    assert any("gateway restart" in (s.command or "") for s in d.next_action.steps)


@pytest.mark.parametrize("verdict_by", ["fallback", "probe"])
def test_a_stalled_download_under_the_timeout_is_stopped_first(verdict_by):
    """Under a fallback, and (without one) as vector_not_ready, which comes before the probe's own timeout."""
    r = _receipt("query", ["generate", "rerank"], fallback=verdict_by == "fallback", stalled_pid=7213)
    d = diagnose(r, T0)
    want = (Verdict.FALLBACK_ACTIVE, "timeout") if verdict_by == "fallback" else \
        (Verdict.VECTOR_NOT_READY, "download_stalled")
    assert (d.verdict, d.reason) == want, d.evidence
    assert d.next_action.command == "kill 7213"
    assert "memory.qmd.searchMode" not in (d.next_action.command or "")


def test_with_every_model_present_the_timeout_advice_is_unchanged():
    d = diagnose(_receipt("query", []), T0)
    assert (d.verdict, d.reason) == (Verdict.FALLBACK_ACTIVE, "timeout")
    assert "qmd search" not in (d.next_action.command or "") and "warm-up" not in (d.next_action.command or "")


def test_search_mode_loads_no_model_so_its_own_variant_stays():
    d = diagnose(_receipt("search", ["embed", "generate", "rerank"]), T0)
    assert (d.verdict, d.reason) == (Verdict.FALLBACK_ACTIVE, "timeout")
    assert "timeout 60" in (d.next_action.command or "")  # timeout/search: time `qmd search` directly
