"""The repair walkthrough screen: the current verdict's steps, the exact command for this agent/install,
Verify (re-probe + check the step's condition, then advance; the walk follows verdict changes), Run (only
allow-listed OpenClaw commands, after a confirm modal, output streamed live, cancellable), and a record of
everything under clawprobe's data dir.

Keys: ``enter``/``v`` verify · ``y`` copy the command (OSC 52) · ``x`` run it (confirm first) · ``d`` mark a
manual step done · ``s`` skip · ``c`` cancel a running command · ``esc`` back. All state lives in
``clawprobe.core.walk.Walk``; this screen only renders it and calls core.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from rich.cells import cell_len
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer, Log, Static

from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import printable
from clawprobe.core.walk import DEFAULT_RUN_TIMEOUT_S, Walk, WalkStep, abandon, mark_done, operator_name, run_step, skip, start_walk, verify
from clawprobe.core.walk_log import save_walk
from clawprobe.core.walk_run import NotAllowed, RunOutcome
from clawprobe.core.words import headline, verdict_words
from clawprobe.styles import style_file
from clawprobe.tui.screens.confirm import ConfirmScreen
from clawprobe.tui.widgets.action_pane import PROMPT, command_line
from clawprobe.tui.widgets.fit import cut_path
from clawprobe.tui.widgets.fmt import e as escape  # escapes every '[' and a trailing backslash (rich's escape does not)

Reprobe = Callable[[], "tuple[Receipt, Diagnosis]"]
MARKS = {"passed": "[$success]✓[/]", "done_by_operator": "[$success]✓[/]", "failed": "[$error]✗[/]",
         "skipped": "[$foreground-muted]–[/]", "current": "[$accent]▶[/]", "pending": " "}


def step_markup(step: WalkStep, width: int | None = None) -> str:
    """The detail of one step: what to check, the exact command (one line, never wrapped: cut with ``…`` to
    ``width`` cells; ``y`` copies it whole), how it is verified, last results."""
    out = [f"[b]{step.index + 1}. {escape(step.title)}[/b]", escape(step.check), ""]
    if step.command:
        shown = command_line(step.command, width - 2 if width else None)[len(PROMPT):]  # "$ " + " cmd " = width
        out.append(f"[b]$[/b] [reverse] {escape(shown)} [/]")
        if step.allowed:
            out.append("[$foreground-muted]x runs it (after you confirm) · y copies it[/]")
        else:
            out.append(f"[$foreground-muted]y copies it · {escape(step.refused or 'run it yourself')}[/]")
        out.append("")
    out.append(f"[b]Proves it worked:[/b] {escape(step.verify_text)}")
    by_kind = {r.kind + r.text: r for r in step.last_results}
    for c in step.conditions:
        r = by_kind.get(c.kind + c.text)
        if c.kind == "manual":
            mark, detail = "[$warning]?[/]", "no probe can check this — press d when done"
        elif r is None:
            mark, detail = "·", "press Enter to verify"
        else:
            mark = "[$success]✓[/]" if r.holds else "[$error]✗[/]" if r.holds is False else "[$warning]?[/]"
            detail = r.detail
        out.append(f" {mark} {escape(c.text)} [$foreground-muted]({escape(detail)})[/]")
    return "\n".join(out)


class WalkthroughScreen(Screen[Walk]):
    """``WalkthroughScreen(diagnosis, receipt, reprobe)``; dismisses with the recorded :class:`Walk`.

    ``reprobe`` returns a fresh ``(Receipt, Diagnosis)`` for the same agent (it blocks; it runs in a thread
    worker). When omitted, the App's ``walk_reprobe(agent_id)`` is used if it has one. ``openclaw`` is the
    discovered OpenClaw CLI, a path or an argv prefix (``ProbeContext.openclaw``; allow-list by exact match), ``env``
    the environment step commands start from (reduced to PATH/HOME/OPENCLAW_*; default: clawprobe's own), ``data_root``
    overrides the data dir (``CLAWPROBE_DATA_DIR`` rule otherwise), ``clock`` returns UTC now (injectable). For compatibility the
    first two arguments may also be given as ``(receipt, diagnosis)``.
    """

    CSS_PATH = [style_file("walkthrough.tcss")]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("enter", "verify", "Verify", priority=True),
        Binding("v", "verify", "Verify", show=False),
        Binding("y", "copy", "Copy cmd"),
        Binding("x", "run", "Run"),
        Binding("d", "done", "Done"),
        Binding("s", "skip", "Skip", show=False),
        Binding("c", "cancel", "Cancel run", show=False),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, diagnosis: Diagnosis | Receipt, receipt: Receipt | Diagnosis,
                 reprobe: Reprobe | None = None, *, openclaw: str | Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None, data_root: str | None = None, operator: str | None = None,
                 run_timeout_s: float = DEFAULT_RUN_TIMEOUT_S, cwd: str | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        if isinstance(diagnosis, Receipt) and isinstance(receipt, Diagnosis):
            diagnosis, receipt = receipt, diagnosis
        assert isinstance(diagnosis, Diagnosis) and isinstance(receipt, Receipt)
        self.diagnosis, self.receipt = diagnosis, receipt
        self._reprobe = reprobe
        self.openclaw = openclaw
        self.env = dict(env) if env is not None else dict(os.environ)
        self.data_root = data_root
        self.operator = operator or operator_name()
        self.run_timeout_s = run_timeout_s
        self.cwd = cwd
        self.clock = clock or (lambda: datetime.now(UTC))
        self.walk = start_walk(diagnosis, now=self.clock(), operator=self.operator, openclaw=openclaw)
        self.busy: str | None = None
        self._cancel = threading.Event()
        self.last_outcome: Any = None
        self.saved_to: str | None = None

    # ------------------------------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static(id="walk-verdict")
        yield Static(id="walk-transitions")
        with Horizontal(id="walk-body"):
            with VerticalScroll(id="walk-steps"):
                yield Static(id="walk-steps-list")
            with VerticalScroll(id="walk-detail"):
                yield Static(id="walk-detail-body")
        yield Log(id="walk-output", max_lines=500)
        yield Static(id="walk-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#walk-steps").border_title = "Steps"
        self.query_one("#walk-detail").border_title = "Step"
        self.query_one("#walk-output", Log).border_title = "Output"
        self._save()
        self.render_walk()
        self.call_after_refresh(self.render_walk)  # again once laid out: the command and path fit the widths
        self._status("Enter verifies the current step (re-probes) · y copies · x runs allowed commands")

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self.render_walk)  # after the layout pass: a text changed inside it keeps old heights

    def _width(self, selector: str, reserve: int = 0) -> int | None:
        """Cells a line of the widget at ``selector`` may take (``None`` before layout); ``reserve`` keeps
        columns free (a scrollbar that may appear)."""
        w = self.query_one(selector).content_region.width - reserve
        return w if w > 0 else None

    def render_walk(self) -> None:
        """Repaint everything from ``self.walk``."""
        w = self.walk
        state = {"resolved": " · [$success]RESOLVED[/]", "abandoned": " · abandoned"}.get(w.status, "")
        self.query_one("#walk-verdict", Static).update(
            f"[b]{escape(headline(w.verdict, w.reason))}[/b] — {escape(w.title)}{state}")
        trans = " → ".join(verdict_words(v) for v in [w.start_verdict] + [t.to_verdict for t in w.transitions])
        head = f"walk: {trans} · agent {w.agent_id} · operator {w.operator}"
        if self.saved_to:
            room = self._width("#walk-transitions")
            room = None if room is None else max(12, room - cell_len(head + " · saved "))  # the path on the first line
            head += f" · saved {self.saved_to if room is None else cut_path(self.saved_to, room)}"
        self.query_one("#walk-transitions", Static).update(f"[$foreground-muted]{escape(head)}[/]")
        lines = [f"{MARKS[s.status]} {s.index + 1}. {escape(s.title)}" for s in w.steps]
        if not w.steps:
            lines = ["[$success]Nothing left to repair.[/]" if w.status == "resolved" else "(no steps)"]
        self.query_one("#walk-steps-list", Static).update("\n".join(lines))
        step = w.step
        if step is not None:
            body = step_markup(step, self._width("#walk-detail", reserve=1))
        elif w.status == "resolved":
            body = "[$success][b]Healthy.[/b][/] Every gate passed at the last probe; the walk is resolved."
        else:
            body = "All steps done. Enter re-probes; Esc goes back."
        self.query_one("#walk-detail-body", Static).update(body)

    def _status(self, text: str, kind: str = "") -> None:
        st = self.query_one("#walk-status", Static)
        st.update(text)
        for k in ("-pass", "-fail", "-busy"):
            st.set_class(k == kind, k)

    def _save(self) -> None:
        try:
            self.saved_to = str(save_walk(self.walk, self.data_root))
        except OSError as e:
            self.saved_to = None
            self.notify(printable(f"could not record the walk: {e.strerror or e}"), severity="warning", timeout=5, markup=False)

    # ------------------------------------------------------------------------------------------ verify
    def _reprobe_fn(self) -> Reprobe | None:
        if self._reprobe is not None:
            return self._reprobe
        fn = getattr(self.app, "walk_reprobe", None)
        if fn is None:
            return None
        agent = self.walk.agent_id
        return lambda: fn(agent)

    def action_verify(self) -> None:
        if self.busy:
            self._status(f"busy: {self.busy} …", "busy")
            return
        fn = self._reprobe_fn()
        if fn is None:
            self._status("no re-probe available here: run `clawprobe check` and come back", "fail")
            return
        self.busy = "re-probing"
        self._status("re-probing (Verify) …", "busy")
        self._verify_worker(fn)

    @work(thread=True, exclusive=True, group="walk-verify", exit_on_error=False, description="walk verify")
    def _verify_worker(self, fn: Reprobe) -> None:
        try:
            receipt, diagnosis = fn()
        except Exception as e:  # the probe's own failure is shown, never a traceback
            self.app.call_from_thread(self._verify_failed, f"{type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._verified, receipt, diagnosis)

    def _verify_failed(self, why: str) -> None:
        self.busy = None
        self._status(f"re-probe failed: {escape(why)}", "fail")

    def _verified(self, receipt: Receipt, diagnosis: Diagnosis) -> None:
        self.busy = None
        self.receipt, self.diagnosis = receipt, diagnosis
        step_title = self.walk.step.title if self.walk.step else None
        out = verify(self.walk, lambda: (receipt, diagnosis), clock=self.clock, openclaw=self.openclaw)
        self.last_outcome = out
        self._save()
        self.render_walk()
        words = {"pass": ("✓ verified — next step", "-pass"), "fail": ("✗ not yet: the condition does not hold", "-fail"),
                 "unproven": ("? not proven: the probe did not measure it", ""),
                 "manual": ("no probe can check this step — press d when it is done", ""),
                 "no_step": ("re-probed", "")}
        text, kind = words[out.result]
        if step_title and out.result != "no_step":
            text = f"{escape(step_title)}: {text}"
        if out.transition is not None:
            t = out.transition
            text += f" · verdict changed {verdict_words(t.from_verdict)} → {verdict_words(t.to_verdict)}: the walk follows it"
            kind = "-pass" if self.walk.status == "resolved" else kind
        self._status(text, kind)

    # ------------------------------------------------------------------------------------------ run
    def action_run(self) -> None:
        step = self.walk.step
        if self.busy:
            self._status(f"busy: {self.busy} …", "busy")
            return
        if step is None or not step.command:
            self._status("this step has no command", "fail")
            return
        if not step.allowed:
            why = step.refused or "not allowed"
            said = why if why.startswith("clawprobe ") else f"clawprobe will not run this: {why}"  # said once
            self._status(f"{escape(said)} — y copies it", "fail")
            return
        question = f"Run this command now, as {self.operator}?"
        detail = f"$ {step.command}\n(timeout {self.run_timeout_s:g} s · c cancels · output streams below)"

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_run()
            else:
                self._status("not run", "")

        self.app.push_screen(ConfirmScreen(question, detail), answered)

    def _start_run(self) -> None:
        step = self.walk.step
        assert step is not None
        self.busy = f"running {step.command}"
        self._cancel.clear()
        log = self.query_one("#walk-output", Log)
        log.clear()
        log.add_class("-visible")
        log.write_line(f"$ {step.command}")
        self._status(f"running … (c cancels, timeout {self.run_timeout_s:g} s)", "busy")
        self._run_worker()

    @work(thread=True, exclusive=True, group="walk-run", exit_on_error=False, description="walk run")
    def _run_worker(self) -> None:
        log = self.query_one("#walk-output", Log)
        try:
            out = run_step(self.walk, confirmed_by=self.operator, env=self.env, timeout_s=self.run_timeout_s,
                           cwd=self.cwd, on_line=lambda line: self.app.call_from_thread(log.write_line, line),
                           cancel=self._cancel, clock=self.clock, openclaw=self.openclaw)
        except NotAllowed as e:
            self.app.call_from_thread(self._ran, None, str(e))
            return
        self.app.call_from_thread(self._ran, out, None)

    def _ran(self, out: RunOutcome | None, refused: str | None) -> None:
        self.busy = None
        self._save()
        self.render_walk()
        if out is None:
            self._status(f"refused: {escape(refused or '')}", "fail")
            return
        self.last_outcome = out
        log = self.query_one("#walk-output", Log)
        log.write_line(f"[{out.status}] exit {out.exit_code} after {out.seconds:.1f} s" +
                       (f" — {out.detail}" if out.detail else ""))
        if out.status in ("ok", "failed"):
            self._status(f"command {out.status} (exit {out.exit_code}); verifying …", "busy")
            self.action_verify()
        else:
            self._status(f"command {out.status}: {escape(out.detail or '')}", "fail")

    def action_cancel(self) -> None:
        if self.busy and self.busy.startswith("running"):
            self._cancel.set()
            self._status("cancelling (killing the process tree) …", "busy")

    # ------------------------------------------------------------------------------------------ other keys
    def action_copy(self) -> None:
        step = self.walk.step
        cmd = step.command if step and step.command else self.diagnosis.next_action.command
        if not cmd:
            self._status("no command to copy for this step", "")
            return
        self.app.copy_to_clipboard(cmd)
        self._status(f"copied (OSC 52): {escape(cmd)}", "")

    def action_done(self) -> None:
        if self.busy or self.walk.step is None:
            return
        title = self.walk.step.title
        mark_done(self.walk, confirmed_by=self.operator, clock=self.clock)
        self._save()
        self.render_walk()
        self._status(f"{escape(title)}: marked done by {escape(self.operator)} (recorded)", "")

    def action_skip(self) -> None:
        if self.busy or self.walk.step is None:
            return
        title = self.walk.step.title
        skip(self.walk, clock=self.clock)
        self._save()
        self.render_walk()
        self._status(f"{escape(title)}: skipped (recorded)", "")

    def action_back(self) -> None:
        if self.busy and self.busy.startswith("running"):
            self._cancel.set()
            self._status("cancelling the running command first … (Esc again to leave)", "busy")
            return
        if self.walk.status == "active":
            abandon(self.walk, clock=self.clock, detail="operator left the walkthrough")
        self._save()
        self.dismiss(self.walk)
