"""Running a walkthrough step's command: the allow-list, the environment, and a streaming, cancellable runner.

clawprobe runs a command itself only when all of these hold (checked here, in core, whatever the caller or
the repair catalog says):

* the step is marked ``runnable`` in the catalog and the operator confirmed it (see ``clawprobe.core.walk``);
* it is one plain argv (no shell: no pipes, ``;``, ``&&``, redirections, ``$(…)``, backticks, no ``VAR=…``
  prefix but OpenClaw's own location variables, :data:`LOCATION_VARS`, which
  ``clawprobe.core.locate.command_lines`` puts before a command so it reaches the install clawprobe was pointed at
  with ``--state-dir``/``--config``; they are set in the child's environment) whose program is OpenClaw's own
  CLI (``openclaw`` or ``openclaw-<version>``, or the exact executable clawprobe discovered) — never ``qmd``
  (hand-made XDG dirs would test another index), never a shell, ``rm``, ``cp``, ``systemctl``…;
* its sub-command is one of OpenClaw's managed, non-destructive commands (:data:`ALLOWED`):
  ``memory index --agent ID`` (no ``--force``: that rebuilds everything and destroys the evidence),
  ``memory status --agent ID [--json]`` (no ``--fix``/``--index``/``--deep``), ``config validate [--json]``;
* ``--agent`` names the walk's own agent.

The runner gives the child exactly the environment built by :func:`command_env` (PATH, HOME, OPENCLAW_*,
locale, TMPDIR — never secrets), streams each output line to a callback, enforces a timeout, and can be
cancelled; on timeout or cancel the whole process tree is killed (``clawprobe.core.proc.kill_tree``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.proc import _running, _running_lock, kill_tree, start_time
from clawprobe.core.redaction import redact_text

_OPENCLAW_NAME = re.compile(r"^openclaw(?:-[0-9][0-9A-Za-z.+_-]*)?$")
_SHELL_TOKENS = ("|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>&1")
_SHELL_CHARS = re.compile(r"[`$;|&<>]|\$\(")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: the only ``VAR=value`` words a command may start with: where OpenClaw finds its state dir and config
LOCATION_VARS = frozenset({"OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH"})
OUTPUT_TAIL_LINES = 40
MAX_LINE_CHARS = 8192  # a longer line is passed on in pieces: a flood without newlines stays bounded


class NotAllowed(Exception):
    """A command clawprobe refuses to run; ``str()`` says why, for the operator."""


#: sub-command → (flags allowed without a value, flags that take one value, flags refused with the reason)
ALLOWED: dict[tuple[str, str], tuple[frozenset[str], frozenset[str], dict[str, str]]] = {
    ("memory", "index"): (
        frozenset({"--verbose"}), frozenset({"--agent"}),
        {"--force": "`--force` rebuilds the whole index: it costs time and destroys the evidence that tells a "
                    "path fault from a freshness fault — clawprobe never runs it"},
    ),
    ("memory", "status"): (
        frozenset({"--json"}), frozenset({"--agent"}),
        {"--fix": "`--fix` rewrites OpenClaw state", "--index": "`--index` re-indexes (use the index step)",
         "--deep": "`--deep` runs `qmd status`, which creates index files"},
    ),
    ("config", "validate"): (frozenset({"--json"}), frozenset(), {}),
}


def _prefixes(openclaw: str | Sequence[str] | None) -> list[list[str]]:
    if openclaw is None:
        return []
    if isinstance(openclaw, str):
        out = [[openclaw]]
        with contextlib.suppress(ValueError):
            out.append(shlex.split(openclaw))
        return [p for p in out if p]
    return [list(openclaw)] if openclaw else []


def check_allowed(command: str, *, agent_id: str, openclaw: str | Sequence[str] | None = None) -> list[str]:
    """Parse ``command`` and return its argv if clawprobe may run it; raise :class:`NotAllowed` otherwise.

    ``openclaw`` is the OpenClaw CLI clawprobe discovered — an executable path, or an argv prefix such as
    ``["/usr/bin/node", "/…/openclaw.mjs"]`` (``clawprobe.core.probe.ProbeContext.openclaw``); it is accepted exactly,
    even when its name is unusual. The argv leaves out a leading ``OPENCLAW_STATE_DIR=…``/``OPENCLAW_CONFIG_PATH=…``
    (:func:`allowed_run` returns them too). Pure: no file or process access.
    """
    return allowed_run(command, agent_id=agent_id, openclaw=openclaw)[0]


def allowed_run(command: str, *, agent_id: str, openclaw: str | Sequence[str] | None = None
                ) -> tuple[list[str], dict[str, str]]:
    """``(argv, location)``: what :func:`check_allowed` accepts, and the :data:`LOCATION_VARS` the command sets
    before it (``{"OPENCLAW_STATE_DIR": "/srv/oc"}``; empty when none) — the run's environment gets them.
    Each at most once, never empty; any other ``VAR=…`` is refused. Raises :class:`NotAllowed`. Pure."""
    if not command or not command.strip():
        raise NotAllowed("no command")
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise NotAllowed(f"cannot parse the command ({e})") from None
    if any(t in _SHELL_TOKENS for t in argv) or _SHELL_CHARS.search(command):
        raise NotAllowed("shell syntax (pipes, redirections, `;`, `$…`): clawprobe runs one plain command only")
    location: dict[str, str] = {}
    while argv and _ENV_ASSIGN.match(argv[0]):
        name, _, path = argv[0].partition("=")
        if name not in LOCATION_VARS or name in location or not path:
            raise NotAllowed("an environment prefix (VAR=…): clawprobe never runs commands in hand-made environments "
                             f"(only {' and '.join(sorted(LOCATION_VARS))}, once each, name the install)")
        location[name] = path
        argv = argv[1:]
    if not argv:
        raise NotAllowed("no command")
    prefix = next((p for p in _prefixes(openclaw) if argv[:len(p)] == p), None)
    if prefix is None:
        name = os.path.basename(argv[0])
        if not _OPENCLAW_NAME.match(name):
            raise NotAllowed(f"{name!r} is not OpenClaw's CLI: clawprobe only runs OpenClaw's own managed commands "
                             "(never qmd directly, never a shell or file command)")
        prefix = argv[:1]
    sub = argv[len(prefix):]
    if len(sub) < 2:
        raise NotAllowed("not one of OpenClaw's managed commands clawprobe may run")
    key = (sub[0], sub[1])
    if key not in ALLOWED:
        raise NotAllowed(f"`{sub[0]} {sub[1]}` is not on clawprobe's allow-list "
                         f"({', '.join(' '.join(k) for k in ALLOWED)})")
    bare, valued, refused = ALLOWED[key]
    rest = sub[2:]
    i = 0
    while i < len(rest):
        tok = rest[i]
        flag, _, inline = tok.partition("=")
        if flag in refused:
            raise NotAllowed(refused[flag])
        if flag in bare and not inline:
            i += 1
            continue
        if flag in valued:
            value = inline if inline else (rest[i + 1] if i + 1 < len(rest) else None)
            if value is None:
                raise NotAllowed(f"{flag} needs a value")
            if flag == "--agent" and value != agent_id:
                raise NotAllowed(f"--agent {value!r} is not this walk's agent {agent_id!r}")
            i += 1 if inline else 2
            continue
        raise NotAllowed(f"argument {tok!r} is not allowed for `{sub[0]} {sub[1]}`")
    if valued and "--agent" in valued and not any(t == "--agent" or t.startswith("--agent=") for t in rest):
        raise NotAllowed("the command must name the agent (--agent ID): without it OpenClaw acts on every agent")
    return argv, location


_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")


def command_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a step command gets: PATH, HOME, ``OPENCLAW_*``, locale and TMPDIR from ``env``, plus
    ``NO_COLOR=1``. Nothing else is copied (no tokens, keys or service variables)."""
    out = {k: env[k] for k in _ENV_KEYS if k in env}
    out.update({k: v for k, v in env.items() if k.startswith("OPENCLAW_")})
    out.setdefault("PATH", "/usr/bin:/bin")
    out["NO_COLOR"] = "1"
    return out


