"""OpenClaw's JSON-lines log (tslog): fallbacks, update completions, embed back-offs, scope denials, reloads.

Gather (:func:`tail_file`): a bounded read from the END of the log (``logging.file``, or
``/tmp/openclaw/openclaw-YYYY-MM-DD.log`` — every one written in the window, named by the writer's local
date), never the whole file (it may reach 500 MB). Interpret (pure): :func:`parse_line` turns one tslog record into a :class:`LogLine`
(``_meta.logLevelName``, ``time``, the subsystem from key ``"0"`` — ``{"subsystem":"memory"}`` — and the
message parts ``"1"``, ``"2"``…); :func:`interpret` reduces the lines to :class:`LogFacts`. Garbage lines
(partial, non-JSON, non-tslog) are skipped and counted.

Attribution (:class:`LogScope`): the default log is shared by every OpenClaw process of the user on the
host (other installs, other ``HOME``s, CLI runs under an older config), and its records carry no state dir.
A record counts for the probed agent only when nothing in it names another owner: ``agent "<id>"``, a
``qmd binary unavailable (<cmd>)`` command that is not the configured one (OpenClaw masks secret-looking
commands as ``sk-SEC…MAND``), or OpenClaw collection names (``memory-<kind>-<agent id>``) of another agent.
Records about a *state* (fallbacks, error signals, embed/search failures, scope denials) from before
``LogScope.not_before`` (the config's mtime or the running gateway's start) describe an older
configuration and are dropped. What cannot be told apart remains: another install with the same agent id
and the same qmd command writing the same shared file — ``logging.file`` per install avoids that.

Message texts matched (OpenClaw 2026.7.35 ``qmd-manager``/``search-manager``/``server-reload-handlers``,
seen in real runs — tests/data/recorded):
``qmd binary unavailable (<cmd>); falling back to builtin: <err>``,
``qmd memory unavailable; falling back to builtin: <err>``, ``qmd memory failed; switching to builtin index: <err>``,
``qmd sync completed for agent "<id>" reason=<r> durationMs=<n>``, ``qmd embed failed (<why>): <err>; backing off for <n>s``,
``qmd search denied by scope (channel=…, chatType=…, session=…)``,
``config change detected; evaluating reload (<paths>)``, ``config reload disabled (gateway.reload.mode=off)``,
``config hot reload applied (…)``, ``gateway ready``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.mapping import as_mapping
from clawprobe.core.probes.fileinfo import open_regular
from clawprobe.core.probes.openclaw_cli import error_signals
from clawprobe.core.probes.signatures import RELOAD_APPLIED, RELOAD_CHANGE, RELOAD_NOT_APPLIED, node_process_warning
from clawprobe.core.redaction import redact_text

DEFAULT_TAIL_BYTES = 4 * 1024 * 1024

_AGENT = re.compile(r'agent "([^"]+)"')
_NAMED_AGENT = re.compile(r'\(([a-z0-9][a-z0-9_-]{0,63})\)|\bagent "?([a-z0-9][a-z0-9_-]{0,63})\b', re.I)
#: OpenClaw's record of one memory command of one agent: ``memory status failed (ops): …``, ``Memory index updated
#: (ops): 2 files indexed.`` (not ``memory sync failed (search)``: that parenthesis is the sync's reason)
_SUBJECT = re.compile(r"(?:memory (?:status|search|index) failed|memory index updated) \(([a-z0-9][a-z0-9_-]{0,63})\)",
                      re.I)
#: the agent a record's structured fields name (2026.9.6 ``session-sqlite``: ``warn("SQLite session write failed",
#: {agentId, …, storePath, error})``, joined into the message by :func:`parse_line` as ``"agentId": "kb-7"``)
_FIELD_AGENT = re.compile(r'"agentId":\s*"([^"]+)"')
#: how much of a memory issue record is kept: enough for a stack trace whose last line names the error (the
#: ledger shows 300 characters, judges the whole record)
ISSUE_DETAIL_CHARS = 4000
_SYNC = re.compile(r'qmd sync completed for agent "([^"]+)"(?: reason=(\S+))?(?: durationMs=(\d+))?')
_EMBED_FAIL = re.compile(r"qmd embed failed \(([^)]*)\): (.*?)(?:; backing off for (\d+)s)?$", re.S)
_BINARY = re.compile(r"qmd binary unavailable \((.*?)\); falling back to builtin: (.*)$", re.S)
_MANAGER = re.compile(r"qmd memory unavailable; falling back to builtin: (.*)$", re.S)
_RUNTIME = re.compile(r"qmd memory failed; switching to builtin index: (.*)$", re.S)
_SCOPE = re.compile(r"qmd search denied by scope \(([^)]*)\)")
#: a qmd update OpenClaw cut off at memory.qmd.update.updateTimeoutMs ("qmd boot update failed: Error: qmd update timed
#: out after 1ms", "qmd update failed (Error: …)" on the interval, "qmd watch sync failed: …", "qmd session-start
#: sync failed: …", the retries before them; 2026.7.35 measured)
_UPDATE_TIMEOUT = re.compile(r"\bqmd update timed out after (\d+)\s*ms\b")
_SCOPE_FIELDS = re.compile(r"channel=([^,]*), chatType=([^,]*), session=([^)]*)")
_CASE_CLASH = re.compile(r"collection add skipped for (\S+): .*already exists for this path and pattern")
_COLLECTION = re.compile(r"\bmemory-[a-z]+-[A-Za-z0-9_-]+")
_MEMORY_WORDS = re.compile(r"\bmemory|\bqmd\b|\bembedding|\bsqlite-vec\b|\bchunks_vec\b|reindex|memory_search|"
                           r"\bfts5?\b|openclaw-agent\.sqlite", re.I)
_ISSUE_LEVELS = ("WARN", "WARNING", "ERROR", "FATAL", "CRITICAL")
_CHANGE, _NOT_APPLIED, _APPLIED = RELOAD_CHANGE, RELOAD_NOT_APPLIED, RELOAD_APPLIED  # the one table's reload texts


class LogScope(BaseModel):
    """Which records of a possibly shared log belong to the probed agent (see the module docstring).

    ``agent_id``: ``None`` accepts every agent. ``qmd_commands``: the configured ``memory.qmd.command`` as
    written and as resolved (source: the config); empty accepts any. ``not_before`` (UTC): records about a
    state older than this are an earlier configuration's (source: config mtime, gateway process start).
    """

    model_config = ConfigDict(extra="forbid")
    agent_id: str | None = None
    qmd_commands: list[str] = Field(default_factory=list)
    not_before: datetime | None = None
    #: the other agents of the same config (source: the config's roster): a record naming one of them the way
    #: OpenClaw names an agent — ``(<id>)`` (``memory status failed (ops): …``, ``Memory index updated (ops)``)
    #: or ``agent <id>`` — and not this agent is theirs
    other_agents: list[str] = Field(default_factory=list)
    #: the OpenClaw package roots this install runs (the running gateway's ``openclaw.mjs`` dir, the CLI's;
    #: source: the process table, the CLI path): a record whose ``_meta.path.filePath`` lies in another
    #: package was written by another OpenClaw program — another install's. Empty accepts any writer.
    writers: list[str] = Field(default_factory=list)
    #: the log is the dated default one every OpenClaw process of the user writes (no ``logging.file``):
    #: an error record that names neither this agent nor this state dir is charged only when this install's
    #: gateway runs since before it (``gateway_since``); otherwise it is kept aside as unattributed
    shared: bool = False
    gateway_since: datetime | None = None
    state_dir: str | None = None

    def same_program(self, writer: str | None) -> bool:
        """False when the record's writer is known and is not one of :attr:`writers`."""
        return writer is None or not self.writers or writer in self.writers

    def names_self(self, message: str) -> bool:
        """The record names this agent (``agent "<id>"``, ``(<id>)``, its collections) or this state dir."""
        if self.state_dir and self.state_dir in message:
            return True
        if self.agent_id is None:
            return False
        if (m := _AGENT.search(message)) is not None and m[1] == self.agent_id:
            return True
        if (m := _SUBJECT.search(message)) is not None and m[1].lower() == self.agent_id:
            return True
        return any(n.endswith("-" + self.agent_id) for n in _COLLECTION.findall(message))

    def attributed(self, line: LogLine) -> bool:
        """Whether an error record may be charged to this install (always, unless the log is shared)."""
        if not self.shared or self.names_self(line.message):
            return True
        return self.gateway_since is not None and line.at is not None and line.at >= self.gateway_since

    def owns(self, message: str) -> bool:
        """False when ``message`` names another agent, another qmd command or another agent's collections."""
        if not _for_agent(message, self.agent_id):
            return False
        subject = _SUBJECT.search(message)
        if subject is not None and self.agent_id is not None and subject[1].lower() != self.agent_id:
            # the agent a memory command's record is about, in parentheses ("memory status failed (work): … belongs
            # to agent main; requested agent work"): another one's, whoever else the text names — and whether or
            # not this config knows it (a shared log holds other installs' agents too)
            return False
        field = _FIELD_AGENT.search(message)
        if field is not None and self.agent_id is not None and field[1].lower() != self.agent_id.lower():
            # a record whose fields name its agent ("SQLite session write failed" {agentId: "kb-7", storePath,
            # error}): another agent's store, whatever its words say — one gateway logs every agent's records
            return False
        if self.other_agents and self.agent_id is not None and subject is None:
            named = {(m[1] or m[2]).lower() for m in _NAMED_AGENT.finditer(message)}
            if named & set(self.other_agents) and self.agent_id not in named:
                return False
        m = _BINARY.search(message)
        if m is not None and self.qmd_commands and not any(_same_command(m[1], c) for c in self.qmd_commands):
            return False
        names = _COLLECTION.findall(message)
        if names and self.agent_id is not None and not any(n.endswith("-" + self.agent_id) for n in names):
            return False
        return True


