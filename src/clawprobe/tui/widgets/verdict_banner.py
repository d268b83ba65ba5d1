"""The verdict banner: the verdict in words and colour, the rule that fired (its place in the precedence
ladder), the exit code, the sub-reason, and one evidence line — readable without colour (glyph + words).

Source: ``clawprobe.core.diagnosis.diagnose`` (``verdict``, ``title``, ``rule``, ``reason``, ``evidence``,
``warnings``). An expired receipt is prefixed EXPIRED: the verdict held at check time, not now.

The lines are fitted to the banner's width (:func:`fit_verdict`): the level word (``✗ FAILING``), the rule
number and the exit code are always shown; the title is shortened first (its parenthesis dropped), then
the sub-reason and title are cut with ``…``. The level word is bold in its level's colour (``$error`` for
``✗ FAILING``): the verdict is the strongest colour on screen. The evidence line keeps its
``(+N more in pane 6)``.

While the proving lanes of a live start still run (``AgentView.checking``: the qmd binary check, the
``openclaw`` CLI) the banner shows no verdict — one that may flip when they end — but ``… CHECKING`` with
each lane's elapsed time (:func:`checking_lines`).
"""

from __future__ import annotations

from datetime import datetime

from textual.events import Resize

from clawprobe.core.diagnosis import Diagnosis, claim_exit_code
from clawprobe.core.durations import human_ages, human_duration
from clawprobe.core.view import RULE_COUNT, reason_words
from clawprobe.tui.state import ELSEWHERE, LOCATING, READING, DashboardReport
from clawprobe.tui.widgets.fit import cells, clip, fit_paths
from clawprobe.tui.widgets.fmt import COLOR, LEVEL_WORD, e, level
from clawprobe.tui.widgets.pane import ReportLines

LEVELS = ("ok", "warn", "unknown", "fail")
EXPIRED = "[reverse] EXPIRED [/] "
MIN_MIDDLE = 10  #: fewest cells the title/reason part is cut to before the rule text shrinks


def short_title(title: str) -> str:
    """The title without its explanatory parenthesis: ``Fallback active (builtin answers, not QMD)`` →
    ``Fallback active``."""
    return title.split(" (", 1)[0]


def fit_verdict(d: Diagnosis, lv: str, width: int | None) -> str:
    """The verdict line as markup, fitted to ``width`` cells (``None``: no limit). Candidates from the most
    to the least complete; the first that fits wins (see the module docstring)."""
    expired = ""
    word = LEVEL_WORD[lv]
    if d.expired and lv != "fail":  # the claim no longer holds: never a ✓ beside EXPIRED (said once)
        word = "⚠ EXPIRED"
        d = d.model_copy(update={"title": f"was {short_title(d.title)} at check", "reason": None})
    elif d.expired:
        expired = EXPIRED
    d = d.model_copy(update={"reason": reason_words(d.reason, d.verdict)})  # words, not the raw tag
    if short_title(d.title).lower() in word.lower():  # "✓ HEALTHY  Healthy": said once
        d = d.model_copy(update={"title": ""})
    n = RULE_COUNT  # the rule by number only: the title already says the verdict (never its id again)
    code = claim_exit_code(d)  # what q exits with: an expired healthy claim is not 0 (core.diagnosis)
    rights = (f"rule {d.rule}/{n} · exit {code}",
              f"{d.rule}/{n} · exit {code}")
    titles = (d.title, short_title(d.title))

    def line(title: str, reason: str | None, right: str) -> str:
        tag = (f" · {e(reason)}" if title else f"  {e(reason)}") if reason else ""
        mid = (f"  [b]{e(title)}[/b]" if title else "") + tag
        return f"{expired}[b {COLOR[lv]}]{word}[/]{mid}  [dim]{right}[/]"

    tries = [(t, d.reason, rights[0]) for t in titles] + [(titles[1], None, rights[0])]
    for title, reason, right in tries:
        cand = line(title, reason, right)
        if width is None or cells(cand) <= width:
            return cand
    for right in rights:
        room = width - cells(line("", None, right)) - 2
        if room >= MIN_MIDDLE or right is rights[-1]:
            whole = clip(titles[1] + (f" · {d.reason}" if d.reason else ""), room)
            title, _, reason = whole.partition(" · ")
            return line(title, reason or None, right)
    return line("", None, rights[-1])  # pragma: no cover - the loop always returns


