"""No secret ever leaves clawprobe.

A real 2026.7.35 QMD install whose config and environment are full of planted secrets, with a real gateway
running (its process environment holds API keys and tokens too):

* literal provider keys: ``agents.defaults.memorySearch.remote.apiKey``, ``models.providers.openai.apiKey``;
* a token: ``gateway.auth.token`` (also on the gateway's command line, ``--token``);
* ``${VAR}`` values resolving to secrets: ``models.providers.anthropic.apiKey = ${OPENAI_API_KEY}`` from the
  operator's shell, ``memorySearch.remote.headers.X-Api-Key = ${CUSTOM_EMBED_KEY}`` from ``<state>/.env``;
* the gateway's environment: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``OPENCLAW_GATEWAY_TOKEN``,
  ``OPENCLAW_API_KEY``, ``DATABASE_URL`` with a password.

Then every way clawprobe reports runs — ``check --json --save`` (with the ``openclaw`` CLI lane), ``check``
text and ``--format prometheus --textfile`` (fast lane), ``replay`` (text, ``--json``), ``walk`` (text,
``--json``, on the saved receipt), a live dashboard session (both lanes) with ``s`` (save) and the
walkthrough, two ``export_screenshot()`` SVGs, then ``canary plant`` + ``canary show`` — and every output (stdout,
stderr, JSON, the receipt history, canary and walk records, every file in clawprobe's data dir, the textfile, the
screenshots) is scanned for every planted value, whole or cut. None may appear. The gateway's environment is read only
for PATH, HOME and non-secret OPENCLAW_* keys.
"""

from __future__ import annotations

import json
import secrets

import pytest

from clawprobe.core.probe import clear_caches, discover
from clawprobe.core.receipt import PROVIDER_KEY_NAMES
from clawprobe.tui.app import ClawprobeApp
from clawprobe.tui.sources import LiveSource
from tests.hardening_helpers import EveryOutput, check_env, indexed_qmd_home, svg_text, tree_environ
from tests.testbed import OC_QMD, deep_merge, gateway, qmd_config


def _secret(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(12)}"


S = {
    "remote_api_key": _secret("sk-PLANTEDremote"),
    "provider_api_key": _secret("sk-PLANTEDprovider"),
    "gateway_token": _secret("PLANTEDgwtoken"),
    "shell_openai_key": _secret("sk-PLANTEDshell"),
    "dotenv_key": _secret("sk-PLANTEDdotenv"),
    "gw_env_openai": _secret("sk-PLANTEDgwenv"),
    "gw_env_anthropic": _secret("sk-ant-PLANTEDgwenv"),
    "gw_env_openclaw_token": _secret("PLANTEDocgwtoken"),
    "gw_env_openclaw_api_key": _secret("PLANTEDocapikey"),
    "gw_env_db_password": _secret("PLANTEDdbpass"),
}
GATEWAY_ENV = {
    "OPENAI_API_KEY": S["gw_env_openai"], "ANTHROPIC_API_KEY": S["gw_env_anthropic"],
    "OPENCLAW_GATEWAY_TOKEN": S["gw_env_openclaw_token"], "OPENCLAW_API_KEY": S["gw_env_openclaw_api_key"],
    "DATABASE_URL": f"postgres://app:{S['gw_env_db_password']}@db.internal:5432/app",
    "CUSTOM_EMBED_KEY": S["dotenv_key"],
}
SECRET_ENV_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_API_KEY",
                    "DATABASE_URL", "CUSTOM_EMBED_KEY")


def leaks(name: str, text: str) -> list[str]:
    """Planted values found in ``text``: the whole value, or its random part cut to 10 characters."""
    found = []
    for key, value in S.items():
        core = value.rsplit("-", 1)[1]
        if value in text or core[:10] in text or core[-10:] in text:
            found.append(f"{key} in {name}")
    return found


@pytest.fixture(scope="module")
def planted(tmp_path_factory, testbed):
    parent = tmp_path_factory.mktemp("secrets")
    cfg = deep_merge(qmd_config("qmd", "search"), {
        "agents": {"defaults": {"memorySearch": {"remote": {
            "apiKey": S["remote_api_key"], "headers": {"X-Api-Key": "${CUSTOM_EMBED_KEY}"}}}}},
        "models": {"providers": {
            "openai": {"baseUrl": "https://api.openai.com/v1", "apiKey": S["provider_api_key"], "models": []},
            "anthropic": {"baseUrl": "https://api.anthropic.com", "apiKey": "${OPENAI_API_KEY}", "models": []}}},
        "gateway": {"auth": {"mode": "token", "token": S["gateway_token"]}},
    })
    home = indexed_qmd_home(parent, testbed, config=cfg, name="secrets")
    (home.state_dir / ".env").write_text(f"CUSTOM_EMBED_KEY={S['dotenv_key']}\n")
    data = parent / "clawprobe-data"
    env = check_env(home, testbed, data, extra={"OPENAI_API_KEY": S["shell_openai_key"]})
    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir], token=S["gateway_token"], extra_env=GATEWAY_ENV,
                 testbed=testbed) as gw:
        yield home, env, data, gw


