"""Benchmark the store probes: read a 100-file QMD index (uncached and cached) + scan/compare the
workspace, the builtin equivalent, and a scan of a 100,000-file tree. Prints medians and the ratio to the 80 ms budget
of the fast probes (issue 3). Uses the real qmd from the test bed to build the index (never timed).

    python bench/bench_stores.py [--files 100] [--runs 21] [--big 100000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tests.testbed import OpenClawHome, Testbed, run_qmd

from clawprobe.core.probes.qmd_index import (
    clear_read_cache,
    configured_collections,
    managed_collection_names,
    qmd_paths,
    read_qmd_index,
)
from clawprobe.core.probes.workspace import DEFAULT_MAX_FILES, compare_qmd, scan_builtin, scan_qmd

BUDGET_S = 0.080


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--big", type=int, default=100_000)
    a = ap.parse_args()
    tb = Testbed.locate()
    if tb.missing():
        print(f"test bed missing: {tb.missing()} — run scripts/install-testbed.sh", file=sys.stderr)
        return 3
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        home = OpenClawHome.create(tmp)
        home.write_memory_md("# Memory\n\nroot\n")
        for i in range(a.files - 1):
            home.write_memory(f"d{i % 10}/note-{i:03d}.md", f"# Note {i}\n\n" + "word " * 200 + f"\nTOKEN{i}\n")
        root, mem = managed_collection_names("main")
        for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                     ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
            r = run_qmd(home, None, *args, testbed=tb)
            if r.rc != 0:
                print(r.stderr, file=sys.stderr)
                return 1
        paths = qmd_paths(home.state_dir, "main")
        now = datetime.now(UTC)

        def qmd_all() -> None:
            f = read_qmd_index(paths, {})
            compare_qmd(scan_qmd(configured_collections(f), str(home.workspace)), f.docs, now)

        def cold_read():
            clear_read_cache()
            return read_qmd_index(paths, {})

        read_s = _median(cold_read, a.runs)
        cached_s = _median(lambda: read_qmd_index(paths, {}), a.runs)
        f = read_qmd_index(paths, {})
        scan_s = _median(lambda: scan_qmd(configured_collections(f), str(home.workspace)), a.runs)
        all_s = _median(qmd_all, a.runs)
        bscan_s = _median(lambda: scan_builtin(str(home.workspace)), a.runs)
        print(f"QMD index read ({f.documents_active} docs, {f.index_bytes} bytes): {read_s * 1000:.1f} ms "
              f"(unchanged index, cached by file identity: {cached_s * 1000:.2f} ms)")
        print(f"QMD workspace scan ({a.files} files): {scan_s * 1000:.1f} ms")
        print(f"QMD read + scan + compare: {all_s * 1000:.1f} ms = {all_s / BUDGET_S:.2f} × the 80 ms fast-probe budget")
        print(f"builtin workspace scan ({a.files} files): {bscan_s * 1000:.1f} ms")

        big = Path(tmp) / "big"
        per = 1000
        for i in range(a.big // per):
            d = big / "memory" / f"d{i:03d}"
            d.mkdir(parents=True)
            base = os.fspath(d)
            for j in range(per):
                os.close(os.open(f"{base}/n{j:04d}.md", os.O_CREAT | os.O_WRONLY, 0o644))
        t0 = time.perf_counter()
        s = scan_builtin(str(big))
        big_s = time.perf_counter() - t0
        print(f"builtin scan of a {a.big}-file tree (cap {DEFAULT_MAX_FILES:,} files): {big_s * 1000:.0f} ms, "
              f"{len(s.files)} files kept, capped={s.capped} ({s.cap_detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
