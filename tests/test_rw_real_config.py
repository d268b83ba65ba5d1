"""RW01/RW02 against the real OpenClaw builds: configs the real CLI refuses, read by clawprobe's config probe.

Each home is built once; the real CLI is run once per case to prove that OpenClaw itself refuses the same
file (and to record its own wording per build) — clawprobe's verdict never depends on that call.
"""

from __future__ import annotations

import pytest

from clawprobe.core.probe import collect, fast, slow
from tests.rw_support import check, context
from tests.testbed import OC_LATEST, OC_QMD, run_openclaw


@pytest.fixture(scope="module")
def plugin_backend(oc_home_factory, testbed):
    home = oc_home_factory({"memory": {"backend": "memory-lancedb"}}, name="rw01")
    home.write_memory_md()
    ctx = context(home, testbed, OC_QMD)
    ev = slow(ctx, "main")
    return home, ev, fast(ctx, "main", ev)


def test_rw01_plugin_name_in_memory_backend(plugin_backend):
    home, ev, r = plugin_backend
    d = check("RW01", r, evidence="real config probe on the file (OpenClaw 2026.7.35 refuses it: recorded in 735-config-validate)")
    e = r.config.error
    assert (e.key_path, e.allowed) == ("memory.backend", ["builtin", "qmd"]) and e.file == str(home.config_path)
    assert "plugins.slots.memory" in e.message
    # no memory probe while the config does not load (RW01): the CLI is not run at all (that the real CLI
    # refuses such a file is recorded in tests/data/recorded/735-config-rejected and 735-config-validate)
    assert ev.status is None and ev.errors == ["openclaw CLI not run: the config does not load (schema)"]
    assert d.modes and r.canary.outcome is None  # no memory probe reported while the config does not load


def test_rw01_variant_wrong_type_and_misplaced_key(oc_home_factory, testbed):
    home = oc_home_factory({"memory": {"backend": "qmd", "qmd": {"searchMode": "search", "limits": {"timeoutMs": "4s"}}}},
                           name="rw01b")
    ctx = context(home, testbed, OC_QMD)
    r = fast(ctx, "main", None)
    check("RW01-wrong-type", r, evidence="real: openclaw 2026.7.35 `config validate --json` agrees (invalid)")
    assert r.config.error.key_path == "memory.qmd.limits.timeoutMs" and "got string" in r.config.error.message
    oc = run_openclaw(home, OC_QMD, "config", "validate", "--json", testbed=testbed)
    assert oc.rc == 1 and oc.json()["valid"] is False and "timeoutMs" in oc.stdout


def _raw_newline_config(home) -> str:
    lines = ["{", "  // written by a provisioning script", "  agents: {", "    defaults: {",
             f"      workspace: '{home.workspace}',", "      memorySearch: { provider: 'none' },", "    },", "  },",
             f"  logging: {{ file: '{home.log_file}' }},", "  memory: {", "    backend: 'qmd',",
             "    qmd: { searchMode: 'search' },", "  },", "  ui: {",
             '    assistantName: "Ops', 'helper",', "  },", "}"]
    assert lines[14].startswith('    assistantName: "Ops') and len(lines) == 18
    return "\n".join(lines) + "\n"


def test_rw02_raw_newline_in_generated_config(oc_home_factory, testbed):
    home = oc_home_factory(None, name="rw02")
    home.write_config(_raw_newline_config(home))
    before = home.config_path.read_bytes()
    ctx = context(home, testbed, OC_QMD)
    r = collect(ctx, "main")  # a config that does not parse: no CLI probe runs at all
    check("RW02", r, evidence="real: openclaw 2026.9.6 `memory status --json` refuses the file (its own line:col)")
    e = r.config.error
    assert (e.line, e.column) == (15, len('    assistantName: "Ops') + 1) and "unescaped line break" in e.message
    assert home.config_path.read_bytes() == before  # never rewritten or "normalised"
    assert not r.probe_errors and r.canary.outcome is None
    oc = run_openclaw(home, OC_LATEST, "memory", "status", "--json", testbed=testbed)
    assert oc.rc == 1 and "JSON5: invalid character '\\\\n' at 16:0" in oc.stdout  # the real 2026.9.6 wording


def test_rw02_variant_unreadable_kinds(oc_home_factory, testbed):
    home = oc_home_factory(None, name="rw02b")
    home.write_config(f'{{ "$include": "./memory.json5", agents: {{ defaults: {{ workspace: "{home.workspace}" }} }} }}\n')
    ctx = context(home, testbed, OC_LATEST)
    r = fast(ctx, "main", None)
    check("RW02-include", r, evidence="real: openclaw 2026.9.6 `config validate --json` refuses the missing $include")
    assert r.config.error.kind == "include" and "memory.json5" in r.config.error.message
    oc = run_openclaw(home, OC_LATEST, "config", "validate", "--json", testbed=testbed)
    assert oc.rc != 0 and "memory.json5" in (oc.stdout + oc.stderr)
