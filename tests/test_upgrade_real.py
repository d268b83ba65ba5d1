"""The upgrade most operators make: a builtin install indexed by OpenClaw 2026.7.35, the CLI upgraded to 2026.9.6
and the config moved to the new keys by hand, no doctor run. Every real 2026.9.6 memory command then exits 1
("state database schema migration required … run openclaw doctor --fix to migrate it"). clawprobe said a canary
``miss`` with ``openclaw memory status --deep`` — which fails the same way (breaker round 4). It is
``memory_unavailable`` · ``doctor_fix``, and the one repair is OpenClaw's own doctor. Two CLI calls of each
release (≈ 25 s)."""

from __future__ import annotations

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, OC_QMD, builtin_config


def test_a_735_store_under_the_96_cli_needs_its_doctor(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_QMD), name="upgrade")
    spec = indexed(home, testbed, OC_QMD)
    home.write_config(builtin_config("none", version=OC_LATEST))  # the keys moved by hand: memory.search.provider
    ctx = context(home, testbed, OC_LATEST)
    cli = probe.slow(ctx, "main", canary=spec)
    r = probe.fast(ctx, "main", cli)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "doctor_fix"), (d.verdict, d.reason, r.probe_errors)
    assert d.next_action.command is not None and d.next_action.command.endswith("doctor --fix")
    assert "openclaw doctor --fix" in (r.builtin.unavailable_detail or "")
