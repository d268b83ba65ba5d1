"""Breaker round 26: a FIFO where the agent's builtin store belongs (2026.9.6 ``agents/<id>/agent/openclaw-agent.sqlite``).
Its size reads 0, so clawprobe took it for "no builtin index yet" while OpenClaw's own open of it blocks: the first
``openclaw memory status`` ran into clawprobe's 60 s deadline, and the check said ``unverified · openclaw_failed`` →
``openclaw --version`` (later runs: "disk I/O error"). Now the store is measured not a regular file:
``memory_unavailable · index_unreadable`` → move it aside, let OpenClaw build the store, re-probe — pasted for real."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, discover, fast, slow
from clawprobe.core.probes.builtin_index import not_regular, read_builtin_index, to_builtin_facts
from tests.testbed import OC_LATEST, builtin_config, run_openclaw


def test_a_fifo_socket_or_device_at_the_store_is_no_empty_store(tmp_path, monkeypatch):
    import socket

    store = tmp_path / "agents" / "kb-7" / "agent" / "openclaw-agent.sqlite"
    store.parent.mkdir(parents=True)
    os.mkfifo(store)
    facts = read_builtin_index(tmp_path, "kb-7")  # returns at once: the FIFO is never opened
    assert facts.open is not None and (facts.open.state, facts.open.detail) == ("unreadable",
                                                                                "is not a regular file (a FIFO)")
    b = to_builtin_facts(facts)
    assert (b.store_damage, b.store_unreadable) == ("not_regular", f"{store}: is not a regular file (a FIFO)")
    store.unlink()
    monkeypatch.chdir(store.parent)  # bound by its name: a socket's path is limited to 107 bytes (an xdist tmp_path is long)
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(store.name)
        assert not_regular(str(store)) == "a socket"
    assert not_regular(str(tmp_path)) is None and not_regular(str(tmp_path / "gone")) is None


@pytest.mark.real
def test_a_fifo_at_the_store_real(oc_home_factory, testbed, tmp_path_factory):
    agent = "ops-bot"
    home = oc_home_factory(builtin_config("none", version=OC_LATEST, agents={"list": [{"id": agent, "default": True}]}),
                           name="fifostore", agent_id=agent)
    home.write_memory_md("# Memory\n\nLong-term notes.\n")
    home.write_memory("deploy.md", "# Deploy\n\nDeploys go out via the quokka pipeline.\n")
    assert run_openclaw(home, OC_LATEST, "memory", "index", "--agent", agent, testbed=testbed).rc == 0
    store = home.state_dir / "agents" / agent / "agent" / "openclaw-agent.sqlite"
    for side in ("", "-wal", "-shm"):
        (store.parent / (store.name + side)).unlink(missing_ok=True)
    os.mkfifo(store)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                        "CLAWPROBE_DATA_DIR": str(tmp_path_factory.mktemp("data"))})
    clear_caches()
    ctx = discover(env=env)
    r = fast(ctx, agent, slow(ctx, agent))
    d = diagnose(r, openclaw=shlex.quote(str(testbed.openclaw(OC_LATEST))))
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "index_unreadable"), d.evidence
    assert r.builtin.store_damage == "not_regular" and "a FIFO" in " ".join(d.evidence)
    move, index = d.next_action.steps[:2]
    assert move.command and move.command.startswith("mv -n ") and "memory index --agent ops-bot" in (index.command or "")
    for step in (move, index):  # pasted into a shell: the FIFO aside, the store built from the notes on disk
        subprocess.run(step.command, shell=True, check=True, env=env, cwd=home.root, capture_output=True, timeout=180)
    assert store.is_file()
    found = run_openclaw(home, OC_LATEST, "memory", "search", "--agent", agent, "quokka", "--json", testbed=testbed)
    assert found.rc == 0 and "memory/deploy.md" in found.stdout