def fit_evidence(text: str, extra: int, width: int | None) -> str:
    """``evidence: TEXT (+N more in pane 6)`` as markup (``extra`` = N), ``TEXT`` cut so the suffix stays
    visible; where even that leaves too little room the suffix shrinks to ``(+N)``. A path in ``TEXT`` is cut in
    the middle first (:func:`clawprobe.tui.widgets.fit.fit_paths`), so its file name and ``:line:col`` stay."""
    head = "evidence: "
    more = f" (+{extra} more in pane 6)" if extra else ""
    if width is not None:
        if extra and width - cells(e(head + more)) < MIN_MIDDLE:
            more = f" (+{extra})"
        text = fit_paths(text, max(1, width - cells(e(head + more))))
    return e(f"{head}{text}{more}")


CHECKING = "… CHECKING"


def checking_lines(lanes: dict[str, datetime], now: datetime, width: int | None) -> tuple[str, str, str]:
    """(line, evidence line, level) while proving lanes run: ``… CHECKING  qmd binary 1 s · openclaw CLI 3 s``
    (elapsed since each started, at ``now``); the second line says what the panes show meanwhile."""
    parts = " · ".join(f"{e(lane)} {human_duration(max(0.0, (now - t0).total_seconds()))}"
                       for lane, t0 in sorted(lanes.items(), key=lambda kv: kv[1]))
    line = f"[b]{CHECKING}[/b]  {parts}  [dim]verdict when they end[/]"
    if width is not None and cells(line) > width:
        line = f"[b]{CHECKING}[/b]  {parts}"
    note = "panes: what the config and the index say; the verdict waits for these lanes"
    return line, e(clip(note, width) if width else note), "unknown"


def banner_lines(report: DashboardReport, width: int | None = None, now: datetime | None = None
                 ) -> tuple[str, str, str]:
    """(verdict line, evidence line, level) as markup — pure, from the report (and the banner's width;
    ``now``, default the report's evaluation time, for the elapsed time of lanes still checking)."""
    view = report.current
    if view is not None and view.checking:
        return checking_lines(view.checking, now or report.evaluated_at, width)
    if view is None:
        if report.source == "live" and report.note in (LOCATING, READING):  # nothing measured yet
            return f"[b]{CHECKING}[/b]  {e(report.note or '')}", "", "unknown"
        if report.missing is not None:  # the reason is in pane 1; here what to do instead, once
            return "[b]? NO OPENCLAW[/b]  nothing to probe on this host  [dim]exit 3[/]", \
                e(clip(ELSEWHERE, width) if width else ELSEWHERE), "unknown"
        return "? UNPROVEN  no agent to diagnose", e(report.note or ""), "unknown"
    d = view.diagnosis
    lv = level(d.verdict)
    if d.expired and lv != "fail":
        lv = "warn"
    ev = human_ages(d.evidence[0]) if d.evidence else ""
    if d.warnings and d.verdict.value == "healthy":
        ev = f"⚠ {reason_words(d.warnings[0].tag)}: {d.warnings[0].message}"
    return fit_verdict(d, lv, width), fit_evidence(ev, max(0, len(d.evidence) - 1), width), lv


class VerdictBanner(ReportLines):
    """The verdict in two lines; CSS class ``-ok``/``-warn``/``-unknown``/``-fail`` sets its colour. The
    lines are refitted when the banner's width changes."""

    LINE_IDS = ("verdict-line", "verdict-evidence")

    def _width(self) -> int | None:
        w = self.content_size.width if self.is_mounted else 0
        return w or None

    def _now(self) -> datetime | None:
        return self.app.clock() if self.is_attached else None  # type: ignore[attr-defined]

    def lines(self, report: DashboardReport | None) -> tuple[str, ...]:
        return banner_lines(report, self._width(), self._now())[:2] if report is not None else (
            "? UNPROVEN  probing…", "")

    def tick(self) -> None:
        """Re-render at the clock's now (the App's 1 s tick while lanes are checking)."""
        self.watch_report(self.report)

    def classes_for(self, report: DashboardReport | None) -> dict[str, bool]:
        lv = banner_lines(report)[2] if report is not None else "unknown"
        out = {f"-{name}": name == lv for name in LEVELS}
        out["-expired"] = bool(report and report.current and report.current.diagnosis.expired)
        return out

    def on_resize(self, event: Resize) -> None:
        self.watch_report(self.report)
