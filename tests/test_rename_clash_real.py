"""A skipped note whose searchable name is already taken (breaker round 24), on the real builtin engine of both
eras: ``memory.md`` beside ``MEMORY.md`` at the workspace root (2026.9.6 indexes only ``MEMORY.md``), ``Trip.MD``
beside ``Trip.md`` under ``memory/`` (2026.7.35 indexes names ending in ``.md`` only) — two files on Linux.
clawprobe said ``retrieval_failed · unsearchable_notes`` (right) and walked the operator to "memory.md → MEMORY.md"
/ "note.MD → note.md": that rename overwrites the note the engine does index. The repair now reads the measured
clash (:func:`clawprobe.core.probes.workspace.rename_clashes`): it diffs the two, merges the skipped one into the
indexed one and removes it; after that and one index run the check is healthy and both notes' words are found
(``openclaw memory search``, the truth). Real: one index run per state, two checks, one search per word."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from clawprobe.core.probes.workspace import default_qmd_collections, rename_clashes, scan_builtin, scan_qmd, scan_skips
from tests.hardening_helpers import built_per_case, check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, qmd_config, run_openclaw

# (era, agent, indexed note, skipped note, word only the indexed one holds, word only the skipped one holds)
CASES = [
    (OC_LATEST, "ops-bot", "MEMORY.md", "memory.md", "ferry-quinoa-31", "zeppelin-quartz-58"),
    (OC_QMD, "main", "memory/Trip.md", "memory/Trip.MD", "harbour-larch-22", "glacier-umber-74"),
    (OC_QMD, "kb-7", "memory/trips/Trip.md", "memory/trips/Trip.MD", "sorrel-kiln-40", "tundra-wick-93"),
]
QMD_AGENTS = {"kb-7"}  #: these run the QMD backend (qmd's `**/*.md` is case-sensitive too)


def _state(oc_home_factory, testbed, tmp_path_factory, case):
    version, agent, kept, skipped, kept_word, skipped_word = case
    agents = {"list": [{"id": agent, "default": True}]}
    cfg = qmd_config(agents=agents) if agent in QMD_AGENTS else builtin_config("none", version=version, agents=agents)
    home = oc_home_factory(cfg, name=f"clash-{agent}", agent_id=agent)
    if kept != "MEMORY.md":
        home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    home.write_file(kept, f"# Notes\n\nThe indexed note says {kept_word}.\n")
    home.write_file(skipped, f"# Older notes\n\nThe skipped note says {skipped_word}.\n")
    data = tmp_path_factory.mktemp(f"data-{agent}")
    planted_and_indexed(home, testbed, data, agent, version=version)
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(version))
    rc, out, err = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    return home, env, data, rc, json.loads(out)["receipts"][0], err


@pytest.fixture(scope="module")
def clashes(oc_home_factory, testbed, tmp_path_factory):
    return built_per_case(lambda c: _state(oc_home_factory, testbed, tmp_path_factory, c), CASES)


def test_rename_clashes_names_only_a_skipped_note_whose_right_name_is_taken(tmp_path):
    """The gather reads the disk: ``memory.md`` beside ``MEMORY.md`` and ``a.MD``/``b.markdown`` beside ``a.md``/
    ``b.md`` clash; a lone ``memory.md``, a lone ``c.MD`` and a ``memory.md`` below ``memory/`` (not a root file)
    do not."""
    ws = tmp_path / "ws"
    (ws / "memory" / "sub").mkdir(parents=True)
    for rel in ("MEMORY.md", "memory.md", "memory/a.MD", "memory/a.md", "memory/b.markdown", "memory/b.md",
                "memory/c.MD", "memory/sub/memory.md"):
        (ws / rel).write_text("# note\n\nwords\n")
    got = rename_clashes(scan_skips(scan_builtin(str(ws))), str(ws))
    assert got == {str(ws / "memory.md"): str(ws / "MEMORY.md"), str(ws / "memory/a.MD"): str(ws / "memory/a.md"),
                   str(ws / "memory/b.markdown"): str(ws / "memory/b.md")}, got
    (ws / "MEMORY.md").unlink()
    assert str(ws / "memory.md") not in rename_clashes(scan_skips(scan_builtin(str(ws))), str(ws))


@pytest.mark.parametrize("agent", ["main", "kb-7"])
def test_a_qmd_collection_clash_is_read_from_a_full_scan_and_from_the_dashboards_cache(tmp_path, agent):
    """The QMD engine skips ``Trip.MD`` beside ``Trip.md`` too (its ``**/*.md`` is case-sensitive), and the repair
    then named the same overwriting rename: the clash is read on the QMD path as well — from a full scan
    (``check``) and from the dashboard's watcher-driven cache, which answers without one."""
    from clawprobe.core.probes.workspace_cache import WorkspaceCache
    from tests.test_workspace_cache import NOW, index_of

    ws = tmp_path / "ws"
    (ws / "memory" / "trips").mkdir(parents=True)
    for rel in ("MEMORY.md", "memory/trips/Trip.md", "memory/trips/Trip.MD", "memory/Lone.MD"):
        (ws / rel).write_text("# note\n\nwords\n")
    cols = default_qmd_collections(agent, str(ws))
    want = {str(ws / "memory/trips/Trip.MD"): str(ws / "memory/trips/Trip.md")}
    assert rename_clashes(scan_skips(scan_qmd(cols, str(ws))), str(ws)) == want
    cache = WorkspaceCache()
    cache.watch([str(ws / "memory")], grace_s=0)
    facts = index_of(ws, cols)
    cache.compare_qmd(cols, str(ws), facts, NOW)
    assert cache.compare_qmd(cols, str(ws), facts, NOW)[1] is None  # answered from the cache
    assert rename_clashes(cache.skipped(), str(ws)) == want


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_taken_name_is_merged_not_renamed_over_and_the_merge_makes_both_notes_searchable(clashes, testbed, case):
    version, agent, kept, skipped, kept_word, skipped_word = case
    home, env, data, rc, got, err = clashes[case]
    d = got["diagnosis"]
    assert (rc, got["verdict"], d["reason"]) == (2, "retrieval_failed", "unsearchable_notes"), (d["evidence"], err)
    na = d["next_action"]
    cmd = na["command"] or ""
    assert shlex.split(cmd) == ["diff", "-u", str(home.workspace / kept), str(home.workspace / skipped)], cmd
    assert "overwrite" in na["title"] and str(home.workspace / skipped) in na["title"], na["title"]
    steps = " ".join(s["check"] for s in na["steps"])
    assert "→ MEMORY.md" not in steps and "→ note.md" not in steps and f">> {home.workspace / kept}" in steps, steps
    # the step, as said: append the skipped note to the indexed one, remove it, run the index, re-check
    subprocess.run(["bash", "-c", f"cat {shlex.quote(str(home.workspace / skipped))} >> "
                                  f"{shlex.quote(str(home.workspace / kept))} && rm {shlex.quote(str(home.workspace / skipped))}"],
                   check=True)
    made = run_openclaw(home, version, "memory", "index", "--agent", agent, timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr[-400:]
    rc2, out2, err2 = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    after = json.loads(out2)["receipts"][0]
    assert (rc2, after["verdict"]) == (0, "healthy"), (after["diagnosis"]["evidence"], err2[-300:])
    for word in (kept_word, skipped_word):
        found = run_openclaw(home, version, "memory", "search", word, "--json", "--agent", agent, timeout=240,
                             testbed=testbed)
        assert found.rc == 0 and word in found.stdout, (word, found.stdout[-600:], found.stderr[-300:])
