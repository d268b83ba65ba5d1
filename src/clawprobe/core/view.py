"""The one view model every screen reads: what the diagnosis says, per fact, at a given clock reading.

``check`` text (:mod:`clawprobe.core.report`) and every dashboard pane render :func:`agent_facts`; no pane
judges a receipt on its own. Each fact carries a ``state`` — ``ok``, ``fail``, ``unknown``, ``na`` (not
needed) or ``idle`` (a mode that is not configured: "not used", never a failure) — and plain words.

* **mode rows** — the configured engine's rows: QMD ``search``/``vsearch``/``query`` (the modes not
  configured are ``idle``), or one ``builtin`` row whose vectors cell is the builtin provider's
  embeddings (:func:`clawprobe.core.modes.builtin_vectors_cell`).
* **pending** — the configured mode's vectors cell (pending embeddings *and* partly embedded documents).
* **canary** — the trace planted → indexed → embedded → retrieved, each step with its state.
* **gates** — the builtin engine's readiness gates (tokenizer vs the notes' scripts, vector store, index
  identity, provider, reindex lock and its holder, orphaned copies) as :func:`clawprobe.core.modes.builtin_gates`
  judged them; none for QMD.
* **chats** — the real agent's recent ``memory_search`` results per chat kind (direct / group / channel).
* **expiry** — ``valid`` / ``expired`` (the lease ended since the check, or an input changed) / ``ended``
  (already stale at the check) / ``none`` (nothing proved the index current), with the time it flips.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from clawprobe.core.diagnosis import Diagnosis, at_clock, claim_exit_code
from clawprobe.core.durations import human_duration
from clawprobe.core.lease import age_seconds, seconds_left
from clawprobe.core.modes import (
    Cell,
    canary_awaiting_update,
    fallback_served,
    fresh_cell,
    qmd_not_serving,
    serving_blocked,
)
from clawprobe.core.receipt import ChatRetrieval, Receipt
from clawprobe.core.repairs import RepairAction
from clawprobe.core.rules import RULES
from clawprobe.core.verdicts import Verdict
from clawprobe.core.words import FRESHNESS_GROUPS, REASON_WORDS, reason_words, verdict_words

COLUMNS = ("fresh", "vectors", "models", "canary")
#: how many rules the precedence ladder has (the banner's ``rule N/13``)
RULE_COUNT = len(RULES)
#: re-exported: widgets read them only from here
__all__ = ["REASON_WORDS", "RULE_COUNT", "canary_awaiting_update", "fallback_served", "qmd_not_serving", "reason_words", "verdict_words"]
_WARN = {Verdict.STALE_INDEX, Verdict.VECTOR_NOT_READY, Verdict.KEYWORD_ONLY, Verdict.SCOPE_DENIED}

def level(verdict: Verdict) -> str:
    """``ok`` (healthy), ``warn`` (exit-1 verdicts), ``unknown`` (unverified) or ``fail`` (every other)."""
    if verdict is Verdict.HEALTHY:
        return "ok"
    if verdict in _WARN:
        return "warn"
    if verdict is Verdict.UNVERIFIED:
        return "unknown"
    return "fail"


@dataclass(frozen=True)
class Fact:
    """One fact as shown: ``state`` and its plain ``words``."""

    state: str
    words: str


@dataclass(frozen=True)
class ModeRow:
    """One row of the modes table. ``state``: ``ok``/``fail``/``unknown`` for the configured row, ``idle``
    for a mode that is not configured (its cells say what a switch would need, never a failure now)."""

    label: str
    configured: bool
    cells: tuple[Cell, Cell, Cell, Cell]
    state: str
    blocked: str | None = None

    def shown(self, column: int) -> str:
        """The state a screen colours cell ``column`` with: ``idle`` for a mode not used, and a passing cell
        of a row whose engine is not serving is ``idle`` too (nothing green for a backend that is not serving)."""
        st = self.cells[column].state
        if self.state == "idle" or (self.blocked and st == "ok"):
            return "idle"
        return st

    def cell_shown(self, column: int) -> Fact:
        """Cell ``column`` as every screen says it (pane 2's reason, ``check``'s ``fresh=…``): its state as
        :meth:`shown` and its reason as ``words``; a passing cell of a row whose engine is not what serves
        says ``blocked`` — never an ``ok`` about the file's config that nothing serves."""
        c = self.cells[column]
        if self.state != "idle" and self.blocked and c.state == "ok":
            return Fact("idle", f"blocked: {self.blocked} (for the file's config: {c.reason})")
        return Fact(c.state, c.reason)

    def said(self, column: int) -> str:
        """``check``'s word for cell ``column``: its state, ``blocked`` for a cell :meth:`cell_shown` dims."""
        st = self.cell_shown(column).state
        return "blocked" if st == "idle" and self.state != "idle" else st

    @property
    def ready(self) -> bool:
        """True when this configured row is ready (an ``idle`` row is never called ready)."""
        return self.state == "ok"

    @property
    def words(self) -> str:
        """``ready`` / ``not ready`` / ``unproven`` / ``not used``."""
        return {"ok": "ready", "fail": "not ready", "unknown": "unproven", "idle": "not used"}[self.state]


