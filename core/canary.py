"""The synthetic canary: plant, rotate, remove, and judge what a search for it returned.

The canary is a Markdown file ``memory/clawprobe-canary.md`` in the agent's workspace — inside the
default managed collection (``memory-dir-<id>`` / the builtin ``memory/`` tree), not hidden, not dated
(no recency decay) — holding one synthetic token ``CLAWPROBE-CANARY-<16 base32 chars>`` and no real data.
It is written only when the operator asks (``clawprobe canary plant|rotate|remove``), atomically (temp
file in the same dir + fsync + ``os.replace``, :func:`core.history.atomic_write`; the temp name is hidden
and ends in ``.tmp``, so no indexer picks it up).

clawprobe's own record of it (token, token sha256, relative path, content sha256, planted time, tokens
retired by rotation) lives under clawprobe's data dir (``$CLAWPROBE_DATA_DIR`` or the platform user data
dir, :func:`core.history.data_dir`), never in OpenClaw's state.

Retrieval is judged by :func:`core.probe.canary_facts` from the parsed ``openclaw memory search TOKEN
--json``; the helpers here (:func:`token_found`, :func:`token_hits`) read raw result lists (OpenClaw's
``{"results": [...]}`` or a direct ``qmd search TOKEN --json`` ``[...]``), and :func:`trace` adds planted → indexed (``content.created_at``) → embedded (``embedded_at``) times from the
index facts. A retired token that is still found is a staleness signal (``old_token_found``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.receipt import Canary
from core.history import atomic_write, data_dir

CANARY_REL = "memory/clawprobe-canary.md"
TOKEN_PREFIX = "CLAWPROBE-CANARY-"
HEADER = "# clawprobe canary"
MAX_RETIRED = 10
_TOKEN_RX = re.compile(r"CLAWPROBE-CANARY-[A-Z2-7]{16}")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class CanaryError(Exception):
    """A canary action that must not happen (a foreign file in the way, nothing to rotate…); the message is
    shown to the operator as is."""


class RetiredToken(BaseModel):
    """A token replaced by :func:`rotate` or :func:`remove`: if a search still finds it, the index is stale."""

    model_config = ConfigDict(extra="forbid")
    token: str
    token_sha256: str
    planted_at: datetime
    retired_at: datetime


class CanaryRecord(BaseModel):
    """clawprobe's record of one agent's canary (source: ``<data dir>/canary/<agent>-<ws hash>.json``).

    ``rel_path`` is workspace-relative; ``content_sha256`` hashes the whole planted file (QMD's
    ``documents.hash`` and the builtin ``hash`` use the same sha256, so the index can be matched to it);
    ``removed_at`` is set after :func:`remove` (the record stays to watch retired tokens).
    """

    model_config = ConfigDict(extra="forbid")
    agent_id: str
    workspace: str
    token: str
    token_sha256: str
    rel_path: str = CANARY_REL
    content_sha256: str
    planted_at: datetime
    removed_at: datetime | None = None
    retired: list[RetiredToken] = Field(default_factory=list)

    @property
    def active(self) -> bool:
        """True while the canary is planted (not removed)."""
        return self.removed_at is None


def sha256_text(text: str) -> str:
    """sha256 hex of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh synthetic token: ``CLAWPROBE-CANARY-`` + 16 base32 characters (80 random bits)."""
    return TOKEN_PREFIX + base64.b32encode(secrets.token_bytes(10)).decode("ascii")


def canary_text(token: str) -> str:
    """The canary file's full text (synthetic, no real data; the token on its own line)."""
    return (f"{HEADER}\n\nA synthetic health-check note written by clawprobe. It holds no real data and proves\n"
            "only that this memory file is indexed and can be retrieved. Safe to keep; remove it with\n"
            "`clawprobe canary remove`.\n\n"
            f"Canary token: {token}\n")


def record_path(workspace: str | os.PathLike[str], agent_id: str, root: str | os.PathLike[str] | None = None) -> Path:
    """Where the record for (workspace, agent) lives: ``<data dir>/canary/<agent>-<sha256(ws)[:12]>.json``."""
    ws = os.path.realpath(os.fspath(workspace))
    base = Path(root) if root is not None else data_dir()
    return base / "canary" / f"{_SAFE.sub('_', agent_id) or '_'}-{sha256_text(ws)[:12]}.json"


