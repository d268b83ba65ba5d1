"""A configured QMD notes path that does not exist (a typo: ``~/runbok`` for ``~/runbook``), on the real OpenClaw
2026.7.35 with qmd 2.8.3 (breaker round 9, p14). OpenClaw's canary ``memory search`` creates the missing directory,
empty, as a collection — clawprobe's own check ran ``mkdir`` in the operator's home, and from then on the typo
looked ``healthy``. Now the canary search is withheld (``unverified · root_missing``), nothing is created and the
index stays byte-identical; the repair lists the parent (where the right name shows); after the path is fixed in
the config and one index run, the check is healthy. Real: two index runs, two checks."""

from __future__ import annotations

import hashlib
import json

from clawprobe.core import canary_write
from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD, qmd_config, run_openclaw

AGENT = "kb-ops"


def _config(extra_path: str) -> dict:
    return qmd_config(agents={"list": [{"id": AGENT, "default": True, "memorySearch": {"extraPaths": [extra_path]}}]})


def test_a_missing_configured_path_is_not_created_by_the_check_and_is_named(oc_home_factory, testbed, tmp_path):
    home = oc_home_factory(qmd_config(agents={"list": [{"id": AGENT, "default": True}]}), name="typo", agent_id=AGENT)
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    runbook = home.home / "runbook"
    runbook.mkdir()
    (runbook / "pump.md").write_text("# Pump\n\nThe pump code is OTTER-BELL-12.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, AGENT, root=data)
    index = ("memory", "index", "--agent", AGENT)
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    home.write_config(_config("~/runbok"))  # the typo
    typo = home.home / "runbok"
    before = hashlib.sha256(home.qmd_index().read_bytes()).hexdigest()
    env = check_env(home, testbed, data)

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"], got["reason"]) == (3, "unverified", "root_missing"), (got["diagnosis"]["evidence"],
                                                                                       err[-300:])
    assert not typo.exists(), "clawprobe's check created the configured path"
    assert hashlib.sha256(home.qmd_index().read_bytes()).hexdigest() == before, "clawprobe's check wrote the index"
    assert got["receipt"]["coverage"]["missing_roots"] == [str(typo)]
    assert got["next_command"] == f"ls -la {home.home}"
    assert any(f["tag"] == "extra_path_missing" for f in got["receipt"]["findings"])

    home.write_config(_config("~/runbook"))  # fixed in the config, then indexed
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (rc, got["verdict"]) == (0, "healthy"), got["diagnosis"]["evidence"]
    assert not typo.exists()


def test_a_tilde_path_resolves_against_openclaw_home(oc_home_factory, testbed, tmp_path):
    """Breaker round 10, s15: with ``$OPENCLAW_HOME`` set, OpenClaw resolves ``~`` in ``memory.qmd.paths`` against it
    (``resolveUserPath``), not ``$HOME`` — clawprobe called the existing ``~/kb`` missing and withheld the search for
    good. Only the qmd check runs (``--no-openclaw``)."""
    oc_home = tmp_path / "srv"
    (oc_home / "kb").mkdir(parents=True)
    (oc_home / "kb" / "k.md").write_text("# KB\n\nsrvheron\n")
    home = oc_home_factory(qmd_config(qmd={"paths": [{"path": "~/kb", "name": "kb"}]}), name="ochome")
    home.write_memory_md()
    for where, missing in ((str(oc_home), []), (None, [str(home.home / "kb")])):
        env = check_env(home, testbed, tmp_path / "data", extra={"OPENCLAW_HOME": where} if where else None)
        rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw"], env)
        got = json.loads(out)["receipts"][0]["receipt"]
        assert got["coverage"]["missing_roots"] == missing, (where, err[-300:])
        assert any(f["tag"] == "extra_path_missing" for f in got["findings"]) is bool(missing)


def test_a_glob_in_a_configured_qmd_path_is_taken_literally_and_named(oc_home_factory, testbed, tmp_path):
    """Breaker round 24: ``memory.qmd.paths`` entries ``<root>/kb/*`` and ``~/docs/proj-?``. OpenClaw 2026.7.35 takes
    each path literally — its index run creates empty directories named ``*`` and ``proj-?``, the collections hold
    0 files — so the notes in ``kb/team`` and ``docs/proj-a`` are never found; clawprobe said ``healthy`` (the
    literal directories exist and are empty). Now each directory a glob names is a ``glob_path`` skip:
    ``retrieval_failed · unsearchable_notes`` whose action shows the configured paths; with the parents configured
    (and a pattern), one index run finds the notes and the check is no longer retrieval_failed."""
    kb, docs = tmp_path / "kb", None
    home = oc_home_factory(qmd_config(agents={"list": [{"id": AGENT, "default": True}]}), name="glob", agent_id=AGENT)
    docs = home.home / "docs"
    for d, word in ((kb / "team", "KESTREL-FAILOVER-7"), (docs / "proj-a", "HERON-LOCKER-3")):
        d.mkdir(parents=True)
        (d / "note.md").write_text(f"# Note\n\nThe code is {word}.\n")
    home.update_config({"memory": {"qmd": {"paths": [{"path": f"{kb}/*", "name": "kb"},
                                                     {"path": "~/docs/proj-?", "name": "docs"}]}}})
    home.write_memory_md("# Memory\n\nThe user prefers tea.\n")
    data = tmp_path / "data"
    canary_write.plant(home.workspace, AGENT, root=data)
    index = ("memory", "index", "--agent", AGENT)
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    assert (kb / "*").is_dir() and (docs / "proj-?").is_dir()  # what OpenClaw made of the globs
    env = check_env(home, testbed, data)

    rc, out, err = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert (got["verdict"], got["reason"]) == ("retrieval_failed", "unsearchable_notes"), (
        got["diagnosis"]["evidence"], err[-300:])
    text = " | ".join(got["diagnosis"]["evidence"])
    assert "kb/team (glob_path)" in text and "docs/proj-a (glob_path)" in text, text
    assert got["next_command"].endswith("config get memory.qmd.paths"), got["next_command"]

    home.update_config({"memory": {"qmd": {"paths": [{"path": str(kb), "name": "kb", "pattern": "**/*.md"},
                                                     {"path": "~/docs", "name": "docs", "pattern": "**/*.md"}]}}})
    (kb / "*").rmdir()
    (docs / "proj-?").rmdir()
    assert run_openclaw(home, OC_QMD, *index, path_dirs=[testbed.bin_dir], timeout=240, testbed=testbed).rc == 0
    rc, out, _ = run_clawprobe(["check", "--json"], env, timeout=300)
    got = json.loads(out)["receipts"][0]
    assert got["verdict"] != "retrieval_failed", got["diagnosis"]["evidence"]
    assert "glob_path" not in json.dumps(got["receipt"]["coverage"])
