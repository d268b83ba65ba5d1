"""The one report the dashboard holds: per agent, the last receipt, its diagnosis and what the panes derive.

Plain pydantic (no textual import): the App keeps one :class:`DashboardReport` in a reactive and every pane
renders from it. Nothing here does I/O or reads a clock — ``now`` is always passed in (the App's injectable
clock), so the same inputs give the same screen.

Verdict time vs display time: a diagnosis is evaluated at the receipt's own ``checked_at`` (what the
evidence proved when it was taken). Whether that claim still holds is a separate, clock-dependent fact:
``expired`` (the lease ended or the receipt is older than its own expiry) — shown as EXPIRED, never as
current (spec §7).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.diagnosis import Diagnosis, at_clock, claim_exit_code, diagnose
from clawprobe.core.expiry import Expiry, in_effect
from clawprobe.core.locate import recorded_repair_words
from clawprobe.core.receipt import Receipt
from clawprobe.core.verdicts import worst_exit_code
from clawprobe.core.view import OverviewRow, agent_facts, overview_row, worst_first, worst_summary

Source = Literal["live", "demo", "replay"]
#: the live report's note before the first receipt arrives (nothing measured yet: the banner says checking)
LOCATING = "locating OpenClaw…"
READING = "reading the config and the index…"
#: where to go from a host without OpenClaw (said once, on the banner's second line)
ELSEWHERE = "elsewhere: clawprobe --state-dir DIR / --config FILE · or: clawprobe demo"


class AgentView(BaseModel):
    """One agent on the dashboard.

    ``slow_at`` is when the slow lane (the ``openclaw`` CLI probes) last produced evidence for this receipt
    (``SlowEvidence.taken_at``; ``None``: the CLI was not run, its facts are unproven).
    ``embed_rate`` is documents/second leaving the pending-embedding queue, measured between the two last
    receipts (source: ``vectors.pending`` of each); ``None`` while the count does not move.
    ``checking`` names the proving lanes still running for this receipt (``qmd binary``, ``openclaw CLI``)
    and when each started: while any runs the verdict is not shown (it may flip when they end), the
    banner says "checking…" with each lane's elapsed time instead.
    ``superseded`` is the expiry of the receipt shown before, decided when a re-probe measured different
    inputs (``clawprobe.core.expiry.in_effect``: which input changed, old → new, and from when — the check
    time of the first receipt that measured them so); ``None`` before any change and once the inputs equal
    the ``baseline``'s again. ``baseline`` is the last receipt before that change, which every later receipt
    is compared with while the change holds (``None`` when no change is in effect).
    """

    model_config = ConfigDict(extra="forbid")
    receipt: Receipt
    diagnosis: Diagnosis
    slow_at: datetime | None = None
    embed_rate: float | None = None
    checking: dict[str, datetime] = Field(default_factory=dict)
    superseded: Expiry | None = None
    baseline: Receipt | None = None

    @property
    def agent_id(self) -> str:
        """The agent id (``receipt.agent_id``)."""
        return self.receipt.agent_id


class DashboardReport(BaseModel):
    """Everything the dashboard shows: the agents, which one is selected, where the receipts came from.

    ``note`` is a plain sentence for the operator (e.g. "no OpenClaw install found: …", "demo scenario: …",
    "replayed from FILE"). ``scenario``/``scenario_title`` are set for ``clawprobe demo``.
    ``evaluated_at`` is the clock reading the ``expired`` flags were computed at.
    ``missing`` (live only) is why no OpenClaw install was found (discovery's reason): there is nothing to
    probe — the panes say so instead of waiting, and the agent actions (canary, save) are not offered.
    """

    model_config = ConfigDict(extra="forbid")
    source: Source
    agents: list[AgentView] = Field(default_factory=list)
    selected: int = 0
    note: str | None = None
    scenario: str | None = None
    scenario_title: str | None = None
    evaluated_at: datetime
    missing: str | None = None

    @property
    def current(self) -> AgentView | None:
        """The selected agent, or ``None`` when the report holds no agent."""
        if not self.agents:
            return None
        return self.agents[self.selected % len(self.agents)]

    @property
    def exit_code(self) -> int:
        """The worst exit code over all agents (``clawprobe.core.verdicts.worst_exit_code``) of what they still
        claim at ``evaluated_at`` (:func:`clawprobe.core.diagnosis.claim_exit_code`: an expired healthy claim is
        not 0); 3 with no agent."""
        return worst_exit_code([claim_exit_code(a.diagnosis) for a in self.agents])


def with_expiry(d: Diagnosis, now: datetime) -> Diagnosis:
    """``d`` with its expiry re-decided at ``now`` by the one rule in core
    (:func:`clawprobe.core.diagnosis.at_clock` → :meth:`clawprobe.core.expiry.Expiry.at`, spec §7): the lease
    that ran at check time has ended since, or an input changed; a receipt whose lease had already ended at
    check time, or with nothing proving the index current, makes no claim that could expire."""
    return at_clock(d, now)


def embed_rate(prev: Receipt | None, cur: Receipt) -> float | None:
    """Documents per second leaving the pending queue between two receipts of the same agent.

    ``None`` when either count is unmeasured, the time did not advance, or the count did not drop.
    Source: ``vectors.pending`` and ``checked_at`` of both receipts.
    """
    if prev is None or prev.agent_id != cur.agent_id:
        return None
    a, b = prev.vectors.pending, cur.vectors.pending
    dt = (cur.checked_at - prev.checked_at).total_seconds()
    if a is None or b is None or dt <= 0 or b >= a:
        return None
    return (a - b) / dt


def make_view(r: Receipt, now: datetime, *, prev: AgentView | None = None, slow_at: datetime | None = None,
              openclaw: str | None = None, state_dir: str | None = None, clawprobe: str | None = None) -> AgentView:
    """Diagnose ``r`` (at its own ``checked_at``) and flag expiry at ``now``.

    ``prev`` (the agent's last view) gives the embedding rate (a rate is kept while the count still moves)
    and the input change in effect (``superseded``, decided by ``clawprobe.core.expiry.in_effect`` against the
    last receipt before a change still in effect, else ``prev``'s receipt: the latest inputs, every time).
    ``openclaw``/``state_dir``/``clawprobe`` only fill repair commands (``clawprobe.core.repairs.repair_for``).
    """
    d = with_expiry(diagnose(r, openclaw=openclaw, state_dir=state_dir, clawprobe=clawprobe), now)
    rate = embed_rate(prev.receipt if prev else None, r)
    change, base = None, None
    if prev is not None and prev.agent_id == r.agent_id:
        base = prev.baseline or prev.receipt
        change = in_effect(base, r, prev.superseded)
    return AgentView(receipt=r, diagnosis=d, slow_at=slow_at, embed_rate=rate, superseded=change,
                     baseline=base if change is not None else None)


def build_report(receipts: list[Receipt], now: datetime, *, source: Source, note: str | None = None,
                 scenario: str | None = None, scenario_title: str | None = None,
                 select_agent: str | None = None, env: Mapping[str, str] | None = None) -> DashboardReport:
    """A report from receipts (demo, replay, or the first live probe). ``select_agent`` picks the agent
    shown first (unknown ids fall back to the first agent). ``env`` (replay: this shell's environment) makes the
    repair commands reach the install each receipt names (``clawprobe.core.locate.recorded_repair_words``)."""
    views = [make_view(r, now, **(recorded_repair_words(r.config.path, env) if env is not None else {}))
             for r in receipts]
    sel = next((i for i, v in enumerate(views) if v.agent_id == select_agent), 0)
    return DashboardReport(source=source, agents=views, selected=sel, note=note, scenario=scenario,
                           scenario_title=scenario_title, evaluated_at=now)


def replace_agent(report: DashboardReport, view: AgentView, now: datetime) -> DashboardReport:
    """A new report with ``view`` replacing (or appended as) its agent; the selection stays on the same id. A
    start-up note (:data:`LOCATING`, :data:`READING`) ends with the first receipt: it no longer holds."""
    agents = list(report.agents)
    idx = next((i for i, a in enumerate(agents) if a.agent_id == view.agent_id), None)
    if idx is None:
        agents.append(view)
    else:
        agents[idx] = view
    note = None if report.note in (LOCATING, READING) else report.note
    return report.model_copy(update={"agents": agents, "evaluated_at": now, "note": note})


def reevaluate(report: DashboardReport, now: datetime) -> DashboardReport:
    """Recompute every agent's ``expired`` flag at ``now`` (the verdicts themselves stay as measured)."""
    agents = [a.model_copy(update={"diagnosis": with_expiry(a.diagnosis, now)}) for a in report.agents]
    return report.model_copy(update={"agents": agents, "evaluated_at": now})


def select(report: DashboardReport, agent_id: str | None) -> DashboardReport:
    """The same report with ``agent_id`` selected (the same object when it is selected already or unknown)."""
    idx = next((i for i, a in enumerate(report.agents) if a.agent_id == agent_id), None)
    if idx is None or (report.current is not None and report.current.agent_id == agent_id):
        return report
    return report.model_copy(update={"selected": idx})


def select_next(report: DashboardReport, step: int = 1, now: datetime | None = None) -> DashboardReport:
    """The same report with the next (``step=1``) or previous (``-1``) agent selected in the overview's
    worst-first order (expiry at ``now``, default the report's ``evaluated_at``), wrapping around."""
    if not report.agents or report.current is None:
        return report
    ids = [r.agent_id for r in overview(report, now or report.evaluated_at)]
    return select(report, ids[(ids.index(report.current.agent_id) + step) % len(ids)])


def place(report: DashboardReport, now: datetime | None = None) -> int:
    """The shown agent's 1-based place in the overview's worst-first order — the order ``a`` walks — at ``now``
    (default the report's ``evaluated_at``); 0 with no agent shown."""
    if report.current is None:
        return 0
    ids = [r.agent_id for r in overview(report, now or report.evaluated_at)]
    return ids.index(report.current.agent_id) + 1


def next_expiry(report: DashboardReport, now: datetime) -> datetime | None:
    """The earliest ``expires_at`` still in the future over all agents (when the screen must change next)."""
    future = [a.diagnosis.expires_at for a in report.agents if a.diagnosis.expires_at > now]
    return min(future) if future else None


def overview(report: DashboardReport, now: datetime) -> list[OverviewRow]:
    """The agents overview rows, worst first (:func:`clawprobe.core.view.worst_first`), expiry at ``now``."""
    rows = [overview_row(agent_facts(a.receipt, a.diagnosis, now), a.diagnosis.rule) for a in report.agents]
    return worst_first(rows)


def worst_line(report: DashboardReport, now: datetime) -> tuple[str, str]:
    """(level, plain words) saying the worst verdict and how many agents share it, naming the agent when
    only one of several has it: ``✗ FAILING — ops (1 of 2 agents)``, ``✗ FAILING — 2 of 3 agents``,
    ``✓ HEALTHY — 1 of 1 agent``; ``? UNPROVEN — no agent`` with none."""
    rows = overview(report, now)
    lv, word, same, total = worst_summary(rows)
    if not total:
        return lv, f"{word} — no agent"
    count = f"{same} of {total} agent{'s' if total > 1 else ''}"
    return lv, f"{word} — {rows[0].agent_id} ({count})" if same == 1 < total else f"{word} — {count}"
