"""Breaker round 26 (r26q): one absolute ``memory.qmd.sessions.exportDir`` for several agents (a "managed volume",
as OpenClaw's own help suggests). OpenClaw 2026.7.35 resolves it to the same directory for every agent, and each
agent's export run deletes every ``*.md`` there that is not one of its own transcripts (``exportSessions``). Measured
with qmd 2.8.3: ``memory index --agent kb-7`` after ``--agent ops-bot`` left only kb-7's export, and a running
gateway (which rewrites an export only when its transcript changed) ended with the dir empty and both agents'
transcripts inactive in their indexes — neither agent recalls its sessions. clawprobe said ``stale_index · dirty``
→ ``openclaw memory index --agent <id>``: pasted, that re-exports this agent and deletes the other's, whose next
check is stale in turn (a loop). Now the shared dir is measured (each agent's export dir as OpenClaw resolves it)
and the stale verdict names it: ``stale_index · export_dir_shared`` → unset the key, then index each agent (run
here: both fresh after it)."""

from __future__ import annotations

import json
import os
import time

import pytest

from clawprobe.core.probes.session_exports import export_dir, sharing_agents
from tests.hardening_helpers import check_env, run_clawprobe
from tests.test_session_exports_real import SESSION_SEARCH, _transcript
from tests.testbed import OC_QMD, qmd_config, run_openclaw

AGENTS = {"ops-bot": ("11111111-1111-4111-8111-111111111111", "ORCHID-OPS-11"),
          "kb-7": ("22222222-2222-4222-8222-222222222222", "WALRUS-KB-22")}


def _receipts(home, testbed, data) -> dict[str, dict]:
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data), timeout=300)
    assert "Traceback" not in err, err
    return {x["agent_id"]: x for x in json.loads(out)["receipts"]}


@pytest.mark.real
@pytest.mark.timeout(1200)
def test_agents_sharing_one_export_dir_are_named_and_the_repair_gives_each_its_own(oc_home_factory, testbed, tmp_path):
    shared = tmp_path / "volume" / "qmd sessions"
    workspaces = {a: tmp_path / f"ws-{a}" for a in AGENTS}
    cfg = qmd_config(qmd={"sessions": {"enabled": True, "exportDir": str(shared)}}, provider=None,
                     agents={"defaults": {"memorySearch": SESSION_SEARCH},
                             "list": [{"id": a, "default": a == "ops-bot", "workspace": str(w)}
                                      for a, w in workspaces.items()]})
    home = oc_home_factory(cfg, name="shared-exports", agent_id="ops-bot")
    hour_ago = time.time() - 3600  # past the lease: the unexported transcript is stale, not awaiting the update
    for aid, (sid, token) in AGENTS.items():
        (workspaces[aid] / "memory").mkdir(parents=True)
        (workspaces[aid] / "MEMORY.md").write_text(f"# Memory\n\nNotes of {aid}.\n")
        sessions = home.state_dir / "agents" / aid / "sessions"
        sessions.mkdir(parents=True)
        _transcript(sessions / f"{sid}.jsonl", sid, f"The gate code is {token}.")
        os.utime(sessions / f"{sid}.jsonl", (hour_ago, hour_ago))

    def index(aid: str) -> None:
        made = run_openclaw(home, OC_QMD, "memory", "index", "--agent", aid, path_dirs=[testbed.bin_dir], timeout=240,
                            testbed=testbed)
        assert made.rc == 0, made.stderr

    for aid in AGENTS:  # ops-bot, then kb-7: kb-7's export deletes ops-bot's
        index(aid)
    assert sorted(os.listdir(shared)) == [f"{AGENTS['kb-7'][0]}.md"]  # the fault, measured
    data = tmp_path / "data"

    got = _receipts(home, testbed, data)
    ops = got["ops-bot"]
    assert (ops["verdict"], ops["reason"]) == ("stale_index", "export_dir_shared"), ops["diagnosis"]["evidence"]
    text = " | ".join(ops["diagnosis"]["evidence"])
    assert str(shared) in text and "kb-7" in text, text
    assert ops["next_command"].endswith("config unset memory.qmd.sessions.exportDir"), ops["next_command"]
    assert "memory index" not in ops["next_command"]
    assert got["kb-7"]["verdict"] != "healthy"  # no canary here; its export is there now, its turn comes next

    unset = run_openclaw(home, OC_QMD, "config", "unset", "memory.qmd.sessions.exportDir", path_dirs=[testbed.bin_dir],
                         testbed=testbed)
    assert unset.rc == 0, unset.stderr
    for aid in AGENTS:
        index(aid)
    got = _receipts(home, testbed, data)
    for aid in AGENTS:
        assert got[aid]["verdict"] != "stale_index", (aid, got[aid]["diagnosis"]["evidence"])
        assert not any(f["tag"] == "sessions_export_shared" for f in got[aid]["receipt"]["findings"])
    for aid, (_, token) in AGENTS.items():
        found = run_openclaw(home, OC_QMD, "memory", "search", token, "--agent", aid, "--json",
                             path_dirs=[testbed.bin_dir], testbed=testbed)
        assert token in found.stdout, (aid, found.stdout[-500:])


@pytest.mark.parametrize("agents", [("main", "ops-bot"), ("kb-7", "ops-bot", "main")])
def test_which_agents_share_an_export_dir(tmp_path, agents):
    """An absolute dir is everyone's; a relative one is each workspace's (shared only by agents sharing a
    workspace); a symlink to the same dir is the same dir; the default is per agent."""
    state, home = str(tmp_path / "state"), str(tmp_path / "home")
    first, *rest = agents
    ws = {a: str(tmp_path / f"ws-{a}") for a in agents}
    for kind, expect in (("absolute", list(rest)), ("default", []), ("relative", [])):
        configured = {"absolute": str(tmp_path / "vol"), "default": None, "relative": "exports"}[kind]
        dirs = {a: export_dir(state, a, configured, ws[a], home) for a in agents}
        assert sharing_agents(dirs[first], {a: dirs[a] for a in rest}) == sorted(expect), kind
    same_ws = {a: export_dir(state, a, "exports", ws[first], home) for a in agents}  # one workspace for all
    assert sharing_agents(same_ws[first], {a: same_ws[a] for a in rest}) == sorted(rest)
    (tmp_path / "vol").mkdir()
    os.symlink(tmp_path / "vol", tmp_path / "link")
    assert sharing_agents(str(tmp_path / "vol"), {rest[0]: str(tmp_path / "link")}) == [rest[0]]
