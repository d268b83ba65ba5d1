"""Review: :func:`clawprobe.core.probes.openclaw_log.unreadable` names a log this user cannot read (``log_blind``).
A dated log rotated or pruned between listing and opening it (gone, not denied) read "cannot be read by this user
(No such file or directory)", and a healthy QMD agent ``unverified`` for that run. A log this user cannot open
(root reads a 0000 file) is measured for real in tests/test_log_location_real.py, without DAC capabilities."""

from __future__ import annotations

from clawprobe.core.probes import openclaw_log as oclog


def test_a_log_gone_since_it_was_listed_is_not_a_denied_log(tmp_path):
    kept = tmp_path / "openclaw-2026-12-07.log"
    kept.write_text("{}\n")
    assert oclog.unreadable([str(tmp_path / "openclaw-2026-12-06.log"), str(kept)], None) is None
    assert oclog.unreadable([], str(tmp_path / "gone")) is None

