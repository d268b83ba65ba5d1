"""An index the running gateway built and has not checkpointed, on the real OpenClaw 2026.9.6 (breaker round 21,
finding 4; the pure side is ``tests/test_builtin_live_wal.py``).

A second agent ``helper`` (its own workspace) was never indexed by the CLI; its first ``memory_search`` through the
gateway builds its index inside the gateway, which keeps it in the ``-wal`` of a 4096-byte database file.
clawprobe said "unverified · never indexed" and told the operator to run ``memory index`` for an index that
existed — the gateway's own tool returns the canary (ground truth: ``gateway call tools.invoke``).
"""

from __future__ import annotations

import json
import re

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover
from tests.hardening_helpers import run_clawprobe
from tests.testbed import OC_LATEST, builtin_config, gateway, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


def test_an_index_the_gateway_holds_in_its_wal_is_no_never_indexed(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(name="gwbuilt")
    ws2 = home.root / "helperws"
    (ws2 / "memory").mkdir(parents=True)
    home.write_config(builtin_config("none", version=OC_LATEST, agents={
        "ownership": "explicit", "entries": {"main": {}, "helper": {"workspace": str(ws2)}}}))
    home.write_memory_md("# Memory\n\nmain.\n")
    home.write_memory_md("# Memory\n\nHelper: the staging database lives on host db-stage-04.\n", workspace=ws2)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                        "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    rc, _, err = run_clawprobe(["canary", "plant", "--yes", "--agent", "helper"], env)
    assert rc == 0, err
    m = re.search(r"CLAWPROBE-CANARY-[A-Z0-9]+", (ws2 / "memory" / "clawprobe-canary.md").read_text())
    assert m is not None
    db = home.builtin_db("helper")
    with gateway(home, OC_LATEST, testbed=testbed, ready_timeout=240) as gw:
        params = json.dumps({"name": "memory_search", "args": {"query": m.group(0)}, "agentId": "helper"})
        res = run_openclaw(home, OC_LATEST, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                           "--token", gw.token, "--json", timeout=120, testbed=testbed)
        assert res.rc == 0 and m.group(0) in res.stdout, res.stdout[-2000:]  # the gateway's agent finds it
        assert db.stat().st_size <= 4096 and db.with_name(db.name + "-wal").stat().st_size > 100_000, \
            "the index lives in the gateway's uncheckpointed -wal"
        clear_caches()
        r = collect(discover(env=env), "helper")
        d = diagnose(r)
        assert d.reason != "never_indexed", (d.verdict, d.reason, d.evidence)
        assert "memory index" not in (d.next_action.command or "" if d.next_action else ""), d.next_action
        assert r.canary.outcome == "found", (r.canary, d.evidence)
