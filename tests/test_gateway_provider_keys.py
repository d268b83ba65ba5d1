"""An unset/``auto`` embedding provider resolves in each process from that process's own environment (breaker
round 21, finding 3): a gateway whose service sets ``OPENAI_API_KEY`` resolves ``openai`` and refuses the keyword-only
index a keyless ``openclaw memory index`` built ("index was built for model fts-only, expected
text-embedding-3-small": its ``memory_search`` answers disabled/unavailable) — while clawprobe's own ``openclaw``
runs, which carry no provider key, saw a working keyword-only index and said ``keyword_only · implicit_provider``
with the repair "set provider none". Now the gateway's key NAMES (never a value) are read from its process or
service definition, and that state is ``memory_unavailable · gateway_provider`` whose one action rebuilds the index
with the gateway's key. Pure: real unit files for the discovery, built receipts for the judgement."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import gateway as gw
from clawprobe.core.receipt import Receipt
from clawprobe.core.verdicts import Verdict

T0 = datetime(2026, 12, 6, 23, 0, tzinfo=UTC)
SECRET = "sk-proj-" + "Zq9Xw8Vu" * 6


def _unit(tmp: Path, env: list[str]) -> tuple[Path, Path]:
    home, state = tmp / "home", tmp / "state"
    state.mkdir(parents=True)
    d = home / ".config" / "systemd" / "user"
    d.mkdir(parents=True)
    lines = [f'Environment="{e}"' for e in [f"OPENCLAW_STATE_DIR={state}", "PATH=/usr/bin:/bin", *env]]
    (d / "openclaw-gateway.service").write_text("[Service]\n" + "\n".join(lines) + "\nExecStart=/usr/bin/false\n")
    (state / "openclaw.json").write_text(json.dumps({"agents": {"list": [{"id": "ops"}]}}))
    return home, state


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GEMINI_API_KEY"])
def test_the_gateway_services_provider_key_names_are_read_and_never_their_values(tmp_path, name):
    home, state = _unit(tmp_path, [f"{name}={SECRET}", "OTHER_TOKEN=x"])
    ctx = probe.discover(state_dir=str(state), env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                         openclaw=str(home / "no-openclaw"))
    assert ctx.gateway is not None and ctx.gateway.provider_keys == [name]
    facts = gw.interpret(ctx.gateway)
    assert facts.provider_keys == [name]
    assert SECRET not in ctx.gateway.model_dump_json() and SECRET not in facts.model_dump_json()


def test_an_empty_key_is_no_key_and_no_known_environment_is_unknown(tmp_path):
    home, state = _unit(tmp_path, ["OPENAI_API_KEY="])
    ctx = probe.discover(state_dir=str(state), env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                         openclaw=str(home / "no-openclaw"))
    assert ctx.gateway is not None and ctx.gateway.provider_keys == []
    bare = gw.GatewayEvidence(state_dir=str(state))
    assert gw.provider_key_names(bare, str(home)) is None  # neither a process nor a service: not known


def _receipt(*, keys: list[str] | None, provider: str | None = None, era: str = "2026.9.6", agent: str = "main",
             source: str = "process") -> Receipt:
    r = Receipt(checked_at=T0, agent_id=agent)
    r.openclaw.version, r.openclaw.has_qmd_backend = era, era.startswith("2026.7")
    r.config.provider = provider
    r.builtin.fts_only, r.builtin.provider_resolved = True, "none"
    r.gateway.running, r.gateway.pid, r.gateway.env_source = source == "process", 31337, source  # type: ignore[assignment]
    r.gateway.provider_keys = keys
    return r


@pytest.mark.parametrize("agent,provider", [("main", None), ("Ops.Team", "auto"), ("research", "AUTO")])
def test_a_gateway_key_over_a_keyword_only_index_is_memory_unavailable_with_one_rebuild(agent, provider):
    d = diagnose(_receipt(keys=["OPENAI_API_KEY"], provider=provider, agent=agent), T0)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "gateway_provider"), d.evidence
    assert d.exit_code == 2
    text = " ".join(d.evidence)
    assert "OPENAI_API_KEY" in text and "pid 31337" in text and "openai" in text and "fts-only" in text
    cmd = d.next_action.command
    assert cmd is not None and f"memory status --index --agent {agent}" in cmd
    assert "/proc/31337/environ" in cmd and "OPENAI_API_KEY" in cmd and "config set" not in cmd
    assert d.next_action.steps[0].command == cmd


def test_the_rebuild_command_puts_only_the_named_key_into_the_subshell(tmp_path):
    """The command, run in a real shell against a real process's environ, exports the key and nothing else —
    and the command text itself holds no value."""
    env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": SECRET, "OPENAI_API_KEY_OLD": "no", "GEMINI_API_KEY": "g"}
    holder = subprocess.Popen(["sleep", "30"], env=env)
    try:
        r = _receipt(keys=["OPENAI_API_KEY"])
        r.gateway.pid = holder.pid
        cmd = diagnose(r, T0).next_action.command
        assert cmd is not None and SECRET not in cmd
        probe_cmd = cmd.replace("memory status --index --agent main", "")
        fake = tmp_path / "openclaw"
        fake.write_text('#!/bin/sh\nenv | grep -E "^(OPENAI|GEMINI)" | sort\n')
        fake.chmod(0o755)
        out = subprocess.run(["sh", "-c", probe_cmd.replace("openclaw ", f"{fake} ").replace("openclaw)", f"{fake})")],
                             env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=10)
        assert out.stdout.splitlines() == [f"OPENAI_API_KEY={SECRET}"], out
    finally:
        holder.kill()
        holder.wait()


def test_a_service_without_a_running_gateway_withholds_the_command_but_keeps_the_verdict():
    r = _receipt(keys=["OPENAI_API_KEY"], source="systemd")
    r.gateway.service_file = "/home/op/.config/systemd/user/openclaw-gateway.service"
    d = diagnose(r, T0)
    assert (d.verdict, d.reason) == (Verdict.MEMORY_UNAVAILABLE, "gateway_provider")
    assert d.next_action.command is None and "export it as its service sets it" in d.next_action.why
    assert "openclaw-gateway.service" in " ".join(d.evidence)


@pytest.mark.parametrize("case", ["no_key", "other_provider_key", "provider_none", "pinned", "qmd_era", "vectors",
                                  "unknown_env"])
def test_without_the_measured_mismatch_the_old_verdicts_stand(case):
    kw = {"no_key": dict(keys=[]), "other_provider_key": dict(keys=["GEMINI_API_KEY"]),
          "provider_none": dict(keys=["OPENAI_API_KEY"], provider="none"),
          "pinned": dict(keys=["OPENAI_API_KEY"], provider="openai"),
          "qmd_era": dict(keys=["OPENAI_API_KEY"], era="2026.7.35"), "vectors": dict(keys=["OPENAI_API_KEY"]),
          "unknown_env": dict(keys=None)}[case]
    r = _receipt(**kw)  # type: ignore[arg-type]
    if case == "pinned":
        r.config.provider_explicit = True
    if case == "vectors":
        r.builtin.fts_only, r.builtin.provider_resolved = False, "openai"
    d = diagnose(r, T0)
    assert d.reason != "gateway_provider", (case, d.evidence)
