"""The agent's QMD config file, ``<state>/agents/<id>/qmd/xdg-config/qmd/index.yml``: its ``collections:``
and the ``models:`` block qmd writes on its first run. Read-only; parsed without trusting its shape.

Apart from :mod:`clawprobe.core.probes.qmd_index` (which re-exports these names) so that
:mod:`clawprobe.core.probes.models` can read the ``models:`` block without an import cycle.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QmdCollection(_M):
    """One collection as configured (source: ``index.yml`` or the ``store_collections`` table).

    ``path`` is absolute; ``pattern`` a fast-glob mask (``**/*.md`` default); ``ignore`` extra globs.
    """

    name: str
    path: str
    pattern: str = "**/*.md"
    ignore: list[str] = Field(default_factory=list)


class QmdConfigFile(_M):
    """The agent's ``index.yml`` (source: that file). ``error`` is set when it exists but does not parse."""

    path: str
    exists: bool = False
    collections: list[QmdCollection] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    error: str | None = None


def parse_qmd_yml(text: str, path: str = "index.yml") -> QmdConfigFile:
    """Parse the text of an ``index.yml`` (pure). Bad YAML gives ``error``, never an exception."""
    out = QmdConfigFile(path=path, exists=True)
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        out.error = f"YAML: {str(e).splitlines()[0]}"
        return out
    if not isinstance(doc, dict):
        out.error = "YAML: top level is not a mapping"
        return out
    cols = doc.get("collections") or {}
    if isinstance(cols, dict):
        for name, spec in cols.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
                continue
            ign = spec.get("ignore") or []
            out.collections.append(QmdCollection(
                name=str(name), path=spec["path"], pattern=str(spec.get("pattern") or "**/*.md"),
                ignore=[str(x) for x in ign] if isinstance(ign, list) else []))
    models = doc.get("models") or {}
    if isinstance(models, dict):
        out.models = {str(k): str(v) for k, v in models.items() if isinstance(v, str)}
    return out


def read_qmd_yml(path: str | os.PathLike[str]) -> QmdConfigFile:
    """Read and parse the agent's ``index.yml``; a missing or unreadable file is said in the result."""
    p = os.fspath(path)
    if os.path.exists(p) and not os.path.isfile(p):  # a directory, a FIFO that would block the read…
        return QmdConfigFile(path=p, exists=True, error="unreadable: not a regular file")
    try:
        text = Path(p).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return QmdConfigFile(path=p)
    except OSError as e:
        return QmdConfigFile(path=p, exists=True, error=f"unreadable: {e}")
    return parse_qmd_yml(text, p)