def load(workspace: str | os.PathLike[str], agent_id: str, *, root: str | os.PathLike[str] | None = None
         ) -> CanaryRecord | None:
    """The saved record, or ``None`` when there is none. Raises :class:`CanaryError` for an unreadable one."""
    p = record_path(workspace, agent_id, root)
    if p.exists() and not p.is_file():  # a FIFO would block the read
        raise CanaryError(f"the canary record {p} is not a regular file; remove it and plant again")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CanaryError(f"cannot read the canary record {p}: {e}") from None
    try:
        return CanaryRecord.model_validate_json(text)
    except ValidationError as e:
        raise CanaryError(f"the canary record {p} is damaged ({e.error_count()} errors); delete it and plant again") from None


def _save(rec: CanaryRecord, root: str | os.PathLike[str] | None) -> None:
    atomic_write(record_path(rec.workspace, rec.agent_id, root), rec.model_dump_json(indent=2))


def file_state(rec: CanaryRecord) -> Literal["present", "missing", "modified", "foreign"]:
    """``present`` (our content), ``missing``, ``modified`` (our header, other content) or ``foreign``."""
    p = Path(rec.workspace) / rec.rel_path
    if p.exists() and not p.is_file():  # a directory or FIFO where our file should be: not ours
        return "foreign"
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "foreign"
    if sha256_text(text) == rec.content_sha256:
        return "present"
    return "modified" if _ours(text) else "foreign"


def _ours(text: str) -> bool:
    return text.startswith(HEADER) and bool(_TOKEN_RX.search(text))


def _write_canary(workspace: str, token: str) -> str:
    path = Path(workspace) / CANARY_REL
    if path.is_symlink():
        raise CanaryError(f"{path} is a symlink: the canary must be a regular file (symlinks are not indexed)")
    if path.exists() and not path.is_file():
        raise CanaryError(f"{path} exists and is not a regular file: refusing to replace it")
    if path.exists():
        try:
            existing = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise CanaryError(f"cannot read {path}: {e}") from None
        if not _ours(existing):
            raise CanaryError(f"{path} exists and was not written by clawprobe: refusing to overwrite it")
    text = canary_text(token)
    atomic_write(path, text)
    return sha256_text(text)


def plant(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
          root: str | os.PathLike[str] | None = None) -> CanaryRecord:
    """Write a new canary file and record it. Raises :class:`CanaryError` when one is already planted
    (use :func:`rotate`) or a file clawprobe did not write is in the way."""
    ws = os.fspath(workspace)
    if not os.path.isdir(ws):
        raise CanaryError(f"workspace {ws} does not exist")
    now = now or datetime.now(timezone.utc)
    old = load(ws, agent_id, root=root)
    if old is not None and old.active and file_state(old) == "present":
        raise CanaryError(f"a canary is already planted in {Path(ws) / old.rel_path} (planted {old.planted_at:%Y-%m-%d %H:%M}Z); "
                          "use `clawprobe canary rotate` for a new token")
    token = new_token()
    digest = _write_canary(ws, token)
    retired = _retire(old, now) if old is not None else []
    rec = CanaryRecord(agent_id=agent_id, workspace=os.path.realpath(ws), token=token, token_sha256=sha256_text(token),
                       content_sha256=digest, planted_at=now, retired=retired)
    _save(rec, root)
    return rec


def _retire(old: CanaryRecord, now: datetime) -> list[RetiredToken]:
    out = list(old.retired)
    if old.active or not any(r.token == old.token for r in out):
        out.append(RetiredToken(token=old.token, token_sha256=old.token_sha256, planted_at=old.planted_at, retired_at=now))
    return out[-MAX_RETIRED:]


