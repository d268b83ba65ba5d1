#!/usr/bin/env python3
"""clawprobe's benchmark report: every goal measured side by side in one run, printed as ratios.

    .venv/bin/python bench/run.py [--quick] [--big 100000] [--samples 10] [--starts 5] [--idle 20]

Needs the test bed (``bash scripts/install-testbed.sh``): real qmd 2.8.3 and OpenClaw 2026.7.35 in throwaway
homes, nothing outside them is touched. Asserts nothing — it prints the numbers; docs/performance.md keeps
the last run and how to read it. Reuses bench/bench_tui.py (dashboard timings in a real pty) and the
set-ups of bench/bench_probes.py / bench_stores.py.

1. the full fast probe (``clawprobe.core.probe.fast``: config, gateway, qmd check, QMD index, workspace vs index, model
   cache, log) vs one ``openclaw memory status --json`` on the same install — goal ≥ 50×;
2. the fast probe on a workspace of 1,000 vs 100,000 memory files, both indexed by the real qmd — goal ≤ 2×:
   as the dashboard runs it (watcher-driven workspace cache; no change, then one note edited) and as the
   one-shot ``clawprobe check`` runs it (full scan, linear by design);
3. a file change → the verdict repainted in the dashboard, p50/p95 — goal p95 ≤ 250 ms;
4. start → first verdict frame (``python -m clawprobe`` in a real pty) — goal ≤ 0.5 s;
5. idle CPU and bytes/s written to the terminal with the countdown running — goals < 1 %, < 2 KB/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_tui as bt  # noqa: E402
from tests.testbed import OpenClawHome, Testbed, qmd_config, run_qmd  # noqa: E402

from clawprobe.core.probe import _cli_env, clear_caches, discover, fast  # noqa: E402
from clawprobe.core.probes import openclaw_cli as oc  # noqa: E402
from clawprobe.core.probes.qmd_index import managed_collection_names  # noqa: E402
from clawprobe.core.probes.workspace_cache import WorkspaceCache  # noqa: E402

ROWS: list[tuple[str, str, str, str]] = []  # (measure, value, goal, ratio)


def row(measure: str, value: str, goal: str, ratio: str) -> None:
    ROWS.append((measure, value, goal, ratio))
    print(f"  {measure}: {value}   [goal {goal}: {ratio}]", flush=True)


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def ms(s: float) -> str:
    return f"{s * 1000:.1f} ms"


# ------------------------------------------------------------------------------------------ 1. fast vs CLI

def fast_vs_status(env: dict, runs: int) -> None:
    clear_caches()
    ctx = discover(env=env)
    t0 = time.perf_counter()
    r = fast(ctx, "main", None)
    cold = time.perf_counter() - t0
    warm = timed(lambda: fast(ctx, "main", None), runs)
    cli_env = _cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
    status = []
    for _ in range(3):
        _, raw = oc.run_status(ctx.openclaw, "main", cli_env)
        assert raw.rc == 0, raw.stderr[-500:]
        status.append(raw.seconds)
    w, c, s = statistics.median(warm), cold, statistics.median(status)
    print(f"1. fast probe vs `openclaw memory status --json` ({r.vectors.documents} indexed documents, "
          f"OpenClaw {ctx.openclaw_version})")
    row("fast probe, steady (qmd check cached)", f"median {ms(w)} of {runs}, p90 {ms(bt.pct(warm, 0.9))}",
        "≤ 80 ms", f"{w / 0.080:.2f}× the budget")
    row("fast probe, cold (runs qmd --version + qmd ls)", ms(c), "—", "—")
    row("openclaw memory status --json", f"median {s:.2f} s of 3", "—", "—")
    row("status / fast (steady)", f"{s / w:.0f}×", "≥ 50×", "met" if s / w >= 50 else "NOT met")
    row("status / fast (cold: once per binary change or 300 s)", f"{s / c:.1f}×", "—", "—")


# ------------------------------------------------------------------------------------------ 2. 1k vs 100k

def big_home(parent: Path, tb: Testbed, n: int) -> tuple[OpenClawHome, dict, float]:
    """A QMD home whose memory/ holds ``n`` notes (1,000 per dir), all indexed by the real qmd."""
    home = OpenClawHome.create(parent, prefix=f"big-{n}-")
    home.write_config(qmd_config("qmd", "search"))
    home.write_memory_md("# Memory\n\nroot\n")
    per = min(1000, n)
    for i in range(n // per):
        d = home.workspace / "memory" / f"d{i:03d}"
        d.mkdir(parents=True)
        base = os.fspath(d)
        for j in range(per):
            fd = os.open(f"{base}/n{j:04d}.md", os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, f"# note {i}-{j}\n\nbody {i} {j}\n".encode())
            os.close(fd)
    root, mem = managed_collection_names("main")
    t0 = time.monotonic()
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        res = run_qmd(home, None, *args, testbed=tb, timeout=3600)
        if res.rc != 0:
            raise SystemExit(f"qmd collection add failed: {res.stderr[-400:]}")
    return home, home.env([tb.bin_dir], {"CLAWPROBE_DATA_DIR": str(home.root / "data")}), time.monotonic() - t0


def _one_edit(home: OpenClawHome, ctx, cache: WorkspaceCache, runs: int) -> list[float]:
    """Edit one note, hand its path to the cache as the watcher would, time the probe that follows."""
    note = home.workspace / "memory" / "d000" / "n0007.md"
    out = []
    for i in range(runs):
        note.write_text(f"# edited {i}\n")
        t0 = time.perf_counter()
        cache.mark([str(note)])
        r = fast(ctx, "main", None, scan_cache=cache)
        out.append(time.perf_counter() - t0)
        assert r.freshness.unindexed_files == ["memory/d000/n0007.md"], r.freshness
    return out


def small_vs_big(tb: Testbed, big: int, runs: int) -> None:
    """The dashboard's fast probe (watcher-driven workspace cache) and the one-shot ``clawprobe check``
    probe (full scan, no cache) at 1,000 and ``big`` files; the index read is cached by file identity."""
    parent = Path(tempfile.mkdtemp(prefix="clawprobe-bench-big-"))
    try:
        results = {}
        for n in (1000, big):
            home, env, idx_s = big_home(parent, tb, n)
            clear_caches()
            ctx = discover(env=env)
            t0 = time.perf_counter()
            fast(ctx, "main", None)  # qmd check + first index read
            cold = time.perf_counter() - t0
            full = timed(lambda ctx=ctx: fast(ctx, "main", None), max(3, runs // 2))
            cache = WorkspaceCache()
            cache.watch([str(home.workspace / "memory")], grace_s=0)
            t0 = time.perf_counter()
            r = fast(ctx, "main", None, scan_cache=cache)  # its one full scan
            first = time.perf_counter() - t0
            steady = timed(lambda ctx=ctx, cache=cache: fast(ctx, "main", None, scan_cache=cache), runs)
            edit = _one_edit(home, ctx, cache, runs)
            results[n] = dict(cold=cold, full=statistics.median(full), first=first, steady=statistics.median(steady),
                              edit=statistics.median(edit), r=r, idx=idx_s, scans=cache.full_scans,
                              rss=psutil.Process().memory_info().rss)  # with this home's cache and index read alive
        s_, b_ = results[1000], results[big]
        print(f"2. fast probe at 1,000 vs {big:,} memory files (all indexed by qmd: {s_['idx']:.0f} s / {b_['idx']:.0f} s)")
        for n, x in results.items():
            row(f"fast probe, {n:,} files, dashboard (watcher-driven cache), no change",
                f"median {ms(x['steady'])} of {runs} ({x['r'].vectors.documents} documents; {x['scans']} full scan)", "—", "—")
        row(f"{big:,} / 1,000 files, dashboard, no change", f"{b_['steady'] / s_['steady']:.2f}×", "≤ 2×",
            "met" if b_['steady'] / s_['steady'] <= 2 else "NOT met")
        for n, x in results.items():
            row(f"fast probe, {n:,} files, dashboard, one note edited", f"median {ms(x['edit'])} of {runs}", "—", "—")
        row(f"{big:,} / 1,000 files, dashboard, one note edited", f"{b_['edit'] / s_['edit']:.2f}×", "≤ 2×",
            "met" if b_['edit'] / s_['edit'] <= 2 else "NOT met")
        for n, x in results.items():
            row(f"fast probe, {n:,} files, one-shot `check` (full scan, no cache)",
                f"median {ms(x['full'])}; cold (qmd check + first index read) {ms(x['cold'])}; "
                f"dashboard's first probe {ms(x['first'])}", "—", "—")
        row(f"{big:,} / 1,000 files, one-shot full scan", f"{b_['full'] / s_['full']:.1f}×", "— (linear by design)", "—")
        row(f"bench process RSS with the {big:,}-file cache and index read alive",
            f"{b_['rss'] / 2**20:.0f} MB (with 1,000 files: {s_['rss'] / 2**20:.0f} MB)", "—", "—")
    finally:
        shutil.rmtree(parent, ignore_errors=True)


# ------------------------------------------------------------------------------------------ 3–5. dashboard

def dashboard(home, live_env: dict, samples: int, starts: int, idle: float) -> None:
    lat = asyncio.run(bt.change_to_repaint(home, live_env, samples))
    p50, p95 = statistics.median(lat), bt.pct(lat, 0.95)
    print("3. file change → verdict repainted (real watcher, real fast lane, headless App)")
    row("change → repaint", f"n={len(lat)} p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {max(lat) * 1000:.0f} ms",
        "p95 ≤ 250 ms", f"{p95 / 0.250:.2f}×")

    base_env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.mkdtemp(prefix="clawprobe-bench-home-"),
                "TERM": "xterm-256color", "LANG": "C.UTF-8", "TEXTUAL_ANIMATIONS": "none"}
    live_pty_env = {**live_env, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    py = sys.executable
    cmds = {"bare Textual app": ([py, "-c", bt.BARE_APP], base_env),
            "clawprobe demo": ([py, "-m", "clawprobe", "demo"], base_env),
            "clawprobe (live)": ([py, "-m", "clawprobe"], live_pty_env)}
    firsts: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(starts):
        for name, (argv, env) in cmds.items():
            run = bt.PtyRun(argv, env)
            t = run.first(bt.FIRST_VERDICT_FRAME)  # a verdict, or live "… CHECKING <lane>" from config + index
            run.stop()
            if t is not None:
                firsts[name].append(t)
    print("4. start → first verdict frame (python -m clawprobe in a real 80×24 pty)")
    bare = statistics.median(firsts["bare Textual app"])
    for name, ts in firsts.items():
        med = statistics.median(ts)
        if name.startswith("bare"):
            row(name, f"median {med:.3f} s of {len(ts)}", "—", "reference")
        else:
            row(name, f"median {med:.3f} s of {len(ts)} ({med / bare:.2f}× the bare app)", "≤ 0.5 s", f"{med / 0.5:.2f}×")

    def settle(run) -> None:
        run.first(re.compile(rb"CLI (?:ran )?\d\d:\d\d:\d\dZ"), timeout=120)  # header line 1, visible at 80×24
        time.sleep(2)

    print(f"5. idle for {idle:.0f} s with the countdown running")
    floor = bt.measure_process("bare Textual app, one line changing every second", [py, "-c", bt.BARE_TICKING_APP],
                               base_env, idle, lambda r: time.sleep(1))
    row(f"{floor['name']}: idle CPU", f"{floor['cpu_pct']:.2f} %", "—", "reference")
    for r in (bt.measure_process("clawprobe demo", [py, "-m", "clawprobe", "demo"], base_env, idle, lambda r: time.sleep(1)),
              bt.measure_process("clawprobe (live)", [py, "-m", "clawprobe"], live_pty_env, idle, settle)):
        row(f"{r['name']}: idle CPU", f"{r['cpu_pct']:.2f} % ({r['cpu_pct'] / max(floor['cpu_pct'], 0.01):.2f}× the "
            "bare app)", "< 1 %", f"{r['cpu_pct'] / 1.0:.2f}×")
        row(f"{r['name']}: bytes to the terminal", f"{r['bytes_per_s']:.0f} B/s", "< 2048 B/s",
            f"{r['bytes_per_s'] / 2048:.2f}×")
        row(f"{r['name']}: RSS after idling", f"{r['rss_idle'] / 2**20:.0f} MB", "≤ 80 MB",
            f"{r['rss_idle'] / (80 * 2**20):.2f}×")
    shutil.rmtree(base_env["HOME"], ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run, not for the docs)")
    ap.add_argument("--big", type=int, default=100_000, help="memory files in the big workspace")
    ap.add_argument("--runs", type=int, default=21, help="fast-probe runs per median")
    ap.add_argument("--samples", type=int, default=10, help="verdict flips per direction (change → repaint)")
    ap.add_argument("--starts", type=int, default=5, help="start-ups per program")
    ap.add_argument("--idle", type=float, default=20.0, help="idle window, seconds")
    a = ap.parse_args(argv)
    if a.quick:
        a.big, a.runs, a.samples, a.starts, a.idle = 20_000, 7, 3, 2, 5.0
    tb = Testbed.locate()
    if tb.missing():
        print(f"test bed missing ({', '.join(tb.missing())}): bash scripts/install-testbed.sh", file=sys.stderr)
        return 2
    import platform

    print(f"clawprobe bench — {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}, python {platform.python_version()}, {platform.platform()}")
    home, live_env = bt.make_home()
    try:
        fast_vs_status({**live_env}, a.runs)
        small_vs_big(tb, a.big, max(5, a.runs // 3))
        dashboard(home, live_env, a.samples, a.starts, a.idle)
    finally:
        shutil.rmtree(home.root, ignore_errors=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    print("| measure | value | goal | ratio |\n|---|---|---|---|")
    for m, v, g, r in ROWS:
        print(f"| {m} | {v} | {g} | {r} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
