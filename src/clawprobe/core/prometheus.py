"""node_exporter textfile-collector metrics for ``clawprobe check --format prometheus [--textfile FILE]``.

Every run produces a complete file, also when the check could not run — so a dashboard never keeps
showing the last good verdict. Metrics (all gauges; per-agent ones carry the label ``agent``):

``clawprobe_up``                                  1 when every selected agent got a verdict; 0 when the check
                                                  could not run (no install, bad input) or an agent's probe failed
``clawprobe_last_run_timestamp_seconds``          unix time this run finished (alert on staleness with it)
``clawprobe_verdict{agent,verdict}``              1 for the agent's current verdict, 0 for every other verdict id
``clawprobe_exit_code{agent}``                    the agent's exit code (0 ok, 1 warn, 2 fail, 3 unverified or
                                                  its probe failed)
``clawprobe_lease_seconds_left{agent}``           seconds until the freshness lease ends (absent: nothing proved
                                                  freshness)
``clawprobe_pending_embeddings{agent}``           documents pending embedding (absent: not measured)
``clawprobe_canary_age_seconds{agent}``           seconds since the canary was last retrieved from its expected
                                                  source (absent otherwise)
``clawprobe_probe_duration_seconds{agent}``       wall time of the agent's probe run
``clawprobe_checked_timestamp_seconds{agent}``    unix time of the agent's receipt (its check time)

Why a run produced no verdict is written as a ``# clawprobe: …`` comment line (never a label: no secrets,
no cardinality). :func:`write_textfile` writes atomically (temp file + ``os.replace``, as the collector
requires), keeps the mode of the file it replaces (``0644`` for a new file, so node_exporter — another
user — can read it) and never creates a missing directory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from clawprobe.core.diagnosis import Diagnosis
from clawprobe.core.history import atomic_write
from clawprobe.core.receipt import Receipt
from clawprobe.core.report import ProbeFailure, printable
from clawprobe.core.verdicts import Verdict

NEW_FILE_MODE = 0o644

_HELP = {
    "clawprobe_up": "1 when every selected agent got a verdict, 0 when the check could not run or a probe failed",
    "clawprobe_last_run_timestamp_seconds": "unix time the clawprobe check run finished",
    "clawprobe_verdict": "1 for the agent's current verdict, 0 for the others",
    "clawprobe_exit_code": "clawprobe check exit code for the agent (0 ok, 1 warn, 2 fail, 3 unverified/no verdict)",
    "clawprobe_lease_seconds_left": "seconds until the freshness lease ends",
    "clawprobe_pending_embeddings": "documents pending embedding in the agent's QMD index",
    "clawprobe_canary_age_seconds": "seconds since the canary was last retrieved from its expected source",
    "clawprobe_probe_duration_seconds": "wall time of the probe run for the agent",
    "clawprobe_checked_timestamp_seconds": "unix time of the agent's receipt (check time)",
}


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(v: float) -> str:
    return repr(float(v)) if v == v else "NaN"


def _comment(text: str) -> str:
    return "# clawprobe: " + printable(" ".join(text.split()))


def render(pairs: Sequence[tuple[Receipt, Diagnosis]], durations: Mapping[str, float], now: datetime,
           failures: Sequence[ProbeFailure] = (), cannot_run: str | None = None) -> str:
    """The metrics text (Prometheus exposition format 0.0.4; pure).

    ``pairs``: the diagnosed agents; ``durations``: seconds per agent id; ``now``: the run's end (aware);
    ``failures``: agents whose probe raised (``clawprobe_exit_code`` 3, no verdict series);
    ``cannot_run``: why the whole check produced nothing (then only ``clawprobe_up 0`` and the timestamp).
    """
    fams: dict[str, list[str]] = {name: [] for name in _HELP}
    comments = [_comment(cannot_run)] if cannot_run else []
    ok = cannot_run is None and not failures and bool(pairs)
    fams["clawprobe_up"].append(f"clawprobe_up {1 if ok else 0}")
    fams["clawprobe_last_run_timestamp_seconds"].append(f"clawprobe_last_run_timestamp_seconds {_num(now.timestamp())}")
    for r, d in pairs:
        a = _esc(d.agent_id)
        for v in Verdict:
            fams["clawprobe_verdict"].append(
                f'clawprobe_verdict{{agent="{a}",verdict="{v.value}"}} {1 if v is d.verdict else 0}')
        fams["clawprobe_exit_code"].append(f'clawprobe_exit_code{{agent="{a}"}} {d.exit_code}')
        if d.lease_seconds_left is not None:
            fams["clawprobe_lease_seconds_left"].append(
                f'clawprobe_lease_seconds_left{{agent="{a}"}} {_num(d.lease_seconds_left)}')
        if r.vectors.pending is not None:
            fams["clawprobe_pending_embeddings"].append(
                f'clawprobe_pending_embeddings{{agent="{a}"}} {r.vectors.pending}')
        if r.canary.outcome == "found" and r.canary.retrieved_at is not None:
            age = max(0.0, (now - r.canary.retrieved_at).total_seconds())
            fams["clawprobe_canary_age_seconds"].append(f'clawprobe_canary_age_seconds{{agent="{a}"}} {_num(age)}')
        if d.agent_id in durations:
            fams["clawprobe_probe_duration_seconds"].append(
                f'clawprobe_probe_duration_seconds{{agent="{a}"}} {_num(durations[d.agent_id])}')
        fams["clawprobe_checked_timestamp_seconds"].append(
            f'clawprobe_checked_timestamp_seconds{{agent="{a}"}} {_num(r.checked_at.timestamp())}')
    for f in failures:
        a = _esc(f.agent_id or "")
        comments.append(_comment(f"agent {f.agent_id}: {f.reason}"))
        fams["clawprobe_exit_code"].append(f'clawprobe_exit_code{{agent="{a}"}} {f.exit_code}')
        if f.agent_id is not None and f.agent_id in durations:
            fams["clawprobe_probe_duration_seconds"].append(
                f'clawprobe_probe_duration_seconds{{agent="{a}"}} {_num(durations[f.agent_id])}')
    out: list[str] = list(comments)
    for name, samples in fams.items():
        if samples:
            out += [f"# HELP {name} {_HELP[name]}", f"# TYPE {name} gauge", *samples]
    return "\n".join(out) + "\n"


def textfile_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot take the metrics file, or ``None``: its directory is missing (never created
    here) or not writable, or ``path`` itself is a directory. Checked before probing, so a typo costs
    no probe run. I/O: ``stat`` and ``access`` only."""
    p = Path(path)
    parent = p.parent
    if not parent.is_dir():
        return f"cannot write {p}: the directory {parent} does not exist (clawprobe does not create it)"
    if p.is_dir():
        return f"cannot write {p}: it is a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write {p}: no permission to create files in {parent}"
    return None


def write_textfile(path: str | Path, text: str) -> Path:
    """Write the metrics atomically (the collector must never read a half-written file).

    Mode: that of the file being replaced, else :data:`NEW_FILE_MODE` (``0644``; the temp file's ``0600``
    would hide it from node_exporter). A missing directory raises ``FileNotFoundError`` (not created).
    """
    p = Path(path)
    try:
        st = p.stat()
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else NEW_FILE_MODE
    except OSError:
        mode = NEW_FILE_MODE
    atomic_write(p, text, mode=mode, make_parents=False)
    return p
