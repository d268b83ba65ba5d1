"""Receipt expiry by input change (spec §7): a receipt stops being current when any input it rests on
changes — config hash, QMD version, effective backend, search mode, canary hash — or the lease ends."""

from __future__ import annotations

from clawprobe.core.receipt import Receipt


def inputs(r: Receipt) -> dict[str, str | None]:
    """The inputs a receipt's claim rests on (field → value), all taken from the receipt itself."""
    return {
        "config hash": r.config.hash,
        "qmd version": r.qmd.version,
        "effective backend": r.backend.effective,
        "search mode": r.config.search_mode,
        "canary hash": r.canary.content_sha256,
        "lease seconds": f"{r.lease.seconds:g}",
    }


def input_changes(saved: Receipt, current: Receipt) -> list[str]:
    """Human lines naming every input that differs between a saved receipt and a fresh measurement."""
    a, b = inputs(saved), inputs(current)
    return [f"{k} changed: {a[k]} → {b[k]}" for k in a if a[k] != b[k]]
