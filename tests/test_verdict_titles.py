"""An ``unverified`` verdict's title says what is really unproven for its sub-reason (decided once, by
:func:`clawprobe.core.verdicts.title_of`, into ``Diagnosis.title``): "no canary proof yet" only when the
canary is what is missing — never for a blind gateway log or an unrecognized signal — and ``clawprobe
check`` and the dashboard banner say the same title."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual.content import Content

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import to_text
from clawprobe.core.rules import PROBE_ERROR_TAGS
from clawprobe.core.verdicts import TITLES, UNVERIFIED_TITLES, Verdict, title_of
from clawprobe.tui import demo
from clawprobe.tui.state import build_report
from clawprobe.tui.widgets.verdict_banner import banner_lines

CATALOG = Path(__file__).parent.parent / "src" / "clawprobe" / "core" / "catalog" / "unverified.toml"


def _healthy_qmd() -> Receipt:
    s = demo.scenarios()[demo.find("spec-1-bm25-pending-healthy")]
    return s.receipts[0]


def _log_blind() -> Receipt:
    r = _healthy_qmd()
    return r.model_copy(update={"backend": r.backend.model_copy(
        update={"gateway_unproven": "the gateway log is not readable by this user"})})


def _missing_evidence() -> Receipt:
    r = _healthy_qmd()
    return r.model_copy(update={"freshness": r.freshness.model_copy(update={"last_proven_current": None})})


def _no_openclaw() -> Receipt:
    return _healthy_qmd().model_copy(update={"probe_errors": ["no `openclaw` executable found on PATH"]})


def _no_canary() -> Receipt:
    return demo.scenarios()[demo.find("first-run-no-canary")].receipts[0]


CASES = [  # (receipt, the sub-reason it gives, the title it must show)
    (_log_blind, "log_blind", "Unverified (fallback not ruled out)"),
    (_missing_evidence, "missing_evidence", "Unverified (evidence missing)"),
    (_no_openclaw, "openclaw_not_found", "Unverified (the openclaw CLI could not run)"),
    (_no_canary, "no_canary", "Unverified (no canary proof yet)"),
]


def _plain(markup: str) -> str:
    return Content.from_markup(markup).plain


@pytest.mark.parametrize(("make", "reason", "title"), CASES, ids=[c[1] for c in CASES])
def test_the_title_names_what_is_unproven_and_check_and_banner_agree(make, reason, title):
    r = make()
    d = diagnose(r)
    assert (d.verdict, d.reason, d.title) == (Verdict.UNVERIFIED, reason, title)
    first = to_text([(r, d)]).splitlines()[0]
    assert first.startswith(f"agent {r.agent_id}: {title} · ")
    banner = _plain(banner_lines(build_report([r], r.checked_at, source="demo"))[0])  # no width limit
    assert banner.startswith(f"? UNPROVEN  {title} · ")


def test_a_blind_log_is_not_called_a_missing_canary():
    d = diagnose(_log_blind())
    assert "canary" not in d.title and "canary" not in to_text([(_log_blind(), d)]).splitlines()[0]


def test_every_sub_reason_of_unverified_has_its_own_title():
    """Each tag the rule can give (the probe-error table, the catalog's variants, the rule's own fallbacks)
    has a title of its own, not the generic one."""
    catalog = tomllib.loads(CATALOG.read_text())
    variants = {e["reason"].split("/", 1)[0] for e in catalog["repair"] if "reason" in e} - {"*"}
    tags = {t for _, t in PROBE_ERROR_TAGS} | variants | {"probe_failed", "missing_evidence"}
    assert len(tags) >= 15
    assert sorted(tags - set(UNVERIFIED_TITLES)) == []
    assert all(title_of(Verdict.UNVERIFIED, t) != TITLES[Verdict.UNVERIFIED] for t in tags)
    assert all(t.startswith("Unverified (") for t in UNVERIFIED_TITLES.values())


def test_other_verdicts_keep_their_title_whatever_the_reason():
    assert title_of(Verdict.FALLBACK_ACTIVE, "log_blind") == TITLES[Verdict.FALLBACK_ACTIVE]
    assert title_of(Verdict.UNVERIFIED, None) == TITLES[Verdict.UNVERIFIED] == "Unverified (not proven yet)"
