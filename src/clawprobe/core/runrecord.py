"""What one program run printed, as evidence keeps it: the :class:`RunRecord` (gather's half; pure).

Every program clawprobe runs for a check's ``openclaw`` CLI probes (``memory status --json``,
``config validate --json``, ``memory search TOKEN --json``) and the direct ``qmd search`` cross-check is kept
in :class:`~clawprobe.core.evidence.SlowEvidence` as one record: the argv, the exit code and signal, whether
clawprobe's timeout or output cap stopped it, its wall seconds, and its stdout/stderr text. Interpret parses
the records (:func:`clawprobe.core.probes.openclaw_cli.status_of_run`, ``search_of_run``, ``validate_of_run``,
:func:`clawprobe.core.interpret.canary.direct_of_run`) — gather keeps what the program printed, unparsed.

Bounds and redaction, applied here before anything is stored (:func:`record_run`):

* every text (argv items, stdout, stderr, the runner's ``reason``) passes through
  :func:`clawprobe.core.redaction.redact_text` — a secret a program printed never reaches evidence, a
  receipt or a bundle — except the synthetic canary token of a search (``keep``), which a note may precede
  with a word such as ``token`` that would mask it;
* each stream keeps at most :data:`RUN_TEXT_CAP_BYTES` (64 KiB) of UTF-8 after redaction, cut at a
  character boundary; ``stdout_truncated``/``stderr_truncated`` say so and ``stdout_bytes``/``stderr_bytes``
  hold the full size the program printed (bytes, as read by :mod:`clawprobe.core.proc`, itself capped at
  4 MiB a stream, which ``output_capped`` names).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from clawprobe.core.proc import ProcResult
from clawprobe.core.redaction import redact_text

RUN_TEXT_CAP_BYTES = 64 * 1024  #: bytes of each stream a run record keeps (after redaction)


class RunRecord(BaseModel):
    """One program run, as printed (redacted, bounded). Source: :func:`clawprobe.core.proc.run` (live) or a
    recorded step dir (``steps/<name>/``: ``meta.json`` + ``stdout.*`` + ``stderr.txt``).

    * ``argv`` — the command (secret-shaped items masked; paths as they are);
    * ``rc`` — exit code; negative ``-N`` when signal N killed it (``signal`` then holds N); 127/126 when the
      program was not found / not executable; ``None`` when a recording did not say;
    * ``timed_out`` — clawprobe's timeout killed it; ``output_capped`` — the stream (``stdout``/``stderr``)
      that passed the runner's 4 MiB cap; ``reason`` — the runner's words for either (or a missing program);
    * ``seconds`` — wall time (s);
    * ``stdout``/``stderr`` — the text (≤ :data:`RUN_TEXT_CAP_BYTES` each), ``*_truncated`` when cut here,
      ``*_bytes`` the full byte count printed.
    """

    model_config = ConfigDict(extra="forbid")
    argv: list[str]
    rc: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_capped: str | None = None
    reason: str | None = None
    seconds: float | None = None
    stdout: str = ""
    stdout_bytes: int = 0
    stdout_truncated: bool = False
    stderr: str = ""
    stderr_bytes: int = 0
    stderr_truncated: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_version_1(cls, data: Any) -> Any:
        """A version-1 bundle stored the qmd binary check's runs as the runner's ``ProcResult`` (field
        ``killed``, no byte counts): read it as a record of the text it holds."""
        if isinstance(data, dict) and "killed" in data:
            data = {k: v for k, v in data.items() if k != "killed"}
            for stream in ("stdout", "stderr"):
                data.setdefault(f"{stream}_bytes", len(str(data.get(stream) or "").encode("utf-8")))
        return data

    @property
    def ok(self) -> bool:
        """Exit code 0, not timed out, output not capped (the runner's ``ProcResult.ok``)."""
        return self.rc == 0 and not self.timed_out and self.output_capped is None

    @property
    def stderr_and_reason(self) -> str:
        """stderr, then the runner's ``reason`` on a line of its own (what the CLI parsers read)."""
        return self.stderr + ("\n" + self.reason if self.reason else "")

    @property
    def command(self) -> str:
        """The argv as one shell-quoted line (for messages)."""
        return shlex.join(self.argv)


def _redact_keeping(text: str, keep: Sequence[str]) -> str:
    """:func:`~clawprobe.core.redaction.redact_text` with each string of ``keep`` left as it is (the synthetic
    canary token: a note saying ``token CLAWPROBE-CANARY-…`` must still show it — it is what a search is judged
    by, and never a secret)."""
    marks = {f"\x00{i}\x00": k for i, k in enumerate(k for k in keep if k)}
    for mark, k in marks.items():
        text = text.replace(k, mark)
    text = redact_text(text)
    for mark, k in marks.items():
        text = text.replace(mark, k)
    return text


def bounded(text: str, cap: int = RUN_TEXT_CAP_BYTES, keep: Sequence[str] = ()) -> tuple[str, bool]:
    """``text`` redacted (``keep`` left as is) and cut to at most ``cap`` UTF-8 bytes at a character boundary
    → (kept, truncated)."""
    kept = _redact_keeping(text or "", keep)
    data = kept.encode("utf-8")
    if len(data) <= cap:
        return kept, False
    return data[:cap].decode("utf-8", "ignore"), True


def record(argv: Sequence[str], rc: int | None, stdout: str, stderr: str, *, seconds: float | None = None,
           timed_out: bool = False, output_capped: str | None = None, reason: str | None = None,
           signal: int | None = None, cap: int = RUN_TEXT_CAP_BYTES, keep: Sequence[str] = ()) -> RunRecord:
    """A :class:`RunRecord` from a run's parts (redacted — but for the strings of ``keep``, the canary token
    of a search — and bounded here; pure)."""
    out, out_cut = bounded(stdout, cap, keep)
    err, err_cut = bounded(stderr, cap, keep)
    if signal is None and rc is not None and rc < 0:
        signal = -rc
    return RunRecord(argv=[_redact_keeping(str(a), keep) for a in argv], rc=rc, signal=signal, timed_out=timed_out,
                     output_capped=output_capped, reason=redact_text(reason) if reason else None, seconds=seconds,
                     stdout=out, stdout_bytes=len((stdout or "").encode("utf-8")), stdout_truncated=out_cut,
                     stderr=err, stderr_bytes=len((stderr or "").encode("utf-8")), stderr_truncated=err_cut)


def record_run(p: ProcResult, cap: int = RUN_TEXT_CAP_BYTES, keep: Sequence[str] = ()) -> RunRecord:
    """The record of one :func:`clawprobe.core.proc.run` result (redacted but for ``keep``, bounded; pure)."""
    return record(p.argv, p.rc, p.stdout, p.stderr, seconds=p.seconds, timed_out=p.timed_out,
                  output_capped=p.output_capped, reason=p.reason, signal=p.signal, cap=cap, keep=keep)


def argv_of(command: str | None, default: Sequence[str]) -> list[str]:
    """A recorded ``command`` line as argv (shell words; the line itself when it does not split), else
    ``default``."""
    if not command:
        return list(default)
    try:
        return shlex.split(command)
    except ValueError:
        return [command]


__all__ = ["RUN_TEXT_CAP_BYTES", "RunRecord", "argv_of", "bounded", "record", "record_run"]
