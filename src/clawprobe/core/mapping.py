"""Reading untyped JSON/JSON5 trees (configs, ``--json`` outputs, log records) without trusting their shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_EMPTY: Mapping[str, Any] = {}


def as_mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one: a missing or wrong-typed section reads as empty."""
    return value if isinstance(value, Mapping) else _EMPTY


def as_list(value: object) -> list[Any]:
    """``value`` when it is a list, else an empty list."""
    return value if isinstance(value, list) else []
