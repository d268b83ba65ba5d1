"""One redaction for every source of text: a secret planted in any source reaches no output.

Each source gets its own distinct secret, in the shape it would really have there:

* the config: ``memory.qmd.command`` with secret-shaped flags of every spelling (``--password X``,
  ``--api-key=X``, ``-k X``, ``--auth X``, ``--secret X``, ``--apikey X``);
* OpenClaw's log (the real file at ``logging.file``): a fallback line quoting an ``sk-…`` key, an embed failure
  with ``https://user:PASSWORD@…`` and a ``?key=`` parameter, a search failure with ``Bearer …``;
* qmd's stderr: a real executable configured as the qmd command prints a URL password and a ``&token=``;
* ``openclaw``'s status JSON and stderr: a real executable pinned as the OpenClaw CLI answers
  ``memory status --json`` with keys in its texts and prints a ``Bearer`` header on stderr;
* a session transcript: a ``memory_search`` tool result whose error quotes an ``sk-…`` key.

Then every output is scanned: ``check`` text, ``check --json``, ``check --save`` history (every file in the
data dir), ``replay`` (text, ``--json``), ``walk`` (text, ``--json``), and the dashboard screen (Textual
Pilot + ``export_screenshot``). None may carry any planted value, whole or cut to 10 characters.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime

import pytest

from clawprobe.core.probe import clear_caches
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.hardening_helpers import EveryOutput, check_env, fake_program
from tests.testbed import OpenClawHome, qmd_config


def _core() -> str:
    return secrets.token_hex(10)


S = {name: _core() for name in (
    "flag_password", "flag_api_key", "flag_k", "flag_auth", "flag_secret", "flag_apikey",
    "log_sk", "log_url_password", "log_query_key", "log_bearer",
    "qmd_url_password", "qmd_query_token",
    "status_sk", "status_url_password", "openclaw_stderr_bearer",
    "transcript_sk",
)}


def leaks(name: str, text: str) -> list[str]:
    """Planted values found in ``text``: the whole value, or its first or last 10 characters."""
    return [f"{key} in {name}" for key, v in S.items() if v in text or v[:10] in text or v[-10:] in text]


def _log(at: datetime, message: str) -> str:
    return json.dumps({"0": json.dumps({"subsystem": "memory"}), "1": message,
                       "_meta": {"logLevelName": "WARN", "date": at.isoformat().replace("+00:00", "Z")},
                       "time": at.isoformat().replace("+00:00", "Z")})


@pytest.fixture(scope="module")
def planted(tmp_path_factory, testbed):
    parent = tmp_path_factory.mktemp("secret-sources")
    home = OpenClawHome.create(parent, prefix="sources-")
    qmd = fake_program(parent / "qmd", (
        f'echo "qmd: fetch https://models:{S["qmd_url_password"]}@hf.example/x?v=1&token={S["qmd_query_token"]}'
        ' failed" >&2\nexit 1'))
    command = (f'{qmd} --password {S["flag_password"]} --api-key={S["flag_api_key"]} -k {S["flag_k"]} '
               f'--auth {S["flag_auth"]} --secret {S["flag_secret"]} --apikey {S["flag_apikey"]}')
    home.write_config(qmd_config(command, "search"))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    status = [{"agentId": "main", "status": {
        "backend": "qmd", "provider": "qmd", "model": "qmd", "requestedProvider": "qmd", "files": 1, "chunks": 1,
        "dirty": False, "workspaceDir": str(home.workspace), "sources": ["memory"],
        "providerUnavailableReason": f"401 Incorrect API key provided: sk-proj-{S['status_sk']}",
        "custom": {"qmd": {"collections": 2, "lastUpdateAt": None, "embedFailures": 1, "embedBackoffUntil": None,
                           "lastError": f"fetch https://u:{S['status_url_password']}@embed.example failed"}}},
        "scan": {"sources": [], "totalFiles": 1,
                 "issues": [f"cannot reach https://u:{S['status_url_password']}@embed.example"]}}]
    (parent / "status.json").write_text(json.dumps(status))
    openclaw = fake_program(parent / "openclaw", f"""
case "$1 $2" in
  "--version "*) echo "OpenClaw 2026.7.35 (aa94808)" ;;
  "memory status") cat "{parent / 'status.json'}"
      echo "[memory] qmd memory unavailable; Authorization: Bearer {S['openclaw_stderr_bearer']}" >&2 ;;
  "memory search") echo '{{"results": []}}'
      echo "[memory] Authorization: Bearer {S['openclaw_stderr_bearer']}" >&2 ;;
  "config validate") echo '{{"valid": true, "issues": []}}' ;;
  *) echo "unknown $*" >&2; exit 2 ;;
