"""The canary: plant/rotate/remove on disk, the record in clawprobe's data dir, the pure judge replayed on
the real outputs recorded from OpenClaw 2026.7.35/2026.9.6 (tests/data/recorded), and the CLI's confirmation."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from clawprobe.core import canary as cn
from clawprobe.core import canary_write as cw
from clawprobe.core.probe import CanarySpec, canary_facts
from clawprobe.core.probes.openclaw_cli import parse_search

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "tests" / "data" / "recorded"
RECORDED_TOKEN = "QMDCANARY-9876-LOTUS"


def _recorded(scenario: str) -> tuple[str, int, str, float]:
    d = RECORDED / scenario / "search"
    out = next(d.glob("stdout.*")).read_text()
    meta = json.loads((d / "meta.json").read_text())
    return out, meta["rc"], (d / "stderr.txt").read_text(), meta["seconds"]


def test_lifecycle_writes_only_the_canary_and_the_record(tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "data"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "keep.md").write_text("# mine\n")
    rec = cw.plant(ws, "main", root=data)
    f = ws / cn.CANARY_REL
    text = f.read_text()
    assert rec.token in text and cn.sha256_text(text) == rec.content_sha256
    assert not any(ch.isdigit() for ch in f.stem) and not f.name.startswith(".")  # not dated, not hidden
    assert cn.file_state(rec) == "present" and rec.rel_path == "memory/clawprobe-canary.md"
    assert rec.token.startswith("CLAWPROBE-CANARY-") and len(rec.token) == len("CLAWPROBE-CANARY-") + 16
    assert sorted(p.name for p in (ws / "memory").iterdir()) == ["clawprobe-canary.md", "keep.md"]
    assert cn.record_path(ws, "main", data).is_file() and not list(ws.rglob("*.json"))
    with pytest.raises(cn.CanaryError, match="already planted"):
        cw.plant(ws, "main", root=data)
    rot = cw.rotate(ws, "main", root=data)
    assert rot.token != rec.token and [r.token for r in rot.retired] == [rec.token]
    assert rec.token not in f.read_text() and rot.token in f.read_text()
    gone = cw.remove(ws, "main", root=data)
    assert not f.exists() and gone.removed_at and {r.token for r in gone.retired} == {rec.token, rot.token}
    assert cn.current_spec(None, "main", ws, root=data) is None
    again = cw.plant(ws, "main", root=data)
    assert cn.current_spec(None, "main", ws, root=data)["token"] == again.token
    assert len(again.retired) == 2
    assert sorted(p.name for p in (ws / "memory").iterdir()) == ["clawprobe-canary.md", "keep.md"]


def test_agents_sharing_a_workspace_share_its_one_canary_and_never_overwrite_it(tmp_path):
    ws, other_ws, data = tmp_path / "shared ws", tmp_path / "ops-own", tmp_path / "data"
    (ws / "memory").mkdir(parents=True)
    (other_ws / "memory").mkdir(parents=True)
    main = cw.plant(ws, "main", root=data)
    f = ws / cn.CANARY_REL
    before = f.read_bytes()
    for act in (cw.plant, cw.rotate):  # a rotate without a canary of its own would plant one
        with pytest.raises(cn.CanaryError, match=r"agent main's canary.*share this workspace.*rotate --agent main"):
            act(ws, "Ops.Team", root=data)
    assert f.read_bytes() == before and not cn.record_path(ws, "Ops.Team", data).exists()
    assert cn.current_spec(None, "Ops.Team", ws, root=data)["token"] == main.token  # the one file proves both
    rot = cw.rotate(ws, "main", root=data)
    assert cn.current_spec(None, "Ops.Team", ws, root=data)["token"] == rot.token  # follows the rotation
    assert cn.current_spec(None, "Ops.Team", other_ws, root=data) is None  # another workspace: none planted
    own = cw.plant(other_ws, "Ops.Team", root=data)  # its own workspace: planted as usual
    assert cn.current_spec(None, "Ops.Team", other_ws, root=data)["token"] == own.token
    cw.remove(ws, "main", root=data)
    assert not f.exists() and cn.current_spec(None, "Ops.Team", ws, root=data) is None
    ops = cw.plant(ws, "Ops.Team", root=data)  # nothing planted here any more: ops may plant
    assert cn.current_spec(None, "main", ws, root=data)["token"] == ops.token  # and main now shares ops's


def test_never_overwrites_or_deletes_a_foreign_file(tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "data"
    (ws / "memory").mkdir(parents=True)
    (ws / cn.CANARY_REL).write_text("# my own notes\n")
    with pytest.raises(cn.CanaryError, match="not written by clawprobe"):
        cw.plant(ws, "main", root=data)
    (ws / cn.CANARY_REL).unlink()
    rec = cw.plant(ws, "main", root=data)
    (ws / cn.CANARY_REL).write_text("# replaced by the user\n")
    assert cn.file_state(rec) == "foreign"
    with pytest.raises(cn.CanaryError, match="not deleting"):
        cw.remove(ws, "main", root=data)
    (ws / cn.CANARY_REL).unlink()
    (ws / cn.CANARY_REL).symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(cn.CanaryError, match="symlink"):
        cw.rotate(ws, "main", root=data)


def test_damaged_record_is_a_clear_error(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    p = cn.record_path(ws, "main", tmp_path / "data")
    p.parent.mkdir(parents=True)
    p.write_text("{not json")
    with pytest.raises(cn.CanaryError, match="damaged"):
        cn.load(ws, "main", root=tmp_path / "data")


def _judge(out: str, rc: int, err: str, secs: float, deadline: float, expected: str, token: str,
           timed_out: bool = False):
    """The production path: ``openclaw memory search --json`` parsed, then the receipt's canary part."""
    spec = CanarySpec(token=token, expected_path=expected, content_sha256=None, planted_at=None)
    return canary_facts(spec, parse_search(out, err, rc, secs, timed_out), None, deadline, None)