@dataclass(frozen=True)
class Step:
    """One canary trace step: ``name``, ``state``, when (``at``), where it was seen (``source``), ``words``."""

    name: str
    state: str
    at: datetime | None
    source: str
    words: str = ""


@dataclass(frozen=True)
class Expiry:
    """Whether the receipt's claim still holds at ``now``: ``state`` in ``valid``/``expired``/``ended``/
    ``none``; ``at`` the moment it ends (ended); ``seconds`` left (valid) or since it ended (expired);
    ``because`` the reasons (lease end, input changes)."""

    state: str
    at: datetime
    seconds: float | None
    because: tuple[str, ...]


@dataclass(frozen=True)
class GateRow:
    """One builtin readiness gate as shown: ``name``, ``state`` (``ok``/``fail``/``unknown``/``na``), ``short``
    words (≤ 40 characters, for an 80-column pane) and the full ``words``."""

    name: str
    state: str
    short: str
    words: str


@dataclass(frozen=True)
class AgentFacts:
    """Everything a screen says about one agent (see the module docstring)."""

    agent_id: str
    verdict: Verdict
    level: str
    title: str
    reason: str | None
    reason_words: str | None
    rows: tuple[ModeRow, ...]
    not_serving: str | None
    pending: Fact
    canary: Fact
    steps: tuple[Step, ...]
    expiry: Expiry
    exit_code: int
    coverage: Fact = Fact("unknown", "not measured")
    gates: tuple[GateRow, ...] = ()
    chats: tuple[Fact, ...] = ()

    @property
    def configured_row(self) -> ModeRow | None:
        """The row of the configured mode (or the builtin row)."""
        return next((m for m in self.rows if m.configured), None)


def mode_rows(r: Receipt, d: Diagnosis) -> tuple[ModeRow, ...]:
    """The rows of the modes table (none when the config does not load), as they stand at the clock ``d``'s
    expiry was last decided at (:func:`clawprobe.core.diagnosis.at_clock`): once the claim has expired, a fresh
    cell that was ``ok`` at check time is not — ``fail`` when the lease ended (the index is past it and nothing
    re-proved it, as the expiry pane says), ``unknown`` when an input changed since — and the row's state
    follows (nothing green beside an EXPIRED banner)."""
    if r.config.error is not None or not d.modes:
        return ()
    if r.config.configured_backend != "qmd":
        own = next((m for m in d.modes if m.configured), d.modes[0])
        cells = (_fresh_now(own.fresh, d), own.vectors, own.models, own.canary)
        return (ModeRow("builtin", True, cells, _row_state(cells, own.blocked), own.blocked),)
    out = []
    for m in d.modes:
        cells = (_fresh_now(m.fresh, d), m.vectors, m.models, m.canary)
        state = "idle" if not m.configured else m.state if cells[0] is m.fresh else _row_state(cells, m.blocked)
        out.append(ModeRow(m.mode, m.configured, cells, state, m.blocked))
    return tuple(out)


