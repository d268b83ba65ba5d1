"""An ``extraPaths`` entry written as a wildcard (breaker round 24), on the real builtin engine of both eras:
``<notes>/*.md`` (2026.9.6, ``memory.search.extraPaths``) and ``../vault/**`` (2026.7.35, the agent's own
``memorySearch.extraPaths``). Neither build expands it: the entry is resolved as a literal path, which does not
exist, and skipped without a word — ``openclaw memory search`` never finds the notes it matches. clawprobe said
``healthy`` (exit 0), a missing extra path being a warning only. The scan now reads what the wildcard matches
(:func:`clawprobe.core.probes.workspace.glob_matches`): those notes are skipped by the engine's rules
(``retrieval_failed · unsearchable_notes``), and the repair names the directory to configure instead. After the
config says so (the directory; on 2026.9.6 a ``{path, pattern}`` entry) and one index run, the check is healthy
and the note is found. Real: two index runs per state, two checks, two searches."""

from __future__ import annotations

import json
import shlex

import pytest

from clawprobe.core.probes.workspace import glob_matches, glob_roots
from tests.hardening_helpers import built_per_case, check_env, planted_and_indexed, run_clawprobe
from tests.testbed import OC_LATEST, OC_QMD, builtin_config, run_openclaw

# (era, agent, notes dir name, the wildcard as configured ({notes}: its absolute path), the word in the note)
CASES = [
    (OC_LATEST, "ops-bot", "notes", "{notes}/*.md", "glacier-umber-74"),
    (OC_QMD, "kb-7", "vault", "../vault/**", "harbour-larch-22"),
    # the wildcard's literal directory already there, empty (QMD's first run makes it): OpenClaw reads that
    # empty '*' dir and never the notes beside it (breaker round 24, variant)
    (OC_QMD, "main", "kb", "{notes}/*", "cobalt-fennel-31"),
]


def _config(version: str, agent: str, extra: list) -> dict:
    if version == OC_LATEST:
        return builtin_config("none", version=version, memory={"search": {"extraPaths": extra}},
                              agents={"list": [{"id": agent, "default": True}]})
    return builtin_config("none", version=version,
                          agents={"list": [{"id": agent, "default": True, "memorySearch": {"extraPaths": extra}}]})


def _search(home, version, agent, word, testbed) -> str:
    found = run_openclaw(home, version, "memory", "search", word, "--json", "--agent", agent, timeout=240,
                         testbed=testbed)
    assert found.rc == 0, found.stderr[-400:]
    return found.stdout


def _state(oc_home_factory, testbed, tmp_path_factory, case):
    version, agent, name, wildcard, word = case
    home = oc_home_factory(None, name=f"glob-{agent}", agent_id=agent)
    notes = home.root / name
    (notes / "trips").mkdir(parents=True)
    if wildcard.endswith("/*"):
        (notes / "*").mkdir()
    (notes / "trips" / "trip.md" if wildcard.endswith(("**", "/*")) else notes / "trip.md").write_text(
        f"# Trip\n\nThe code is {word}.\n")
    raw = wildcard.format(notes=notes)
    home.write_config(_config(version, agent, [raw]))
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path_factory.mktemp(f"data-{agent}")
    planted_and_indexed(home, testbed, data, agent, version=version)
    before = _search(home, version, agent, word, testbed)
    env = check_env(home, testbed, data, openclaw=testbed.openclaw(version))
    rc, out, err = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    return home, env, notes, raw, before, rc, json.loads(out)["receipts"][0], err


@pytest.fixture(scope="module")
def globbed(oc_home_factory, testbed, tmp_path_factory):
    return built_per_case(lambda c: _state(oc_home_factory, testbed, tmp_path_factory, c), CASES)