@pytest.mark.parametrize("scenario,outcome,shape", [
    ("735-qmd-path-search", "found", "qmd"),
    ("735-qmd-absolute-command", "found", "qmd"),
    ("735-builtin-none", "found", "builtin"),
    ("735-qmd-not-on-path", "found", "builtin"),  # found — but served by the builtin fallback
    ("96-provider-unset", "found", "builtin"),
    ("735-qmd-scope-deny", "denied", None),
    ("735-qmd-node20-command", "error", None),
    ("96-provider-openai", "error", None),
])
def test_recorded_searches_give_the_right_canary_outcome(scenario, outcome, shape):
    out, rc, err, secs = _recorded(scenario)
    c = _judge(out, rc, err, secs, 60.0, "memory/canary.md", RECORDED_TOKEN)
    assert c.outcome == outcome and c.result_shape == shape
    assert c.latency_s == secs and c.token_sha256 == cn.sha256_text(RECORDED_TOKEN)
    if outcome == "denied":
        assert c.reason == "probe_context" and "denied by scope" in c.detail
    if scenario == "735-qmd-node20-command":
        assert "SIGSEGV" in c.detail
    if scenario == "96-provider-openai":
        assert "No API key found" in c.detail


def test_wrong_source_miss_and_timeout():
    out, rc, err, secs = _recorded("735-qmd-path-search")
    c = _judge(out, rc, err, secs, 60.0, "memory/clawprobe-canary.md", RECORDED_TOKEN)
    assert c.outcome == "wrong_source" and c.returned_path == "memory/canary.md"
    c = _judge(out, rc, err, secs, 60.0, "memory/canary.md", "CLAWPROBE-CANARY-AAAAAAAAAAAAAAAA")
    assert c.outcome == "miss"
    # RW04 (c) / field report (b'): OpenClaw's own search timeout, recorded text
    timeout_err = ("Memory search failed: qmd query QMDCANARY-9876-LOTUS --json -n 4 -c memory-root-main "
                   "-c memory-dir-main timed out after 4000ms\n")
    c = _judge("", 1, timeout_err, 9.8, 4.0, "memory/canary.md", RECORDED_TOKEN)
    assert c.outcome == "timeout" and c.reason == "timeout" and c.deadline_s == 4.0
    c = _judge("", -9, "", 60.1, 60.0, "memory/canary.md", RECORDED_TOKEN, timed_out=True)
    assert c.outcome == "timeout"


