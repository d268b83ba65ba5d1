"""Write partial model downloads exactly the way ipull 3.9.5 (node-llama-cpp 3.20.0, qmd 2.8.3) does.

Read from the installed ipull ``dist/``: ``DownloadEngineWriteStreamNodejs`` creates ``<final>.ipull`` empty
(``fs-extra ensureFile``), opens it ``r+``, writes each received chunk at its offset (the file stays sparse),
and after each chunk completes ``saveMedataAfterFile`` writes ``JSON.stringify(progress)`` at offset = the
file's total size — ``{"part":0,"chunks":[…],"chunkSize":5242880,"parallelStreams":3}``, chunk statuses
0 not started / 1 in progress / 2 complete. On finish: ``ftruncate(total)`` then ``rename`` to the final name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CHUNK = 5 * 1024 * 1024  # ipull's default chunkSize
GGUF_HEADER = b"GGUF" + (3).to_bytes(4, "little")


class IpullDownload:
    """One simulated download of ``total`` bytes into ``final`` (+ ``.ipull``), chunk by chunk."""

    def __init__(self, final: Path, total: int, chunk_size: int = CHUNK, streams: int = 3) -> None:
        self.final = Path(final)
        self.path = Path(str(final) + ".ipull")
        self.total = total
        self.chunk_size = chunk_size
        self.streams = streams
        self.chunks = [0] * -(-total // chunk_size)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()  # ensureFile

    def _chunk_bytes(self, i: int) -> bytes:
        size = min(self.chunk_size, self.total - i * self.chunk_size)
        body = bytes((i * 7 + k) % 251 for k in range(256)) * (size // 256 + 1)
        data = (GGUF_HEADER + body)[:size] if i == 0 else body[:size]
        return data

    def _save(self) -> None:
        trailer = json.dumps({"part": 0, "chunks": self.chunks, "chunkSize": self.chunk_size,
                              "parallelStreams": self.streams}, separators=(",", ":")).encode()
        with open(self.path, "r+b") as f:
            f.seek(self.total)
            f.write(trailer)

    def start(self, i: int) -> None:
        """Mark chunk ``i`` in progress (status 1) — a stream picked it up."""
        self.chunks[i] = 1
        self._save()

    def complete(self, i: int) -> None:
        """Write chunk ``i`` at its offset and save the trailer with status 2."""
        with open(self.path, "r+b") as f:
            f.seek(i * self.chunk_size)
            f.write(self._chunk_bytes(i))
        self.chunks[i] = 2
        self._save()

    def finish(self) -> None:
        """Write any missing chunk, truncate to the total size and rename to the final name."""
        for i, c in enumerate(self.chunks):
            if c != 2:
                self.complete(i)
        with open(self.path, "r+b") as f:
            f.truncate(self.total)
        os.rename(self.path, self.final)

    @property
    def written(self) -> int:
        return sum(min(self.chunk_size, self.total - i * self.chunk_size) for i, c in enumerate(self.chunks) if c == 2)
