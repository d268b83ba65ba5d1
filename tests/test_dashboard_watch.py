"""File watching for the dashboard: where the watches go (pure) and real file events (watchfiles/inotify)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from clawprobe.tui.watch import Target, affected, needs_replan, plan, targets_from, watch


def _t(agent, path, kind, is_dir):
    p = Path(path)
    return Target(agent, p, kind, p.exists(), is_dir)


def test_plan_puts_files_on_their_parent_dirs_recursive_and_missing_on_nearest_parent(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("x")
    cfg = tmp_path / "state" / "openclaw.json"
    cfg.parent.mkdir()
    cfg.write_text("{}")
    missing = tmp_path / "state" / "agents" / "main" / "qmd" / "xdg-cache" / "qmd" / "models"
    ts = [_t("main", ws / "MEMORY.md", "memory", False), _t("main", ws / "memory", "memory", True),
          _t("main", cfg, "config", False), _t("main", missing, "models", True)]
    p = plan(ts)
    assert p.recursive == [ws / "memory"]
    assert set(p.flat) == {ws, tmp_path / "state"}  # MEMORY.md's dir, the config's dir = the models' nearest parent


def test_affected_matches_targets_only():
    ts = [Target("main", Path("/w/MEMORY.md"), "memory", True, False),
          Target("main", Path("/w/memory"), "memory", True, True),
          Target("ops", Path("/s/openclaw.json"), "config", True, False),
          Target("main", Path("/s/agents/main/qmd/models"), "models", False, True)]
    assert affected(["/w/memory/a/b.md"], ts) == {"main": {"memory"}}
    assert affected(["/w/MEMORY.md"], ts) == {"main": {"memory"}}
    assert affected(["/w/notes.txt", "/w/.MEMORY.md.swp", "/s/sessions/x.jsonl"], ts) == {}
    assert affected(["/s/openclaw.json"], ts) == {"ops": {"config"}}
    assert affected(["/s/agents"], ts) == {"main": {"models"}}  # on the way to a missing target
    assert needs_replan(["/s/agents"], ts) and not needs_replan(["/w/memory/a.md"], ts)
    assert needs_replan(["/w/memory"], ts)  # the watched dir itself was removed or replaced


def test_targets_from_uses_the_wanted_path_of_missing_targets(tmp_path):
    raw = [SimpleNamespace(path=str(tmp_path), kind="models", exists=False, wanted=str(tmp_path / "a" / "models")),
           SimpleNamespace(path=str(tmp_path), kind="config", exists=False, wanted=str(tmp_path / "x" / "cfg")),
           SimpleNamespace(path=str(tmp_path), kind="memory", exists=True, wanted=None)]
    a, b, c = targets_from("main", raw)
    assert (a.path, a.exists, a.is_dir) == (tmp_path / "a" / "models", False, True)
    assert (b.path, b.is_dir) == (tmp_path / "x" / "cfg", False)
    assert (c.path, c.exists, c.is_dir) == (tmp_path, True, True)


async def _collect(wplan, action, *, settle: float = 0.8, timeout: float = 10.0):
    """Run the real watcher, perform ``action`` once it is armed, return (calls, replan)."""
    calls: list[tuple[str, frozenset[str], list[str]]] = []
    task = asyncio.create_task(watch(wplan, lambda a, k, p: calls.append((a, k, p))))
    await asyncio.sleep(0.3)  # let inotify arm
    await asyncio.to_thread(action)
    deadline = asyncio.get_running_loop().time() + timeout
    while not calls and not task.done() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(settle)
    replan = None
    if task.done():
        replan = task.result()
    else:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    return calls, replan


async def test_real_change_reaches_the_right_agent_and_kind(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n")
    (ws / "unrelated.txt").write_text("x")
    ts = [_t("main", ws / "MEMORY.md", "memory", False), _t("main", ws / "memory", "memory", True)]
    calls, replan = await _collect(plan(ts), lambda: (ws / "memory" / "2026-11-30.md").write_text("note\n"))
    assert calls and all(a == "main" and k == {"memory"} for a, k, _ in calls)
    assert any(p.endswith("2026-11-30.md") for _, _, ps in calls for p in ps)
    assert replan is None
    calls, _ = await _collect(plan(ts), lambda: (ws / "unrelated.txt").write_text("y"), settle=0.6, timeout=1.0)
    assert calls == []  # a change nobody watches for is dropped


async def test_thousands_of_files_arrive_as_a_few_batches(tmp_path):
    mem = tmp_path / "ws" / "memory"
    mem.mkdir(parents=True)

    def checkout():  # like a git checkout touching thousands of files
        for i in range(3000):
            (mem / f"n{i:04d}.md").write_text(f"note {i}\n")

    calls, _ = await _collect(plan([_t("main", mem, "memory", True)]), checkout, settle=1.0)
    assert 1 <= len(calls) <= 30, len(calls)


async def test_missing_dir_is_watched_from_its_parent_and_replanned_when_it_appears(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    models = state / "agents" / "main" / "qmd" / "models"
    ts = [_t("main", models, "models", True)]
    p = plan(ts)
    assert p.flat == [state] and p.recursive == []
    calls, replan = await _collect(p, lambda: (state / "agents").mkdir())
    assert replan is True
    assert calls == [("main", frozenset({"models"}), [str(state / "agents")])]
