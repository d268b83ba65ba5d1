"""The agent's managed QMD index, read read-only: documents, collections, pending embeddings, orphans.

Files (source: OpenClaw 2026.7.35 ``qmd-manager.ts``; verified with the real programs):

* ``<state>/agents/<id>/qmd/xdg-config/qmd/index.yml`` — the agent's QMD config: ``collections:``
  (``memory-root-<id>`` pattern ``MEMORY.md``, ``memory-dir-<id>`` ``**/*.md``, custom ones) and the
  ``models:`` block qmd writes on its first run;
* ``<state>/agents/<id>/qmd/xdg-cache/qmd/index.sqlite`` (+ ``-wal``/``-shm``) — the index, opened with
  :func:`clawprobe.core.probes.sqlite_ro.open_ro` (never created, never written);
* ``<state>/agents/<id>/qmd/xdg-cache/qmd/.qmd-embed.lock`` — ``"<pid>\\n"`` while ``qmd embed`` runs.

Two parts, as every probe: :func:`read_qmd_index` gathers (file stats, YAML, SQL with qmd's own queries,
the lock pid's process), :func:`qmd_findings` and :func:`to_vectors` interpret (pure).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import psutil
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from clawprobe.core.locate import qmd_home
from clawprobe.core.probes.fileinfo import file_identity
from clawprobe.core.probes.models import EmbedLock, read_embed_lock
from clawprobe.core.probes.qmd_fingerprint import ModelChoice, resolve_embed_model
from clawprobe.core.probes.qmd_yml import QmdCollection as QmdCollection
from clawprobe.core.probes.qmd_yml import QmdConfigFile as QmdConfigFile
from clawprobe.core.probes.qmd_yml import parse_qmd_yml as parse_qmd_yml
from clawprobe.core.probes.qmd_yml import read_qmd_yml as read_qmd_yml
from clawprobe.core.probes.sqlite_ro import SqliteOpen, classify_error, column_names, open_ro, table_names
from clawprobe.core.receipt import Finding, Vectors

INDEX_SOURCE = "index.sqlite (mode=ro)"
HOLDER_SCAN_BUDGET_S = 2.0
ORPHAN_BLOAT_SHARE = 0.5
ORPHAN_BLOAT_MIN_ROWS = 10
MAX_LISTED = 20
_VEC_DIMS = re.compile(r"float\[(\d+)\]", re.I)
_NOT_AGENT_CHARS = re.compile(r"[^a-z0-9-]")
SqlValue = int | float | str | bytes | None  #: one SQLite column value as sqlite3 returns it


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


def sanitize_agent_id(agent_id: str) -> str:
    """Agent id as OpenClaw puts it in collection names: lowercase, ``[^a-z0-9-]`` → ``-``."""
    return _NOT_AGENT_CHARS.sub("-", agent_id.strip().lower())


def managed_collection_names(agent_id: str) -> tuple[str, str]:
    """``(memory-root-<id>, memory-dir-<id>)``: the two default collections OpenClaw manages per agent."""
    sid = sanitize_agent_id(agent_id)
    return f"memory-root-{sid}", f"memory-dir-{sid}"


def squatting_collections(collections: Sequence[QmdCollection], agent_id: str, workspace: str) -> dict[str, str]:
    """The agent's missing managed collections whose path and pattern another collection in the same QMD store
    already holds under its own name: ``{managed name: holder's name}`` (pure; paths compared resolved).

    qmd refuses a second collection for one path and pattern, and OpenClaw 2026.7.35 refuses to rebind one it
    cannot verify ("refusing automatic rebind … remove it manually with 'qmd collection remove <name>'"): its
    search asks for ``memory-dir-<id>``, fails with "Collection not found", and ``openclaw memory index`` leaves
    it so (measured: a ``qmd collection rename memory-dir-main notes``). Only removing the holder repairs it."""
    root, mem = managed_collection_names(agent_id)
    want = {root: (workspace, "MEMORY.md"), mem: (os.path.join(workspace, "memory"), "**/*.md")}
    names = {c.name for c in collections}
    out: dict[str, str] = {}
    for name, (path, pattern) in want.items():
        if name in names:
            continue
        real = os.path.realpath(path)
        holder = next((c.name for c in collections if c.name != name and c.path
                       and os.path.realpath(os.path.expanduser(c.path)) == real and c.pattern == pattern), None)
        if holder is not None:
            out[name] = holder
    return out


_MANAGED = re.compile(r"memory-(?:root|dir)-(.+)")


def foreign_collections(collections: list[QmdCollection], agent_id: str, custom_paths: Sequence[str] = ()) -> list[str]:
    """The names among ``collections`` that OpenClaw manages for another agent (``memory-root-<other>``,
    ``memory-dir-<other>``): in this agent's own QMD home they come from a home copied from that agent's (breaker
    round 7, w14: ``cp -a agents/main/qmd agents/ops/qmd`` put main's notes in ops' index, and coverage counted
    main's roots as ops'). A collection on one of the agent's own ``memory.qmd.paths`` (``custom_paths``,
    absolute; OpenClaw names those as configured, ``memory-dir-team`` included) is never foreign."""
    own = sanitize_agent_id(agent_id)
    mine = {os.path.normpath(p) for p in custom_paths}
    return [c.name for c in collections if (m := _MANAGED.fullmatch(c.name)) and m[1] != own
            and os.path.normpath(c.path or "") not in mine]


def same_home(state_dir: str, agent_id: str, others: Sequence[str]) -> tuple[str, str | None] | None:
    """The first of ``others`` (agent ids) whose QMD home (``<state>/agents/<id>/qmd``) is this agent's own
    directory — a symlink or bind mount, not a copy (``os.path.samefile``) — with the path of the home that is a
    symlink (the one to remove: ``rm`` of a link leaves its target), ``None`` for that path when neither home is a
    symlink; ``None`` when no other agent shares it. Both agents' managed collections then sit in one index that
    both read, and removing the other's collections from "this" index removes them from the other's (measured
    with 2026.7.35 + qmd 2.8.3, breaker round 26: the next search re-adds them, a loop). ``stat`` only; never
    raises."""
    mine = qmd_home(state_dir, agent_id).root
    for other in others:
        theirs = qmd_home(state_dir, other).root
        try:
            if theirs == mine or not os.path.samefile(mine, theirs):
                continue
        except OSError:
            continue
        return other, next((p for p in (mine, theirs) if os.path.islink(p)), None)
    return None


class QmdPaths(_M):
    """Where OpenClaw keeps one agent's QMD home (source: ``qmd-manager.ts``; all absolute paths)."""

    agent_id: str
    xdg_config: str
    xdg_cache: str
    yml: str
    db: str
    lock: str
    models_dir: str


