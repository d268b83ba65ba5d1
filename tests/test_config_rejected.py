"""Configs OpenClaw rejects are ``config_invalid · schema`` naming the key path; secret-shaped values are masked.

Evidence (tests/data/recorded/735-config-validate/README.md): 52 configs through the real
``openclaw-2026.7.35 config validate --json`` (35 rejected, 17 accepted, among them the configs tests/testbed.py
builds), and the CLI's own words for a rejected config (``OpenClaw does not know the command "memory"``) and for
valid configs that turn the memory plugin off (the same words, or ``Unknown command: openclaw memory``).

Two depths: the static check in core/probes/config.py must agree with OpenClaw on every recorded config (no
false ``config_invalid`` on an accepted one), and a rejection only OpenClaw knows (a section clawprobe does not
read) must reach ``config_invalid`` through the CLI (``memory status`` → ``config validate``; one real run).
Secrets: the tester's ``memorySearch.provider: "sk-…"`` through the real ``clawprobe check --json --save`` (one real
run: OpenClaw echoes the provider in ``memory status``), the rest pure.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes.config import config_facts, read_config, validate_memory
from clawprobe.core.probes.gateway import safe_env
from clawprobe.core.receipt import Receipt
from clawprobe.core.redaction import MASK, looks_secret, redact_text
from clawprobe.core.verdicts import Verdict
from tests.hardening_helpers import check_env, run_clawprobe
from tests.rw_support import context
from tests.testbed import OC_QMD, OpenClawHome, builtin_config, qmd_config

REC = Path(__file__).parent / "data" / "recorded"
VALIDATE = json.loads((REC / "735-config-validate" / "validate.json").read_text())["cases"]
NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _step(scenario: str, step: str) -> tuple[str, str, int]:
    d = REC / scenario / step
    out = d / "stdout.json" if (d / "stdout.json").exists() else d / "stdout.txt"
    return out.read_text(), (d / "stderr.txt").read_text(), json.loads((d / "meta.json").read_text())["rc"]


def _oc_path(path: str) -> str:
    """OpenClaw's issue path (``agents.list.0.id``) in clawprobe's notation (``agents.list[0].id``)."""
    return re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", path)


def _snapshot(tmp_path: Path, config: dict):
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    cfg = state / "openclaw.json"
    cfg.write_text(json.dumps(config).replace("<home>", str(tmp_path)))
    return read_config(str(cfg), {"HOME": str(tmp_path / "home")}, str(state))


# --------------------------------------------------------------------------------------------------------
# (a) the static schema check agrees with the real OpenClaw 2026.7.35 on every recorded config
# --------------------------------------------------------------------------------------------------------

def test_the_recording_covers_both_sides():
    rejected = [k for k, c in VALIDATE.items() if c["stdout"]["valid"] is False]
    accepted = [k for k, c in VALIDATE.items() if c["stdout"]["valid"] is True]
    assert len(rejected) == 35 and len(accepted) == 17
    assert all(VALIDATE[k]["rc"] == 1 for k in rejected) and all(VALIDATE[k]["rc"] == 0 for k in accepted)
    assert all(c["expect"] == ("valid" if c["stdout"]["valid"] else "invalid") for c in VALIDATE.values())


@pytest.mark.parametrize("name", sorted(k for k, c in VALIDATE.items() if c["stdout"]["valid"] is False))
def test_a_config_openclaw_rejects_is_config_invalid_at_its_key(name, tmp_path):
    case = VALIDATE[name]
    issue = case["stdout"]["issues"][0]
    snap = _snapshot(tmp_path, case["config"])
    assert snap.error is None, snap.error
    facts = config_facts(snap, "main", OC_QMD, None)
    e = facts.error
    assert e is not None and e.kind == "schema", (name, issue)
    want = _oc_path(issue["path"])
    if want == "<root>":
        assert "." not in e.key_path and "at the top level" in e.message
    else:
        assert e.key_path == want or e.key_path.startswith((want + ".", want + "[")), (e.key_path, want)
    if issue.get("allowedValues"):
        assert e.allowed == issue["allowedValues"]
    d = diagnose(Receipt(checked_at=NOW, config=facts))
    assert (d.verdict, d.reason) == (Verdict.CONFIG_INVALID, "schema") and d.exit_code == 2
    assert e.key_path in " ".join(d.evidence)


@pytest.mark.parametrize("name", sorted(k for k, c in VALIDATE.items() if c["stdout"]["valid"] is True))
@pytest.mark.parametrize("version", [OC_QMD, None, "2026.4.12"])
def test_a_config_openclaw_accepts_is_never_config_invalid(name, version, tmp_path):
    snap = _snapshot(tmp_path, VALIDATE[name]["config"])
    assert snap.error is None
    facts = config_facts(snap, "main", version, None)
    assert facts.error is None, facts.error
    assert diagnose(Receipt(checked_at=NOW, config=facts)).verdict is not Verdict.CONFIG_INVALID


def test_the_messages_name_where_a_misplaced_key_belongs():
    cases = {
        ("memory", "qmd", "updateInterval"): "memory.qmd.update.interval",
        ("memory", "qmd", "cmd"): "memory.qmd.command",
        ("memory", "qmd", "maxResults"): "memory.qmd.limits.maxResults",
        ("memory", "qmd", "serchMode"): "memory.qmd.searchMode",
        ("memory", "searchMode"): "memory.qmd.searchMode",
        ("agents", "defaults", "provider"): "agents.defaults.memorySearch.provider",
        ("agents", "entries"): "agents.list",
    }
    for keys, where in cases.items():
        tree: dict = {}
        node = tree
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = "x"
        e = validate_memory(tree, OC_QMD, "/x/openclaw.json")
        assert e.key_path == ".".join(keys) and f"did you mean {where}" in e.message, (keys, e.message)
    tree = {"memory": {"qmd": {"cmd": "qmd", "limits": {"maxResults": 0}}}, "agents": {"list": {}}}
    e = validate_memory(tree, OC_QMD)
    assert e.key_path == "memory.qmd.cmd" and "2 more" in e.message and "agents.list must be an array" in e.message


def test_eras_without_the_2026_7_schema_are_judged_leniently():
    # 2026.8+ layout keys are not errors on an unknown build; memory.qmd keys are (strict since QMD arrived)
    assert validate_memory({"memory": {"search": {"provider": "none"}}}, None) is None
    assert validate_memory({"memory": {"search": {"provider": "none"}}}, OC_QMD).key_path == "memory.search"
    assert validate_memory({"agents": {"entries": {"main": {}}}}, None) is None
    assert validate_memory({"memory": {"qmd": {"updateInterval": "5m"}}}, None).key_path == "memory.qmd.updateInterval"
    assert validate_memory({"agents": {"list": {"id": "x"}}}, "2026.2.9").key_path == "agents.list"
    # older memorySearch shapes (store.path, E1–E2) are not judged by 2026.7.35's
    assert validate_memory({"agents": {"defaults": {"memorySearch": {"store": {"path": "/x"}}}}}, "2026.3.12") is None
    assert validate_memory({"agents": {"defaults": {"memorySearch": {"store": {"path": "/x"}}}}}, OC_QMD) is not None


@pytest.fixture(scope="module")
def tester_homes(oc_home_factory, testbed):
    """The tester's list, each a healthy JSON5 home with one fault (no openclaw call: only `--version`)."""
    faults = {
        "memory.qmd.updateInterval": "memory: { backend: 'qmd', qmd: { command: 'qmd', searchMode: 'search', "
                                     "updateInterval: '5m' } },",
        "memory.qmd.cmd": "memory: { backend: 'qmd', qmd: { cmd: 'qmd', searchMode: 'search' } },",
        "agents.list": "memory: { backend: 'qmd', qmd: { searchMode: 'search' } }, agents: { list: { id: 'x' } },",
        "agents.defaults.workspace": "memory: { backend: 'qmd', qmd: { searchMode: 'search' } },",
        "memory": "memory: null,",
        "logging.file": "memory: { backend: 'qmd', qmd: { searchMode: 'search' } },",
        "agents.defaults.memorySearch.bogus": "memory: { backend: 'qmd', qmd: { searchMode: 'search' } },",
    }
    out = {}
    for key, memory in faults.items():
        home = oc_home_factory(None, name="tester")
        ws = "42" if key == "agents.defaults.workspace" else f"'{home.workspace}'"
        ms = "provider: 'none', bogus: true" if key.endswith("bogus") else "provider: 'none'"
        log = "7" if key == "logging.file" else f"'{home.log_file}'"
        agents = "" if key == "agents.list" else \
            f"agents: {{ defaults: {{ workspace: {ws}, memorySearch: {{ {ms} }} }} }},"
        home.write_config(f"// JSON5, as an operator writes it\n{{\n  {memory}\n  {agents}\n"
                          f"  logging: {{ file: {log} }},\n}}\n")
        home.write_canary("QMDCANARY-1234-TESTER")
        out[key] = home, context(home, testbed, OC_QMD)
    return out


