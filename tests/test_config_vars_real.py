"""A config that names its paths and keys by ``${VAR}`` (``extraPaths: ["${NOTES_DIR}"]``, the documented way
for keys): clawprobe's own ``openclaw`` runs got only PATH/HOME/OPENCLAW_*, so OpenClaw 2026.9.6 read another
config ("missing env var … at memory.search.extraPaths[0]"), judged another index scope ("index identity
mismatched: index scope changed") and the canary "missed" on a healthy install. The referenced variables now
reach those runs — and only them: never a receipt, a context dump or the screen. Real 2026.9.6: one index run,
one check."""

from __future__ import annotations

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from tests.rw_support import context, plant
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

KEY = "sk-clawprobe-test-not-a-key-5150"


def test_the_configs_variables_reach_openclaw_and_nothing_else(oc_home_factory, testbed, tmp_path):
    notes = tmp_path / "team-notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# plan\n\nShip on Friday.\n")
    cfg = builtin_config("none", version=OC_LATEST,
                         memory={"search": {"extraPaths": ["${NOTES_DIR}"], "remote": {"apiKey": "${TEAM_KEY}"}}})
    home = oc_home_factory(cfg, name="vars")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    spec = plant(home)
    env = {"NOTES_DIR": str(notes), "TEAM_KEY": KEY}
    made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", extra_env=env, timeout=240,
                        testbed=testbed)
    assert made.rc == 0 and "3 files indexed" in made.stdout, (made.stdout, made.stderr)
    ctx = context(home, testbed, OC_LATEST, extra=env)
    r = probe.collect(ctx, "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("healthy", None), (d.evidence, [e.line for e in r.ledger])
    assert not [e for e in r.ledger if "missing env var" in e.line]
    extra = next(c for c in r.coverage.sources if c.source == str(notes))  # ${NOTES_DIR}, from the caller
    assert (extra.expected, extra.indexed) == (1, 1), r.coverage.sources
    assert KEY not in ctx.model_dump_json() and KEY not in r.model_dump_json() and KEY not in str(d)
