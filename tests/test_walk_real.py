"""Walkthroughs on the real test bed: the re-probe is clawprobe's real probe (``clawprobe.core.probe``) over a real
OpenClaw 2026.7.35 home, and the step conditions turn green only after the real change.

1. qmd_unavailable: the gateway PATH lacks qmd → Verify fails; an absolute ``memory.qmd.command`` written
   into the real config → Verify passes, and the walk follows the verdict that follows.
2. stale_index: a memory file the index does not hold → a CONFIRMED ``openclaw memory index --agent main``
   run by the walk (real openclaw, real qmd) → Verify passes (index proven current after the step began).

Fast probes only for the re-probes (no openclaw call); the only openclaw calls are the fixture's first index
and the walk's own run.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk import mark_done, run_step, start_walk, verify
from clawprobe.core.walk_log import load_walks, save_walk
from tests.testbed import OC_QMD, qmd_config, run_openclaw


def _utc() -> datetime:
    return datetime.now(UTC)


def _reprobe(env: dict, *, openclaw: str | None = None, agent: str = "main"):
    """clawprobe's own fast probe of the home described by ``env`` (discovered like OpenClaw does)."""
    from clawprobe.core import probe

    def go():
        ctx = probe.discover(env=env)
        assert ctx.installed, getattr(ctx, "reason", None)
        now = _utc()
        r = probe.collect(ctx, agent, now, run_slow=False)
        return r, diagnose(r, now, openclaw=openclaw, state_dir=env.get("OPENCLAW_STATE_DIR"))

    return go


def test_qmd_unavailable_walk_turns_green_only_after_the_real_config_change(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(qmd_config("qmd", "search"), name="walk-qmd")
    home.write_memory_md("# Memory\n\nWalk test.\n")
    env = home.env([])  # the gateway's PATH: /usr/bin:/bin — no qmd there
    reprobe = _reprobe(env)
    r0, d0 = reprobe()
    assert d0.verdict is Verdict.QMD_UNAVAILABLE, d0.summary
    w = start_walk(d0, operator="ops-test")
    # qmd is on no PATH here (the gateway's and this shell's are /usr/bin:/bin; the test bed's qmd is in its own
    # dir): the cause measured is "not installed where either could run it", so installing comes first
    assert d0.next_action.command == "npm install -g @tobilu/qmd", d0.next_action
    assert [s.title for s in w.steps][:2] == ["Install qmd", "Pin its absolute path"]

    # nothing changed yet: the step's condition (qmd resolves from the gateway environment) fails
    out = verify(w, reprobe)
    assert out.result == "fail" and out.results[0].holds is False and w.current == 0

    # the operator pins the absolute command in the real config file (what `openclaw config set` writes)
    home.update_config({"memory": {"qmd": {"command": str(testbed.qmd)}}})
    cfg = json.loads(home.config_path.read_text())
    assert cfg["memory"]["qmd"]["command"] == str(testbed.qmd)
    out = verify(w, reprobe)
    assert out.result == "pass" and out.results[0].holds is True, out.results
    assert str(testbed.qmd) in out.results[0].detail
    # the verdict left qmd_unavailable and the walk followed it: with the fast probe only, nothing has proved
    # retrieval yet, so the next state is "unverified" and its steps (plant a canary, run the update)
    t = out.transition
    assert t is not None and (t.from_verdict, t.from_reason) == (Verdict.QMD_UNAVAILABLE, "not_on_path")
    assert (w.verdict, w.reason) == (Verdict.UNVERIFIED, "no_canary") and w.current == 0
    assert [s.title for s in w.steps][0] == "Plant"
    save_walk(w, tmp_path)
    rec = load_walks("main", tmp_path)[0]
    assert [e.result for e in rec.events if e.kind == "verify"][:2] == ["fail", "pass"]


@pytest.fixture(scope="module")
def stale_home(oc_home_factory, testbed):
    """A real QMD-backend home indexed once by openclaw, then a memory file the index does not hold."""
    home = oc_home_factory(qmd_config("qmd", "search"), name="walk-stale")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    home.write_memory("notes.md", "# Notes\n\nFirst note.\n")
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[testbed.bin_dir], testbed=testbed)
    assert res.rc == 0, res.stderr
    new = home.write_memory("2026-11-30.md", "# Today\n\nA decision made after the last index run.\n")
    old = time.time() - 3600  # written an hour ago: older than the 420 s lease
    os.utime(new, (old, old))
    return home


