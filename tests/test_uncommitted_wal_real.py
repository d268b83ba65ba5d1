"""A writer killed mid-transaction on the builtin store (breaker round 8, n19): its pages spilled into the ``-wal``,
but no frame commits, so SQLite's recovery applies nothing when OpenClaw opens the store. clawprobe called it
"a crashed writer's -wal, which OpenClaw would checkpoint", ran no CLI and said ``unverified · wal_pending``. Now
the frame headers are read: nothing committed → the check runs as on any store and proves the canary, and the
store file itself is left byte-identical. Real 2026.9.6: one index run, one check."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys

from tests.hardening_helpers import check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, builtin_config

KILLED_MID_TRANSACTION = """
import os, signal, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA cache_size = 5")
con.execute("BEGIN")
con.execute("CREATE TABLE zz_never_committed (x)")
for _ in range(3000):
    con.execute("INSERT INTO zz_never_committed VALUES (randomblob(500))")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_wal_with_nothing_committed_is_no_pending_checkpoint(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="wal-uncommitted")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    planted_and_indexed(home, testbed, data)
    store = home.state_dir / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    p = subprocess.run([sys.executable, "-c", KILLED_MID_TRANSACTION, str(store)], capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert os.path.getsize(f"{store}-wal") > 100_000
    before = hashlib.sha256(store.read_bytes()).hexdigest()

    env = check_env(home, testbed, data, openclaw=testbed.openclaw(OC_LATEST))
    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    (entry,) = json.loads(out)["receipts"]
    assert (rc, entry["verdict"]) == (0, "healthy"), (entry["reason"], entry["diagnosis"]["evidence"], err[-400:])
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
