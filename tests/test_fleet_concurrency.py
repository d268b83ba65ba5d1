"""The scheduling of the ``openclaw`` calls (issue 16): one agent's ``memory status`` and ``memory search`` run at
the same time, and several agents are probed at the same time — proved without any clock: the fake
``openclaw`` (a real executable) makes each call wait, bounded, until every call it expects has started.
Run one after the other, the first call would wait in vain and say ``alone``; run together, each says ``met``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

from clawprobe.cli.main import main
from clawprobe.core.probe import CanarySpec, clear_caches, discover, slow
from tests.hardening_helpers import fake_program
from tests.testbed import OpenClawHome, builtin_config

WAIT_S = 20  # how long a call waits for the others (≪ the CLI probes' 60 s timeout)

RENDEZVOUS = r'''
if [ "$1" = "--version" ]; then echo "OpenClaw 2026.7.35 (fake)"; exit 0; fi
cmd="$2"; agent=""; prev=""
for a in "$@"; do [ "$prev" = "--agent" ] && agent="$a"; prev="$a"; done
touch "$MEET/$cmd-$agent.started"
n=0; state=alone
while [ $n -lt $((WAIT_S * 20)) ]; do
  missing=0
  for want in $EXPECT; do [ -e "$MEET/$want.started" ] || missing=1; done
  if [ $missing -eq 0 ]; then state=met; break; fi
  sleep 0.05; n=$((n + 1))
done
echo "$state" > "$MEET/$cmd-$agent.result"
if [ "$cmd" = "search" ]; then echo '{"results": []}'; else echo '[]'; fi
'''


def _fake(tmp_path: Path, meet: Path, expect: str) -> Path:
    """The rendezvous ``openclaw`` (its settings written into it: the probes' environment is clawprobe's own)."""
    body = RENDEZVOUS.replace("WAIT_S", str(WAIT_S)).replace("$MEET", str(meet)).replace("$EXPECT", expect)
    return fake_program(tmp_path / "openclaw", body)


def _results(meet: Path) -> dict[str, str]:
    return {p.name.removesuffix(".result"): p.read_text().strip() for p in sorted(meet.glob("*.result"))}


def test_one_agents_status_and_search_run_at_the_same_time(tmp_path):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the search may run
    meet = tmp_path / "meet"
    meet.mkdir()
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(_fake(tmp_path, meet, "status-main search-main"))})
    clear_caches()
    ctx = discover(env=env)
    spec = CanarySpec(token="CLAWPROBE-CANARY-AAAAAAAAAAAAAAAA", expected_path="memory/clawprobe-canary.md")
    ev = slow(ctx, "main", canary=spec)
    assert _results(meet) == {"status-main": "met", "search-main": "met"}, ev.errors
    assert ev.search_run is not None and ev.status_run is not None  # both runs kept, in their own fields


def test_agents_are_probed_at_the_same_time(tmp_path, monkeypatch):
    home = OpenClawHome.create(tmp_path)
    cfg = builtin_config("none")
    cfg["agents"]["list"] = [{"id": "main"}, {"id": "work"}, {"id": "ops"}]
    home.write_config(cfg)
    home.write_memory_md()
    for agent in ("main", "work", "ops"):
        home.placeholder_builtin_db(agent)  # an index exists: the CLI is run
    meet = tmp_path / "meet"
    meet.mkdir()
    fake = _fake(tmp_path, meet, "status-main status-work status-ops")
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(fake), "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    for k in list(os.environ):
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    clear_caches()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["check", "--json"])
    doc = json.loads(out.getvalue())
    assert [r["agent_id"] for r in doc["receipts"]] == ["main", "work", "ops"]  # reported in the configured order
    assert {k: v for k, v in _results(meet).items() if k.startswith("status-")} == {
        "status-main": "met", "status-work": "met", "status-ops": "met"}


def test_the_qmd_check_waits_while_the_stores_are_read(tmp_path, monkeypatch):
    """The fast lane's qmd check (a process: two Node starts) and its store reads (Python, read-only) run at
    the same time: a fake qmd waits until the store read has begun, the store read until qmd has started."""
    from clawprobe.core import probe
    from clawprobe.core.probe import gather
    from tests.testbed import qmd_config

    meet = tmp_path / "meet"
    meet.mkdir()
    rendezvous = RENDEZVOUS.split("\n", 2)[2]  # without the --version answer: `qmd --version` meets too
    qmd = fake_program(tmp_path / "qmd", rendezvous.replace("WAIT_S", str(WAIT_S)).replace("$MEET", str(meet))
                       .replace("$EXPECT", "stores-").replace('cmd="$2"', 'cmd=qmd') + 'echo "qmd 2.8.3"\n')
    oc = fake_program(tmp_path / "openclaw", 'echo "OpenClaw 2026.7.35 (fake)"')
    home = OpenClawHome.create(tmp_path)
    home.write_config(qmd_config(str(qmd), "search"))
    home.write_memory_md()
    real = probe._gather_stores

    def stores_meeting_qmd(*a, **k):
        (meet / "stores-.started").touch()
        for _ in range(WAIT_S * 20):
            if list(meet.glob("qmd-*.started")):
                (meet / "stores.result").write_text("met")
                break
            os.system("sleep 0.05")
        else:
            (meet / "stores.result").write_text("alone")
        return real(*a, **k)

    monkeypatch.setattr(probe, "_gather_stores", stores_meeting_qmd)
    clear_caches()
    ev = gather(discover(env=home.env([], {"CLAWPROBE_OPENCLAW": str(oc)})), "main", None)
    got = _results(meet)
    assert got.pop("stores") == "met" and got and set(got.values()) == {"met"}, (got, ev.errors)
    assert ev.qmd_binary is not None and ev.stores is not None