class RunOutcome(BaseModel):
    """What a step command did. ``status``: ``ok`` (exit 0), ``failed`` (non-zero exit), ``timeout``,
    ``cancelled`` (operator), ``error`` (could not start; ``detail`` says why). Times UTC, ``seconds`` wall
    time, ``output_tail`` the last :data:`OUTPUT_TAIL_LINES` lines (stdout and stderr merged, secrets masked)."""

    model_config = ConfigDict(extra="forbid")
    argv: list[str]
    status: Literal["ok", "failed", "timeout", "cancelled", "error"]
    exit_code: int | None = None
    started_at: datetime
    ended_at: datetime
    seconds: float
    output_tail: list[str] = Field(default_factory=list)
    detail: str | None = None


def run_streaming(argv: list[str], env: Mapping[str, str], *, timeout_s: float, cwd: str | None = None,
                  on_line: Callable[[str], None] | None = None, cancel: threading.Event | None = None,
                  clock: Callable[[], datetime] | None = None) -> RunOutcome:
    """Run ``argv`` with exactly ``env`` in its own session; call ``on_line`` for each output line as it
    arrives; stop at ``timeout_s`` seconds or when ``cancel`` is set (process tree killed). Never raises for
    the child: a missing program is ``status="error"``."""
    now = clock or (lambda: datetime.now(UTC))
    started = now()
    t0 = time.monotonic()
    tail: deque[str] = deque(maxlen=OUTPUT_TAIL_LINES)
    try:
        with _running_lock:
            proc = subprocess.Popen(argv, env=dict(env), cwd=cwd or "/", stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                    text=True, encoding="utf-8", errors="replace", bufsize=1)
            _running.add(proc.pid)
        since = start_time(proc.pid)
    except OSError as e:
        return RunOutcome(argv=argv, status="error", started_at=started, ended_at=now(),
                          seconds=round(time.monotonic() - t0, 3), detail=f"cannot start {argv[0]}: {e.strerror or e}")

    def pump() -> None:
        assert proc.stdout is not None
        while line := proc.stdout.readline(MAX_LINE_CHARS):  # bounded: never a whole flood in memory
            line = redact_text(line.rstrip("\n"))  # a repair command's output enters the walk record here
            tail.append(line)
            if on_line is not None:
                try:
                    on_line(line)
                except Exception:  # a broken display must not kill the run
                    pass

    reader = threading.Thread(target=pump, name="walk-run-output", daemon=True)
    reader.start()
    status: str = "ok"
    while True:
        try:
            proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            status = "cancelled"
        elif time.monotonic() - t0 > timeout_s:
            status = "timeout"
        if status != "ok":
            kill_tree(proc.pid)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill_tree(proc.pid)
            break
    kill_tree(proc.pid, since=since)  # stray grandchildren (qmd children of openclaw, detached ones) die with it
    reader.join(timeout=5)
    with _running_lock:
        _running.discard(proc.pid)
    rc = proc.returncode
    if status == "ok" and rc != 0:
        status = "failed"
    detail = {"timeout": f"timed out after {timeout_s:g} s (process tree killed)",
              "cancelled": "cancelled by the operator (process tree killed)"}.get(status)
    return RunOutcome(argv=argv, status=status, exit_code=rc, started_at=started, ended_at=now(),  # type: ignore[arg-type]
                      seconds=round(time.monotonic() - t0, 3), output_tail=list(tail), detail=detail)
