"""The repair walkthrough: a walk over ``diagnosis.next_action.steps`` that verifies each step by re-probing.

* Each step carries **verify conditions as data** (:class:`Condition`) that a fresh receipt + diagnosis can
  evaluate: ``qmd_resolves`` (qmd resolves from the gateway environment), ``verdict_not`` (the verdict is no
  longer X), ``pending_zero``, ``proven_current_since_step`` (the index was proven current after the step
  started), ``models_complete``… A step with nothing a probe can check is ``manual``: the operator marks it
  done, and that is recorded with their OS user name.
* :func:`verify` calls the caller's ``reprobe()`` (→ ``(Receipt, Diagnosis)``), evaluates the current step,
  advances when every condition holds, and — whatever the step result — **follows the verdict**: when the
  verdict (or its sub-reason) changed, the walk records the transition and switches to the new verdict's
  steps (``qmd_unavailable`` fixed → now ``stale_index``). A ``healthy`` verdict resolves the walk.
* :func:`run_step` runs the step's command only when the catalog marks it runnable, the allow-list in
  :mod:`clawprobe.core.walk_run` accepts it, and an operator confirmed it; output streams live, the run is bounded
  by a timeout and cancellable (process tree killed).
* Every event is recorded in the :class:`Walk` (step, command, who confirmed, result, times);
  :func:`clawprobe.core.walk_log.save_walk` writes it atomically under clawprobe's data dir.

Pure except :func:`run_step` (runs the command) and :func:`operator_name` (reads the OS user).
"""

from __future__ import annotations

import getpass
import os
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.receipt import Receipt
from clawprobe.core.repairs import RepairStep
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk_run import NotAllowed, RunOutcome, allowed_run, check_allowed, command_env, run_streaming
from clawprobe.core.words import headline, verdict_words

Reprobe = Callable[[], "tuple[Receipt, Diagnosis]"]
Clock = Callable[[], datetime]
DEFAULT_RUN_TIMEOUT_S = 300.0

ConditionKind = Literal[
    "qmd_resolves", "qmd_command_absolute", "qmd_store_ok", "verdict_not", "pending_zero",
    "proven_current_since_step", "unindexed_none", "models_complete", "download_evidence", "backend_is_qmd",
    "canary_found", "canary_planted", "config_valid", "no_drift", "search_mode", "embed_timeout_at_least",
    "index_unlocked", "files_readable", "openclaw_found", "openclaw_runs", "manual",
]


class Condition(BaseModel):
    """A verify condition a probe result can evaluate; ``arg`` parameterises it (a verdict id, a mode…)."""

    model_config = ConfigDict(extra="forbid")
    kind: ConditionKind
    arg: str | None = None
    text: str


class ConditionResult(BaseModel):
    """One evaluated condition: ``holds`` True/False, or ``None`` when the receipt does not measure it
    (or it is ``manual``). ``detail`` cites the receipt field it read."""

    model_config = ConfigDict(extra="forbid")
    kind: ConditionKind
    text: str
    holds: bool | None
    detail: str


def _c(kind: ConditionKind, text: str, arg: str | None = None) -> Condition:
    return Condition(kind=kind, arg=arg, text=text)


_QMD_RESOLVES = _c("qmd_resolves", "qmd resolves from the gateway environment")
_STORE_OK = _c("qmd_store_ok", "a qmd store command works with the agent's XDG dirs")
_INDEXED = [_c("proven_current_since_step", "the index was proven current after this step started"),
            _c("unindexed_none", "no memory file on disk is missing from the index")]
_BACKEND_QMD = _c("backend_is_qmd", "OpenClaw's effective backend is QMD")
_CONFIG_VALID = _c("config_valid", "the config loads and validates")

