"""Read normalized receipts from files (``clawprobe replay FILE…`` and ``clawprobe --replay FILE``).

Accepted shapes (UTF-8, a leading BOM is ignored):

* one receipt object, or a JSON list of them;
* the JSON contract of ``clawprobe check --json`` / ``replay --json`` (``{"receipts": [{"receipt": …}]}``);
* clawprobe's own history, ``receipts.jsonl`` (``check --save``, the dashboard's ``s``; see
  :mod:`clawprobe.core.history`): one JSON object per line, each a history record ``{"saved_at", "state_dir",
  "agent_id", "verdict", "receipt"}`` (or any of the shapes above). A single record on its own is accepted too.

:func:`load_receipts` returns every receipt in file order (``clawprobe replay`` diagnoses them all);
:func:`latest_per_agent` keeps the newest receipt of each agent (``--replay``: the dashboard and ``walk``
show one receipt per agent). Every failure becomes a :class:`ReplayError` naming the file — and for a
JSON-lines file the line — and the reason; never a traceback.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clawprobe.core.receipt import Receipt
from clawprobe.core.shell import word

MAX_BYTES = 32 * 1024 * 1024  #: above ``clawprobe.core.history.MAX_BYTES`` (20 MiB), so a full history replays


class ReplayError(Exception):
    """A receipt file that cannot be used; ``str()`` is the operator-facing message."""


def _explain(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{e.error_count() - 5} more)" if e.error_count() > 5 else ""
    return "; ".join(parts) + more


def _is_record(item: Any) -> bool:
    """A history record (or a contract entry): ``{"receipt": {...}, …}`` that is not itself a receipt."""
    return isinstance(item, dict) and isinstance(item.get("receipt"), dict) and "checked_at" not in item


def _items(data: Any) -> list[Any]:
    """The receipt objects inside one parsed JSON value (contract, list, history record or receipt)."""
    if isinstance(data, dict) and "receipts" in data and "checked_at" not in data:
        data = data["receipts"]
    items = data if isinstance(data, list) else [data]
    return [d["receipt"] if _is_record(d) else d for d in items]


def _validate(items: list[Any], where: str) -> list[Receipt]:
    """Receipts from objects; ``where`` names the place in messages (``"entry"`` or ``"line N, entry"``)."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReplayError(f"{where} {i} is {type(item).__name__}, expected a receipt object")
        try:
            out.append(Receipt.model_validate(item))
        except ValidationError as e:
            raise ReplayError(f"{where} {i} is not a valid receipt — {_explain(e)}") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as e:
            raise ReplayError(f"{where} {i} is not a valid receipt — {e}") from None
    return out


def _loads(text: str) -> Any:
    """``json.loads`` with deep nesting turned into a ``JSONDecodeError``-like ``ReplayError`` message."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ReplayError("JSON nested too deeply") from None


def _first_line_is_json(lines: list[str]) -> bool:
    first = next((x for x in lines if x.strip()), "")
    try:
        return isinstance(_loads(first), dict | list)
    except (json.JSONDecodeError, ReplayError):
        return False


def _parse_lines(lines: list[str], origin: str) -> list[Receipt]:
    """JSON lines: every non-blank line is one JSON value; a bad line is named by its 1-based number."""
    out: list[Receipt] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = _loads(line)
        except json.JSONDecodeError as e:
            raise ReplayError(f"{origin}: line {n} is not JSON (column {e.colno}: {e.msg})") from None
        except ReplayError as e:
            raise ReplayError(f"{origin}: line {n}: {e}") from None
        items = _items(data)
        if not items:
            raise ReplayError(f"{origin}: line {n} holds no receipt")
        try:
            out += _validate(items, "entry")
        except ReplayError as e:
            raise ReplayError(f"{origin}: line {n}: {e}") from None
    if not out:
        raise ReplayError(f"{origin}: holds no receipt")
    return out


def parse_receipts(text: str, origin: str = "<input>") -> list[Receipt]:
    """Parse receipts from JSON or JSON-lines text (shapes: module docstring). Raises :class:`ReplayError`
    whose message starts with ``origin``."""
    text = text.removeprefix("\ufeff")
    try:
        data = _loads(text)
    except ReplayError as e:
        raise ReplayError(f"{origin}: {e}") from None
    except json.JSONDecodeError as e:
        lines = text.splitlines()
        if len([x for x in lines if x.strip()]) > 1 and _first_line_is_json(lines):
            return _parse_lines(lines, origin)
        raise ReplayError(f"{origin}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    if isinstance(data, dict) and data.get("format") == "clawprobe-bundle":  # evidence, not a verdict
        raise ReplayError(f"{origin}: a clawprobe support bundle, not a receipt: diagnose it with "
                          f"clawprobe check --bundle {word(origin)}")
    items = _items(data)
    if not items:
        raise ReplayError(f"{origin}: holds no receipt")
    try:
        return _validate(items, "entry")
    except ReplayError as e:
        raise ReplayError(f"{origin}: {e}") from None


def load_receipts(path: str | Path) -> list[Receipt]:
    """Read every receipt from a file, in file order. Raises :class:`ReplayError` (missing, unreadable,
    not a regular file, larger than :data:`MAX_BYTES`, not UTF-8, invalid)."""
    p = Path(path)
    try:
        st = p.stat()
        if stat.S_ISDIR(st.st_mode):
            raise ReplayError(f"{p}: is a directory, not a receipt file")
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
            raise ReplayError(f"{p}: not a regular file")
        if st.st_size > MAX_BYTES:
            raise ReplayError(f"{p}: larger than {MAX_BYTES} bytes")
        raw = p.read_bytes()
    except ReplayError:
        raise
    except OSError as e:
        raise ReplayError(f"{p}: cannot read ({e.strerror or e})") from None
    if raw[:2] == b"\x1f\x8b":  # gzip: `bundle -o FILE.tar.gz` writes one
        raise ReplayError(f"{p}: a gzip archive, not a receipt (a support bundle .tar.gz? diagnose it with "
                          f"clawprobe check --bundle {word(str(p))})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReplayError(f"{p}: not UTF-8 (byte {e.start})") from None
    return parse_receipts(text, str(p))


def latest_per_agent(receipts: Iterable[Receipt]) -> list[Receipt]:
    """The newest receipt of each agent (greatest ``checked_at``; on a tie the later one in the file), in
    the order each agent first appears. Pure."""
    best: dict[str, tuple[int, Receipt]] = {}
    order: list[str] = []
    for i, r in enumerate(receipts):
        if r.agent_id not in best:
            order.append(r.agent_id)
            best[r.agent_id] = (i, r)
        elif r.checked_at >= best[r.agent_id][1].checked_at:
            best[r.agent_id] = (i, r)
    return [best[a][1] for a in order]
