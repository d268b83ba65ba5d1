"""Dashboard timing and footprint against its goals (prints numbers and ratios; asserts nothing).

    .venv/bin/python bench/bench_tui.py [--samples 15] [--idle 30] [--starts 5]

Measures, on a real throwaway OpenClaw home from the test bed (real qmd 2.8.3 + OpenClaw 2026.7.35,
``scripts/install-testbed.sh``; demo-only numbers when it is missing):

1. file change → verdict repainted, p50/p95 (goal ≤ 250 ms p95): in-process (headless App, real watcher,
   real fast lane). A note with an old mtime is renamed into ``memory/`` (the index turns stale) and then
   removed (fresh again); the time runs from the rename/unlink to the banner showing the new verdict.
2. start → first verdict frame (goal ≤ 0.5 s): ``python -m clawprobe`` in a real pty at 80×24; the clock
   runs from exec to the first byte of output whose banner comes from a receipt: the verdict's
   ``rule N/13``, or — live, while the proving lanes (qmd binary check, openclaw CLI) still run — the
   ``… CHECKING  <lane> N s`` line painted from what the config and the index say (never "locating").
   ``--starts`` runs each, interleaved with a bare Textual app (one Static) measured the same way; the
   ratio to the bare app of the same run is the figure that carries across hosts. For the live run the
   time to the proven verdict (``rule N/13``, after both lanes) is printed too. The live dashboard runs twice
   per round: with its own fact cache (``$CLAWPROBE_CACHE_DIR``, kept between starts as for an operator: the
   kept ``openclaw --version`` answer, ``clawprobe.core.probes.version_fact``; only its first start finds it
   empty) and with a new empty one each start ("cold cache": the first start ever on a host).
3. RSS of that process after the first frame and after the idle window (goal ≤ 80 MB).
4. idle CPU % and bytes/s written to the terminal over ``--idle`` seconds with the countdown running
   (goals < 1 % and < 2 KB/s), for the live dashboard (after its openclaw CLI lane finished) and the demo.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

PY = sys.executable
#: the first frame whose banner comes from a receipt: a verdict, or the live "checking" line with its lanes
FIRST_VERDICT_FRAME = re.compile(rb"rule \d+/13|CHECKING.{0,40}?(qmd binary|openclaw CLI)", re.S)
#: the verdict once the proving lanes ended (the line no longer says CHECKING)
PROVEN_VERDICT = re.compile(rb"rule \d+/13")
ANSI = re.compile(rb"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>NOM78c])")
BARE_APP = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("rule 0/13 bare")
Bare().run()
"""

#: The floor of idling: a one-widget Textual app whose line changes once a second, as the countdown's does.
BARE_TICKING_APP = """
import time
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("rule 0/13 bare", id="line")
    def on_mount(self):
        self.set_interval(1.0, lambda: self.query_one("#line", Static).update(f"rule 0/13 {time.time():.0f}"))
Bare().run()
"""


# ---------------------------------------------------------------------------------------------- set-up
def make_home():
    """A QMD-backend home (search mode) with an index built by ``openclaw memory index``; None without a test bed."""
    from tests.testbed import OC_QMD, OpenClawHome, Testbed, qmd_config, run_openclaw

    tb = Testbed.locate()
    if tb.missing():
        return None, None
    home = OpenClawHome.create(prefix="clawprobe-bench-tui-")
    home.write_config(qmd_config("qmd", "search"))
    home.write_memory_md("# Memory\n\nThe operator prefers tea.\n")
    for i in range(100):
        home.write_memory(f"note-{i:03d}.md", f"# Note {i}\n\nSomething worth remembering, number {i}.\n")
    res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[tb.bin_dir], testbed=tb)
    if res.rc != 0:
        raise SystemExit(f"openclaw memory index failed: {res.stderr[-400:]}")
    data = home.root / "clawprobe-data"
    env = home.env(path_dirs=[tb.bin_dir], extra={"CLAWPROBE_OPENCLAW": str(tb.openclaw(OC_QMD)),
                                                   "CLAWPROBE_DATA_DIR": str(data)})
    return home, env


