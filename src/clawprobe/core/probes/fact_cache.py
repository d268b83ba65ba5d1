"""clawprobe's own on-disk cache of facts it read from OpenClaw/QMD state, keyed by that state's ``stat`` identity.

A one-shot ``clawprobe check`` (what a timer runs) starts with no memory of the last run; this module lets it
reuse what an earlier process read from a file that has not changed since — today the QMD index facts
(:func:`clawprobe.core.probes.qmd_index.read_qmd_index`). It stores JSON documents only; what a document means
and when it is valid is the caller's (the ``key``: e.g. the index's ``(dev, inode, size, mtime_ns, ctime_ns)``
and its ``-wal``/``-journal``, the embed model). Rules:

* **where**: ``$CLAWPROBE_CACHE_DIR`` when set, else the platformdirs user cache dir of ``clawprobe``, in the
  sub-directory ``facts/`` (created ``0700``) — never in OpenClaw's or QMD's state;
* **versioned**: a document carries :data:`FORMAT`, clawprobe's version, its ``kind``, the source path and
  the key; any mismatch is a miss;
* **corrupt or foreign = a miss**: unreadable, not JSON, another format or a key that does not match is
  ignored (and overwritten by the next :func:`save`), never raised;
* **atomic**: a temp file in the same dir, then ``os.replace``; an ``OSError`` while writing is swallowed
  (the cache is an optimisation: a read-only or full disk changes no verdict);
* **bounded**: at most :data:`MAX_FILES` documents (the oldest by mtime are removed) and
  :data:`MAX_BYTES` per document (a larger one is not written).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs

from clawprobe import __version__
from clawprobe.core.probes.fileinfo import open_regular

FORMAT = 1
MAX_FILES = 16
MAX_BYTES = 256 * 1024 * 1024


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$CLAWPROBE_CACHE_DIR/facts`` of ``env`` (default: the process environment), else the platformdirs
    user cache dir of ``clawprobe`` + ``/facts`` (not created here)."""
    override = (os.environ if env is None else env).get("CLAWPROBE_CACHE_DIR")
    base = Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("clawprobe", appauthor=False))
    return base / "facts"


def _file(kind: str, source: str, env: Mapping[str, str] | None) -> Path:
    digest = hashlib.sha256(f"{kind}\0{source}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir(env) / f"{kind}-{digest}.json"


def _key_text(key: Any) -> str:
    return json.dumps(key, separators=(",", ":"), sort_keys=True)


def load(kind: str, source: str, key: Any, *, env: Mapping[str, str] | None = None) -> Any | None:
    """The ``data`` saved for (``kind``, ``source``) under exactly ``key`` (JSON-able), or ``None``: absent,
    unreadable, corrupt, another format or clawprobe version, another source, another key. A document that is
    not a regular file (a FIFO would block the read forever) or larger than :data:`MAX_BYTES` is a miss too."""
    try:
        with open_regular(_file(kind, source, env)) as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return None
        doc = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("clawprobe") != __version__ \
            or doc.get("kind") != kind or doc.get("source") != source or doc.get("key") != _key_text(key):
        return None
    return doc.get("data")


def save(kind: str, source: str, key: Any, data: Any, *, env: Mapping[str, str] | None = None,
         keep_out: str | None = None) -> bool:
    """Write ``data`` (JSON-able) for (``kind``, ``source``) under ``key``, atomically; prune to
    :data:`MAX_FILES`. True when written; False (never an exception) when it could not be, was too big, or
    the cache dir lies inside ``keep_out`` (the OpenClaw state dir the source belongs to: e.g. clawprobe run
    with ``XDG_CACHE_HOME`` set to an agent's QMD cache must not write there)."""
    path = _file(kind, source, env)
    if keep_out is not None:
        real, out = os.path.realpath(path.parent), os.path.realpath(keep_out)
        if real == out or real.startswith(out.rstrip(os.sep) + os.sep):
            return False
    try:
        text = json.dumps({"format": FORMAT, "clawprobe": __version__, "kind": kind, "source": source,
                           "key": _key_text(key), "data": data}, separators=(",", ":"))
    except (TypeError, ValueError):
        return False
    if len(text) > MAX_BYTES:
        return False
    tmp = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        tmp = None
        _prune(path.parent)
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def forget(kind: str, *, env: Mapping[str, str] | None = None) -> None:
    """Remove every document of ``kind`` (tests and benchmarks that want a cold read); never raises."""
    with contextlib.suppress(OSError):
        for p in cache_dir(env).glob(f"{kind}-*.json"):
            with contextlib.suppress(OSError):
                p.unlink()


def _prune(d: Path) -> None:
    """Keep the :data:`MAX_FILES` newest documents of ``d`` (temp files of a killed writer older than an
    hour go too)."""
    docs: list[tuple[float, Path]] = []
    for p in d.iterdir():
        with contextlib.suppress(OSError):
            st = p.stat()
            if p.name.startswith(".tmp-"):
                if time.time() - st.st_mtime > 3600:
                    p.unlink()
            elif p.suffix == ".json":
                docs.append((st.st_mtime, p))
    for _, p in sorted(docs, reverse=True)[MAX_FILES:]:
        with contextlib.suppress(OSError):
            p.unlink()
