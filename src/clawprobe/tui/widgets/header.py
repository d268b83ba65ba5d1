"""The header: where the receipt comes from, which agent, OpenClaw version and era, QMD version, config path,
and the receipt's check time and expiry — an expired receipt reads EXPIRED, never as current.

Sources: ``openclaw`` (``openclaw --version``; era from ``has_qmd_backend``), ``qmd.version``
(``qmd --version``), ``config.path``, ``diagnosis.checked_at/expires_at/expired``. The header is rendered
from the report and the App's clock: the App's one-second tick calls :meth:`ReceiptHeader.tick`, which
repaints a line only when its text changes — so "the lease ended 17 min ago" keeps its age true (a human
duration, never raw seconds) and costs one line per tick at most.
"""

from __future__ import annotations

from datetime import datetime

from textual.events import Resize

from clawprobe.tui.state import AgentView, DashboardReport, place
from clawprobe.tui.widgets.fit import cells, cells_plain, clip_middle, clip_words, cut_path, fit_paths, floor
from clawprobe.tui.widgets.fmt import dur, e, hms
from clawprobe.tui.widgets.pane import ReportLines

MIN_REST = 8  #: fewest cells an explanation after the state's head word is cut to (below: dropped)
MIN_AGENT = 8  #: fewest cells the agent id on line 1 is cut to (in its middle, its tail kept)


def era(view: AgentView) -> str:
    """``QMD era`` (≤ 2026.7.x, has the QMD backend), ``builtin-only era`` (2026.8.1+), or ``era ?``."""
    has = view.receipt.openclaw.has_qmd_backend
    return "QMD era" if has else ("builtin-only era" if has is False else "era ?")


def line_source(report: DashboardReport) -> str:
    """Left part of line 1: LIVE / DEMO n/N name / REPLAY."""
    if report.source == "demo":
        num = (report.scenario or "").split(" ")[0]
        return f"[reverse] DEMO {e(num)} [/]"
    if report.source == "replay":
        return "[reverse] REPLAY [/]"
    return "[reverse] LIVE [/]"


def expired_text(view: AgentView, now: datetime) -> str:
    """Why the receipt expired, decided at ``now`` by :meth:`clawprobe.core.expiry.Expiry.at` (its age is
    computed now, not when the flip was noticed): the lease end and any input change, joined by ``; ``."""
    x = view.diagnosis.expiry.at(now)
    why = [c.line for c in x.changes]
    if x.lease_ended and x.lease_ends_at is not None:
        why.insert(0, f"the lease ended {dur((now - x.lease_ends_at).total_seconds())} ago")
    return "; ".join(why) or "expired"


def change_text(view: AgentView, now: datetime) -> str:
    """The input change a re-probe measured against the receipt shown before (``view.superseded``, decided by
    :func:`clawprobe.core.expiry.superseded`): ``01:02:03Z config hash 3f2a1b9c… → 9c1d2e3f…: the receipt
    before expired then`` — the time first, so 80 columns show when and what; empty before any change."""
    x = view.superseded
    if x is None or not x.changes:
        return ""
    return f"{hms(x.compared_with, now)} {'; '.join(c.brief for c in x.changes)}: the receipt before expired then"


def lease_state(view: AgentView, now: datetime) -> tuple[str, str]:
    """The receipt's lease state as (head markup, plain rest): the head is always shown (``EXPIRED``,
    ``no lease``, ``valid until 03:05:00Z``, ``lease ended 02:54:59Z``, ``not valid yet`` while the proving
    lanes run), the rest says why and may be cut."""
    d = view.diagnosis
    if view.checking:  # the proving lanes still run (the banner says checking): nothing is valid until they end
        return "not valid yet", ": checking, the verdict is not proven"
    if d.expired:
        return "[reverse] EXPIRED [/]", " " + expired_text(view, now)
    if d.expiry.claim == "none":
        return "no lease", ": nothing proved the index current"
    if d.expiry.claim == "ended":
        return f"lease ended {hms(d.expires_at, now)}", ", before the check"
    return f"valid until {hms(d.expires_at, now)}", ""


