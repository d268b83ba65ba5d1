"""Breaker round 21: what a screen says of a claim that no longer holds, or of a config nothing serves, is
decided once in core and never reads ok/green — over every demo scenario and agent.

* an expired healthy receipt: the banner's exit code is the app's (``q``) and ``replay --now``'s, pane 6 gives
  the action ``replay --now`` gives (not "Nothing to repair"), pane 2's reason does not freeze a duration;
* while the file's memory config is not what serves (QMD not serving, config drift): no mode cell, reason,
  ``check`` cell, coverage, canary step or freshness line reads ok, and the qualifier leads the freshness line;
* no index and no memory file on disk: nothing is proven current (freshness unknown, never fresh).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.content import Content

from clawprobe.core.diagnosis import claim_exit_code, diagnose
from clawprobe.core.interpret.merge import _nothing_to_prove
from clawprobe.core.modes import serving_block
from clawprobe.core.receipt import Freshness
from clawprobe.core.report import fact_lines, to_text
from clawprobe.core.view import agent_facts, live_fact
from clawprobe.tui import demo
from clawprobe.tui.state import build_report, reevaluate
from clawprobe.tui.widgets.action_pane import action_markup
from clawprobe.tui.widgets.canary_pane import returned_line
from clawprobe.tui.widgets.countdown_pane import live_line
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain


def report(name: str, now=T0):
    rs, _ = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    return build_report(rs, now, source="demo")


def cases(keep) -> list[tuple[str, int]]:
    """(scenario, agent index) of every demo agent whose view ``keep`` selects — decided at collection, so no
    case is collected only to be skipped; each test asserts its property holds for some agent at all."""
    out = [(s.name, i) for s in demo.scenarios() for i, view in enumerate(report(s.name).agents) if keep(view)]
    assert out, "no demo agent has the property under test"
    return out


#: healthy claims with a running lease (what can lapse) / agents whose file config is not what serves
LEASED = cases(lambda v: v.diagnosis.exit_code == 0 and v.diagnosis.expiry.claim == "lease")
UNSERVED = cases(lambda v: serving_block(v.receipt) is not None)


@pytest.mark.parametrize(("name", "i"), LEASED)
def test_an_expired_healthy_claim_says_the_exit_code_and_action_replay_now_gives(name, i):
    rep = report(name)
    view = rep.agents[i]
    d = view.diagnosis
    assert d.exit_code == 0 and d.expiry.claim == "lease"
    later = d.expires_at + timedelta(seconds=29)
    rep = reevaluate(rep.model_copy(update={"selected": i}), later)
    now_d = diagnose(view.receipt, later)  # what `clawprobe replay --now` says of the same receipt
    shown = rep.current.diagnosis
    line = plain(banner_lines(rep, 80)[0])
    assert line.endswith(f"exit {now_d.exit_code}") and now_d.exit_code == 1, line
    assert claim_exit_code(shown) == now_d.exit_code
    if len(rep.agents) == 1:
        assert rep.exit_code == now_d.exit_code  # what q exits with
    pane6 = plain(action_markup(rep.current, 200))
    assert pane6.startswith(f"▶ {now_d.next_action.title}") and "Nothing to repair" not in pane6, pane6
    own = agent_facts(view.receipt, shown, later).configured_row
    assert own is not None and own.cells[0].state == "fail"
    reason = own.cells[0].reason  # a time, so a pane that keeps it while the clock ticks stays true
    assert "ago" not in reason and reason.startswith("the lease ended at "), reason
    assert agent_facts(view.receipt, shown, later + timedelta(minutes=5)).configured_row.cells[0].reason == reason


@pytest.mark.parametrize(("name", "i"), UNSERVED)
def test_nothing_about_a_config_nothing_serves_reads_ok(name, i):
    view = report(name).agents[i]
    r, d = view.receipt, view.diagnosis
    assert serving_block(r) is not None
    nothing_reads_ok(r, d)


@pytest.mark.parametrize("agent", ["main", "ops-bot"])
@pytest.mark.parametrize(("key", "value"), [("tool_off", "tools.deny = [\"memory_search\"]"),
                                            ("memory_off", "plugins.entries.memory-core.enabled = false")])
@pytest.mark.parametrize("name", [s.name for s in demo.scenarios() if len(s.receipts) == 1])
def test_an_agent_that_cannot_search_has_no_ok_mode_row(name, key, value, agent):
    """Brk21 D: with memory_search taken from the agent (or memory search off), the mode rows, check's cells
    and the freshness line never read ok — the verdict is memory_unavailable and nothing answers for it."""
    from clawprobe.core.receipt import Receipt

    r = Receipt.model_validate(report(name).current.receipt.model_dump())
    r.agent_id = agent
    setattr(r.config, key, value)
    d = diagnose(r, T0)
    assert serving_block(r) is not None and d.exit_code == 2, (d.verdict, d.reason)
    nothing_reads_ok(r, d)


def nothing_reads_ok(r, d) -> None:
    """No mode cell, check cell, coverage, canary step, returned path or freshness line of ``r`` reads ok."""
    f = agent_facts(r, d, T0)
    for row in f.rows:
        if row.state == "idle":  # a mode not used: dimmed, its reasons say what a switch would need
            assert all(row.shown(c) == "idle" for c in range(4))
            continue
        for c in range(4):
            assert row.cell_shown(c).state != "ok", (row.label, c, row.cell_shown(c))
            assert row.said(c) != "ok"
            if row.configured and row.cells[c].state == "ok":
                assert row.cell_shown(c).words.startswith("blocked: "), row.cell_shown(c)
    assert f.coverage.state != "ok", f.coverage
    assert all(s.state != "ok" for s in f.steps), f.steps
    assert "=ok" not in "\n".join(fact_lines(f)).split("pending:")[0]  # check's mode cells
    assert ": ok —" not in "\n".join(line for line in fact_lines(f) if line.lstrip().startswith(("canary", "coverage")))
    if r.canary.returned_path is not None:  # pane 5's returned path: no green tick either
        assert "[$success]" not in returned_line(r), returned_line(r)
    lf = live_fact(r, T0)
    assert lf.state != "ok"
    if lf.state == "idle":  # the qualifier leads, so a narrow pane cuts the tail, never the reason
        assert lf.head in ("QMD is not serving", "the gateway serves another config", "the agent cannot search"), lf
        # no lease countdown for an index nothing serves (it was cut mid-word at 80 columns: "4 min 57 s le…")
        assert "left" not in live_line(r, T0)[0]
        assert not live_line(r, T0)[0].startswith("[$success]")


def test_config_drift_reasons_say_blocked_in_pane_2_and_check():
    view = report("rw03-gateway-old-config").current  # demo 9, config_drift
    text = to_text([(view.receipt, view.diagnosis)])
    own = agent_facts(view.receipt, view.diagnosis, T0).configured_row
    assert own is not None and own.blocked
    assert f"vectors={own.said(1)}" in text and own.said(1) == "blocked"
    assert own.cell_shown(1).words.startswith("blocked: the running gateway")


def test_no_index_and_no_file_on_disk_proves_nothing_current():
    from clawprobe.core.receipt import Receipt

    r = Receipt.model_validate(report("spec-1-bm25-pending-healthy").current.receipt.model_dump())
    r.freshness = Freshness(last_proven_current=T0, method="no builtin index (/x/main.sqlite: not there): "
                            "nothing on disk is indexed", unindexed_count=0, ghost_count=0)
    _nothing_to_prove(r)
    assert r.freshness.last_proven_current is None
    assert r.freshness.method == ("no builtin index (/x/main.sqlite: not there), and no memory file on disk: "
                                  "nothing to prove current")
    assert live_fact(r, T0).state == "unknown"
    r.freshness = Freshness(last_proven_current=T0, method="no builtin index: nothing on disk is indexed",
                            unindexed_count=2, unindexed_files=["MEMORY.md", "memory/a.md"])
    _nothing_to_prove(r)  # notes on disk the index never held: a real gap, left as measured
    assert r.freshness.last_proven_current == T0


@pytest.mark.parametrize("backend", ["qmd", "builtin"])
def test_notes_never_indexed_are_never_called_fresh_or_proven_current(backend):
    """Breaker round 24: an agent whose index was never built, with notes on disk inside the lease (their write
    time starts it) — pane 3 said "proven current 10:40:57Z: no QMD index …" and the live line "fresh · 6 min
    left". Nothing proved that index current: the line says never indexed with the time left before it is stale,
    and the pane says when the notes started waiting."""
    from clawprobe.core.receipt import Receipt
    from clawprobe.tui.widgets.countdown_pane import CountdownPane

    view = report("spec-1-bm25-pending-healthy").current
    r = Receipt.model_validate(view.receipt.model_dump())
    r.config.configured_backend = backend
    where = "no QMD index at /s/index.sqlite" if backend == "qmd" else "no builtin index (/s/ops.sqlite: not there)"
    r.freshness = Freshness(last_proven_current=T0 - timedelta(seconds=16), method=f"{where}: nothing on disk was "
                            "ever indexed", unindexed_count=1, unindexed_files=["MEMORY.md"], stale_reason="never_indexed")
    lf = live_fact(r, T0)
    assert lf.state == "unknown" and lf.head.startswith("never indexed · stale in ") and "fresh" not in lf.head, lf
    body = plain(CountdownPane.body(None, view.model_copy(update={"receipt": r}), report("spec-1-bm25-pending-healthy"), T0))
    assert "proven current" not in body and body.startswith("notes waiting since "), body


@pytest.mark.parametrize("version,agent", [("2026.9.6", "ops-bot"), ("2026.7.35", "kb-7")])
def test_notes_never_indexed_past_the_lease_are_not_said_proven_current(oc_home_factory, testbed, tmp_path, version,
                                                                       agent):
    """Breaker round 24, the same fact past the lease, both eras on the real OpenClaw (2026.9.6 builtin, 2026.7.35
    QMD): an agent whose index was never built and whose note is two hours old — `check` and `walk` said "last proven
    current 7211 s ago (no builtin index …)": nothing ever proved an index current, that time is the note's.
    They now say when the notes started waiting (:func:`clawprobe.core.lease.proven_words`)."""
    import json
    import os
    import time

    from tests.hardening_helpers import check_env, run_clawprobe
    from tests.testbed import builtin_config, qmd_config

    listed = {"list": [{"id": agent, "default": True}]}
    cfg = builtin_config("none", version=version, agents=listed) if version == "2026.9.6" else qmd_config(agents=listed)
    home = oc_home_factory(cfg, name=f"never-{agent}", agent_id=agent)
    note = home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    old = time.time() - 7200
    os.utime(note, (old, old))
    env = check_env(home, testbed, tmp_path / "data", openclaw=testbed.openclaw(version))
    rc, out, err = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    d = got["diagnosis"]
    assert (rc, got["verdict"], d["reason"]) == (1, "stale_index", "never_indexed"), (d["evidence"], err[-300:])
    assert d["evidence"][0].startswith("notes waiting since 72"), d["evidence"]
    assert "last proven current" not in json.dumps(got), [ln for ln in json.dumps(got).split(", ") if "proven" in ln]
    rc, walked, err = run_clawprobe(["walk", "--agent", agent], env, timeout=300)
    assert "notes waiting since 72" in walked and "last proven current" not in walked, walked[:800]