def _fresh_now(fresh: Cell, d: Diagnosis) -> Cell:
    e = d.expiry
    if fresh.state != "ok" or not e.expired:
        return fresh
    if e.lease_ended and e.lease_ends_at is not None:  # a time, not "N s ago": a pane keeps it while time passes
        at = e.lease_ends_at.astimezone(UTC).strftime("%H:%M:%SZ")
        return Cell(state="fail", reason=f"the lease ended at {at}: not proven current now")
    return Cell(state="unknown", reason="an input changed since the check: not proven current now")


def _row_state(cells: tuple[Cell, ...], blocked: str | None) -> str:
    if blocked is None and all(c.state in ("ok", "na") for c in cells):
        return "ok"
    return "fail" if blocked or any(c.state == "fail" for c in cells) else "unknown"


def pending_fact(r: Receipt, rows: tuple[ModeRow, ...]) -> Fact:
    """Pending embeddings as the configured mode's vectors cell judges them (partly embedded documents
    count: ``0 / 40 pending`` with 3 partly embedded is a failure, as ``core.modes`` says)."""
    v = r.vectors
    if r.config.error is not None:
        return Fact("unknown", "not judged: the config does not load")
    if r.config.configured_backend != "qmd":
        return Fact("na", "n/a — builtin engine")
    counts = (f"{v.pending} / {v.documents} pending" if v.pending is not None and v.documents is not None
              else (f"{v.pending} pending" if v.pending is not None else None))
    if r.config.search_mode == "search":
        return Fact("na", "n/a in search mode" + (f" · {counts.replace(' / ', '/')}" if counts else ""))
    own = next((m for m in rows if m.configured), None)
    cell = own.cells[1] if own else None
    if counts is None or cell is None:
        return Fact("unknown", "pending not measured")
    if own is not None and own.blocked and cell.state == "ok":
        return Fact("idle", f"{counts} · " + ("QMD is not serving" if qmd_not_serving(r) else "not what the gateway serves"))
    if cell.state == "fail" and v.partial_documents and not v.pending:
        return Fact("fail", f"{counts} · {v.partial_documents} partly embedded")
    if cell.state == "fail" and v.has_vector_table is False:
        return Fact("fail", f"{counts} · no vector store")
    return Fact(cell.state, counts)


def not_served(r: Receipt) -> str | None:
    """The short qualifier every fact about the file's memory config carries while it is not what serves
    (:func:`clawprobe.core.modes.serving_blocked`): ``QMD is not serving`` / ``the gateway serves another
    config`` / ``the agent cannot search``; ``None`` while it serves. A fact that would read ``ok`` then reads
    ``idle`` with these words."""
    blocked = serving_blocked(r)
    return blocked[0] if blocked else None


def _unserved(f: Fact, r: Receipt) -> Fact:
    """``f``, dimmed with :func:`not_served`'s words when it reads ``ok`` about a config nothing serves."""
    why = not_served(r)
    return Fact("idle", f"{f.words} · {why}") if why and f.state == "ok" else f


@dataclass(frozen=True)
class LiveFact:
    """Pane 3's ticking line at one clock reading: ``state``, the ``head`` words the state colours (the
    qualifier of :func:`not_served` first, so a narrow pane never cuts it), the ``tail`` and ``stale``;
    ``short_tail`` is the tail for a line too narrow for it (the age in its larger unit only)."""

    state: str
    head: str
    tail: str
    stale: bool
    short_tail: str = ""


