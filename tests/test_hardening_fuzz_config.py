"""Fuzzing the config loader (``clawprobe.core.probes.config``): random JSON5-ish text, random bytes and structured
random configs never raise. A config that cannot be used is a ``ConfigError`` with a clear message and
ends as the ``config_invalid`` verdict; a usable one gives settings, a lease and a verdict.

Every example goes through the real GATHER step (the text is written to a file and read back by
``read_config``, ``$include``s and ``${VAR}`` included), then the pure steps, then ``diagnose`` and the
text/JSON renderings ``clawprobe check`` prints. A smaller set runs the whole ``discover`` + ``fast``
orchestrator on random configs (each example stats the process table, so it is kept to 150).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.locate import (
    Located,
    agent_ids,
    default_agent_id,
    has_qmd_backend,
    workspace_dir,
)
from clawprobe.core.probe import discover, fast
from clawprobe.core.probes.config import (
    ConfigSnapshot,
    config_facts,
    lease_for,
    log_file_for,
    memory_settings,
    parse_duration_s,
    read_config,
    validate_memory,
)
from clawprobe.core.receipt import OpenClawFacts, Receipt
from clawprobe.core.report import to_json, to_text
from clawprobe.core.verdicts import Verdict
from clawprobe.core.words import verdict_words

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
VERSIONS = (None, "2026.7.35", "2026.9.6")
KINDS = {"parse", "schema", "include", "env", "encoding", "unreadable"}
# Derandomized so a CI run is reproducible (the same 1,000 examples each run); CLAWPROBE_FUZZ_RANDOM=1
# explores new ones (how the `memory.qmd.paths: true` crash was found).
FUZZ = settings(max_examples=1000, deadline=None, database=None,
                derandomize=not os.environ.get("CLAWPROBE_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# One scratch dir for the whole module (hypothesis reruns a test body many times; each example rewrites
# the same files). It holds a config dir with an include file, a state dir and a workspace.
_SCRATCH = Path(tempfile.mkdtemp(prefix="clawprobe-fuzz-config-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)  # the session's scratch dir goes with it
STATE = _SCRATCH / "state"
CONFIG = STATE / "openclaw.json"
(STATE / "inc").mkdir(parents=True)
(STATE / "inc" / "memory.json5").write_text('{ memory: { backend: "qmd", qmd: { searchMode: "query" } } }\n')
(STATE / "inc" / "broken.json5").write_text("{ memory: { backend: 'qmd', ,\n")
(STATE / ".env").write_text("QMD_BIN=/opt/qmd/bin/qmd\nexport MODE=vsearch\n")


@pytest.fixture(scope="module", autouse=True)
def _remove_scratch():
    yield
    shutil.rmtree(_SCRATCH, ignore_errors=True)

ENV = {"HOME": str(_SCRATCH / "home"), "PATH": "/usr/bin:/bin", "QMD_BIN": "/usr/local/bin/qmd",
       "OPENCLAW_STATE_DIR": str(STATE)}

TOKENS = ["{", "}", "[", "]", ":", ",", '"', "'", "//", "/*", "*/", "\n", "\r\n", " ", "\t", "\\", "\\n", "\u2028",
          "\ufeff", "memory", "backend", "qmd", "builtin", '"qmd"', "'search'", "searchMode", "command", "$include",
          '"inc/memory.json5"', '"inc/broken.json5"', '"../../etc/passwd"', "${QMD_BIN}", "${MISSING_VAR}",
          "$${QMD_BIN}", "${MODE}", "Infinity", "-Infinity", "NaN", "0x1F", "+1", ".5", "1e999", "true", "null",
          "agents", "defaults", "memorySearch", "provider", "update", "interval", '"5m"', '"1h30x"', "12345678901234567890",
          "\x00", "é", "日本", "\U0001f600", "\ud800"]

json_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
                | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=24))
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c,
                                                                                              max_size=4), max_leaves=12)


def _str_or(values: list[str]) -> st.SearchStrategy:
    return st.sampled_from(values) | json_values


duration = _str_or(["5m", "90", "1h30m", "0", "-5m", "5 m", "1e9h", "", "99999999999999999999d", "${MODE}"])
qmd_section = st.fixed_dictionaries({}, optional={
    "command": _str_or(["qmd", "/nonexistent/bin/qmd", "${QMD_BIN}", '"/opt/my qmd/qmd" --flag', "", "./rel/qmd",
                        "${MISSING_VAR}", "$${QMD_BIN}"]),
    "searchMode": _str_or(["search", "vsearch", "query", "hybrid", "${MODE}"]),
    "update": st.fixed_dictionaries({}, optional={
        "interval": duration, "embedInterval": duration, "debounceMs": json_values, "embedTimeoutMs": json_values,
        "commandTimeoutMs": json_values, "startup": _str_or(["off", "idle", "immediate"])}) | json_values,
    "limits": st.fixed_dictionaries({}, optional={"timeoutMs": json_values, "maxResults": json_values}) | json_values,
    "paths": st.lists(st.fixed_dictionaries({"path": _str_or(["~/notes", "/tmp", "rel"])},
                                            optional={"name": json_values, "pattern": json_values}), max_size=3)
    | json_values,
    "scope": st.fixed_dictionaries({}, optional={"default": _str_or(["allow", "deny"]), "rules": json_values})
    | json_values,
    "sessions": json_values, "includeDefaultMemory": json_values, "rerank": json_values,
})
memory_section = st.fixed_dictionaries({}, optional={
    "backend": _str_or(["qmd", "builtin", "memory-lancedb", "QMD"]),
    "citations": _str_or(["auto", "on", "off", "sometimes"]),
    "qmd": qmd_section | json_values,
    "search": st.fixed_dictionaries({}, optional={
        "provider": _str_or(["openai", "none", "auto", "local", "gemini", ""]),
        "extraPaths": st.lists(_str_or(["~/docs", "/var/x", "../up"]), max_size=3) | json_values,
        "qmd": json_values}) | json_values,
    "$include": _str_or(["inc/memory.json5", "inc/broken.json5", "inc/missing.json5", "../outside.json5",
                         "/etc/hostname", "openclaw.json"]),
})
agent_entry = st.fixed_dictionaries({}, optional={
    "id": _str_or(["main", "ops", "Ops Team!", "", "x" * 80]), "default": json_values,
    "workspace": _str_or(["~/ws", "/srv/ws", "", "rel/ws"]), "memorySearch": json_values, "memory": json_values})
agents_section = st.fixed_dictionaries({}, optional={
    "defaults": st.fixed_dictionaries({}, optional={"workspace": _str_or(["~/ws", "/srv/ws", ""]),
                                                    "memorySearch": json_values}) | json_values,
    "list": st.lists(agent_entry | json_values, max_size=3) | json_values,
    "entries": st.dictionaries(st.text(max_size=6), agent_entry | json_values, max_size=3) | json_values,
})
config_trees = st.fixed_dictionaries({}, optional={
    "memory": memory_section | json_values,
    "agents": agents_section | json_values,
    "logging": st.fixed_dictionaries({}, optional={"file": _str_or(["~/oc.log", "/tmp/x/y.log", ""])}) | json_values,
    "gateway": st.fixed_dictionaries({}, optional={"reload": json_values, "auth": json_values}) | json_values,
    "plugins": st.fixed_dictionaries({}, optional={"slots": json_values}) | json_values,
    "$include": _str_or(["inc/memory.json5", "inc/broken.json5", "inc/missing.json5"]),
    "models": json_values,
})
json5ish = st.lists(st.sampled_from(TOKENS) | st.text(max_size=4), max_size=40).map("".join)


def _mutated(text: str, data: st.DataObject) -> str:
    """Cut the text somewhere, or splice a token into it (JSON that became almost-JSON5)."""
    how = data.draw(st.sampled_from(["keep", "cut", "splice"]))
    if how == "keep" or not text:
        return text
    i = data.draw(st.integers(min_value=0, max_value=len(text)))
    if how == "cut":
        return text[:i]
    return text[:i] + data.draw(st.sampled_from(TOKENS)) + text[i:]


def _write(raw: bytes | str) -> None:
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    tmp = CONFIG.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, CONFIG)


def check_config_file(*, record: bool = True) -> list[Verdict]:
    """Read the config as ``clawprobe check`` does and diagnose it on every OpenClaw era; the invariants
    of a usable vs an unusable config. Returns the verdicts (one per era)."""
    snap = read_config(str(CONFIG), ENV, str(STATE))
    assert snap.path == str(CONFIG) and snap.exists
    state = Located(path=str(STATE), source="$OPENCLAW_STATE_DIR")
    verdicts = []
    if record:
        event(f"config error: {snap.error.kind if snap.error else 'none'}")
    if snap.error is not None:
        e = snap.error
        assert e.kind in KINDS and e.message.strip(), e
        assert e.file, "an error names the file it is about"
        if e.kind == "parse" and e.line is not None:
            assert e.line >= 1 and (e.column or 1) >= 1
        json.dumps(snap.model_dump(mode="json"))  # what --json would print is encodable
    ids = agent_ids(snap.tree) if snap.error is None else ["main"]
    assert ids and all(isinstance(a, str) and a for a in ids)
    if snap.error is None:
        assert default_agent_id(snap.tree) == ids[0]
        log_file_for(snap, ENV)
    for version in VERSIONS:
        for aid in ids[:2]:
            ws = workspace_dir(snap.tree, aid, ENV, state, version).path if snap.error is None else None
            facts = config_facts(snap, aid, version, ws)
            r = Receipt(agent_id=aid, checked_at=NOW, config=facts,
                        openclaw=OpenClawFacts(version=version, has_qmd_backend=has_qmd_backend(version)))
            if snap.error is None:
                s = memory_settings(snap.tree, aid)
                assert s.update_interval_s >= 0 and s.search_timeout_s > 0 and len(s.hash) == 64
                r.lease = lease_for(s)
                assert (validate_memory(snap.tree, version, snap.path) is None) == (facts.error is None)
            d = diagnose(r)
            if facts.error is not None:
                assert d.verdict is Verdict.CONFIG_INVALID and d.exit_code == 2, d
                assert d.evidence and facts.error.message in d.evidence[0]
            else:
                assert d.verdict is not Verdict.CONFIG_INVALID
            text = to_text([(r, d)])
            assert f"agent {d.agent_id}: {verdict_words(d.verdict)}" in text  # the verdict in words (--json has the id)
            json.loads(to_json([(r, d)]))
            verdicts.append(d.verdict)
    if record:
        event(f"verdicts: {sorted({v.value for v in verdicts})}")
    return verdicts


@FUZZ
@given(text=json5ish | st.text(max_size=200))
def test_random_json5ish_text(text):
    _write(text)
    check_config_file()


@FUZZ
@given(raw=st.binary(max_size=200))
def test_random_bytes(raw):
    _write(raw)
    check_config_file()


@FUZZ
@given(tree=config_trees, data=st.data())
def test_structured_random_configs(tree, data):
    text = json.dumps(tree, ensure_ascii=data.draw(st.booleans()))
    _write(_mutated(text, data))
    check_config_file()


@FUZZ
@given(raw=json_values | st.text(max_size=30))
def test_duration_parser_never_raises(raw):
    v = parse_duration_s(raw)
    assert v is None or (isinstance(v, float) and v >= 0)


def test_fuzzed_configs_reached_both_outcomes():
    """Guard against a generator that only ever produces broken (or only usable) configs."""
    seen: set[bool] = set()
    for sample in ('{memory: {backend: "qmd"}}', "{memory: {backend: 'qmd',,}}", '{memory: {backend: "lancedb"}}'):
        _write(sample)
        seen.add(check_config_file(record=False)[0] is Verdict.CONFIG_INVALID)
    assert seen == {True, False}


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(tree=config_trees, data=st.data())
def test_whole_fast_probe_on_random_configs(tree, data):
    """discover + fast (config, gateway, qmd resolve, stores, log) on random configs: a receipt and a
    verdict, never a traceback. No ``openclaw`` on PATH, so the slow lane is not involved."""
    _write(_mutated(json.dumps(tree), data))
    ctx = discover(env=ENV, now=NOW)
    assert ctx.installed and ctx.agents
    for aid in ctx.agents[:2]:
        r = fast(ctx, aid, None, NOW)
        d = diagnose(r)
        if r.config.error is not None:
            assert d.verdict is Verdict.CONFIG_INVALID
        json.loads(to_json([(r, d)]))


LIST_KEYS = [("memory", "qmd", "paths"), ("agents", "defaults", "memorySearch", "extraPaths"),
             ("agents", "defaults", "memorySearch", "sources"), ("memory", "search", "extraPaths"), ("agents", "list")]


@pytest.mark.parametrize("keys", LIST_KEYS, ids=".".join)
@pytest.mark.parametrize("bad", [True, 1, "x", {"path": "x"}, None], ids=repr)
def test_a_list_key_holding_another_type_is_reported_not_raised(keys, bad):
    """The kind of the fuzz find ``{'memory': {'qmd': {'paths': True}}}`` (a TypeError): every list-valued key
    the probes iterate, holding a scalar or an object, gives settings and a verdict — never an exception."""
    tree: dict = {"memory": {"backend": "qmd"}}
    node = tree
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = bad
    snap = ConfigSnapshot(path="/x/openclaw.json", tree=tree)
    facts = config_facts(snap, "main", "2026.7.35", "/x/ws")
    assert facts.configured_backend == "qmd"
    if keys == ("memory", "qmd", "paths") and bad is not None:
        assert facts.error is not None and facts.error.key_path == "memory.qmd.paths"
