"""Receipts refuse impossible values (``clawprobe.core.receipt``, ``clawprobe.core.lease``): through the real ``clawprobe replay``
every refused value exits 3 with one line naming the file and the field; legitimate edge values still
replay to their verdict. The seed is the spec's ``query`` case with 14 of 41 documents pending
(``vector_not_ready``, exit 1): a tester's ``pending = -14`` in it was judged healthy, exit 0."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from clawprobe.cli.main import main as cli_main
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.lease import MAX_DURATION_S, Lease
from clawprobe.core.receipt import CLOCK_SKEW_S, Freshness, ModelDownload, Receipt, Vectors
from clawprobe.core.verdicts import Verdict
from clawprobe.core.words import verdict_words
from tests.test_spec_replay import DATA

SEED = json.loads((DATA / "spec-5-query-14-pending.json").read_text(encoding="utf-8"))
CHECKED = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)  # the seed's checked_at
DOWNLOAD = {"role": "embed", "name": "embeddinggemma", "state": "downloading", "done_bytes": 10, "total_bytes": 20}


def _doc(edits: dict[str, object] | None = None) -> dict:
    """The seed with ``{"dotted.path": value}`` edits applied (``backend.evidence.0.at``: list index 0)."""
    doc = copy.deepcopy(SEED)
    for path, value in (edits or {}).items():
        *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
        cur = doc
        for key in parents:
            cur = cur[key]
        cur[last] = value
    return doc


def _replay(tmp_path, doc: dict) -> tuple[int, str, str]:
    """``clawprobe replay FILE`` on ``doc`` written as JSON (NaN/Infinity as JSON's non-standard literals)."""
    f = tmp_path / "receipt.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["replay", str(f)])
    return code, out.getvalue(), err.getvalue()


GE0, INT, NUM, FINITE = ("Input should be greater than or equal to 0", "Input should be a valid integer",
                         "Input should be a valid number", "Input should be a finite number")
ISO = "Value error, expected an ISO 8601 date-time string"
MAX30D = "Input should be less than or equal to 2592000"
AFTER = "s after checked_at"
REFUSED = [  # (id, edits, the message that must appear in the one stderr line)
    # counts: non-negative JSON integers, never bools, floats or strings, within SQLite's INTEGER range
    ("pending negative (the tester's case)", {"vectors.pending": -14}, f"vectors.pending: {GE0}"),
    ("pending a bool", {"vectors.pending": True}, f"vectors.pending: {INT}"),
    ("pending a float", {"vectors.pending": 14.0}, f"vectors.pending: {INT}"),
    ("pending a string", {"vectors.pending": "14"}, f"vectors.pending: {INT}"),
    ("documents negative", {"vectors.documents": -1}, f"vectors.documents: {GE0}"),
    ("vector rows beyond int64", {"vectors.vector_rows": 2**63},
     "vectors.vector_rows: Input should be less than or equal to 9223372036854775807"),
    ("index bytes a bool", {"vectors.index_bytes": False}, f"vectors.index_bytes: {INT}"),
    ("ghost count negative", {"freshness.ghost_count": -2}, f"freshness.ghost_count: {GE0}"),
    ("download bytes negative", {"vectors.downloads": [{**DOWNLOAD, "done_bytes": -5}]},
     f"vectors.downloads.0.done_bytes: {GE0}"),
    ("config error column negative", {"config.error": {"kind": "parse", "message": "x", "column": -1}},
     f"config.error.column: {GE0}"),
    # process ids and exit codes
    ("gateway pid 0", {"gateway.pid": 0}, "gateway.pid: Input should be greater than or equal to 1"),
    ("embed pid a bool", {"vectors.embed_running_pid": True}, f"vectors.embed_running_pid: {INT}"),
    ("exit code 300", {"qmd.store_exit_code": 300}, "qmd.store_exit_code: Input should be less than or equal to 255"),
    ("schema version true", {"schema_version": True}, f"schema_version: {INT}"),
    # durations: finite JSON numbers, 0 … 30 days
    ("lease interval 1e308", {"lease.interval_s": 1e308}, f"lease.interval_s: {MAX30D}"),
    ("lease interval 30 days + 1 s", {"lease.interval_s": MAX_DURATION_S + 1}, f"lease.interval_s: {MAX30D}"),
    ("lease interval infinite", {"lease.interval_s": float("inf")}, f"lease.interval_s: {FINITE}"),
    ("lease margin NaN", {"lease.margin_s": float("nan")}, f"lease.margin_s: {FINITE}"),
    ("lease duration negative", {"lease.update_duration_s": -1}, f"lease.update_duration_s: {GE0}"),
    ("lease interval a bool", {"lease.interval_s": True}, f"lease.interval_s: {NUM}"),
    ("lease interval a string", {"lease.interval_s": "300"}, f"lease.interval_s: {NUM}"),
    ("lease total NaN", {"lease.seconds": float("nan")}, "lease: Value error, lease seconds nan is not the sum"),
    ("lease total a bool", {"lease.seconds": True}, "lease: Value error, lease seconds True is not the sum"),
    ("lease total 10**400", {"lease.seconds": 10**400}, "lease: Value error, lease seconds 1000000000"),
    ("canary latency NaN", {"canary.latency_s": float("nan")}, f"canary.latency_s: {FINITE}"),
    ("canary deadline negative", {"canary.deadline_s": -4.0}, f"canary.deadline_s: {GE0}"),
    ("search timeout 1e12 s", {"config.search_timeout_s": 1e12}, f"config.search_timeout_s: {MAX30D}"),
    ("download ETA infinite", {"vectors.downloads": [{**DOWNLOAD, "eta_s": float("inf")}]},
     f"vectors.downloads.0.eta_s: {FINITE}"),
    ("download rate negative", {"vectors.downloads": [{**DOWNLOAD, "rate_bps": -1.0}]},
     f"vectors.downloads.0.rate_bps: {GE0}"),
    # times: ISO 8601 date-time strings with a UTC form
    ("checked_at an integer", {"checked_at": 12345}, f"checked_at: {ISO}"),
    ("checked_at a numeric string", {"checked_at": "12345"}, f"checked_at: {ISO}"),
    ("checked_at a bare date", {"checked_at": "2026-11-30"}, f"checked_at: {ISO}"),
    ("checked_at a bool", {"checked_at": True}, f"checked_at: {ISO}"),
    ("a time before year 1 in UTC", {"canary.planted_at": "0001-01-01T00:00:00+14:00"},
     "canary.planted_at: Value error, 0001-01-01T00:00:00+14:00 is outside the representable range"),
    # across fields
    ("pending > documents", {"vectors.pending": 42}, "vectors: Value error, pending 42 is more than documents 41"),
    ("partial > documents", {"vectors.partial_documents": 50},
     "vectors: Value error, partial_documents 50 is more than documents 41"),
    ("count below its list", {"freshness.unindexed_files": ["memory/a.md", "memory/b.md"],
                              "freshness.unindexed_count": 1},
     "freshness: Value error, unindexed_count 1 is smaller than the 2 paths listed in unindexed_files"),
    ("proven current after the check", {"freshness.last_proven_current": "2026-11-30T03:00:06Z"},
     f"freshness: Value error, last_proven_current 2026-11-30T03:00:06+00:00 is 6 {AFTER}"),
    ("proven current in year 9999", {"freshness.last_proven_current": "9999-12-31T23:59:59Z"},
     "freshness: Value error, last_proven_current 9999-12-31T23:59:59+00:00 is"),
    ("canary retrieved after the check", {"canary.retrieved_at": "2026-11-30T04:00:00+00:00"},
     f"canary: Value error, retrieved_at 2026-11-30T04:00:00+00:00 is 3600 {AFTER}"),
    ("fallback seen after the check", {"backend.fallback_at": "2026-11-30T03:01:00Z"},
     f"backend: Value error, fallback_at 2026-11-30T03:01:00+00:00 is 60 {AFTER}"),
    ("backend evidence after the check", {"backend.evidence.0.at": "2026-11-30T03:10:00Z"},
     f"backend: Value error, evidence[0].at 2026-11-30T03:10:00+00:00 is 600 {AFTER}"),
    ("download growth after the check", {"vectors.downloads": [{**DOWNLOAD, "last_growth_at": "2026-12-01T03:00:00Z"}]},
     f"vectors: Value error, downloads[0].last_growth_at 2026-12-01T03:00:00+00:00 is 86400 {AFTER}"),
    ("evidence after a naive check time", {"checked_at": "2026-11-30T03:00:00",
                                           "vectors.last_embed_at": "2026-11-30T03:00:10Z"},
     f"vectors: Value error, last_embed_at 2026-11-30T03:00:10+00:00 is 10 {AFTER} 2026-11-30T03:00:00+00:00"),
]


@pytest.mark.parametrize("edits,message", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_each_impossible_value_makes_replay_exit_3_naming_the_field(tmp_path, edits, message):
    code, out, err = _replay(tmp_path, _doc(edits))
    assert code == 3 and out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"clawprobe: {tmp_path / 'receipt.json'}: entry 0 is not a valid receipt — ")
    assert message in first, first
    assert "Traceback" not in err


ACCEPTED = [  # (id, edits, verdict): legitimate edge values
    ("the seed as it is", {}, "vector_not_ready"),
    ("every document pending", {"vectors.pending": 41}, "vector_not_ready"),
    ("nothing pending", {"vectors.pending": 0, "vectors.vector_rows": 41}, "healthy"),
    ("integer durations", {"canary.latency_s": 3, "lease.margin_s": 0}, "vector_not_ready"),
    ("a lease part of exactly 30 days", {"lease.interval_s": MAX_DURATION_S}, "vector_not_ready"),
    ("a signal exit code", {"qmd.store_exit_code": -9}, "vector_not_ready"),
    ("evidence 5 s ahead (the clock-skew allowance)", {"freshness.last_proven_current": "2026-11-30T03:00:05Z"},
     "vector_not_ready"),
    ("a naive time, read as UTC", {"checked_at": "2026-11-30T03:00:00"}, "vector_not_ready"),
    ("an offset time, converted", {"checked_at": "2026-11-30T08:30:00+05:30"}, "vector_not_ready"),
    ("a space for the T", {"checked_at": "2026-11-30 03:00:00Z"}, "vector_not_ready"),
    ("a total above its capped list", {"freshness.unindexed_files": ["memory/a.md"], "freshness.unindexed_count": 250},
     "vector_not_ready"),
]


@pytest.mark.parametrize("edits,verdict", [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_legitimate_edge_values_still_replay_to_their_verdict(tmp_path, edits, verdict):
    code, out, err = _replay(tmp_path, _doc(edits))
    assert err == ""
    assert out.startswith(f"agent main: {verdict_words(Verdict(verdict))}")
    assert code == {"healthy": 0, "vector_not_ready": 1}[verdict]


def test_times_are_kept_in_utc():
    r = Receipt.model_validate(_doc({"checked_at": "2026-11-30T08:30:00+05:30",
                                     "freshness.last_proven_current": "2026-11-30T02:58:00"}))
    assert r.checked_at == CHECKED and r.checked_at.utcoffset() == timedelta(0)
    assert r.freshness.last_proven_current == CHECKED - timedelta(minutes=2)
    assert r.freshness.last_proven_current.tzinfo is not None
    assert json.loads(r.model_dump_json())["checked_at"] == "2026-11-30T03:00:00Z"


def test_parts_built_in_python_refuse_the_same_values():
    """Probes build receipt parts with keywords: the constraints hold there too, not only in replay files."""
    with pytest.raises(ValidationError, match="pending"):
        Vectors(pending=-1)
    with pytest.raises(ValidationError, match="pending 4 is more than documents 3"):
        Vectors(documents=3, pending=4)
    with pytest.raises(ValidationError, match="ghost_count 0 is smaller"):
        Freshness(ghost_files=["memory/x.md"], ghost_count=0)
    with pytest.raises(ValidationError, match="eta_s"):
        ModelDownload(role="embed", name="m", state="downloading", eta_s=float("nan"))
    with pytest.raises(ValidationError, match="interval_s"):
        Lease(interval_s=MAX_DURATION_S * 2)
    with pytest.raises(ValidationError, match="checked_at"):
        Receipt(checked_at=1_764_471_600)
    assert Vectors(documents=3, pending=3).pending == 3


def test_lease_never_has_more_than_its_whole_length_left():
    """Evidence inside the clock-skew allowance is age 0, not a lease extended by the skew."""
    ahead = CHECKED + timedelta(seconds=CLOCK_SKEW_S - 2)
    r = Receipt.model_validate(_doc({"freshness.last_proven_current": ahead.isoformat()}))
    d = diagnose(r)
    assert d.lease_seconds == 420 and d.lease_seconds_left == 420


def test_a_dumped_receipt_still_replays_unchanged():
    r = Receipt.model_validate(_doc({"vectors.downloads": [{**DOWNLOAD, "eta_s": 10, "rate_bps": 1.5,
                                                             "last_growth_at": "2026-11-30T02:59:00Z"}]}))
    again = Receipt.model_validate_json(r.model_dump_json())
    assert again == r and again.lease.seconds == 420 and again.vectors.downloads[0].eta_s == 10.0


def test_schema_states_the_constraints(capsys):
    assert cli_main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    defs = schema["$defs"]
    pending = defs["Vectors"]["properties"]["pending"]["anyOf"][0]
    assert pending == {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
    interval = defs["Lease"]["properties"]["interval_s"]
    assert (interval["type"], interval["minimum"], interval["maximum"]) == ("number", 0, MAX_DURATION_S)
    assert defs["Canary"]["properties"]["latency_s"]["anyOf"][0]["maximum"] == MAX_DURATION_S
    assert defs["GatewayFacts"]["properties"]["pid"]["anyOf"][0]["minimum"] == 1
    assert schema["properties"]["checked_at"] == {"type": "string", "format": "date-time", "title": "Checked At"}
    assert schema["properties"]["schema_version"]["const"] == 1


def test_a_configured_interval_past_thirty_days_still_gets_a_verdict():
    """Live path found while adding the bounds: ``memory.qmd.update.interval: "60d"`` made the Lease refuse
    to build (the probe failed). The settings cut every duration to 30 days and say so in the source."""
    from clawprobe.core.lease import MAX_DURATION_S
    from clawprobe.core.probes.config import lease_for, memory_settings

    s = memory_settings({"memory": {"backend": "qmd", "qmd": {"update": {"interval": "60d", "embedTimeoutMs": 10**13},
                                                                 "limits": {"timeoutMs": 10**13}}}}, "main")
    assert s.update_interval_s == MAX_DURATION_S and s.embed_timeout_s == MAX_DURATION_S == s.search_timeout_s
    assert "longer than a Node timer can wait" in s.interval_source
    assert lease_for(s).interval_s == MAX_DURATION_S
    short = memory_settings({"memory": {"backend": "qmd", "qmd": {"update": {"interval": "20d"}}}}, "main")
    assert short.update_interval_s == 20 * 86400 and "Node timer" not in short.interval_source


@pytest.mark.parametrize(("interval", "sync", "changed", "lease_s"), [
    ("30d", None, True, 420.0),                              # a change on disk, the watcher on: 5 m + 60 + 60
    ("30d", {"watch": True, "watchDebounceMs": 1500}, True, 420.0),
    ("30d", None, False, 30 * 86400 + 120.0),                # nothing changed on disk: the interval stands (RW18)
    ("30d", {"watch": False}, True, 30 * 86400 + 120.0),     # no watcher: only the interval indexes a change
    ("2m", None, True, 240.0),                               # a shorter interval is the lease as configured
])
def test_a_long_update_interval_is_no_licence_for_a_change_the_watcher_should_have_synced(interval, sync, changed,
                                                                                           lease_s):
    """Breaker round 6 (z19): ``memory.qmd.update.interval: "30d"`` and a note written after the index —
    ``healthy`` for 30 days, though OpenClaw's gateway syncs a change ``watchDebounceMs`` after it (2026.7.35
    ``qmd-manager`` ``ensureWatcher``) unless ``memorySearch.sync.watch`` is false. Only a change measured on
    disk is bounded so: an interval sync proven by the log with nothing changed keeps the configured lease."""
    from clawprobe.core.probes.config import lease_for, memory_settings

    tree: dict = {"memory": {"backend": "qmd", "qmd": {"update": {"interval": interval}}},
                  "agents": {"list": [{"id": "ops", **({"memorySearch": {"sync": sync}} if sync else {})}]}}
    lease = lease_for(memory_settings(tree, "ops"), changed_on_disk=changed)
    assert lease.seconds == lease_s
    assert ("a change on disk is not in the index" in lease.interval_source) is (lease_s == 420.0)


def test_a_builtin_agent_is_not_leased_by_a_leftover_qmd_update_interval():
    """The builtin engine syncs on its watcher and on search; ``memory.qmd.update.interval`` (left over from a
    QMD era, or beside ``backend: builtin``) is not its schedule: a 30-day value gave builtin notes a 30-day lease."""
    from clawprobe.core.bundle import read_bundle
    from clawprobe.core.interpret import interpret
    from tests.rw_support import BUNDLES

    ev = read_bundle(str(BUNDLES / "RW30.json")).agents[0]
    tree = copy.deepcopy(ev.config.tree)
    tree.setdefault("memory", {})["qmd"] = {"update": {"interval": "30d"}}
    r = interpret(ev.model_copy(update={"config": ev.config.model_copy(update={"tree": tree})}))
    assert r.config.configured_backend == "builtin" and r.lease.seconds == 420.0
    assert r.lease.interval_source.startswith("builtin:")