def _same_command(logged: str, configured: str) -> bool:
    """``logged`` is ``configured``, or OpenClaw's masked form of it (``<first chars>…<last chars>``)."""
    logged = logged.strip()
    if "…" in logged:
        head, _, tail = logged.partition("…")
        return len(configured) > len(head) + len(tail) and configured.startswith(head) and configured.endswith(tail)
    return logged == configured.strip()


class LogLine(BaseModel):
    """One tslog record: ``at`` (UTC), ``level`` (INFO/WARN/ERROR…), ``subsystem`` (``memory``,
    ``gateway/reload``… or ``None``), ``message`` (text parts joined), ``source`` (``file`` or ``file:line``)."""

    model_config = ConfigDict(extra="forbid")
    at: datetime | None = None
    level: str | None = None
    subsystem: str | None = None
    message: str
    source: str = ""
    #: the OpenClaw package that wrote it (``_meta.path.filePath`` up to ``/dist/``), when the record says
    writer: str | None = None


class SyncEvent(BaseModel):
    """A completed QMD update (``qmd sync completed``): when, why (boot/interval/cli/…), how long (seconds)."""

    model_config = ConfigDict(extra="forbid")
    at: datetime | None
    agent_id: str
    reason: str | None = None
    duration_s: float | None = None
    source: str = ""


