#!/usr/bin/env python3
"""Benchmark: the fast probe (everything except the openclaw CLI) on a 100-file workspace vs one
``openclaw memory status --json`` call. Prints times and ratios; the goal is fast ≤ 80 ms (steady state,
qmd check cached). Needs the test bed (scripts/install-testbed.sh). Not a test: it asserts nothing.

    python bench/bench_probes.py [--files 100] [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tests.testbed import OC_QMD, OpenClawHome, Testbed, qmd_config, run_openclaw

from clawprobe.core.probe import (
    _cli_env,
    clear_caches,
    discover,
    fast,
)
from clawprobe.core.probes import openclaw_cli as oc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    tb = Testbed.locate()
    if tb.missing():
        print(f"test bed missing: {tb.missing()} — run scripts/install-testbed.sh", file=sys.stderr)
        return 2
    home = OpenClawHome.create(prefix="clawprobe-bench-")
    try:
        home.write_config(qmd_config("qmd", "search"))
        home.write_memory_md("# Memory\n\nBench.\n")
        for i in range(a.files - 1):
            home.write_memory(f"notes/{i // 10:02d}/note-{i:03d}.md", f"# Note {i}\n\n" + ("word " * 200) + "\n")
        res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[tb.bin_dir], testbed=tb)
        if res.rc != 0:
            print(res.stderr, file=sys.stderr)
            return 1
        env = home.env([tb.bin_dir], {"CLAWPROBE_OPENCLAW": str(tb.openclaw(OC_QMD))})
        clear_caches()
        t0 = time.perf_counter()
        ctx = discover(env=env)
        t_discover = time.perf_counter() - t0
        t0 = time.perf_counter()
        fast(ctx, "main", None)
        t_cold = time.perf_counter() - t0
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            r = fast(ctx, "main", None)
            times.append(time.perf_counter() - t0)
        warm = statistics.median(times)
        cli = []
        for _ in range(3):
            st, raw = oc.run_status(ctx.openclaw, "main", _cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path))
            cli.append(raw.seconds)
        status = statistics.median(cli)
        print(f"workspace files: {a.files}  (indexed: {r.vectors.documents})")
        print(f"discover (incl. openclaw --version): {t_discover * 1000:.1f} ms")
        print(f"fast probe, cold (runs qmd --version + qmd ls): {t_cold * 1000:.1f} ms")
        print(f"fast probe, steady state, median of {a.runs}: {warm * 1000:.1f} ms "
              f"(p90 {sorted(times)[int(len(times) * 0.9) - 1] * 1000:.1f} ms)  goal <= 80 ms: "
              f"{'met' if warm <= 0.080 else 'NOT met'}")
        print(f"openclaw memory status --json, median of 3: {status * 1000:.0f} ms")
        print(f"ratio status / fast(steady): {status / warm:.0f}x   status / fast(cold): {status / t_cold:.1f}x")
    finally:
        home.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
