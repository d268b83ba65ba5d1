#!/usr/bin/env python3
"""Benchmark: the whole one-shot process ``clawprobe check --json --no-openclaw`` (what a timer runs) on a QMD
workspace of 1,000 vs 100,000 notes, and where the time goes. Goal (issue 16, "One-shot scale"): 100,000 ≤ 2×
1,000. Not a test: it asserts nothing, it prints seconds (wall, ``time.perf_counter``) and the ratio.

    python bench/bench_oneshot.py [--big 100000] [--runs 3] [--keep]

Each home is built by ``bench/run.py``'s ``big_home`` (notes 1,000 per dir, every note indexed by the real
``qmd collection add`` of the test bed: ≈ 6 s for 1,000, ≈ 5.5 min for 100,000 on a busy 2-core host), in a
throwaway dir under ``/tmp`` (``--keep`` leaves it and prints it; ``--reuse DIR`` measures homes a previous
``--keep`` left). Per size: the first process (``first``) and the median of ``--runs`` more (``warm``: the
page cache and anything clawprobe keeps between runs are warm), then, in one process, the three parts that
grow with the tree — reading the QMD index (``read_qmd_index``), the scan (``scan_qmd``) and the comparison
(``compare_qmd``) — to show what a faster one-shot must cut.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from run import big_home  # noqa: E402
from tests.testbed import Testbed  # noqa: E402

CLAWPROBE = str(Path(sys.executable).with_name("clawprobe"))

_PARTS = """
import json, os, sys, time
from datetime import UTC, datetime
from clawprobe.core.probe import _agent_qmd_env, discover
from clawprobe.core.probes import qmd_index as qi, workspace as ws
ctx = discover()
qenv = _agent_qmd_env(ctx, "main")[0]
t0 = time.perf_counter()
facts = qi.read_qmd_index(qi.qmd_paths(ctx.state_dir.path, "main"), qenv)
t1 = time.perf_counter()
cols = qi.configured_collections(facts)
scan = ws.scan_qmd(cols, min((c.path for c in cols), key=len))  # the root collection is the workspace
t2 = time.perf_counter()
cmp = ws.compare_qmd(scan, facts.docs, datetime.now(UTC))
t3 = time.perf_counter()
print(json.dumps({"read index": t1 - t0, "scan": t2 - t1, "compare": t3 - t2, "files": len(scan.files),
                  "method": cmp.method}))
"""


def check_once(env: dict[str, str]) -> tuple[float, str, float]:
    """One whole ``clawprobe check --json --no-openclaw`` process: (wall seconds, freshness method, CPU seconds
    of the process and its children — less swayed by a shared host's load than the wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([CLAWPROBE, "check", "--json", "--no-openclaw"], env=env, capture_output=True, text=True,
                         timeout=600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(res.stdout)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, doc["receipts"][0]["receipt"]["freshness"]["method"], cpu


def parts(env: dict[str, str]) -> dict:
    """The index read, the scan and the comparison timed in one fresh process."""
    res = subprocess.run([sys.executable, "-c", _PARTS], env={**env, "PYTHONPATH": str(ROOT / "src")},
                         capture_output=True, text=True, timeout=600)
    return json.loads(res.stdout)


def measure(n: int, env: dict[str, str], runs: int) -> dict:
    first, method, _ = check_once(env)
    warm = [check_once(env) for _ in range(runs)]
    out = {"n": n, "first": first, "warm": statistics.median(w for w, _, _ in warm),
           "cpu": statistics.median(c for _, _, c in warm), "method": method, **parts(env)}
    print(f"  {n:>7,} notes: first {first:.2f} s, warm median {out['warm']:.2f} s (CPU {out['cpu']:.2f} s) of {runs} "
          f"({method}); "
          f"in-process: read index {out['read index']:.2f} s, scan {out['scan']:.2f} s, "
          f"compare {out['compare']:.2f} s", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the homes (and print where)")
    ap.add_argument("--reuse", help="a dir a previous --keep left: measure its homes instead of building")
    a = ap.parse_args()
    parent = Path(a.reuse) if a.reuse else Path(tempfile.mkdtemp(prefix="clawprobe-oneshot-"))
    try:
        homes = {}
        for n in (1000, a.big):
            meta = parent / f"home-{n}.json"
            if not meta.exists():
                home, env, secs = big_home(parent, Testbed.locate(), n)
                meta.write_text(json.dumps({"env": env, "index_s": secs}))
                print(f"  built {n:,} notes, indexed by qmd in {secs:.0f} s", flush=True)
            homes[n] = json.loads(meta.read_text())["env"]
        print(f"load average {os.getloadavg()[0]:.2f} (2 cores: above 2 the figures are inflated)", flush=True)
        small, big = (measure(n, homes[n], a.runs) for n in (1000, a.big))
        print(f"load average {os.getloadavg()[0]:.2f}")
        print(f"ratio {a.big:,} / 1,000, whole process, warm: {big['warm'] / small['warm']:.1f}× (goal ≤ 2×); "
              f"first run: {big['first'] / small['first']:.1f}×; CPU, warm: {big['cpu'] / small['cpu']:.1f}×")
    finally:
        if a.keep or a.reuse:
            print(f"homes kept in {parent}")
        else:
            shutil.rmtree(parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
