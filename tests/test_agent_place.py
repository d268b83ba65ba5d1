"""The agents are numbered and walked in one order, the overview's worst first (decided by
``clawprobe.core.view.worst_first``): the header's ``(n/N, a: next)`` counts in the order ``a`` walks, and
``clawprobe walk`` prints the worst agent's walkthrough first."""

from __future__ import annotations

import json

from clawprobe.cli.main import main
from clawprobe.tui import demo
from clawprobe.tui.state import build_report, overview, select, select_next
from clawprobe.tui.widgets.header import header_lines
from tests.dashboard_support import T0

HEALTHY, FAILING, WARNING = "spec-1", "spec-2", "spec-4"  # healthy, qmd missing (exit 2), stale (exit 1)


def _receipts(verdicts: dict[str, str]):
    out = []
    for agent, scenario in verdicts.items():
        rs, _ = demo.at_now(demo.scenarios()[demo.find(scenario)], T0)
        out.append(rs[0].model_copy(update={"agent_id": agent}))
    return out


def test_the_header_numbers_agents_in_the_order_a_walks_them():
    # config order: healthy main first, failing ops-bot last
    rep = build_report(_receipts({"main": HEALTHY, "research": WARNING, "ops-bot": FAILING}), T0, source="replay")
    assert [r.agent_id for r in overview(rep, T0)] == ["ops-bot", "research", "main"]
    rep = select(rep, "ops-bot")
    seen = []
    for _ in range(3):
        seen.append((rep.current.agent_id, header_lines(rep, T0)[0].split(" · ")[0].split("agent ", 1)[1]))
        rep = select_next(rep, 1, T0)
    assert seen == [("ops-bot", "[b]ops-bot[/b] (1/3, a: next)"), ("research", "[b]research[/b] (2/3, a: next)"),
                    ("main", "[b]main[/b] (3/3, a: next)")]


def test_walk_prints_the_worst_agent_first(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path / "data"))
    rs = _receipts({"alpha": HEALTHY, "beta": WARNING, "gamma": FAILING})
    path = tmp_path / "receipts.json"
    path.write_text(json.dumps([r.model_dump(mode="json") for r in rs]))
    assert main(["--replay", str(path), "walk", "--json"]) == 2
    walks = json.loads(capsys.readouterr().out)["walks"]
    assert [w["agent_id"] for w in walks] == ["gamma", "beta", "alpha"]
