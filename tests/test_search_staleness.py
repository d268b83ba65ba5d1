"""The search's own staleness word (2026.9.x ``memory search --json``: ``"stale": true`` and a ``warning``) is
evidence (breaker round 16, C3): an index built before the provider's settings changed — "Memory index is stale:
index provider settings changed (owner: configuration, code: provider_settings)" — is an index identity mismatch
(one index run), even where a plain ``memory status`` says the identity is valid; a staleness that is the last
sync's error feeds the provider signals. Through the recorded RW46 bundle (real 2026.9.6 builtin)."""

from __future__ import annotations

import json

import pytest

from clawprobe.core.diagnosis import diagnose
from clawprobe.core.interpret import refine
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.recorded import assemble_parts, load_bundle
from tests.rw_support import DATA

IDENTITY = ("Memory index is stale: index provider settings changed (owner: configuration, code: provider_settings). "
            "Search results may be incomplete.")


def _search(warning: str | None, hits: bool = False) -> oc.SearchResult:
    doc: dict = {"results": [{"path": "memory/clawprobe-canary.md", "startLine": 1, "endLine": 3, "score": 0.4,
                              "snippet": "x", "source": "memory", "id": "c1", "textScore": 0.4}] if hits else []}
    if warning is not None:
        doc |= {"stale": True, "warning": warning, "action": "Run: openclaw memory status --index --agent main."}
    return oc.parse_search(json.dumps(doc), "", 0)


def test_the_warning_is_kept_only_when_the_search_says_stale():
    assert _search(IDENTITY).stale_warning == IDENTITY
    assert _search(None).stale_warning is None
    assert oc.parse_search(json.dumps({"results": [], "warning": "w"}), "", 0).stale_warning is None


@pytest.mark.parametrize("reason", ["index provider settings changed", "chunking settings changed"])
def test_an_identity_staleness_is_index_identity_not_a_canary_miss(reason):
    r, x = assemble_parts(load_bundle(DATA / "RW46"))
    assert diagnose(refine(r, x)).verdict.value == "healthy"  # (the miss that goes with it: tests/test_rw_real_builtin)
    out = refine(r, x.model_copy(update={"search": _search(IDENTITY.replace("index provider settings changed", reason))}))
    g = out.builtin.gates
    assert g.index_identity == "mismatched" and reason in (g.index_identity_reason or ""), g
    assert "code: provider_settings" in (g.index_identity_reason or "")
    assert refine(r, x).builtin.gates.index_identity in (None, "valid")  # without the warning: as before


def test_a_sync_error_staleness_is_read_as_its_error():
    """"Memory index is stale: fetch failed | connect ECONNREFUSED …" (the last sync's error) gives the provider
    signal it names, from the search's own JSON."""
    from clawprobe.core.interpret.signals import collect_signals

    _, x = assemble_parts(load_bundle(DATA / "RW46"))
    x = x.model_copy(update={"search": _search("Memory index is stale: fetch failed | connect ECONNREFUSED 127.0.0.1:9. "
                                                "Search results may be incomplete.")})
    sigs = [s for s in collect_signals(x) if s.source == "`openclaw memory search` JSON warning"]
    assert [s.tag for s in sigs] == ["provider_unreachable"], sigs


@pytest.mark.parametrize("why", [
    "index scope changed (owner: configuration, code: scope)",  # the real 2026.9.6 words
    "chunking settings changed (owner: configuration, code: chunking)",
    "a cause no OpenClaw build wrote (owner: elsewhere, code: q9)",  # unknown wording: still the identity
])
def test_an_extra_path_added_before_its_index_run_is_index_identity_not_dropped_paths(why):
    """Breaker round 25 (real 2026.9.6, agent main): `kb` added to memory.search.extraPaths while the gateway ran.
    The gateway restarted; every search — the canary's under memory/ too — answered "memory search is paused …
    (index scope changed)". The index held only the default roots, so clawprobe said "extra memory paths dropped",
    titled "…after one watcher cycle; upgrade" (a watcher bug, on the newest build). The measured cause is the index
    identity; its repair, one `memory index --agent main`, was run for real: 4 files indexed, the note found."""
    from clawprobe.core.verdicts import Verdict

    r, x = assemble_parts(load_bundle(DATA / "RW46"))
    scope = f"Memory index is stale: {why}. Search results may be incomplete."
    out = refine(r, x.model_copy(update={"search": _search(scope)}))
    assert out.builtin.gates.index_identity == "mismatched"
    dropped = out.model_copy(update={"canary": out.canary.model_copy(update={
        "outcome": "miss", "reason": "extrapaths_dropped",
        "detail": "the index holds 3 files = the 3 under MEMORY.md + memory/; extra paths with 0 indexed files: kb"})})
    d = diagnose(dropped)
    assert (d.verdict, d.reason) == (Verdict.RETRIEVAL_FAILED, "index_identity"), (d.reason, d.evidence)
    assert why.split(" (")[0] in " ".join(d.evidence)
    assert d.next_action is not None and "memory index --agent" in (d.next_action.command or "")
    assert "upgrade" not in d.next_action.title
