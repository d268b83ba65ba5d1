"""OpenClaw's state dir on a file system mounted read-only (what ``errors=remount-ro`` does after an I/O error):
every 2026.9.6 memory command exits 1 with "Invalid config at …: - <root>: read failed: Error: unable to open
database file" — its config loader opens its state database — and clawprobe said ``config_invalid`` · ``schema``
→ "fix the rejected key" (breaker round 5; a full disk read the same). Now ``memory_unavailable`` ·
``state_unwritable``, measured by ``statvfs``, the repair shows the mount and the space. The read-only bind
mount lives in a private user + mount namespace (``unshare -rm``): nothing is mounted on the host. Real
2026.9.6: one index run, one check (its CLI calls fail fast)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.hardening_helpers import REPO
from tests.rw_support import indexed
from tests.testbed import OC_LATEST, builtin_config


def test_a_read_only_state_dir_is_said_not_a_rejected_key(oc_home_factory, testbed):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="state-ro")
    indexed(home, testbed, OC_LATEST)
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)), "PYTHONPATH": str(REPO)})
    st = str(home.state_dir)
    script = (f'mount --bind "{st}" "{st}" && mount -o remount,bind,ro "{st}" && '
              f'exec "{sys.executable}" -m clawprobe check --json')
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, cwd=str(REPO), capture_output=True,
                       text=True, timeout=240)
    doc = json.loads(p.stdout)
    got = doc["receipts"][0]
    assert (got["verdict"], got["reason"]) == ("memory_unavailable", "state_unwritable"), (got, p.stderr[-600:])
    assert p.returncode == 2 and "read-only" in got["receipt"]["openclaw"]["state_fault"]
    assert got["next_command"].startswith("findmnt -T ") and "config" not in got["next_action"].lower()
    assert "Traceback" not in p.stderr


def test_a_full_state_dir_and_the_clis_read_failure_are_the_state_not_the_config():
    """The other measured ways to the same fault: less than a MiB free on the state dir's file system, and the CLI's
    "read failed" on its own state database when ``statvfs`` saw nothing (another user's read-only bind)."""
    from datetime import UTC, datetime

    from clawprobe.core.diagnosis import diagnose
    from clawprobe.core.evidence import HostRecord, SlowEvidence
    from clawprobe.core.interpret import STATE_MIN_FREE_BYTES, state_fault
    from clawprobe.core.interpret.merge import merge_slow
    from clawprobe.core.probes import openclaw_cli as oc
    from clawprobe.core.receipt import Receipt

    assert "full (4096 bytes free)" in (state_fault(HostRecord(state_free_bytes=4096)) or "")
    assert state_fault(HostRecord(state_free_bytes=STATE_MIN_FREE_BYTES, state_read_only=False)) is None
    r = Receipt(checked_at=datetime(2026, 12, 2, tzinfo=UTC))
    said = ("Invalid config at /srv/oc/openclaw.json:\n- <root>: read failed: Error: unable to open database file")
    status = oc.StatusResult(rc=1, stderr=oc.StderrFacts(invalid_config=said))
    merge_slow(r, SlowEvidence(taken_at=r.checked_at, agent_id="main", status=status), "search")
    d = diagnose(r, r.checked_at)
    assert r.config.error is None and (d.verdict.value, d.reason) == ("memory_unavailable", "state_unwritable")
    assert "unable to open database file" in d.evidence[0]


def test_a_read_only_qmd_index_dir_is_the_state_not_an_update_to_wait_for(tmp_path, testbed):
    """Breaker round 7 (w27): the agent's ``xdg-cache/qmd`` bind-mounted read-only (a backup snapshot over it),
    the state dir writable: every qmd update fails SQLITE_READONLY, and clawprobe said "awaiting update", then
    ``stale_index`` → ``openclaw memory index`` (the command that fails). Now ``state_unwritable`` naming that
    mount (``statvfs`` of the index dir), repaired at the mount. The real qmd index; no OpenClaw CLI run."""
    from tests.hardening_helpers import indexed_qmd_home
    from tests.testbed import OC_QMD

    home = indexed_qmd_home(tmp_path, testbed, name="index-ro")
    index_dir = home.state_dir / "agents" / "main" / "qmd" / "xdg-cache" / "qmd"
    assert (index_dir / "index.sqlite").is_file()
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)), "PYTHONPATH": str(REPO),
                                       "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    d = str(index_dir)
    script = (f'mount --bind "{d}" "{d}" && mount -o remount,bind,ro "{d}" && '
              f'exec "{sys.executable}" -m clawprobe check --json --no-openclaw')
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, cwd=str(REPO), capture_output=True,
                       text=True, timeout=240)
    got = json.loads(p.stdout)["receipts"][0]
    assert (got["verdict"], got["reason"]) == ("memory_unavailable", "state_unwritable"), (got, p.stderr[-600:])
    assert d in got["receipt"]["openclaw"]["state_fault"] and "read-only" in got["receipt"]["openclaw"]["state_fault"]
    assert got["next_command"] == f"findmnt -T {d}" and "memory index" not in got["next_action"]


