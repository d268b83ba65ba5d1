"""The builtin readiness gates on the real OpenClaw 2026.9.6 builtin engine (agent ``scribe-3``, provider
``none``, notes in Japanese and Chinese), through ``clawprobe.core.probe.gather`` + ``interpret``:

* the tokenizer-vs-script gap: the real store's FTS table is created without ``tokenize=`` (FTS5's
  ``unicode61``), the real ``openclaw memory search`` finds the whole CJK run but not a word inside it, and a
  Latin canary is found — clawprobe says ``retrieval_failed · tokenizer_script``, not healthy, with the
  trigram setting OpenClaw 2026.9.6 accepts (``memory.search.store.fts.tokenizer``, verified by hand: the
  table then says ``tokenize='trigram case_sensitive 0'`` and the inner word is found);
* the lock holder (RW45's kind): a separate process holding ``BEGIN EXCLUSIVE`` on the real
  ``*.reindex-lock.sqlite`` sidecar makes the real ``memory index --force`` wait with no output until it is
  killed; clawprobe names that process (pid, command) and the repair stops it, not the gateway;
* a canary in the notes' script (``clawprobe canary plant --script Han``): the real engine indexes the file
  but its search for the Han token inside the run finds nothing → ``tokenizer_script``.

One real state for the module (built once: 1 search syncs the index); run under
``flock /tmp/clawprobe-heavy.lock``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw
from clawprobe.core import probe
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.evidence import Extra, Step
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.proc import run
from clawprobe.core.runrecord import record_run
from tests.rw_support import action_texts, after_lease, context, live, plant
from tests.testbed import OC_LATEST, builtin_config

AGENT = "scribe-3"
JA = "# 記憶\n\n東京の会議は火曜日に延期されました。担当者は田中さんです。\n"
ZH = "# 笔记\n\n新的部署流程已经确定，周五之前完成迁移。\n"
INNER = "延期され"  # a word inside the Japanese run: unicode61 keeps the whole run as one token


@pytest.fixture(scope="module")
def cjk_home(oc_home_factory, testbed, real_state):
    def build():
        home = oc_home_factory(builtin_config("none", version=OC_LATEST,
                                              agents={"list": [{"id": AGENT, "default": True}]}),
                               name="cjk", agent_id=AGENT)
        home.write_memory_md(JA)
        home.write_memory("zh/2026-12-01.md", ZH)
        spec = plant(home)
        ctx = context(home, testbed, OC_LATEST)
        env = probe._cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
        found = record_run(oc.run_search(ctx.openclaw, spec.token, AGENT, env, cwd=env.get("HOME"), timeout_s=240),
                           keep=(spec.token,))
        inner = record_run(oc.run_search(ctx.openclaw, INNER, AGENT, env, cwd=env.get("HOME"), timeout_s=240),
                           keep=(INNER,))
        return home, spec, ctx, found, inner
    return real_state("cjk", build)


def test_cjk_notes_under_unicode61_real_96(cjk_home):
    home, spec, ctx, found, inner = cjk_home
    assert oc.search_of_run(found).hits and inner.rc == 0 and oc.search_of_run(inner).hits == []  # Latin yes, CJK word no
    now = datetime.now(UTC)
    ev = probe.SlowEvidence(taken_at=now, agent_id=AGENT, canary=spec, search_run=found)
    r = live(ctx, AGENT, ev, now)
    g = r.builtin.gates
    assert g.fts_tokenizer == "unicode61"  # read from the real FTS table's SQL (no tokenize= clause)
    assert g.chunking_version == 5 and g.chunk_tokens == 400  # the real meta's chunkingVersion/chunkTokens
    assert g.note_scripts is not None and g.note_scripts["Han"] > g.note_scripts["Hiragana"] > 0
    assert r.canary.outcome == "found"
    d = diagnose(r, now)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "tokenizer_script")
    says, todo, dont = action_texts(d)
    assert "config set memory.search.store.fts.tokenizer trigram" in todo and "qmd" not in says
    gates = {x.name: x.cell.state for x in d.gates}
    assert gates["tokenizer"] == "fail" and gates["vectors"] == "na" and gates["orphans"] == "ok"
    assert gates["lock"] == "ok"  # 2026.9.6 leaves the sidecar next to the store; nobody holds it now
    assert g.reindex_lock is not None and g.reindex_lock.exists and not g.reindex_lock.held


def test_reindex_lock_held_by_another_process_real_96(cjk_home):
    home, spec, ctx, _, _ = cjk_home
    side = f"{home.builtin_db(AGENT)}.reindex-lock.sqlite"
    code = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(120)")
    holder = subprocess.Popen([sys.executable, "-c", code, side], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        home.write_memory("zh/2026-12-02.md", "# 笔记\n\n周六加班。\n")  # disk moves ahead of the index
        env = probe._cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
        cmd = [*ctx.openclaw, "memory", "index", "--force", "--agent", AGENT]
        p = run(cmd, env, 25, cwd=env.get("HOME"))
        assert p.timed_out and not p.stdout.strip()  # the real full reindex waits on the lock, silently
        now = datetime.now(UTC)
        idx = Step(name="index", command="openclaw memory index --force", rc=p.rc, seconds=p.seconds,
                   timed_out=True, at=now, stdout=p.stdout, stderr=p.stderr)
        r = live(ctx, AGENT, None, now, extra=Extra(index_runs=[idx]))
        lock = r.builtin.gates.reindex_lock
        assert lock is not None and lock.held
        h = next(h for h in lock.holders if h.write_lock)
        assert h.pid == holder.pid and "python -c import sqlite3" in h.command and not h.gateway
    finally:
        holder.kill()
        holder.wait()
    d = diagnose(r, after_lease(r))
    assert (d.verdict.value, d.reason) == ("stale_index", "reindex_locked")
    says, todo, dont = action_texts(d)
    assert f"pid {holder.pid}" in d.next_action.title and f"kill {holder.pid}" in todo
    assert "gateway stop" not in todo and "index --force" in dont
    assert next(x for x in d.gates if x.name == "lock").cell.state == "fail"


def test_script_canary_in_the_notes_script_is_not_found_by_unicode61_real_96(cjk_home, tmp_path):
    home, _, ctx, _, _ = cjk_home
    (home.workspace / "memory" / "clawprobe-canary.md").unlink()  # the Latin canary of the tests above
    data = tmp_path / "clawprobe-data"
    rec = cw.plant(home.workspace, AGENT, root=data, script="Han")
    spec_d = cn.current_spec(None, AGENT, home.workspace, root=data)
    assert spec_d is not None and spec_d["token"] == rec.script_token
    spec = probe.CanarySpec(**spec_d)
    env = probe._cli_env(ctx.env, ctx.gateway, ctx.state_dir, ctx.config_path)
    search = record_run(oc.run_search(ctx.openclaw, spec.token, AGENT, env, cwd=env.get("HOME"), timeout_s=240),
                        keep=(spec.token,))
    assert search.rc == 0 and oc.search_of_run(search).hits == []  # the real engine syncs the file, then cannot match inside the run
    now = datetime.now(UTC)
    r = live(ctx, AGENT, probe.SlowEvidence(taken_at=now, agent_id=AGENT, canary=spec, search_run=search), now)
    assert r.canary.outcome == "miss" and r.canary.reason == "cjk"
    con = sqlite3.connect(f"file:{home.builtin_db(AGENT)}?mode=ro", uri=True)
    held = con.execute("SELECT hash FROM memory_index_sources WHERE path = ?", (rec.rel_path,)).fetchone()
    con.close()
    assert held == (rec.content_sha256,)  # the real store holds this very file: indexed, yet unfindable
    d = diagnose(r, now)
    assert (d.verdict.value, d.reason) == ("retrieval_failed", "tokenizer_script")
    assert "unicode61" in " ".join(d.evidence)
