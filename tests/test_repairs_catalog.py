"""The repair catalog is data (``clawprobe/core/repairs.toml``) validated on load: the shipped file loads,
every placeholder it uses is one the filler knows, shared steps are one object, and each kind of mistake
in the file is a load error that names the entry and what is wrong."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources

import pytest

from clawprobe.core.receipt import Receipt
from clawprobe.core.repair_catalog import CatalogError, load_catalog, parse_catalog
from clawprobe.core.repair_context import CONTEXT_KEYS, context
from clawprobe.core.repairs import catalog
from clawprobe.core.verdicts import Verdict

_GENERAL = "".join(f'[[repair]]\nverdict = "{v.value}"\ntitle = "t"\nwhy = "w"\n\n' for v in Verdict)
_STEP = '[steps.reprobe]\ntitle = "Re-probe"\ncheck = "c"\ncommand = "clawprobe check --agent {agent}"\nverify = "v"\n\n'


def _doc(entry: str) -> str:
    return _STEP + _GENERAL + entry


def test_the_shipped_catalog_is_the_loaded_one():
    loaded = load_catalog()
    assert loaded == catalog() and len(loaded) >= 90
    assert all((v, None) in loaded for v in Verdict)
    assert loaded[(Verdict.QMD_UNAVAILABLE, "not_qmd/wrong_package")].command == "npm uninstall -g qmd && npm install -g @tobilu/qmd"
    # a shared step is defined once: every entry that references it holds the same step
    reprobes = {id(s) for a in loaded.values() for s in a.steps if s.title == "Re-probe"}
    assert len(reprobes) == 1
    assert resources.files("clawprobe.core").joinpath("repairs.toml").is_file()


def test_context_keys_are_what_context_fills():
    ctx = context(Receipt(checked_at=datetime(2026, 11, 30, tzinfo=UTC)), "openclaw", "/srv/oc")
    assert set(ctx) == CONTEXT_KEYS and {"agent", "openclaw", "qmd", "agent_xdg", "token"} <= CONTEXT_KEYS


def test_a_minimal_catalog_with_a_shared_step_loads():
    cat = parse_catalog(_doc('[[repair]]\nverdict = "stale_index"\nreason = "x/qmd"\ntitle = "T {agent}"\nwhy = "w"\n'
                             '[[repair.step]]\nref = "reprobe"\n[[repair.step]]\ntitle = "s"\ncheck = "c"\nverify = "v"\n'
                             'runnable = true\n'))
    a = cat[(Verdict.STALE_INDEX, "x/qmd")]
    assert [s.title for s in a.steps] == ["Re-probe", "s"] and a.steps[1].runnable and a.steps[0].command is not None


@pytest.mark.parametrize(("entry", "message"), [
    ('[[repair]]\nverdict = "stale_indx"\ntitle = "t"\nwhy = "w"\n', "unknown verdict 'stale_indx'"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\nref = "re_probe"\n',
     "unknown shared step 're_probe'"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\ncommand = "qmd --index {indexx}"\nwhy = "w"\n',
     "command uses unknown placeholder(s) {indexx}"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\ntitle = "s"\n'
     'check = "c"\ncommand = "ls {workspce}"\nverify = "v"\n', "step 1 command uses unknown placeholder(s) {workspce}"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\nhow = "extra"\n', "how: Extra inputs"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\ntitle = "s"\n'
     'check = "c"\nverify = "v"\nrunable = true\n', "step 1: runable: Extra inputs"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\n', "why: Field required"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\n[[repair.step]]\nref = "reprobe"\n'
     'title = "x"\n', "step 1 has ref and other keys (title)"),
    ('[[repair]]\nverdict = "stale_index"\ntitle = "again"\nwhy = "w"\n', "(stale_index, None) is given twice"),
    ('[repairs]\nx = 1\n', "unknown top-level key(s) repairs"),
    ('[[repair]]\nverdict = "stale_index"\ntitle = "t\n', "not valid TOML"),
    ('[[repair]]\nverdict = "stale_index"\nreason = "r"\ntitle = "t"\nwhy = "w"\nstep = ["reprobe"]\n',
     "step must be an array of tables"),
])
def test_a_mistake_in_the_file_is_a_load_error_naming_it(entry, message):
    with pytest.raises(CatalogError) as e:
        parse_catalog(_doc(entry), "test.toml")
    assert message in str(e.value) and str(e.value).startswith("test.toml")


def test_a_verdict_without_its_general_entry_is_a_load_error():
    text = _STEP + "".join(f'[[repair]]\nverdict = "{v.value}"\ntitle = "t"\nwhy = "w"\n' for v in Verdict if v != Verdict.SCOPE_DENIED)
    with pytest.raises(CatalogError, match="no general entry .* for scope_denied"):
        parse_catalog(text)


@pytest.mark.parametrize(("text", "message"), [
    ("repair = 1\n", "repair must be an array of tables"),
    ("steps = [1]\n", "steps must be tables"),
])
def test_a_table_of_the_wrong_shape_is_a_load_error(text, message):
    with pytest.raises(CatalogError, match=message):
        parse_catalog(text)


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
