"""Verdict ids, their precedence, words and exit codes (Nagios convention).

The order of :data:`LADDER` is the precedence: the first rule that fires wins (see ``clawprobe.core.rules``).
"""

from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):  # noqa: UP042 — not StrEnum: str()/format() of a member stay 'Verdict.X'
    """The thirteen verdicts, highest precedence first."""

    CONFIG_INVALID = "config_invalid"
    BACKEND_RETIRED = "backend_retired"
    CONFIG_DRIFT = "config_drift"
    QMD_UNAVAILABLE = "qmd_unavailable"
    FALLBACK_ACTIVE = "fallback_active"
    MEMORY_UNAVAILABLE = "memory_unavailable"
    KEYWORD_ONLY = "keyword_only"
    STALE_INDEX = "stale_index"
    VECTOR_NOT_READY = "vector_not_ready"
    SCOPE_DENIED = "scope_denied"
    RETRIEVAL_FAILED = "retrieval_failed"
    UNVERIFIED = "unverified"
    HEALTHY = "healthy"


LADDER: tuple[Verdict, ...] = tuple(Verdict)

TITLES: dict[Verdict, str] = {
    Verdict.CONFIG_INVALID: "Config invalid",
    Verdict.BACKEND_RETIRED: "QMD backend retired in this OpenClaw",
    Verdict.CONFIG_DRIFT: "Config drift",
    Verdict.QMD_UNAVAILABLE: "QMD unavailable",
    Verdict.FALLBACK_ACTIVE: "Fallback active (builtin answers, not QMD)",
    Verdict.MEMORY_UNAVAILABLE: "Memory unavailable",
    Verdict.KEYWORD_ONLY: "Keyword-only (semantic recall silently off)",
    Verdict.STALE_INDEX: "Stale index",
    Verdict.VECTOR_NOT_READY: "Vectors not ready",
    Verdict.SCOPE_DENIED: "Probe denied by scope",
    Verdict.RETRIEVAL_FAILED: "Retrieval failed",
    Verdict.UNVERIFIED: "Unverified (not proven yet)",
    Verdict.HEALTHY: "Healthy",
}

_NO_CANARY = "Unverified (no canary proof yet)"
_CLI_WITHHELD = "Unverified (canary search withheld)"

#: ``unverified`` sub-reason → the title that says what is unproven for that reason (the generic
#: :data:`TITLES` entry, where no verdict-specific reason is known, says only "not proven yet"). The tags are
#: those ``clawprobe.core.rules.unverified`` returns (``PROBE_ERROR_TAGS`` included).
UNVERIFIED_TITLES: dict[str, str] = {
    "no_canary": _NO_CANARY,
    "not_retrieved": _NO_CANARY,
    "canary_not_indexed": _NO_CANARY,
    "log_blind": "Unverified (fallback not ruled out)",
    "index_path_env": "Unverified (the gateway's qmd uses another index)",
    "unrecognized_signal": "Unverified (unexplained memory output)",
    "not_understood": "Unverified (evidence clawprobe does not understand)",
    "missing_evidence": "Unverified (evidence missing)",
    "openclaw_not_found": "Unverified (the openclaw CLI could not run)",
    "openclaw_failed": "Unverified (the openclaw CLI could not run)",
    "probe_failed": "Unverified (a probe could not run)",
    "tool_policy_unknown": "Unverified (the agent's tool policy not evaluated)",
    "never_indexed": _CLI_WITHHELD,
    "wal_pending": _CLI_WITHHELD,
    "workspace_missing": _CLI_WITHHELD,
    "collection_pending": _CLI_WITHHELD,
    "root_missing": _CLI_WITHHELD,
    "root_emptied": _CLI_WITHHELD,
    "index_old_schema": _CLI_WITHHELD,
}


def title_of(verdict: Verdict, reason: str | None) -> str:
    """The verdict's title as shown for ``reason`` (the one place a diagnosis's ``title`` is decided): an
    ``unverified`` verdict says what is unproven for its sub-reason (``log_blind`` → ``Unverified (fallback
    not ruled out)``, never "no canary proof" when the canary is not what is missing); every other verdict,
    and an unknown reason, its :data:`TITLES` entry."""
    if verdict is Verdict.UNVERIFIED and reason is not None:
        return UNVERIFIED_TITLES.get(reason, TITLES[verdict])
    return TITLES[verdict]


EXIT_CANNOT_RUN = 3  #: nothing was diagnosed: no install, bad input, an ``--agent`` OpenClaw refuses (as unverified)

_WARNING = {Verdict.STALE_INDEX, Verdict.VECTOR_NOT_READY, Verdict.KEYWORD_ONLY, Verdict.SCOPE_DENIED}


def exit_code(verdict: Verdict) -> int:
    """0 healthy; 1 stale/vectors/keyword-only/scope (warning); 3 unverified; 2 every other failure."""
    if verdict is Verdict.HEALTHY:
        return 0
    if verdict in _WARNING:
        return 1
    if verdict is Verdict.UNVERIFIED:
        return EXIT_CANNOT_RUN
    return 2


def worst_exit_code(codes: list[int]) -> int:
    """Several agents: the worst wins, ordered 0 < 1 < 3 < 2 (a failure outranks 'could not tell')."""
    rank = {0: 0, 1: 1, 3: 2, 2: 3}
    return max(codes, key=lambda c: rank.get(c, 3), default=3)
