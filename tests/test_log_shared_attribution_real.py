"""Another install's lines in the SHARED default log are not charged to this agent (tester's brk-verdict repro-7).

Install B (a real OpenClaw 2026.9.6 state dir whose memory plugin is off) runs ``openclaw memory status`` once:
it writes ``OpenClaw does not know the command "memory".`` (ERROR) into the dated default log. Install A (QMD on
2026.7.35, no ``logging.file``: it reads that same dated log) turned ``unverified · unrecognized_signal``.
A record is attributed to A by the OpenClaw program that wrote it (tslog's ``_meta.path.filePath``: another
OpenClaw package is another install) and, in a shared log, by naming A's agent or state dir or by being written
while A's gateway runs; what cannot be attributed is kept aside and said, not charged.

The dated default dir is redirected to a temporary one (``default_log_file``): writing into the real shared
``/tmp/openclaw`` from a test would reach every other OpenClaw on the machine. The lines are B's real ones.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from clawprobe.core import probe as probe_mod
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, discover, fast, log_scope, openclaw_packages
from clawprobe.core.probes import openclaw_log as oclog
from tests.test_probes_env_real import shell_env
from tests.testbed import OC_LATEST, OC_QMD, qmd_config, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


@pytest.fixture(scope="module", params=["main", "ops-bot"])
def shared(request, oc_home_factory, testbed, tmp_path_factory):
    """(A, the shared log dir, its dated file); A's agent is ``main`` (B's too) or another id."""
    logdir = tmp_path_factory.mktemp("shared-openclaw")
    dated = logdir / f"openclaw-{datetime.now().astimezone().strftime('%Y-%m-%d')}.log"
    a = oc_home_factory(None, name="this-install", agent_id=request.param)
    a.write_config(qmd_config("qmd", "search"), set_logging=False)  # A reads the dated default log; configured before B writes
    a.write_memory_md()
    b = oc_home_factory({"plugins": {"entries": {"memory-core": {"enabled": False}}}, "logging": {"file": str(dated)}},
                        name="other-install")
    res = run_openclaw(b, OC_LATEST, "memory", "status", testbed=testbed)
    assert 'does not know the command "memory"' in res.stdout + res.stderr
    assert 'does not know the command' in dated.read_text()  # B's real record, in the dated file
    return a, logdir, dated


def test_a_record_of_another_openclaw_program_is_not_this_installs(shared, testbed, monkeypatch):
    a, logdir, dated = shared
    monkeypatch.setattr(probe_mod, "default_log_file", lambda d, env: str(logdir / f"openclaw-{d.strftime('%Y-%m-%d')}.log"))
    clear_caches()
    ctx = discover(env=shell_env(a, testbed, [testbed.bin_dir]))
    scope = log_scope(ctx, a.agent_id)
    assert scope.shared and scope.writers == openclaw_packages(ctx)
    assert scope.writers and all(w.endswith(os.path.join(f"oc-{OC_QMD}", "node_modules", "openclaw")) for w in scope.writers)
    facts = oclog.read_log([str(dated)], a.agent_id, scope=scope)
    assert facts.foreign >= 1 and facts.issues == [] and facts.signals == []
    # the same records with no program known: not attributable in a shared log (no gateway of A runs) — said
    blind = oclog.read_log([str(dated)], a.agent_id, scope=scope.model_copy(update={"writers": []}))
    assert blind.issues == [] and blind.signals == []
    assert any('does not know the command "memory"' in u.detail for u in blind.unattributed)
    # … and in A's own (not shared) log they would count: the test's lines are what made the verdict
    own = oclog.read_log([str(dated)], a.agent_id, scope=scope.model_copy(update={"writers": [], "shared": False}))
    assert any('does not know the command "memory"' in i.detail for i in own.issues)


def test_the_verdict_does_not_quote_another_installs_line(shared, testbed, monkeypatch):
    a, logdir, _ = shared
    monkeypatch.setattr(probe_mod, "default_log_file", lambda d, env: str(logdir / f"openclaw-{d.strftime('%Y-%m-%d')}.log"))
    monkeypatch.setattr(probe_mod, "openclaw_packages", lambda ctx: [])  # the attribution by time/name alone
    clear_caches()
    r = fast(discover(env=shell_env(a, testbed, [testbed.bin_dir])), a.agent_id, None, datetime.now(UTC))
    d = diagnose(r)
    assert not any("does not know the command" in e and "unrecognized" in e for e in d.evidence), d.evidence
    assert d.reason != "unrecognized_signal"
    assert any("not charged" in e.detail and "does not know the command" in e.detail for e in r.backend.evidence)
