"""Helpers shared by the hardening tests (test_hardening_*, test_secrets, test_readonly, test_hung, test_load).

* :func:`run_clawprobe` — the real ``clawprobe`` command line in a child process (``python -m tui``), with an
  environment built from scratch, a timeout and the child's stdout/stderr as bytes and text;
* :func:`fake_program` — a tiny real executable (a shell script) standing in for a broken ``qmd`` or
  ``openclaw``: it can hang (and spawn a child that hangs too), print garbage, exit non-zero. Each run
  appends its PID and its children's PIDs to ``<script>.pids`` so a test can prove the tree is gone;
* :func:`indexed_qmd_home` — an OpenClaw home configured for QMD whose index was written by the real qmd;
* :func:`snapshot` / :func:`changed` — content hash + mtime of every file and directory under some roots.
"""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil

from clawprobe.core.probes.qmd_index import managed_collection_names
from tests.testbed import OC_LATEST, OpenClawHome, Testbed, qmd_config, run_openclaw, run_qmd

REPO = Path(__file__).resolve().parent.parent


#: Runs ``argv[2:]`` as its own forked child and writes that child's peak RSS (KiB, ``wait4``) to ``argv[1]``;
#: exits as the child did. A child's ``ru_maxrss`` starts at the high-water RSS of the process image it was
#: exec'd over (Linux keeps ``signal->maxrss`` across ``execve``; ``subprocess`` vforks, so that image is the
#: caller's): spawned straight from a pytest process that grew past 300 MiB, a 50 MiB clawprobe read as 337 MiB
#: (xdist worker, fv50). Forked from this small launcher, the count is clawprobe's own.
_OWN_PEAK = """\
import os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_clawprobe(args: Sequence[str], env: Mapping[str, str], timeout: float = 120.0,
                  preexec=None, peak: list[int] | None = None) -> tuple[int, str, str]:
    """``python -m tui ARGS`` with exactly ``env`` (plus PYTHONPATH to this checkout); (rc, stdout, stderr).

    Both streams are decoded strictly as UTF-8: output that is not valid UTF-8 fails the test here. With
    ``peak`` (a list), the clawprobe process's own peak RSS in bytes is appended (``wait4`` in a small launcher
    that forks it: :data:`_OWN_PEAK`); a signal-killed run's rc is then 128 + the signal.
    """
    full = dict(env)
    full["PYTHONPATH"] = os.pathsep.join((str(REPO / "src"), str(REPO)))  # this checkout's clawprobe, not the venv's
    argv = [sys.executable, "-m", "clawprobe", *args]
    if peak is None:
        p = subprocess.run(argv, env=full, cwd=str(REPO), capture_output=True, timeout=timeout, preexec_fn=preexec)
        return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        kib = Path(tmp) / "peak-kib"
        proc = subprocess.Popen([sys.executable, "-c", _OWN_PEAK, str(kib), *argv], env=full, cwd=str(REPO),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and clawprobe under it (its own session)
            proc.communicate()
            raise
        peak.append(int(kib.read_text()) * 1024)
        return proc.returncode, out.decode("utf-8"), err.decode("utf-8")


def drop_file_permission_override() -> None:
    """``preexec_fn``: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set, so a child run by
    root obeys file modes (``chmod 000`` really is unreadable) — the tests run as root."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def assert_clean_stderr(err: str) -> None:
    """No Python traceback reached the operator."""
    assert "Traceback (most recent call last)" not in err, err


def fake_program(path: Path, body: str) -> Path:
    """Write an executable ``#!/bin/sh`` script at ``path``. ``body`` runs after a line that records the
    script's own PID in ``<path>.pids``; use ``$PIDS`` to record more (``sleep 600 & echo $! >> "$PIDS"``)."""
    pids = f"{path}.pids"
    path.write_text(f'#!/bin/sh\nPIDS="{pids}"\necho $$ >> "$PIDS"\n{body}\n')
    path.chmod(0o755)
    return path


HANG = 'sleep 600 & echo $! >> "$PIDS"\nsetsid sleep 600 & echo $! >> "$PIDS"\nsleep 600\n'
"""A body that never returns: a child in the group, one in its own session, and the script itself."""