def rotate(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
           root: str | os.PathLike[str] | None = None) -> CanaryRecord:
    """Replace the token (the old one is retired: still finding it later means a stale index). Without a
    planted canary this plants one."""
    ws = os.fspath(workspace)
    old = load(ws, agent_id, root=root)
    if old is None or not old.active:
        return plant(ws, agent_id, now=now, root=root)
    now = now or datetime.now(timezone.utc)
    token = new_token()
    digest = _write_canary(ws, token)
    rec = old.model_copy(update={"token": token, "token_sha256": sha256_text(token), "content_sha256": digest,
                                 "planted_at": now, "retired": _retire(old, now)})
    _save(rec, root)
    return rec


def remove(workspace: str | os.PathLike[str], agent_id: str, *, now: datetime | None = None,
           root: str | os.PathLike[str] | None = None) -> CanaryRecord | None:
    """Delete the canary file (only if clawprobe wrote it) and mark the record removed; its token is
    retired. ``None`` when nothing was planted. Raises :class:`CanaryError` for a foreign file."""
    ws = os.fspath(workspace)
    rec = load(ws, agent_id, root=root)
    if rec is None or not rec.active:
        return None
    now = now or datetime.now(timezone.utc)
    state = file_state(rec)
    if state == "foreign":
        raise CanaryError(f"{Path(ws) / rec.rel_path} no longer holds clawprobe's canary: not deleting it")
    if state in ("present", "modified"):
        (Path(ws) / rec.rel_path).unlink()
    out = rec.model_copy(update={"removed_at": now, "retired": _retire(rec, now)})
    _save(out, root)
    return out


# ---------------------------------------------------------------------------------------------------
# judging a search (pure)
# ---------------------------------------------------------------------------------------------------

def parse_results(text: str) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Search output → ``(results, error)``. Accepts OpenClaw's ``{"results": [...]}``, qmd's bare list,
    and OpenClaw's ``{"ok": false, "error": {...}}``; ``(None, message)`` when it is not that."""
    s = (text or "").strip()
    if not s:
        return None, "no output"
    try:
        doc = json.loads(s)
    except ValueError:
        start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
        try:
            doc = json.loads(s[start:]) if start > 0 else None
        except ValueError:
            doc = None
        if doc is None:
            return None, "output is not JSON"
    if isinstance(doc, list):
        return [r for r in doc if isinstance(r, dict)], None
    if isinstance(doc, dict):
        if isinstance(doc.get("results"), list):
            return [r for r in doc["results"] if isinstance(r, dict)], None
        if doc.get("ok") is False:
            err = doc.get("error")
            msg = err.get("message") if isinstance(err, dict) else err
            return None, str(msg or "ok: false")
    return None, "unexpected JSON shape"


def _default_collection_dir(name: str) -> str | None:
    if name.startswith("memory-root-"):
        return ""
    if name.startswith("memory-dir-"):
        return "memory/"
    return None


def result_path(r: Mapping[str, Any], collection_dirs: Mapping[str, str] | None = None) -> str:
    """A result's workspace-relative path: OpenClaw's ``path``, or qmd's ``file`` ``qmd://<coll>/<rel>``
    mapped through ``collection_dirs`` (default: ``memory-root-*`` → ``""``, ``memory-dir-*`` → ``memory/``)."""
    p = str(r.get("path") or r.get("file") or "")
    if p.startswith("qmd://"):
        rest = p[len("qmd://"):].split("?", 1)[0]
        coll, _, rel = rest.partition("/")
        base = (collection_dirs or {}).get(coll)
        base = _default_collection_dir(coll) if base is None else base
        return f"{base}{rel}" if base is not None else p
    return p


def token_hits(results: Sequence[Mapping[str, Any]], token: str) -> list[Mapping[str, Any]]:
    """Results whose snippet/body contains ``token`` exactly (case-insensitive). A result without any text
    cannot be checked and counts as a hit."""
    t = token.lower()
    out = []
    for r in results:
        text = f"{r.get('snippet') or ''}\n{r.get('body') or ''}"
        if not text.strip() or t in text.lower():
            out.append(r)
    return out


def token_found(search_text: str, token: str) -> bool:
    """True when a search output (OpenClaw or qmd JSON) has a result holding ``token``."""
    results, _ = parse_results(search_text)
    return bool(results and token_hits(results, token))


