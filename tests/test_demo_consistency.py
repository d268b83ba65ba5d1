"""The demo scenarios (and the replay files of tests/data/replay) tell one story each: the gateway PATH the
evidence shows (``gateway.path_dirs``) is the one every other line names — the qmd failure detail, the
diagnosis's evidence and the walkthrough's commands (``clawprobe.core.repairs``) — one PATH per scenario and agent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import Receipt
from clawprobe.core.replay import load_receipts
from clawprobe.tui import demo
from tests.dashboard_support import T0

#: ``PATH /a:/b``, ``PATH=/a:/b``, ``PATH='/a:/b'``: a colon-separated list of absolute dirs
PATH_LIST = re.compile(r"\bPATH(?: is)?[ =]'?(/[^\s'\",;)]*(?::/[^\s'\",;)]*)*)")
ALL = [s.name for s in demo.scenarios()]
REPLAYS = sorted((Path(__file__).parent / "data" / "replay").glob("*.json"))


def named_paths(text: str) -> set[str]:
    """Every PATH value ``text`` names (trailing dots of a sentence dropped)."""
    return {m.group(1).rstrip(".") for m in PATH_LIST.finditer(text)}


def test_the_reader_finds_each_way_a_path_is_written():
    assert named_paths("qmd not found on the gateway PATH /usr/bin:/bin (spawn qmd ENOENT)") == {"/usr/bin:/bin"}
    assert named_paths("env -i PATH='/a/bin:/b' qmd --version; PATH=/c.") == {"/a/bin:/b", "/c"}
    assert named_paths("the gateway's PATH has no qmd") == set()


def one_path_each(name: str, receipts: list[Receipt]) -> None:
    """Every PATH the receipts and their diagnoses name is the gateway PATH their evidence shows."""
    for r in receipts:
        d = diagnose(r)
        text = "\n".join([r.model_dump_json(), d.model_dump_json()])
        shown = named_paths(text)
        if not r.gateway.path_dirs:
            assert not shown, f"{name}/{r.agent_id}: a PATH is named but the gateway PATH is not measured"
            continue
        assert shown <= {":".join(r.gateway.path_dirs)}, f"{name}/{r.agent_id}: {shown} vs {r.gateway.path_dirs}"


@pytest.mark.parametrize("name", ALL)
def test_one_gateway_path_per_scenario(name):
    receipts, history = demo.at_now(demo.scenarios()[demo.find(name)], T0)
    one_path_each(name, [*receipts, *history])


@pytest.mark.parametrize("path", REPLAYS, ids=[p.stem for p in REPLAYS])
def test_one_gateway_path_per_replay_file(path):
    one_path_each(path.stem, load_receipts(str(path)))


def test_the_qmd_missing_walkthrough_uses_the_path_its_evidence_shows():
    (r, *_), _ = demo.at_now(demo.scenarios()[demo.find("spec-2-qmd-missing")], T0)
    d = diagnose(r)
    steps = "\n".join(s.model_dump_json() for s in d.next_action.steps)
    assert "PATH=/usr/bin:/bin" in steps.replace("'", "")
    assert named_paths(r.qmd.failure_detail or "") == {"/usr/bin:/bin"}
