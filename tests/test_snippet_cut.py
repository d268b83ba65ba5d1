"""Breaker round 25 (r25q): ``memory.qmd.limits.maxSnippetChars`` or ``maxInjectedChars`` set so low that OpenClaw
cuts every QMD hit down to qmd's ``@@ -6,3 @@ (5 before, 0 after)`` line (measured with 2026.7.35 and qmd 2.8.3:
``maxSnippetChars: 30``). The search finds the canary's file, the agent gets no note text. clawprobe said
``retrieval_failed · search_not_invoked`` and "upgrade OpenClaw"; the cut is read from the hit (its snippet as
long as the configured limit, without the token) and the repair raises that limit."""

from __future__ import annotations

import json

import pytest

from clawprobe.core.probe import CanarySpec, canary_facts
from clawprobe.core.probes.config import memory_settings
from clawprobe.core.probes.openclaw_cli import parse_search

TOKEN = "CLAWPROBE-CANARY-ABCDEFGHIJKLMNOP"
SPEC = CanarySpec(token=TOKEN, expected_path="memory/clawprobe-canary.md", content_sha256=None, planted_at=None)


def _search(snippet: str, path: str = "memory/clawprobe-canary.md") -> object:
    out = json.dumps({"results": [{"path": path, "startLine": 6, "endLine": 8, "score": 0.27, "snippet": snippet,
                                   "source": "memory"}]})
    return parse_search(out, "", 0, 3.0, False)


@pytest.mark.parametrize("limits,cap", [
    ({}, (450, "memory.qmd.limits.maxSnippetChars")),
    ({"maxSnippetChars": 30}, (30, "memory.qmd.limits.maxSnippetChars")),
    ({"maxSnippetChars": 30.9, "maxInjectedChars": 30}, (30, "memory.qmd.limits.maxSnippetChars")),  # floored; a tie
    ({"maxInjectedChars": 12}, (12, "memory.qmd.limits.maxInjectedChars")),
    ({"maxSnippetChars": 0, "maxInjectedChars": "9"}, (450, "memory.qmd.limits.maxSnippetChars")),  # not positive numbers
])
def test_the_limit_that_cuts_a_hit_is_resolved_as_openclaw_resolves_it(limits, cap):
    tree = {"memory": {"backend": "qmd", "qmd": {"limits": limits}}}
    assert memory_settings(tree, "ops-bot").snippet_cap == cap


def test_a_canary_hit_cut_to_the_limit_is_a_cut_not_a_miss():
    cut = canary_facts(SPEC, _search("@@ -6,3 @@ (5 before, 0 after)"), None, 4.0, None,
                       snippet_cap=(30, "memory.qmd.limits.maxSnippetChars"))
    assert (cut.outcome, cut.reason) == ("miss", "snippet_cut")
    assert "memory.qmd.limits.maxSnippetChars = 30" in (cut.detail or "")
    # the same text shorter than the limit was not cut: a plain miss; another file's cut hit says nothing
    assert canary_facts(SPEC, _search("@@ -6,3 @@ (5 before, 0 after)"), None, 4.0, None,
                        snippet_cap=(450, "memory.qmd.limits.maxSnippetChars")).reason is None
    assert canary_facts(SPEC, _search("@@ -6,3 @@ (5 before, 0 after)", "memory/other.md"), None, 4.0, None,
                        snippet_cap=(30, "memory.qmd.limits.maxSnippetChars")).reason is None
    found = canary_facts(SPEC, _search(f"@@ -6,3 @@ (5 before, 0 after)\n\nUnique canary: {TOKEN}"), None, 4.0, None,
                         snippet_cap=(30, "memory.qmd.limits.maxSnippetChars"))
    assert found.outcome == "found"


def test_a_builtin_hit_is_never_cut_by_the_qmd_limit():
    """Review: ``memory.qmd.limits`` cut only QMD's hits. A builtin-shaped hit (``id``/``textScore``: the CLI fell
    back to the builtin engine) holding a stale token is the stale index's miss, not a cut: with a low QMD limit it
    read ``snippet_cut`` and its repair raised a limit that never touched that hit."""
    out = json.dumps({"results": [{"path": "memory/clawprobe-canary.md", "startLine": 1, "endLine": 9, "score": 0.5,
                                   "snippet": "# clawprobe canary\n\nCanary token: CLAWPROBE-CANARY-OLDOLDOLDOLDOLDO",
                                   "source": "memory", "id": "x", "textScore": 0.4}]})
    c = canary_facts(SPEC, parse_search(out, "", 0, 3.0, False), None, 4.0, None,
                     snippet_cap=(30, "memory.qmd.limits.maxSnippetChars"))
    assert c.outcome == "miss" and c.reason is None