def qmd_paths(state_dir: str | os.PathLike[str], agent_id: str) -> QmdPaths:
    """The agent's QMD paths under ``<state>/agents/<id>/qmd`` (from :func:`clawprobe.core.locate.qmd_home`;
    nothing is checked or created)."""
    home = qmd_home(os.fspath(state_dir), agent_id)
    return QmdPaths(agent_id=agent_id, xdg_config=home.xdg_config, xdg_cache=home.xdg_cache,
                    yml=os.path.join(home.config_dir, "index.yml"), db=home.index,
                    lock=os.path.join(os.path.dirname(home.index), ".qmd-embed.lock"), models_dir=home.models)




class IndexedDoc(NamedTuple):
    """One active document (source: ``documents`` ⋈ ``content`` ⋈ ``content_vectors``).

    A tuple, not a model: an index holds up to 100,000s of them and they are read on every index change.
    ``path`` is collection-relative as qmd stores it; ``hash`` the sha256 of the file text;
    ``modified_at`` the file mtime qmd saw; ``ingested_at`` = ``content.created_at`` (first time this
    content was indexed); ``chunks``/``expected_chunks``/``embedded_at`` count vectors for the current
    (model, fingerprint) only.
    """

    collection: str
    path: str
    hash: str
    modified_at: datetime | None = None
    ingested_at: datetime | None = None
    chunks: int = 0
    expected_chunks: int | None = None
    embedded_at: datetime | None = None


class CollectionStats(_M):
    """Per-collection counts (source: ``documents`` grouped by collection, ``store_collections``)."""

    name: str
    active: int = 0
    inactive: int = 0
    newest_modified_at: datetime | None = None
    path: str | None = None
    pattern: str | None = None


class FingerprintGroup(_M):
    """One (model, fingerprint) group of vectors, as ``qmd doctor`` groups them (source: ``content_vectors``)."""

    model: str
    fingerprint: str
    docs: int
    chunks: int
    first_at: datetime | None = None
    last_at: datetime | None = None
    current: bool = False


class PartialDoc(_M):
    """A document with fewer vector chunks than ``total_chunks`` says (an interrupted embed, qmd #915)."""

    collection: str
    path: str
    chunks: int
    expected: int


class QmdIndexFacts(_M):
    """Everything read from one agent's managed QMD index. Counts are ``None`` when not measurable.

    ``open.state`` says whether the index could be read (``missing``, ``corrupt``, ``locked``…).
    ``schema_era``: ``2.5+`` (``embed_fingerprint`` column) or ``pre-2.5``. ``pending`` follows qmd's
    ``getHashesNeedingEmbedding`` for ``embed_model``; ``vector_rows`` and ``orphans`` count chunks.
    ``missing_managed`` lists the default collections (``memory-root-<id>``, ``memory-dir-<id>``) that
    neither ``index.yml`` nor the store has — the wrong-store signature (RW14).
    ``unsearchable``/``unsearchable_count``: active documents qmd's search cannot return — their ``hash`` has no
    ``content`` row, or their ``id`` no full-text row (``documents_fts``) — as ``collection/path`` (up to
    ``MAX_LISTED``) and their total; ``qmd update`` keeps them ("unchanged": the file's hash still matches), so no
    update makes them findable (measured on qmd 2.8.3). ``None`` when not measured.
    Times are UTC; sizes bytes.
    """

    paths: QmdPaths
    open: SqliteOpen
    yml: QmdConfigFile
    error: str | None = None
    schema_era: str | None = None
    embed_model: ModelChoice
    documents_active: int | None = None
    documents_inactive: int | None = None
    collections: list[CollectionStats] = Field(default_factory=list)
    missing_managed: list[str] = Field(default_factory=list)
    pending: int | None = None
    partial: list[PartialDoc] = Field(default_factory=list)
    partial_count: int | None = None
    vector_rows: int | None = None
    vec_index_rows: int | None = None
    orphans: int | None = None
    has_vector_table: bool | None = None
    vector_dims: int | None = None
    inventory: list[FingerprintGroup] = Field(default_factory=list)
    newest_modified_at: datetime | None = None
    last_ingest_at: datetime | None = None
    last_embed_at: datetime | None = None
    index_bytes: int | None = None
    lock: EmbedLock
    docs: list[IndexedDoc] = Field(default_factory=list)
    unsearchable: list[str] = Field(default_factory=list)
    unsearchable_count: int | None = None
    _memo: dict[str, dict] = PrivateAttr(default_factory=dict)  # shared by reference with model_copy()s
    _lost: list[tuple[str, str]] = PrivateAttr(default_factory=list)  # every unsearchable row of the last read

    @property
    def readable(self) -> bool:
        """True when the SQL could run (counts are measured)."""
        return self.documents_active is not None

    def doc_with_hash(self, content_sha256: str) -> IndexedDoc | None:
        """The active document whose content hash is ``content_sha256`` (dict built once per read)."""
        by_hash = self._memo.get("hash")
        if by_hash is None:
            by_hash = self._memo["hash"] = {d.hash: d for d in self.docs}
        return by_hash.get(content_sha256)

    def docs_by_dir(self) -> dict[tuple[str, str], dict[str, IndexedDoc]]:
        """``{(collection, dir): {path: doc}}`` with ``dir`` the collection-relative parent (``""`` at the
        root): the shape the incremental workspace comparison needs (built once per read)."""
        out = self._memo.get("dir")
        if out is None:
            out = self._memo["dir"] = {}
            for d in self.docs:
                cut = d.path.rfind("/")
                out.setdefault((d.collection, d.path[:cut] if cut > 0 else ""), {})[d.path] = d
        return out


