"""The dashboard's pure parts: demo scenarios (their verdicts come from core, every verdict covered), the
report model (expiry at a clock, embedding rate, agent selection), and the countdown line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts
from clawprobe.core.verdicts import LADDER
from clawprobe.tui import demo
from clawprobe.tui.state import build_report, embed_rate, make_view, next_expiry, reevaluate, select_next
from clawprobe.tui.widgets.countdown_pane import live_line

T0 = datetime(2026, 11, 30, 3, 0, 0, tzinfo=UTC)
SPEC = ["spec-1-bm25-pending-healthy", "spec-2-qmd-missing", "spec-3-fallback-canary-found", "spec-4-stale-721s",
        "spec-5-query-14-pending", "spec-6-vsearch-no-canary"]


@pytest.mark.parametrize("s", demo.scenarios(), ids=lambda s: s.name)
def test_each_scenario_diagnoses_to_what_it_claims(s):
    assert len(s.receipts) == len(s.expect)
    for r, want in zip(s.receipts, s.expect, strict=True):
        d = diagnose(r)
        assert r.agent_id == want.agent
        assert d.verdict.value == want.verdict, (s.name, d.evidence)
        if want.reason is not None:
            assert d.reason == want.reason


def test_scenarios_cover_every_verdict_and_the_six_spec_cases():
    got = {diagnose(r).verdict for s in demo.scenarios() for r in s.receipts}
    assert got == set(LADDER)
    names = [s.name for s in demo.scenarios()]
    assert all(n in names for n in SPEC)
    assert len(set(names)) == len(names)


def test_spec_scenarios_hold_the_same_evidence_as_the_replay_files(tmp_path):
    from pathlib import Path

    data = Path(__file__).parent / "data" / "replay"
    for name in SPEC:
        (orig,) = load_receipts(data / f"{name}.json")
        s = demo.scenarios()[demo.find(name)]
        assert diagnose(s.receipts[0]).verdict == diagnose(orig).verdict
        for part in ("config", "qmd", "backend", "lease", "freshness", "vectors"):
            assert getattr(s.receipts[0], part) == getattr(orig, part), (name, part)


def test_scenario_times_are_shifted_to_now_consistently():
    s = demo.scenarios()[demo.find("spec-4")]
    now = datetime(2031, 1, 2, 12, 0, tzinfo=UTC)
    (r,), _ = demo.at_now(s, now)
    orig = s.receipts[0]
    assert r.checked_at == now
    assert now - r.freshness.last_proven_current == orig.checked_at - orig.freshness.last_proven_current
    assert r.canary.planted_at - r.checked_at == orig.canary.planted_at - orig.checked_at
    assert diagnose(r).verdict == diagnose(orig).verdict


def test_find_by_unique_substring_and_clear_error():
    assert demo.scenarios()[demo.find("index-bloat")].name == "rw43-index-bloat"
    with pytest.raises(demo.ScenarioError, match="not a demo scenario.*spec-1"):
        demo.find("no-such-thing")
    with pytest.raises(demo.ScenarioError, match="several"):
        demo.find("spec")


def _receipt(name: str):
    return demo.at_now(demo.scenarios()[demo.find(name)], T0)


def test_receipt_expires_only_after_its_lease_ran_out():
    (r,), _ = _receipt("spec-1")  # proven current 120 s before the check, lease 420 s
    rep = build_report([r], T0, source="demo")
    d = rep.current.diagnosis
    assert d.expiry.claim == "lease" and not d.expired
    assert next_expiry(rep, T0) == T0 + timedelta(seconds=300)
    later = reevaluate(rep, T0 + timedelta(seconds=301))
    assert later.current.diagnosis.expired
    assert later.current.diagnosis.expired_because[0] == "the lease ended at 2026-11-30T03:05:00Z, 1 s ago"
    assert later.current.diagnosis.verdict == d.verdict  # the verdict stays what was measured
    assert not reevaluate(rep, T0 + timedelta(seconds=299)).current.diagnosis.expired


def test_stale_or_unproven_receipts_make_no_claim_that_could_expire():
    (stale,), _ = _receipt("spec-4")
    d = build_report([stale], T0 + timedelta(hours=1), source="demo").current.diagnosis
    assert d.expiry.claim == "ended" and not d.expired
    (cfg,), _ = _receipt("rw02")
    d = build_report([cfg], T0 + timedelta(hours=1), source="demo").current.diagnosis
    assert d.expiry.claim == "none" and not d.expired


def test_embed_rate_from_two_receipts():
    s = demo.scenarios()[demo.find("embedding-in-progress")]
    (cur,), (prev,) = demo.at_now(s, T0)
    assert embed_rate(prev, cur) == pytest.approx((120 - 96) / 12)
    assert embed_rate(cur, cur) is None
    assert embed_rate(cur, prev) is None  # time went backwards
    assert make_view(cur, T0, prev=make_view(prev, T0)).embed_rate == pytest.approx(2.0)


def test_agent_selection_wraps_and_keeps_ids():
    s = demo.scenarios()[demo.find("two-agents")]
    rs, _ = demo.at_now(s, T0)
    rep = build_report(rs, T0, source="demo", select_agent="ops")
    assert rep.current.agent_id == "ops"
    assert select_next(rep).current.agent_id == "main"
    assert select_next(select_next(rep)).current.agent_id == "ops"
    assert select_next(rep, -1).current.agent_id == "main"
    assert rep.exit_code == 2  # worst of healthy (0) and qmd_unavailable (2)


def test_countdown_line_ticks_and_turns_stale_at_zero():
    (r,), _ = _receipt("spec-1")
    text, stale = live_line(r, T0)
    assert "5 min left" in text and "age 2 min" in text and not stale
    text, stale = live_line(r, T0 + timedelta(seconds=300))  # exactly at the lease: still fresh (420 s)
    assert "0 s left" in text and not stale
    text, stale = live_line(r, T0 + timedelta(seconds=301))
    assert "STALE for 1 s" in text and "age 7 min 1 s" in text and stale
    (u,), _ = _receipt("rw02")
    text, stale = live_line(u, T0)
    assert "no proof" in text and not stale


def test_queued_file_messages_coalesce_into_the_newer_one_with_every_kind():
    from clawprobe.tui.messages import FastProbed, FilesChanged

    older = FilesChanged("main", frozenset({"memory"}), ["/w/memory/a.md"], 1)
    newer = FilesChanged("main", frozenset({"config"}), ["/s/openclaw.json"], 1)
    other = FilesChanged("ops", frozenset({"memory"}), [], 1)
    assert older.can_replace(newer)  # Textual asks the queued (older) message
    assert newer.kinds == {"memory", "config"} and newer.count == 2
    assert not newer.can_replace(other)
    (r,), _ = _receipt("spec-1")
    assert FastProbed("main", r, 0.01).can_replace(FastProbed("main", r, 0.02))
    assert not FastProbed("main", r, 0.01).can_replace(FastProbed("ops", r, 0.02))
