"""Lease boundaries (spec §3) and receipt expiry (spec §7)."""

from datetime import timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.expiry import input_changes
from clawprobe.core.lease import Lease, is_stale, seconds_left
from clawprobe.core.replay import load_receipts
from clawprobe.core.view import agent_facts
from clawprobe.tui.widgets.canary_pane import returned_line
from tests.test_spec_replay import DATA


@pytest.mark.parametrize("age,stale", [(419, False), (420, False), (421, True), (0, False), (10_000, True)])
def test_420s_lease_boundary(age, stale):
    lease = Lease(interval_s=300, update_duration_s=60, margin_s=60)
    assert lease.seconds == 420
    assert is_stale(age, lease) is stale


def _healthy():
    (r,) = load_receipts(DATA / "spec-1-bm25-pending-healthy.json")
    return r


@pytest.mark.parametrize("age,verdict", [(419, "healthy"), (420, "healthy"), (421, "stale_index")])
def test_verdict_at_lease_boundary(age, verdict):
    r = _healthy()
    r.freshness.last_proven_current = r.checked_at - timedelta(seconds=age)
    assert diagnose(r).verdict.value == verdict


def test_receipt_expires_when_the_lease_ends():
    r = _healthy()  # proven current 120 s before the check; lease 420 s → 300 s left
    d = diagnose(r)
    assert d.lease_seconds_left == 300 and not d.expired
    assert d.expires_at == r.freshness.last_proven_current + timedelta(seconds=420)
    later = diagnose(r, r.checked_at + timedelta(seconds=301))
    assert later.expired and later.lease_seconds_left == 0
    assert later.verdict.value == "stale_index"


def test_receipt_without_freshness_evidence_expires_at_once():
    r = _healthy()
    r.freshness.last_proven_current = None
    d = diagnose(r)
    assert d.expires_at == r.checked_at and d.verdict.value == "unverified"
    assert seconds_left(None, r.lease, r.checked_at) is None


def test_lease_change_is_an_input_change_not_silent():
    a, b = _healthy(), _healthy()
    b.lease.margin_s = 3600
    changes = input_changes(a, b)
    assert changes == ["lease seconds changed: 420 → 3960"]


@pytest.mark.parametrize("field,value,name", [
    (("config", "hash"), "other", "config hash"),
    (("qmd", "version"), "2.9.0", "qmd version"),
    (("backend", "effective"), "builtin", "effective backend"),
    (("config", "search_mode"), "query", "search mode"),
    (("canary", "content_sha256"), "ffff", "canary hash"),
])
def test_each_input_change_expires_the_receipt(field, value, name):
    a, b = _healthy(), _healthy()
    setattr(getattr(b, field[0]), field[1], value)
    (line,) = input_changes(a, b)
    assert line.startswith(name + " changed")


def test_canary_miss_before_any_update_cycle_is_unverified_then_failed():
    r = _healthy()
    r.canary.outcome, r.canary.returned_path = "miss", None
    r.canary.indexed_at = None
    r.canary.planted_at = r.checked_at - timedelta(seconds=30)
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("unverified", "canary_not_indexed")
    assert "update" in d.next_action.title
    assert "waiting for the update cycle" in d.evidence[0]
    later = r.checked_at + timedelta(seconds=391)  # planted 421 s ago: the lease has passed
    r.freshness.last_proven_current = later
    assert diagnose(r, later).verdict.value == "retrieval_failed"
    assert_awaiting_said_unproven(r)
    r.canary.indexed_at = r.checked_at  # indexed but still not returned: a real miss at once
    assert diagnose(r).verdict.value == "retrieval_failed"
    facts = agent_facts(r, diagnose(r))
    assert facts.configured_row.cells[3].state == "fail" and facts.canary.state == "fail"