@pytest.mark.parametrize("key", ["memory.qmd.updateInterval", "memory.qmd.cmd", "agents.list",
                                 "agents.defaults.workspace", "memory", "logging.file",
                                 "agents.defaults.memorySearch.bogus"])
def test_the_testers_configs_are_config_invalid_schema(tester_homes, key):
    home, ctx = tester_homes[key]
    assert ctx.openclaw_version == OC_QMD and ctx.config.error is None
    r = probe.fast(ctx, "main", None, NOW)
    d = diagnose(r, NOW)
    assert (d.verdict, d.reason) == (Verdict.CONFIG_INVALID, "schema"), (d.verdict, d.reason, d.evidence)
    assert r.config.error.key_path == key and r.config.error.file == str(home.config_path)
    assert key in d.evidence[0] and "canary" not in d.next_action.title.lower()
    assert "scope" not in d.next_action.title.lower() and d.exit_code == 2


# --------------------------------------------------------------------------------------------------------
# (b) the CLI's "invalid config" outputs, including the misleading `does not know the command "memory"`
# --------------------------------------------------------------------------------------------------------

def test_recorded_rejection_becomes_invalid_config_after_validate():
    res = oc.parse_status(*_step("735-config-rejected", "status"))
    assert res.stderr.memory_command_missing and res.stderr.invalid_config is None and res.rc == 1
    v = oc.parse_validate(*_step("735-config-rejected", "validate"))
    assert (v.valid, [(i.path, i.message) for i in v.issues]) == (False, [("memory.qmd", "Invalid input")])
    oc.apply_validation(res, v)
    assert res.stderr.invalid_config == "Invalid config at <home>/state/openclaw.json:\n- memory.qmd: Invalid input"
    assert res.error == res.stderr.invalid_config and res.validation is v
    search = oc.parse_search(*_step("735-config-rejected", "search"))
    assert search.stderr.memory_command_missing and search.error == "exit 1"