def _on_a_full_volume(d: str, then: str) -> list[str]:
    """argv: in a private user + mount namespace, ``d``'s files copied onto a small tmpfs that is then filled to
    the last block and bind-mounted over ``d`` (a cache volume of its own that ran full), then ``then``."""
    return ["unshare", "-rm", "sh", "-c",
            f'v=$(mktemp -d) && mount -t tmpfs -o size=8m tmpfs "$v" && cp -a "{d}/." "$v/" && '
            f'{{ dd if=/dev/zero of="$v/filler" bs=4k 2>/dev/null; true; }} && mount --bind "$v" "{d}" && {then}']


def test_a_full_volume_under_the_agents_store_dir_is_the_state_not_a_miss(oc_home_factory, testbed):
    """Breaker round 8, n18: ``agents/<id>/agent`` (the builtin store) on a volume of its own that is full, the
    state dir's with room: every sync fails ENOSPC and clawprobe said ``retrieval_failed`` · ``miss`` (re-index,
    which cannot write). Now ``state_unwritable`` naming that volume, repaired there. Real 2026.9.6 check."""
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="store-full")
    indexed(home, testbed, OC_LATEST)
    home.write_memory("later.md", "# Later\n\nwritten after the volume filled\n")
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)), "PYTHONPATH": str(REPO)})
    d = str(home.state_dir / "agents" / "main" / "agent")
    p = subprocess.run(_on_a_full_volume(d, f'exec "{sys.executable}" -m clawprobe check --json'), env=env,
                       cwd=str(REPO), capture_output=True, text=True, timeout=240)
    got = json.loads(p.stdout)["receipts"][0]
    assert (got["verdict"], got["reason"]) == ("memory_unavailable", "state_unwritable"), (got, p.stderr[-600:])
    fault = got["receipt"]["openclaw"]["state_fault"]
    assert fault.startswith("the volume holding the agent's store dir") and d in fault and "bytes free" in fault
    assert got["next_command"] == f"df -h {d}" and "index" not in got["next_command"]


def test_a_full_cache_volume_under_the_qmd_index_dir_is_the_state(tmp_path, testbed):
    """Breaker round 8, n06: the agent's ``xdg-cache/qmd`` on a small cache volume that is full: each qmd update
    fails ENOSPC while search serves the old index; clawprobe said ``unverified`` · ``unrecognized_signal``.
    Now ``state_unwritable`` → ``df -h`` of that dir. The real qmd index; no OpenClaw CLI run."""
    from tests.hardening_helpers import indexed_qmd_home
    from tests.testbed import OC_QMD

    home = indexed_qmd_home(tmp_path, testbed, name="index-full")
    d = str(home.state_dir / "agents" / "main" / "qmd" / "xdg-cache" / "qmd")
    env = home.env([testbed.bin_dir], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_QMD)), "PYTHONPATH": str(REPO),
                                       "CLAWPROBE_DATA_DIR": str(tmp_path / "data")})
    p = subprocess.run(_on_a_full_volume(d, f'exec "{sys.executable}" -m clawprobe check --json --no-openclaw'),
                       env=env, cwd=str(REPO), capture_output=True, text=True, timeout=240)
    got = json.loads(p.stdout)["receipts"][0]
    assert (got["verdict"], got["reason"]) == ("memory_unavailable", "state_unwritable"), (got, p.stderr[-600:])
    assert got["receipt"]["openclaw"]["state_fault"].startswith("the volume holding the agent's QMD index dir")
    assert got["next_command"] == f"df -h {d}"
