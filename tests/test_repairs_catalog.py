"""The repair catalog is data (``clawprobe/core/catalog/<verdict>.toml`` and ``steps.toml``) validated on load:
the shipped files load, every placeholder they use is one the filler knows, shared steps are one object, a
verdict's file is read only when that verdict is first looked up, and each kind of mistake in a file is a load
error that names the file, the entry and what is wrong."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clawprobe.core.receipt import Receipt
from clawprobe.core.repair_catalog import (
    CATALOG_DIR,
    CatalogError,
    load_catalog,
    load_dir,
    parse_steps,
    parse_verdict,
)
from clawprobe.core.repair_context import CONTEXT_KEYS, context
from clawprobe.core.repairs import catalog
from clawprobe.core.verdicts import Verdict

_GENERAL = '[[repair]]\ntitle = "t"\nwhy = "w"\n\n'
_STEP = '[steps.reprobe]\ntitle = "Re-probe"\ncheck = "c"\ncommand = "clawprobe check --agent {agent}"\nverify = "v"\n\n'
_SHARED = parse_steps(_STEP)


def _stale(entry: str) -> str:
    return _GENERAL + entry


def test_the_shipped_catalog_is_the_loaded_one():
    loaded = load_catalog()
    assert loaded == catalog() == load_dir(CATALOG_DIR) and len(loaded) >= 90
    assert all((v, None) in loaded for v in Verdict)
    assert {p.stem for p in CATALOG_DIR.glob("*.toml")} == {v.value for v in Verdict} | {"steps"}
    assert loaded[(Verdict.QMD_UNAVAILABLE, "not_qmd/wrong_package")].command == "npm uninstall -g qmd && npm install -g @tobilu/qmd"
    # a shared step is defined once: every entry that references it, in every verdict's file, holds the same step
    reprobes = {id(s) for a in loaded.values() for s in a.steps if s.title == "Re-probe"}
    assert len(reprobes) == 1
    assert {a.verdict for a in loaded.values() if any(s.title == "Re-probe" for s in a.steps)} > {Verdict.STALE_INDEX}


def test_a_verdict_file_is_read_only_when_that_verdict_is_looked_up():
    """The first frame parses the files of the verdicts it shows, not the whole catalog (a fresh interpreter:
    this one has loaded everything)."""
    code = ("from clawprobe.core import repair_catalog as c; from clawprobe.core.repairs import lookup; "
            "from clawprobe.core.verdicts import Verdict as V; "
            "a = sorted(v.value for v in c._loaded); lookup(V.HEALTHY, 'no_such_reason'); "
            "print(a, sorted(v.value for v in c._loaded))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[] ['healthy']"


def test_context_keys_are_what_context_fills():
    ctx = context(Receipt(checked_at=datetime(2026, 11, 30, tzinfo=UTC)), "openclaw", "/srv/oc")
    assert set(ctx) == CONTEXT_KEYS and {"agent", "openclaw", "qmd", "agent_xdg", "token"} <= CONTEXT_KEYS


def test_a_minimal_catalog_with_a_shared_step_loads():
    cat = parse_verdict(_stale('[[repair]]\nreason = "x/qmd"\ntitle = "T {agent}"\nwhy = "w"\n'
                               '[[repair.step]]\nref = "reprobe"\n[[repair.step]]\ntitle = "s"\ncheck = "c"\nverify = "v"\n'
                               'runnable = true\n'), Verdict.STALE_INDEX, _SHARED)
    a = cat[(Verdict.STALE_INDEX, "x/qmd")]
    assert a.verdict is Verdict.STALE_INDEX
    assert [s.title for s in a.steps] == ["Re-probe", "s"] and a.steps[1].runnable and a.steps[0].command is not None
    assert a.steps[0] is _SHARED["reprobe"]


@pytest.mark.parametrize(("entry", "message"), [
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\n',
     "no verdict key here: the file's name is the verdict (stale_index)"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\nref = "re_probe"\n',
     "unknown shared step 're_probe'"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\ncommand = "qmd --index {indexx}"\nwhy = "w"\n',
     "command uses unknown placeholder(s) {indexx}"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\ntitle = "s"\n'
     'check = "c"\ncommand = "ls {workspce}"\nverify = "v"\n', "step 1 command uses unknown placeholder(s) {workspce}"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\nhow = "extra"\n', "how: Extra inputs"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\ntitle = "s"\n'
     'check = "c"\nverify = "v"\nrunable = true\n', "step 1: runable: Extra inputs"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\n', "why: Field required"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\nref = "reprobe"\n'
     'title = "x"\n', "step 1 has ref and other keys (title)"),
    ('[[repair]]\ntitle = "again"\nwhy = "w"\n', "the general entry (no reason) is given twice"),
    ('[repairs]\nx = 1\n', "unknown top-level key(s) repairs"),
    ('[[repair]]\ntitle = "t\n', "not valid TOML"),
    ('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\nstep = ["reprobe"]\n',
     "step must be an array of tables"),
])
def test_a_mistake_in_the_file_is_a_load_error_naming_it(entry, message):
    with pytest.raises(CatalogError) as e:
        parse_verdict(_stale(entry), Verdict.STALE_INDEX, _SHARED, "test.toml")
    assert message in str(e.value) and str(e.value).startswith("test.toml")


def test_a_verdict_without_its_general_entry_is_a_load_error():
    with pytest.raises(CatalogError, match="no general entry .* for scope_denied"):
        parse_verdict('[[repair]]\nreason = "r"\ntitle = "t"\nwhy = "w"\n', Verdict.SCOPE_DENIED, _SHARED)


@pytest.mark.parametrize(("text", "message"), [
    ("repair = 1\n", "repair must be an array of tables"),
    ("steps = [1]\n", "unknown top-level key"),
])
def test_a_table_of_the_wrong_shape_is_a_load_error(text, message):
    with pytest.raises(CatalogError, match=message):
        parse_verdict(text, Verdict.HEALTHY, _SHARED)
    with pytest.raises(CatalogError, match="steps must be tables"):
        parse_steps("steps = [1]\n")


def _catalog_dir(tmp_path: Path, skip: Verdict | None = None, extra: str | None = None) -> Path:
    tmp_path.mkdir()
    (tmp_path / "steps.toml").write_text(_STEP)
    for v in Verdict:
        if v is not skip:
            (tmp_path / f"{v.value}.toml").write_text(_GENERAL)
    if extra:
        (tmp_path / extra).write_text(_GENERAL)
    return tmp_path


def test_a_directory_loads_and_a_missing_or_stray_file_is_a_load_error(tmp_path):
    assert set(load_dir(_catalog_dir(tmp_path / "ok"))) == {(v, None) for v in Verdict}
    with pytest.raises(CatalogError, match=r"scope_denied.toml: cannot be read"):
        load_dir(_catalog_dir(tmp_path / "missing", skip=Verdict.SCOPE_DENIED))
    with pytest.raises(CatalogError, match=r"stale_indx.toml name\(s\) no verdict"):
        load_dir(_catalog_dir(tmp_path / "stray", extra="stale_indx.toml"))


def test_every_shipped_text_is_one_clean_line():
    """A TOML multi-line string's continuation (a backslash at the line end) joins its lines with one space; a
    text written without it (or with the backslash lost) keeps the indent as a run of spaces the operator reads
    in every ``don't:`` line."""
    bad = []
    for key, a in load_catalog().items():
        texts = [a.title, a.command or "", a.why, a.dont or ""]
        texts += [t for s in a.steps for t in (s.title, s.check or "", s.command or "", s.verify or "")]
        bad += [(key, t[:60]) for t in texts if t != t.strip() or "  " in t or "\n" in t]
    assert bad == []


def test_a_walkthrough_that_stops_the_gateway_starts_it_again():
    """Review of round 26: the walkthroughs that move the agent's store aside (a FIFO, a directory, a damaged or
    another agent's store) said "stop the gateway first" and ended with the re-probe — followed as written, the
    agent was left with no gateway at all. Each one that stops it starts it again before the re-probe."""
    import re

    stop = re.compile(r"stop (?:the|its) gateway|gateway stop\b|stop the lock holder", re.I)
    for key, action in catalog().items():
        texts = [" ".join(filter(None, (s.title, s.check, s.command))) for s in action.steps]
        first = next((i for i, t in enumerate(texts) if stop.search(t) and "don't stop" not in t.lower()), None)
        if first is None:
            continue
        assert any(s.command and re.search(r"gateway (?:re)?start\b|systemctl\}? (?:re)?start", s.command)
                   for s in action.steps[first + 1:]), key
        assert action.steps[-1].title == "Re-probe", key
