"""Output in any locale: a memory note whose file name is not UTF-8 (``os.fsdecode`` makes byte 0xE9 the lone
surrogate U+DCE9) and a stream that cannot hold ``·`` or ``—`` (``LC_ALL=POSIX PYTHONUTF8=0``,
``PYTHONIOENCODING=ascii``, a cron job's environment). Breaker round 8, n03: ``check`` died with a traceback,
``check --json`` under ``LC_ALL=C`` wrote the raw byte, so its JSON was not UTF-8.

Real ``bash`` for the shell words, the real CLI as a subprocess on a real workspace."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawprobe.cli.main import emit
from clawprobe.core.report import dumps, printable
from clawprobe.core.shell import word

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["plain.md", "two words.md", "it's.md", "caf\udce9.md", "tab\there.md", "esc\x1b[2J.md", "back\\slash'.md",
         "c1\x85.md", "ümlaut — ok.md", "~/not-home.md", "$(reboot).md"]


@pytest.mark.parametrize("name", NAMES)
def test_shell_word_gives_back_the_same_bytes_in_bash(name):
    """What the operator pastes names the file clawprobe meant, byte for byte, and shows no raw control byte."""
    w = word(name)
    assert printable(w) == w, "a shell word must reach the terminal unchanged"
    out = subprocess.run(["bash", "-c", f"printf %s {w}"], capture_output=True, timeout=10,
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    assert out.stdout == os.fsencode(name)


def test_printable_shows_the_undecodable_byte_as_ls_b_does():
    assert printable("memory/caf\udce9.md") == "memory/caf\\xe9.md"
    assert printable("x\ud800y") == "x\\ud800y"


def test_json_escapes_lone_surrogates_and_round_trips():
    doc = {"path": "memory/caf\udce9.md", "note": "naïve — ok"}
    text = dumps(doc)
    text.encode("utf-8")  # strict: no lone surrogate left
    assert "\\udce9" in text and "naïve — ok" in text
    assert json.loads(text) == doc


def _stream(encoding: str) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="strict", write_through=True)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_emit_never_raises_for_the_stream_encoding(encoding):
    out = _stream(encoding)
    assert emit("agent main: HEALTHY · ok — fine: memory/caf\udce9.md", out)
    got = out.buffer.getvalue().decode(encoding)
    assert got.endswith("memory/caf\\xe9.md\n")
    assert ("·" in got) == (encoding != "ascii") and ("—" in got) == (encoding == "utf-8")
    # breaker round 25: what the stream cannot hold reads as ASCII, not as Python's \u00b7 / \u2014 escapes
    assert got.startswith("agent main: HEALTHY " + ("." if encoding == "ascii" else "·") + " ok "
                          + ("-- fine" if encoding != "utf-8" else "— fine")), got
    assert "\\u" not in got, got


@pytest.mark.parametrize("text, wide, cell", [
    ("fresh ≤ lease 420 s — ok · ✓ → done…", "fresh <= lease 420 s -- ok . ok -> done...",
     "fresh < lease 420 s - ok . v > done."),
    ("┌─1 Backend─┐ │ ━━━ ▁▂ ╭╯", None, "+-1 Backend-+ | --- ## ++"),
    ("réunion-会議.md", "reunion-????.md", "reunion-????.md"),
    # review: a fullwidth letter (2 cells) read as 1 character, a name's undecodable byte (1 cell) as 4 ("\\xe9"):
    # the row after it shifted; the text form keeps the readable spellings
    ("ＡＢ-caf\udce9.md", "AB-caf\\xe9.md", "A B -caf?.md"),
])
def test_ascii_text_is_readable_and_the_cell_form_keeps_each_width(text, wide, cell):
    """The dashboard's form keeps the terminal width of every character (the toolkit laid the frame out in
    cells); the text form may spell a character out."""
    from clawprobe.core.ascii_text import CELL, WIDE, ascii_text

    if wide is not None:
        assert ascii_text(text) == wide == text.encode("ascii", WIDE).decode()
    assert ascii_text(text, cell=True) == cell == text.encode("ascii", CELL).decode()


def test_the_dashboard_paints_an_ascii_terminal_in_ascii_cells():
    """``LC_ALL=POSIX PYTHONUTF8=0``: the toolkit paints on stderr, whose ``backslashreplace`` drew ``─`` as the
    six-cell ``\\u2500`` and pushed every row out of its column. Inside :func:`ascii_terminal` one cell stays one
    character; a UTF-8 terminal is left as it is; the stream's own error handler comes back afterwards."""
    from clawprobe.cli.dashboard import ascii_terminal

    frame = "─1 Backend──── │ ✓ HEALTHY · exit 0 ≤ ▁"
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="backslashreplace", write_through=True)
    with ascii_terminal(ascii_out):
        ascii_out.write(frame)
    assert ascii_out.buffer.getvalue().decode("ascii") == "-1 Backend---- | v HEALTHY . exit 0 < #"
    assert ascii_out.errors == "backslashreplace"
    utf8_out = _stream("utf-8")
    with ascii_terminal(utf8_out):
        utf8_out.write(frame)
    assert utf8_out.buffer.getvalue().decode("utf-8") == frame and utf8_out.errors == "strict"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-8"])
