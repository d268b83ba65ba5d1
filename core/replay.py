"""Read normalized receipts from JSON files (``clawprobe replay``).

A file may hold one receipt object, a list of them, or the JSON contract ``{"receipts": [...]}`` with a
``receipt`` key per entry. Every failure becomes a :class:`ReplayError` with the file and the reason —
never a traceback.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from pydantic import ValidationError

from core.receipt import Receipt

MAX_BYTES = 16 * 1024 * 1024


class ReplayError(Exception):
    """A receipt file that cannot be used; ``str()`` is the operator-facing message."""


def _explain(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    more = f" (+{e.error_count() - 5} more)" if e.error_count() > 5 else ""
    return "; ".join(parts) + more


def parse_receipts(text: str, origin: str = "<input>") -> list[Receipt]:
    """Parse receipts from JSON text. Raises :class:`ReplayError` with ``origin`` in the message."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReplayError(f"{origin}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise ReplayError(f"{origin}: JSON nested too deeply") from None
    if isinstance(data, dict) and "receipts" in data:
        data = data["receipts"]
        if isinstance(data, list):
            data = [d.get("receipt", d) if isinstance(d, dict) else d for d in data]
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ReplayError(f"{origin}: holds no receipt")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ReplayError(f"{origin}: entry {i} is {type(item).__name__}, expected a receipt object")
        try:
            out.append(Receipt.model_validate(item))
        except ValidationError as e:
            raise ReplayError(f"{origin}: entry {i} is not a valid receipt — {_explain(e)}") from None
        except (ValueError, TypeError, OverflowError, RecursionError) as e:
            raise ReplayError(f"{origin}: entry {i} is not a valid receipt — {e}") from None
    return out


def load_receipts(path: str | Path) -> list[Receipt]:
    """Read receipts from a file. Raises :class:`ReplayError` (missing, unreadable, too big, invalid)."""
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
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReplayError(f"{p}: not UTF-8 (byte {e.start})") from None
    return parse_receipts(text, str(p))