def live_fact(r: Receipt, now: datetime) -> LiveFact:
    """The freshness line at ``now``: ``fresh · 4 min 59 s left`` / ``STALE for 5 s`` / no proof yet; while
    the file's config is not what serves, ``QMD is not serving`` then the age (never ok, never "fresh", and no
    lease left: the lease of an index nothing serves proves nothing; an 80-column pane keeps the line whole). Pure."""
    lpc = r.freshness.last_proven_current
    left = seconds_left(lpc, r.lease, now)
    if lpc is None or left is None:
        return LiveFact("unknown", "no proof of currency yet", "", False)
    age = age_seconds(lpc, now)
    aged, short = (f"age {human_duration(max(0.0, age), units)}" for units in (2, 1))
    if age > r.lease.seconds:
        return LiveFact("fail", f"STALE for {human_duration(age - r.lease.seconds)}", aged, True, short)
    why = not_served(r)
    if why:  # no "fresh" and no lease countdown for an index nothing serves: the qualifier, then its age
        return LiveFact("idle", why, aged, False, short)
    if r.freshness.stale_reason == "never_indexed":  # the notes' times start the lease; nothing indexed them
        return LiveFact("unknown", f"never indexed · stale in {human_duration(max(0.0, left))}", aged, False, short)
    return LiveFact("ok", f"fresh · {human_duration(max(0.0, left))} left", aged, False, short)


def _store(r: Receipt) -> str:
    if r.config.error is not None:
        return "index (engine unknown: the config does not load)"
    if r.config.configured_backend == "qmd" and r.backend.effective != "builtin":
        return "QMD index"
    return "builtin index"


def retrieval_fact(r: Receipt) -> Fact:
    """The retrieval step, true to the verdict: a hit the builtin fallback served fails for QMD (rule 5),
    a probe denied by scope is unproven (rule 10), no search yet is unproven."""
    c = r.canary
    if c.outcome is None:
        return Fact("unknown", "not searched yet")
    if c.outcome == "found":
        return Fact("fail", "found — by the builtin fallback, not QMD") if fallback_served(r) else Fact("ok", "found")
    if c.outcome == "denied":
        return Fact("unknown", "denied by scope (unproven" + (f", {reason_words(c.reason)})" if c.reason else ")"))
    if canary_awaiting_update(r, r.checked_at):
        return Fact("unknown", "not indexed yet (unproven)")
    return Fact("fail", c.outcome.replace("_", " "))