def parse_ts(value: object) -> datetime | None:
    """qmd's ISO timestamps (``2026-11-30T01:09:36.229Z``) → aware UTC datetime; junk → ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


_PENDING_SQL = """
SELECT COUNT(DISTINCT d.hash) FROM documents d
LEFT JOIN (SELECT hash, COUNT(*) AS chunk_count, MAX(total_chunks) AS expected_chunks
           FROM content_vectors WHERE model = :model AND embed_fingerprint = :fp GROUP BY hash) v
  ON d.hash = v.hash
WHERE d.active = 1 AND (v.hash IS NULL OR v.chunk_count < v.expected_chunks)"""
_PENDING_SQL_PRE25 = """
SELECT COUNT(DISTINCT d.hash) FROM documents d
LEFT JOIN content_vectors v ON d.hash = v.hash AND v.seq = 0
WHERE d.active = 1 AND v.hash IS NULL"""
_PARTIAL_SQL = """
SELECT d.collection, d.path, v.chunk_count, v.expected_chunks FROM documents d
JOIN (SELECT hash, COUNT(*) AS chunk_count, MAX(total_chunks) AS expected_chunks
      FROM content_vectors WHERE model = :model AND embed_fingerprint = :fp GROUP BY hash) v ON d.hash = v.hash
WHERE d.active = 1 AND v.chunk_count < v.expected_chunks ORDER BY d.collection, d.path"""
_ORPHANS_SQL = """
SELECT COUNT(*) FROM content_vectors cv
WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.hash = cv.hash AND d.active = 1)"""
_INVENTORY_SQL = """
SELECT model, embed_fingerprint, COUNT(DISTINCT hash), COUNT(*), MIN(embedded_at), MAX(embedded_at)
FROM content_vectors GROUP BY model, embed_fingerprint ORDER BY COUNT(*) DESC"""
_DOCS_SQL = """
SELECT d.collection, d.path, d.hash, d.modified_at, c.created_at, v.chunk_count, v.expected_chunks, v.embedded_at
FROM documents d LEFT JOIN content c ON c.hash = d.hash
LEFT JOIN (SELECT hash, COUNT(*) AS chunk_count, MAX(total_chunks) AS expected_chunks, MAX(embedded_at) AS embedded_at
           FROM content_vectors WHERE model = :model AND embed_fingerprint = :fp GROUP BY hash) v ON v.hash = d.hash
WHERE d.active = 1"""

#: Active documents qmd's search cannot return: no ``content`` row for their hash (its search joins it), or no
#: row in the full-text table's content (``documents_fts_content``, rowid = ``documents.id``, filled by qmd's
#: ``documents_ai``/``documents_au`` triggers for every active row). ``{fts}`` is the FTS part, left out when the
#: index has no such table (then only the content join is measured).
_UNSEARCHABLE_SQL = """
SELECT d.collection, d.path FROM documents d LEFT JOIN content c ON c.hash = d.hash
WHERE d.active = 1 AND (c.hash IS NULL{fts}) ORDER BY d.collection, d.path"""
_UNSEARCHABLE_FTS = " OR NOT EXISTS (SELECT 1 FROM documents_fts_content x WHERE x.id = d.id)"


def _one(con: sqlite3.Connection, sql: str, params: Mapping[str, object] | tuple[object, ...] = ()) -> SqlValue:
    row = con.execute(sql, params).fetchone()
    return row[0] if row else None


def _unsearchable_rows(con: sqlite3.Connection, tables: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(collection, path)`` of every active document qmd's search cannot return (:data:`_UNSEARCHABLE_SQL`)."""
    fts = _UNSEARCHABLE_FTS if "documents_fts_content" in tables else ""
    return [(c, p) for c, p in con.execute(_UNSEARCHABLE_SQL.format(fts=fts)).fetchall()]


#: How long a document seen without its content or full-text row is given before it counts as lost: qmd 2.8.3 writes
#: a note's rows in separate autocommit statements (``insertDocument`` then ``rebuildDocumentFTS``: DELETE, then
#: INSERT of its full-text row), so a read during ``qmd update`` sees a few such rows for milliseconds (measured:
#: 9 to 14 of the reads made during a 3,000-note update)
UNSEARCHABLE_RECHECK_S = 0.4


def _still_unsearchable(paths: QmdPaths, facts: QmdIndexFacts, busy_timeout_s: float) -> None:
    """Keep in ``facts.unsearchable*`` only the documents a second read, :data:`UNSEARCHABLE_RECHECK_S` later, still
    finds without their rows: the ones a running update was writing are not an inconsistent index."""
    if not facts.unsearchable_count:
        return
    time.sleep(UNSEARCHABLE_RECHECK_S)
    with open_ro(paths.db, busy_timeout_s) as (con, _opened):
        if con is None:
            return  # not re-readable now: keep what the first read measured
        try:
            tables = table_names(con)
            again = set(_unsearchable_rows(con, tables)) if "content" in tables else set()
        except sqlite3.Error:
            return
    _set_unsearchable(facts, [row for row in facts._lost if row in again])


def _set_unsearchable(f: QmdIndexFacts, lost: list[tuple[str, str]]) -> None:
    f._lost = lost
    f.unsearchable_count = len(lost)
    f.unsearchable = [f"{c}/{p}" for c, p in lost[:MAX_LISTED]]