def test_stale_index_walk_runs_the_confirmed_managed_update_and_verifies(stale_home, testbed, tmp_path):
    home = stale_home
    openclaw = str(testbed.openclaw(OC_QMD))
    env = home.env([testbed.bin_dir])
    reprobe = _reprobe(env, openclaw=openclaw)
    r0, d0 = reprobe()
    assert d0.verdict is Verdict.STALE_INDEX, d0.summary
    assert "memory/2026-11-30.md" in r0.freshness.unindexed_files
    w = start_walk(d0, operator="ops-test", openclaw=openclaw)
    assert w.step.title == "Check the schedule" and w.step.manual
    mark_done(w, confirmed_by="ops-test")
    step = w.step
    assert step.title == "Run the managed update" and step.allowed
    assert step.command == f"{openclaw} memory index --agent main"

    # before the run the condition does not hold
    assert verify(w, reprobe).result == "fail" and w.step is step

    lines: list[str] = []
    out = run_step(w, confirmed_by="ops-test", env={**env, "OPENAI_API_KEY": "sk-must-not-leak"},
                   timeout_s=120, cwd=str(home.root), on_line=lines.append, openclaw=openclaw)
    assert out.status == "ok", (out.detail, out.output_tail)
    assert any("QMD index:" in ln or "Memory index updated" in ln for ln in lines), lines
    run_ev = w.events[-1]
    assert (run_ev.kind, run_ev.confirmed_by, run_ev.result, run_ev.exit_code) == ("run", "ops-test", "ok", 0)
    assert run_ev.started_at <= run_ev.ended_at and run_ev.command == step.command

    v = verify(w, reprobe)
    assert v.result == "pass", v.results
    assert all(r.holds for r in v.results)
    assert v.transition is not None and v.transition.from_verdict is Verdict.STALE_INDEX
    assert v.verdict is not Verdict.STALE_INDEX
    p = save_walk(w, tmp_path)
    text = p.read_text()
    assert "sk-must-not-leak" not in text and "OPENAI_API_KEY" not in text
    rec = load_walks("main", tmp_path)[0]
    assert [e.kind for e in rec.events][:5] == ["start", "done_by_operator", "verify", "run", "verify"]


async def test_walkthrough_screen_runs_the_confirmed_update_live(stale_home, testbed, tmp_path):
    """The same repair through the screen's keys: d (manual step), x → confirm y → live output → auto-verify."""
    from textual.app import App
    from textual.widgets import Log

    from clawprobe.tui.screens.confirm import ConfirmScreen
    from clawprobe.tui.screens.walkthrough import WalkthroughScreen

    home = stale_home
    new = home.write_memory("2026-11-29.md", "# Yesterday\n\nAnother decision the index has not seen.\n")
    old = time.time() - 7200
    os.utime(new, (old, old))
    openclaw = str(testbed.openclaw(OC_QMD))
    env = home.env([testbed.bin_dir])
    reprobe = _reprobe(env, openclaw=openclaw)
    r0, d0 = reprobe()
    assert d0.verdict is Verdict.STALE_INDEX and "memory/2026-11-29.md" in r0.freshness.unindexed_files
    screen = WalkthroughScreen(d0, r0, reprobe, openclaw=openclaw, env=env, data_root=str(tmp_path),
                               operator="ops-pilot", cwd=str(home.root), run_timeout_s=120)

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(screen)

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("d")  # "Check the schedule": the operator attests it
        assert screen.walk.step.title == "Run the managed update"
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        for _ in range(1200):  # the run (~5 s) then the automatic verify
            await pilot.pause(0.1)
            if screen.busy is None and screen.walk.verdict is not Verdict.STALE_INDEX:
                break
        log_text = "\n".join(str(line) for line in screen.query_one("#walk-output", Log).lines)
        assert f"$ {openclaw} memory index --agent main" in log_text
        assert "Memory index updated" in log_text or "QMD index:" in log_text, log_text
        assert "[ok] exit 0" in log_text
    w = screen.walk
    run = next(e for e in w.events if e.kind == "run")
    assert (run.confirmed_by, run.result, run.exit_code) == ("ops-pilot", "ok", 0)
    verifies = [e for e in w.events if e.kind == "verify"]
    assert verifies[-1].result == "pass" and verifies[-1].step_title == "Run the managed update"
    assert w.transitions[-1].from_verdict is Verdict.STALE_INDEX
    assert load_walks("main", tmp_path)[0].walk_id == w.walk_id