# ---------------------------------------------------------------------------------------------- 1. change → repaint
async def change_to_repaint(home, env, samples: int) -> list[float]:
    from textual.widgets import Static

    from clawprobe.tui.app import ClawprobeApp
    from clawprobe.tui.sources import LiveSource

    os.environ["CLAWPROBE_DATA_DIR"] = env["CLAWPROBE_DATA_DIR"]
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    out: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        async def until(cond, timeout=120.0):
            end = time.monotonic() + timeout
            while not cond():
                if time.monotonic() > end:
                    raise SystemExit("timed out waiting for the dashboard")
                await asyncio.sleep(0.002)

        banner = app.query_one("#verdict-line", Static)
        await until(lambda: app.report and app.report.current and app.report.current.slow_at is not None)
        await pilot.pause(1.0)
        mem = home.workspace / "memory"
        staging = home.root / "staging"
        staging.mkdir(exist_ok=True)
        old = time.time() - 3600
        for i in range(samples):
            src = staging / f"old-{i}.md"
            src.write_text(f"# Old note {i}\n\nwritten an hour ago\n")
            os.utime(src, (old, old))
            want_stale = True
            for _ in range(2):
                t0 = time.perf_counter()
                if want_stale:
                    os.rename(src, mem / src.name)
                else:
                    (mem / src.name).unlink()
                await until(lambda want=want_stale: ("Stale index" in str(banner.render())) == want, 30)
                out.append(time.perf_counter() - t0)
                await asyncio.sleep(0.4)
                want_stale = not want_stale
    return out


# ---------------------------------------------------------------------------------------------- 2–4. real pty
class PtyRun:
    """``argv`` in a fresh pty of ``cols``×``rows``; records every byte written and when."""

    def __init__(self, argv: list[str], env: dict[str, str], cols: int = 80, rows: int = 24) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=str(ROOT),
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.chunks: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.chunks.append((time.perf_counter(), data))

    def first(self, pattern: re.Pattern[bytes], timeout: float = 60.0) -> float | None:
        """Seconds from exec to the first output that (ANSI stripped, cumulated) matches ``pattern``."""
        end = time.monotonic() + timeout
        seen = 0
        text = b""
        while time.monotonic() < end:
            with self._lock:
                new = self.chunks[seen:]
                seen = len(self.chunks)
            for t, data in new:
                text += ANSI.sub(b"", data)
                if pattern.search(text):
                    return t - self.t0
            time.sleep(0.005)
        return None

    def bytes_between(self, a: float, b: float) -> int:
        with self._lock:
            return sum(len(d) for t, d in self.chunks if a <= t < b)

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
        os.close(self.master)