class Event(BaseModel):
    """A dated log event with a sub-reason ``tag`` and its ``detail`` text (secrets masked, :func:`interpret`)."""

    model_config = ConfigDict(extra="forbid")
    at: datetime | None
    tag: str
    detail: str
    source: str = ""


class ConfigChange(BaseModel):
    """A config change the gateway saw: memory ``keys``, and ``outcome`` ``applied`` / ``not_applied`` /
    ``pending`` (no verdict line yet) with the line that decided it (secrets masked)."""

    model_config = ConfigDict(extra="forbid")
    at: datetime | None
    keys: list[str]
    outcome: str
    detail: str = ""


class LogFacts(BaseModel):
    """What the log proves for one agent (pure result of :func:`interpret`).

    ``fallbacks``: QMD→builtin switches (tags ``binary_unavailable``, ``manager_failed``, ``timeout``,
    ``runtime_error``, ``case_mismatch``); ``syncs``: completed updates; ``embed_failures`` (tag = the
    back-off seconds as text); ``scope_denials``; ``config_changes`` with memory keys; ``boots``: times of
    ``gateway ready``; ``lines``/``skipped``: records read / unusable lines. ``signals``: known error texts
    (:func:`clawprobe.core.probes.openclaw_cli.error_signals`; ``tag`` the signal, ``detail`` the line), newest 200.
    ``issues``: every memory-related WARN/ERROR record, known or not (:func:`is_memory_issue`; ``tag`` the
    level, ``detail`` the message), newest 200 — the input of the evidence ledger.
    """

    model_config = ConfigDict(extra="forbid")
    files: list[str] = Field(default_factory=list)
    lines: int = 0
    skipped: int = 0
    #: lines about memory that are no OpenClaw tslog record (another format: a future build's, a redirect's),
    #: redacted, the newest 5 — evidence clawprobe does not understand
    unread_memory: list[str] = Field(default_factory=list)
    fallbacks: list[Event] = Field(default_factory=list)
    syncs: list[SyncEvent] = Field(default_factory=list)
    embed_failures: list[Event] = Field(default_factory=list)
    scope_denials: list[Event] = Field(default_factory=list)
    #: qmd updates cut off at their timeout (``tag``: the timeout in ms as text, ``detail``: the record), newest 50
    update_timeouts: list[Event] = Field(default_factory=list)
    search_failures: list[Event] = Field(default_factory=list)
    config_changes: list[ConfigChange] = Field(default_factory=list)
    boots: list[datetime] = Field(default_factory=list)
    signals: list[Event] = Field(default_factory=list)
    issues: list[Event] = Field(default_factory=list)
    #: records another OpenClaw program wrote (:meth:`LogScope.same_program`), dropped
    foreign: int = 0
    #: memory error records of a shared log not attributable to this install (:meth:`LogScope.attributed`):
    #: not charged, kept to be said (newest 20)
    unattributed: list[Event] = Field(default_factory=list)
    #: why this log cannot show the running gateway's fallback line (a file this user cannot read — set by
    #: :func:`read_log` —, a relative ``logging.file`` with no gateway working directory to resolve it, no log
    #: file, a ``logging.level`` that drops WARN); ``None``
    #: when it can (source: the config, the file system, the gateway process)
    blind: str | None = None

    @property
    def last_fallback(self) -> Event | None:
        """The newest fallback event, if any."""
        return self.fallbacks[-1] if self.fallbacks else None

    @property
    def last_sync(self) -> SyncEvent | None:
        """The newest completed update, if any."""
        return self.syncs[-1] if self.syncs else None

    def normal_update_s(self) -> float | None:
        """The median duration (seconds) of the logged updates — the lease's "normal update duration"."""
        d = sorted(s.duration_s for s in self.syncs if s.duration_s is not None)
        return d[len(d) // 2] if d else None


# --------------------------------------------------------------------------------------------------------
# Gather
# --------------------------------------------------------------------------------------------------------

def tail_file(path: str, max_bytes: int = DEFAULT_TAIL_BYTES) -> list[str]:
    """The last lines of ``path`` within ``max_bytes`` (a cut first line is dropped). ``[]`` when unreadable."""
    return read_tail(path, max_bytes)[0]


def read_tail(path: str, max_bytes: int = DEFAULT_TAIL_BYTES) -> tuple[list[str], str | None]:
    """(the last lines of ``path`` within ``max_bytes``, a cut first line dropped; why this user cannot read it, else
    ``None``) — from ONE open. A file gone since it was listed (rotated or pruned: ``FileNotFoundError``) is no
    lines and no denial; any other refusal (``EACCES``: the gateway's ``0600`` log written by another user; not a
    regular file) is ``"<path> cannot be read by this user (<strerror>)"``: read as ``[]`` alone, the gateway's
    fallback line in it would go unseen."""
    try:
        with open_regular(path) as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            start = max(0, size - max_bytes)
            f.seek(start)
            data = f.read(size - start)
    except FileNotFoundError:
        return [], None
    except OSError as e:
        return [], f"{path} cannot be read by this user ({e.strerror or e})"
    if start > 0:
        nl = data.find(b"\n")
        data = data[nl + 1:] if nl != -1 else b""
    return data.decode("utf-8", errors="replace").splitlines(), None


def unlistable(folder: str) -> str | None:
    """Why this user cannot list the log ``folder`` (``None`` when it can, or it is gone): ``/tmp/openclaw`` is
    ``0700``, so a gateway run by another user leaves dated default logs no file listing can find. Only asked
    when no log file was found there; a file that does not open is :func:`read_tail`'s to say. I/O: one scandir."""
    try:
        with os.scandir(folder):
            pass
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{folder} cannot be listed by this user ({e.strerror or e})"
    return None


#: how far back a dated default log's last write may lie and still be read (with no running gateway: a
#: gateway writes in its own time zone's date, up to ±14 h from clawprobe's, so "yesterday and today" by
#: clawprobe's clock misses files; the files' mtimes are measured instead)
DEFAULT_LOG_WINDOW = timedelta(days=2)
#: at most this many dated default logs are read (the newest)
MAX_DATED_LOGS = 8
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}\.log$")