#: catalog step title → its verify conditions (``Re-probe`` gets "verdict is no longer <walk verdict>").
STEP_CONDITIONS: dict[str, list[Condition]] = {
    "Open the file at the reported position": [_CONFIG_VALID],
    "Fix the key": [_CONFIG_VALID],
    "Validate": [_CONFIG_VALID],
    "Migrate": [_CONFIG_VALID, _c("verdict_not", "the QMD-retired verdict is gone", "backend_retired")],
    "Restart or reload": [_c("no_drift", "the gateway runs the config on disk")],
    "Accept": [_c("verdict_not", "no config drift", "config_drift")],
    "Resolve qmd as the gateway does": [_QMD_RESOLVES],
    "Pin an absolute command": [_c("qmd_command_absolute", "memory.qmd.command is an absolute path"), _QMD_RESOLVES],
    "Install qmd": [_QMD_RESOLVES],  # installed where the gateway runs it (or pinned next): it resolves
    "Pin its absolute path": [_c("qmd_command_absolute", "memory.qmd.command is an absolute path"), _QMD_RESOLVES],
    "Prove a store command works": [_STORE_OK],
    "Run qmd with exactly that PATH": [_QMD_RESOLVES],
    "Fix the unit and restart": [_QMD_RESOLVES, _STORE_OK],
    "Reinstall": [_QMD_RESOLVES, _STORE_OK],
    "Use a PATH lookup": [_QMD_RESOLVES],
    "Disable the transport": [_c("verdict_not", "qmd no longer unavailable", "qmd_unavailable")],
    "Confirm qmd works now": [_STORE_OK],
    "Restart the gateway": [_BACKEND_QMD],
    "Upgrade/restart": [_BACKEND_QMD],
    "Restart": [_BACKEND_QMD],
    "Run the managed update": _INDEXED,
    "Wait for or run the update": _INDEXED,
    "Managed rebuild": [_c("proven_current_since_step", "the index was proven current after this step started")],
    "Let the managed embed finish": [_c("pending_zero", "0 embeddings pending for the active model")],
    "Or drop the dependency": [_c("search_mode", "search mode is BM25 `search`", "search")],
    "Or use BM25": [_c("search_mode", "search mode is BM25 `search`", "search")],
    "Raise the timeout": [_c("embed_timeout_at_least", "memory.qmd.update.embedTimeoutMs ≥ 3600 s", "3600")],
    "Watch the download": [_c("download_evidence", "the model cache was inspected (progress or stall evidence)")],
    "Fetch on a host that can": [_c("models_complete", "every model the mode needs is complete")],
    "Configure": [_c("verdict_not", "no longer keyword-only", "keyword_only")],
    "Read the scope": [_c("verdict_not", "the probe is no longer denied by scope", "scope_denied")],
    "Does the index hold it?": [_c("canary_found", "the canary comes back from its expected path")],
    "Narrow fix": [_c("canary_found", "the canary comes back from its expected path")],
    "Plant": [_c("canary_planted", "a canary file and its hash are recorded")],
    "Fix the index permissions": [_STORE_OK],
    "Wait for it or stop it": [_c("index_unlocked", "a qmd store command no longer finds the index locked")],
    "Make the files readable": [_c("files_readable", "no memory file the index lacks is unreadable")],
    "Warm up the models": [_c("models_complete", "every model the mode needs is complete")],
    "Make the OpenClaw CLI findable": [_c("openclaw_found", "clawprobe finds an `openclaw` executable")],
    "Run the CLI": [_c("openclaw_runs", "the OpenClaw CLI probes ran without an error")],
}
MANUAL = _c("manual", "the operator confirms this step is done")


def conditions_for(step: RepairStep, verdict: Verdict) -> list[Condition]:
    """The verify conditions of a catalog step for a walk at ``verdict`` (``manual`` when none applies)."""
    if step.title == "Re-probe":
        return [_c("verdict_not", f"the verdict is no longer {verdict_words(verdict)}", verdict.value)]
    return list(STEP_CONDITIONS.get(step.title, [MANUAL]))


