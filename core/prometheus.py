"""node_exporter textfile-collector metrics for ``clawprobe check --format prometheus``.

Metrics (one sample per agent; label ``agent``):
``clawprobe_verdict{agent,verdict}`` 1 for the current verdict, 0 for every other verdict id;
``clawprobe_exit_code{agent}``; ``clawprobe_lease_seconds_left{agent}`` (absent when nothing proved
freshness); ``clawprobe_pending_embeddings{agent}`` (absent when not measured);
``clawprobe_canary_age_seconds{agent}`` (seconds since the canary was last retrieved from its expected
source; absent otherwise); ``clawprobe_probe_duration_seconds{agent}``; ``clawprobe_checked_timestamp_seconds``.
The file is written atomically (temp file + ``os.replace``), as the textfile collector requires.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from core.diagnosis import Diagnosis
from core.history import atomic_write
from core.receipt import Receipt
from core.verdicts import Verdict


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(v: float) -> str:
    return repr(float(v)) if v == v else "NaN"


def render(pairs: Sequence[tuple[Receipt, Diagnosis]], durations: Mapping[str, float], now: datetime) -> str:
    """The metrics text (Prometheus exposition format 0.0.4) for the diagnosed agents (pure)."""
    fams: dict[str, tuple[str, list[str]]] = {
        "clawprobe_verdict": ("1 for the agent's current verdict, 0 for the others", []),
        "clawprobe_exit_code": ("clawprobe check exit code for the agent (0 ok, 1 warn, 2 fail, 3 unverified)", []),
        "clawprobe_lease_seconds_left": ("seconds until the freshness lease ends", []),
        "clawprobe_pending_embeddings": ("documents pending embedding in the agent's QMD index", []),
        "clawprobe_canary_age_seconds": ("seconds since the canary was last retrieved from its expected source", []),
        "clawprobe_probe_duration_seconds": ("wall time of the probe run for the agent", []),
        "clawprobe_checked_timestamp_seconds": ("unix time of the check", []),
    }
    for r, d in pairs:
        a = _esc(d.agent_id)
        for v in Verdict:
            fams["clawprobe_verdict"][1].append(
                f'clawprobe_verdict{{agent="{a}",verdict="{v.value}"}} {1 if v is d.verdict else 0}')
        fams["clawprobe_exit_code"][1].append(f'clawprobe_exit_code{{agent="{a}"}} {d.exit_code}')
        if d.lease_seconds_left is not None:
            fams["clawprobe_lease_seconds_left"][1].append(
                f'clawprobe_lease_seconds_left{{agent="{a}"}} {_num(d.lease_seconds_left)}')
        if r.vectors.pending is not None:
            fams["clawprobe_pending_embeddings"][1].append(
                f'clawprobe_pending_embeddings{{agent="{a}"}} {r.vectors.pending}')
        if r.canary.outcome == "found" and r.canary.retrieved_at is not None:
            age = max(0.0, (now - r.canary.retrieved_at).total_seconds())
            fams["clawprobe_canary_age_seconds"][1].append(f'clawprobe_canary_age_seconds{{agent="{a}"}} {_num(age)}')
        if d.agent_id in durations:
            fams["clawprobe_probe_duration_seconds"][1].append(
                f'clawprobe_probe_duration_seconds{{agent="{a}"}} {_num(durations[d.agent_id])}')
        fams["clawprobe_checked_timestamp_seconds"][1].append(
            f'clawprobe_checked_timestamp_seconds{{agent="{a}"}} {_num(r.checked_at.timestamp())}')
    out: list[str] = []
    for name, (help_text, samples) in fams.items():
        if not samples:
            continue
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]
    return "\n".join(out) + "\n"


def write_textfile(path: str | Path, text: str) -> Path:
    """Write the metrics atomically (the collector must never read a half-written file)."""
    p = Path(path)
    atomic_write(p, text)
    return p