def coverage_fact(r: Receipt) -> Fact:
    """Per-root coverage in one short line (≤ 70 chars where it can): roots, indexed of expected, files
    behind, files deleted on disk that the index still serves, notes a rule skips, notes the index lists with no
    text (``Coverage.hollow_notes``: not counted as indexed), a workspace that is gone; ``fail`` when files are
    behind or deleted, notes are skipped or hold no text in the index, the workspace is missing, or it is empty while
    the index holds notes that were there, ``ok`` when every root is covered,
    ``unknown`` when not measured or when there is nothing to cover (no note on disk, none indexed: "0/0" proves
    nothing). Files the disk scan finds behind while the index is still inside its lease
    (:func:`clawprobe.core.modes.fresh_cell` ok — the verdict's own judgement: the update cycle has time left)
    are ``warn`` with ``awaiting update``, never a ``fail`` beside a healthy verdict. A probe's own sync is said
    (``probe synced``)."""
    cov = r.coverage
    if not cov.sources:
        return Fact("unknown", "not measured")
    known = [c for c in cov.sources if c.indexed is not None and c.expected is not None]
    hollow = len(cov.hollow_notes)  # listed as indexed, no text in the index: not covered
    indexed = max(sum(c.indexed or 0 for c in known) - hollow, 0)
    expected = sum(c.expected or 0 for c in known)
    behind = [c for c in cov.sources if c.missing]
    notes = sum(sum(c.skipped.values()) for c in cov.sources)
    parts = [f"{len(cov.sources)} root{'s' if len(cov.sources) != 1 else ''}",
             f"{indexed}/{expected} indexed" if known else "indexed unproven"]
    if behind:
        parts.append(", ".join(f"{c.source} {c.missing} behind" for c in behind[:2]))
    if hollow:
        parts.append(f"{hollow} without text in the index")
    if notes:
        reasons = sorted({k.replace("_", " ") for c in cov.sources for k in c.skipped})
        parts.append(f"{notes} note{'s' if notes != 1 else ''} skipped ({', '.join(reasons[:2])})")
    gone = cov.workspace in ("missing", "not_dir") or (cov.workspace == "empty" and (r.freshness.ghost_count or 0) > 0)
    ghosts = 0 if gone else r.freshness.ghost_count or 0  # deleted on disk, still served (the disk scan's count)
    if ghosts:
        parts.append(f"{ghosts} deleted, still indexed")
    awaiting = bool(behind or ghosts) and not notes and not gone and not hollow and all(c.measured_by != "status" for c in behind) \
        and fresh_cell(r, r.checked_at).state == "ok"
    if awaiting:
        parts.append("awaiting update")
    if cov.probe_side_effect:
        parts.append("probe synced (measured before)")
    if gone:
        parts.insert(0, f"workspace {'empty' if cov.workspace == 'empty' else 'missing'}")
    vacuous = known and not expected and not indexed  # no note on disk and none indexed: nothing was covered
    if vacuous and not (behind or ghosts or notes or gone):
        parts.append("no memory file: nothing to cover")
    state = "warn" if awaiting else "fail" if behind or ghosts or notes or gone or hollow else (
        "ok" if known and not vacuous else "unknown")
    return _unserved(Fact(state, " · ".join(parts)), r)


def canary_steps(r: Receipt) -> tuple[Step, ...]:
    """The four trace steps (planted, indexed, embedded, retrieved) with their states."""
    c = r.canary

    def seen(name: str, at: datetime | None, source: str) -> Step:
        return Step(name, "ok" if at is not None else "unknown", at, source)

    if r.config.error is not None:
        embedded = Step("embedded", "unknown", None, "", "not judged: the config does not load")
    elif r.config.configured_backend != "qmd":
        embedded = Step("embedded", "na", None, "", "none: keyword-only index" if r.builtin.fts_only
                        else "not traced (builtin engine)")
    elif r.config.search_mode == "search":
        embedded = Step("embedded", "na", None, "", "n/a in search mode (BM25)")
    else:
        embedded = seen("embedded", c.embedded_at, "content_vectors")
    ret = _unserved(retrieval_fact(r), r)
    steps: tuple[Step, ...] = (seen("planted", c.planted_at, "workspace file"), seen("indexed", c.indexed_at, _store(r)),
                               embedded)
    if not_served(r):  # what the file's config indexed is not what answers: no green step
        steps = tuple(Step(s.name, "idle", s.at, s.source, s.words) if s.state == "ok" else s for s in steps)
    return (*steps, Step("retrieved", ret.state, c.retrieved_at, "openclaw", ret.words))


def expiry(d: Diagnosis, now: datetime) -> Expiry:
    """The receipt's claim at ``now`` (see :class:`Expiry`), from ``d.expiry`` re-decided at ``now``."""
    e = d.expiry.at(now)  # the one decision (clawprobe.core.expiry); this only shapes it for the screens
    ends = e.lease_ends_at
    if e.expired:
        since = (now - ends).total_seconds() if e.lease_ended and ends is not None else None
        return Expiry("expired", d.expires_at, since, tuple(e.reasons))
    if e.claim != "lease" or ends is None:
        return Expiry(e.claim, d.expires_at, None, ())
    return Expiry("valid", d.expires_at, (ends - now).total_seconds(), ())