def recorded_pids(script: Path) -> list[int]:
    """PIDs the fake program (and its children) recorded so far."""
    p = Path(f"{script}.pids")
    return [int(x) for x in p.read_text().split()] if p.exists() else []


def alive(pids: Iterable[int]) -> list[int]:
    """The PIDs that still run (zombies waiting for a reaper count as gone)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            continue
    return out


def wait_gone(pids: Iterable[int], timeout: float = 3.0) -> list[int]:
    """Survivors after waiting up to ``timeout`` s (SIGKILL is asynchronous)."""
    pids = list(pids)
    end = time.monotonic() + timeout
    while (left := alive(pids)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def indexed_qmd_home(parent: Path, testbed: Testbed, *, notes: int = 2, config: dict | None = None,
                     name: str = "qmd", agent_id: str = "main") -> OpenClawHome:
    """A home configured for QMD (``searchMode: search``, ``command: qmd``) with MEMORY.md and ``notes`` files
    under memory/, indexed by the real qmd into the agent's managed collections (no openclaw call). An
    ``agent_id`` other than ``main`` is the config's one (default) agent."""
    home = OpenClawHome.create(parent, prefix=f"{name}-", agent_id=agent_id)
    home.write_config(config or qmd_config("qmd", "search"))
    if agent_id != "main":
        home.update_config({"agents": {"list": [{"id": agent_id, "default": True}]}})
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    for i in range(notes):
        home.write_memory(f"note-{i}.md", f"# Note {i}\n\nbody {i}\n")
    root, mem = managed_collection_names(home.agent_id)
    for args in (("collection", "add", str(home.workspace), "--name", root, "--mask", "MEMORY.md"),
                 ("collection", "add", str(home.workspace / "memory"), "--name", mem, "--mask", "**/*.md")):
        res = run_qmd(home, None, *args, testbed=testbed)
        assert res.rc == 0, res.stderr
    return home


def check_env(home: OpenClawHome, testbed: Testbed, data_dir: Path, *, openclaw: str | os.PathLike[str] | None = None,
              extra: Mapping[str, str] | None = None) -> dict:
    """The environment of an operator's shell on that host: qmd on PATH, the home's state dir, clawprobe's
    own data dir in the test, and the OpenClaw CLI pinned (default: the real 2026.7.35)."""
    env = home.env([testbed.bin_dir], {"CLAWPROBE_DATA_DIR": str(data_dir),
                                       "CLAWPROBE_OPENCLAW": str(openclaw or testbed.openclaw("2026.7.35"))})
    env.update(extra or {})
    return env


def snapshot(*roots: Path, skip: Iterable[str] = ()) -> dict[str, tuple]:
    """``{root-name/rel: (kind, sha256 or target, size, mtime_ns)}`` for every entry under ``roots``
    (directories and symlinks included, symlinks not followed). ``skip``: relative paths left out."""
    skip = set(skip)
    out: dict[str, tuple] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                rel = f"{root.name}/{p.relative_to(root)}"
                if rel in skip:
                    continue
                st = p.lstat()
                if stat.S_ISLNK(st.st_mode):
                    out[rel] = ("link", os.readlink(p), 0, 0)
                elif stat.S_ISDIR(st.st_mode):
                    out[rel] = ("dir", "", 0, 0)
                elif stat.S_ISREG(st.st_mode):
                    out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns)
                else:
                    out[rel] = ("other", "", 0, st.st_mtime_ns)
    return out


def changed(before: Mapping[str, tuple], after: Mapping[str, tuple]) -> set[str]:
    """Entries created, removed or different (content, size, mtime) between two snapshots."""
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


def tree_environ(pid: int) -> dict[int, dict[str, str]]:
    """``{pid: environ}`` of ``pid`` and its descendants. The root must be readable (psutil raises if not);
    a descendant that exits between the listing and the read — gone, or a zombie whose environment the
    kernel already freed (psutil's ZombieProcess, a NoSuchProcess) — is skipped: it has no environment."""
    root = psutil.Process(pid)
    out = {pid: root.environ()}
    for p in root.children(recursive=True):
        try:
            out[p.pid] = p.environ()
        except psutil.NoSuchProcess:  # ZombieProcess included
            continue
    return out


