"""Breaker round 25: a pinned provider with no API key at all (2026.9.6: "No API key found for provider "openai" …
| missing-provider-auth"). The verdict was right (``memory_unavailable · explicit_provider``), but the headline said
"pinned provider unreachable" (it is not: it was never asked) and the one command was ``memory status --deep``,
which prints the same error again. Now the command is OpenClaw's own, for this agent:
``openclaw models auth paste-api-key --provider openai --agent <id>`` (pasted for real on 2026.9.6: it reads the
key from the terminal and stores it; the next check no longer finds the key missing)."""

from __future__ import annotations

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.words import reason_words
from tests.rw_support import check_bundle


@pytest.mark.parametrize("agent", ["main", "ops-bot", "kb-7"])
def test_a_missing_key_is_stored_for_that_agent_with_openclaws_own_command(agent):
    r, _ = check_bundle("RW33-96")  # a real 2026.9.6 recording
    r.agent_id = agent
    d = diagnose(r, openclaw="openclaw")
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "explicit_provider")
    assert d.next_action.command == f"openclaw models auth paste-api-key --provider openai --agent {agent}"
    assert "memory status --deep" not in d.next_action.command and "credentials" in d.next_action.title
    assert "unreachable" not in reason_words("explicit_provider")
    d = diagnose(r, openclaw="OPENCLAW_STATE_DIR=/srv/oc/state openclaw")  # the probed install, not ~/.openclaw
    assert d.next_action.command.startswith("OPENCLAW_STATE_DIR=/srv/oc/state openclaw models auth paste-api-key")


def test_a_refused_key_or_an_old_build_keeps_reading_the_error_first():
    r, _ = check_bundle("RW33-mistral")  # a key mistral refuses (401): there is one, storing another is not the cause
    assert "paste-api-key" not in (diagnose(r).next_action.command or "")
    r, _ = check_bundle("RW33-96")
    r.openclaw.has_qmd_backend = True  # 2026.7.35's paste-api-key has no --agent: it would key the default agent
    assert "paste-api-key" not in (diagnose(r).next_action.command or "")
