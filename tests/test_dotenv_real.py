"""``${VAR}`` in the config is resolved from the dotenv files OpenClaw loads, parsed as OpenClaw parses them:

* the parser equals the real dotenv 17.4.2 that OpenClaw 2026.9.6 ships (run by the test bed's Node on the
  same texts: inline comments, quotes, multi-line values, ``export``, ``KEY: value``, non-portable keys);
* ``~/.config/openclaw/gateway.env`` counts for the default state dir only, after ``<state>/.env`` (first wins),
  and the process environment beats both — a workspace set through either file was looked for at the literal
  ``${NOTES_HOME}/ws``, and an inline ``# comment`` was kept in the path.
"""

from __future__ import annotations

import json
import subprocess

from clawprobe.core.probes.config import parse_dotenv, read_config, runtime_dotenv

TEXTS = [
    "# comment\nA=1\nexport B = two words  # comment\nC=\"quoted # kept\"\nD='single'\nA=again\n",
    'E="multi\nline"\nF="a\\nb"\nG: colon\nbad-key=x\nH=\nI=x#y\nJ=`back`\n',
    "K = \"unterminated\nL=ok # c\nM=\"inner \"quotes\" x\"\nN=  spaced  \r\nO=crlf\r\n",
    "NOTES=/srv/notes   # where my notes live\n\n  P = ' padded '  \nQ==eq\nR=a=b\n",
]


def test_the_parser_equals_openclaws_dotenv(testbed, tmp_path):
    dotenv = testbed.openclaw_package("2026.9.6").parent / "dotenv"
    script = ("const d=require(process.argv[1]);const out=[];for(const t of JSON.parse(process.argv[2])){"
              "const r={};for(const [k,v] of Object.entries(d.parse(Buffer.from(t))))"
              "if(/^[A-Za-z_][A-Za-z0-9_]*$/.test(k.trim()))r[k.trim()]=v;out.push(r)}console.log(JSON.stringify(out))")
    res = subprocess.run([str(testbed.node), "-e", script, str(dotenv), json.dumps(TEXTS)], capture_output=True,
                         text=True, timeout=60, check=True)
    assert [parse_dotenv(t) for t in TEXTS] == json.loads(res.stdout)


def test_gateway_env_counts_for_the_default_state_dir_after_the_state_env(tmp_path):
    home = tmp_path / "home"
    state = home / ".openclaw"
    (home / ".config" / "openclaw").mkdir(parents=True)
    state.mkdir()
    (home / ".config" / "openclaw" / "gateway.env").write_text(
        f"NOTES_HOME={home}/notes   # the gateway's\nBOTH=gateway\nSHELL_SET=gateway\n")
    (state / ".env").write_text("BOTH=state\n")
    env = {"HOME": str(home), "SHELL_SET": "shell"}
    got = runtime_dotenv(str(state), env)
    assert got == {"BOTH": "state", "NOTES_HOME": f"{home}/notes", "SHELL_SET": "gateway"}
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert runtime_dotenv(str(other), {**env, "OPENCLAW_STATE_DIR": str(other)}) == {}, "an explicit other state dir"
    (state / "openclaw.json").write_text('{agents: {defaults: {workspace: "${NOTES_HOME}/ws"}}, x: "${SHELL_SET}"}')
    snap = read_config(str(state / "openclaw.json"), env, str(state))
    assert snap.error is None and snap.missing_env == []
    assert snap.tree["agents"]["defaults"]["workspace"] == f"{home}/notes/ws"


def test_the_configs_own_env_block_resolves_references_as_openclaw_does(oc_home_factory, testbed):
    """Breaker round 10, s13: ``memory.qmd.command: "${QMD_BIN}"`` with ``env.vars.QMD_BIN`` is a working config
    (OpenClaw applies the config's ``env`` block before it substitutes), yet clawprobe failed it as
    ``config_invalid · env``. One config, each reference fed from another pair of sources, compared with what the
    real 2026.7.35 ``config get`` resolves: ``env.vars`` alone; ``env.vars`` and ``env.<KEY>``; ``env.vars`` and
    ``<state>/.env`` (the dotenv file wins); ``env.vars`` and the process environment (the process wins)."""
    from tests.testbed import OC_QMD, qmd_config, run_openclaw

    paths = [{"path": f"${{{k}}}", "name": k.lower()} for k in ("B", "C", "D")]
    cfg = qmd_config("${A}", qmd={"paths": paths})
    cfg["env"] = {"vars": {"A": "/opt/a/qmd", "B": "/vars/b", "C": "/vars/c", "D": "/vars/d"},
                  "B": "/top/b"}
    home = oc_home_factory(cfg, name="cfgenv")
    (home.state_dir / ".env").write_text("C=/dotenv/c\n")
    env = home.env([], {"D": "/process/d"})
    got = run_openclaw(home, OC_QMD, "config", "get", "memory.qmd", "--json", extra_env={"D": "/process/d"},
                       timeout=120, testbed=testbed)
    theirs = json.loads(got.stdout)
    snap = read_config(str(home.config_path), env, str(home.state_dir))
    assert snap.error is None, snap.error
    ours = snap.tree["memory"]["qmd"]
    assert ours["command"] == theirs["command"] == "/opt/a/qmd"
    assert [p["path"] for p in ours["paths"]] == [p["path"] for p in theirs["paths"]]