@pytest.mark.parametrize("scenario", ["735-memory-plugin-off", "735-plugins-disabled"])
def test_a_valid_config_without_the_memory_plugin_is_not_invalid(scenario):
    res = oc.parse_status(*_step(scenario, "status"))
    assert res.stderr.memory_command_missing and res.stderr.invalid_config is None
    assert "turns the memory plugin off" in res.error
    oc.apply_validation(res, oc.parse_validate(*_step(scenario, "validate")))
    assert res.validation.valid is True and res.stderr.invalid_config is None and res.error == oc.MEMORY_PLUGIN_OFF


def test_other_invalid_config_wordings_and_unreadable_validator_output():
    assert oc.parse_status(*_step("96-qmd-keys-rejected", "status")).stderr.invalid_config.startswith(
        'Invalid config at <home>/state/openclaw.json:\n- agents.defaults: Unrecognized key: "memorySearch"')
    rw01 = "config invalid: memory.backend: invalid input — run openclaw doctor --fix\n"
    assert oc.parse_stderr(rw01).invalid_config == rw01.strip()
    assert oc.parse_stderr("[openclaw] Reason: Config validation failed: agents.list\n[openclaw] Try: doctor\n"
                           ).invalid_config == "Config validation failed: agents.list"
    for out, err, rc in (("", 'OpenClaw does not know the command "config".\n', 1), ("{not json", "", 1),
                         ('{"valid": "yes"}', "", 0), ("", "", None)):
        v = oc.parse_validate(out, err, rc)
        assert v.valid is None and v.error and v.message() is None
    healthy = oc.parse_status(*_step("735-qmd-path-search", "status"))
    assert not healthy.stderr.memory_command_missing and healthy.stderr.invalid_config is None and healthy.entries
    # a call that answered ran with a loaded config: a looser wording on its stderr is a warning, not a rejection
    out, err, rc = _step("735-qmd-path-search", "status")
    assert oc.parse_status(out, err + "Failed to load config for plugin x; skipped\n", rc).stderr.invalid_config is None
    assert oc.parse_status("", "Failed to load config: bad\n", 1).stderr.invalid_config == "Failed to load config: bad"