def assert_awaiting_said_unproven(r) -> None:
    """A canary awaiting its index update (rule 12, ``canary_not_indexed``) reads unproven everywhere: the
    configured mode's canary cell, the retrieval step, the returned line — no ✗ beside a ``?`` banner."""
    d = diagnose(r)
    assert d.reason == "canary_not_indexed"
    facts = agent_facts(r, d)
    assert facts.configured_row.cells[3].state == "unknown", facts.configured_row.cells[3]
    assert facts.configured_row.state != "fail" and facts.canary.state == "unknown"
    assert "not indexed yet" in returned_line(r) and "✗" not in returned_line(r) and "$error" not in returned_line(r)
    # planted over an older canary at the same path: the index holds that file as it was before this token
    # (breaker round 5: a plant right after a restored data dir read as a failed retrieval)
    r.canary.indexed_at = r.canary.planted_at - timedelta(hours=3)
    assert (diagnose(r).verdict.value, diagnose(r).reason) == ("unverified", "canary_not_indexed")


def test_a_dumped_receipt_replays_and_a_mismatched_total_is_refused():
    from clawprobe.core.receipt import Receipt
    from clawprobe.core.replay import ReplayError, parse_receipts

    r = _healthy()
    again = Receipt.model_validate_json(r.model_dump_json())
    assert again.lease.seconds == 420 and again == r
    bad = r.model_dump(mode="json")
    bad["lease"]["seconds"] = 4200
    import json

    with pytest.raises(ReplayError, match="not the sum of its parts"):
        parse_receipts(json.dumps(bad))


def test_planted_but_not_retrieved_asks_for_the_retrieval_not_a_new_canary():
    r = _healthy()
    r.canary.outcome = None
    r.canary.planted_at = r.checked_at - timedelta(hours=2)
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("unverified", "not_retrieved")
    assert "plant" not in d.next_action.title.lower()
    r.canary.planted_at = None
    assert diagnose(r).reason == "no_canary" and "Plant" in diagnose(r).next_action.title


def test_an_unrecorded_canary_file_is_said_once_as_the_gap_not_again_as_a_warning():
    from clawprobe.core.receipt import Finding

    r = _healthy()
    r.canary.outcome = r.canary.planted_at = None
    msg = "a clawprobe canary file is at memory/clawprobe-canary.md, but clawprobe holds no record of it"
    r.findings.append(Finding(tag="canary_unrecorded", source="disk (workspace)", message=msg))
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("unverified", "no_canary")
    assert msg in d.evidence and "no canary planted" not in " ".join(d.evidence)
    assert [w.tag for w in d.warnings] == []
    r.canary.planted_at = r.checked_at - timedelta(hours=2)  # planted, not searched: the finding is not the gap
    assert [w.tag for w in diagnose(r).warnings] == ["canary_unrecorded"]


def test_a_miss_on_a_canary_edited_by_hand_is_canary_gone_not_awaiting_the_update():
    from clawprobe.core.interpret.canary import ghost

    r = _healthy()
    r.canary.outcome, r.canary.returned_path, r.canary.retrieved_at = "miss", None, None
    r.canary.planted_at, r.canary.indexed_at = r.checked_at - timedelta(seconds=30), None  # inside the lease
    assert (diagnose(r).verdict.value, diagnose(r).reason) == ("unverified", "canary_not_indexed")
    r.canary = ghost(r.canary, "modified", token_on_disk=False)  # the token is no longer in the file on disk
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "canary_gone")
    assert d.next_action.command.startswith("clawprobe canary rotate") and "memory index" not in d.next_action.command
    assert ghost(r.canary.model_copy(update={"reason": None}), "modified", token_on_disk=True).reason is None
    r.canary = ghost(r.canary.model_copy(update={"reason": None}), "foreign", token_on_disk=False)  # rotate refuses it
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "canary_edited")
    assert d.next_action.command.startswith("mv -n ") and "&& clawprobe canary rotate --agent" in d.next_action.command


@pytest.mark.parametrize("returned", ["memory/clawprobe-canary.md", "memory/archive/old canary é.md"])
def test_a_found_canary_whose_file_left_its_path_says_deleted_or_moved(returned):
    """Breaker round 22 (F3): the canary moved to ``memory/archive/`` without a re-index was still found at its old
    path and was called "deleted or edited"; the cause said is now "deleted or moved" (the repair, rotate, is the
    same: a new canary at the planted path)."""
    from clawprobe.core.interpret.canary import ghost

    r = _healthy()
    r.canary.returned_path = returned
    r.canary = ghost(r.canary, "missing")
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "canary_gone")
    assert "(deleted or moved)" in r.canary.detail and "moved" in d.next_action.title
    assert d.next_action.command.startswith("clawprobe canary rotate")
