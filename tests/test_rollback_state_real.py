"""A rollback: OpenClaw 2026.9.6 wrote the config (``memory.search``, ``agents.entries``) and the state database, and
the real 2026.7.35 CLI runs now (breaker round 9, p09). Its schema rejects the keys, so the verdict is
``config_invalid · schema`` — but the one next action was "move memory.search by hand", after which 7.35 refuses the
state itself ("uses newer schema version 18; this build supports 1", measured) and memory stays dead. The state
database names its writer (``schema_meta.app_version``); with it the action is to reinstall that release. The
state database here has the layout and row 2026.9.6 writes (measured); only ``openclaw --version`` runs."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.hardening_helpers import check_env, run_clawprobe
from tests.testbed import OC_QMD

SCHEMA_META = """CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL,
  schema_version INTEGER NOT NULL, agent_id TEXT, app_version TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL) STRICT"""


def _state_db(state_dir, app_version: str | None, schema_version: int) -> None:
    (state_dir / "state").mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(state_dir / "state" / "openclaw.sqlite")
    con.execute(SCHEMA_META)
    con.execute("INSERT INTO schema_meta VALUES ('primary', 'global', ?, '', ?, 1796278529371, 1796278529371)",
                (schema_version, app_version))
    con.commit()
    con.close()


@pytest.mark.parametrize(("writer", "schema", "command"), [
    ("2026.9.6", 18, "npm install -g openclaw@2026.9.6"),  # the newer release wrote the state: put it back
    (None, 1, "${EDITOR:-vi} "),                            # 2026.7.35's own state (no app_version): the hand edit
    ("2026.7.35", 1, "${EDITOR:-vi} "),                     # not newer than the running build
])
def test_a_rollback_under_a_newer_state_reinstalls_the_release_that_wrote_it(oc_home_factory, testbed, tmp_path,
                                                                            writer, schema, command):
    agents = {"entries": {"ops-7": {}}}
    home = oc_home_factory({"memory": {"search": {"provider": "none"}}, "agents": agents}, name="rollback",
                           agent_id="ops-7")
    home.write_memory_md()
    _state_db(home.state_dir, writer, schema)
    before = (home.state_dir / "state" / "openclaw.sqlite").read_bytes()
    env = check_env(home, testbed, tmp_path / "data", openclaw=testbed.openclaw(OC_QMD))

    rc, out, err = run_clawprobe(["check", "--json", "--no-openclaw", "--agent", "ops-7"], env)
    assert "Traceback" not in err, err
    (entry,) = json.loads(out)["receipts"]
    d = entry["diagnosis"]
    assert (rc, d["verdict"], d["reason"]) == (2, "config_invalid", "schema"), d["evidence"]
    assert entry["receipt"]["openclaw"]["state_written_by"] == (writer if schema == 18 else None)
    assert entry["next_command"].startswith(command), entry["next_command"]
    assert (home.state_dir / "state" / "openclaw.sqlite").read_bytes() == before
