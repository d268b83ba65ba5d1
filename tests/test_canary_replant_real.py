"""A canary rotated (or planted over an old one) just before a check: 2026.9.6's ``memory search`` answers from the
index as it was — the old token's text — and syncs after, so the receipt's own store read showed the new token
indexed and the check said ``retrieval_failed`` · ``miss``, exit 2, for a canary no update had yet had the chance
to index (breaker round 5). The miss is traced in the index the search saw (measured before it): ``unverified`` ·
``canary_not_indexed``. Real 2026.9.6: one index run, one check."""

from __future__ import annotations

from clawprobe.core import canary_write as cw
from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from tests.hardening_helpers import planted_and_indexed
from tests.rw_support import context
from tests.test_lease import assert_awaiting_said_unproven
from tests.testbed import OC_LATEST, builtin_config


def test_a_fresh_rotation_is_awaiting_its_index_not_a_failed_retrieval(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="rotated")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "clawprobe-data"
    planted_and_indexed(home, testbed, data)
    cw.rotate(home.workspace, "main", root=data)  # a new token in the same file; no index run since
    r = probe.collect(context(home, testbed, OC_LATEST, extra={"CLAWPROBE_DATA_DIR": str(data)}), "main")
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("unverified", "canary_not_indexed"), (d.evidence, r.canary)
    assert r.canary.outcome == "miss" and r.canary.indexed_at is None
    # every screen says the same as the verdict: unproven, never a red failure (breaker round 19)
    assert_awaiting_said_unproven(r)
