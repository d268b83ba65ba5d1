"""Known error signals that no verdict accounts for (spec §10: a ledger line is explained by *a verdict and tag*).

The evidence ledger (:mod:`clawprobe.core.ledger`) files a line as ``explained`` when its text is in the one
signature table (:data:`clawprobe.core.probes.signatures.TABLE`). For an error text (a ``signal`` row: "database disk
image is malformed", "SQLITE_IOERR", "fetch failed" in a memory sync …) that is only half of it: the rule that reads
the fact has to fire. When the receipt reaches the end of the rules (``unverified``/``healthy``) no fault verdict
fired, so such a line — the gateway's "SQLite session write failed: SQLITE_IOERR" on the agent's store in the lease
window, beside a canary found — is accounted for by nothing: the receipt is at best ``unverified``
(``unrecognized_signal``), quoting it. Pure, light (reads the receipt and the table only).

Evidence from before a repair: the ledger keeps log lines of the lease window only, and drops a state line older
than the last config edit or gateway start (:class:`clawprobe.core.probes.openclaw_log.LogScope`), so a repair that
restarted the gateway leaves its old errors behind; a line an in-place repair left in the window is quoted until
it ages out — unverified, never healthy, never a rebuild."""

from __future__ import annotations

from clawprobe.core.probes.signatures import is_error_signal
from clawprobe.core.receipt import LedgerEntry, Receipt


def unaccounted(r: Receipt) -> list[LedgerEntry]:
    """The ledger entries of ``r`` filed ``explained`` under an error signal's tag (:func:`is_error_signal`), in
    ledger order. Meaningful only where no fault verdict fired (the caller: the ``unverified`` rule). The stderr of
    a command clawprobe stopped at its own deadline (its exit entry tagged ``timed_out``: a probe error says so) is
    left out — its "timed out after 60 s (process tree killed)" is clawprobe's word, not OpenClaw's."""
    killed = {e.source.removeprefix("exit status of ") for e in r.ledger if e.tag == "timed_out"}
    return [e for e in r.ledger if e.kind == "explained" and is_error_signal(e.tag, e.line)
            and e.source.removeprefix("stderr of ") not in killed]


__all__ = ["unaccounted"]
