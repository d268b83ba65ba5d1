"""The scanner's :class:`GlobMatcher` answers exactly what ``wcmatch.glob.compile(...).match`` answers (the
scanner's rules of qmd's fast-glob, ``tests/test_workspace_scan.py``), for qmd's pattern shapes and odd paths."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wglob

from clawprobe.core.probes.workspace import _GLOB_FLAGS, GlobMatcher

PATTERNS = [["**/*.md"], ["MEMORY.md"], ["*.md"], ["notes/*.md"], ["**/*.{md,txt}"], ["**/!(draft)*.md"],
            ["a/**/b/*.md"], ["**/*.md", "!**/skip/**"], ["**/.hidden/*.md"], ["**/[ab]*.md"], ["**/?.md"],
            ["**/@(x|y).md"], ["**/*.MD"], ["memory/**"], ["**/*.md", "**/*.txt"], ["**/{a,b}.md"], ["**/a/b.md"],
            ["**/*"], ["**/!(*.md)"]]
PATHS = ["a.md", "MEMORY.md", "memory.md", "x/a.md", "x/y/z/a.md", ".h/a.md", "x/.h/a.md", "x/.a.md", "a.md/",
         "a.mdx", "a.md\n", "notes/a.md", "notes/x/a.md", "a/b/c.md", "a/x/y/b/c.md", "a/b/c/d.md", "draft1.md",
         "x/draftx.md", "skip/a.md", "x/skip/y/a.md", "b.txt", "x/a.txt", "x.md", "y.md", "z.md", "é/ü.md",
         "sp ace/a b.md", "x//a.md", "./a.md", "memory/x", "memory/", "[ab].md", "a.MD", "A.md"]


def test_every_pattern_shape_on_every_odd_path():
    for patterns, flags in itertools.product(PATTERNS, (_GLOB_FLAGS, _GLOB_FLAGS | wglob.DOTGLOB,
                                                       _GLOB_FLAGS | wglob.NEGATE)):
        ours, theirs = GlobMatcher(patterns, flags), wglob.compile(patterns, flags=flags)
        for p in PATHS:
            assert ours.match(p) == theirs.match(p), (patterns, flags, p)
            if all(part and not part.startswith(".") for part in p.split("/")):  # what a scan hands to match_visible
                assert ours.match_visible(p) == theirs.match(p), (patterns, flags, p)
    assert GlobMatcher(["**/*.md"], _GLOB_FLAGS).match("x/y/a.md") and not GlobMatcher(["**/*.md"], _GLOB_FLAGS).match(".x/a.md")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", ".", "md", "x.md", ".md", "*", "**", "?", "-", "é", " ", "draft"]),
                min_size=1, max_size=6).map("/".join),
       st.sampled_from(PATTERNS))
def test_generated_paths(path, patterns):
    ours, theirs = GlobMatcher(patterns, _GLOB_FLAGS), wglob.compile(patterns, flags=_GLOB_FLAGS).match(path)
    assert ours.match(path) == theirs
    if all(part and not part.startswith(".") for part in path.split("/")):
        assert ours.match_visible(path) == ours.match_visible(path) == theirs  # the memoized answer too


def test_the_basename_shortcut_is_taken_only_for_one_segment_globstar_patterns():
    assert GlobMatcher(["**/*.md"], _GLOB_FLAGS)._tail is not None
    assert GlobMatcher(["**/*.md", "**/*.txt"], _GLOB_FLAGS)._tail is not None
    for patterns in (["MEMORY.md"], ["a/**/*.md"], ["**/x/*.md"], ["**/*.md", "notes/*.md"], ["**/**"]):
        assert GlobMatcher(patterns, _GLOB_FLAGS)._tail is None, patterns
    assert GlobMatcher(["**/*.md"], _GLOB_FLAGS | wglob.DOTGLOB)._tail is None
