"""Nothing reads a whole note into memory: the workspace hash is streamed (a 1 GB sparse note is hashed in
bounded memory, to the same digest as hashlib over the file), and the text rules qmd and OpenClaw hash by
(invalid UTF-8 replaced, whitespace-only notes) still hold across chunk boundaries."""

from __future__ import annotations

import hashlib
import tracemalloc

from clawprobe.core.probes import workspace as ws

GB = 1024 ** 3


def _sha256_of_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def test_a_one_gigabyte_sparse_note_is_hashed_in_bounded_memory(tmp_path):
    note = tmp_path / "big.md"
    with open(note, "wb") as f:
        f.write(b"# big\n")
        f.truncate(GB)  # sparse: the rest reads as NUL bytes, valid UTF-8
        f.seek(GB - 5)
        f.write(b"tail\n")
    tracemalloc.start()
    try:
        digest, blank, why = ws.hash_file(str(note))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert why is None and blank is False
    assert digest == _sha256_of_file(note)
    assert peak < 32 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB traced while hashing a 1 GB note"


def test_invalid_utf8_split_across_chunks_hashes_the_replaced_text(tmp_path, monkeypatch):
    monkeypatch.setattr(ws, "HASH_CHUNK_BYTES", 7)
    data = b"caf\xc3\xa9 ok \xff\xfe bad \xe2\x82\xac euro\n"
    note = tmp_path / "n.md"
    note.write_bytes(data)
    digest, blank, _ = ws.hash_file(str(note))
    assert digest == hashlib.sha256(data.decode("utf-8", "replace").encode("utf-8")).hexdigest() and not blank
    valid = "café € " * 5
    note.write_text(valid, encoding="utf-8")
    assert ws.hash_file(str(note))[0] == hashlib.sha256(valid.encode()).hexdigest()


def test_a_whitespace_only_note_is_blank_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(ws, "HASH_CHUNK_BYTES", 3)
    note = tmp_path / "w.md"
    note.write_text(" \n\t\u00a0\u3000 \n", encoding="utf-8")
    assert ws.hash_file(str(note))[1] is True
    note.write_text(" \n\t\u00a0\u3000 x\n", encoding="utf-8")
    assert ws.hash_file(str(note))[1] is False
