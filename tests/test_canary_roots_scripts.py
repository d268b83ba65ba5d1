"""Canaries where the risk is (issue 13): a canary planted in another managed root (an extra path dir, not only
``memory/``) and one that carries a token in the notes' own script (CJK, Thai…), written inside a run with no
spaces the way such notes are — planting stays atomic (clawprobe.core.canary_write) and the probe searches
that token. Real files, real SQLite FTS5 tables for what each tokenizer can find."""

from __future__ import annotations

import argparse
import sqlite3
from datetime import UTC, datetime

import pytest

from clawprobe.cli.canary import _placement
from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw
from clawprobe.core.probes.note_scripts import count_scripts

T0 = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "workspace"
    (w / "memory").mkdir(parents=True)
    (w / "MEMORY.md").write_text("# 記憶\n\n東京の会議は火曜日に延期されました。\n", encoding="utf-8")
    return w


@pytest.mark.parametrize("script", ["Han", "Thai", "Katakana"])
def test_script_canary_token_sits_inside_an_unspaced_run(ws, tmp_path, script):
    rec = cw.plant(ws, "ops-3", now=T0, root=tmp_path / "data", script=script)
    text = (ws / rec.rel_path).read_text(encoding="utf-8")
    assert rec.script == script and rec.script_token and set(count_scripts(rec.script_token)) == {script}
    assert rec.token in text and rec.script_token in text
    run_line = next(ln for ln in text.splitlines() if rec.script_token in ln)
    assert run_line != rec.script_token and " " not in run_line  # inside a longer run, no spaces
    spec = cn.current_spec(None, "ops-3", ws, root=tmp_path / "data")
    assert spec is not None and spec["token"] == rec.script_token and spec["expected_path"] == rec.rel_path
    # what each real FTS5 tokenizer finds of that file: unicode61 keeps the run whole, trigram matches inside it
    con = sqlite3.connect(":memory:")
    for tok in ("unicode61", "trigram"):
        con.execute(f"CREATE VIRTUAL TABLE t_{tok} USING fts5(text, tokenize='{tok}')")
        con.execute(f"INSERT INTO t_{tok} VALUES (?)", (text,))
    find = f'"{rec.script_token}"'
    assert con.execute("SELECT count(*) FROM t_unicode61 WHERE t_unicode61 MATCH ?", (find,)).fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM t_trigram WHERE t_trigram MATCH ?", (find,)).fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM t_unicode61 WHERE t_unicode61 MATCH ?", (f'"{rec.token}"',)).fetchone()[0] == 1


def test_canary_in_an_extra_path_root_rotates_in_place_and_is_removed_there(ws, tmp_path):
    extra = tmp_path / "team-notes"
    extra.mkdir()
    data = tmp_path / "data"
    rec = cw.plant(ws, "main", now=T0, root=data, managed_root=str(extra), script="Han")
    assert rec.rel_path == "../team-notes/clawprobe-canary.md" and (extra / "clawprobe-canary.md").is_file()
    assert not (ws / "memory" / "clawprobe-canary.md").exists()
    rot = cw.rotate(ws, "main", root=data)
    assert rot.rel_path == rec.rel_path and rot.script == "Han" and rot.script_token != rec.script_token
    assert rot.script_token in (extra / "clawprobe-canary.md").read_text(encoding="utf-8")
    with pytest.raises(cn.CanaryError, match="remove it first"):
        cw.rotate(ws, "main", root=data, managed_root="memory")
    cw.remove(ws, "main", root=data)
    assert not (extra / "clawprobe-canary.md").exists()


@pytest.mark.parametrize("bad", ["missing-dir", "MEMORY.md", "."])
def test_a_root_that_is_not_an_existing_managed_dir_is_refused_and_nothing_is_written(ws, tmp_path, bad):
    before = sorted(p.name for p in ws.rglob("*"))
    with pytest.raises(cn.CanaryError):
        cw.plant(ws, "main", root=tmp_path / "data", managed_root=bad)
    assert sorted(p.name for p in ws.rglob("*")) == before and cn.load(ws, "main", root=tmp_path / "data") is None


def test_unknown_script_is_refused(ws, tmp_path):
    with pytest.raises(cn.CanaryError, match="no canary alphabet"):
        cw.plant(ws, "main", root=tmp_path / "data", script="Klingon")


def test_auto_script_follows_the_notes(ws, tmp_path):
    args = argparse.Namespace(root=None, script="auto")
    assert _placement(args, str(ws)) == (None, "Han")
    latin = tmp_path / "latin"
    (latin / "memory").mkdir(parents=True)
    (latin / "MEMORY.md").write_text("# Memory\n\nDeploy on Friday.\n", encoding="utf-8")
    assert _placement(args, str(latin)) == (None, None)
    assert _placement(argparse.Namespace(root="x", script="none"), str(ws)) == ("x", None)
