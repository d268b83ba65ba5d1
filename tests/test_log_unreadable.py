"""Review: a log this user cannot read is ``log_blind`` (:func:`clawprobe.core.probes.openclaw_log.read_log` says so
in ``LogFacts.blind``). A dated log rotated or pruned between listing and opening it (gone, not denied) read "cannot
be read by this user (No such file or directory)", and a healthy QMD agent ``unverified`` for that run. Each log file
was opened twice per probe (an ``unreadable`` check, then the read); the read now says the denial from its one open.
The whole check with a log owned by another user is measured in tests/test_log_location_real.py."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from clawprobe.core.probes import openclaw_log as oclog

_RECORD = json.dumps({"0": '{"subsystem":"memory"}', "1": "qmd binary unavailable (qmd); falling back to builtin: x",
                      "_meta": {"logLevelName": "WARN"}, "time": "2026-12-07T10:00:00.000Z"})


def test_a_log_gone_since_it_was_listed_is_not_a_denied_log(tmp_path):
    kept = tmp_path / "openclaw-2026-12-07.log"
    kept.write_text("{}\n")
    assert oclog.read_log([str(tmp_path / "openclaw-2026-12-06.log"), str(kept)], "main").blind is None
    assert oclog.unlistable(str(tmp_path / "gone")) is None


def test_a_log_that_is_no_regular_file_is_named_not_read_as_empty(tmp_path):
    fifo = tmp_path / "gw.log"
    os.mkfifo(fifo)
    facts = oclog.read_log([str(fifo)], "ops-bot")
    assert facts.blind == f"the log {fifo} cannot be read by this user (not a regular file)"


_CHILD = """
import sys
from clawprobe.core.probes import openclaw_log as oclog
paths = sys.argv[1:]
opens = []
sys.addaudithook(lambda ev, args: opens.append(str(args[0])) if ev == "open" and str(args[0]) in paths else None)
facts = oclog.read_log(paths, "kb-7")
print(repr((facts.blind, len(facts.fallbacks), sorted(opens))))
"""


def test_a_denied_log_is_said_by_its_one_read(tmp_path):
    """A ``0600`` log owned by another user (``nobody``), read without the capabilities that let root read it anyway
    (``setpriv``: what any other user has), beside a readable one: the denied file is named (``log_blind``), the
    readable one's fallback still read — each file opened exactly once."""
    tmp_path.chmod(0o755)
    denied, kept = tmp_path / "openclaw-2026-12-06.log", tmp_path / "openclaw-2026-12-07.log"
    for f in (denied, kept):
        f.write_text(_RECORD + "\n")
        f.chmod(0o600)
    kept.chmod(0o644)
    unprivileged = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if unprivileged:
        os.chown(denied, 65534, 65534)
    else:
        denied.chmod(0)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    got = subprocess.run([*unprivileged, sys.executable, "-c", _CHILD, str(denied), str(kept)], capture_output=True,
                         text=True, timeout=60, env=env)
    assert got.returncode == 0, got.stderr
    blind, fallbacks, opens = ast.literal_eval(got.stdout)
    assert blind == f"the log {denied} cannot be read by this user (Permission denied)"
    assert fallbacks == 1 and opens == sorted([str(denied), str(kept)])
