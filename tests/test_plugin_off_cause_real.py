"""The memory plugin switched off by its entry or by ``plugins.deny`` (tester's repro-5), on the real OpenClaw
2026.9.6: the slot already names memory-core, so ``config set plugins.slots.memory memory-core`` changed nothing and
the next check printed it again. The repair follows the measured cause, and running it with the real CLI ends the
verdict."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.probe import clear_caches, collect, discover
from clawprobe.core.probes.config import memory_settings
from clawprobe.core.repair_context import _deny_kept
from tests.testbed import OC_LATEST, builtin_config, openclaw_env, run_openclaw

pytest_plugins = ["tests.conftest_testbed"]


@pytest.mark.parametrize(("plugins", "cause", "command"), [
    ({"entries": {"memory-core": {"enabled": False}}}, "entry_disabled",
     "config set plugins.entries.memory-core.enabled true"),
    ({"deny": ["memory-core"]}, "denied", "config set plugins.deny '[]'"),
])
def test_the_repair_for_a_plugin_switched_off_turns_it_back_on(oc_home_factory, testbed, plugins, cause, command):
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name=f"pluginoff-{cause}")
    home.write_memory_md("# Memory\n\nThe staging database lives on host db-stage-04.\n")
    assert run_openclaw(home, OC_LATEST, "memory", "index", testbed=testbed).rc == 0
    home.update_config({"plugins": plugins})
    env = home.env([], {"CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST))})
    clear_caches()
    r = collect(discover(env=env), "main")
    d = diagnose(r)
    assert (d.verdict.value, d.reason) == ("memory_unavailable", "plugin_off"), d.evidence
    cmd = d.next_action.command or ""
    assert cmd == f"openclaw {command}" and "plugins.slots.memory" not in cmd, (cmd, r.config.memory_off)
    # the printed command, run by the real CLI in the home, ends the verdict
    oc = shlex.quote(str(testbed.openclaw(OC_LATEST)))
    done = subprocess.run(["bash", "-c", f"{oc} {command}"], cwd=home.home, capture_output=True, text=True,
                          timeout=90, env=openclaw_env(home, OC_LATEST, [], testbed=testbed))
    assert done.returncode == 0, done.stderr
    clear_caches()
    after = diagnose(collect(discover(env=env), "main"))
    assert after.reason != "plugin_off" and after.verdict.value != "memory_unavailable", after.evidence


def test_the_deny_list_is_written_back_without_the_memory_plugin_only():
    s = memory_settings({"plugins": {"deny": ["foo", "memory-core", "bar"]}}, "main")
    assert s.memory_off == 'plugins.deny = ["foo", "memory-core", "bar"] (blocks memory-core)'
    assert _deny_kept(s.memory_off) == """'["foo", "bar"]'"""
    slot = memory_settings({"plugins": {"slots": {"memory": "memory-lancedb"},
                                        "entries": {"memory-core": {"enabled": False},
                                                    "memory-lancedb": {"enabled": False}}}}, "main")
    assert slot.memory_off == "plugins.entries.memory-lancedb.enabled = false"
    assert memory_settings({"plugins": {"entries": {"memory-core": {"enabled": True}}}}, "main").memory_off is None
