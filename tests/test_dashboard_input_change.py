"""The live dashboard compares each new receipt's inputs with the receipt it shows (spec §7): when a
watch-triggered or ``r`` re-probe measures a different config (hash, search mode …), the header says which
input changed and that the receipt shown before expired at that moment. Real files, real inotify events,
the real fast lane (``clawprobe.core.probe.fast`` through ``LiveSource``); no ``openclaw`` or ``qmd`` is on
this install's PATH, so no program runs. The decision is core's (``clawprobe.core.expiry.superseded``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from clawprobe.core.expiry import superseded
from clawprobe.core.receipt import Receipt
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.dashboard_support import text, wait_for


def _install(tmp_path, agent: str, memory: dict) -> tuple[dict, object]:
    state, ws = tmp_path / "state", tmp_path / f"ws-{agent}"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Notes\n")
    state.mkdir()
    cfg = state / "openclaw.json"
    cfg.write_text(json.dumps({"agents": {"list": [{"id": agent, "default": True, "workspace": str(ws)}]}, **memory}))
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "clawprobe-data")}
    return env, cfg


@pytest.mark.parametrize(("agent", "memory", "edit", "changed"), [
    ("main", {"memory": {"backend": "qmd", "qmd": {"searchMode": "search"}}},
     lambda m: m["memory"]["qmd"].update(searchMode="vsearch"), ["config hash", "search mode search → vsearch"]),
    ("ops-2", {"memory": {"backend": "builtin"}},
     lambda m: m.update(memory={"backend": "qmd"}), ["config hash"]),
])
async def test_a_config_edit_between_two_probes_expires_the_shown_receipt(tmp_path, agent, memory, edit, changed):
    env, cfg = _install(tmp_path, agent, memory)
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    async with app.run_test(size=(80, 24)) as pilot:
        view = lambda: app.report.current if app.report and app.report.agents else None
        await wait_for(pilot, lambda: view() is not None and not app._slow_pending, 30, "the first receipt")
        await pilot.pause(0.5)
        first = view().receipt
        assert first.agent_id == agent and view().superseded is None
        assert "CHANGED" not in text(app, "#header-2") and not app.query_one("#header-change").display

        tree = json.loads(cfg.read_text())
        edit(tree)
        cfg.write_text(json.dumps(tree))  # the watcher sees it: no key pressed
        await wait_for(pilot, lambda: view().receipt.config.hash != first.config.hash, 20, "the re-probe after the edit")
        await wait_for(pilot, lambda: "CHANGED" in text(app, "#header-change"), 5, "the header")
        new = view().receipt
        x = view().superseded
        # the first receipt that measured the new config; a second file event may re-probe again before this
        # line reads the view (one write_text can be two inotify events), and the change stays named as measured
        assert x is not None and x.expired and first.checked_at < x.compared_with <= new.checked_at
        assert [c.input for c in x.changes][-1:] == ["config hash"]  # words first, the hash last
        assert x.changes[-1].saved == first.config.hash and x.changes[-1].current == new.config.hash
        header = text(app, "#header-change")
        assert app.query_one("#header-change").display and "CHANGED" not in text(app, "#header-2")
        assert text(app, "#header-2").endswith("/state/openclaw.json")  # the path stays (its own line)
        for words in changed:
            assert words in header, header
        assert header.split()[:2] == ["CHANGED", f"{x.compared_with.astimezone(UTC):%H:%M:%S}Z"], header
        hashed = f"config hash {first.config.hash[:8]}… → {new.config.hash[:8]}…"
        assert hashed in header and all(header.index(w) < header.index(hashed) for w in changed if w != "config hash")
        assert header.endswith(": the receipt before expired then")

        # r re-probes with nothing changed since: the change stays named, as the input it was
        before = new.checked_at
        await pilot.press("r")
        await wait_for(pilot, lambda: view().receipt.checked_at > before, 20, "the r re-probe")
        assert view().superseded == x and "CHANGED" in text(app, "#header-change")


T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _r(at: datetime, **config) -> Receipt:
    r = Receipt(agent_id="main", checked_at=at)
    r.config.hash, r.config.search_mode = config.get("hash", "a" * 64), config.get("mode", "search")
    r.backend.effective = config.get("effective")
    return r


def test_superseded_names_changes_and_not_first_measurements():
    shown = _r(T0)
    assert superseded(shown, _r(T0 + timedelta(seconds=5))) is None  # same inputs
    # the openclaw CLI lane's first result (effective backend unmeasured before) is evidence, not a change
    assert superseded(shown, _r(T0 + timedelta(seconds=5), effective="qmd")) is None
    x = superseded(_r(T0, effective="qmd"), _r(T0 + timedelta(seconds=9), hash="b" * 64, effective="builtin"))
    assert x is not None and x.expired and x.judged_at == x.compared_with == T0 + timedelta(seconds=9)
    assert [c.brief for c in x.changes] == ["effective backend qmd → builtin", "config hash aaaaaaaa… → bbbbbbbb…"]
    # not newer, or another agent: nothing to compare
    assert superseded(shown, _r(T0 - timedelta(seconds=1), hash="c" * 64)) is None
    other = _r(T0 + timedelta(seconds=1), hash="c" * 64)
    other.agent_id = "ops"
    assert superseded(shown, other) is None


def test_the_live_source_rereads_a_config_whose_include_changed(tmp_path):
    """A fast probe after an edit of an ``$include``d file (not the main config) judges the edited config."""
    env, cfg = _install(tmp_path, "main", {})
    inc = cfg.parent / "inc" / "memory.json5"
    inc.parent.mkdir()
    inc.write_text('{ memory: { backend: "qmd", qmd: { searchMode: "search" } } }')
    tree = json.loads(cfg.read_text())
    cfg.write_text(json.dumps({"$include": "inc/memory.json5", **tree}))
    src = LiveSource(env=env)
    src.discover()
    t = datetime.now(UTC)
    first = src.fast("main", None, t)
    assert first.config.search_mode == "search" and not src.reread_config()  # nothing changed yet
    inc.write_text('{ memory: { backend: "qmd", qmd: { searchMode: "query" } } }')
    second = src.fast("main", None, t + timedelta(seconds=1))
    assert second.config.search_mode == "query" and second.config.hash != first.config.hash
    x = superseded(first, second)
    assert x is not None and [c.input for c in x.changes] == ["search mode", "config hash"]


def test_the_change_line_follows_the_latest_inputs_and_goes_when_they_are_restored():
    """Break the config (hash and backend unmeasured: ``a… → ?``), then restore it: the change in effect is
    decided against the receipt before the break each time — never kept from an older comparison."""
    from clawprobe.tui.state import make_view
    from clawprobe.tui.widgets.header import change_text

    def probe(s: int, **config) -> Receipt:
        r = _r(T0 + timedelta(seconds=s), **config)
        if config.get("hash", "") is None:
            r.config.hash = None
        return r

    ok = make_view(probe(0, effective="builtin"), T0)
    broken = make_view(probe(10, hash=None, effective=None), T0, prev=ok)
    # the config cannot be read: that is the change; what could not be measured because of it is not said
    assert [c.brief for c in broken.superseded.changes] == ["config hash aaaaaaaa… → ?"]
    still = make_view(probe(20, hash=None, effective=None), T0, prev=broken)
    assert still.superseded == broken.superseded  # the same change: its time stays when it began
    restored = make_view(probe(70, effective="builtin"), T0, prev=still)
    assert restored.superseded is None and change_text(restored, T0) == ""
    # broken again, then fixed differently: the line names the baseline against the latest inputs
    again = make_view(probe(80, hash=None, effective=None), T0, prev=restored)
    other = make_view(probe(90, hash="b" * 64, effective="builtin"), T0, prev=again)
    assert [c.brief for c in other.superseded.changes] == ["config hash aaaaaaaa… → bbbbbbbb…"]
    assert other.superseded.compared_with == T0 + timedelta(seconds=90)