esac""")
    now = datetime.now(UTC)
    home.log_file.write_text("\n".join([
        _log(now, f"qmd memory unavailable; falling back to builtin: 401 invalid key sk-{S['log_sk']}"),
        _log(now, f'qmd embed failed (agent "main"): fetch https://bot:{S["log_url_password"]}@embed.example/v1'
                  f'?key={S["log_query_key"]} failed; backing off for 60s'),
        _log(now, f"qmd search failed: 401 from https://embed.example (Authorization: Bearer {S['log_bearer']})"),
    ]) + "\n")
    sessions = home.agent_dir() / "sessions"
    sessions.mkdir(parents=True)
    payload = {"results": [], "disabled": True, "provider": "openai",
               "error": f"401 Incorrect API key provided: sk-{S['transcript_sk']}"}
    (sessions / "s1.jsonl").write_text(json.dumps({
        "type": "toolResult", "toolName": "memory_search", "timestamp": now.isoformat().replace("+00:00", "Z"),
        "content": [{"type": "text", "text": json.dumps(payload)}]}) + "\n")
    data = parent / "clawprobe-data"
    env = check_env(home, testbed, data, openclaw=openclaw)
    yield home, env, data


def test_every_source_really_holds_its_secret(planted):
    """The planted values are where clawprobe reads them (else the scan below proves nothing)."""
    home, _, _ = planted
    text = home.config_path.read_text() + home.log_file.read_text()
    text += "".join(p.read_text() for p in home.root.parent.glob("*") if p.is_file())
    text += (home.agent_dir() / "sessions" / "s1.jsonl").read_text()
    assert sorted(k for k, v in S.items() if v in text) == sorted(S)


async def test_no_output_carries_a_secret_from_any_source(planted, tmp_path, monkeypatch):
    home, env, data = planted
    out = EveryOutput(env)
    doc = json.loads(out.cli("check --json --save", "check", "--json", "--save"))
    (entry,) = doc["receipts"]
    r = entry["receipt"]
    assert r["config"]["configured_backend"] == "qmd" and "<redacted>" in r["qmd"]["command"], r["qmd"]
    assert r["qmd"]["failure_detail"] and "<redacted>" in r["qmd"]["failure_detail"], r["qmd"]  # qmd stderr read
    assert "<redacted>" in json.dumps(r["backend"]) + json.dumps(r["findings"]), (r["backend"], r["findings"])  # log
    saved = tmp_path / "check.json"
    saved.write_text(out.texts["check --json --save stdout"])
    out.cli("check text", "check")
    out.replays(saved)

    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(data))
    clear_caches()
    app = ClawprobeApp(live=LiveSource(env=env), watch=False, fast_refresh_s=None)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await out.dashboard(app, pilot)
    assert "clawprobe" in out.texts["dashboard screenshot"]

    files = out.files(data, "data dir")
    assert any(p.name == "receipts.jsonl" for p in files), files
    assert not out.leaks(leaks), out.leaks(leaks)
    assert sum(map(len, out.texts.values())) > 10_000  # the scan really read things


@pytest.mark.parametrize(("text", "kept"), [
    ("qmd --password hunter2xyz --index main", "qmd --password <redacted> --index main"),
    ("qmd --password=hunter2xyz", "qmd --password=<redacted>"),
    ("qmd --api-key AKEY12 search", "qmd --api-key <redacted> search"),
    ("qmd --apikey=AKEY12", "qmd --apikey=<redacted>"),
    ("qmd -k KEY12345 search", "qmd -k <redacted> search"),
    ("qmd --auth user:pw12", "qmd --auth <redacted>"),
    ("qmd --token tok12345", "qmd --token <redacted>"),
    ("qmd --secret s3cr3t", "qmd --secret <redacted>"),
    ("qmd --client-secret 'a b c'", "qmd --client-secret '<redacted>'"),
    ("GET https://x.example/v1?key=AIzaQQ12&token=t0k3n&v=2", "GET https://x.example/v1?key=<redacted>&token=<redacted>&v=2"),
    ("qmd --token ${QMD_TOKEN} --index main", "qmd --token ${QMD_TOKEN} --index main"),
    ("qmd --key-file /etc/qmd.key -n 5", "qmd --key-file /etc/qmd.key -n 5"),
    ("qmd search -k -n 5", "qmd search -k -n 5"),
])
def test_secret_shaped_flags_and_query_parameters_are_masked(text, kept):
    from clawprobe.core.redaction import redact_shapes, redact_text

    assert redact_text(text) == kept and redact_shapes(text) == kept


def test_the_receipt_sweep_keeps_hashes_and_masks_secrets():
    from clawprobe.core.receipt import Receipt

    sha = "3f2a9c0b1d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
    r = Receipt.model_validate({"checked_at": "2026-11-30T03:00:00Z", "config": {"hash": sha},
                                "probe_errors": ["memory status: Bearer abcdefgh12345678 rejected"]})
    assert r.config.hash == sha and r.probe_errors == ["memory status: Bearer <redacted> rejected"]
