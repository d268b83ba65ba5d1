"""Pane 1 — effective backend: configured vs effective, and how the effective one was proven.

Sources shown: ``config`` (the OpenClaw config file), ``backend.evidence`` (``openclaw memory status
--json``, the stderr fallback line, log lines, the search-result shape) with their times, ``qmd``
(resolution from the gateway's PATH and a store command), ``gateway`` (process table), and every
``status_claims`` disagreement: the verdict follows the measurement, never the tool's own status text — and
the evidence ledger's unrecognized lines (read this; clawprobe cannot judge it) and benign lines (with why).
A config that does not load has no configured backend or mode: they read unknown, never a default.
"""

from __future__ import annotations

from datetime import datetime

from textual.events import Resize

from clawprobe.core.durations import human_ages
from clawprobe.core.ledger_shown import shown as ledger_shown
from clawprobe.core.view import GateRow, agent_facts, not_served
from clawprobe.core.words import reason_words
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fit import cut_paths
from clawprobe.tui.widgets.fmt import e, hms, mark, yes_no
from clawprobe.tui.widgets.pane import Pane


def gate_lines(gates: tuple[GateRow, ...]) -> list[str]:
    """The builtin readiness gates in one line (``gates ✓ 5 pass · ? 1 not measured``), then one line per
    failing gate with its short words (the full words are in ``check``); nothing when no gate was measured
    (a receipt recorded before the gates existed)."""
    if not any(g.state in ("ok", "fail") for g in gates):
        return []
    counts = {st: sum(g.state == st for g in gates) for st in ("ok", "unknown", "na")}
    parts = [mark(st, f"{n} {word}") for st, word in (("ok", "pass"), ("unknown", "not measured"), ("na", "n/a"))
             if (n := counts[st])]
    fails = [g for g in gates if g.state == "fail"]
    head = "gates " + " · ".join(([mark("fail", f"{len(fails)} fail")] if fails else []) + parts)
    return [head] + [f"  {mark('fail', g.name)} {e(g.short)}" for g in fails]


class BackendPane(Pane):
    """Configured vs effective backend, with the proof for the effective one."""

    NUMBER = 1
    TITLE = "Backend"
    HELP = ("Configured backend (from the config file) versus the backend OpenClaw really used, with the "
            "evidence: `openclaw memory status --json`, the stderr line `qmd binary unavailable … falling "
            "back to builtin`, gateway log lines, or the shape of search hits. When a tool's own status "
            "disagrees with the measurement, both are shown and the verdict follows the measurement.")

    def missing_body(self, why: str) -> str:
        """No OpenClaw here: why discovery found none (the state dir, config, gateway and PATH it looked at),
        whole — the one place the reason is written. A path in it is cut in the middle to the pane's width
        (:func:`clawprobe.tui.widgets.fit.cut_paths`): a long home's state dir would otherwise wrap over the
        pane and push "no config, no running gateway, no openclaw" below its fold at 80×24."""
        return f"[$warning]?[/] {e(cut_paths(why, self.fold_width()))}"

    def on_resize(self, event: Resize) -> None:
        # the width a path is cut to changed: after this layout pass (see ActionPane.on_resize)
        self.call_after_refresh(self.refresh_body)

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        r = view.receipt
        lines: list[str] = []
        conf = r.config.configured_backend
        eff = r.backend.effective
        loads = r.config.error is None
        if not loads:  # backend and mode are then the model's defaults, not what the operator configured
            lines.append("configured " + mark("unknown", "unknown: the config does not load (pane 6)"))
        else:
            lines.append(f"configured [b]{conf}[/b]" + (f" · mode {r.config.search_mode}" if conf == "qmd" else ""))
        # key facts first (configured, effective, the engine's own state), then the proof lines: at 80×24
        # the pane shows six lines without scrolling
        if eff is None:
            lines.append("effective  " + mark("unknown", "not measured yet"))
        elif not loads:
            lines.append("effective  " + mark("unknown", f"{eff} (measured; nothing to compare with)"))
        elif eff == conf:
            lines.append("effective  " + mark("ok", f"{eff} (as configured)"))
        else:
            lines.append("effective  " + mark("fail", f"{eff} (FALLBACK)"))
        for le in ledger_shown(r):  # the evidence ledger: what no rule explains, and what is listed as harmless
            if le.kind == "unrecognized":
                lines.append(mark("unknown", "unrecognized") + f" {e(le.line)}{le.count} [$foreground-muted]"
                             f"({e(le.where)})[/] — read this; clawprobe cannot judge it")
            else:
                lines.append(mark("na", "benign") + f" {e(le.line)}{le.count} [$foreground-muted]({e(le.why or '')})[/]")
        if conf == "qmd" or (not loads and (r.qmd.resolves is not None or r.qmd.version)):
            q = r.qmd
            where = e(q.resolved_path or q.command or "qmd")
            ver = f" {e(q.version)}" if q.version else ""
            idle = not_served(r) is not None  # a binary that works proves nothing while QMD is not serving
            lines.append(f"qmd{ver}: resolves " + yes_no(q.resolves, idle=idle) + " · store "
                         + yes_no(q.store_ok, idle=idle) + f" [$foreground-muted]{where}[/]")
            if q.failure_detail:
                lines.append(f"  {e(q.failure_detail)}")
        elif loads:
            b = r.builtin
            prov = b.provider_resolved or r.config.provider or "unset"
            kw = ""
            if b.fts_only:  # measured: by choice (provider none) it is not needed, otherwise it is a fault
                kw = " · " + (mark("na", "keyword-only by choice") if (r.config.provider or "").lower() == "none"
                              else mark("fail", "keyword-only"))
            lines.append(f"provider {e(r.config.provider or 'unset')} → {e(prov)}{kw}")
            lines += gate_lines(agent_facts(r, view.diagnosis).gates)
        if r.backend.fallback_at is not None:
            lines.append(f"fallback seen {hms(r.backend.fallback_at, now)}"
                         + (f" · {e(reason_words(r.backend.fallback_reason) or '')}" if r.backend.fallback_reason
                            else ""))
        for ev in r.backend.evidence[:3]:
            when = f" @ {hms(ev.at, now)}" if ev.at else ""
            lines.append(f"proof: {e(human_ages(ev.detail))} [$foreground-muted]({e(ev.source)}{when})[/]")
        if not r.backend.evidence and eff is not None:
            lines.append("[$foreground-muted]proof: no evidence line recorded[/]")
        for c in r.status_claims:
            if not c.agrees:
                lines.append(mark("unknown", "disagreement") + f" {e(c.tool)} says \"{e(c.claim)}\", measured "
                             f"\"{e(c.measured)}\" — the verdict follows the measurement")
        g = r.gateway
        if g.running is not None:
            state = f"running pid {g.pid}" if g.running and g.pid else ("running" if g.running else "not running")
            src = f" · PATH from {g.env_source}" if g.env_source else ""
            lines.append(f"gateway {state}{src}" + (f" · reload {e(g.reload_mode)}" if g.reload_mode else ""))
        if report.source == "live":
            lines.append("openclaw CLI: " + (f"ran {hms(view.slow_at, now)}" if view.slow_at
                                             else mark("unknown", "not run yet")))
        return "\n".join(lines)