def trace(canary: Canary, record: CanaryRecord | None, *, qmd_docs: Sequence[Any] = (),
          builtin_indexed_at: Mapping[str, datetime] | None = None, builtin_hashes: Mapping[str, str] | None = None,
          retrieved_at: datetime | None = None) -> Canary:
    """Add the planted → indexed → embedded → retrieved trace to ``canary`` (pure).

    ``qmd_docs`` are :class:`core.probes.qmd_index.IndexedDoc` rows: the doc whose hash equals the record's
    ``content_sha256`` gives ``indexed_at`` (``content.created_at``) and, when all its chunks exist for the
    current fingerprint, ``embedded_at``. For builtin, ``builtin_hashes`` (path → hash) and
    ``builtin_indexed_at`` (path → newest chunk ``updated_at``) do the same by path.
    """
    if record is None:
        return canary
    upd: dict[str, Any] = {"token_sha256": record.token_sha256, "expected_path": canary.expected_path or record.rel_path,
                           "content_sha256": record.content_sha256, "planted_at": record.planted_at}
    doc = next((d for d in qmd_docs if getattr(d, "hash", None) == record.content_sha256), None)
    if doc is not None:
        upd["indexed_at"] = doc.ingested_at
        if doc.embedded_at is not None and doc.expected_chunks and doc.chunks >= doc.expected_chunks:
            upd["embedded_at"] = doc.embedded_at
    elif builtin_hashes and builtin_hashes.get(record.rel_path) == record.content_sha256:
        upd["indexed_at"] = (builtin_indexed_at or {}).get(record.rel_path)
    if canary.outcome == "found" and retrieved_at is not None:
        upd["retrieved_at"] = retrieved_at
    return canary.model_copy(update=upd)


def old_token_found(search_texts: Mapping[str, str]) -> bool | None:
    """``search_texts`` maps each retired token to the output of a search for it; True when any is still
    found (a stale index: RW15), ``None`` when nothing was searched."""
    if not search_texts:
        return None
    return any(token_found(text, tok) for tok, text in search_texts.items())


def current_spec(state_dir: str | None, agent_id: str, workspace: str | os.PathLike[str], *,
                 root: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """What :func:`core.probe.slow` searches for: ``{token, expected_path, content_sha256, planted_at}`` of
    the planted canary of (workspace, agent), or ``None`` when none is planted. ``state_dir`` is unused
    (the record lives in clawprobe's data dir, keyed by workspace and agent)."""
    rec = load(workspace, agent_id, root=root)
    if rec is None or not rec.active:
        return None
    return {"token": rec.token, "expected_path": rec.rel_path, "content_sha256": rec.content_sha256,
            "planted_at": rec.planted_at}


def explain(canary: Canary, workspace: str, *, engine: Literal["qmd", "builtin"], collections: Sequence[Any] = (),
            extra_paths: Sequence[str] = (), lowercase_root_indexed: bool = False,
            wrong_store_detail: str | None = None) -> Canary:
    """Narrow a failed retrieval (``miss``/``wrong_source``) with the first explainer for the expected
    path — ``hidden_path``, ``case_mismatch``, ``symlink``, ``pattern_excluded``, ``not_in_collection``,
    ``empty_file`` (:func:`core.probes.workspace.explain_path`) — or ``wrong_store`` when the managed QMD
    index lacks its default collections (RW14). An existing ``reason`` is kept."""
    from core.probes.workspace import explain_path

    if canary.outcome not in ("miss", "wrong_source") or canary.reason not in (None, "wrong_source") \
            or not canary.expected_path:
        return canary
    found = explain_path(canary.expected_path, workspace, engine=engine, collections=collections,
                         extra_paths=extra_paths, lowercase_root_indexed=lowercase_root_indexed)
    found = [e for e in found if e.tag != "missing"] or found
    if wrong_store_detail and (not found or found[0].tag == "not_in_collection"):
        return canary.model_copy(update={"reason": "wrong_store", "detail": wrong_store_detail})
    if found:
        detail = "; ".join(e.message for e in found[:2])
        return canary.model_copy(update={"reason": found[0].tag,
                                         "detail": f"{canary.detail}; {detail}" if canary.detail else detail})
    return canary