def evaluate(cond: Condition, r: Receipt, d: Diagnosis, step_started_at: datetime | None) -> ConditionResult:
    """Evaluate one condition on a fresh receipt and diagnosis (pure)."""
    def res(holds: bool | None, detail: str) -> ConditionResult:
        return ConditionResult(kind=cond.kind, text=cond.text, holds=holds, detail=detail)

    k = cond.kind
    if k == "qmd_resolves":
        q = r.qmd
        if q.resolves is None:
            return res(None, "qmd resolution not measured")
        where = f" → {q.resolved_path}" if q.resolved_path else ""
        return res(q.resolves, f"qmd command {q.command or 'qmd'!r}{where}" + ("" if q.resolves else
                                                                             f": {q.failure_detail or q.failure or 'does not resolve'}"))
    if k == "qmd_command_absolute":
        cmd = r.config.qmd_command
        return res(bool(cmd) and os.path.isabs(cmd or ""), f"memory.qmd.command = {cmd!r}")
    if k == "qmd_store_ok":
        q = r.qmd
        if q.store_ok is None:
            return res(None, "qmd store command not run")
        return res(q.store_ok, f"store command exit {q.store_exit_code}")
    if k == "verdict_not":
        return res(d.verdict.value != cond.arg, f"verdict now {headline(d.verdict, d.reason)}")
    if k == "pending_zero":
        p = r.vectors.pending
        return res(None if p is None else p == 0, f"pending = {p}")
    if k == "proven_current_since_step":
        lpc = r.freshness.last_proven_current
        if lpc is None:
            return res(None, "nothing proved the index current")
        if step_started_at is None:
            return res(None, "step start unknown")
        return res(lpc >= step_started_at, f"last proven current {lpc.isoformat()} vs step start {step_started_at.isoformat()}")
    if k == "unindexed_none":
        files = r.freshness.unindexed_files
        return res(not files, "unindexed: " + (", ".join(files[:5]) if files else "none"))
    if k == "models_complete":
        mm = r.vectors.missing_models
        return res(None if mm is None else not mm, "missing models: " + ("not inspected" if mm is None else (", ".join(mm) or "none")))
    if k == "download_evidence":
        s = r.vectors.download_status
        return res(None if s is None else True, f"download status: {s or 'not inspected'}")
    if k == "backend_is_qmd":
        b = r.backend.effective
        return res(None if b is None else b == "qmd", f"effective backend: {b or 'not measured'}")
    if k == "canary_found":
        o = r.canary.outcome
        return res(None if o is None else o == "found", f"canary outcome: {o or 'not probed'}")
    if k == "canary_planted":
        return res(r.canary.content_sha256 is not None, f"canary hash: {(r.canary.content_sha256 or 'none')[:12]}")
    if k == "config_valid":
        e = r.config.error
        return res(e is None, "config loads" if e is None else f"{e.kind}: {e.message}")
    if k == "no_drift":
        g = r.gateway.drift
        return res(None if g is None else not g, f"gateway drift: {g}")
    if k == "search_mode":
        return res(r.config.search_mode == cond.arg, f"search mode: {r.config.search_mode}")
    if k == "index_unlocked":
        q = r.qmd
        if q.store_ok is None and q.failure != "index_locked":
            return res(None, "qmd store command not run")
        return res(q.failure != "index_locked", f"store check: {q.failure or ('ok' if q.store_ok else 'failed')}")
    if k == "files_readable":
        f = r.freshness
        if f.unindexed_count is None:
            return res(None, "no disk scan in this receipt")
        return res(f.stale_reason != "unreadable", f"stale reason: {f.stale_reason or 'none'}")
    if k in ("openclaw_found", "openclaw_runs"):
        prefixes = ("no `openclaw` executable",) if k == "openclaw_found" else (
            "no `openclaw` executable", "openclaw --version", "openclaw memory status")
        bad = [e for e in r.probe_errors if e.startswith(prefixes)]
        return res(not bad, bad[0] if bad else "no OpenClaw probe error")
    if k == "embed_timeout_at_least":
        t = r.config.embed_timeout_s
        return res(None if t is None else t >= float(cond.arg or 0), f"embed timeout: {t} s")
    return res(None, "no probe can check this: the operator confirms it")


StepStatus = Literal["pending", "current", "passed", "failed", "done_by_operator", "skipped"]


class WalkStep(BaseModel):
    """One step of the walk for its verdict: the catalog text, the exact command for this agent/install,
    its conditions, whether clawprobe may run it (``allowed``; ``refused`` says why not), and its state."""

    model_config = ConfigDict(extra="forbid")
    index: int
    title: str
    check: str
    command: str | None = None
    verify_text: str
    runnable: bool = False
    allowed: bool = False
    refused: str | None = None
    conditions: list[Condition]
    status: StepStatus = "pending"
    started_at: datetime | None = None
    finished_at: datetime | None = None
    last_results: list[ConditionResult] = Field(default_factory=list)

    @property
    def manual(self) -> bool:
        """True when no condition can be checked by a probe."""
        return all(c.kind == "manual" for c in self.conditions)


