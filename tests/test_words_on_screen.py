"""Tags are said in words on every screen and in the ``check``/``walk`` text (one table,
:data:`clawprobe.core.words.REASON_WORDS`); the ``--json`` output keeps the ids. Property tests over every
demo scenario and replay, plus receipts made to carry the tags no scenario shows."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.content import Content

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.receipt import Finding, Receipt
from clawprobe.core.replay import load_receipts
from clawprobe.core.report import to_json, to_text
from clawprobe.core.verdicts import Verdict
from clawprobe.core.walk import start_walk, walk_text
from clawprobe.core.words import REASON_WORDS, reason_words
from clawprobe.tui import demo
from clawprobe.tui.state import DashboardReport, build_report
from clawprobe.tui.widgets.action_pane import action_markup
from clawprobe.tui.widgets.backend_pane import BackendPane
from clawprobe.tui.widgets.canary_pane import CanaryPane
from clawprobe.tui.widgets.verdict_banner import banner_lines
from tests.dashboard_support import T0

SRC = Path(__file__).parent.parent / "src" / "clawprobe" / "core"
REPLAY = Path(__file__).parent / "data" / "replay"
RAW = re.compile(r"\b[a-z]+_[a-z0-9_]+\b")
#: the ids no text for people may show: every verdict id and every tag with words
IDS = {v.value for v in Verdict} | {t for t in REASON_WORDS if "_" in t} | {"case_mismatch"}
UPPER_IDS = {v.value.upper() for v in Verdict if "_" in v.value or v is Verdict.UNVERIFIED}


def emitted_tags() -> set[str]:
    """The multi-word tags the rules and interpret modules can set (``Match("x"``, ``reason = "x"``,
    ``tag="x"``, the CLI-error table ``("text", "x")``): read from their source."""
    out: set[str] = set()
    for f in [SRC / "rules.py", *sorted((SRC / "interpret").glob("*.py"))]:
        t = f.read_text()
        for stmt in re.findall(r"(?:Match\(|\breason\b[^=\n]*=|_reason\b[^=\n]*=|\btag\b\s*=)[^\n]*", t):
            out |= set(re.findall(r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"', stmt))
        out |= set(re.findall(r"\(\"[^\"\n]+\", \"([a-z]+(?:_[a-z0-9]+)+)\"\)", t))
    return out


def test_every_tag_the_rules_and_interpret_emit_has_words():
    tags = emitted_tags()
    assert len(tags) > 50  # the scan still finds them
    assert sorted(tags - set(REASON_WORDS)) == []
    assert all(not RAW.fullmatch(w) for w in REASON_WORDS.values())


def _tagged(r: Receipt) -> list[Receipt]:
    """``r`` and copies carrying tags no scenario shows: canary reasons and warning findings."""
    out = [r]
    for outcome, reason in (("miss", "search_not_invoked"), ("timeout", "timeout"), ("miss", "wrong_store")):
        c = r.canary.model_copy(update={"outcome": outcome, "reason": reason, "retrieved_at": r.checked_at})
        out.append(r.model_copy(update={"canary": c}))
    for tag in ("env_from_shell", "probe_side_effect", "status_misreport", "index_bloat"):
        out.append(r.model_copy(update={"findings": [Finding(tag=tag, message="seen", source="test")]}))
    stale = r.freshness.model_copy(update={"stale_reason": "dirty"})
    out.append(r.model_copy(update={"freshness": stale}))
    for tag in FALLBACK_TAGS:  # pane 1's "fallback seen" line said the tag itself (breaker round 24)
        fb = r.backend.model_copy(update={"fallback_at": r.checked_at, "fallback_reason": tag})
        out.append(r.model_copy(update={"backend": fb}))
    return out


#: every QMD→builtin fallback tag (``BackendFacts.fallback_reason``: the log's and the refinements')
FALLBACK_TAGS = ("binary_unavailable", "manager_failed", "runtime_error", "timeout", "case_mismatch", "sticky",
                 "resource", "wrong_engine")


def receipts() -> Iterator[tuple[str, Receipt]]:
    for s in demo.scenarios():
        rs, _ = demo.at_now(s, T0)
        for r in rs:
            for i, x in enumerate(_tagged(r)):
                yield f"{s.name}/{r.agent_id}/{i}", x
    for f in sorted(REPLAY.glob("*.json")):
        for r in load_receipts(f):
            yield f"{f.stem}/{r.agent_id}", r


def texts(r: Receipt) -> dict[str, str]:
    """Every text for people about ``r``: banner, panes 1/5/6, ``check`` text and ``walk`` text."""
    rep: DashboardReport = build_report([r], T0, source="demo")
    v = rep.current
    assert v is not None

    def plain(m: str) -> str:
        return Content.from_markup(m).plain

    d = diagnose(r, T0)
    return {"banner": plain("\n".join(banner_lines(rep)[:2])) + "\n" + plain("\n".join(banner_lines(rep, 80)[:2])),
            "pane 6": plain(action_markup(v)), "pane 5": plain(CanaryPane().body(v, rep, T0)),
            "pane 1": plain(BackendPane().body(v, rep, T0)), "check": to_text([(r, d)]),
            "walk": "\n".join(walk_text(start_walk(d, now=T0)))}


CASES = list(receipts())


@pytest.mark.parametrize("name,r", CASES, ids=[n for n, _ in CASES])
def test_no_text_for_people_holds_a_raw_id(name, r):
    d = diagnose(r, T0)
    for where, text in texts(r).items():
        for line in text.splitlines():
            raw = [m for m in RAW.findall(line) if m in IDS]
            assert not raw, f"{where}: {line!r}"
            assert not [u for u in UPPER_IDS if re.search(rf"\b{u}\b", line)], f"{where}: {line!r}"
            if d.reason and reason_words(d.reason) != d.reason:  # single-word tags too: `Stale index · dirty`
                assert f"· {d.reason} " not in line + " ", f"{where}: {line!r}"
            fb = r.backend.fallback_reason
            if fb and reason_words(fb) != fb:
                assert f"· {fb}" not in line + " ", f"{where}: {line!r}"


def test_banner_says_the_rule_number_never_the_verdict_id_again():
    for name, r in CASES:
        rep = build_report([r], T0, source="demo")
        line = Content.from_markup(banner_lines(rep)[0]).plain
        d = diagnose(r, T0)
        assert f"rule {d.rule}/13 · exit {d.exit_code}" in line, (name, line)


def test_json_keeps_the_ids():
    for name, r in CASES[:40]:
        d = diagnose(r, T0)
        (doc,) = json.loads(to_json([(r, d)]))["receipts"]
        assert doc["verdict"] == d.verdict.value and doc["reason"] == d.reason, name


def test_the_same_unrecognized_line_from_several_sources_is_shown_once_with_its_count():
    """Pane 1, the ``check`` text and the verdict's evidence say one repeated line once (``×4``), so the key
    lines stay above the fold at 80×24."""
    from clawprobe.core.receipt import LedgerEntry

    rs, _ = demo.at_now(demo.scenarios()[0], T0)
    same = "Error: file is not a database"
    srcs = ["stderr of `openclaw memory status`", "exit status of `openclaw memory status`",
            "stderr of `openclaw memory search`", "exit status of `openclaw memory search`"]
    ledger = [LedgerEntry(source=s, line=same, kind="unrecognized") for s in srcs]
    ledger.append(LedgerEntry(source="gateway log", line="something else", kind="unrecognized"))
    r = rs[0].model_copy(update={"ledger": ledger})
    d = diagnose(r, T0)
    assert d.reason == "unrecognized_signal"
    shown = texts(r)
    for where in ("pane 1", "check"):
        hits = [ln for ln in shown[where].splitlines() if same in ln and "evidence:" not in ln]  # check: + evidence
        assert len(hits) == 1 and "×4" in hits[0] and "+3 more" in hits[0], (where, hits)
        assert sum("something else" in ln and "evidence:" not in ln for ln in shown[where].splitlines()) == 1
    assert [ev for ev in d.evidence if same in ev] == [
        f"unrecognized signal ({srcs[0]} +3 more): {same} ×4"]