def _read_sql(con: sqlite3.Connection, f: QmdIndexFacts) -> None:
    tables = table_names(con)
    if "documents" not in tables:
        f.error = "not a QMD index: no documents table"
        return
    model, fp = f.embed_model.model, f.embed_model.fingerprint or ""
    has_cv = "content_vectors" in tables
    cv_cols = column_names(con, "content_vectors") if has_cv else set()
    fp_era = "embed_fingerprint" in cv_cols
    f.schema_era = "2.5+" if fp_era else "pre-2.5"
    stats: dict[str, CollectionStats] = {}
    for name, total, active, newest in con.execute(
            "SELECT collection, COUNT(*), SUM(active), MAX(CASE WHEN active = 1 THEN modified_at END) "
            "FROM documents GROUP BY collection"):
        stats[name] = CollectionStats(name=name, active=active or 0, inactive=total - (active or 0),
                                      newest_modified_at=parse_ts(newest))
    if "store_collections" in tables:
        for name, path, pattern in con.execute("SELECT name, path, pattern FROM store_collections"):
            s = stats.setdefault(name, CollectionStats(name=name))
            s.path, s.pattern = path, pattern
    f.collections = sorted(stats.values(), key=lambda s: s.name)
    f.documents_active = sum(s.active for s in f.collections)
    f.documents_inactive = sum(s.inactive for s in f.collections)
    f.newest_modified_at = max((s.newest_modified_at for s in f.collections if s.newest_modified_at), default=None)
    if "content" in tables:
        f.last_ingest_at = parse_ts(_one(con, "SELECT MAX(created_at) FROM content"))
    vec_sql = tables.get("vectors_vec")
    f.has_vector_table = vec_sql is not None
    if vec_sql is not None:
        m = _VEC_DIMS.search(vec_sql)
        f.vector_dims = int(m.group(1)) if m else None
        if "vectors_vec_rowids" in tables:
            f.vec_index_rows = int(_one(con, "SELECT COUNT(*) FROM vectors_vec_rowids") or 0)
    params = {"model": model, "fp": fp}
    if not has_cv:
        f.pending, f.vector_rows, f.orphans, f.partial_count = f.documents_active, 0, 0, 0
    else:
        f.vector_rows = int(_one(con, "SELECT COUNT(*) FROM content_vectors") or 0)
        f.orphans = int(_one(con, _ORPHANS_SQL) or 0)
        f.last_embed_at = parse_ts(_one(con, "SELECT MAX(embedded_at) FROM content_vectors")) if "embedded_at" in cv_cols else None
        if fp_era:
            f.pending = int(_one(con, _PENDING_SQL, params) or 0)
            rows = con.execute(_PARTIAL_SQL, params).fetchall()
            f.partial_count = len(rows)
            f.partial = [PartialDoc(collection=c, path=p, chunks=n, expected=e) for c, p, n, e in rows[:MAX_LISTED]]
            for mdl, efp, docs, chunks, first, last in con.execute(_INVENTORY_SQL):
                f.inventory.append(FingerprintGroup(model=mdl, fingerprint=efp or "", docs=docs, chunks=chunks,
                                                    first_at=parse_ts(first), last_at=parse_ts(last),
                                                    current=(mdl == model and (efp or "") == fp)))
        else:
            f.pending = int(_one(con, _PENDING_SQL_PRE25) or 0)
            f.partial_count = None
    if "content" in tables:
        _set_unsearchable(f, _unsearchable_rows(con, tables))
    if has_cv and fp_era:
        docs_sql, docs_params = _DOCS_SQL, params
    else:
        docs_sql = ("SELECT d.collection, d.path, d.hash, d.modified_at, c.created_at, NULL, NULL, NULL "
                    "FROM documents d LEFT JOIN content c ON c.hash = d.hash WHERE d.active = 1")
        docs_params = {}
    for coll, path, h, mod, created, n, exp, emb in con.execute(docs_sql, docs_params):
        f.docs.append(IndexedDoc(collection=coll, path=path, hash=h, modified_at=parse_ts(mod),
                                 ingested_at=parse_ts(created), chunks=n or 0, expected_chunks=exp,
                                 embedded_at=parse_ts(emb)))


_READ_CACHE: dict[str, tuple[tuple, QmdIndexFacts]] = {}
_READ_CACHE_MAX = 16


#: what clawprobe's fact cache (:mod:`clawprobe.core.probes.fact_cache`) stores a QMD index read under
FACT_KIND = "qmd-index"
#: the fields of :class:`QmdIndexFacts` that are re-read on every call, never persisted
_PER_CALL = {"paths", "yml", "embed_model", "lock", "missing_managed", "docs"}


def _iso(ts: datetime | None) -> str | None:
    return None if ts is None else ts.isoformat()


def _persist(facts: QmdIndexFacts, key: tuple) -> None:
    """Save an ``ok`` read for the next process (the docs as compact rows; times as ISO text, exact) — on
    the second cold read of the same identity only: the first leaves a small ``seen`` mark. Writing 100,000
    rows costs about as much as reading them, so an index that changes between every two runs never pays it,
    and one that stays put pays it once."""
    from clawprobe.core.probes import fact_cache

    state_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(facts.paths.xdg_cache))))
    if fact_cache.load(FACT_KIND + "-seen", facts.paths.db, key) is not True:
        fact_cache.save(FACT_KIND + "-seen", facts.paths.db, key, True, keep_out=state_dir)
        return
    rows = [[d.collection, d.path, d.hash, _iso(d.modified_at), _iso(d.ingested_at), d.chunks, d.expected_chunks,
             _iso(d.embedded_at)] for d in facts.docs]
    fact_cache.save(FACT_KIND, facts.paths.db, key, {"facts": facts.model_dump(mode="json", exclude=_PER_CALL),
                                                     "docs": rows}, keep_out=state_dir)


def _persisted(paths: QmdPaths, key: tuple, yml: QmdConfigFile, embed: ModelChoice, lock: EmbedLock
               ) -> QmdIndexFacts | None:
    """The facts an earlier process read from this index under the same ``key``, or ``None`` (absent,
    corrupt, foreign, another clawprobe version or any other key: :mod:`clawprobe.core.probes.fact_cache`)."""
    from clawprobe.core.probes import fact_cache

    data = fact_cache.load(FACT_KIND, paths.db, key)
    if not isinstance(data, dict):
        return None
    try:
        facts = QmdIndexFacts.model_validate({**data["facts"], "paths": paths, "yml": yml, "embed_model": embed,
                                              "lock": lock})
        if facts.open.state != "ok" or not facts.readable:
            return None
        iso = datetime.fromisoformat  # inlined: 3 times per row, 100,000s of rows
        facts.docs = [IndexedDoc(c, p, h, None if m is None else iso(m), None if i is None else iso(i), n, e,
                                 None if em is None else iso(em))
                      for c, p, h, m, i, n, e, em in data["docs"]]
    except (TypeError, KeyError, ValueError):  # a corrupt or foreign document (pydantic's errors are ValueErrors)
        return None
    return facts


