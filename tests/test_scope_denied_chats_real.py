"""A QMD scope rule that refuses the agent's real chats while the CLI's own context passes (breaker round 23,
r23q: clawprobe said HEALTHY, exit 0). ``memory.qmd.scope`` ``{default: allow, rules: [deny channel telegram]}``:
the running 2026.7.35 gateway's own ``memory_search`` (``gateway call tools.invoke`` with a Telegram session key)
answers ``results: []`` from ``provider: qmd`` — no error, no ``fallback`` — and logs only ``qmd search denied by
scope (channel=telegram, chatType=direct, session=agent:ops-bot:telegram:direct:…)``; the same search in a Discord
direct chat and ``openclaw memory search`` (channel ``cli``) find the note. The transcripts hold no denial text to
read, so the gateway log's record is the measured fact: ``retrieval_failed`` · ``chat_denied``, the scope named.
The rule changed (``config set``, the gateway reloads it): the Telegram chat finds the note and the check moves
on. Real: one gateway, three tool calls, two checks."""

from __future__ import annotations

import json

import pytest

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, OpenClawHome, gateway, qmd_config, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]

AGENT = "ops-bot"
NOTE = "# Memory\n\nThe rota for the harbour crane lives in the blue binder.\n"
TELEGRAM = f"agent:{AGENT}:telegram:direct:4242"
DISCORD = f"agent:{AGENT}:discord:direct:77"


def _tool(home, gw, testbed, session: str) -> dict:
    """The gateway's own memory_search for ``session`` (the payload the agent gets)."""
    params = json.dumps({"name": "memory_search", "args": {"query": "harbour crane"}, "agentId": AGENT,
                         "sessionKey": session})
    r = run_openclaw(home, OC_QMD, "gateway", "call", "tools.invoke", "--params", params, "--url", gw.url,
                     "--token", gw.token, "--json", timeout=120, path_dirs=[testbed.bin_dir], testbed=testbed)
    assert r.rc == 0, r.stderr[-2000:]
    return json.loads(r.stdout[r.stdout.index("{"):])["output"]["details"]


def _check(env) -> dict:
    rc, out, err = run_clawprobe(["check", "--json", "--agent", AGENT], env, timeout=300)
    (entry,) = json.loads(out)["receipts"]
    return entry["diagnosis"]


@pytest.fixture(scope="module")
def scoped(tmp_path_factory, testbed):
    home = OpenClawHome.create(tmp_path_factory.mktemp("scope-chats"), prefix="scope-", agent_id=AGENT)
    home.write_config(qmd_config("qmd", "search", qmd={"scope": {"default": "allow", "rules": [
        {"action": "deny", "match": {"channel": "telegram"}}]}}))
    home.update_config({"agents": {"list": [{"id": AGENT, "default": True}]}})
    home.write_memory_md(NOTE)
    env = check_env(home, testbed, tmp_path_factory.mktemp("scope-chats-data"))
    rc, _, err = run_clawprobe(["canary", "plant", "--yes", "--agent", AGENT], env)
    assert rc == 0, err
    assert run_openclaw(home, OC_QMD, "memory", "index", "--agent", AGENT, path_dirs=[testbed.bin_dir],
                        testbed=testbed, timeout=240).rc == 0
    out: dict = {}
    with gateway(home, OC_QMD, path_dirs=[testbed.bin_dir], testbed=testbed) as gw:
        out["discord"] = _tool(home, gw, testbed, DISCORD)
        out["telegram"] = _tool(home, gw, testbed, TELEGRAM)
        out["before"] = _check(env)
        set_ = run_openclaw(home, OC_QMD, "config", "set", "memory.qmd.scope",
                            json.dumps({"default": "allow", "rules": []}), path_dirs=[testbed.bin_dir],
                            testbed=testbed)
        assert set_.rc == 0, set_.stderr[-2000:]
        for _ in range(20):  # the gateway reloads the changed memory config (gateway.reload.mode hybrid)
            out["telegram_after"] = _tool(home, gw, testbed, TELEGRAM)
            if out["telegram_after"]["results"]:
                break
        out["after"] = _check(env)
    return out


def test_the_gateway_denies_the_telegram_chat_while_other_chats_find_the_note(scoped):
    assert scoped["discord"]["results"], scoped["discord"]
    denied = scoped["telegram"]
    assert denied["results"] == [] and denied.get("provider") == "qmd" and "fallback" not in denied, denied
    assert not denied.get("error") and not denied.get("disabled"), denied  # nothing in the payload says denied


def test_a_scope_rule_that_refuses_real_chats_is_never_healthy(scoped):
    d = scoped["before"]
    assert (d["verdict"], d["reason"], d["exit_code"]) == ("retrieval_failed", "chat_denied", 2), d
    said = " ".join(d["evidence"])
    assert "channel=telegram" in said and "direct chats: denied" in said, said
    assert d["next_action"]["command"].endswith("config get memory.qmd.scope"), d["next_action"]
    assert "index" not in d["next_action"]["command"]


def test_once_the_rule_allows_the_chat_the_check_moves_on(scoped):
    assert scoped["telegram_after"]["results"], scoped["telegram_after"]  # ground truth: the repair worked
    assert scoped["after"]["reason"] != "chat_denied", scoped["after"]
