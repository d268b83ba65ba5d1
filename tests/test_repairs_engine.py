"""Repairs for the engine in use (spec §10): the whole repair catalog × both backends × both eras.

A builtin agent (any era) is never handed a ``qmd …`` command or a QMD XDG dir; on 2026.8.1+ (no QMD backend)
no step sets a ``memory.qmd.*`` key (removing it is fine: ``doctor --fix``, ``config unset``). Entries that only a
QMD agent can reach (QMD reachability, fallback, vectors in a QMD mode, QMD scope, ``…/qmd`` variants) are
checked for QMD on 2026.7.35 only — and are proven unreachable for builtin receipts by the rules themselves.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from clawprobe.core.locate import has_qmd_backend
from clawprobe.core.receipt import Canary, LockHolder, Receipt
from clawprobe.core.repairs import RepairAction, catalog, repair_for
from clawprobe.core.verdicts import Verdict

T0 = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
ERAS = ("2026.7.35", "2026.9.6")
QMD_ONLY_VERDICTS = {Verdict.QMD_UNAVAILABLE, Verdict.FALLBACK_ACTIVE, Verdict.SCOPE_DENIED}
_ASSIGN = re.compile(r"^(?:\w+=\S*\s+)+")
XDG = re.compile(r"XDG_(?:CONFIG|CACHE|DATA)_HOME|/qmd/xdg-")
QMD_KEY_SET = re.compile(r"config set memory\.qmd\.|memory\.qmd\.\w+\s*[:=]")


def runs_qmd(text: str) -> bool:
    """Whether a command line runs qmd as a program (first word of any ``;``/``&&``/``|`` part, after env
    assignments and ``env``/``sudo``) — a path *to* a QMD dir (``cp -a …/qmd …``) is not running qmd."""
    for part in re.split(r"[;&|]+|\$\(", text):
        words = _ASSIGN.sub("", part.strip()).split()
        while words and words[0] in ("env", "sudo", "exec", "nohup"):
            words = [w for w in words[1:] if not w.startswith("-")]
            words = _ASSIGN.sub("", " ".join(words)).split()
        if words and re.sub(r"\.(cmd|exe)$", "", words[0].rsplit("/", 1)[-1]) == "qmd":
            return True
    return False


def _qmd_only(verdict: Verdict, key: str | None) -> bool:
    reason, _, variant = (key or "").partition("/")
    if variant in ("qmd", "search", "vsearch", "query") or verdict in QMD_ONLY_VERDICTS | {Verdict.BACKEND_RETIRED}:
        return True
    if verdict == Verdict.VECTOR_NOT_READY and reason != "vector_extension":
        return True  # the rule reads QMD's vectors only; builtin's vector fault is vector_extension
    return verdict == Verdict.RETRIEVAL_FAILED and reason in ("search_not_invoked", "vector_miss", "wrong_store",
                                                              "index_locked")


def _receipt(backend: str, era: str) -> Receipt:
    r = Receipt(checked_at=T0)
    r.config.configured_backend = backend  # type: ignore[assignment]
    r.openclaw.version, r.openclaw.has_qmd_backend = era, has_qmd_backend(era)
    r.config.path, r.config.workspace = "/srv/oc/openclaw.json", "/srv/ws"
    r.gateway.path_dirs = ["/usr/local/bin", "/usr/bin"]
    r.qmd.command, r.qmd.resolved_path, r.qmd.resolves = "qmd", "/usr/local/bin/qmd", True
    r.qmd.lock_holders = [LockHolder(pid=4242, what="qmd embed")]
    r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="miss")
    return r


def _told(a: RepairAction) -> list[str]:
    """Everything the action tells the operator to run or set (its commands and step commands)."""
    return [x for x in [a.command, *[s.command for s in a.steps]] if x]


def _cases():
    for verdict, key in catalog():
        for backend in ("builtin", "qmd"):
            for era in ERAS:
                if backend == "qmd" and era != "2026.7.35" and verdict != Verdict.BACKEND_RETIRED:
                    continue  # QMD config on 2026.8.1+ is backend_retired: the agent runs builtin
                if backend == "builtin" and _qmd_only(verdict, key):
                    continue
                yield pytest.param(verdict, key, backend, era, id=f"{verdict.value}-{key}-{backend}-{era}")


@pytest.mark.parametrize("verdict,key,backend,era", list(_cases()))
def test_repairs_name_only_the_engine_in_use(verdict, key, backend, era):
    reason = (key or "").partition("/")[0] or None
    r = _receipt(backend, era)
    a = repair_for(verdict, reason, r, openclaw="openclaw", state_dir="/srv/oc")
    told = _told(a)
    builtin_agent = backend == "builtin" or not has_qmd_backend(era)
    if builtin_agent:
        for t in told:
            assert not runs_qmd(t), (verdict.value, key, t)
            assert not XDG.search(t), (verdict.value, key, t)
    if not has_qmd_backend(era):
        for t in told:
            assert not QMD_KEY_SET.search(t), (verdict.value, key, t)


def test_qmd_only_entries_are_unreachable_for_builtin():
    """The rules never give a builtin receipt a verdict/tag the test above skipped for builtin."""
    from clawprobe.core.diagnosis import diagnose

    for era in ERAS:
        r = _receipt("builtin", era)
        r.qmd.resolves, r.qmd.store_ok, r.qmd.failure = False, False, "not_on_path"
        r.backend.effective, r.backend.fallback_reason = "builtin", "binary_unavailable"
        r.canary = Canary(expected_path="memory/clawprobe-canary.md", outcome="miss", direct_qmd_found=True,
                          reason="search_not_invoked")
        d = diagnose(r)
        assert d.verdict not in QMD_ONLY_VERDICTS | {Verdict.VECTOR_NOT_READY}, d.verdict


@pytest.mark.parametrize("text,runs", [("qmd --version", True), ("XDG_CONFIG_HOME=/x /usr/local/bin/qmd search t", True),
                                       ("cp -a /srv/oc/agents/main/qmd /srv/oc/agents/main/qmd.bak", False),
                                       ("env -i PATH=/bin qmd ls", True), ("pgrep -af 'qmd (embed|update)'", False),
                                       ("openclaw memory status --deep --agent main", False)])
def test_runs_qmd(text, runs):
    assert runs_qmd(text) is runs


def test_the_catalog_is_covered():
    n = len(list(_cases()))
    assert n > 2 * len(catalog())
