"""Two agents of one real OpenClaw 2026.9.6 install (``agents.entries`` with explicit ownership, one shared
``logging.file``): each agent's workspace as OpenClaw resolves it (``<agents.defaults.workspace>/<id>`` for every
agent: none inherits the default workspace with explicit ownership), and one agent's broken index never makes the
other's verdict — its log lines name their agent (``memory status failed (ops): …``), even when they go on to name
the other (a store copied from main over work's: "… belongs to agent main; requested agent work", breaker
round 5)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from clawprobe.core import canary_write, probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.rw_support import context
from tests.testbed import OC_LATEST, builtin_config, run_openclaw


@pytest.fixture(scope="module")
def two(oc_home_factory, testbed, tmp_path_factory):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="two-agents")
    cfg = json.loads(home.config_path.read_text())
    cfg["agents"].update(entries={"main": {}, "ops": {}, "work": {}}, ownership="explicit")
    home.config_path.write_text(json.dumps(cfg))
    data = tmp_path_factory.mktemp("clawprobe-data")
    extra = {"CLAWPROBE_DATA_DIR": str(data)}
    ctx = context(home, testbed, OC_LATEST, extra=extra)
    workspaces = {a: probe.workspace_of(ctx, a).path for a in ("main", "ops")}
    for a, ws in workspaces.items():
        os.makedirs(os.path.join(ws, "memory"), exist_ok=True)
        with open(os.path.join(ws, "MEMORY.md"), "w") as f:
            f.write(f"# {a}\n\nThe notes of agent {a}.\n")
        canary_write.plant(ws, a, root=data)
        made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", a, timeout=240, testbed=testbed)
        assert made.rc == 0 and f"({a}): 2 files indexed" in made.stdout, (made.stdout, made.stderr)  # OpenClaw's dir
    home.builtin_db("ops").write_bytes(os.urandom(40_000))  # the other agent's store destroyed
    ws_work = probe.workspace_of(ctx, "work").path  # work's store: a copy of main's ("restored" from the wrong one)
    os.makedirs(os.path.join(ws_work, "memory"))
    with open(os.path.join(ws_work, "MEMORY.md"), "w") as f:
        f.write("# work\n\nThe notes of agent work.\n")
    canary_write.plant(ws_work, "work", root=data)
    home.builtin_db("work").parent.mkdir(parents=True)
    home.builtin_db("work").write_bytes(home.builtin_db("main").read_bytes())
    ctx = context(home, testbed, OC_LATEST, extra=extra)
    work = probe.collect(ctx, "work")  # first: its refusals are in the shared log when main is checked
    return {"home": home, "workspaces": workspaces, "work": work, "main": probe.collect(ctx, "main"),
            "ops": probe.collect(ctx, "ops")}


def test_every_agent_gets_its_own_workspace_dir_with_explicit_ownership(two):
    home, ws = two["home"], two["workspaces"]
    assert ws == {"main": str(home.workspace / "main"), "ops": str(home.workspace / "ops")}
    assert two["main"].config.workspace == ws["main"] and two["main"].canary.outcome == "found"


def test_one_agents_broken_index_does_not_touch_the_others_verdict(two):
    main, ops = two["main"], two["ops"]
    d = diagnose(main, main.checked_at)
    assert (d.verdict.value, d.reason) == ("healthy", None), d.evidence
    assert not [e for e in main.ledger if "(ops)" in e.line]
    d = diagnose(ops, ops.checked_at)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "index_corrupt"), d.evidence


def test_a_store_copied_from_another_agent_is_said_and_its_owner_named(two):
    work = two["work"]
    d = diagnose(work, work.checked_at)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "store_foreign"), (d.evidence, work.probe_errors)
    assert "belongs to agent main" in d.evidence[0] and d.next_action.command.startswith("mkdir ") and " mv -n " in d.next_action.command
    assert work.canary.outcome != "found"  # OpenClaw's own search refuses the store too


@pytest.mark.parametrize("roster", [{"main": {}, "ops-bot": {}}, None], ids=["entries", "no-roster"])
def test_a_removed_agents_left_over_state_dir_is_no_agent_on_2026_9_6(oc_home_factory, testbed, monkeypatch, capsys,
                                                                      roster):
    """An agent removed from the config leaves ``<state>/agents/<id>/`` (and its workspace) behind: 2026.9.6 answers
    every memory command for it with ``Unknown agent id "<id>"`` (with or without a roster, measured), yet clawprobe
    took the dir for an agent and judged it — a missing workspace "to restore", a canary to plant — for an agent
    nothing can search (breaker round 22). check, walk, canary plant, bundle and the live dashboard now refuse the id
    (exit 3), nothing written;
    2026.7.35, which still probes such an agent (measured), keeps the dir as an agent."""
    from clawprobe.cli.main import main
    from clawprobe.core.locate import known_agents
    from tests.testbed import openclaw_env

    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="left-over")
    gone = "old_bot" if roster is None else "retired-7"
    if roster is not None:
        cfg = json.loads(home.config_path.read_text())
        cfg["agents"].update(entries=roster, ownership="explicit")
        home.config_path.write_text(json.dumps(cfg))
    (home.state_dir / "agents" / gone / "agent").mkdir(parents=True)
    ws = home.state_dir / f"workspace-{gone}"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(f"# {gone}\n\nIts old notes.\n")
    for k in [k for k in os.environ if k.startswith(("OPENCLAW_", "CLAWPROBE_"))]:
        monkeypatch.delenv(k)
    for k, v in {**openclaw_env(home, OC_LATEST, testbed=testbed), "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                 "CLAWPROBE_DATA_DIR": str(home.root / "data")}.items():
        monkeypatch.setenv(k, v)
    written = home.root / "bundle.json"
    for argv in (["check", "--json", "--agent", gone], ["walk", "--agent", gone], ["canary", "plant", "--yes", "--agent", gone],
                 ["bundle", "--agent", gone, "-o", str(written)]):
        rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 3 and f"no agent '{gone}' in the config" in err and "Unknown agent id" in err, (argv, rc, out, err)
    assert not list(ws.rglob("clawprobe-canary*.md")) and not written.exists()
    app = ClawprobeApp(live=LiveSource(agent=gone), select_agent=gone, fast_refresh_s=None)  # the live dashboard
    async def leaves() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(600):
                if not app.is_running:
                    break
                await pilot.pause(0.05)
    asyncio.run(leaves())
    assert app.return_value == 3 and app.refused and f"no agent '{gone}' in the config" in app.refused, app.refused
    assert gone in known_agents({}, str(home.state_dir), "2026.7.35")


def test_a_store_of_random_bytes_is_said_in_words_and_its_sqlite_errors_are_its_symptom(two):
    """ops' store is random bytes: the evidence said ``…/openclaw-agent.sqlite: not_sqlite — no SQLite header``
    (the opener's id) and pane 1 listed OpenClaw's "memory search failed (ops): file is not a database" and
    the exit 1 of ``memory status`` as output "clawprobe cannot judge" beside the verdict that judged them
    (breaker round 24). The evidence says it in words; the lines are explained by the measured damage."""
    from clawprobe.core.ledger import unrecognized

    ops = two["ops"]
    d = diagnose(ops, ops.checked_at)
    assert "not_sqlite" not in " ".join(d.evidence) and "not a SQLite file" in d.evidence[0], d.evidence
    assert any("not a database" in e.line for e in ops.ledger), [e.line for e in ops.ledger]
    assert unrecognized(ops) == [], [(e.source, e.line) for e in unrecognized(ops)]
    assert {e.tag for e in ops.ledger if "not a database" in e.line} == {"index_corrupt"}