class Transition(BaseModel):
    """The verdict changed mid-walk: from → to, at ``at`` (UTC), while on step ``step_title``."""

    model_config = ConfigDict(extra="forbid")
    at: datetime
    from_verdict: Verdict
    from_reason: str | None
    to_verdict: Verdict
    to_reason: str | None
    step_title: str | None


EventKind = Literal["start", "verify", "run", "refused", "done_by_operator", "skip", "transition", "resolved",
                    "abandoned"]


class WalkEvent(BaseModel):
    """One recorded thing that happened in a walk (what the next operator reads).

    ``result``: for ``verify`` ``pass``/``fail``/``unproven``/``manual``; for ``run`` the run status
    (``ok``/``failed``/``timeout``/``cancelled``/``error``); ``confirmed_by`` the OS user who confirmed a
    run or marked a step done. Times UTC; ``output_tail`` the last lines of a run's output.
    """

    model_config = ConfigDict(extra="forbid")
    at: datetime
    kind: EventKind
    verdict: Verdict
    reason: str | None = None
    step_index: int | None = None
    step_title: str | None = None
    command: str | None = None
    confirmed_by: str | None = None
    result: str | None = None
    exit_code: int | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    detail: str | None = None
    conditions: list[ConditionResult] = Field(default_factory=list)
    output_tail: list[str] = Field(default_factory=list)


class Walk(BaseModel):
    """A repair walkthrough for one agent, as recorded under the data dir.

    ``verdict``/``reason`` are the current ones (the walk follows changes; ``start_*`` keep the first);
    ``steps`` belong to the current verdict; ``current`` indexes the step in progress (``len(steps)`` when all
    are done). ``status``: ``active``, ``resolved`` (the verdict became healthy) or ``abandoned``.
    """

    model_config = ConfigDict(extra="forbid")
    walk_id: str
    agent_id: str
    operator: str
    started_at: datetime
    updated_at: datetime
    start_verdict: Verdict
    start_reason: str | None
    verdict: Verdict
    reason: str | None
    title: str
    evidence: list[str] = Field(default_factory=list)
    steps: list[WalkStep]
    current: int = 0
    status: Literal["active", "resolved", "abandoned"] = "active"
    transitions: list[Transition] = Field(default_factory=list)
    events: list[WalkEvent] = Field(default_factory=list)

    @property
    def step(self) -> WalkStep | None:
        """The step in progress, or ``None`` when every step is done."""
        return self.steps[self.current] if 0 <= self.current < len(self.steps) else None


class VerifyOutcome(BaseModel):
    """What one Verify did: ``result`` of the step's conditions, whether the walk ``advanced``, the
    ``transition`` when the verdict changed, and the fresh verdict."""

    model_config = ConfigDict(extra="forbid")
    result: Literal["pass", "fail", "unproven", "manual", "no_step"]
    results: list[ConditionResult] = Field(default_factory=list)
    advanced: bool = False
    transition: Transition | None = None
    verdict: Verdict
    reason: str | None = None


