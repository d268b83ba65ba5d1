"""Messages from worker threads and the file watcher to the App (thread → UI only through ``post_message``).

Past-tense names; every probe/watch message coalesces with a newer one for the same agent
(``can_replace``: Textual asks the queued, older message whether the next one may replace it), so a burst
of results repaints once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from textual.message import Message

from clawprobe.core.receipt import Receipt


@dataclass
class FastProbed(Message):
    """The fast lane (``clawprobe.core.probe.fast``) produced a receipt for ``agent_id``.

    ``seconds`` is the probe's wall time; ``trigger`` says why it ran (``start``, ``key r``, ``files``…);
    ``checking``: the proving lanes that were still running when it started (their results are not in it).
    """

    agent_id: str
    receipt: Receipt
    seconds: float
    trigger: str = ""
    checking: dict[str, datetime] = field(default_factory=dict)

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FastProbed) and message.agent_id == self.agent_id


@dataclass
class QmdChecked(Message):
    """The qmd lane (``clawprobe.core.probe.check_qmd``: ``qmd --version`` and the store command) finished for
    ``agent_id``; its result is in the probe cache the next fast probe reads."""

    agent_id: str
    seconds: float


@dataclass
class SlowProbed(Message):
    """The slow lane (``clawprobe.core.probe.slow``, the 3–6 s ``openclaw`` CLI probes) finished for ``agent_id``.

    ``evidence`` is the ``SlowEvidence`` model (typed ``Any`` so this module does not import ``clawprobe.core.probe``).
    """

    agent_id: str
    evidence: Any
    seconds: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SlowProbed) and message.agent_id == self.agent_id


@dataclass
class ProbeFailed(Message):
    """A probe lane raised instead of returning evidence; ``error`` is the operator-facing sentence."""

    agent_id: str
    lane: str
    error: str


@dataclass
class FilesChanged(Message):
    """The watcher saw changes under an agent's watch targets (already debounced by watchfiles).

    ``kinds`` are the :class:`clawprobe.core.probe.WatchTarget` kinds touched (``workspace``, ``config``, ``index``,
    ``models``…); ``paths`` a few of the changed paths (for the log line); ``count`` how many changes.
    """

    agent_id: str
    kinds: frozenset[str]
    paths: list[str] = field(default_factory=list)
    count: int = 0
    seen_at: datetime | None = None

    def can_replace(self, message: Message) -> bool:
        # Textual calls older.can_replace(newer) and keeps the newer one: fold this one's kinds into it.
        if isinstance(message, FilesChanged) and message.agent_id == self.agent_id:
            message.kinds = message.kinds | self.kinds
            message.count += self.count
            return True
        return False


@dataclass
class WatchFailed(Message):
    """The file watcher stopped (e.g. inotify limit reached); the dashboard falls back to ``r``/timed probes."""

    error: str


@dataclass
class SourceReady(Message):
    """Discovery finished (``clawprobe.core.probe.discover``): the agents to show, or why nothing was found, or
    why ``--agent`` is refused (``refused``: the dashboard leaves with it, as ``check`` does)."""

    agent_ids: list[str]
    installed: bool
    reason: str | None = None
    refused: str | None = None


@dataclass
class ActionDone(Message):
    """A confirmed side action (canary plant, receipt save) finished; ``ok`` False carries the error text."""

    what: str
    agent_id: str
    ok: bool
    message: str