def test_emit_json_is_utf8_whatever_the_stream_encoding(encoding):
    doc = {"message": "encrypted — git-crypt: memory/caf\udce9.md · ümlaut"}
    out = _stream(encoding)
    assert emit(dumps(doc), out, utf8=True)
    assert json.loads(out.buffer.getvalue().decode("utf-8")) == doc


@pytest.fixture(scope="module")
def latin1_workspace(tmp_path_factory):
    """A builtin install whose one memory note is named and written in Latin-1."""
    base = tmp_path_factory.mktemp("latin1")
    ws = base / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# notes\n")
    with open(os.path.join(os.fsencode(ws / "memory"), b"caf\xe9.md"), "wb") as f:
        f.write(b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e\n" * 4)
    st = base / "state"
    st.mkdir()
    (st / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    (base / "home").mkdir()
    return base


LOCALES = [{"LC_ALL": "C"}, {"LC_ALL": "POSIX", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
           {"PYTHONIOENCODING": "ascii"}]


@pytest.mark.parametrize("locale", LOCALES, ids=["C", "POSIX-no-utf8", "ioencoding-ascii"])
def test_check_in_a_legacy_locale(latin1_workspace, locale):
    """Text and JSON both complete with a verdict; the JSON is UTF-8 and names the note exactly."""
    base = latin1_workspace
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "CLAWPROBE_DATA_DIR": str(base / "data"),
           "CLAWPROBE_CACHE_DIR": str(base / "cache"), "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src"), **locale}
    argv = [sys.executable, "-m", "clawprobe", "check", "--no-openclaw", "--state-dir", str(base / "state")]
    text = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert b"Traceback" not in text.stderr, text.stderr.decode(errors="replace")
    assert text.returncode in (0, 1, 2, 3) and b"agent main:" in text.stdout
    assert b"\xe9" not in text.stdout, "no raw Latin-1 byte reaches the terminal"
    assert b"\\u" not in text.stdout, "what the terminal cannot show reads as ASCII, not as \\u2014 escapes"
    js = subprocess.run([*argv, "--json"], cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert b"Traceback" not in js.stderr, js.stderr.decode(errors="replace")
    doc = json.loads(js.stdout.decode("utf-8"))
    assert doc["exit_code"] == text.returncode == js.returncode
    # the note is named as ls draws it (U+FFFD for the bad byte): a skipped note nothing ever indexes
    assert "memory/caf\ufffd.md" in json.dumps(doc, ensure_ascii=False)


@pytest.fixture
def unicode_workspace(tmp_path):
    """A builtin install whose workspace and note names are UTF-8 but not ASCII, as OpenClaw (Node, UTF-8 paths
    whatever the locale) writes them; the config names the workspace in JSON text."""
    ws = tmp_path / "wörk-空間"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# notes\n")
    (ws / "memory" / "réunion-会議.md").write_text("ops review moved to Thursday\n", encoding="utf-8")
    st = tmp_path / "state"
    st.mkdir()
    (st / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}), encoding="utf-8")
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize("locale", LOCALES[:2], ids=["C", "POSIX-no-utf8"])
def test_a_non_ascii_workspace_is_probed_and_planted_in_a_legacy_locale(unicode_workspace, locale):
    """Breaker round 24: with an ASCII file-system encoding (``LC_ALL=POSIX PYTHONUTF8=0``) every path from the
    config that is not ASCII raised UnicodeEncodeError — ``check`` could not probe, ``canary plant`` died with a
    traceback. Paths are read as OpenClaw reads them, UTF-8 whatever the locale: the probe runs, the note is
    counted and named, and the canary lands in the workspace the config names."""
    base = unicode_workspace
    ws = base / "wörk-空間"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "CLAWPROBE_DATA_DIR": str(base / "data"),
           "CLAWPROBE_CACHE_DIR": str(base / "cache"), "NO_COLOR": "1", "PYTHONPATH": str(ROOT / "src"), **locale}
    argv = [sys.executable, "-m", "clawprobe"]
    state = ["--state-dir", str(base / "state")]
    js = subprocess.run([*argv, "check", "--no-openclaw", "--json", *state], cwd=ROOT, env=env, capture_output=True,
                        timeout=120)
    assert b"Traceback" not in js.stderr and b"UnicodeEncodeError" not in js.stdout + js.stderr, js.stderr.decode()
    doc = json.loads(js.stdout.decode("utf-8"))
    (entry,) = doc["receipts"]
    assert not doc.get("errors"), doc["errors"]
    assert "memory/réunion-会議.md" in json.dumps(doc, ensure_ascii=False)
    text = subprocess.run([*argv, "check", "--no-openclaw", *state], cwd=ROOT, env=env, capture_output=True,
                          timeout=120)
    assert text.returncode == js.returncode and b"agent main:" in text.stdout, text.stderr.decode()
    assert b"\xc3" not in text.stdout, "the text report keeps to the locale's encoding (escapes, no raw UTF-8)"
    plant = subprocess.run([*argv, "canary", "plant", "--yes", *state], cwd=ROOT, env=env, capture_output=True,
                           timeout=120)
    assert b"Traceback" not in plant.stderr, plant.stderr.decode(errors="replace")
    assert plant.returncode == 0, (plant.stdout, plant.stderr)
    assert [p.name for p in (ws / "memory").glob("clawprobe-canary*.md")], list((ws / "memory").iterdir())


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
@pytest.mark.parametrize("error", [KeyError, IndexError, UnicodeEncodeError])
def test_an_error_inside_the_ascii_terminal_block_is_its_own(encoding, error):
    """Review: the UTF-8 probe's ``yield`` sat inside ``try: … except (UnicodeEncodeError, LookupError)``, so a
    ``KeyError``/``IndexError`` (both ``LookupError``) or ``UnicodeEncodeError`` raised by the dashboard on a UTF-8
    terminal was caught by the probe, the stream switched to the ASCII handler and the ``yield`` run twice:
    ``RuntimeError: generator didn't stop after throw()`` instead of the error, the stream left reconfigured."""
    from clawprobe.cli.dashboard import ascii_terminal

    out = _stream(encoding)
    before = out.errors
    exc = UnicodeEncodeError("ascii", "é", 0, 1, "x") if error is UnicodeEncodeError else error("boom")
    with pytest.raises(error), ascii_terminal(out):
        raise exc
    assert out.errors == before
