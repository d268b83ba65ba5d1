"""The synthetic canary: plant, rotate, remove, and judge what a search for it returned.

The canary is a Markdown file ``memory/clawprobe-canary.md`` in the agent's workspace — inside the
default managed collection (``memory-dir-<id>`` / the builtin ``memory/`` tree), not hidden, not dated
(no recency decay) — holding one synthetic token ``CLAWPROBE-CANARY-<16 base32 chars>`` and no real data.
It is written only when the operator asks (``clawprobe canary plant|rotate|remove``), by
:mod:`clawprobe.core.canary_write` (all or nothing, the mode of the operator's notes).

clawprobe's own record of it (token, token sha256, relative path, content sha256, planted time, tokens
retired by rotation) lives under clawprobe's data dir (``$CLAWPROBE_DATA_DIR`` or the platform user data
dir, :func:`clawprobe.core.history.data_dir`), never in OpenClaw's state.

Retrieval is judged by :func:`clawprobe.core.probe.canary_facts` from the parsed ``openclaw memory search TOKEN
--json``; the helpers here (:func:`token_found`, :func:`token_hits`) read raw result lists (OpenClaw's
``{"results": [...]}`` or a direct ``qmd search TOKEN --json`` ``[...]``), and :func:`trace` adds planted → indexed
(``content.created_at``) → embedded (``embedded_at``) times from the index facts. A retired token that is still found
is a staleness signal (``old_token_found``).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawprobe.core.history import data_dir
from clawprobe.core.probes.fileinfo import file_kind
from clawprobe.core.receipt import Canary

CANARY_REL = "memory/clawprobe-canary.md"
_CANARY_NAME = os.path.basename(CANARY_REL)
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
    ``removed_at`` is set after :func:`remove` (the record stays to watch retired tokens). ``script`` /
    ``script_token``: a canary written in the notes' own script (CJK, Thai…; :func:`new_script_token`) — the
    probe then searches for that token, so the result says whether the engine's tokenizer can find it.
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
    script: str | None = None
    script_token: str | None = None

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


def canary_text(token: str, script_token: str | None = None) -> str:
    """The canary file's full text (synthetic, no real data; the token on its own line). A ``script_token``
    (:func:`new_script_token`) follows on its own line, inside a run of the same script with no spaces — the
    way notes in that script are written, so a tokenizer that cannot split the run cannot find it."""
    text = (f"{HEADER}\n\nA synthetic health-check note written by clawprobe. It holds no real data and proves\n"
            "only that this memory file is indexed and can be retrieved. Safe to keep; remove it with\n"
            "`clawprobe canary remove`.\n\n"
            f"Canary token: {token}\n")
    if script_token:
        pad = script_token[:2]
        text += f"\n{pad}{script_token}{pad}\n"
    return text


#: per script, the code points a script token is drawn from (letters only; no spaces in these scripts)
SCRIPT_ALPHABETS: dict[str, tuple[int, int]] = {
    "Han": (0x4E00, 0x9FA5), "Hiragana": (0x3041, 0x3093), "Katakana": (0x30A1, 0x30F3), "Thai": (0x0E01, 0x0E2E),
    "Lao": (0x0E81, 0x0EAE), "Khmer": (0x1780, 0x17A2), "Myanmar": (0x1000, 0x102A),
}


def new_script_token(script: str, length: int = 8) -> str:
    """A fresh random run of ``length`` letters of ``script`` (:data:`SCRIPT_ALPHABETS`; 8 Han letters ≈ 113
    random bits). Raises ``ValueError`` for a script without an alphabet here."""
    lo, hi = SCRIPT_ALPHABETS[script] if script in SCRIPT_ALPHABETS else (None, None)
    if lo is None or hi is None:
        raise ValueError(f"no canary alphabet for script {script!r} (known: {', '.join(SCRIPT_ALPHABETS)})")
    return "".join(chr(lo + secrets.randbelow(hi - lo + 1)) for _ in range(length))


def record_path(workspace: str | os.PathLike[str], agent_id: str, root: str | os.PathLike[str] | None = None) -> Path:
    """Where the record for (workspace, agent) lives: ``<data dir>/canary/<agent>-<sha256(ws)[:12]>.json``."""
    ws = os.path.realpath(os.fspath(workspace))
    base = Path(root) if root is not None else data_dir()
    return base / "canary" / f"{_SAFE.sub('_', agent_id) or '_'}-{sha256_text(ws)[:12]}.json"


# ---------------------------------------------------------------------------------------------------
# the record
# ---------------------------------------------------------------------------------------------------

def _load(p: Path) -> tuple[CanaryRecord | None, bytes | None]:
    """(record, its raw bytes) at ``p``, ``(None, None)`` when there is none. Raises :class:`CanaryError`."""
    try:
        _, raw = _read_regular(str(p), follow=True)
    except FileNotFoundError:
        return None, None
    except _NotRegular as e:  # a FIFO would block the read
        raise CanaryError(f"the canary record {p} is not a regular file ({_kind(e.st)}); remove it and plant again") from None
    except OSError as e:
        raise CanaryError(f"cannot read the canary record {p}: {describe_os_error(e)} — "
                          f"{_hint(e, p.parent, ours=True)}") from None
    if len(raw) > _MAX_READ:
        raise CanaryError(f"the canary record {p} is damaged (over {_MAX_READ} bytes); delete it and plant again")
    try:
        return CanaryRecord.model_validate_json(raw), raw
    except ValidationError as e:
        raise CanaryError(f"the canary record {p} is damaged ({e.error_count()} errors); delete it and plant again") from None


def load(workspace: str | os.PathLike[str], agent_id: str, *, root: str | os.PathLike[str] | None = None
         ) -> CanaryRecord | None:
    """The saved record of (workspace, agent) in clawprobe's data dir, or ``None`` when there is none. Raises
    :class:`CanaryError` (a plain-words message) for an unreadable, non-regular or damaged one."""
    return _load(record_path(workspace, agent_id, root))[0]


def shared_record(workspace: str | os.PathLike[str], agent_id: str, *, root: str | os.PathLike[str] | None = None
                  ) -> CanaryRecord | None:
    """Another agent's active canary whose file is present in this same workspace (agents that share a
    workspace index the same notes: that one file proves the path for each of them, and a second plant would
    overwrite it — the canary file name is fixed), or ``None``. Records that cannot be read are skipped here
    (each agent's own probe reports its own). Source: the records in clawprobe's data dir
    (``canary/<agent>-<sha256(realpath(ws))[:12]>.json``), the file's state on disk (:func:`file_state`)."""
    ws = os.path.realpath(os.fspath(workspace))
    own = record_path(ws, agent_id, root)
    suffix = own.name.rsplit("-", 1)[1]
    try:
        names = sorted(n for n in os.listdir(own.parent) if n.endswith(f"-{suffix}") and n != own.name)
    except OSError:
        return None
    for name in names:
        try:
            rec = _load(own.parent / name)[0]
        except CanaryError:
            continue
        if rec is not None and rec.active and rec.agent_id != agent_id and rec.workspace == ws \
                and file_state(rec) == "present":
            return rec
    return None


# ---------------------------------------------------------------------------------------------------
# the file on disk (read-only)
# ---------------------------------------------------------------------------------------------------

FileState = Literal["present", "missing", "modified", "foreign", "unreadable"]
_MAX_READ = 1 << 20  # a canary is ~300 bytes: a bigger file at its path is not the one clawprobe planted

_WHY = {errno.EACCES: "permission denied", errno.EPERM: "operation not permitted", errno.EROFS: "read-only file system",
        errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
        errno.ENOENT: "no such file or directory", errno.ENOTDIR: "a part of the path is not a directory",
        errno.EISDIR: "it is a directory", errno.EEXIST: "it already exists", errno.EIO: "input/output error",
        errno.ELOOP: "too many levels of symlinks", errno.ENAMETOOLONG: "file name too long",
        errno.ENOTEMPTY: "directory not empty", errno.EBUSY: "device or resource busy",
        errno.EMLINK: "too many links", errno.EXDEV: "not on the same file system"}


def describe_os_error(e: OSError) -> str:
    """An ``OSError`` in plain words (``permission denied``, ``read-only file system``, ``no space left on
    device`` …), without the exception's class name, errno number or repr'd path."""
    return _WHY.get(e.errno or 0) or (e.strerror or str(e) or "unknown error").lower()


def _hint(e: OSError, where: Path | str, *, ours: bool) -> str:
    """One repair for a failed file operation in ``where`` (empty when there is none to give)."""
    tail = ", or set CLAWPROBE_DATA_DIR to a writable directory" if ours else ""
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"check the owner and mode of {where} (ls -ld {where}) and run clawprobe as its owner{tail}"
    if e.errno == errno.EROFS:
        return f"remount it read-write{tail}"
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free some space on that file system{tail}"
    return "set CLAWPROBE_DATA_DIR to a writable directory" if ours else ""


class _NotRegular(Exception):
    def __init__(self, st: os.stat_result) -> None:
        super().__init__("not a regular file")
        self.st = st


def _kind(st: os.stat_result) -> str:
    return file_kind(st.st_mode)


def _read_regular(path: str, *, dir_fd: int | None = None, follow: bool = False) -> tuple[os.stat_result, bytes]:
    """(fstat, up to ``_MAX_READ + 1`` bytes) of a regular file, opened non-blocking (a FIFO swapped in never
    blocks) and, unless ``follow``, without following a symlink at ``path`` itself. Raises ``OSError`` or
    :class:`_NotRegular`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegular(st)
        chunks, left = [], _MAX_READ + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 16))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return st, b"".join(chunks)
    finally:
        os.close(fd)


class CanaryFile(BaseModel):
    """What is at the canary path now (source: ``lstat`` and one read of ``<workspace>/<rel_path>``; a symlink
    at the file itself is never followed).

    ``state``: ``present`` (exactly the planted content) · ``modified`` (clawprobe's header and a token, other
    content: edited, or planted under another record) · ``foreign`` (not clawprobe's: other content, a
    symlink, a directory/FIFO) · ``unreadable`` (something is there but cannot be read — permission denied,
    I/O error — so whose it is is unknown) · ``missing``. ``detail`` says why in plain words; ``mode`` is the
    permission bits (``0o644``) when something is there, else ``None``.
    """

    model_config = ConfigDict(extra="forbid")
    path: str
    state: FileState
    detail: str
    mode: int | None = None


def _inspect(name: str, dir_fd: int | None, content_sha256: str, where: Path) -> tuple[CanaryFile, os.stat_result | None]:
    """Classify ``name`` (relative to ``dir_fd``, or a full path when it is ``None``) against the planted
    content hash; also returns its ``lstat`` (``None`` when nothing is there or it cannot be looked at)."""
    def out(state: FileState, detail: str, st: os.stat_result | None = None) -> tuple[CanaryFile, os.stat_result | None]:
        mode = stat.S_IMODE(st.st_mode) if st is not None else None
        return CanaryFile(path=str(where), state=state, detail=detail, mode=mode), st

    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        parent = where.parent
        return out("missing", "no file there" if parent.is_dir() else f"no file there ({parent} does not exist)")
    except NotADirectoryError:
        return out("missing", f"{where.parent} is not a directory")
    except OSError as e:
        return out("unreadable", f"cannot look into {where.parent}: {describe_os_error(e)}")
    if stat.S_ISLNK(st.st_mode):
        try:
            to = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            to = "?"
        return out("foreign", f"a symlink to {to}, not the regular file clawprobe plants (symlinks are not indexed)", st)
    if not stat.S_ISREG(st.st_mode):
        return out("foreign", f"{_kind(st)}, not a regular file: not clawprobe's", st)
    try:
        st, data = _read_regular(name, dir_fd=dir_fd)
    except _NotRegular as e:
        return out("foreign", f"{_kind(e.st)}, not a regular file: not clawprobe's", e.st)
    except OSError as e:
        return out("unreadable", f"{describe_os_error(e)}: clawprobe cannot read it, so it cannot tell whether it is "
                                 f"its canary, and OpenClaw may not read it either (ls -l {where})", st)
    if len(data) <= _MAX_READ and hashlib.sha256(data).hexdigest() == content_sha256:
        return out("present", "exactly the planted content", st)
    if _ours(data[:_MAX_READ].decode("utf-8", errors="replace")):
        return out("modified", "clawprobe's canary header and a token, but not the planted content", st)
    return out("foreign", "another file: not written by clawprobe", st)


def check_file(rec: CanaryRecord) -> CanaryFile:
    """What is at ``rec``'s canary path now (read-only; see :class:`CanaryFile`). Never raises for the disk."""
    p = Path(rec.workspace) / rec.rel_path
    return _inspect(str(p), None, rec.content_sha256, p)[0]


def file_state(rec: CanaryRecord) -> FileState:
    """``present``, ``modified``, ``foreign``, ``unreadable`` or ``missing`` (:func:`check_file`'s state)."""
    return check_file(rec).state


#: dirs :func:`moved_dir` never looks into (version control, package trees: never a renamed notes dir)
_MOVE_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__"})


def moved_dir(rec: CanaryRecord, *, max_dirs: int = 400, max_depth: int = 3) -> tuple[str, str] | None:
    """Where the directory the canary was planted in went: ``(planted_dir, now_dir)``, both workspace-relative
    (``("memory", "notes")``), when that directory no longer exists and another directory of the workspace
    holds a regular file of the canary's name with exactly the planted content (sha256 ``rec.content_sha256``):
    the notes directory was renamed or moved, taking the operator's notes with it, so rotating the canary
    would recreate an empty ``memory/`` beside them and hide the loss (breaker round 25).

    ``None`` when the planted directory exists (or is the workspace itself), or no such copy is found within
    ``max_dirs`` directories at depth ≤ ``max_depth`` below the workspace (symlinks never followed; version
    control and package dirs skipped). Read-only; never raises for the disk."""
    ws = Path(rec.workspace)
    planted = os.path.dirname(rec.rel_path)
    if not planted or os.path.lexists(ws / planted) or not ws.is_dir():
        return None
    name, seen = os.path.basename(rec.rel_path), 0
    for top, dirs, files in os.walk(ws, onerror=None, followlinks=False):
        seen += 1
        if seen > max_dirs:  # dirs listed a level up are still queued: stop, not only stop descending
            break
        depth = 0 if top == str(ws) else os.path.relpath(top, ws).count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if d not in _MOVE_SKIP) if depth < max_depth and seen < max_dirs else []
        if name in files and depth > 0:
            try:
                _, data = _read_regular(os.path.join(top, name))
            except (OSError, _NotRegular):
                continue
            if len(data) <= _MAX_READ and hashlib.sha256(data).hexdigest() == rec.content_sha256:
                return planted, os.path.relpath(top, ws)
    return None


