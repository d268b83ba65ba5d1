"""Walk state machine, verify conditions, allow-list, streaming runner and atomic records (no OpenClaw)."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import ConfigFacts, Freshness, QmdFacts, Receipt
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk import mark_done, run_step, skip, start_walk, verify, walk_text
from clawprobe.core.walk_log import data_dir, load_walks, save_walk
from clawprobe.core.walk_run import NotAllowed, check_allowed, command_env, run_streaming

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


class Clock:
    def __init__(self, t: datetime = T0) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t

    def tick(self, s: float = 1) -> datetime:
        self.t += timedelta(seconds=s)
        return self.t


def _qmd_receipt(**kw) -> Receipt:
    base = dict(checked_at=T0, config=ConfigFacts(configured_backend="qmd", search_mode="search", qmd_command="qmd"))
    base.update(kw)
    return Receipt(**base)


def test_allow_list_accepts_only_managed_non_destructive_openclaw_commands():
    assert check_allowed("/opt/oc/bin/openclaw memory index --agent main", agent_id="main")[1:] == \
        ["memory", "index", "--agent", "main"]
    assert check_allowed("openclaw-2026.7.35 memory status --json --agent=ops", agent_id="ops")
    assert check_allowed("/x/y/oc-wrapper memory index --agent main", agent_id="main", openclaw="/x/y/oc-wrapper")
    node_prefix = ["/usr/bin/node", "/opt/oc/node_modules/openclaw/openclaw.mjs"]  # ProbeContext.openclaw form
    assert check_allowed("/usr/bin/node /opt/oc/node_modules/openclaw/openclaw.mjs memory index --agent main",
                         agent_id="main", openclaw=node_prefix) == [*node_prefix, "memory", "index", "--agent", "main"]
    with pytest.raises(NotAllowed, match="not OpenClaw.s CLI"):
        check_allowed("/usr/bin/node -e 1 memory index --agent main", agent_id="main", openclaw=node_prefix)
    with pytest.raises(NotAllowed, match="force"):
        check_allowed(" ".join(node_prefix) + " memory index --force --agent main", agent_id="main", openclaw=node_prefix)
    refused = {
        "openclaw memory index --force --agent main": "--force",
        "openclaw memory index": "must name the agent",
        "openclaw memory index --agent other": "not this walk.s agent",
        "openclaw memory status --fix --agent main": "--fix",
        "openclaw doctor --fix": "allow-list",
        "openclaw config set memory.qmd.command /usr/bin/qmd": "allow-list",
        "openclaw gateway restart": "allow-list",
        "qmd update": "not OpenClaw.s CLI",
        "XDG_CACHE_HOME=/tmp/x qmd embed": "environment prefix",
        "openclaw memory index --agent main; rm -rf /": "shell syntax",
        "openclaw memory index --agent main | tee log": "shell syntax",
        "rm -rf ~/.openclaw/agents/main/qmd": "not OpenClaw.s CLI",
        "/opt/oc/openclaw-2026.7.35 memory index --agent main --force": "--force",
        "/tmp/openclaw-x memory index --agent main": "not OpenClaw.s CLI",
    }
    for cmd, why in refused.items():
        with pytest.raises(NotAllowed, match=why.replace("-", r"\-")):
            check_allowed(cmd, agent_id="main")


def test_command_env_keeps_only_path_home_and_openclaw_keys():
    env = command_env({"PATH": "/a:/b", "HOME": "/h", "OPENCLAW_STATE_DIR": "/s", "OPENAI_API_KEY": "sk-secret",
                       "AWS_SECRET_ACCESS_KEY": "x", "LANG": "C.UTF-8", "SSH_AUTH_SOCK": "/run/x"})
    assert env == {"PATH": "/a:/b", "HOME": "/h", "OPENCLAW_STATE_DIR": "/s", "LANG": "C.UTF-8", "NO_COLOR": "1"}


def test_walk_follows_verdict_changes_and_records_every_event(tmp_path):
    clock = Clock()
    broken = _qmd_receipt(qmd=QmdFacts(command="qmd", resolves=False, failure="not_on_path",
                                       failure_detail="qmd not on the gateway PATH /usr/bin:/bin"))
    d0 = diagnose(broken, T0)
    assert d0.verdict is Verdict.QMD_UNAVAILABLE
    w = start_walk(d0, now=clock(), operator="alice")
    assert [s.title for s in w.steps][:2] == ["Resolve qmd as the gateway does", "Pin an absolute command"]
    assert w.step.status == "current" and w.step.conditions[0].kind == "qmd_resolves"
    assert not any(s.allowed for s in w.steps)  # nothing in this walk may be run by clawprobe

    # nothing changed: verify fails, the walk stays on the step
    out = verify(w, lambda: (broken, diagnose(broken, clock())), clock=clock)
    assert out.result == "fail" and not out.advanced and out.transition is None
    assert w.current == 0 and w.step.status == "failed"

    # fixed: absolute command resolves → step passes, and the verdict moved to stale_index → walk follows it
    clock.tick(30)
    fixed = _qmd_receipt(config=ConfigFacts(configured_backend="qmd", search_mode="search", qmd_command="/opt/qmd/bin/qmd"),
                         qmd=QmdFacts(command="/opt/qmd/bin/qmd", resolved_path="/opt/qmd/bin/qmd", resolves=True, store_ok=True),
                         freshness=Freshness(last_proven_current=T0 - timedelta(hours=2), unindexed_files=["memory/new.md"]))
    out = verify(w, lambda: (fixed, diagnose(fixed, clock())), clock=clock)
    assert out.result == "pass" and out.advanced
    assert out.transition is not None and out.transition.to_verdict is Verdict.STALE_INDEX
    assert (w.verdict, w.start_verdict) == (Verdict.STALE_INDEX, Verdict.QMD_UNAVAILABLE)
    assert [s.title for s in w.steps] == ["Check the schedule", "Run the managed update", "Re-probe"]
    assert w.steps[1].runnable and w.steps[1].allowed

    # a manual step: verify cannot pass it, the operator marks it done (recorded with the name)
    out = verify(w, lambda: (fixed, diagnose(fixed, clock())), clock=clock)
    assert out.result == "manual" and w.current == 0
    mark_done(w, confirmed_by="alice", clock=clock)
    assert w.step.title == "Run the managed update"
    step_start = w.step.started_at

    # the update condition needs a proof of currency AFTER the step started
    out = verify(w, lambda: (fixed, diagnose(fixed, clock())), clock=clock)
    assert out.result == "fail" and [r.holds for r in out.results] == [False, False]
    assert fixed.freshness.last_proven_current < step_start
    clock.tick(10)
    current = fixed.model_copy(update={"freshness": Freshness(last_proven_current=clock())})
    out = verify(w, lambda: (current, diagnose(current, clock())), clock=clock)
    assert out.result == "pass" and out.transition.to_verdict is Verdict.UNVERIFIED  # no canary yet
    kinds = [e.kind for e in w.events]
    assert kinds.count("transition") == 2 and kinds[0] == "start" and "done_by_operator" in kinds
    assert any(e.confirmed_by == "alice" for e in w.events)
    text = "\n".join(walk_text(w))
    assert "Unverified" in text and "UNVERIFIED" not in text and "clawprobe canary plant --agent main" in text

    # recorded atomically; the next operator reads it back
    p = save_walk(w, tmp_path)
    assert p.parent == tmp_path / "walks" / "main" and not list(p.parent.glob("*.tmp"))
    back = load_walks("main", tmp_path)
    assert back[0].walk_id == w.walk_id and [t.to_verdict for t in back[0].transitions] == \
        [Verdict.STALE_INDEX, Verdict.UNVERIFIED]
    assert json.loads(p.read_text())["events"][0]["kind"] == "start"


def test_healthy_resolves_the_walk_and_skip_is_recorded():
    clock = Clock()
    r = _qmd_receipt(qmd=QmdFacts(resolves=False))
    w = start_walk(diagnose(r, T0), now=clock(), operator="bob")
    skip(w, clock=clock)
    assert w.events[-1].kind == "skip" and w.current == 1
    from clawprobe.core.receipt import BackendFacts, Canary, Vectors
    ok = _qmd_receipt(qmd=QmdFacts(resolves=True, store_ok=True), backend=BackendFacts(effective="qmd"),
                      freshness=Freshness(last_proven_current=T0), vectors=Vectors(pending=3),
                      canary=Canary(outcome="found", expected_path="memory/c.md", returned_path="memory/c.md"))
    out = verify(w, lambda: (ok, diagnose(ok, T0)), clock=clock)
    assert out.verdict is Verdict.HEALTHY and w.status == "resolved" and w.steps == []
    assert w.events[-1].kind == "resolved"


def test_run_step_refuses_without_confirmation_or_for_destructive_commands(tmp_path):
    from clawprobe.core.receipt import BuiltinFacts
    r = Receipt(checked_at=T0, builtin=BuiltinFacts(unavailable_reason="index_corrupt"))
    w = start_walk(diagnose(r, T0), now=T0, operator="carol")
    w.current = next(s.index for s in w.steps if s.title == "Managed rebuild")
    assert not w.step.runnable and not w.step.allowed  # shown to copy; the allow-list refuses it anyway
    with pytest.raises(NotAllowed, match="does not run this command"):
        run_step(w, confirmed_by="carol", env={"PATH": "/usr/bin"})
    assert w.events[-1].kind == "refused" and w.events[-1].confirmed_by == "carol"
    w.current = 0  # "Confirm": no command
    with pytest.raises(NotAllowed, match="no command"):
        run_step(w, confirmed_by="carol", env={"PATH": "/usr/bin"})
    stale = Receipt(checked_at=T0, freshness=Freshness(last_proven_current=T0 - timedelta(hours=1)))
    w = start_walk(diagnose(stale, T0), now=T0, operator="carol")
    w.current = next(s.index for s in w.steps if s.title == "Run the managed update")
    assert w.step.allowed
    with pytest.raises(NotAllowed, match="confirms"):
        run_step(w, confirmed_by="", env={"PATH": "/usr/bin"})


def test_streaming_runner_streams_times_out_and_cancels_the_whole_tree():
    lines: list[str] = []
    code = "import sys,time\nfor i in range(3):\n    print('line', i, flush=True)\n"
    out = run_streaming([sys.executable, "-c", code], {"PATH": "/usr/bin:/bin"}, timeout_s=30, on_line=lines.append)
    assert out.status == "ok" and out.exit_code == 0 and lines == ["line 0", "line 1", "line 2"]
    assert out.output_tail == lines
    # a child that spawns a grandchild and hangs: the timeout kills the whole tree
    hang = ("import subprocess,sys,time\n"
            "p=subprocess.Popen([sys.executable,'-c','import time; time.sleep(600)'])\n"
            "print('child', p.pid, flush=True)\ntime.sleep(600)\n")
    seen: list[str] = []
    out = run_streaming([sys.executable, "-c", hang], {"PATH": "/usr/bin:/bin"}, timeout_s=1.5, on_line=seen.append)
    assert out.status == "timeout" and out.seconds < 10
    import psutil
    gpid = int(seen[0].split()[1])

    def gone() -> bool:
        try:
            return psutil.Process(gpid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    for _ in range(100):  # SIGKILL is delivered when the process is next scheduled: allow for a loaded host
        if gone():
            break
        time.sleep(0.05)
    assert gone(), "the grandchild survived the timeout"
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    out = run_streaming([sys.executable, "-c", "import time; time.sleep(600)"], {"PATH": "/usr/bin:/bin"},
                        timeout_s=60, cancel=cancel)
    assert out.status == "cancelled" and out.seconds < 10
    out = run_streaming(["/nonexistent/openclaw", "memory", "index"], {"PATH": "/usr/bin"}, timeout_s=5)
    assert out.status == "error" and "cannot start" in out.detail


def test_data_dir_override(tmp_path):
    assert data_dir({"CLAWPROBE_DATA_DIR": str(tmp_path)}) == tmp_path
    assert data_dir({}).name == "clawprobe"


def test_recorded_walks_that_are_fifos_or_nested_too_deeply_are_skipped_without_blocking(tmp_path):
    """Breaker round 24: a FIFO among the recorded walks (``<data dir>/walks/<agent>/*.json``) blocked
    ``clawprobe walk`` forever in open(); a walk file nested 10,000 levels deep raised RecursionError. Both are
    skipped like any unreadable file."""
    import os

    from clawprobe.core.walk_log import load_walks, walks_dir

    d = walks_dir("ops-bot", tmp_path)
    d.mkdir(parents=True)
    fifo = d / "20991231T235959Z-fifo.json"
    os.mkfifo(fifo)
    (d / "20991231T235958Z-deep.json").write_text("[" * 10_000 + "]" * 10_000)
    got: list = []
    t = threading.Thread(target=lambda: got.append(load_walks("ops-bot", tmp_path)), daemon=True)
    t.start()
    t.join(15)
    if t.is_alive():  # release the blocked open before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        t.join(5)
    assert got == [[]], got
