"""``clawprobe canary plant`` asks the real OpenClaw 2026.9.6 validator before it writes: clawprobe's own schema
is OpenClaw 2026.7.35's and is lenient on later builds, so a key only 2026.9.6 rejects
(``agents.entries.<id>.memory.search.extraPaths`` not a list) must still stop the plant — nothing written —
and the same home with the key fixed is planted. Two ``openclaw config validate --json`` calls (≈ 3.5 s each).
"""

from __future__ import annotations

import json
import os

from clawprobe.cli.main import main
from clawprobe.core import canary as cn
from tests.testbed import OC_LATEST, builtin_config, openclaw_env


def test_plant_is_refused_while_openclaw_rejects_the_config_and_done_once_it_loads(oc_home_factory, testbed,
                                                                                   monkeypatch, capsys, tmp_path):
    bad = builtin_config("none", version=OC_LATEST,
                         agents={"entries": {"main": {"memory": {"search": {"extraPaths": "notes"}}}}})
    home = oc_home_factory(bad, name="plant-96")
    home.write_memory_md()
    env = openclaw_env(home, OC_LATEST, testbed=testbed)
    for k in [k for k in os.environ if k.startswith(("OPENCLAW_", "CLAWPROBE_"))]:
        monkeypatch.delenv(k)
    for k, v in {**env, "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                 "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}.items():
        monkeypatch.setenv(k, v)
    canary = home.workspace / cn.CANARY_REL

    rc = main(["canary", "plant", "--yes"])
    err = capsys.readouterr().err
    assert rc == 3 and "openclaw config validate" in err, err
    assert "agents.entries.main.memory.search.extraPaths" in err and "expected array" in err, err
    assert not canary.exists() and not (tmp_path / "data").exists()

    fixed = json.loads(home.config_path.read_text())
    fixed["agents"]["entries"]["main"]["memory"]["search"]["extraPaths"] = ["notes"]
    home.write_config(fixed)
    rc = main(["canary", "plant", "--yes"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert canary.read_text().startswith(cn.HEADER) and cn.load(str(home.workspace), "main") is not None


def test_several_agents_on_2026_9_6_need_one_named(oc_home_factory, testbed, monkeypatch, capsys):
    """2026.9.6 retired the agents' ``default`` markers ("Removed retired agents.entries.*.default markers"): with
    several agents an operation names its agent or has no owner. ``canary plant`` planted for the old marker's
    agent all the same (breaker round 5); it asks which, and writes nothing."""
    home = oc_home_factory(builtin_config("none", version=OC_LATEST), name="two-default")
    cfg = json.loads(home.config_path.read_text())
    cfg["agents"]["entries"] = {"alpha": {}, "beta": {"default": True}}
    home.config_path.write_text(json.dumps(cfg))
    for k in [k for k in os.environ if k.startswith(("OPENCLAW_", "CLAWPROBE_"))]:
        monkeypatch.delenv(k)
    for k, v in {**openclaw_env(home, OC_LATEST, testbed=testbed), "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                 "CLAWPROBE_DATA_DIR": str(home.root / "data")}.items():
        monkeypatch.setenv(k, v)
    rc = main(["canary", "plant", "--yes"])
    err = capsys.readouterr().err
    assert rc == 3 and "names no default" in err and "alpha" in err and "beta" in err, err
    assert not list(home.state_dir.parent.rglob("clawprobe-canary.md"))


def test_plant_without_any_config_file_is_done_as_openclaw_runs_on_its_defaults(oc_home_factory, testbed,
                                                                                monkeypatch, capsys):
    """A state dir with no ``openclaw.json``: OpenClaw 2026.9.6 runs on its defaults (``memory status`` works, the
    workspace is ``<state>/workspace``) though its ``config validate`` says "file not found". ``check`` tells the
    operator to plant a canary there; the plant was refused as "the OpenClaw config does not load" (new-user
    round 22). It is planted in the default workspace."""
    home = oc_home_factory(None, name="no-config")
    assert not home.config_path.exists()
    ws = home.default_workspace(OC_LATEST)
    (ws / "memory").mkdir(parents=True)
    for k in [k for k in os.environ if k.startswith(("OPENCLAW_", "CLAWPROBE_"))]:
        monkeypatch.delenv(k)
    for k, v in {**openclaw_env(home, OC_LATEST, testbed=testbed), "CLAWPROBE_OPENCLAW": str(testbed.openclaw(OC_LATEST)),
                 "CLAWPROBE_DATA_DIR": str(home.root / "data")}.items():
        monkeypatch.setenv(k, v)
    st = str(home.state_dir)
    assert main(["canary", "show", "--state-dir", st]) == 0
    out = capsys.readouterr().out  # its hint acts on this install, not on ~/.openclaw
    assert f"plant one with: clawprobe --state-dir {st} canary plant --agent main" in out, out
    rc = main(["canary", "plant", "--yes", "--state-dir", st])
    out, err = capsys.readouterr()
    assert rc == 0 and "does not load" not in err, err
    assert (ws / cn.CANARY_REL).read_text().startswith(cn.HEADER) and cn.load(str(ws), "main") is not None
    # the commands it prints carry the state dir (README: repair commands for a --state-dir install carry it)
    assert f"OPENCLAW_STATE_DIR={st} {testbed.openclaw(OC_LATEST)} memory index --agent main" in out, out
    assert f"then clawprobe --state-dir {st} check --agent main" in out, out