def agent_facts(r: Receipt, d: Diagnosis, now: datetime | None = None) -> AgentFacts:
    """Every fact a screen shows about ``r`` as ``d`` diagnosed it, with expiry judged at ``now``
    (default: the check time). Pure."""
    at = now or d.checked_at
    x = expiry(d, at)
    rows = mode_rows(r, at_clock(d, at))
    not_serving = qmd_not_serving(r) if r.config.configured_backend == "qmd" else None
    steps = canary_steps(r)
    ret = steps[-1]
    return AgentFacts(
        agent_id=d.agent_id, verdict=d.verdict, level=level(d.verdict), title=d.title, reason=d.reason,
        reason_words=reason_words(d.reason, d.verdict), rows=rows, not_serving=not_serving,
        pending=pending_fact(r, rows), canary=Fact(ret.state, ret.words), steps=steps,
        expiry=x, exit_code=claim_exit_code(at_clock(d, at)), coverage=coverage_fact(r),
        gates=tuple(GateRow(g.name, g.cell.state, g.short, g.cell.reason) for g in d.gates),
        chats=tuple(chat_fact(c) for c in r.chat_retrieval),
    )


def chat_fact(c: ChatRetrieval) -> Fact:
    """One chat kind's recent ``memory_search`` results as shown (``direct 4/5 found``; a denied or disabled
    newest result fails, an empty one is unknown): short enough for an 80-column pane."""
    state = {"found": "ok", "denied": "fail", "disabled": "fail", "error": "fail"}.get(c.last_outcome or "", "unknown")
    words = f"{c.kind} {c.found}/{c.searches} found" + (f", newest {c.last_outcome}" if c.last_outcome != "found" else "")
    return Fact(state, words)


def stale_for(r: Receipt, now: datetime) -> float | None:
    """Seconds the index has been past its lease at ``now`` (``None`` while fresh or unproven)."""
    lpc = r.freshness.last_proven_current
    if lpc is None:
        return None
    over = age_seconds(lpc, now) - r.lease.seconds
    return over if over > 0 else None


# ------------------------------------------------------------------------------------------ agents overview
#: the verdict level's words, glyph first (readable without colour)
LEVEL_WORD = {"ok": "✓ HEALTHY", "warn": "⚠ WARNING", "unknown": "? UNPROVEN", "fail": "✗ FAILING"}
#: how bad an exit code is: 0 < 1 < 3 < 2 (a failure outranks "could not tell"), as ``worst_exit_code``
EXIT_RANK = {0: 0, 1: 1, 3: 2, 2: 3}


@dataclass(frozen=True)
class OverviewRow:
    """One agent in the agents overview: verdict level and words, the sub-reason (or verdict id) as
    ``tag``, the lease (``lease``: time left or the expiry state), ``pending`` and ``canary`` facts."""

    agent_id: str
    level: str
    word: str
    tag: str
    lease: Fact
    pending: Fact
    canary: Fact
    exit_code: int
    rule: int


def lease_fact(x: Expiry) -> Fact:
    """The lease column: ``4 min 57 s left`` / ``expired`` / ``stale at check`` / ``no lease``."""
    from clawprobe.core.durations import human_duration

    if x.state == "valid":
        return Fact("ok", f"{human_duration(x.seconds or 0.0)} left")
    if x.state == "expired":
        return Fact("warn", "expired")
    if x.state == "ended":
        return Fact("fail", "stale at check")
    return Fact("unknown", "no lease")


#: pane 5's retrieval words (:func:`retrieval_fact`) → the overview's, short enough for its compact canary
#: column (10 cells: "? not searc…" was cut mid-word at 80 columns); the first that the words start with or
#: contain wins
OVERVIEW_CANARY = (("fallback", "fallback"), ("denied", "denied"),
                   ("not searched", "no search"), ("not indexed", "unindexed"), ("wrong source", "wrong file"))


def overview_canary_words(words: str) -> str:
    """The overview's canary words for pane 5's retrieval ``words``: :data:`OVERVIEW_CANARY`'s short form,
    else the words before any `` · `` qualifier (the cell's colour already says it)."""
    for long, short in OVERVIEW_CANARY:
        if words.startswith(long) or long in words:
            return short
    return words.split(" · ")[0]