def operator_name() -> str:
    """The OS user name of whoever runs clawprobe (recorded as who confirmed)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _utc() -> datetime:
    return datetime.now(UTC)


#: why a step's command is shown to copy and not run (a step the catalog does not mark runnable)
COPY_ONLY = "clawprobe does not run this command itself: run it in your shell"


def _steps(d: Diagnosis, agent_id: str, openclaw: str | Sequence[str] | None, at: datetime) -> list[WalkStep]:
    out = []
    for i, s in enumerate(d.next_action.steps):
        allowed, refused = False, None
        if s.runnable and s.command:
            try:
                check_allowed(s.command, agent_id=agent_id, openclaw=openclaw)
                allowed = True
            except NotAllowed as e:
                refused = str(e)
        elif s.command:
            refused = COPY_ONLY
        out.append(WalkStep(index=i, title=s.title, check=s.check, command=s.command, verify_text=s.verify,
                            runnable=s.runnable, allowed=allowed, refused=refused,
                            conditions=conditions_for(s, d.verdict)))
    if out:
        out[0].status, out[0].started_at = "current", at
    return out


def start_walk(diagnosis: Diagnosis, *, now: datetime | None = None, operator: str | None = None,
               openclaw: str | Sequence[str] | None = None) -> Walk:
    """A new walk at ``diagnosis``'s verdict (its steps, commands already filled for the agent/install).

    ``openclaw`` is the discovered OpenClaw executable (accepted by the allow-list by exact path).
    """
    at = now or _utc()
    d = diagnosis
    w = Walk(walk_id=secrets.token_hex(4), agent_id=d.agent_id, operator=operator or operator_name(),
             started_at=at, updated_at=at, start_verdict=d.verdict, start_reason=d.reason, verdict=d.verdict,
             reason=d.reason, title=d.next_action.title, evidence=list(d.evidence),
             steps=_steps(d, d.agent_id, openclaw, at))
    w.events.append(WalkEvent(at=at, kind="start", verdict=d.verdict, reason=d.reason,
                              detail=d.next_action.title))
    if d.verdict is Verdict.HEALTHY:
        w.status = "resolved"
    return w


def _advance(w: Walk, at: datetime) -> None:
    w.current += 1
    if w.step is not None:
        w.step.status, w.step.started_at = "current", at


def _follow(w: Walk, d: Diagnosis, at: datetime, openclaw: str | Sequence[str] | None) -> Transition | None:
    """Switch to the new verdict's steps when the verdict (or sub-reason) changed."""
    if (d.verdict, d.reason) == (w.verdict, w.reason):
        return None
    t = Transition(at=at, from_verdict=w.verdict, from_reason=w.reason, to_verdict=d.verdict, to_reason=d.reason,
                   step_title=w.step.title if w.step else None)
    w.transitions.append(t)
    w.events.append(WalkEvent(at=at, kind="transition", verdict=d.verdict, reason=d.reason,
                              detail=f"{t.from_verdict.value}{' · ' + t.from_reason if t.from_reason else ''} → "
                                     f"{t.to_verdict.value}{' · ' + t.to_reason if t.to_reason else ''}"))
    w.verdict, w.reason, w.title, w.evidence = d.verdict, d.reason, d.next_action.title, list(d.evidence)
    w.steps, w.current = _steps(d, w.agent_id, openclaw, at), 0
    if d.verdict is Verdict.HEALTHY:
        w.status = "resolved"
        w.events.append(WalkEvent(at=at, kind="resolved", verdict=d.verdict, reason=d.reason,
                                  detail="the verdict is healthy: walk resolved"))
    return t


def verify(w: Walk, reprobe: Reprobe, *, clock: Clock | None = None, openclaw: str | Sequence[str] | None = None) -> VerifyOutcome:
    """Re-probe, check the current step's conditions, advance when they all hold, follow a verdict change.

    ``reprobe`` is the caller's probe (``() -> (Receipt, Diagnosis)``); exceptions from it propagate (the
    caller shows them). Records a ``verify`` event (and a ``transition`` when the verdict changed).
    """
    now = clock or _utc
    receipt, d = reprobe()
    at = now()
    step = w.step
    results: list[ConditionResult] = []
    result: str = "no_step"
    advanced = False
    if step is not None:
        results = [evaluate(c, receipt, d, step.started_at) for c in step.conditions]
        step.last_results = results
        if step.manual:
            result = "manual"
        elif any(r.holds is False for r in results):
            result = "fail"
            step.status = "failed"
        elif all(r.holds for r in results):
            result = "pass"
        else:
            result = "unproven"
        w.events.append(WalkEvent(at=at, kind="verify", verdict=d.verdict, reason=d.reason, step_index=step.index,
                                  step_title=step.title, result=result, conditions=results,
                                  detail="; ".join(f"{'✓' if r.holds else '✗' if r.holds is False else '?'} "
                                                   f"{r.text} ({r.detail})" for r in results)))
        if result == "pass":
            step.status, step.finished_at = "passed", at
            _advance(w, at)
            advanced = True
        elif result != "fail":
            step.status = "current"
    transition = _follow(w, d, at, openclaw)
    w.updated_at = at
    return VerifyOutcome(result=result, results=results, advanced=advanced, transition=transition,  # type: ignore[arg-type]
                         verdict=d.verdict, reason=d.reason)


def mark_done(w: Walk, *, confirmed_by: str, clock: Clock | None = None) -> None:
    """The operator attests the current step is done (for steps no probe can check); recorded with their name."""
    if not confirmed_by:
        raise ValueError("marking a step done needs the confirming operator's name")
    step = w.step
    if step is None:
        return
    at = (clock or _utc)()
    step.status, step.finished_at = "done_by_operator", at
    w.events.append(WalkEvent(at=at, kind="done_by_operator", verdict=w.verdict, reason=w.reason,
                              step_index=step.index, step_title=step.title, confirmed_by=confirmed_by))
    _advance(w, at)
    w.updated_at = at


