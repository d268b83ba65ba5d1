"""Review of round 26 (``builtin_index.hollow_notes``): 2026.9.6 strips its memory annotation carriers
(``<!-- importance: high -->``, ``<!-- trigger: … -->``, ``<!-- project: … -->``, each closing on its own line) from a
note before chunking it (``stripMemoryAnnotationCarriers`` in ``prepareMemoryIndexChunks``) and drops blank chunks,
so a note holding only carriers keeps its ``memory_index_sources`` row and no chunk — rightly, as a whitespace-only
one does. It was named ``retrieval_failed · notes_without_text`` → ``memory index --force``, which cannot give it a
chunk (a loop). 2026.7.35 strips nothing: there such a note has a chunk, and one without is still named."""

from __future__ import annotations

import hashlib

import pytest

from clawprobe.core.probes.builtin_index import BuiltinIndexFacts, hollow_notes
from clawprobe.core.probes.workspace import BuiltinSourceRow, DiskFile, DiskScan


def _facts(tmp_path, text: str, layout: str) -> tuple[BuiltinIndexFacts, DiskScan]:
    note = tmp_path / "memory" / "tags.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(text, encoding="utf-8")
    st = note.stat()
    digest = hashlib.sha256(text.encode()).hexdigest()
    facts = BuiltinIndexFacts(layout=layout, chunkless=["memory/tags.md"],
                              sources=[BuiltinSourceRow(path="memory/tags.md", hash=digest, mtime_ms=st.st_mtime * 1e3,
                                                        size=st.st_size)])
    scan = DiskScan(engine="builtin", workspace=str(tmp_path))
    scan.files.append(DiskFile("memory/tags.md", None, "memory/tags.md", str(note), st.st_size, st.st_mtime_ns))
    return facts, scan


@pytest.mark.parametrize(("text", "hollow_96"), [
    ("<!-- importance: high -->\n", False),
    ("<!-- trigger: deploy -->\n\n<!-- PROJECT : ops/x -->  \n", False),
    ("\ufeff<!--importance:low-->", False),
    ("<!-- importance: high -->\nThe harbour crane is blue.\n", True),  # text beside it: chunked
    ("<!-- importance: high\n-->\n", True),  # a carrier across lines is text, never stripped
    ("<!-- just a comment -->\n", True),  # not a carrier
    ("# Plan\n\nThe tramline survey starts in March.\n", True),
])
def test_a_note_of_annotation_carriers_only_has_no_text_to_chunk(tmp_path, text, hollow_96):
    facts, scan = _facts(tmp_path, text, "agent-db")
    assert (hollow_notes(facts, scan) == ["memory/tags.md"]) is hollow_96
    facts, scan = _facts(tmp_path, text, "legacy-sidecar")  # 2026.7.35 chunks the carriers as text
    assert hollow_notes(facts, scan) == ["memory/tags.md"]


def test_a_store_measured_not_regular_is_not_measured_again(tmp_path):
    """Review of round 26: ``read_builtin_index`` measured the FIFO at the store path (its open detail says so) and
    ``to_builtin_facts`` stat'ed the path a second time for ``store_damage``: replaced in between, the receipt said
    "is not a regular file (a FIFO)" with no damage — no verdict read it. One measurement, read twice."""
    import os

    from clawprobe.core.probes.builtin_index import read_builtin_index, to_builtin_facts

    store = tmp_path / "agents" / "kb-7" / "agent" / "openclaw-agent.sqlite"
    store.parent.mkdir(parents=True)
    os.mkfifo(store)
    facts = read_builtin_index(tmp_path, "kb-7")
    store.unlink()
    store.write_bytes(b"")
    b = to_builtin_facts(facts)
    assert (b.store_damage, b.store_unreadable) == ("not_regular", f"{store}: is not a regular file (a FIFO)")