def log_files(log_file: str | None, now: datetime, default_for: Callable[[datetime], str],
              since: datetime | None = None) -> list[str]:
    """The files to tail: ``logging.file`` alone, else every dated default log (``<stem>-YYYY-MM-DD.log`` in
    the directory of ``default_for(now)``) written since ``since`` — default, and at the latest,
    :data:`DEFAULT_LOG_WINDOW` before ``now`` — whatever date its name carries: OpenClaw names the file by the
    WRITING process's local date (its ``TZ``), not clawprobe's. Oldest first, at most :data:`MAX_DATED_LOGS`;
    only existing regular files."""
    if log_file:
        return [log_file] if os.path.isfile(log_file) else []
    today = default_for(now)
    folder, name = os.path.split(today)
    m = _DATED.search(name)
    if m is None:
        return [today] if os.path.isfile(today) else []
    stem = name[:m.start()]
    cutoff = min(t for t in (since, now - DEFAULT_LOG_WINDOW) if t is not None).timestamp()
    found: list[tuple[str, str]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        entries = []
    for e in entries:
        n = e.name
        if not (n.startswith(stem + "-") and _DATED.fullmatch(n[len(stem):]) is not None):
            continue
        try:
            if e.is_file(follow_symlinks=True) and e.stat().st_mtime >= cutoff:
                found.append((n, e.path))
        except OSError:
            continue
    return [path for _, path in sorted(found)[-MAX_DATED_LOGS:]]


# --------------------------------------------------------------------------------------------------------
# Interpret
# --------------------------------------------------------------------------------------------------------

def _time(rec: dict) -> datetime | None:
    for value in (rec.get("time"), (rec.get("_meta") or {}).get("date") if isinstance(rec.get("_meta"), dict) else None):
        if isinstance(value, str):
            try:
                t = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            return t if t.tzinfo else t.replace(tzinfo=UTC)
    return None


def _subsystem(value: object) -> str | None:
    if isinstance(value, str) and value.startswith("{"):
        try:
            obj = json.loads(value)
        except json.JSONDecodeError:
            return None
        if isinstance(obj, dict):
            sub = obj.get("subsystem") or obj.get("module")
            return sub if isinstance(sub, str) else None
    return None


def parse_line(text: str, source: str = "") -> LogLine | None:
    """One JSON line → :class:`LogLine`; ``None`` for anything that is not a tslog record."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        rec = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(rec, dict):
        return None
    keys = sorted((k for k in rec if k.isdecimal()), key=int)
    sub = _subsystem(rec.get("0")) if keys else None
    parts = [rec[k] for k in keys if not (k == "0" and sub is not None)]
    # the words first, the structured fields after them (``log.warn("slow … open", {agentId, elapsedMs, …})``
    # is logged as "1": {…}, "2": "slow … open"): a line cut for display still says what happened
    texts = [p for p in parts if isinstance(p, str)] + [json.dumps(p, ensure_ascii=False) for p in parts
                                                        if not isinstance(p, str)]
    message = " ".join(t for t in texts if t) or (rec.get("message") if isinstance(rec.get("message"), str) else "")
    if not message:
        return None
    meta = as_mapping(rec.get("_meta"))
    level = meta.get("logLevelName")
    return LogLine(at=_time(rec), level=level if isinstance(level, str) else None, subsystem=sub, message=message,
                   source=source, writer=_writer(meta))


def _writer(meta: Mapping[str, object]) -> str | None:
    """The OpenClaw package dir a record's code lives in: ``_meta.path.filePath`` (tslog: the calling file,
    ``/…/node_modules/openclaw/dist/x.js``) up to ``/dist/``; ``None`` when absent or not a dir named
    ``openclaw``."""
    fp = as_mapping(meta.get("path")).get("filePath")
    if not isinstance(fp, str) or "/dist/" not in fp:
        return None
    root = os.path.normpath(fp.removeprefix("file://").rsplit("/dist/", 1)[0])
    # only OpenClaw's own package (``…/openclaw``); a plugin's file elsewhere names no program
    return root if root.startswith("/") and os.path.basename(root) == "openclaw" else None


_ABOUT_MEMORY = re.compile(r"\b(?:memory|qmd|embeddings?)\b", re.I)


def parse_lines(lines: Iterable[str], source: str = "", unread: list[str] | None = None
                ) -> tuple[list[LogLine], int]:
    """Parse many lines; returns (records, number of lines skipped as garbage). A skipped line about memory
    (``memory``, ``qmd``, ``embedding``) is appended to ``unread`` (redacted, ≤ 300 characters) when given."""
    out: list[LogLine] = []
    skipped = 0
    for raw in lines:
        if not raw.strip():
            continue
        rec = parse_line(raw, source)
        if rec is None:
            skipped += 1
            if unread is not None and _ABOUT_MEMORY.search(raw):
                unread.append(redact_text(raw.strip())[:300])
        else:
            out.append(rec)
    return out, skipped


def is_memory_key(path: str) -> bool:
    """Whether a changed config path matters to memory search (``memory.*``, ``*memorySearch*``,
    ``agents.*.memory.*``, ``agents.defaults.workspace``, ``plugins.slots.memory``)."""
    p = path.strip()
    return p == "memory" or p.startswith("memory.") or "memorySearch" in p or ".memory." in p or p.endswith(".memory") \
        or p.startswith("plugins.slots.memory") or p.endswith(".workspace") or p.startswith("agents.list")


def is_memory_issue(line: LogLine) -> bool:
    """A WARN/ERROR (or worse) record of the memory subsystem, or one whose text is about memory search
    (memory, qmd, embeddings, sqlite-vec, reindex, FTS) — except a Node process warning another subsystem logged
    that names no memory-search part (:func:`~clawprobe.core.probes.signatures.node_process_warning`: "memory leak"
    there is the process's RAM)."""
    if (line.level or "").upper() not in _ISSUE_LEVELS:
        return False
    if "memory" in (line.subsystem or "").lower():
        return True
    return not node_process_warning(line.message) and bool(_MEMORY_WORDS.search(line.message))


def scope_denial_fields(fields: str) -> tuple[str | None, str | None, str | None]:
    """``(channel, chatType, session key)`` of a ``qmd search denied by scope (channel=…, chatType=…, session=…)``
    record — its parenthesis or the whole record (OpenClaw 2026.7.35 ``logScopeDenied``; ``unknown`` / ``<none>``
    → ``None``; pure)."""
    m = _SCOPE_FIELDS.search(fields.strip())
    if m is None:
        return None, None, None
    channel, chat_type, session = (v.strip() for v in m.groups())
    return (None if channel in ("", "unknown") else channel, None if chat_type in ("", "unknown") else chat_type,
            None if session in ("", "<none>") else session)


def denial_agent(fields: str) -> str | None:
    """The agent a scope denial's session key belongs to (``agent:<id>:…``, lower-cased), else ``None`` (pure)."""
    session = scope_denial_fields(fields)[2]
    parts = session.split(":") if session else []
    return parts[1].lower() if len(parts) >= 3 and parts[0].lower() == "agent" else None


def _for_agent(message: str, agent_id: str | None) -> bool:
    m = _AGENT.search(message)
    return agent_id is None or m is None or m[1] == agent_id


def interpret(records: Iterable[LogLine], agent_id: str | None = None, since: datetime | None = None,
              scope: LogScope | None = None) -> LogFacts:
    """Reduce log records (oldest first) to :class:`LogFacts` for ``agent_id`` (pure).

    ``since`` drops older records (e.g. before the gateway process started). Lines naming another agent
    (``agent "x"``) are ignored; lines naming no agent count for every agent. ``scope`` (its ``agent_id``
    replaces ``agent_id``) also drops records another owner wrote and state records older than
    ``scope.not_before``; syncs, config changes and boots are kept whatever their age.
    """
    scope = scope or LogScope(agent_id=agent_id)
    facts = LogFacts()
    clash: str | None = None
    for r in records:
        if since is not None and r.at is not None and r.at < since:
            continue
        facts.lines += 1
        msg = r.message
        if not scope.same_program(r.writer):
            facts.foreign += 1
            continue
        if not scope.owns(msg):
            continue
        if scope.not_before is not None and r.at is not None and r.at < scope.not_before and _is_state(msg):
            continue
        src = r.source
        sigs = error_signals(msg)
        if (is_memory_issue(r) or sigs) and not scope.attributed(r):
            facts.unattributed.append(Event(at=r.at, tag=(r.level or "").upper(),
                                            detail=msg.strip()[:ISSUE_DETAIL_CHARS], source=src))
            del facts.unattributed[:-20]
            sigs = []
        elif is_memory_issue(r):
            facts.issues.append(Event(at=r.at, tag=(r.level or "").upper(), detail=msg.strip()[:ISSUE_DETAIL_CHARS],
                                      source=src))
            del facts.issues[:-200]
        for sig in sigs:
            facts.signals.append(Event(at=r.at, tag=sig.tag, detail=sig.line, source=src))
            del facts.signals[:-200]
        if (m := _CASE_CLASH.search(msg)) is not None:
            clash = m[1]
        if (m := _UPDATE_TIMEOUT.search(msg)) is not None:
            facts.update_timeouts.append(Event(at=r.at, tag=m[1], detail=msg.strip()[:ISSUE_DETAIL_CHARS], source=src))
            del facts.update_timeouts[:-50]
        if (m := _BINARY.search(msg)) is not None:
            facts.fallbacks.append(Event(at=r.at, tag="binary_unavailable", detail=f"qmd binary unavailable ({m[1]}): "
                                         f"{m[2].strip()}", source=src))
        elif (m := _MANAGER.search(msg)) is not None:
            facts.fallbacks.append(Event(at=r.at, tag="manager_failed", detail=f"qmd memory unavailable: {m[1].strip()}",
                                         source=src))
        elif (m := _RUNTIME.search(msg)) is not None:
            err = m[1].strip()
            tag = "timeout" if "timed out" in err else ("case_mismatch" if clash else "runtime_error")
            detail = f"qmd memory failed, switched to builtin: {err}" + (f" (collection clash: {clash})" if clash else "")
            facts.fallbacks.append(Event(at=r.at, tag=tag, detail=detail, source=src))
        elif (m := _SYNC.search(msg)) is not None:
            try:
                dur = int(m[3]) / 1000.0 if m[3] else None
            except OverflowError:  # a durationMs no float can hold is not a duration
                dur = None
            facts.syncs.append(SyncEvent(at=r.at, agent_id=m[1], reason=m[2], duration_s=dur, source=src))
        elif (m := _EMBED_FAIL.search(msg)) is not None:
            facts.embed_failures.append(Event(at=r.at, tag=m[3] or "", detail=f"qmd embed failed ({m[1]}): {m[2].strip()}",
                                              source=src))
        elif (m := _SCOPE.search(msg)) is not None:
            if denial_agent(m[1]) in (None, scope.agent_id) or scope.agent_id is None:
                facts.scope_denials.append(Event(at=r.at, tag=scope_denial_fields(m[1])[1] or "unknown",
                                                 detail=f"qmd search denied by scope ({m[1]})", source=src))
        elif msg.startswith("qmd search failed") or "Memory search failed" in msg:
            tag = "timeout" if "timed out" in msg else "error"
            facts.search_failures.append(Event(at=r.at, tag=tag, detail=msg.strip()[:500], source=src))
        elif (m := _CHANGE.search(msg)) is not None:
            keys = [k.strip() for k in m[1].split(",") if is_memory_key(k)]
            if keys:
                facts.config_changes.append(ConfigChange(at=r.at, keys=keys, outcome="pending"))
        elif any(msg.startswith(x) or x in msg for x in _NOT_APPLIED):
            for c in facts.config_changes:
                if c.outcome == "pending":
                    c.outcome, c.detail = "not_applied", msg.strip()
        elif any(msg.startswith(x) for x in _APPLIED):
            if msg.startswith("gateway ready") and r.at is not None:
                facts.boots.append(r.at)
            for c in facts.config_changes:
                if c.outcome in ("pending", "not_applied"):
                    c.outcome, c.detail = "applied", msg.strip()
    return _masked(facts)


def _masked(facts: LogFacts) -> LogFacts:
    """``facts`` with every text taken from a log line (event and change details) passed through
    :func:`clawprobe.core.redaction.redact_text`: OpenClaw's log is where evidence enters, and a line may quote a key,
    a ``Bearer`` header, a URL with a password or a ``?key=`` parameter."""
    for events in (facts.issues, facts.fallbacks, facts.embed_failures, facts.scope_denials, facts.update_timeouts,
                   facts.search_failures, facts.signals, facts.unattributed):
        for e in events:
            e.detail = redact_text(e.detail)
    for c in facts.config_changes:
        c.detail = redact_text(c.detail)
    return facts


def _is_state(message: str) -> bool:
    """True for a record about the current state (not a sync, a config change or a boot)."""
    return not (_SYNC.search(message) or _CHANGE.search(message) or any(x in message for x in _NOT_APPLIED)
                or any(message.startswith(x) for x in _APPLIED))


def read_log(paths: list[str], agent_id: str | None, since: datetime | None = None,
             max_bytes: int = DEFAULT_TAIL_BYTES, scope: LogScope | None = None) -> LogFacts:
    """GATHER + interpret: tail each file (bounded, one open each: :func:`read_tail`) and reduce the records to
    :class:`LogFacts` (``scope``: see :func:`interpret`). ``blind`` is the first file this user cannot read
    ("the log <path> cannot be read by this user (…)"), else ``None``."""
    records: list[LogLine] = []
    skipped = 0
    unread: list[str] = []
    denied: str | None = None
    for p in paths:
        lines, why = read_tail(p, max_bytes)
        denied = denied or why
        recs, bad = parse_lines(lines, p, unread)
        records += recs
        skipped += bad
    records.sort(key=lambda r: r.at or datetime.min.replace(tzinfo=UTC))
    facts = interpret(records, agent_id, since, scope)
    facts.files = list(paths)
    facts.skipped = skipped
    facts.unread_memory = unread[-5:]
    facts.blind = f"the log {denied}" if denied else None
    return facts


def drift(facts: LogFacts) -> tuple[bool | None, list[str], str | None]:
    """(drift, memory keys, detail) from the gateway's own reload lines.

    ``True``: a memory-relevant change was seen and the gateway did not apply it (reload disabled/ignored/
    failed) — or has not decided yet; ``False``: every seen change was applied (hot reload or restart) or
    no memory change was seen since a logged boot; ``None``: the log shows neither a boot nor a change.
    """
    open_changes = [c for c in facts.config_changes if c.outcome != "applied"]
    if open_changes:
        keys = sorted({k for c in open_changes for k in c.keys})
        last = open_changes[-1]
        detail = last.detail or "change seen, no reload/restart logged yet"
        return True, keys, detail
    if facts.config_changes or facts.boots:
        return False, [], None
    return None, [], None