def test_the_orchestrator_path_turns_the_recorded_cli_answer_into_config_invalid(tmp_path):
    home = OpenClawHome.create(tmp_path)
    home.write_config(builtin_config("none", ui={"bogusKey": 1}))  # a section clawprobe does not read
    ctx = probe.discover(env=home.env())  # no openclaw on PATH: only the recorded CLI answer speaks
    assert ctx.openclaw is None and ctx.config.error is None
    assert diagnose(probe.fast(ctx, "main", None, NOW), NOW).verdict is not Verdict.CONFIG_INVALID
    status = oc.apply_validation(oc.parse_status(*_step("735-config-rejected", "status")),
                                 oc.parse_validate(*_step("735-config-rejected", "validate")))
    r = probe.fast(ctx, "main", probe.SlowEvidence(taken_at=NOW, agent_id="main", status=status), NOW)
    d = diagnose(r, NOW)
    assert (d.verdict, d.reason) == (Verdict.CONFIG_INVALID, "schema") and "memory.qmd: Invalid input" in d.evidence[0]


def test_a_rejection_only_openclaw_knows_reaches_config_invalid_for_real(oc_home_factory, testbed):
    """`ui.bogusKey` (clawprobe does not read `ui`): 2026.7.35 answers `memory status` with `does not know the
    command "memory"`; run_status then asks `config validate --json`, whose issue reaches the verdict."""
    home = oc_home_factory(builtin_config("none", ui={"bogusKey": 1}), name="ui-bogus")
    home.write_memory_md()
    ctx = context(home, testbed, OC_QMD)
    assert ctx.config.error is None and validate_memory(ctx.config.tree, OC_QMD) is None
    r = probe.collect(ctx, "main", NOW)
    d = diagnose(r, NOW)
    assert (d.verdict, d.reason) == (Verdict.CONFIG_INVALID, "schema"), (d.verdict, d.evidence, r.probe_errors)
    assert f"Invalid config at {home.config_path}:\n- ui: Invalid input" in r.config.error.message
    assert r.canary.outcome is None


# --------------------------------------------------------------------------------------------------------
# secrets in config values
# --------------------------------------------------------------------------------------------------------

# token-shaped test values are assembled here, so no provider-format token sits in the source as one literal
GH_TOKEN = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SECRETS = ["sk-SECRETINPROVIDER123", "sk-ant-" + "api03-Xq7vB2mN9pL4kR8sT1wY6zC3fH5jD0gA", GH_TOKEN,
           "xoxb" + "-123456789012-abcdefGHIJKL", "AKIAIOSFODNN7EXAMPLE", "AIza" + "SyD-1a2B3c4D5e6F7g8H9i0JkLmNoPqRs",
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
           "Q2xhd3Byb2JlU2VjcmV0S2V5MTIzNDU2Nzg5MGFiY2RlZg==", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
           base64.urlsafe_b64encode(bytes(range(7, 40, 1))).decode().rstrip("=")]
