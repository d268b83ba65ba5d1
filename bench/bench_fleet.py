#!/usr/bin/env python3
"""Benchmark (issue 16): a full ``clawprobe check --json`` vs OpenClaw's own pair on the same real install.

    .venv/bin/python bench/bench_fleet.py [--rounds 3]

Set-up (once): a real QMD install (OpenClaw 2026.7.35 + qmd 2.8.3 from the test bed), MEMORY.md, clawprobe's
canary planted and indexed with ``openclaw memory index``. Then, interleaved, ``--rounds`` times each (whole
processes, wall time and CPU time of the process tree):

* native: ``openclaw memory status --deep --json`` followed by ``openclaw memory search TOKEN --json``;
* clawprobe: ``clawprobe check --json`` (discovery, ``openclaw --version``, status ∥ search ∥ direct qmd,
  the fast probes, the diagnosis).

Prints medians and the ratio clawprobe / native (goal ≤ 0.6× wall). Asserts nothing; docs/performance.md
keeps the last figures. On a shared machine the ratio (measured side by side in one run) is what counts.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.testbed import OC_QMD, OpenClawHome, Testbed, openclaw_env, qmd_config, run_openclaw  # noqa: E402

from clawprobe.core import canary_write  # noqa: E402


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of the children, rc) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.returncode


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tb = Testbed.require()
    with tempfile.TemporaryDirectory(prefix="clawprobe-bench-fleet-") as tmp:
        home = OpenClawHome.create(tmp)
        home.write_config(qmd_config("qmd", "search"))
        home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
        data = Path(tmp) / "clawprobe-data"
        data.mkdir()
        token = canary_write.plant(home.workspace, "main", root=data).token
        res = run_openclaw(home, OC_QMD, "memory", "index", path_dirs=[tb.bin_dir], testbed=tb)
        assert res.rc == 0, res.stderr
        oc_env = openclaw_env(home, OC_QMD, [tb.bin_dir], testbed=tb)
        cp_env = {**oc_env, "CLAWPROBE_OPENCLAW": str(tb.openclaw(OC_QMD)), "CLAWPROBE_DATA_DIR": str(data)}
        oc = str(tb.openclaw(OC_QMD))
        native_w, native_c, ours_w, ours_c = [], [], [], []
        for _ in range(args.rounds):
            w1, c1, rc1 = timed([oc, "memory", "status", "--deep", "--json"], oc_env, home.root)
            w2, c2, rc2 = timed([oc, "memory", "search", token, "--json"], oc_env, home.root)
            native_w.append(w1 + w2)
            native_c.append(c1 + c2)
            w, c, rc = timed([sys.executable, "-m", "clawprobe", "check", "--json", "--state-dir", str(home.state_dir)],
                             cp_env, ROOT)
            ours_w.append(w)
            ours_c.append(c)
            print(f"  native {w1:.2f}+{w2:.2f} s (rc {rc1},{rc2})   clawprobe check --json {w:.2f} s (rc {rc})", flush=True)
        nw, nc, ow, oc_cpu = (statistics.median(x) for x in (native_w, native_c, ours_w, ours_c))
        print(f"native pair: wall {nw:.2f} s, CPU {nc:.2f} s (median of {args.rounds})")
        print(f"clawprobe check --json: wall {ow:.2f} s, CPU {oc_cpu:.2f} s")
        print(f"ratio clawprobe/native: wall {ow / nw:.2f}x (goal <= 0.6x), CPU {oc_cpu / nc:.2f}x  "
              f"[{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
