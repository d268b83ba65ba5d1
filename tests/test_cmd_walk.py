"""``clawprobe walk`` as plain text / JSON, headless (never imports textual), with recorded walks shown."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from clawprobe.cli.main import main
from clawprobe.core.diagnosis import diagnose
from clawprobe.core.replay import load_receipts
from clawprobe.core.walk import mark_done, start_walk
from clawprobe.core.walk_log import save_walk

ROOT = Path(__file__).resolve().parent.parent
REPLAY = ROOT / "tests" / "data" / "replay"


def test_walk_text_and_json_from_replayed_receipts(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CLAWPROBE_DATA_DIR", str(tmp_path))
    # a previous operator's walk is shown to the next one
    r = load_receipts(REPLAY / "spec-4-stale-721s.json")[0]
    w = start_walk(diagnose(r), now=datetime(2026, 11, 30, 1, 0, tzinfo=UTC), operator="night-shift")
    mark_done(w, confirmed_by="night-shift")
    save_walk(w)
    rc = main(["--replay", str(REPLAY / "spec-4-stale-721s.json"), "walk"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "Stale index" in out and "memory index --agent main" in out
    assert "clawprobe can run it after you confirm" in out
    assert "previous walks:" in out and "by night-shift" in out
    rc = main(["--replay", str(REPLAY / "spec-2-qmd-missing.json"), "walk", "--json", "--agent", "main"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 2 and doc["exit_code"] == 2
    (walk,) = doc["walks"]
    assert walk["verdict"] == "qmd_unavailable"
    assert walk["steps"][0]["conditions"][0]["kind"] == "qmd_resolves"
    assert not any(s["allowed"] for s in walk["steps"])
    assert [p["operator"] for p in walk["previous_walks"]] == ["night-shift"]  # same agent, any verdict


def test_walk_bad_input_is_a_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--replay", str(bad), "walk"]) == 3
    err = capsys.readouterr().err
    assert "clawprobe walk:" in err and "not JSON" in err and "Traceback" not in err
    assert main(["--replay", str(REPLAY / "spec-2-qmd-missing.json"), "walk", "--agent", "nosuch"]) == 3


def test_walk_is_headless():
    code = ("import sys, io, contextlib\nfrom clawprobe.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['--replay', {str(REPLAY / 'spec-1-bm25-pending-healthy.json')!r}, 'walk'])\n"
            "print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "CLAWPROBE_DATA_DIR": "/nonexistent-dir/x"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