def token_on_disk(rec: CanaryRecord) -> bool | None:
    """Whether the token the probe searches for (the script token when there is one, else the token) is
    still in the canary file on disk: ``None`` when the file cannot be read as a regular file (read-only,
    bounded, a symlink at the path not followed)."""
    try:
        _, data = _read_regular(str(Path(rec.workspace) / rec.rel_path))
    except (OSError, _NotRegular):
        return None
    return (rec.script_token or rec.token) in data.decode("utf-8", errors="replace")


def _ours(text: str) -> bool:
    return text.startswith(HEADER) and bool(_TOKEN_RX.search(text))


def placement_notes(workspace: str | os.PathLike[str]) -> list[str]:
    """Plain-words warnings about where the canary lands (source: ``lstat`` of ``<workspace>/memory``): a
    symlinked memory dir is written through (that is where the agent's notes are), but only QMD indexes it
    (its collection root is resolved); the builtin scanner skips symlinked dirs, so there the canary is
    never found (``retrieval_failed`` · ``symlink``)."""
    memdir = Path(os.fspath(workspace)) / os.path.dirname(CANARY_REL)
    if not memdir.is_symlink():
        return []
    try:
        to = os.readlink(memdir)
    except OSError:
        to = "?"
    return [(f"{memdir} is a symlink to {to}: the canary is written there. QMD indexes it (the collection root is "
             "resolved), but the builtin engine skips symlinked dirs, so with the builtin backend the canary will "
             "not be found (retrieval_failed · symlink)")]


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

    ``qmd_docs`` are :class:`clawprobe.core.probes.qmd_index.IndexedDoc` rows: the doc whose hash equals the record's
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
    """What :func:`clawprobe.core.probe.slow` searches for: ``{token, expected_path, content_sha256, planted_at}`` of
    the planted canary of (workspace, agent) — the script token for a canary in the notes' script —, or ``None``
    when none is planted. ``state_dir`` is unused
    (the record lives in clawprobe's data dir, keyed by workspace and agent). With no canary of its own, an
    agent that shares its workspace uses the other agent's (:func:`shared_record`) — also when its own file is
    gone or was overwritten by that agent's."""
    rec = load(workspace, agent_id, root=root)
    if rec is None or not rec.active or file_state(rec) != "present":
        rec = shared_record(workspace, agent_id, root=root) or rec
    if rec is None or not rec.active:
        return None
    return {"token": rec.script_token or rec.token, "expected_path": rec.rel_path, "content_sha256": rec.content_sha256,
            "planted_at": rec.planted_at}


def explain(canary: Canary, workspace: str, *, engine: Literal["qmd", "builtin"], collections: Sequence[Any] = (),
            extra_paths: Sequence[str] = (), lowercase_root_indexed: bool = False,
            wrong_store_detail: str | None = None) -> Canary:
    """Narrow a failed retrieval (``miss``/``wrong_source``) with the first explainer for the expected
    path — ``hidden_path``, ``case_mismatch``, ``symlink``, ``pattern_excluded``, ``not_in_collection``,
    ``empty_file`` (:func:`clawprobe.core.probes.workspace.explain_path`) — or ``wrong_store`` when the managed QMD
    index lacks its default collections (RW14). An existing ``reason`` is kept."""
    from clawprobe.core.probes.workspace import explain_path

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
