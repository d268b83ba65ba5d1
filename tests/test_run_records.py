"""What the programs printed, kept in Evidence as run records (issue 12): the ``openclaw`` CLI probes and the
direct ``qmd search`` are stored as argv, exit code, signal, timeout/cap flags, seconds and stdout/stderr —
redacted by the one redaction module and bounded (64 KiB a stream, the full byte count kept) before they are
stored — and parsed only by interpret. A version-1 bundle (parsed facts only) is still diagnosed the same.

The programs are real executables run through the one runner (:func:`clawprobe.core.proc.run`); the
``openclaw`` that prints a secret or floods its output is a shell script (no real build does it on demand).
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.cli.main import main
from clawprobe.core.bundle import REMOVED_TEXT, bundle_text, make_bundle, parse_bundle, read_bundle, scrub_search_output
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import RUN_TEXT_CAP_BYTES, CanarySpec
from clawprobe.core.interpret import direct_qmd_found, interpret, slow_facts
from clawprobe.core.probe import clear_caches, discover, gather, slow
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.proc import run
from clawprobe.core.runrecord import record_run
from tests.hardening_helpers import fake_program
from tests.testbed import OpenClawHome, builtin_config

DATA = Path(__file__).parent / "data"
TOKEN = "CLAWPROBE-CANARY-R2D4M7QX9KZW3PLA"
SPEC = CanarySpec(token=TOKEN, expected_path="memory/clawprobe-canary.md")
SECRET = "sk-proj-4fTq9ZrW2mXv8LkP0aBcD3eF6gH1jK5nYt"  # an OpenAI-shaped key (synthetic)
SECRET2 = "ghp_Zx81Lw2Qe7Rt4Yu9Io3Pa6Sd0Fg5Hj2Kl8Mn"  # a GitHub-shaped token (synthetic)

STATUS_JSON = ('[{"agentId":"main","status":{"backend":"builtin","provider":"openai","files":1,"chunks":1,'
               '"dirty":false,"workspaceDir":"/w"}}]')


def _openclaw(tmp_path: Path, status_out: str, status_err: str, search_out: str, search_err: str) -> Path:
    """An ``openclaw`` that answers ``--version``, ``memory status`` and ``memory search`` with the given text."""
    for name, text in (("status.out", status_out), ("status.err", status_err), ("search.out", search_out),
                       ("search.err", search_err)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    body = (f'if [ "$1" = "--version" ]; then echo "OpenClaw 2026.7.35 (fake)"; exit 0; fi\n'
            f'cat "{tmp_path}/$2.out"; cat "{tmp_path}/$2.err" >&2\n')
    return fake_program(tmp_path / "openclaw", body)


def _slow(tmp_path: Path, fake: Path):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none"))
    home.write_memory_md()
    home.placeholder_builtin_db()  # an index exists: the search is run
    clear_caches()
    ctx = discover(env=home.env([], {"CLAWPROBE_OPENCLAW": str(fake)}))
    return ctx, slow(ctx, "main", canary=SPEC)


def test_a_secret_a_program_prints_never_reaches_the_evidence_the_receipt_or_the_bundle(tmp_path):
    fake = _openclaw(tmp_path, STATUS_JSON,
                     f"[memory] embeddings failed: 401 Incorrect API key provided: {SECRET}\n",
                     '{"results": []}', f"warn: retrying with Authorization: Bearer {SECRET2}\n")
    ctx, s = _slow(tmp_path, fake)
    assert s.status_run is not None and s.search_run is not None, s.errors
    assert (s.status, s.search) == (None, None)  # gather keeps what was printed, unparsed
    assert "Incorrect API key provided: <redacted>" in s.status_run.stderr
    assert "Bearer <redacted>" in s.search_run.stderr
    assert s.status_run.stderr_bytes == len(f"[memory] embeddings failed: 401 Incorrect API key provided: {SECRET}\n")
    # the fact the diagnosis needs survives the redaction: the provider refused the key
    assert "provider_auth" in {sig.tag for sig in oc.status_of_run(s.status_run).stderr.signals}
    ev = gather(ctx, "main", s, s.taken_at)
    text = bundle_text(make_bundle([ev], s.taken_at))
    receipt = interpret(parse_bundle(text).agents[0]).model_dump_json()
    for out in (s.model_dump_json(), ev.model_dump_json(), text, receipt, interpret(ev).model_dump_json()):
        assert SECRET not in out and SECRET2 not in out and "4fTq9ZrW" not in out


def test_a_secret_in_argv_is_masked_and_paths_stay():
    p = run(["/bin/sh", "-c", "echo ok", "sh", "--api-key", SECRET], {"PATH": "/usr/bin:/bin"}, 10)
    rec = record_run(p)
    assert rec.argv == ["/bin/sh", "-c", "echo ok", "sh", "--api-key", "<redacted>"]
    assert (rec.rc, rec.signal, rec.stdout, rec.timed_out, rec.output_capped) == (0, None, "ok\n", False, None)


def test_an_over_cap_stdout_is_kept_truncated_with_its_byte_count(tmp_path):
    size = 3 * RUN_TEXT_CAP_BYTES
    p = run([sys.executable, "-c", f"import sys; sys.stdout.write('[' + ' ' * {size} + ']')"], {"PATH": "/usr/bin:/bin"},
            30)
    rec = record_run(p)
    assert rec.stdout_truncated and rec.stdout_bytes == size + 2
    assert len(rec.stdout.encode("utf-8")) == RUN_TEXT_CAP_BYTES and not rec.stderr_truncated
    # a cut JSON answer is named as cut, never read as "no status"
    assert oc.status_of_run(rec).error == f"stdout kept truncated at 64 KiB of {size + 2} bytes"
    # multi-byte text is cut at a character boundary
    wide = record_run(run([sys.executable, "-c", "import sys; sys.stderr.write('é' * 40000)"], {"PATH": "/usr/bin:/bin"},
                          30))
    assert wide.stderr_truncated and wide.stderr_bytes == 80000
    assert wide.stderr == "é" * (RUN_TEXT_CAP_BYTES // 2)


def test_an_over_cap_status_through_the_live_probe_says_so_and_never_healthy(tmp_path):
    padded = STATUS_JSON[:-1] + "," + " " * (RUN_TEXT_CAP_BYTES + 10) + "]"
    fake = _openclaw(tmp_path, padded, "", '{"results": []}', "")
    ctx, s = _slow(tmp_path, fake)
    assert s.status_run is not None and s.status_run.stdout_truncated
    assert s.status_run.stdout_bytes == len(padded.encode("utf-8"))
    ev = gather(ctx, "main", s, s.taken_at)
    b = parse_bundle(bundle_text(make_bundle([ev], s.taken_at)))
    kept = b.agents[0].slow
    assert kept is not None and kept.status_run is not None
    assert (kept.status_run.stdout_truncated, kept.status_run.stdout_bytes) == (True, len(padded))
    r = interpret(b.agents[0])
    assert any(e == f"openclaw memory status: stdout kept truncated at 64 KiB of {len(padded)} bytes"
               for e in r.probe_errors), r.probe_errors
    assert diagnose(r).verdict.value != "healthy"


def test_bundles_keep_only_the_token_of_the_printed_search_results():
    oc_out = json.dumps({"results": [
        {"path": "MEMORY.md", "startLine": 1, "endLine": 3, "score": 0.4, "snippet": "@@ -1,3 @@\nthe bank PIN is 1234"},
        {"path": SPEC.expected_path, "startLine": 1, "endLine": 2, "score": 0.9, "snippet": f"@@ -1,2 @@\nnote {TOKEN}"}]})
    scrubbed = scrub_search_output("warn: slow disk\n" + oc_out, TOKEN)
    assert "PIN" not in scrubbed and REMOVED_TEXT in scrubbed and scrubbed.startswith("warn: slow disk\n")
    before = oc.parse_search(oc_out, "", 0)
    after = oc.parse_search(scrubbed, "", 0)
    assert [(h.path, h.shape, TOKEN in h.snippet) for h in after.hits] == \
        [(h.path, h.shape, TOKEN in h.snippet) for h in before.hits] == \
        [("MEMORY.md", "qmd", False), (SPEC.expected_path, "qmd", True)]
    qmd_out = json.dumps([{"docid": "#a1", "file": "qmd://memory-dir-main/clawprobe-canary.md", "title": "Diary",
                           "snippet": f"@@ -4,3 @@\nmy diary {TOKEN}"}])
    q = scrub_search_output(qmd_out, TOKEN)
    assert "Diary" not in q and "diary" not in q
    assert direct_qmd_found(q, TOKEN, SPEC.expected_path) is direct_qmd_found(qmd_out, TOKEN, SPEC.expected_path) is True
    assert scrub_search_output('Error: "snippet" cut {', TOKEN) == REMOVED_TEXT


@pytest.mark.parametrize("case", sorted(p.stem for p in (DATA / "bundles-v1").glob("*.json")))
def test_a_version_1_bundle_is_diagnosed_like_its_version_2_conversion(case):
    """tests/data/bundles-v1 holds bundles written before run records (parsed CLI facts only, version 1)."""
    old, new = read_bundle(str(DATA / "bundles-v1" / f"{case}.json")), read_bundle(str(DATA / "bundles" / f"{case}.json"))
    assert (old.version, old.evidence_version, old.agents[0].version) == (1, 1, 1)
    assert (new.version, new.evidence_version, new.agents[0].version) == (2, 2, 2)
    assert old.agents[0].slow is not None and not old.agents[0].slow.runs and new.agents[0].slow is not None
    d_old, d_new = diagnose(interpret(old.agents[0])), diagnose(interpret(new.agents[0]))
    assert (d_old.verdict, d_old.reason, d_old.next_action.title) == (d_new.verdict, d_new.reason, d_new.next_action.title)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["check", "--bundle", str(DATA / "bundles-v1" / f"{case}.json"), "--json"])
    doc = json.loads(out.getvalue())
    assert rc == d_old.exit_code and doc["receipts"][0]["verdict"] == d_old.verdict.value, err.getvalue()


def test_an_unsupported_bundle_version_is_said_not_a_traceback(tmp_path):
    doc = json.loads((DATA / "bundles-v1" / "RW13.json").read_text(encoding="utf-8"))
    doc["version"] = 9
    f = tmp_path / "future.json"
    f.write_text(json.dumps(doc), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["check", "--bundle", str(f)])
    assert rc == 3 and "bundle version 9 is not supported; this clawprobe reads versions 1, 2" in err.getvalue()
    assert "Traceback" not in err.getvalue() + out.getvalue()


def test_slow_facts_parses_the_records_and_leaves_version_1_evidence_as_it_is():
    old = read_bundle(str(DATA / "bundles-v1" / "RW13.json")).agents[0].slow
    assert old is not None and slow_facts(old, True) is old
    new = read_bundle(str(DATA / "bundles" / "RW13.json")).agents[0].slow
    assert new is not None and (new.status, new.search, new.direct) == (None, None, None)
    parsed = slow_facts(new, True)
    assert parsed.status is not None and parsed.search is not None and parsed.direct is not None
    # parsed since the v1 bundles were written
    newer = {"entries": {"__all__": {"source_files", "scan_source_files", "sources", "fts_enabled"}}}
    assert parsed.status.model_dump(exclude=newer) == old.status.model_dump(exclude=newer)
    assert parsed.direct.found == old.direct.found
    assert [(h.path, h.shape) for h in parsed.search.hits] == [(h.path, h.shape) for h in old.search.hits]
    assert datetime.now(UTC) > parsed.taken_at


def test_the_canary_token_survives_the_redaction_of_what_a_search_printed():
    """A note may say ``token <TOKEN>`` (``Token X`` is an auth-scheme shape the redaction masks): the search's
    record keeps the synthetic token — what the outcome is decided by — and masks a real secret beside it."""
    out = json.dumps({"results": [{"path": SPEC.expected_path, "startLine": 1, "endLine": 2, "score": 0.9,
                                   "snippet": f"@@ -1,2 @@\nthe canary token {TOKEN}; apiKey={SECRET}"}]})
    p = run([sys.executable, "-c", f"print({out!r})"], {"PATH": "/usr/bin:/bin"}, 30)
    masked = record_run(p)
    assert TOKEN not in masked.stdout  # what a plain redaction does to it
    kept = record_run(p, keep=(TOKEN,))
    assert TOKEN in kept.stdout and SECRET not in kept.stdout
    hits = oc.search_of_run(kept).hits
    assert [(h.path, TOKEN in h.snippet) for h in hits] == [(SPEC.expected_path, True)]