def skip(w: Walk, *, clock: Clock | None = None) -> None:
    """Skip the current step (recorded); its conditions stay unproven."""
    step = w.step
    if step is None:
        return
    at = (clock or _utc)()
    step.status, step.finished_at = "skipped", at
    w.events.append(WalkEvent(at=at, kind="skip", verdict=w.verdict, reason=w.reason, step_index=step.index,
                              step_title=step.title))
    _advance(w, at)
    w.updated_at = at


def abandon(w: Walk, *, clock: Clock | None = None, detail: str | None = None) -> None:
    """End an unfinished walk (operator left); recorded."""
    if w.status != "active":
        return
    at = (clock or _utc)()
    w.status, w.updated_at = "abandoned", at
    w.events.append(WalkEvent(at=at, kind="abandoned", verdict=w.verdict, reason=w.reason, detail=detail))


def run_step(w: Walk, *, confirmed_by: str, env: Mapping[str, str], timeout_s: float = DEFAULT_RUN_TIMEOUT_S,
             cwd: str | None = None, on_line: Callable[[str], None] | None = None,
             cancel: threading.Event | None = None, clock: Clock | None = None,
             openclaw: str | Sequence[str] | None = None) -> RunOutcome:
    """Run the current step's command after the operator confirmed it; record the run.

    Refuses (``NotAllowed``, recorded as a ``refused`` event) unless the step is ``runnable`` in the catalog,
    the allow-list accepts the command for this walk's agent, and ``confirmed_by`` names who confirmed.
    ``env`` is reduced by :func:`clawprobe.core.walk_run.command_env` (PATH, HOME, OPENCLAW_*…); the
    ``OPENCLAW_STATE_DIR=…``/``OPENCLAW_CONFIG_PATH=…`` the command starts with (the probed install's) win. The run does not verify
    the step: call :func:`verify` afterwards (the condition, not the exit code, proves the fix).
    """
    now = clock or _utc
    step = w.step
    try:
        if step is None:
            raise NotAllowed("no step in progress")
        if not confirmed_by:
            raise NotAllowed("a command runs only after an operator confirms it")
        if not (step.runnable and step.command):
            raise NotAllowed(step.refused or "this step has no command clawprobe may run")
        argv, location = allowed_run(step.command, agent_id=w.agent_id, openclaw=openclaw)
    except NotAllowed as e:
        w.events.append(WalkEvent(at=now(), kind="refused", verdict=w.verdict, reason=w.reason,
                                  step_index=step.index if step else None, step_title=step.title if step else None,
                                  command=step.command if step else None, confirmed_by=confirmed_by or None,
                                  result="refused", detail=str(e)))
        raise
    out = run_streaming(argv, {**command_env(env), **location}, timeout_s=timeout_s, cwd=cwd, on_line=on_line, cancel=cancel,
                        clock=now)
    w.events.append(WalkEvent(at=out.ended_at, kind="run", verdict=w.verdict, reason=w.reason, step_index=step.index,
                              step_title=step.title, command=step.command, confirmed_by=confirmed_by,
                              result=out.status, exit_code=out.exit_code, started_at=out.started_at,
                              ended_at=out.ended_at, detail=out.detail, output_tail=out.output_tail))
    w.updated_at = out.ended_at
    return out


def walk_text(w: Walk) -> list[str]:
    """The walk as plain-text lines (``clawprobe walk``; no markup)."""
    lines = [f"agent {w.agent_id}: {headline(w.verdict, w.reason)} — {w.title}"]
    lines += [f"  evidence: {e}" for e in w.evidence]
    marks = {"passed": "✓", "done_by_operator": "✓", "failed": "✗", "skipped": "-", "current": "▶", "pending": " "}
    for s in w.steps:
        lines.append(f"  {marks[s.status]} {s.index + 1}. {s.title} — {s.check}")
        if s.command:
            how = "clawprobe can run it after you confirm" if s.allowed else "copy and run it yourself"
            lines.append(f"       $ {s.command}    ({how})")
        lines.append(f"       verify: {s.verify_text}")
        lines += [f"         · {c.text}" + (" (you confirm)" if c.kind == "manual" else "") for c in s.conditions]
    return lines