IN_TEXT = {"Authorization: Bearer abcdEFGH1234ijklMNOP": "Authorization: Bearer " + MASK,
           "https://ops:hunter2hunter2@embed.internal:8443/v1": f"https://ops:{MASK}@embed.internal:8443/v1",
           "postgres://app:s3cr3t-pass@db:5432/x": f"postgres://app:{MASK}@db:5432/x",
           "api_key=abcd1234efgh5678": f"api_key={MASK}", '"password": "correct horse"': f'"password": "{MASK}"',
           "provider sk-SECRETINPROVIDER123 is unknown": f"provider {MASK} is unknown"}
NOT_SECRETS = ["openai", "none", "local", "text-embedding-3-small", "gemini-embedding-001", "memory-lancedb",
               "hf:ggml-org/embeddinggemma-300m-qat-q8_0-GGUF/embeddinggemma-300m-qat-Q8_0.gguf",
               "sentence-transformers/all-MiniLM-L6-v2", "Qwen/Qwen3-Embedding-0.6B",
               "VeryLongCamelCaseIdentifierName2024Final",
               "/nix/store/0c1p5rbyk1ypxfd3z6r4m3r6nvd7j0pi-qmd-2.8.3/bin/qmd", "http://127.0.0.1:11434/v1",
               "CLAWPROBE-CANARY-7QF3K2MXA9DZL4WB", "QMDCANARY-9876-LOTUS", "${OPENAI_API_KEY}",
               "apiKey=${OPENAI_API_KEY}",
               "Canary token: CLAWPROBE-CANARY-7QF3K2MXA9DZL4WB", "OPENCLAW_GATEWAY_PORT=18789", "maxTokens: 4000",
               "/home/operator/Projects/MyNotes2024/ResearchArchive/Subfolder", "memory.backend is 'builtin'",
               "qmd search QMDCANARY-9876-LOTUS --json -n 4 -c memory-root-main -c memory-dir-main"]


@pytest.mark.parametrize("secret", SECRETS)
def test_a_token_shaped_value_is_masked_whole(secret):
    assert redact_text(secret) == MASK and looks_secret(secret)
    assert redact_text(f"memory.backend is {secret!r}") == f"memory.backend is '{MASK}'"


@pytest.mark.parametrize("text,masked", IN_TEXT.items())
def test_a_secret_inside_text_is_masked_and_the_rest_kept(text, masked):
    assert redact_text(text) == masked


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_names_paths_and_tokens_of_the_field_are_not_secrets(text):
    assert redact_text(text) == text and not looks_secret(text)


def test_the_config_probe_masks_secret_values_but_keeps_paths_and_commands(tmp_path):
    cfg = qmd_config("/opt/sk-tools-0123456789/qmd", "search", provider="sk-SECRETINPROVIDER123")
    cfg["agents"]["defaults"]["memorySearch"].update({
        "model": GH_TOKEN, "extraPaths": ["/srv/sk-learn-notes-2024"],
        "remote": {"baseUrl": "https://ops:hunter2hunter2@embed.internal/v1"}})
    snap = _snapshot(tmp_path, cfg)
    text = json.dumps(snap.tree)
    for leaked in ("SECRETINPROVIDER", "A1b2C3d4", "hunter2"):
        assert leaked not in text
    assert snap.tree["memory"]["qmd"]["command"] == "/opt/sk-tools-0123456789/qmd"  # verbatim: the probe runs it
    assert snap.tree["agents"]["defaults"]["memorySearch"]["extraPaths"] == ["/srv/sk-learn-notes-2024"]
    facts = config_facts(snap, "main", OC_QMD, None)
    assert facts.error is None and facts.provider == MASK and facts.provider_explicit
    assert MASK in facts.qmd_command and "0123456789" not in facts.model_dump_json()
    bad = _snapshot(tmp_path, {"memory": {"backend": "sk-SECRETBACKEND1234567890"}})
    e = config_facts(bad, "main", OC_QMD, None).error
    assert (e.key_path, e.allowed) == ("memory.backend", ["builtin", "qmd"]) and "SECRETBACKEND" not in e.message
    assert "secret-shaped" in e.message


