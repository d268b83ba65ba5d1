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
