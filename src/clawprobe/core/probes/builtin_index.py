"""The builtin memory engine's SQLite store, read read-only: meta, indexed files, chunks, FTS5, integrity.

Stores (verified with the real programs: OpenClaw 2026.7.35 and 2026.9.6 both use the E3+ layout):

* E3+ (2026.6+): ``<state>/agents/<id>/agent/openclaw-agent.sqlite`` — tables ``memory_index_meta``
  (key ``memory_index_meta_v1`` → JSON ``{model, provider, providerKey, sources, chunkTokens, …,
  ftsTokenizer, vectorDims?}``), ``memory_index_sources`` (path, source, hash, mtime ms, size),
  ``memory_index_chunks`` (…, model, embedding, updated_at ms), ``memory_index_chunks_fts`` (FTS5),
  ``memory_index_chunks_vec`` (sqlite-vec, only with a provider). The file also holds sessions: never
  suggest deleting it.
* E1/E2: ``<state>/memory/<id>.sqlite`` — ``meta``, ``files``, ``chunks``, ``chunks_fts``, ``chunks_vec``
  (source: OpenClaw ``memory-schema.ts``; no build of that era is installed here).

The FTS-only marker is ``provider: "none", model: "fts-only"`` in the meta and ``model = 'fts-only'`` on
chunks. ``PRAGMA quick_check`` runs on the read-only connection (cached per file size/mtime, skipped
above :data:`QUICK_CHECK_MAX_BYTES` unless forced) to tell a corrupt index (RW39).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.locate import normalize_agent_id
from clawprobe.core.probes.fileinfo import file_kind, open_regular
from clawprobe.core.probes.note_scripts import fts_tokenizer_of
from clawprobe.core.probes.sqlite_ro import SqliteOpen, classify_error, column_names, open_ro, table_names
from clawprobe.core.probes.workspace import _JS_SPACE, BuiltinSourceRow, DiskScan, dependency_bloat, hash_file
from clawprobe.core.receipt import BuiltinFacts, Finding

QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024
META_KEY = "memory_index_meta_v1"
#: at most this many chunkless notes are read from a store (each is then hashed on disk: bounded work)
CHUNKLESS_MAX = 50
Layout = Literal["agent-db", "legacy-sidecar"]
_NAMES: dict[Layout, dict[str, str]] = {
    "agent-db": {"meta": "memory_index_meta", "sources": "memory_index_sources", "chunks": "memory_index_chunks",
                 "fts": "memory_index_chunks_fts", "vec": "memory_index_chunks_vec"},
    "legacy-sidecar": {"meta": "meta", "sources": "files", "chunks": "chunks", "fts": "chunks_fts", "vec": "chunks_vec"},
}
_QC_CACHE: dict[tuple, list[str]] = {}


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BuiltinMeta(_M):
    """The index identity (source: meta key ``memory_index_meta_v1``). ``fts_only`` is the FTS-only marker."""

    provider: str | None = None
    model: str | None = None
    sources: list[str] = Field(default_factory=list)
    vector_dims: int | None = None
    fts_tokenizer: str | None = None
    chunk_tokens: int | None = None
    chunking_version: int | None = None

    @property
    def fts_only(self) -> bool:
        """True for the keyword-only identity (``provider: none`` / ``model: fts-only``)."""
        return self.model == "fts-only" or self.provider == "none"


class BuiltinIndexFacts(_M):
    """Everything read from one agent's builtin store. ``path`` is the store used (``None``: none exists).

    ``candidates`` lists the store paths looked at, newest layout first. Counts are ``None`` when the
    store could not be read. ``quick_check``: ``[]`` = ok, messages = corruption, ``None`` = not run.
    ``last_chunk_update_at`` = ``MAX(updated_at)`` of chunks (UTC); ``indexed_at`` the same per memory path.
    ``fts_sql_tokenizer``: the tokenizer the FTS table was created with (its ``CREATE VIRTUAL TABLE`` SQL in
    ``sqlite_master``; OpenClaw 2026.9.6 writes no ``tokenize=``, so FTS5's ``unicode61``).
    ``owner_role``/``owner_agent``: the owner a 2026.9.6 agent database records (``schema_meta``, ``meta_key =
    'primary'``: OpenClaw refuses a store whose role is not ``agent`` or whose agent is another one, "… belongs
    to agent X; requested agent Y"); ``agent_id`` the agent whose store was looked for.
    """

    path: str | None = None
    layout: Layout | None = None
    candidates: list[str] = Field(default_factory=list)
    open: SqliteOpen | None = None
    error: str | None = None
    meta: BuiltinMeta | None = None
    meta_error: str | None = None
    sources: list[BuiltinSourceRow] = Field(default_factory=list)
    memory_files: int | None = None
    session_files: int | None = None
    chunks: int | None = None
    fts_only_chunks: int | None = None
    fts_table: bool | None = None
    fts_sql_tokenizer: str | None = None
    vec_table: bool | None = None
    last_chunk_update_at: datetime | None = None
    indexed_at: dict[str, datetime] = Field(default_factory=dict)
    quick_check: list[str] | None = None
    bytes: int | None = None
    owner_role: str | None = None
    owner_agent: str | None = None
    agent_id: str | None = None
    chunkless: list[str] = Field(default_factory=list)
    #: what stands at the store path when it is no regular file nor a directory (:func:`not_regular`: ``a FIFO``);
    #: measured once, before any open — :func:`to_builtin_facts` reads it, never the path again
    not_regular: str | None = None

    @property
    def readable(self) -> bool:
        """True when the memory tables could be read."""
        return self.chunks is not None

    @property
    def never_written(self) -> bool:
        """True when nothing was ever written into a store of this agent, or the database itself is gone: no
        store file (a ``-wal``/``-shm`` left behind does not count), or a 0-byte one."""
        return self.path is None or (self.open is not None and self.open.state in ("missing", "empty", "wal_only"))

    @property
    def memory_never_indexed(self) -> bool:
        """True when no memory index was ever written for this agent: :attr:`never_written`, or a store that
        exists for the agent's other state (2026.9.6 creates the memory tables with the agent database, which
        also holds its sessions) whose memory tables hold no index identity, no file and no chunk."""
        return self.never_written or (self.readable and self.meta is None and self.meta_error is None
                                      and not self.sources and self.chunks == 0)


def builtin_store_candidates(state_dir: str | os.PathLike[str], agent_id: str) -> list[tuple[Layout, str]]:
    """The store paths for ``agent_id``: E3+ agent DB first, then the E1/E2 sidecar (not checked)."""
    sd = Path(state_dir)
    return [("agent-db", str(sd / "agents" / agent_id / "agent" / "openclaw-agent.sqlite")),
            ("legacy-sidecar", str(sd / "memory" / f"{agent_id}.sqlite"))]


def _quick_check(con: sqlite3.Connection, opened: SqliteOpen, force: bool) -> list[str] | None:
    if not force and (opened.db_bytes or 0) > QUICK_CHECK_MAX_BYTES:
        return None
    try:
        st = os.stat(opened.path)
        wal = os.stat(opened.path + "-wal") if opened.wal_bytes else None
        key = (opened.path, st.st_size, st.st_mtime_ns, wal.st_size if wal else 0, wal.st_mtime_ns if wal else 0)
    except OSError:
        key = None
    if key is not None and key in _QC_CACHE:
        return _QC_CACHE[key]
    try:
        rows = [str(r[0]) for r in con.execute("PRAGMA quick_check(20)")]
    except sqlite3.Error as e:
        rows = [str(e)]
    result = [] if rows == ["ok"] else rows
    if key is not None:
        _QC_CACHE[key] = result
    return result


def _read(con: sqlite3.Connection, layout: Layout, f: BuiltinIndexFacts) -> None:
    names = _NAMES[layout]
    tables = table_names(con)
    if "schema_meta" in tables:  # 2026.9.6's agent database names its owner (readExistingAgentSchemaMeta)
        cols = column_names(con, "schema_meta")
        if {"meta_key", "role", "agent_id"} <= set(cols):
            row = con.execute("SELECT role, agent_id FROM schema_meta WHERE meta_key = 'primary'").fetchone()
            if row is not None:
                f.owner_role, f.owner_agent = (str(row[0]) if row[0] is not None else None,
                                               str(row[1]) if row[1] is not None else None)
    f.fts_table = names["fts"] in tables
    f.vec_table = names["vec"] in tables
    if f.fts_table:
        row = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (names["fts"],)).fetchone()
        f.fts_sql_tokenizer = fts_tokenizer_of(row[0] if row else None)
    if names["chunks"] not in tables or names["sources"] not in tables:
        f.error = f"no {names['sources']}/{names['chunks']} tables: memory never indexed in this store"
        return
    if names["meta"] in tables:
        row = con.execute(f"SELECT value FROM {names['meta']} WHERE key = ?", (META_KEY,)).fetchone()
        if row is not None:
            try:
                m = json.loads(row[0])
                f.meta = BuiltinMeta(provider=m.get("provider"), model=m.get("model"),
                                     sources=[str(s) for s in m.get("sources") or []], vector_dims=m.get("vectorDims"),
                                     fts_tokenizer=m.get("ftsTokenizer"), chunk_tokens=m.get("chunkTokens"),
                                     chunking_version=m.get("chunkingVersion"))
            except (ValueError, TypeError, AttributeError) as e:
                f.meta_error = f"meta {META_KEY} is not valid JSON: {e}"
    for path, source, h, mtime, size in con.execute(f"SELECT path, source, hash, mtime, size FROM {names['sources']}"):
        f.sources.append(BuiltinSourceRow(path=path, source=source or "memory", hash=h, mtime_ms=float(mtime or 0),
                                          size=int(size or 0)))
    f.memory_files = sum(1 for s in f.sources if s.source == "memory")
    f.session_files = sum(1 for s in f.sources if s.source == "sessions")
    cols = column_names(con, names["chunks"])
    f.chunks = int(con.execute(f"SELECT COUNT(*) FROM {names['chunks']}").fetchone()[0])
    if "source" in column_names(con, names["sources"]) and "source" in cols:
        f.chunkless = [str(p) for (p,) in con.execute(
            # one pass over the chunks (a list subquery, built once): their table has no index on path, and a
            # correlated NOT EXISTS scanned it once per note — 39 s at 20,000 notes, 0.07 s this way
            f"SELECT s.path FROM {names['sources']} AS s WHERE s.source = 'memory' AND s.hash != '' AND s.path NOT IN "
            f"(SELECT c.path FROM {names['chunks']} AS c WHERE c.source = 'memory' AND c.path IS NOT NULL) LIMIT ?",
            (CHUNKLESS_MAX,))]
    if "model" in cols:
        f.fts_only_chunks = int(con.execute(f"SELECT COUNT(*) FROM {names['chunks']} WHERE model = 'fts-only'").fetchone()[0])
    if "updated_at" in cols:
        for path, ms in con.execute(f"SELECT path, MAX(updated_at) FROM {names['chunks']} WHERE source = 'memory' "
                                    "GROUP BY path"):
            if ms:
                f.indexed_at[path] = datetime.fromtimestamp(float(ms) / 1e3, tz=UTC)
        f.last_chunk_update_at = max(f.indexed_at.values(), default=None)


def not_regular(path: str) -> str | None:
    """What stands at ``path`` when it is neither a regular file nor a directory (``a FIFO``, ``a socket``, ``a
    device``), else ``None`` (also when nothing is there). Source: ``os.stat`` (symlinks followed); never opens it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else file_kind(mode)


def read_builtin_index(state_dir: str | os.PathLike[str], agent_id: str, *, quick_check: bool | None = None,
                       busy_timeout_s: float = 0.25) -> BuiltinIndexFacts:
    """GATHER: read the agent's builtin store read-only (never created). ``quick_check``: ``None`` = run
    it when the file is ≤ 256 MiB (cached per size/mtime), ``True`` = always, ``False`` = never.
    Never raises for a bad file: ``open.state`` / ``error`` say what is wrong."""
    cands = builtin_store_candidates(state_dir, agent_id)
    facts = BuiltinIndexFacts(candidates=[p for _, p in cands], agent_id=agent_id)
    chosen = next(((lay, p) for lay, p in cands if os.path.lexists(p) or os.path.lexists(p + "-wal")), None)
    if chosen is None:
        return facts
    facts.layout, facts.path = chosen
    if (odd := not_regular(facts.path)) is not None:
        # a FIFO, socket or device at the store's path: its size reads 0 ("empty": no index yet, wrongly) and
        # OpenClaw's own open of a FIFO blocks every memory command until it is killed (2026.9.6, measured)
        facts.open = SqliteOpen(path=facts.path, state="unreadable", detail=f"is not a regular file ({odd})")
        facts.not_regular = odd
        return facts
    with open_ro(facts.path, busy_timeout_s) as (con, opened):
        facts.open = opened
        if opened.db_bytes is not None:
            facts.bytes = opened.db_bytes + (opened.wal_bytes or 0)
        if con is None:
            return facts
        try:
            _read(con, facts.layout, facts)
        except sqlite3.Error as e:
            state, detail = classify_error(e)
            facts.open = opened.model_copy(update={"state": state, "detail": detail})
            facts.error, facts.chunks = detail, None
        if quick_check is not False:
            facts.quick_check = _quick_check(con, opened, force=bool(quick_check))
    return facts


def hollow_notes(facts: BuiltinIndexFacts, scan: DiskScan) -> list[str]:
    """GATHER: the notes the builtin index lists as indexed but holds no text of — a row in its ``sources``/``files``
    table whose hash is the note's sha256 on disk *now*, no chunk row, and a note with text (not whitespace-only,
    which OpenClaw chunks to nothing; on the 2026.9.6 store, not annotation carriers only: :func:`_annotations_only`).
    Nothing of such a note is searchable, and a plain ``memory index`` skips it
    (the hash matches); ``memory index --force`` re-chunks it (measured: 2026.9.6 and 2026.7.35, chunk rows
    deleted under their ``sources`` rows). Reads only the :attr:`BuiltinIndexFacts.chunkless` files the ``scan``
    holds (at most :data:`CHUNKLESS_MAX`); a note changed since its row is a freshness fact, not this. Returns
    their display paths (``DiskFile.rel``), scan order."""
    if not facts.chunkless:
        return []
    rows = {s.path: s for s in facts.sources if s.source == "memory"}
    hollow = set(facts.chunkless)
    out = []
    for f in scan.files:
        row = rows.get(f.key)
        if f.key not in hollow or row is None:
            continue
        digest, blank, error = hash_file(f.abs_path)
        if error is None and digest == row.hash and not blank \
                and not (facts.layout == "agent-db" and _annotations_only(f.abs_path)):
            out.append(f.rel)
    return out


#: 2026.9.6's memory annotation carriers (``<!-- importance: high -->``, ``trigger:``, ``project:``): stripped from a
#: note before it is chunked (``stripMemoryAnnotationCarriers``), so a note holding only these has no chunk, rightly
_ANNOTATION = re.compile(r"<!--\s*(?:trigger|importance|project)\s*:", re.I)
_ANNOTATIONS_READ_MAX = 1024 * 1024


def _annotations_only(path: str) -> bool:
    """Whether the note at ``path`` is nothing but 2026.9.6 annotation carriers and whitespace: OpenClaw strips each
    carrier (one that closes with ``-->`` on its own line) before chunking, then drops blank chunks — such a note
    keeps its sources row and no chunk, and no rebuild gives it one (source: ``curated-annotations``
    ``stripMemoryAnnotationCarriers``, ``prepareMemoryIndexChunks``). A note larger than 1 MiB, or unreadable, is
    not (it is judged as it was). Reads at most 1 MiB."""
    try:
        with open_regular(path) as fh:
            data = fh.read(_ANNOTATIONS_READ_MAX + 1)
    except OSError:
        return False
    if len(data) > _ANNOTATIONS_READ_MAX:
        return False
    text = data.decode("utf-8", errors="replace")
    parts, cursor, pos = [], 0, 0
    while (m := _ANNOTATION.search(text, pos)) is not None:
        closing = text.find("-->", m.end())
        if closing < 0:
            break
        newline = min([i for i in (text.find("\r", m.end()), text.find("\n", m.end())) if i >= 0], default=len(text))
        if newline < closing:  # a carrier closes on its own line, else it is text
            pos = m.end()
            continue
        parts.append(text[cursor:m.start()])
        cursor = pos = closing + 3
    if cursor == 0:
        return False
    parts.append(text[cursor:])
    return not "".join(parts).strip(_JS_SPACE)  # JavaScript's trim(), as OpenClaw drops a blank chunk


def reindex_orphans(state_dir: str | os.PathLike[str], agent_id: str, limit: int = 200) -> list[tuple[str, int]]:
    """GATHER: orphaned full-reindex copies next to the agent's store — ``<db>.memory-reindex-<id>`` (and the
    older ``<db>.tmp-<id>``) with their ``-wal``/``-shm`` — as ``(name, bytes incl. sidecars)``, largest first
    (lstat only, bounded). The live index and its ``.reindex-lock.sqlite`` sidecar are not orphans."""
    out: dict[str, int] = {}
    for _layout, db in builtin_store_candidates(state_dir, agent_id):
        folder, base = os.path.split(db)
        try:
            with os.scandir(folder) as it:
                names = [e for e in it if e.name.startswith(base + ".")][:limit]
        except OSError:
            continue
        for e in names:
            rest = e.name[len(base) + 1:]
            if not (rest.startswith("memory-reindex-") or rest.startswith("tmp-")):
                continue
            stem = e.name[:-4] if e.name.endswith(("-wal", "-shm")) else e.name
            try:
                out[stem] = out.get(stem, 0) + e.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return sorted(out.items(), key=lambda kv: -kv[1])


#: the read-only opener's damage states in words (the evidence line the screen and ``check`` print)
STORE_DAMAGE_WORDS = {"corrupt": "corrupt", "truncated": "truncated", "not_sqlite": "not a SQLite file"}


def corruption(facts: BuiltinIndexFacts) -> str | None:
    """A one-line corruption message when the store is damaged (malformed, truncated, not SQLite, a failed
    ``quick_check``), else ``None`` (pure)."""
    if facts.open is not None and facts.open.state in ("corrupt", "truncated", "not_sqlite"):
        state = STORE_DAMAGE_WORDS[facts.open.state]  # words, never the opener's id (``not_sqlite``)
        return f"{facts.path}: {state} — {facts.open.detail}" if facts.open.detail else f"{facts.path}: {state}"
    if facts.quick_check:
        return f"{facts.path}: PRAGMA quick_check — {'; '.join(facts.quick_check[:3])}"
    return None


def foreign_owner(facts: BuiltinIndexFacts) -> str | None:
    """Why OpenClaw refuses this store for the agent (pure): the owner it records is another agent, or not an
    agent database at all (a store copied from another agent, a restore into the wrong directory); ``None``
    when it is the agent's own or records no owner (2026.7.35 stores)."""
    if facts.agent_id is None or (facts.owner_role is None and facts.owner_agent is None):
        return None
    if facts.owner_role not in (None, "agent"):
        return f"{facts.path} is a {facts.owner_role!r} database, not an agent's store (schema_meta)"
    if facts.owner_agent and normalize_agent_id(facts.owner_agent) != normalize_agent_id(facts.agent_id):
        return (f"{facts.path} belongs to agent {facts.owner_agent} (its schema_meta), not {facts.agent_id}: "
                "OpenClaw refuses it for every memory command")
    return None


def to_builtin_facts(facts: BuiltinIndexFacts, configured_provider: str | None = None) -> BuiltinFacts:
    """INTERPRET: the receipt's :class:`~clawprobe.core.receipt.BuiltinFacts` parts the store proves.

    ``provider_resolved`` / ``fts_only`` come from the meta (and chunk models); ``unavailable_reason``
    is ``index_corrupt`` for a damaged store, ``fts5_missing`` when the store was indexed keyword-only but
    has no FTS5 table (nothing is left to search). ``provider_requested`` stays for the status probe.
    """
    out = BuiltinFacts(store_path=facts.path)
    g = out.gates
    g.fts_tokenizer = facts.fts_sql_tokenizer or (facts.meta.fts_tokenizer if facts.meta else None)
    if facts.meta is not None:
        g.chunking_version, g.chunk_tokens = facts.meta.chunking_version, facts.meta.chunk_tokens
    if facts.meta is not None:
        out.provider_resolved = facts.meta.provider
        out.fts_only = facts.meta.fts_only or bool(facts.chunks and facts.fts_only_chunks == facts.chunks)
    elif facts.chunks:
        out.fts_only = facts.fts_only_chunks == facts.chunks
    if facts.open is not None and facts.open.state == "unreadable":
        out.store_unreadable = f"{facts.path}: {facts.open.detail or 'cannot be opened'}"
        if facts.path and os.path.isdir(facts.path):
            out.store_damage = "directory"
        elif facts.not_regular is not None:
            out.store_damage = "not_regular"
    foreign = foreign_owner(facts)
    if foreign:
        out.unavailable_reason, out.unavailable_detail = "store_foreign", foreign
        return out
    bad = corruption(facts)
    if bad:
        state = facts.open.state if facts.open is not None else None
        out.store_damage = state if state in ("truncated", "not_sqlite", "corrupt") else "quick_check"
    if facts.quick_check is not None and facts.open is not None:
        out.store_sound = not bad and facts.quick_check == [] and facts.open.state == "ok"
    if bad:
        out.unavailable_reason, out.unavailable_detail = "index_corrupt", bad
        return out
    if facts.meta is not None and facts.fts_table is False:
        msg = f"{facts.path} has no FTS5 table: keyword search is impossible on the runtime that built it"
        if out.fts_only:
            out.unavailable_reason, out.unavailable_detail = "fts5_missing", msg
        else:
            out.degraded_reason = "fts5_missing: " + msg
    elif out.fts_only and configured_provider and configured_provider.lower() not in ("none", "auto", "local"):
        out.degraded_reason = (f"index identity is keyword-only (provider {facts.meta.provider if facts.meta else '?'}, "
                               f"{facts.fts_only_chunks} fts-only chunks) although provider {configured_provider!r} is configured")
    return out


def builtin_findings(facts: BuiltinIndexFacts) -> list[Finding]:
    """Warnings from the builtin store: dependency dirs dominating the indexed files (RW31 ``index_bloat``)."""
    f = dependency_bloat([s.path for s in facts.sources if s.source == "memory"], facts.path or "builtin index")
    return [f] if f is not None else []