def test_glob_matches_reads_only_a_missing_wildcard_path_that_names_notes(tmp_path):
    """Notes a wildcard matches, recursively for a matched dir; nothing for a path that exists (a dir literally
    named ``*`` is OpenClaw's to read), for a wildcard matching no note, or for a plain path."""
    kb = tmp_path / "kb"
    (kb / "deep").mkdir(parents=True)
    for rel in ("a.md", "b.txt", "deep/c.md"):
        (kb / rel).write_text("note\n")
    assert glob_matches(f"{kb}/*.md") == [str(kb / "a.md")]
    assert glob_matches(f"{kb}/*") == [str(kb / "a.md"), str(kb / "deep" / "c.md")]
    assert glob_matches(f"{kb}/**/*.md") == [str(kb / "a.md"), str(kb / "deep" / "c.md")]
    assert glob_matches(f"{kb}/*.txt") == [] and glob_matches(str(kb / "a.md")) == []
    (tmp_path / "lit*").mkdir()
    assert glob_matches(str(tmp_path / "lit*")) == []
    (kb / "*").mkdir()  # an empty literal dir (QMD made it) reads nothing: the notes the wildcard names are skipped
    assert glob_matches(f"{kb}/*") == [str(kb / "a.md"), str(kb / "deep" / "c.md")]
    (kb / "*" / "own.md").write_text("note\n")  # a literal dir holding notes is what the operator meant
    assert glob_matches(f"{kb}/*") == []
    assert glob_roots(["../kb/**/*.md", "~/kb/*.md", "../kb"], str(tmp_path / "ws"), str(tmp_path)) == {
        "../kb/**/*.md": str(kb), "~/kb/*.md": str(kb)}


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_wildcard_extra_path_is_not_healthy_and_its_directory_makes_the_notes_searchable(globbed, testbed,
                                                                                           case):
    version, agent, _, _, word = case
    home, env, notes, raw, before, rc, got, err = globbed[case]
    assert word not in before  # the truth: OpenClaw never reads the notes the wildcard matches
    d = got["diagnosis"]
    assert (rc, got["verdict"], d["reason"]) == (2, "retrieval_failed", "unsearchable_notes"), (d["evidence"], err)
    assert "pattern_excluded" in d["evidence"][0] and "trip.md" in d["evidence"][0], d["evidence"]
    na = d["next_action"]
    assert shlex.split(na["command"]) == ["ls", "-la", str(notes)], na["command"]
    assert str(notes) in na["title"] and "wildcard" in na["title"], na["title"]
    assert "index" not in shlex.split(na["command"]) and "--force" not in json.dumps(na)
    # the repair, as said: the directory in the wildcard's place (2026.9.6: with the wildcard as its pattern)
    fixed = {"path": str(notes), "pattern": raw.rsplit("/", 1)[1]} if version == OC_LATEST else str(notes)
    home.write_config(_config(version, agent, [fixed]))
    made = run_openclaw(home, version, "memory", "index", "--agent", agent, timeout=240, testbed=testbed)
    assert made.rc == 0, made.stderr[-400:]
    rc2, out2, err2 = run_clawprobe(["check", "--json", "--agent", agent], env, timeout=300)
    after = json.loads(out2)["receipts"][0]
    assert (rc2, after["verdict"]) == (0, "healthy"), (after["diagnosis"]["evidence"], err2[-300:])
    assert word in _search(home, version, agent, word, testbed)


def test_a_wildcard_over_notes_another_root_indexes_skips_nothing(tmp_path):
    """``memory/**/*.md`` in extraPaths is no path to OpenClaw either, but ``memory/`` is read anyway: its notes are
    indexed, none is skipped; a wildcard beside them over notes no root reads is."""
    from clawprobe.core.probes.workspace import scan_builtin

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "a.md").write_text("note\n")
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "b.md").write_text("note\n")
    scan = scan_builtin(str(ws), ["memory/**/*.md", "../kb/*.md"])
    assert [f.key for f in scan.files] == ["memory/a.md"]
    assert [(s.rel, s.reason) for s in scan.skipped] == [("../kb/b.md", "pattern_excluded")]
    assert scan.root_notes == {"../kb/*.md": {"pattern_excluded": 1}}
