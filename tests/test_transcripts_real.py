"""Session transcripts OpenClaw 2026.9.6 cannot read yet: a ``*.jsonl`` in the agent's sessions dir (an upgraded or
restored install) while sessions are a memory source. 2026.9.6 reads sessions from its database only — status
counts none of them ("no eligible session transcripts found"), nothing said there is found — and clawprobe said
``healthy`` (breaker round 5). Now ``stale_index`` · ``transcripts_not_imported`` → ``openclaw doctor --fix``; the
repair is run as printed, then OpenClaw's index, and the session's codeword is found. Real 2026.9.6."""

from __future__ import annotations

import json

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from tests.rw_support import context, indexed
from tests.testbed import OC_LATEST, builtin_config, run_openclaw

SESSION = [
    {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/tmp"},
    {"type": "message", "id": "m1", "timestamp": "2026-12-01T10:00:01.000Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "Remember the vault code QUINCE-SESSION-66"}]}},
    {"type": "message", "id": "m2", "timestamp": "2026-12-01T10:00:02.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted: QUINCE-SESSION-66."}]}},
]


def test_transcripts_the_build_cannot_read_are_said_and_the_doctor_imports_them(oc_home_factory, testbed):
    cfg = builtin_config("none", version=OC_LATEST, memory={"search": {
        "sources": ["memory", "sessions"], "experimental": {"sessionMemory": True}}})
    home = oc_home_factory(cfg, name="transcripts")
    sessions = home.agent_dir() / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s1.jsonl").write_text("".join(json.dumps(rec) + "\n" for rec in SESSION))
    spec = indexed(home, testbed, OC_LATEST)
    ctx = context(home, testbed, OC_LATEST)
    r = probe.collect(ctx, "main", canary=spec)
    d = diagnose(r, r.checked_at)
    assert (d.verdict.value, d.reason) == ("stale_index", "transcripts_not_imported"), (d.evidence, r.probe_errors)
    assert r.coverage.legacy_transcripts == 1 and r.canary.outcome == "found"
    assert d.next_action.command.endswith("doctor --fix")

    fixed = run_openclaw(home, OC_LATEST, "doctor", "--fix", "--non-interactive", timeout=240, testbed=testbed)
    assert fixed.rc == 0, fixed.stdout + fixed.stderr
    made = run_openclaw(home, OC_LATEST, "memory", "index", "--agent", "main", timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr
    found = run_openclaw(home, OC_LATEST, "memory", "search", "QUINCE-SESSION-66", "--json", "--agent", "main",
                         timeout=120, testbed=testbed)
    assert found.rc == 0 and "QUINCE-SESSION-66" in found.stdout, found.stdout + found.stderr
    r = probe.collect(context(home, testbed, OC_LATEST), "main", canary=spec)
    assert not r.coverage.legacy_transcripts and diagnose(r, r.checked_at).reason != "transcripts_not_imported"
