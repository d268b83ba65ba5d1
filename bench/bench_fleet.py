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

``--timeline`` (needs ``strace``) adds one more ``clawprobe check --json`` traced with ``strace -f -e
execve,exit_group`` and prints when each program it ran started and ended, in seconds after clawprobe's own
exec; and one ``clawprobe check --json --no-openclaw`` (Python + the qmd binary/store check, no CLI call) for
clawprobe's own CPU.
"""

from __future__ import annotations

import argparse
import os
import re
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


def timeline(argv: list[str], env: dict[str, str], cwd: Path, out: Path) -> list[str]:
    """One traced run: ``[f"{start:6.2f}–{end:6.2f} s  program args"]`` for every process that executed a
    program (a process that execs again — the ``openclaw`` sh wrapper becoming node — is one row, named by its
    first exec; a launcher's respawned child is a row of its own)."""
    subprocess.run(["strace", "-f", "-ttt", "-qq", "-s", "256", "-e", "trace=execve,exit_group", "-o", str(out), *argv], env=env,
                   cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    t0, started, ended, names = None, {}, {}, {}
    for line in out.read_text().splitlines():
        m = re.match(r"(\d+) +(\d+\.\d+) (.*)", line)
        if not m:
            continue
        pid, t, rest = m.group(1), float(m.group(2)), m.group(3)
        t0 = t if t0 is None else t0
        if rest.startswith("execve(") and " = 0" in rest:
            args = re.findall(r'"((?:[^"\\]|\\.)*)"', rest)[1:]
            if pid not in started:
                started[pid] = t - t0
                names[pid] = " ".join([Path(args[0]).name, *[a for a in args[1:6] if not a.startswith("/")]])[:90]
        elif rest.startswith("exit_group") and pid in started:
            ended[pid] = t - t0
    return [f"{started[p]:6.2f}–{ended.get(p, float('nan')):6.2f} s  {names[p]}" for p in started]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeline", action="store_true", help="also trace one check (strace) and time its own CPU")
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
        ours = [sys.executable, "-m", "clawprobe", "check", "--json", "--state-dir", str(home.state_dir)]
        if args.timeline and shutil.which("strace"):
            print("timeline of one clawprobe check --json (s after exec; the python line is clawprobe itself):")
            for row in timeline(ours, cp_env, ROOT, Path(tmp) / "strace.txt"):
                print("  " + row)
            w, c, rc = timed([*ours, "--no-openclaw"], cp_env, ROOT)
            print(f"clawprobe check --json --no-openclaw (Python + qmd --version + qmd ls): wall {w:.2f} s, CPU {c:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