def test_the_gateway_environment_is_never_dumped(planted):
    home, env, _, gw = planted

    # the planted values really are where clawprobe looks: in the config file, .env, the gateway's environment
    assert len(leaks("config", home.config_path.read_text())) == 3
    assert leaks(".env", (home.state_dir / ".env").read_text()) == ["dotenv_key in .env"]
    gw_env = "\n".join(f"{k}={v}" for env_ in tree_environ(gw.pid).values() for k, v in env_.items())
    # the six values planted in its environment (a child of the gateway may hold more, e.g. its --token: the
    # tree's processes come and go, so more than these six is no contradiction)
    planted_env = {k for k, v in S.items() if v in "".join(GATEWAY_ENV.values())}
    assert len(planted_env) == 6 and planted_env <= {hit.split(" in ")[0] for hit in leaks("gateway environ", gw_env)}
    clear_caches()
    ctx = discover(env=env)
    proc = ctx.gateway.process
    assert proc is not None and proc.env_readable, "the real gateway was found through the process table"
    for key in proc.env:
        assert key in ("PATH", "HOME") or key.startswith("OPENCLAW_"), key
    assert not set(SECRET_ENV_NAMES) & set(proc.env) and not set(SECRET_ENV_NAMES) & set(ctx.env)
    assert not leaks("ProbeContext", ctx.model_dump_json())


async def test_no_output_carries_a_planted_secret(planted, tmp_path, monkeypatch):
    home, env, data, gw = planted
    out = EveryOutput(env)
    doc = json.loads(out.cli("check --json --save", "check", "--json", "--save"))
    (entry,) = doc["receipts"]
    r = entry["receipt"]
    assert r["gateway"]["running"] is True and r["gateway"]["env_source"] == "process", r["gateway"]
    assert r["backend"]["effective"] == "qmd", r["backend"]
    # the one environment fact a receipt keeps: which provider keys the gateway's environment sets, by NAME
    # (what `auto` resolves to there: brk21 F3) — never a value, never any other variable's name
    known = {n for names in PROVIDER_KEY_NAMES.values() for n in names}
    assert set(r["gateway"].pop("provider_keys") or []) <= known
    receipt_json = json.dumps(r)
    for name in SECRET_ENV_NAMES:
        assert name not in receipt_json, f"the receipt names the gateway's {name}"
    textfile = tmp_path / "clawprobe.prom"
    out.cli("check prometheus", "check", "--format", "prometheus", "--textfile", str(textfile), "--no-openclaw")
    saved = tmp_path / "check.json"
    saved.write_text(out.texts["check --json --save stdout"])
    out.cli("check text", "check", "--no-openclaw")  # the text is rendered from the same receipt as --json
    out.replays(saved)

    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(data))
    clear_caches()
    app = ClawprobeApp(live=LiveSource(env=env), watch=True, fast_refresh_s=None)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await out.dashboard(app, pilot)
        await pilot.press("s")
        await pilot.pause(0.5)
        await pilot.press("6", "enter")
        await pilot.pause(0.5)
        out.texts["walkthrough screenshot"] = svg_text(app.export_screenshot())
        await pilot.press("d")  # one step marked done: the walk is recorded in the data dir
        await pilot.pause(0.3)
        await pilot.press("escape")
    out.cli("canary plant", "canary", "plant", "--yes", expect=(0,))
    out.cli("canary show", "canary", "show", expect=(0,))
    assert "clawprobe" in out.texts["dashboard screenshot"] and len(out.texts["walkthrough screenshot"]) > 200

    files = out.files(data, "data dir", extra=[textfile])
    assert any(p.name == "receipts.jsonl" for p in files) and any("canary" in p.parts for p in files) \
        and any("walks" in p.parts for p in files), files
    assert not out.leaks(leaks), out.leaks(leaks)
    assert len(out.texts) >= 20 and sum(map(len, out.texts.values())) > 20_000  # the scan really read things
