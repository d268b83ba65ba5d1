"""Precedence property: for any set of true conditions, the highest one on the ladder wins."""

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import ConfigError
from clawprobe.core.replay import load_receipts
from clawprobe.core.verdicts import LADDER, Verdict
from tests.test_spec_replay import DATA


def _base():
    (r,) = load_receipts(DATA / "spec-1-bm25-pending-healthy.json")
    r.config.search_mode = "query"
    r.vectors.pending = 0
    r.vectors.has_vector_table = True
    r.vectors.missing_models = []
    return r


def _apply(r, cond: Verdict) -> None:
    if cond is Verdict.CONFIG_INVALID:
        r.config.error = ConfigError(kind="parse", message="invalid character '\\n'", line=15, column=0)
    elif cond is Verdict.BACKEND_RETIRED:
        r.config.retired_keys = ["memory.backend", "memory.qmd"]
        r.openclaw.has_qmd_backend = False
    elif cond is Verdict.CONFIG_DRIFT:
        r.gateway.drift = True
    elif cond is Verdict.QMD_UNAVAILABLE:
        r.qmd.resolves = False
    elif cond is Verdict.FALLBACK_ACTIVE:
        r.backend.effective = "builtin"
    elif cond is Verdict.MEMORY_UNAVAILABLE:
        r.builtin.unavailable_reason = "index_corrupt"
    elif cond is Verdict.KEYWORD_ONLY:
        r.builtin.fts_only = True
        r.config.provider = None
    elif cond is Verdict.STALE_INDEX:
        r.freshness.last_proven_current = r.checked_at - timedelta(seconds=r.lease.seconds + 1)
    elif cond is Verdict.VECTOR_NOT_READY:
        r.vectors.pending = 3
    elif cond is Verdict.SCOPE_DENIED:
        r.canary.outcome = "denied"
    elif cond is Verdict.RETRIEVAL_FAILED:
        r.canary.outcome = "miss"
    elif cond is Verdict.UNVERIFIED:
        r.canary.outcome = None


QMD_FAMILY = [Verdict.CONFIG_INVALID, Verdict.BACKEND_RETIRED, Verdict.CONFIG_DRIFT, Verdict.QMD_UNAVAILABLE,
              Verdict.FALLBACK_ACTIVE, Verdict.STALE_INDEX, Verdict.VECTOR_NOT_READY]
BUILTIN_FAMILY = [Verdict.CONFIG_INVALID, Verdict.CONFIG_DRIFT, Verdict.MEMORY_UNAVAILABLE, Verdict.KEYWORD_ONLY,
                  Verdict.STALE_INDEX]
CANARY = [None, Verdict.SCOPE_DENIED, Verdict.RETRIEVAL_FAILED, Verdict.UNVERIFIED]


def _expected(conds: set[Verdict]) -> Verdict:
    return min(conds, key=LADDER.index) if conds else Verdict.HEALTHY


@settings(max_examples=400, deadline=None)
@given(st.sets(st.sampled_from(QMD_FAMILY)), st.sampled_from(CANARY))
def test_highest_condition_wins_qmd(conds, canary):
    r = _base()
    chosen = set(conds) | ({canary} if canary else set())
    for c in chosen:
        _apply(r, c)
    assert diagnose(r).verdict is _expected(chosen)


@settings(max_examples=300, deadline=None)
@given(st.sets(st.sampled_from(BUILTIN_FAMILY)), st.sampled_from(CANARY))
def test_highest_condition_wins_builtin(conds, canary):
    r = _base()
    r.config.configured_backend = "builtin"
    r.backend.effective = "builtin"
    r.config.provider = "none"
    chosen = set(conds) | ({canary} if canary else set())
    for c in chosen:
        _apply(r, c)
    assert diagnose(r).verdict is _expected(chosen)


def test_ladder_order_matches_spec_core_seven():
    spec = ["config_drift", "qmd_unavailable", "fallback_active", "stale_index", "vector_not_ready",
            "retrieval_failed", "healthy"]
    positions = [[v.value for v in LADDER].index(s) for s in spec]
    assert positions == sorted(positions)
    assert len(LADDER) == 13


def test_every_verdict_has_a_next_action_and_no_default_rebuild():
    from clawprobe.core.repairs import catalog

    cat = catalog()
    for v in Verdict:
        assert (v, None) in cat
    for (v, reason), action in cat.items():
        text = f"{action.title} {action.command or ''}".lower()
        # a forced run only where a plain one is measured to change nothing: a corrupt store; notes whose hash the
        # index holds with no text (a plain `memory index` skips them)
        if (v, reason) not in ((Verdict.MEMORY_UNAVAILABLE, "index_corrupt"), (Verdict.RETRIEVAL_FAILED, "notes_without_text")):
            assert "--force" not in text and "rebuild everything" not in text, (v, reason)
        assert "embed -f" not in (action.command or "")


def test_fallback_repair_reads_the_log_the_evidence_came_from():
    """The fallback repair greps the gateway log that named the fallback (``logging.file``), not
    OpenClaw's default rolling log, when the evidence says which file it was."""
    from clawprobe.core.receipt import Evidence

    (r,) = load_receipts(DATA / "spec-3-fallback-canary-found.json")
    assert diagnose(r).verdict is Verdict.FALLBACK_ACTIVE
    assert "/tmp/openclaw/openclaw-*.log" in diagnose(r).next_action.command
    r.backend.evidence.append(Evidence(source="/srv/gw logs/openclaw.jsonl:412", detail="falling back to builtin"))
    assert diagnose(r).next_action.command == "grep -h 'qmd' '/srv/gw logs/openclaw.jsonl' | tail -20"
