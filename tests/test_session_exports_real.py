"""Session memory on the QMD backend (OpenClaw 2026.7.35, ``memory.qmd.sessions.enabled``): QMD indexes OpenClaw's
Markdown exports of the transcripts, never the ``*.jsonl`` themselves. A transcript written after the last update
has no export, so nothing in it is found — and the collection scan (exports vs index) still matched, so clawprobe
said ``healthy``, ``4/4 indexed``, long after the lease (breaker round 8, n04). Now each transcript without a newer
export is an unreflected change dated by its mtime: ``stale_index`` past the lease, repaired by the managed update
(``openclaw memory index`` exports it — run here — and the check is fresh again). Real: two index runs, two
``check --no-openclaw``."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta

from clawprobe.core.probes.session_exports import unexported
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

SESSION_SEARCH = {"provider": "none", "experimental": {"sessionMemory": True}, "sources": ["memory", "sessions"]}


def _transcript(path, sid: str, text: str | None) -> None:
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-12-02T10:00:00.000Z", "cwd": "/"}]
    if text is not None:
        lines += [{"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-12-02T10:00:01.000Z",
                   "message": {"role": "user", "content": [{"type": "text", "text": text}],
                               "timestamp": 1796205601000}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _check(home, testbed, data) -> dict:
    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], check_env(home, testbed, data), timeout=200)
    assert "Traceback" not in err, err
    return json.loads(out)["receipts"][0]


def test_a_transcript_not_yet_exported_is_stale_past_the_lease_and_the_managed_update_exports_it(
        oc_home_factory, testbed, tmp_path):
    cfg = qmd_config(qmd={"sessions": {"enabled": True}}, provider=None,
                     agents={"defaults": {"memorySearch": SESSION_SEARCH}})
    home = oc_home_factory(cfg, name="sessions-export")
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    sessions = home.state_dir / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    first = "11111111-1111-4111-8111-111111111111"
    _transcript(sessions / f"{first}.jsonl", first, "The gate code is ORCHID-SESSION-11.")
    index = ("memory", "index", "--agent", "main")
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    assert (home.state_dir / "agents" / "main" / "qmd" / "sessions" / f"{first}.md").is_file()

    later, empty = "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"
    _transcript(sessions / f"{later}.jsonl", later, "The dog is called WALRUS-SESSION-33.")
    _transcript(sessions / f"{empty}.jsonl", empty, None)  # a session with no message yet: nothing to export
    hour_ago = time.time() - 3600
    for sid in (later, empty):
        os.utime(sessions / f"{sid}.jsonl", (hour_ago, hour_ago))
    data = tmp_path / "data"

    got = _check(home, testbed, data)
    fresh = got["receipt"]["freshness"]
    assert (got["verdict"], got["reason"]) == ("stale_index", "dirty"), got["diagnosis"]["evidence"]
    assert fresh["unindexed_files"] == [f"sessions/{later}.jsonl"]
    assert got["next_command"].endswith("memory index --agent main")

    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    got = _check(home, testbed, data)
    assert got["receipt"]["freshness"]["stale_reason"] is None and got["verdict"] != "stale_index", got["reason"]


def test_what_counts_as_unexported(tmp_path):
    sessions, exports = tmp_path / "sessions", tmp_path / "exports"
    sessions.mkdir()
    exports.mkdir()
    now = datetime.now(UTC)
    for sid in ("fresh", "behind", "missing", "expired"):
        _transcript(sessions / f"{sid}.jsonl", sid, f"text of {sid}")
    (exports / "fresh.md").write_text("# fresh")
    (exports / "behind.md").write_text("# behind")
    t = time.time()
    os.utime(exports / "behind.md", (t - 60, t - 60))
    os.utime(sessions / "fresh.jsonl", (t - 120, t - 120))
    os.utime(sessions / "expired.jsonl", (t - 40 * 86400, t - 40 * 86400))
    (sessions / "link.jsonl").symlink_to(sessions / "missing.jsonl")
    got = {c.rel: c.evidence.split(" to ")[0] for c in unexported(str(sessions), str(exports), now, 30)}
    assert got == {"sessions/behind.jsonl": "session transcript written after its export",
                   "sessions/missing.jsonl": "session transcript not exported"}
    assert "sessions/expired.jsonl" in {c.rel for c in unexported(str(sessions), str(exports), now)}
    assert all(c.at <= now + timedelta(seconds=1) for c in unexported(str(sessions), str(exports), now))


def test_an_export_dir_that_cannot_be_made_is_a_fallback_not_an_index_to_build(oc_home_factory, testbed, tmp_path):
    """``memory.qmd.sessions.exportDir`` under a regular file: every OpenClaw process with this config fails to open
    the QMD manager (ENOTDIR on mkdir) and answers from builtin — `openclaw memory index` still exits 0 and builds no
    QMD index, and a gateway's memory_search reports ``backend: builtin`` (measured, breaker round 24). clawprobe said
    ``unverified · never_indexed`` and handed out that same `memory index`, a loop. Now the CLI's logged fallback counts
    as the gateway's (the error is the path's, not the process's): ``fallback_active · manager_failed`` naming the
    path; with the path fixed, one managed index builds the QMD index and the fallback is gone. The text output
    showed that evidence line twice (the fallback's detail, then the same log line cited): now once, with its log."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the export dir's parent should be\n")
    cfg = qmd_config(qmd={"sessions": {"enabled": True, "exportDir": str(blocker / "exports")}}, provider=None,
                     agents={"defaults": {"memorySearch": SESSION_SEARCH}, "list": [{"id": "ops-bot", "default": True}]})
    home = oc_home_factory(cfg, name="sessions-blocked")
    home.agent_id = "ops-bot"
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    sessions = home.state_dir / "agents" / "ops-bot" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    sid = "55555555-5555-4555-8555-555555555555"
    _transcript(sessions / f"{sid}.jsonl", sid, "The locker is number PELICAN-SESSION-55.")
    index = ("memory", "index", "--agent", "ops-bot")
    made = run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed)
    assert made.rc == 0 and "ENOTDIR" in made.stderr and not home.qmd_index("ops-bot").exists(), made.stderr
    data = tmp_path / "data"

    got = _check(home, testbed, data)
    assert (got["verdict"], got["reason"]) == ("fallback_active", "manager_failed"), got["diagnosis"]["evidence"]
    text = " | ".join(got["diagnosis"]["evidence"])
    assert str(blocker / "exports") in text and "ENOTDIR" in text, text
    assert "memory index" not in (got["next_command"] or ""), got["next_command"]
    rc, out, _ = run_clawprobe(["check", "--no-openclaw"], check_env(home, testbed, data), timeout=200)
    said = [ln for ln in out.splitlines() if "ENOTDIR: not a directory, mkdir" in ln]
    assert rc == 2 and len(said) == 1 and "openclaw.jsonl" in said[0], out  # once, with the log it came from

    blocker.unlink()  # the cause fixed: the export dir can be made
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    assert home.qmd_index("ops-bot").exists()
    got = _check(home, testbed, data)
    assert got["verdict"] != "fallback_active", got["diagnosis"]["evidence"]


def test_only_a_path_shaped_manager_failure_logged_after_the_config_binds_the_gateway(tmp_path):
    """A permission error may be the CLI user's alone (the gateway can run as another user), and a line older than
    the config's last write was made with another config: neither is charged to the gateway."""
    from clawprobe.core.interpret.merge import config_bound_fallback
    from clawprobe.core.probes.openclaw_log import Event

    at = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    ev = (at - timedelta(minutes=1)).timestamp()  # the config's mtime

    def line(err: str, when: datetime = at) -> Event:
        return Event(at=when, tag="manager_failed", detail=f"qmd memory unavailable: {err}")

    assert config_bound_fallback(line("ENOTDIR: not a directory, mkdir '/srv/oc/exports'"), ev)
    assert config_bound_fallback(line("EROFS: read-only file system, mkdir '/mnt/ro/qmd/sessions'"), ev)
    assert config_bound_fallback(line("EACCES: permission denied, mkdir '/srv/oc/exports'"), ev) is None
    assert config_bound_fallback(line("ENOTDIR: not a directory, mkdir '/x'", at - timedelta(hours=1)), ev) is None
    assert config_bound_fallback(line("qmd exited 1"), ev) is None