def index_identity(db: str) -> tuple:
    """``(dev, inode, size, mtime_ns, ctime_ns)`` of the index and of its ``-wal`` and ``-journal`` (``None``
    for an absent file): any committed write, checkpoint, replacement or chmod changes it (source: ``stat``)."""
    return tuple(file_identity(db + suffix) for suffix in ("", "-wal", "-journal"))


class IndexHolder(_M):
    """A process that has the agent's index (or its ``-wal``/``-shm``/``-journal``) open, or the live pid in
    ``.qmd-embed.lock`` (source: psutil ``open_files()`` — ``/proc/<pid>/fd`` — and the lock file). ``what``
    is its command line on one line, without ``( ) ;``, cut at 80 characters (no environment is read)."""

    pid: int
    what: str


def index_holders(db: str | os.PathLike[str], *, budget_s: float = HOLDER_SCAN_BUDGET_S) -> list[IndexHolder]:
    """Who holds the index open (GATHER; read-only): every process psutil may inspect whose open files
    include ``db`` or a sidecar, plus a live embed-lock pid, this process excluded. Processes of other
    users are invisible without privileges. Stops after ``budget_s`` seconds (the process table of a busy
    host is long); at most 5 holders."""
    path = os.path.realpath(os.fspath(db))
    wanted = {path + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    me, out, end = os.getpid(), [], time.monotonic() + budget_s

    lock = read_embed_lock(os.path.join(os.path.dirname(path), ".qmd-embed.lock"))
    if lock.pid and lock.pid_alive and lock.pid != me:
        out.append(IndexHolder(pid=lock.pid, what=re.sub(r"[\s;()]+", " ", " ".join(lock.cmdline)).strip()[:80]
                               or "qmd embed"))
    for proc in psutil.process_iter():
        if time.monotonic() > end or len(out) >= 5:
            break
        if proc.pid == me or any(h.pid == proc.pid for h in out):
            continue
        try:
            files = proc.open_files()
        except (psutil.Error, OSError):
            continue
        if any(f.path in wanted for f in files):
            out.append(IndexHolder(pid=proc.pid, what=_describe(proc)))
    return out


def _describe(p: psutil.Process) -> str:
    """``p``'s command line on one line, without ``( ) ;`` (they would end a detail early), at most 80 characters."""
    try:
        args = " ".join(p.cmdline()) or p.name()
    except psutil.Error:
        args = "?"
    args = re.sub(r"[\s;()]+", " ", args).strip()
    return args if len(args) <= 80 else args[:79] + "…"


_UPDATERS = ("qmd", "node", "openclaw", "bun")


def _is_updater(p: psutil.Process) -> bool:
    """Whether ``p`` is qmd, OpenClaw or their runtime — by its program and first argument (``node …/qmd.js``), never
    by a path further on (``sqlite3 …/agents/main/qmd/…/index.sqlite`` is no updater: breaker round 11, s12)."""
    try:
        names = [p.name(), *(os.path.basename(a) for a in p.cmdline()[:2])]
    except psutil.Error:
        return False
    return any(n.lower().startswith(_UPDATERS) for n in names)


def write_holder(db: str) -> IndexHolder | None:
    """GATHER: a process that holds the index's WAL write lock (:func:`~clawprobe.core.probes.file_locks.wal_writer`)
    and is not qmd, OpenClaw or Node (an update of theirs in progress holds it a moment) — a backup tool, an
    ``sqlite3`` shell left in a transaction: every ``qmd update`` waits on it, and ``openclaw memory index`` hung
    (breaker round 10, s05); ``None`` otherwise. Read-only: ``/proc/locks`` and the holder's command line."""
    from clawprobe.core.probes.file_locks import wal_writer

    lk = wal_writer(db)
    if lk is None or lk.pid == os.getpid():
        return None
    if lk.pid <= 0:
        return IndexHolder(pid=lk.pid, what="a process the kernel does not name")
    try:
        proc = psutil.Process(lk.pid)
    except psutil.Error:
        return IndexHolder(pid=lk.pid, what="a process (not visible to this user)")
    return None if _is_updater(proc) else IndexHolder(pid=lk.pid, what=_describe(proc))


def clear_read_cache(*, persisted: bool = True) -> None:
    """Forget every cached index read (tests and benchmarks that want a cold read): this process's, and
    (``persisted``) the documents in clawprobe's cache dir, so the next read really opens the index."""
    _READ_CACHE.clear()
    if persisted:
        from clawprobe.core.probes import fact_cache

        fact_cache.forget(FACT_KIND)
        fact_cache.forget(FACT_KIND + "-seen")


def _read_once(paths: QmdPaths, facts: QmdIndexFacts, busy_timeout_s: float) -> None:
    with open_ro(paths.db, busy_timeout_s) as (con, opened):
        facts.open = opened
        if opened.db_bytes is not None:
            facts.index_bytes = opened.db_bytes + (opened.wal_bytes or 0)
        if con is not None:
            try:
                _read_sql(con, facts)
            except sqlite3.Error as e:
                state, detail = classify_error(e)
                facts.open = opened.model_copy(update={"state": state, "detail": detail})
                facts.error = detail
                facts.documents_active = None


def read_qmd_index(paths: QmdPaths, env: Mapping[str, str] | None = None, *,
                   busy_timeout_s: float = 0.25) -> QmdIndexFacts:
    """GATHER: read the agent's QMD home read-only and return the raw facts (never raises for bad files).

    ``env`` is the environment qmd runs with (for ``QMD_EMBED_MODEL`` when ``index.yml`` has no
    ``models.embed``). A missing index stays missing (``open.state == "missing"``): nothing is created.

    A read that finds the index ``corrupt`` or ``truncated`` counts only when the index's identity
    (:func:`index_identity`) did not change during the read: a writer checkpointing under an ``immutable``
    read can make sound pages look malformed, so a changed index is read once more.

    The SQL part is cached per index path, keyed by :func:`index_identity` (taken *before* the read, so
    a write during it forces a re-read next time) and the embed model/fingerprint; only an ``ok`` read is
    kept — in this process, and for later ones in clawprobe's own cache dir
    (:mod:`clawprobe.core.probes.fact_cache`, only when the identity did not change during the read, and from
    the second cold read of one identity on: :func:`_persist`), so a one-shot ``clawprobe check`` does not
    re-read an index that did not change since the last runs.
    ``index.yml`` and the embed lock (whose pid may die at any moment) are read every time.
    """
    yml = read_qmd_yml(paths.yml)
    embed = resolve_embed_model(yml.models or None, env, paths.xdg_cache)
    lock = read_embed_lock(paths.lock)
    key = (index_identity(paths.db), embed.model, embed.fingerprint)
    hit = _READ_CACHE.get(paths.db)
    if hit is not None and hit[0] == key and key[0][0] is not None:
        cached = hit[1]
        facts = cached.model_copy(update={"paths": paths, "yml": yml, "embed_model": embed, "lock": lock})
    elif key[0][0] is not None and (kept := _persisted(paths, key, yml, embed, lock)) is not None:
        facts = kept
        _remember(paths.db, key, facts)
    else:
        for attempt in range(2):
            before = index_identity(paths.db)
            facts = QmdIndexFacts(paths=paths, open=SqliteOpen(path=paths.db, state="missing"), yml=yml,
                                  embed_model=embed, lock=lock)
            _read_once(paths, facts, busy_timeout_s)
            _still_unsearchable(paths, facts, busy_timeout_s)
            if facts.open.state not in ("corrupt", "truncated") or index_identity(paths.db) == before:
                break
            if attempt == 1:
                facts.open = facts.open.model_copy(update={
                    "state": "error", "detail": f"the index changed while it was read ({facts.open.detail}); "
                                                "a writer is active, corruption unproven"})
        if facts.open.state == "ok" and facts.readable and key[0][0] is not None:
            _remember(paths.db, key, facts)
            if index_identity(paths.db) == key[0]:
                _persist(facts, key)
    names = {c.name for c in yml.collections} | {c.name for c in facts.collections if c.path}
    missing = [n for n in managed_collection_names(paths.agent_id) if n not in names]
    return facts.model_copy(update={"missing_managed": missing})


def _remember(db: str, key: tuple, facts: QmdIndexFacts) -> None:
    if len(_READ_CACHE) >= _READ_CACHE_MAX and db not in _READ_CACHE:
        _READ_CACHE.pop(next(iter(_READ_CACHE)))
    _READ_CACHE[db] = (key, facts)


def store_collections(db: str) -> list[QmdCollection]:
    """GATHER: the ``store_collections`` rows of the index at ``db`` (read-only, :func:`~.sqlite_ro.open_ro`);
    ``[]`` when it cannot be read or has none. A cheap read for a check that must not open the index twice."""
    try:
        with open_ro(db) as (con, _o):
            if con is None or "store_collections" not in table_names(con):
                return []
            return [QmdCollection(name=n, path=p, pattern=pat or "**/*.md")
                    for n, p, pat in con.execute("SELECT name, path, pattern FROM store_collections") if p]
    except (sqlite3.Error, OSError):
        return []


def qmd1_schema(db: str) -> bool:
    """GATHER: whether the index at ``db`` has qmd 1.x's schema — a ``documents`` table and no ``store_collections``
    (qmd 2.x adds ``store_collections`` and ``store_config``). qmd 2.8.3 migrates such an index on its first open,
    even for ``qmd ls`` or a search (measured: the file changed, ``index.yml`` was rewritten), and keeps 1.x's
    lower-cased paths (``memory.md``) until an update re-indexes. ``False`` when it cannot be read (read-only)."""
    try:
        with open_ro(db) as (con, _o):
            tables = table_names(con) if con is not None else {}
            return "documents" in tables and "store_collections" not in tables
    except (sqlite3.Error, OSError):
        return False


def configured_collections(facts: QmdIndexFacts) -> list[QmdCollection]:
    """The collections qmd scans: ``index.yml`` when present, else the ``store_collections`` copy."""
    if facts.yml.collections:
        return list(facts.yml.collections)
    return [QmdCollection(name=c.name, path=c.path, pattern=c.pattern or "**/*.md")
            for c in facts.collections if c.path]


# ---------------------------------------------------------------------------------------------------
# interpret (pure)
# ---------------------------------------------------------------------------------------------------

def qmd_findings(facts: QmdIndexFacts) -> list[Finding]:
    """Warnings from the index facts: orphan bloat (RW43), mixed fingerprints, a stale embed lock,
    an unreadable ``index.yml``. Verdict-relevant facts go to :func:`to_vectors` instead."""
    out: list[Finding] = []
    if facts.vector_rows and facts.orphans is not None and facts.vector_rows >= ORPHAN_BLOAT_MIN_ROWS:
        share = facts.orphans / facts.vector_rows
        if share >= ORPHAN_BLOAT_SHARE:
            size = f", index {facts.index_bytes} bytes" if facts.index_bytes is not None else ""
            out.append(Finding(tag="index_bloat", source=INDEX_SOURCE, message=(
                f"{facts.orphans} of {facts.vector_rows} vector chunks ({share:.0%}) belong to no active document{size}; "
                "run `qmd cleanup --dry-run` then `qmd cleanup` with the agent's XDG dirs (not urgent; no rebuild)")))
    named = [g for g in facts.inventory if g.fingerprint]
    if len(named) > 1:
        groups = ", ".join(f"{g.fingerprint} ({g.chunks} chunks{', current' if g.current else ''})" for g in named)
        out.append(Finding(tag="mixed_fingerprints", source=INDEX_SOURCE,
                           message=f"vectors from {len(named)} embedding fingerprints: {groups}"))
    if facts.lock.exists and facts.lock.pid_alive is False:
        out.append(Finding(tag="stale_embed_lock", source=facts.lock.path,
                           message=f"embed lock holds pid {facts.lock.pid}, which is not a running qmd (a killed embed)"))
    if facts.yml.error:
        out.append(Finding(tag="qmd_config_unreadable", source=facts.yml.path, message=facts.yml.error))
    out += index_file_findings(facts.open)
    return out


WAL_HEADER_BYTES = 32  # a -wal longer than its header holds frames (SQLite's WAL format)


def index_file_findings(o: SqliteOpen) -> list[Finding]:
    """What the index files themselves say (pure, from :func:`~.sqlite_ro.inspect_header`'s stat): a 0-byte
    ``index.sqlite`` (``index_empty``), and a ``-wal`` with frames that no live connection holds — a writer
    that died before its checkpoint (``index_wal_pending``; not when it holds no committed frame —
    ``SqliteOpen.wal_has_commit`` ``False``). Both with their sizes; clawprobe leaves them as
    found (its reader uses a private copy of a crashed writer's files)."""
    out: list[Finding] = []
    if o.db_bytes == 0:
        wal = f", with a {o.wal_bytes}-byte -wal" if o.wal_bytes else ""
        out.append(Finding(tag="index_empty", source=o.path, message=(
            f"the agent's QMD index is a 0-byte file ({o.path}: 0 bytes{wal}): no index was ever written into it "
            "(a writer killed while creating it, or a file made by hand); clawprobe left it as found — OpenClaw's "
            "managed update builds it")))
    if (o.wal_bytes or 0) > WAL_HEADER_BYTES and not o.lock_pids and o.db_bytes is not None \
            and o.wal_has_commit is not False:  # only an uncommitted transaction: opening applies nothing (n19)
        shm = "with its -shm" if o.shm_exists else "without a -shm"
        out.append(Finding(tag="index_wal_pending", source=o.path + "-wal", message=(
            f"a writer stopped before its checkpoint: index.sqlite {o.db_bytes} bytes, -wal {o.wal_bytes} bytes "
            f"({shm}), and no process holds them; clawprobe read the index through a private copy and left all "
            "of it as found (the next qmd run by OpenClaw checkpoints the -wal)")))
    return out


#: ``SqliteOpen.state`` of an index that exists but cannot be read → the index-fault tag (the same tags the
#: store check gives, ``clawprobe.core.probes.qmd_binary.INDEX_FAULTS``). ``empty`` is no fault: qmd initialises a 0-byte
#: file; ``locked`` is a writer at work, not a fault of the index.
OPEN_STATE_FAULTS: dict[str, str] = {"corrupt": "index_corrupt", "truncated": "index_corrupt",
                                     "not_sqlite": "index_not_database", "unreadable": "index_unreadable"}
INDEX_FAULT_REASONS = frozenset(OPEN_STATE_FAULTS.values())


def index_fault_of(facts: QmdIndexFacts) -> str | None:
    """The index-fault tag of an index clawprobe could not read (:data:`OPEN_STATE_FAULTS`), else ``None``.
    ``unreadable`` counts only for a file that exists (it has a size) or a permission error on the way to
    it — not for a path that cannot exist (a parent that is a file: OpenClaw cannot build the QMD home). A
    directory where the index belongs is ``index_not_database``: qmd cannot open it (``SQLITE_CANTOPEN``), so every
    ``openclaw memory index`` and ``memory search`` of the agent exits 1 (measured, breaker round 24), and only moving
    it aside lets OpenClaw build the index."""
    if facts.readable:
        return None
    o = facts.open
    if o.state == "unreadable" and o.db_bytes is None and "permission denied" not in (o.detail or "").lower():
        return "index_not_database" if os.path.isdir(o.path) else None
    return OPEN_STATE_FAULTS.get(o.state)


def to_vectors(facts: QmdIndexFacts) -> Vectors:
    """The receipt's :class:`~clawprobe.core.receipt.Vectors` from the index facts (``missing_models`` is left to
    the model-cache probe). ``not_ready_reason``: ``no_vector_store``, ``fingerprint_mismatch`` (vectors
    exist, none for the current fingerprint), ``embed_interrupted`` (partial documents or a killed embed),
    ``pending``; ``None`` when nothing is pending. An index that exists but cannot be read carries its
    index-fault tag (:func:`index_fault_of`: ``index_corrupt``, ``index_not_database``,
    ``index_unreadable``) — the ``qmd_unavailable`` rule reads it; nothing about vectors is then known. A readable
    index with active documents its search cannot return (``unsearchable_count``) carries ``index_inconsistent``
    (the same rule reads it: only moving the index aside and re-indexing makes them findable again)."""
    v = Vectors(documents=facts.documents_active, pending=facts.pending, vector_rows=facts.vector_rows,
                orphans=facts.orphans, partial_documents=facts.partial_count, has_vector_table=facts.has_vector_table,
                embed_model=facts.embed_model.model, fingerprint=facts.embed_model.fingerprint,
                embed_running_pid=facts.lock.pid if facts.lock.pid_alive else None, last_embed_at=facts.last_embed_at,
                index_bytes=facts.index_bytes)
    if not facts.readable:
        why = facts.open.detail or facts.error  # the opener's words after the state's (never the id not_sqlite)
        state = "not a SQLite file" if facts.open.state == "not_sqlite" else facts.open.state.replace("_", " ")
        v.detail = f"QMD index {state}: {why}" if why else f"QMD index {state}"
        v.not_ready_reason = index_fault_of(facts)
        if v.not_ready_reason:
            v.detail += f" — {facts.paths.db}"
        return v
    if facts.unsearchable_count:  # rows no search returns and no update repairs: the index is inconsistent
        shown = ", ".join(facts.unsearchable[:5]) + (" …" if facts.unsearchable_count > 5 else "")
        v.not_ready_reason = "index_inconsistent"
        v.detail = (f"{facts.unsearchable_count} of {facts.documents_active} active documents have no content or "
                    f"full-text row, so qmd's search never returns them and `qmd update` keeps them as unchanged: "
                    f"{shown} — {facts.paths.db}")
        return v
    current = sum(g.chunks for g in facts.inventory if g.current)
    if facts.has_vector_table is False:
        v.not_ready_reason = "no_vector_store"
    elif facts.pending and facts.vector_rows and current == 0 and facts.inventory:
        v.not_ready_reason = "fingerprint_mismatch"
    elif facts.partial_count or (facts.pending and facts.lock.exists and facts.lock.pid_alive is False):
        v.not_ready_reason = "embed_interrupted"
    elif facts.pending:
        v.not_ready_reason = "pending"
    parts = [f"{facts.pending} of {facts.documents_active} documents pending for {facts.embed_model.model} "
             f"(fingerprint {facts.embed_model.fingerprint}, from {facts.embed_model.source})"]
    if facts.partial_count:
        parts.append(f"{facts.partial_count} partly embedded")
    if facts.lock.pid_alive:
        parts.append(f"embed running (pid {facts.lock.pid})")
    v.detail = "; ".join(parts)
    return v


class StoreSummary(_M):
    """A short read-only look at any qmd store (e.g. the default ``~/.cache/qmd/index.sqlite``):
    its collections and active document counts (source: that file, ``mode=ro``/``immutable``)."""

    path: str
    state: str
    collections: dict[str, int] = Field(default_factory=dict)


def read_store_summary(db_path: str | os.PathLike[str]) -> StoreSummary:
    """Collections and active counts of a qmd store; a missing file stays missing (never created)."""
    p = os.fspath(db_path)
    with open_ro(p) as (con, opened):
        out = StoreSummary(path=p, state=opened.state)
        if con is not None:
            try:
                out.collections = {n: int(c or 0) for n, c in con.execute(
                    "SELECT collection, SUM(active) FROM documents GROUP BY collection")}
            except sqlite3.Error as e:
                out.state = classify_error(e)[0]
    return out


def default_store_path(env: Mapping[str, str]) -> str | None:
    """The qmd store a plain ``qmd`` run uses with ``env`` (``INDEX_PATH``, else
    ``${XDG_CACHE_HOME:-$HOME/.cache}/qmd/index.sqlite``); ``None`` without HOME."""
    if env.get("INDEX_PATH"):
        return env["INDEX_PATH"]
    cache = env.get("XDG_CACHE_HOME") or (str(Path(env["HOME"]) / ".cache") if env.get("HOME") else None)
    return str(Path(cache) / "qmd" / "index.sqlite") if cache else None


def wrong_store_detail(facts: QmdIndexFacts, default_store: StoreSummary | None) -> str | None:
    """Explain RW14 when the managed collections are missing: which store holds collections instead
    (pure). ``None`` when the managed index has its default collections."""
    if not facts.missing_managed:
        return None
    msg = f"the managed QMD index ({facts.paths.db}) has no {', '.join(facts.missing_managed)}"
    if default_store is not None and default_store.collections:
        names = ", ".join(f"{n} ({c} docs)" for n, c in sorted(default_store.collections.items()))
        msg += f"; the default qmd store {default_store.path} has {names} — collections were built in the wrong store"
    return msg


# ---------------------------------------------------------------------------------------------------
# qmd's own text output (pure): `qmd status` and the `qmd update` notice, for status-claim comparisons
# ---------------------------------------------------------------------------------------------------

class QmdStatusText(_M):
    """What ``qmd status`` printed (source: its stdout; qmd has no JSON status). ``pending`` is ``0`` when
    the ``Pending:`` line is absent (that is what qmd means by leaving it out) and ``None`` when the text is
    not a qmd status at all. ``vectors`` counts embedded chunks; ``orphaned`` chunks of no active document."""

    total: int | None = None
    vectors: int | None = None
    pending: int | None = None
    orphaned: int | None = None
    updated: str | None = None


_ST_TOTAL = re.compile(r"^\s*Total:\s*(\d+)", re.M)
_ST_VECTORS = re.compile(r"^\s*Vectors(?:\s*[:=]\s*|\s+)(\d+)", re.M)
_ST_PENDING = re.compile(r"^\s*Pending:\s*(\d+)", re.M)
_ST_ORPHANED = re.compile(r"^\s*Orphaned:\s*(\d+)", re.M)
_ST_UPDATED = re.compile(r"^\s*Updated:\s*(.+?)\s*$", re.M)
_UPDATE_NOTICE = re.compile(r"\((\d+) unique hash(?:es)? needs? vectors\)")


def parse_qmd_status_text(text: str) -> QmdStatusText:
    """Parse ``qmd status`` output (any qmd 1.x/2.x wording seen: ``Total:``, ``Vectors:``, ``Pending:``,
    ``Orphaned:``, ``Updated:``)."""
    out = QmdStatusText()
    if (m := _ST_TOTAL.search(text or "")) is None and _ST_VECTORS.search(text or "") is None:
        return out
    out.total = int(m[1]) if m else None
    if (m := _ST_VECTORS.search(text)) is not None:
        out.vectors = int(m[1])
    m = _ST_PENDING.search(text)
    out.pending = int(m[1]) if m else 0
    if (m := _ST_ORPHANED.search(text)) is not None:
        out.orphaned = int(m[1])
    if (m := _ST_UPDATED.search(text)) is not None:
        out.updated = m[1]
    return out


def update_notice_count(text: str) -> int | None:
    """The count in ``qmd update``'s closing notice ``Run 'qmd embed' … (N unique hashes need vectors)``.
    It is computed for qmd's built-in default embed model, not the configured one (RW20), so it is a claim
    to compare, never the pending count. ``None`` when the notice is absent."""
    m = _UPDATE_NOTICE.search(text or "")
    return int(m[1]) if m else None
