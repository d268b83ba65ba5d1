"""How a receipt's ``openclaw.state_fault`` text begins, per fault the repair catalog tells apart (pure constants).

Written by :func:`clawprobe.core.interpret.state_fault` (from the host's ``statvfs`` facts) and read back by
:mod:`clawprobe.core.repairs` to choose the repair's variant — a leaf module, so the repairs (and every view
that diagnoses a receipt) do not import the evidence interpreter and the probes behind it.
"""

from __future__ import annotations

#: how the fault begins when the read-only mount is the agent's QMD index dir's (the repair's variant)
INDEX_MOUNT_FAULT = "the agent's QMD index dir"
#: how the fault begins when the full file system is the one of the agent's store or QMD index dir
VOLUME_FULL_FAULT = {"store": "the volume holding the agent's store dir", "index": "the volume holding the agent's QMD index dir"}