def overview_row(f: AgentFacts, rule: int) -> OverviewRow:
    """The overview row of one agent's facts."""
    tag = f.reason_words or f.verdict.value.replace("_", " ")
    lease = lease_fact(f.expiry)
    if lease.state == "ok" and f.level != "ok":  # time left on a lease is no green tick for a failing agent
        lease = Fact("na", lease.words)
    pending = Fact(f.pending.state, "n/a" if f.pending.state == "na" else f.pending.words.split(" · ")[0])
    canary = Fact(f.canary.state, overview_canary_words(f.canary.words))
    if f.expiry.state == "expired" and f.level == "ok":  # as the banner: never a ✓ beside an expired claim
        return OverviewRow(f.agent_id, "warn", "⚠ EXPIRED", tag, lease, pending, canary, f.exit_code, rule)
    return OverviewRow(f.agent_id, f.level, LEVEL_WORD[f.level], tag, lease, pending, canary, f.exit_code, rule)


def worst_first(rows: list[OverviewRow]) -> list[OverviewRow]:
    """Rows sorted worst first: by exit code rank, then rule precedence (earlier rule = more basic fault),
    then agent id."""
    return sorted(rows, key=lambda r: (-EXIT_RANK.get(r.exit_code, 3), r.rule, r.agent_id))


def worst_summary(rows: list[OverviewRow]) -> tuple[str, str, int, int]:
    """(level, words, how many agents share the worst verdict level, how many agents) — e.g.
    ``("fail", "✗ FAILING", 1, 2)``; ``("unknown", "? UNPROVEN", 0, 0)`` with no agent."""
    if not rows:
        return "unknown", LEVEL_WORD["unknown"], 0, 0
    ordered = worst_first(rows)
    worst = ordered[0]
    same = sum(1 for r in rows if EXIT_RANK.get(r.exit_code, 3) == EXIT_RANK.get(worst.exit_code, 3))
    return worst.level, worst.word, same, len(rows)


def shown_command(action: RepairAction) -> tuple[str | None, int | None]:
    """The command the screen shows and ``y`` copies: the action's own command, else the first step's
    command that is filled in (with its 1-based step number), else ``(None, None)``."""
    if action.command:
        return action.command, None
    for n, step in enumerate(action.steps, start=1):
        if step.command:
            return step.command, n
    return None, None


#: the groups of the freshness detail that name files a pane lists as such (every group but the unreadable one)
LISTED_GROUPS = tuple(label for label, kinds in FRESHNESS_GROUPS if "unreadable" not in kinds)
_OLDEST = re.compile(r", oldest \w+ (?P<rel>.+?) at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?")
_MORE = re.compile(r" and \d+ more$")


def detail_kinds(detail: str | None, listed: set[str]) -> tuple[dict[str, str], str | None]:
    """Split the freshness detail (``new, not indexed: a.md; changed since indexed: b.md``) into the kind of
    each file the pane lists already (``{"a.md": "new, not indexed"}``) and the rest of the text, which
    names something the list does not (``None`` when nothing is left) — each file said once (pure)."""
    kinds: dict[str, str] = {}
    rest = []
    for part in (detail or "").split("; ") if detail else []:
        label, sep, names = part.partition(": ")
        files = names.split(", ")
        if sep and label in LISTED_GROUPS and not _MORE.search(names) and all(n in listed for n in files):
            kinds.update(dict.fromkeys(files, label))
            continue
        rest.append(part)
    return kinds, "; ".join(rest) or None


def oldest_named(method: str, listed: set[str]) -> str:
    """The freshness method without its ``, oldest new <file> at <ISO time>`` when the pane lists that file
    below (the proven-current time already says when) (pure)."""
    m = _OLDEST.search(method)
    return method[:m.start()] + method[m.end():] if m and m.group("rel") in listed else method