def test_status_fields_that_echo_the_config_are_masked():
    stdout = json.dumps([{"agentId": "main", "status": {
        "backend": "builtin", "provider": "sk-SECRETINPROVIDER123", "requestedProvider": "sk-SECRETINPROVIDER123",
        "custom": {"providerUnavailableReason": "Unknown memory embedding provider: sk-SECRETINPROVIDER123"}}}])
    res = oc.parse_status(stdout, "[memory] provider sk-SECRETINPROVIDER123 failed\n", 0)
    assert "SECRETINPROVIDER" not in res.model_dump_json()
    e = res.entries[0]
    assert (e.provider, e.requested_provider) == (MASK, MASK) and e.provider_unavailable_reason.endswith(MASK)
    err = oc.parse_search('{"ok": false, "error": {"message": "bad key sk-SECRETINPROVIDER123"}}', "", 1)
    assert err.error == f"bad key {MASK}"


def test_the_gateway_environment_drops_secret_shaped_values():
    env = {"PATH": "/usr/bin", "HOME": "/home/op", "OPENCLAW_STATE_DIR": "/srv/sk-learn-0123456789/state",
           "OPENCLAW_GATEWAY_URL": "wss://op:hunter2hunter2@gw.internal:18789", "OPENCLAW_PROFILE": "ops",
           "OPENCLAW_SESSION": "sk-SECRETINPROVIDER123", "OPENCLAW_GATEWAY_TOKEN": "x", "OPENAI_API_KEY": "sk-x"}
    assert safe_env(env) == {"PATH": "/usr/bin", "HOME": "/home/op",
                             "OPENCLAW_STATE_DIR": "/srv/sk-learn-0123456789/state", "OPENCLAW_PROFILE": "ops"}


def test_a_secret_shaped_provider_never_reaches_check_json_or_receipts(oc_home_factory, testbed, tmp_path):
    """The tester's repro: `memorySearch.provider: "sk-SECRETINPROVIDER123"` (config validate accepts it; OpenClaw
    echoes it in `memory status --json` as provider/requestedProvider) through the real `check --json --save`."""
    assert VALIDATE["provider-secret-shaped"]["stdout"]["valid"] is True
    home = oc_home_factory(builtin_config("sk-SECRETINPROVIDER123"), name="secret-provider")
    home.write_memory_md()
    home.placeholder_builtin_db()  # a store exists, so `memory status` runs (and echoes the provider)
    data = tmp_path / "clawprobe-data"
    rc, out, err = run_clawprobe(["check", "--json", "--save"], check_env(home, testbed, data))
    receipts = (data / "receipts.jsonl").read_text()
    report = json.loads(out)
    assert rc in (1, 2, 3) and receipts.strip(), err
    for name, text in (("stdout", out), ("stderr", err), ("receipts.jsonl", receipts)):
        assert "SECRETINPROVIDER" not in text, name
    dumped = json.dumps(report)
    assert f'"provider": "{MASK}"' in dumped and f'"provider_requested": "{MASK}"' in dumped


@pytest.mark.parametrize(("word", "pinned"), [("none", False), ("auto", False), ("local", False), (None, False),
                                               ("None", True), ("Auto", True), ("LOCAL", True), ("openai", True)])
def test_a_provider_is_pinned_unless_spelt_as_openclaw_spells_the_unpinned_ones(word, pinned):
    """OpenClaw's provider names are case-sensitive (2026.7.35 and 2026.9.6: ``"None"`` fails with "Unknown memory
    embedding provider: None", breaker round 23): a case variant of none/auto/local is a pinned provider that fails
    closed, not keyword-only by choice."""
    from clawprobe.core.probes.config import memory_settings

    tree = {"agents": {"defaults": {"memorySearch": {} if word is None else {"provider": word}}}}
    assert memory_settings(tree, "ops-bot").provider_explicit is pinned