def measure_process(name: str, argv: list[str], env: dict[str, str], idle_s: float, settle) -> dict:
    run = PtyRun(argv, env)
    first = run.first(FIRST_VERDICT_FRAME)
    p = psutil.Process(run.proc.pid)
    rss_first = p.memory_info().rss
    settle(run)
    cpu0, t0 = sum(p.cpu_times()[:2]), time.perf_counter()
    time.sleep(idle_s)
    cpu1, t1 = sum(p.cpu_times()[:2]), time.perf_counter()
    rss_idle = p.memory_info().rss
    out_bytes = run.bytes_between(t0, t1)
    run.stop()
    return {"name": name, "first_frame_s": first, "rss_first": rss_first, "rss_idle": rss_idle,
            "cpu_pct": 100 * (cpu1 - cpu0) / (t1 - t0), "bytes_per_s": out_bytes / (t1 - t0)}


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=15, help="verdict flips per direction")
    ap.add_argument("--idle", type=float, default=30.0, help="idle window, seconds")
    ap.add_argument("--starts", type=int, default=5, help="start-ups measured per program")
    args = ap.parse_args(argv)
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (numbers swell on a busy host)")

    base_env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.mkdtemp(prefix="clawprobe-bench-home-"),
                "TERM": "xterm-256color", "LANG": "C.UTF-8", "TEXTUAL_ANIMATIONS": "none"}
    home, live_env = make_home()

    # 1. change → repaint
    if home is not None:
        lat = asyncio.run(change_to_repaint(home, live_env, args.samples))
        p50, p95 = statistics.median(lat), pct(lat, 0.95)
        print(f"file change → verdict repainted: n={len(lat)} p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
              f"max {max(lat) * 1000:.0f} ms (goal p95 ≤ 250 ms: {p95 / 0.250:.2f}× the goal)")
    else:
        print("file change → verdict repainted: SKIPPED (no test bed: bash scripts/install-testbed.sh)")

    # 2. start → first frame, repeated and interleaved (bare / demo / live) so host load hits all alike
    cmds = {"bare Textual app": ([PY, "-c", BARE_APP], base_env), "clawprobe demo": ([PY, "-m", "clawprobe", "demo"], base_env)}
    if home is not None:
        live_pty_env = {**live_env, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none",
                        "CLAWPROBE_CACHE_DIR": tempfile.mkdtemp(prefix="clawprobe-bench-cache-")}
        cmds["clawprobe (live)"] = ([PY, "-m", "clawprobe"], live_pty_env)
        cmds["clawprobe (live, cold cache)"] = ([PY, "-m", "clawprobe"], live_pty_env)  # a new cache dir each start
    firsts: dict[str, list[float]] = {k: [] for k in cmds}
    proven: list[float] = []
    for _ in range(args.starts):
        for name, (argv_, env_) in cmds.items():
            if name.endswith("cold cache)"):  # as on the first start ever: no kept `openclaw --version`, no index facts
                env_ = {**env_, "CLAWPROBE_CACHE_DIR": tempfile.mkdtemp(prefix="clawprobe-bench-cold-")}
            run = PtyRun(argv_, env_)
            t = run.first(FIRST_VERDICT_FRAME)
            if t is not None:
                firsts[name].append(t)
            if name == "clawprobe (live)":
                tp = run.first(PROVEN_VERDICT, timeout=120)
                if tp is not None:
                    proven.append(tp)
            run.stop()
            if name.endswith("cold cache)"):
                shutil.rmtree(env_["CLAWPROBE_CACHE_DIR"], ignore_errors=True)
    bare_med = statistics.median(firsts["bare Textual app"])
    for name, ts in firsts.items():
        med = statistics.median(ts)
        goal = "" if name.startswith("bare") else f", {med / 0.5:.2f}× the 0.5 s goal, {med / bare_med:.2f}× the bare app"
        print(f"start → first verdict frame, {name}: median {med:.3f} s of {len(ts)} "
              f"(min {min(ts):.3f}, max {max(ts):.3f}){goal}")
    if proven:
        print(f"start → proven verdict (qmd and openclaw CLI lanes ended), clawprobe (live): median "
              f"{statistics.median(proven):.3f} s of {len(proven)} ({statistics.median(proven) / bare_med:.2f}× the bare app)")

    # 3–4. RSS, idle CPU and bytes/s with the countdown running
    rows = [measure_process("clawprobe demo", [PY, "-m", "clawprobe", "demo"], base_env, args.idle, lambda r: time.sleep(1))]
    if home is not None:
        def settle(run: PtyRun) -> None:  # let the openclaw CLI lane finish (header line 1, visible at 80×24)
            run.first(re.compile(rb"CLI (?:ran )?\d\d:\d\d:\d\dZ"), timeout=120)
            time.sleep(2)

        rows.append(measure_process("clawprobe (live)", [PY, "-m", "clawprobe"], live_pty_env, args.idle, settle))
    for r in rows:
        print(f"{r['name']}: RSS {r['rss_first'] / 2**20:.0f} MB at first frame, {r['rss_idle'] / 2**20:.0f} MB "
              f"after idling (goal ≤ 80 MB: {r['rss_idle'] / (80 * 2**20):.2f}×)")
        print(f"  idle {args.idle:.0f} s with the countdown running: CPU {r['cpu_pct']:.2f} % (goal < 1 %), "
              f"{r['bytes_per_s']:.0f} B/s to the terminal (goal < 2048 B/s: {r['bytes_per_s'] / 2048:.2f}×)")
    if home is not None:
        shutil.rmtree(home.root, ignore_errors=True)
        shutil.rmtree(live_pty_env["CLAWPROBE_CACHE_DIR"], ignore_errors=True)
    shutil.rmtree(base_env["HOME"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
