"""The repair catalog's two models: a next action (:class:`RepairAction`) and one walkthrough step
(:class:`RepairStep`). The catalog itself is data (``catalog/<verdict>.toml``, loaded by
:mod:`clawprobe.core.repair_catalog`); these models validate it (extra keys forbidden) and carry a filled
action to every view (``Diagnosis.next_action``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.verdicts import Verdict


class RepairStep(BaseModel):
    """One walkthrough step: what to check, the command (if any), and the condition that proves it worked.

    ``runnable`` marks OpenClaw's own managed, non-destructive commands that clawprobe may run itself
    after the operator confirms; everything else is shown to copy, never run.
    """

    model_config = ConfigDict(extra="forbid")
    title: str
    check: str
    command: str | None = None
    verify: str
    runnable: bool = False


class RepairAction(BaseModel):
    """The next action for a verdict: one line, the command, why, what not to do, and the steps."""

    model_config = ConfigDict(extra="forbid")
    verdict: Verdict
    reason: str | None = None
    title: str
    command: str | None = None
    why: str
    dont: str | None = None
    steps: list[RepairStep] = Field(default_factory=list)
