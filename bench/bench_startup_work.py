"""Start-up work: machine instructions from exec to the first verdict frame, as a ratio to a bare Textual app.

    .venv/bin/python bench/bench_startup_work.py [--tree SRC ...]

Wall-clock start-up (``bench/bench_tui.py``) swings by 2× with the host's load; the instructions a process
executes before its first frame do not (two runs of one tree agree within ≈ 0.5 %). Each program runs once
under valgrind's callgrind in a real 80×24 pty (``bench_tui.PtyRun``); when the first verdict frame
(``bench_tui.FIRST_VERDICT_FRAME``) is on screen, ``callgrind_control --dump`` records the instructions the
dashboard process executed so far (its forked first-look child and the programs it runs are not counted:
they run beside it, on the other core). Programs: the bare one-widget app (the toolkit's floor) and ``clawprobe
demo``. The live dashboard shares the demo's path to its first frame (same imports, same panes) and adds the
wait for its forked first look; under valgrind that child runs ≈ 50× slower, past its 30 s bound, and the
parent then locates the install itself — so the live view's count measures valgrind, not clawprobe, and is not
taken. ``--tree`` points ``PYTHONPATH`` at another
source tree (e.g. a ``git worktree`` of an older commit) to compare trees side by side; default: this
checkout's ``src``. Needs ``valgrind`` (Debian package). Asserts nothing; it prints the figures.

Read it as: the work clawprobe adds on the first frame's path, as a multiple of the toolkit's own start-up.
Waiting (the live view's child, ``openclaw --version``) only the wall clock of ``bench_tui.py`` on a quiet
host shows.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_tui import BARE_APP, FIRST_VERDICT_FRAME, PY, ROOT, PtyRun

#: a valgrind'd start takes 40–120 s (≈ 50× slower); beyond this the run is reported as missing
FRAME_TIMEOUT_S = 600.0
_SUMMARY = re.compile(r"^(?:summary|totals):\s*(\d+)", re.M)


def instructions_to_first_frame(argv: list[str], env: dict[str, str]) -> float | None:
    """Millions of instructions ``argv`` executed from exec until its first verdict frame; None if no frame came."""
    with tempfile.TemporaryDirectory(prefix="clawprobe-bench-cg-") as tmp:
        pattern = os.path.join(tmp, "cg.%p")
        run = PtyRun(["valgrind", "--tool=callgrind", f"--callgrind-out-file={pattern}", *argv], env)
        try:
            if run.first(FIRST_VERDICT_FRAME, timeout=FRAME_TIMEOUT_S) is None:
                return None
            dump = os.path.join(tmp, f"cg.{run.proc.pid}.1")
            subprocess.run(["callgrind_control", "--dump", str(run.proc.pid)], capture_output=True, timeout=60,
                           env={**os.environ, "TMPDIR": env.get("TMPDIR", "/tmp")})  # where valgrind put its pipes
            end = time.monotonic() + 60
            while not (os.path.exists(dump) and _SUMMARY.search(Path(dump).read_text(errors="replace"))):
                if time.monotonic() > end:
                    return None
                time.sleep(0.2)
            return int(_SUMMARY.search(Path(dump).read_text(errors="replace")).group(1)) / 1e6  # type: ignore[union-attr]
        finally:
            run.proc.kill()
            run.proc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", help="a source tree (its src dir) to measure; repeatable")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("bench_startup_work: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 3
    trees = [str(Path(t).resolve()) for t in (args.tree or [ROOT / "src"])]
    for tree in trees:  # byte-code compiled first, as after any earlier start: compiling is not start-up work
        compileall.compile_dir(tree, quiet=1)
    base = {"PATH": "/usr/bin:/bin", "HOME": tempfile.mkdtemp(prefix="clawprobe-bench-home-"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "TEXTUAL_ANIMATIONS": "none"}
    try:
        return _measure(trees, base)
    finally:
        shutil.rmtree(base["HOME"], ignore_errors=True)


def _measure(trees: list[str], base: dict[str, str]) -> int:
    bare = instructions_to_first_frame([PY, "-c", BARE_APP], base)
    print(f"bare Textual app: {bare:.0f} M instructions to its first frame" if bare else "bare app: no frame")
    for tree in trees:
        m = instructions_to_first_frame([PY, "-m", "clawprobe", "demo"], {**base, "PYTHONPATH": tree})
        ratio = f", {m / bare:.2f}× the bare app" if m and bare else ""
        print(f"{tree}: clawprobe demo: " + (f"{m:.0f} M instructions to the first verdict frame{ratio}" if m else "no frame"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