def state_line(view: AgentView, now: datetime, width: int | None) -> str:
    """Line 2 as markup: ``valid until … · checked … · config PATH``, fitted to ``width`` (``None``: whole).
    The config path comes before the other words: ``checked …`` goes first, then the path is cut in the middle
    down to ``/tmp/…/.openclaw/openclaw.json`` (:func:`clawprobe.tui.widgets.fit.cut_path`) while the state's
    explanation needs the room, then that explanation is cut; only beside the state's head word (which always
    stays) is the path cut further."""
    head, rest = lease_state(view, now)
    checked = f" · checked {hms(view.diagnosis.checked_at, now)}"
    path = view.receipt.config.path or "?"
    whole = f"{head}{e(rest)}{checked} · config {e(path)}"
    if width is None or cells(whole) <= width:
        return whole
    room = width - cells(f"{head} · config ")
    path = cut_path(path, max(min(room, floor(path)), room - cells_plain(rest)))
    tail = f" · config {e(path)}"
    room = width - cells(head + tail)
    rest = rest if cells_plain(rest) <= room else (clip_words(rest, room) if room >= MIN_REST else "")
    return f"{head}{e(rest)}{tail}"


def source_line(report: DashboardReport, view: AgentView, now: datetime, width: int | None) -> str:
    """Line 1 as markup: ``DEMO n/N · agent ID (i/N, a: next) · [CLI ran …] · OpenClaw V (era) · qmd V``,
    fitted to ``width`` (``None``: whole). What gives way first is what the screen says elsewhere or the
    version implies: the ``a: next`` hint (the footer has ``a``), the word ``ran`` of ``CLI ran HH:MM:SSZ``,
    then the era (read from the version); then the agent id is cut in its middle, its tail kept (as in the
    agents overview). The agent's place (i/N), the CLI lane's time and both versions stay."""
    r = view.receipt
    n = len(report.agents)
    where = f"{place(report, now)}/{n}" if n > 1 else ""  # in the worst-first order ``a`` walks
    qmd = f"qmd {e(r.qmd.version)}" if r.qmd.version else ("qmd ?" if r.config.configured_backend == "qmd" else "")

    def line(agent_id: str, hint: bool, with_era: bool, ran: str = "ran ") -> str:
        agent = f"agent [b]{e(agent_id)}[/b]" + (f" ({where}{', a: next' if hint else ''})" if where else "")
        lane = ""
        if report.source == "live":  # the openclaw CLI lane, at the top where it is visible at 80×24
            lane = f"CLI {ran}{hms(view.slow_at, now)}" if view.slow_at else "CLI checking…"
        oc = f"OpenClaw {e(r.openclaw.version or '?')}" + (f" ({era(view)})" if with_era else "")
        return " · ".join(x for x in (line_source(report) + " " + agent, lane, oc, qmd) if x)

    for hint, with_era, ran in ((True, True, "ran "), (False, True, "ran "), (False, True, ""), (False, False, "")):
        cand = line(r.agent_id, hint, with_era, ran)
        if width is None or cells(cand) <= width:
            return cand
    room = cells_plain(r.agent_id) - (cells(cand) - width)
    return line(clip_middle(r.agent_id, max(MIN_AGENT, room)), False, False, "")  # the Static cuts what is left


def header_lines(report: DashboardReport, now: datetime | None = None, width: int | None = None
                 ) -> tuple[str, str, str, str]:
    """(line 1, line 2, change line, note) as markup — pure, from the report, ``now`` (default: the time the
    report was evaluated at) and the header's ``width`` in cells (``None``: nothing fitted). The change
    line (``CHANGED …``, :func:`change_text`) is its own line, so the config path on line 2 stays."""
    view = report.current
    if view is None:
        return line_source(report) + " no agent", "", "", e(fit_paths(report.note or "", width))
    now = now or report.evaluated_at
    l1 = source_line(report, view, now, width)
    changed = change_text(view, now)
    change = f"[reverse] CHANGED [/] {e(changed)}" if changed else ""
    note = report.note or ""
    if report.source == "demo" and report.scenario_title:  # the scenario in words, never its slug
        note = f"{report.scenario_title} — {note}" if note else report.scenario_title
    return l1, state_line(view, now, width), change, e(fit_paths(note, width))


class ReceiptHeader(ReportLines):
    """Two lines (plus the change line while an input change is in effect, and a note line from 30 rows)
    at the top of the dashboard, fitted to its width (refitted when that changes)."""

    LINE_IDS = ("header-1", "header-2", "header-change", "header-note")

    def lines(self, report: DashboardReport | None) -> tuple[str, ...]:
        if report is None:
            return "[reverse] clawprobe [/] probing…", "", "", ""
        width = (self.content_size.width if self.is_mounted else 0) or None
        return header_lines(report, self.app.clock() if self.is_attached else None, width)  # type: ignore[attr-defined]

    def on_resize(self, event: Resize) -> None:
        self.watch_report(self.report)

    def tick(self) -> None:
        """Re-render at the clock's now (the App's 1 s tick); unchanged lines are not repainted."""
        self.watch_report(self.report)

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        return {"-expired": bool(report and report.current and report.current.diagnosis.expired)}
