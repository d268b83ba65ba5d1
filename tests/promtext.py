"""Read Prometheus exposition text in tests with ``prometheus_client``'s own parser (no regexes)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[str, float]:
    """``name{label="v",…}`` (labels sorted by name) → value, for every sample in ``text``."""
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def file_samples(path: Path) -> dict[str, float]:
    """:func:`samples` of a file."""
    return samples(Path(path).read_text())
