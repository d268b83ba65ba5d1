"""Pilot tests of the walkthrough screen's keys and of the download screen (rendering only; the probes behind
them are exercised for real in test_walk_real.py / test_downloads.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from textual.app import App
from textual.widgets import ProgressBar, Static

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import ConfigFacts, Freshness, GatewayFacts, ModelDownload, QmdFacts, Receipt, Vectors
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk_log import load_walks
from clawprobe.tui.screens.confirm import ConfirmScreen
from clawprobe.tui.screens.downloads import DownloadsScreen, on_receipt
from clawprobe.tui.screens.walkthrough import WalkthroughScreen

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


class Host(App):
    def __init__(self, screen) -> None:
        super().__init__()
        self._first = screen
        self.result = None

    def on_mount(self) -> None:
        self.push_screen(self._first, self._done)

    def _done(self, result) -> None:
        self.result = result


def _broken() -> Receipt:
    # the gateway's PATH is recorded (the repair's "resolve as the gateway does" command is built from it)
    return Receipt(checked_at=T0, config=ConfigFacts(configured_backend="qmd", qmd_command="qmd"),
                   gateway=GatewayFacts(running=True, pid=4242, env_source="process", path_dirs=["/usr/bin", "/bin"]),
                   qmd=QmdFacts(command="qmd", resolves=False, failure="not_on_path",
                                failure_detail="qmd not on the gateway PATH /usr/bin:/bin"))


def _fixed() -> Receipt:
    return Receipt(checked_at=T0, config=ConfigFacts(configured_backend="qmd", qmd_command="/opt/qmd/bin/qmd"),
                   qmd=QmdFacts(command="/opt/qmd/bin/qmd", resolved_path="/opt/qmd/bin/qmd", resolves=True, store_ok=True),
                   freshness=Freshness(last_proven_current=T0 - timedelta(hours=1), unindexed_files=["memory/x.md"]))


def _text(app, sel: str) -> str:
    return str(app.screen.query_one(sel, Static).render())


async def test_walkthrough_keys(tmp_path):
    answers = [_broken(), _fixed()]
    calls = []

    def reprobe():
        r = answers[min(len(calls), len(answers) - 1)]
        calls.append(r)
        return r, diagnose(r, T0)

    d = diagnose(_broken(), T0, openclaw="/opt/oc/bin/openclaw")
    screen = WalkthroughScreen(d, _broken(), reprobe, openclaw="/opt/oc/bin/openclaw", data_root=str(tmp_path),
                               operator="ops-alice", clock=lambda: T0)
    app = Host(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "QMD unavailable · " in _text(app, "#walk-verdict")  # words, never the ids
        assert "QMD_UNAVAILABLE" not in _text(app, "#walk-verdict")
        assert "Resolve qmd as the gateway does" in _text(app, "#walk-detail-body")
        # y copies the exact command of the current step (OSC 52)
        await pilot.press("y")
        assert app.clipboard == screen.walk.step.command and "command -v qmd" in app.clipboard
        # x on a step clawprobe may not run: refused, nothing pushed
        await pilot.press("x")
        assert not isinstance(app.screen, ConfirmScreen)
        assert "does not run this command" in _text(app, "#walk-status")
        # said once: "clawprobe will not run this: shown to copy: clawprobe does not run this command itself"
        assert _text(app, "#walk-status").count("clawprobe") == 1, _text(app, "#walk-status")
        assert _text(app, "#walk-detail-body").count("copies it") == 1, _text(app, "#walk-detail-body")
        # Enter = verify: still broken → fails, stays on the step
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.walk.current == 0 and screen.walk.step.status == "failed"
        assert "not yet" in _text(app, "#walk-status")
        # v = verify: fixed → passes, verdict moves to stale_index, the walk follows
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.walk.verdict is Verdict.STALE_INDEX
        assert "Stale index" in _text(app, "#walk-verdict")
        assert "QMD unavailable → Stale index" in _text(app, "#walk-transitions")
        assert "the walk follows it" in _text(app, "#walk-status")
        # d marks the manual step done (recorded with the operator), s skips
        assert screen.walk.step.title == "Check the schedule"
        await pilot.press("d")
        assert screen.walk.step.title == "Run the managed update" and screen.walk.step.allowed
        # x asks first; n declines and nothing runs
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and "not run" in _text(app, "#walk-status")
        assert not any(e.kind == "run" for e in screen.walk.events)
        await pilot.press("s")
        assert screen.walk.step.title == "Re-probe"
        # Esc leaves; the walk is recorded as abandoned with every event
        await pilot.press("escape")
        await pilot.pause()
    assert app.result is screen.walk and screen.walk.status == "abandoned"
    saved = load_walks("main", tmp_path)[0]
    kinds = [e.kind for e in saved.events]
    assert kinds == ["start", "verify", "verify", "transition", "done_by_operator", "skip", "abandoned"]
    assert saved.events[4].confirmed_by == "ops-alice"


async def test_download_screen_opens_by_itself_and_updates():
    def vec(done: int, state: str = "downloading") -> Vectors:
        return Vectors(missing_models=["embed"], download_status="waiting" if state == "downloading" else "stalled",
                       downloads=[ModelDownload(role="embed", name="hf_ggml-org_embeddinggemma-300M-Q8_0.gguf",
                                                state=state, done_bytes=done, total_bytes=1000, rate_bps=50.0,
                                                eta_s=(1000 - done) / 50, last_growth_at=T0),
                                  ModelDownload(role="generate", name="hf_tobil_qmd-query-expansion-1.7B-q4_k_m.gguf",
                                                state="missing", detail="not in the model cache")])

    def rec(v: Vectors) -> Receipt:
        return Receipt(checked_at=T0, config=ConfigFacts(configured_backend="qmd", search_mode="vsearch"), vectors=v)

    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        assert not on_receipt(app, None, rec(Vectors()), clock=lambda: T0)  # nothing downloading
        assert on_receipt(app, Vectors(), rec(vec(250)), clock=lambda: T0)
        await pilot.pause()
        assert isinstance(app.screen, DownloadsScreen)
        bar = app.screen.query_one("#download-embed").query_one(ProgressBar)
        assert bar.percentage == 0.25
        label = str(app.screen.query_one("#download-embed .download-label", Static).render())
        assert "downloading 25%" in label and "ETA 15 s" in label
        assert "missing" in str(app.screen.query_one("#download-generate .download-label", Static).render())
        assert not on_receipt(app, vec(250), rec(vec(500, "stalled")), clock=lambda: T0 + timedelta(minutes=3))
        await pilot.pause()
        assert app.screen.query_one("#download-embed").has_class("-stalled")
        assert "stalled" in str(app.screen.query_one("#download-embed .download-label", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DownloadsScreen)


def _screen_lines(app) -> list[str]:
    """The screen as plain text lines (from the SVG screenshot: what the terminal shows)."""
    import html
    import re

    rows: dict[float, list[str]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="[\d.]+" y="([\d.]+)"[^>]*>(.*?)</text>', app.export_screenshot()):
        rows.setdefault(float(m.group(1)), []).append(html.unescape(m.group(2)).replace("\xa0", " "))
    return ["".join(v) for _, v in sorted(rows.items())]


async def test_walkthrough_command_is_one_line_cut_with_ellipsis_and_copied_whole(tmp_path):
    """Demo scenario 15 (index bloat): its 200-character ``XDG_CONFIG_HOME=…`` command is shown on one line
    with its program and verb (the assignments give way to ``…``, :func:`clawprobe.tui.widgets.fit.fit_command`),
    never wrapped mid-word; ``y`` copies it whole; the saved walk's path is cut in the middle."""
    from clawprobe.tui import demo

    rs, _ = demo.at_now(demo.scenarios()[demo.find("rw43-index-bloat")], T0)
    d = diagnose(rs[0], T0)
    root = tmp_path / ("a-very-long-data-directory-name-" * 3)
    screen = WalkthroughScreen(d, rs[0], None, data_root=str(root), operator="ops", clock=lambda: T0)
    app = Host(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        cmd = screen.walk.step.command
        assert cmd and len(cmd) > 150 and cmd.startswith("XDG_CONFIG_HOME=")
        lines = _screen_lines(app)
        shown = [ln for ln in lines if "$ " in ln or "--dry-run" in ln]  # the environment prefix gives way first
        assert len(shown) == 1 and "$ … /usr/local/bin/qmd cleanup --dry-run" in shown[0], lines
        saved = next(ln for ln in lines if "· saved " in ln)
        assert "…" in saved and saved.rstrip(" │").endswith(".json"), saved
        await pilot.press("y")
        await pilot.pause()
        assert app.clipboard == cmd