def svg_text(svg: str) -> str:
    """The visible text of a Textual SVG screenshot (tags dropped, entities decoded)."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


class EveryOutput:
    """What the secrets tests scan: every output of the real ``clawprobe`` commands they run, by name.

    :meth:`cli` runs one command line (:func:`run_clawprobe` with ``env``) and keeps its stdout and stderr;
    :meth:`replays` runs every reader of a saved ``check --json`` document (``replay`` text and ``--json``,
    ``walk`` text and ``--json``); :meth:`dashboard` waits for the live dashboard's ``openclaw`` CLI lane and
    keeps its screenshot's text; :meth:`files` keeps every file under a directory; :meth:`leaks` lists what
    a test's ``leaks(name, text)`` finds in all of them.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.texts: dict[str, str] = {}

    def cli(self, name: str, *args: str, expect: Iterable[int] = (0, 1, 2, 3)) -> str:
        """Run ``clawprobe ARGS``; its exit code is one of ``expect`` and no traceback reached stderr."""
        rc, out, err = run_clawprobe(list(args), self.env, timeout=180)
        assert rc in tuple(expect), (name, rc, err)
        assert_clean_stderr(err)
        self.texts[f"{name} stdout"], self.texts[f"{name} stderr"] = out, err
        return out

    def replays(self, saved: Path) -> None:
        """Every command that reads the saved receipt document ``saved``."""
        self.cli("replay", "replay", str(saved))
        self.cli("replay --json", "replay", "--json", str(saved))
        self.cli("walk", "--replay", str(saved), "walk")
        self.cli("walk --json", "--replay", str(saved), "walk", "--json")

    async def dashboard(self, app, pilot, name: str = "dashboard screenshot", timeout: float = 120.0) -> str:
        """Wait until the shown agent's slow lane has finished, then keep (and return) the screen's text."""
        end = time.monotonic() + timeout
        while not (app.report and app.report.current and app.report.current.slow_at):
            assert time.monotonic() < end, "the slow lane never finished"
            await pilot.pause(0.1)
        self.texts[name] = svg_text(app.export_screenshot())
        return self.texts[name]

    def files(self, root: Path, label: str | None = None, extra: Iterable[Path] = ()) -> list[Path]:
        """Keep every file under ``root`` (and ``extra``), named ``label`` + its path relative to ``root``."""
        found = [p for p in root.rglob("*") if p.is_file()] + list(extra)
        for p in found:
            rel = p.relative_to(root) if p.is_relative_to(root) else p
            self.texts[f"{label} {rel}" if label else str(rel)] = p.read_bytes().decode("utf-8", "replace")
        return found

    def leaks(self, leaks) -> list[str]:
        """Every hit of ``leaks(name, text)`` over every kept output."""
        return [hit for name, text in self.texts.items() for hit in leaks(name, text)]


def planted_and_indexed(home: OpenClawHome, testbed: Testbed, data: Path, agent: str = "main",
                        version: str = OC_LATEST) -> None:
    """A canary planted by clawprobe (its record in ``data``) for ``agent``, then one real ``openclaw memory index``
    of ``version`` (asserted to succeed), with the test bed's qmd on PATH: the healthy builtin or QMD state a fault
    is then made in."""
    from clawprobe.core import canary_write

    canary_write.plant(home.workspace, agent, root=data)
    made = run_openclaw(home, version, "memory", "index", "--agent", agent, path_dirs=[testbed.bin_dir], timeout=240,
                        testbed=testbed)
    assert made.rc == 0, made.stderr


def built_per_case(build: Callable[[Any], Any], cases: Iterable[Hashable]) -> dict:
    """``{case: build(case)}``, two real states built at a time (the 2-core CI: each is mostly OpenClaw's CPU)."""
    with ThreadPoolExecutor(2) as pool:
        futures = {c: pool.submit(build, c) for c in cases}
        return {c: f.result() for c, f in futures.items()}
