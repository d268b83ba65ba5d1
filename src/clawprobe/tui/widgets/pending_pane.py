"""Pane 4 — pending embeddings: pending / total with a progress bar, whether ``qmd embed`` runs (pid), the
rate while the count moves, and ``n/a`` in ``search`` mode (BM25 needs no vectors — spec §2).

Sources: ``vectors`` of the receipt (QMD ``index.sqlite`` read ``mode=ro`` with QMD's own pending rule,
the ``.qmd-embed.lock`` pid, the model cache); the rate comes from two successive receipts
(``clawprobe.tui.state.embed_rate``).
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.widgets import ProgressBar, Static

from clawprobe.core.durations import human_ages
from clawprobe.core.view import Fact, agent_facts, mode_rows
from clawprobe.tui.state import AgentView, DashboardReport
from clawprobe.tui.widgets.fmt import dur, e, mark, size
from clawprobe.tui.widgets.pane import Pane, set_text


class PendingPane(Pane):
    """Pending embeddings for the active model, with a progress bar."""

    NUMBER = 4
    TITLE = "Embeddings"
    HELP = ("Documents still waiting for vectors for the active embedding model and fingerprint (QMD's own "
            "rule, read from index.sqlite read-only). vsearch and query need 0 pending; search (BM25) does "
            "not use vectors, so pending is shown as n/a there — never as a failure. The rate appears while "
            "the count drops between probes; the pid while qmd embed holds its lock.")

    def compose(self) -> ComposeResult:
        yield Static(id="pending-head", classes="pane-body")
        yield ProgressBar(id="pending-bar", total=100, show_eta=False, show_percentage=True)
        yield Static(id="pending-body", classes="pane-body")

    def refresh_body(self) -> None:
        if not self.is_mounted:
            return
        view = self.report.current if self.report else None
        head = self.query_one("#pending-head", Static)
        bar = self.query_one("#pending-bar", ProgressBar)
        body = self.query_one("#pending-body", Static)
        if view is None or self.report is None:
            set_text(head, self.empty_body())
            bar.display = False
            set_text(body, "")
            return
        fact = self.fact(view)
        set_text(head, mark(fact.state, fact.words))
        v = view.receipt.vectors
        if v.documents and v.pending is not None and view.receipt.config.configured_backend == "qmd":
            bar.display = True
            if (bar.total, bar.progress) != (v.documents, max(0, v.documents - v.pending)):
                bar.update(total=v.documents, progress=max(0, v.documents - v.pending))
            bar.set_class(fact.state != "ok", "-na")  # green only when the diagnosis calls the vectors ready
        else:
            bar.display = False
        set_text(body, self.body(view, self.report, self.now()))

    def fact(self, view: AgentView) -> Fact:
        """The pending fact as the diagnosis judges it (:func:`clawprobe.core.view.agent_facts`)."""
        return agent_facts(view.receipt, view.diagnosis).pending  # pending does not depend on the clock

    def head(self, view: AgentView) -> str:
        """The first line: the pending fact (markup)."""
        f = self.fact(view)
        return mark(f.state, f.words)

    def body(self, view: AgentView, report: DashboardReport, now: datetime) -> str:
        v = view.receipt.vectors
        lines = []
        if v.embed_running_pid:
            rate = f" · {view.embed_rate:.1f} docs/s" if view.embed_rate else ""
            eta = (f" · ~{dur(v.pending / view.embed_rate)} to go"
                   if view.embed_rate and v.pending else "")
            lines.append(f"embed running (pid {v.embed_running_pid}){rate}{eta}")
        elif view.receipt.config.configured_backend == "qmd" and view.receipt.config.error is None:
            rate = f" · {view.embed_rate:.1f} docs/s" if view.embed_rate else ""
            lines.append(f"embed not running{rate}")
        if v.has_vector_table is False:
            lines.append("no vector store (never embedded)")
        if v.missing_models:
            own = next((m for m in mode_rows(view.receipt, view.diagnosis) if m.configured), None)
            if own is not None and own.cells[2].state == "fail":
                lines.append(mark("fail", own.cells[2].reason))
            else:  # the configured mode does not load them: a fact about a switch, not a fault
                lines.append("[$foreground-muted]not downloaded (not needed now): "
                             + ", ".join(e(m) for m in v.missing_models) + "[/]")
        if v.detail:
            lines.append(e(human_ages(v.detail)))
        if v.embed_model:
            lines.append(f"[$foreground-muted]model {e(v.embed_model)}"
                         + (f" · fp {e(v.fingerprint)}" if v.fingerprint else "") + "[/]")
        if v.vector_rows is not None:
            extra = f" · {v.orphans} orphaned" if v.orphans else ""
            idx = f" · index {size(v.index_bytes)}" if v.index_bytes is not None else ""
            lines.append(f"[$foreground-muted]{v.vector_rows} vector rows{extra}{idx}[/]")
        return "\n".join(lines)
