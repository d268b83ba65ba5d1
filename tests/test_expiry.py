"""Receipt expiry (spec §7), decided once in ``clawprobe.core.expiry`` and stated alike by ``replay``'s text and
``--json``: the lease that ran at check time ended (at what time), or an input changed (which, old → new)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from clawprobe.cli.main import main
from clawprobe.core import diagnosis
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts
from tests.test_spec_replay import DATA

SPEC1 = DATA / "spec-1-bm25-pending-healthy.json"  # checked 03:00:00Z, proven current 02:58:00Z, lease 420 s
SPEC2 = DATA / "spec-2-qmd-missing.json"  # checked 2026-11-30T03:00:00Z, lease ends 03:05:00Z
SPEC4 = DATA / "spec-4-stale-721s.json"  # the lease had ended before the check
T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _one(path):
    (r,) = load_receipts(path)
    return r


def _run(capsys, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    out, _ = capsys.readouterr()
    return rc, out


def test_replay_json_says_expired_like_its_text(capsys):
    """A receipt days old at the clock: the text said "… old and expired" while --json said false."""
    _, text = _run(capsys, "replay", str(SPEC2))
    _, out = _run(capsys, "replay", "--json", str(SPEC2))
    (e,) = json.loads(out)["receipts"]
    assert "old and expired (valid until 2026-11-30T03:05:00Z)" in text
    assert e["expired"] is True
    assert e["expired_because"][0].startswith("the lease ended at 2026-11-30T03:05:00Z, ")
    exp = e["diagnosis"]["expiry"]
    assert exp["claim"] == "lease" and exp["lease_ended"] is True
    assert exp["lease_ends_at"] == "2026-11-30T03:05:00Z" and exp["changes"] == []
    assert e["verdict"] == "qmd_unavailable"  # the verdict is still judged at the check time


def test_replay_of_a_history_names_the_input_that_changed(tmp_path, capsys):
    old, new = _one(SPEC1), _one(SPEC1)
    new.checked_at = old.checked_at + timedelta(seconds=60)
    new.freshness.last_proven_current = new.checked_at
    new.config.hash, new.qmd.version = "9c1d000000000000", "2.9.0"
    hist = tmp_path / "receipts.jsonl"
    hist.write_text("\n".join(r.model_dump_json() for r in (old, new)) + "\n")
    at = "2026-11-30T03:02:00Z"  # both leases still run: only the inputs can expire the older one
    _, out = _run(capsys, "replay", "--json", "--now", at, str(hist))
    first, second = json.loads(out)["receipts"]
    assert first["expired"] is True and second["expired"] is False
    assert first["expired_because"] == ["qmd version changed: 2.8.3 → 2.9.0",  # words first, the hash last
                                        "config hash changed: 3f1c0d9a7be24c55 → 9c1d000000000000"]
    changes = first["diagnosis"]["expiry"]["changes"]
    assert [(c["input"], c["saved"], c["current"]) for c in changes] == [
        ("qmd version", "2.8.3", "2.9.0"), ("config hash", "3f1c0d9a7be24c55", "9c1d000000000000")]
    assert changes[0]["current_checked_at"] == "2026-11-30T03:01:00Z"
    _, text = _run(capsys, "replay", "--now", at, str(hist))
    first_text, second_text = text.split("\nagent main:")
    assert ("EXPIRED: qmd version changed: 2.8.3 → 2.9.0; config hash changed: 3f1c0d9a7be24c55 → 9c1d000000000000 "
            "(measured 2026-11-30T03:01:00Z)") in first_text
    assert "EXPIRED" not in second_text and "valid until 2026-11-30T03:08:00Z" in second_text


def test_diagnosis_carries_the_changed_inputs():
    a, b = _one(SPEC1), _one(SPEC1)
    b.checked_at += timedelta(seconds=30)
    b.canary.content_sha256, b.backend.effective = "ffff", "builtin"
    d = diagnose(a, current=b)
    assert d.expired and d.expiry.compared_with == b.checked_at
    assert [(c.input, c.saved, c.current) for c in d.expiry.changes] == [
        ("effective backend", "qmd", "builtin"), ("canary hash", a.canary.content_sha256, "ffff")]
    assert d.expired_because == d.expiry.reasons == [c.line for c in d.expiry.changes]


def test_a_tool_policy_edit_alone_expires_a_saved_claim():
    """The tool policy is outside the memory-config hash, so an edit that took ``memory_search`` from the agent left
    a saved healthy receipt current (exit 0). The tool's availability is an input of the claim; an old receipt
    (nothing measured there) reads as available, so it stays current while the tool still is."""
    a, b = _one(SPEC1), _one(SPEC1)
    b.checked_at += timedelta(seconds=30)
    assert not diagnose(a, current=b).expired, "the same policy: still current"
    b.config.tool_off = 'agents.list[ops-bot].tools.deny = ["memory_search"]'
    d = diagnose(a, current=b)
    assert d.expired and [(c.input, c.saved, c.current) for c in d.expiry.changes] == [
        ("memory tool", "available", b.config.tool_off)]
    b.config.tool_off, b.config.tool_unknown = None, "tools.byProvider is set"
    assert [(c.input, c.current) for c in diagnose(a, current=b).expiry.changes] == [("memory tool", "not evaluated")]


def test_only_a_newer_receipt_of_the_same_agent_is_compared():
    a, b = _one(SPEC1), _one(SPEC1)
    b.config.hash = "other"
    assert not diagnose(a, current=b).expired  # same check time: not newer
    b.checked_at -= timedelta(seconds=1)
    assert not diagnose(a, current=b).expired  # older
    b.checked_at += timedelta(seconds=10)
    b.agent_id = "ops"
    assert not diagnose(a, current=b).expired  # another agent
    assert not diagnose(a, current=a).expired


def test_lease_end_is_stated_with_its_time_and_the_verdict_stays_as_measured():
    r = _one(SPEC1)  # lease ends 02:58:00Z + 420 s = 03:05:00Z
    d = diagnose(r, clock=T0 + timedelta(minutes=22))
    assert d.verdict.value == "healthy"
    assert d.expiry.lease_ends_at == T0 + timedelta(minutes=5) and d.expiry.lease_ended
    assert d.expired_because == ["the lease ended at 2026-11-30T03:05:00Z, 17 min ago"]
    at_end = diagnose(r, clock=T0 + timedelta(minutes=5))
    assert not at_end.expired  # at the lease's end it still holds, as 420 s is still fresh


def test_a_stale_or_unproven_receipt_has_no_lease_claim_to_expire():
    """One decision for check/replay and the dashboard: a receipt whose lease had ended before the check
    (its verdict already says stale) is not EXPIRED — the text once said so at check time."""
    stale = _one(SPEC4)
    d = diagnose(stale)
    assert d.verdict.value == "stale_index"
    assert d.expiry.claim == "ended" and not d.expired and d.expired_because == []
    assert not diagnose(stale, clock=stale.checked_at + timedelta(days=2)).expired
    unproven = _one(SPEC1)
    unproven.freshness.last_proven_current = None
    assert diagnose(unproven).expiry.claim == "none" and not diagnose(unproven).expired


def test_at_clock_redecides_the_same_expiry():
    a, b = _one(SPEC1), _one(SPEC1)
    b.checked_at += timedelta(seconds=30)
    b.config.search_mode = "query"
    d = diagnose(a)
    assert not d.expired
    later = diagnosis.at_clock(d, T0 + timedelta(minutes=6))
    assert later.expired and later.expired_because == ["the lease ended at 2026-11-30T03:05:00Z, 1 min ago"]
    changed = diagnosis.at_clock(diagnose(a, current=b), T0 + timedelta(minutes=6))
    assert changed.expired_because[1] == "search mode changed: search → query"
    assert diagnosis.at_clock(later, T0).expired is False and later.verdict == d.verdict


def test_replay_text_says_ages_in_words_and_json_keeps_the_seconds(capsys):
    """``replay --now`` printed ``last proven current 3669 s ago``; the text now says ``1 h 1 min ago`` (evidence
    is humanized as every screen does), and ``--json`` keeps the exact seconds."""
    rc, out = _run(capsys, "replay", str(SPEC4))
    line = next(ln for ln in out.splitlines() if ln.startswith("  evidence: last proven current"))
    assert "721 s ago" not in line and "12 min ago" in line, line
    rc, out = _run(capsys, "replay", "--json", str(SPEC4))
    assert "last proven current 721 s ago" in out