def test_direct_qmd_shape_and_old_tokens():
    direct = json.dumps([{"docid": "#d7093e", "score": 0, "file": "qmd://memory-dir-main/canary.md", "line": 3,
                          "title": "Canary", "snippet": f"@@ -2,3 @@\n\nUnique canary: {RECORDED_TOKEN} lives here.\n"}])
    assert cn.token_found(direct, RECORDED_TOKEN) and not cn.token_found(direct, "CLAWPROBE-CANARY-BBBBBBBBBBBBBBBB")
    assert [cn.result_path(r) for r in json.loads(direct)] == ["memory/canary.md"]
    assert cn.old_token_found({RECORDED_TOKEN: direct, "CLAWPROBE-CANARY-BBBBBBBBBBBBBBBB": "[]"}) is True
    assert cn.old_token_found({"CLAWPROBE-CANARY-BBBBBBBBBBBBBBBB": "[]"}) is False
    assert cn.old_token_found({}) is None


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _cli_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    state, ws = tmp_path / "state", tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    state.mkdir()
    (state / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "OPENCLAW_STATE_DIR": str(state),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data"), "LANG": "C.UTF-8"}
    return env, ws


def _cli_env_set(tmp_path, monkeypatch):
    """:func:`_cli_env`, put into this process's environment (no OPENCLAW_* or data dir of the caller's left)."""
    env, ws = _cli_env(tmp_path)
    for k in list(os.environ):
        if k.startswith("OPENCLAW_") or k == "CLAWPROBE_DATA_DIR":
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env, ws


def test_cli_refuses_without_a_terminal_and_writes_with_yes(tmp_path):
    env, ws = _cli_env(tmp_path)
    run = lambda *a: subprocess.run([sys.executable, "-m", "clawprobe", "canary", *a], env=env, cwd=ROOT,
                                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    r = run("plant")
    assert r.returncode == 3 and "--yes" in r.stderr and "Traceback" not in r.stderr
    assert not (ws / cn.CANARY_REL).exists() and not (tmp_path / "data").exists()
    r = run("plant", "--yes", "--agent", "main")
    assert r.returncode == 0, r.stderr
    assert (ws / cn.CANARY_REL).exists() and "planted" in r.stdout
    r = run("show")
    assert r.returncode == 0 and "CLAWPROBE-CANARY-" in r.stdout and "(present)" in r.stdout
    r = run("remove", "--yes", "--agent", "ghost")
    assert r.returncode == 3 and "'ghost'" in r.stderr and "Traceback" not in r.stderr  # names the unknown agent


def test_cli_asks_on_a_terminal(tmp_path, monkeypatch):
    env, ws = _cli_env_set(tmp_path, monkeypatch)
    from clawprobe.cli.canary import run

    out = io.StringIO()
    assert run(Namespace(action="plant", yes=False), stdin=_Tty("n\n"), out=out) == 3
    assert "[y/N]" in out.getvalue() and not (ws / cn.CANARY_REL).exists()
    assert run(Namespace(action="plant", yes=False), stdin=_Tty("y\n"), out=io.StringIO()) == 0
    assert (ws / cn.CANARY_REL).exists()


def test_cli_without_install_exits_3(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "none"),
           "CLAWPROBE_DATA_DIR": str(tmp_path / "data")}
    r = subprocess.run([sys.executable, "-m", "clawprobe", "canary", "show"], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 3 and "no OpenClaw install" in r.stderr


# ---------------------------------------------------------------------------------------------------
# the file's mode, what `show` says about it, and what is in it
# ---------------------------------------------------------------------------------------------------

def _mode(p: Path) -> int:
    return p.stat().st_mode & 0o7777


def _workspace(tmp_path: Path, *modes: int) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i, m in enumerate(modes):
        note = ws / "memory" / f"note-{i}.md"
        note.write_text(f"# note {i}\n")
        note.chmod(m)
    return ws


@pytest.mark.parametrize("modes,expected", [
    ((0o640, 0o640, 0o600), 0o640),  # the most common mode of the memory notes
    ((0o644, 0o600), 0o600),         # a tie: the more restrictive
    ((0o755, 0o755), 0o644),         # execute bits are never copied
    ((0o440, 0o440), 0o640),         # the owner can always read and write it (clawprobe reads it back)
])
def test_the_canary_gets_the_mode_of_the_memory_notes(tmp_path, modes, expected):
    ws = _workspace(tmp_path, *modes)
    (ws / "memory" / ".hidden.md").write_text("x")
    (ws / "memory" / ".hidden.md").chmod(0o666)  # hidden names do not count
    rec = cw.plant(ws, "main", root=tmp_path / "data")
    assert _mode(ws / cn.CANARY_REL) == expected
    (ws / cn.CANARY_REL).chmod(0o600)  # as older clawprobe versions left it
    cw.rotate(ws, "main", root=tmp_path / "data")
    assert _mode(ws / cn.CANARY_REL) == expected and cn.file_state(cn.load(ws, "main", root=tmp_path / "data")) == "present"
    assert rec.token not in (ws / cn.CANARY_REL).read_text()


def test_without_notes_the_mode_is_memory_md_else_0644_under_the_umask(tmp_path):
    ws = _workspace(tmp_path)
    (ws / "MEMORY.md").write_text("# root memory\n")
    (ws / "MEMORY.md").chmod(0o660)
    cw.plant(ws, "main", root=tmp_path / "data")
    assert _mode(ws / cn.CANARY_REL) == 0o660
    cw.remove(ws, "main", root=tmp_path / "data")
    (ws / "MEMORY.md").unlink()
    old = os.umask(0o027)
    try:
        cw.plant(ws, "main", root=tmp_path / "data")
    finally:
        os.umask(old)
    assert _mode(ws / cn.CANARY_REL) == 0o640


def test_check_file_names_each_state(tmp_path):
    ws = _workspace(tmp_path, 0o644)
    rec = cw.plant(ws, "main", root=tmp_path / "data")
    p = ws / cn.CANARY_REL
    f = cn.check_file(rec)
    assert (f.state, f.mode, f.detail) == ("present", 0o644, "exactly the planted content")
    p.write_text(p.read_text() + "an edit\n")
    assert cn.check_file(rec).state == "modified"
    p.write_text("# someone's notes\n")
    f = cn.check_file(rec)
    assert f.state == "foreign" and "not written by clawprobe" in f.detail
    p.unlink()
    os.mkfifo(p)
    f = cn.check_file(rec)  # never blocks on the FIFO
    assert f.state == "foreign" and "a FIFO" in f.detail
    p.unlink()
    p.symlink_to(tmp_path / "elsewhere.md")
    f = cn.check_file(rec)
    assert f.state == "foreign" and "a symlink to" in f.detail and "elsewhere.md" in f.detail
    p.unlink()
    assert (cn.check_file(rec).state, cn.check_file(rec).mode) == ("missing", None)
    for n in (ws / "memory").iterdir():
        n.unlink()
    (ws / "memory").rmdir()
    f = cn.check_file(rec)
    assert f.state == "missing" and "does not exist" in f.detail
    (ws / "memory").write_text("a file where the dir should be")
    f = cn.check_file(rec)
    assert f.state == "missing" and "is not a directory" in f.detail


def _show(capsys) -> str:
    from clawprobe.cli.canary import run

    assert run(Namespace(action="show", yes=False), stdin=io.StringIO(), out=io.StringIO()) == 0
    return capsys.readouterr().out


def test_show_says_what_is_at_the_path_and_what_to_do(tmp_path, monkeypatch, capsys):
    env, ws = _cli_env_set(tmp_path, monkeypatch)
    (ws / "memory" / "note.md").write_text("# a note\n")
    (ws / "memory" / "note.md").chmod(0o644)
    rec = cw.plant(ws, "main", root=tmp_path / "data")
    p = ws / cn.CANARY_REL
    out = _show(capsys)
    assert f"{p} (present)" in out and "mode 0644" in out and "next:" not in out
    p.write_text(p.read_text().replace(rec.token, cn.new_token()))
    out = _show(capsys)
    assert "(modified)" in out and re.search(r"clawprobe (--state-dir \S+ )?canary rotate", out)
    p.write_text("# mine\n")
    out = _show(capsys)
    assert "(foreign)" in out and "not written by clawprobe" in out and "will not overwrite it" in out
    p.unlink()
    out = _show(capsys)
    assert "(missing)" in out and "plant it again" in out


def test_the_canary_holds_only_synthetic_text(tmp_path):
    """Two workspaces, two agents: the files differ only in the token — no path, user, host or config."""
    a, b = tmp_path / "a", tmp_path / "secret-customer-b"
    for ws in (a, b):
        (ws / "memory").mkdir(parents=True)
    ra, rb = cw.plant(a, "main", root=tmp_path / "data"), cw.plant(b, "acme-prod", root=tmp_path / "data")
    ta, tb = (a / cn.CANARY_REL).read_text(), (b / cn.CANARY_REL).read_text()
    assert ta.replace(ra.token, "T") == tb.replace(rb.token, "T") == cn.canary_text("T")
    assert str(tmp_path) not in ta + tb and "acme" not in tb and "secret" not in tb
    assert ta.isascii() and len(ta) < 400
