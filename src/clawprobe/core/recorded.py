"""Recorded evidence to a receipt, and the refinement every receipt gets from evidence the probes gather but
the orchestrator does not merge (signals in error texts, tool payloads, status texts, path explainers).

Three parts, each usable alone:

* **Bundles** (:func:`load_bundle`): a directory holding one file per raw output a real program printed —
  for failures that cannot exist on this machine (Windows, macOS/launchd, GPU, remote providers, old
  builds, a live chat turn). Layout (paths relative to the bundle; every part optional)::

      bundle.json                    era/version, agent id, check time, gateway env source, canary, host,
                                     and which step dir / file is which (``steps``, ``sources``)
      home/.openclaw/openclaw.json   the config text, exactly as written (JSON5)
      home/.openclaw/workspace/…     memory files as they were (symlinks kept)
      home/.openclaw/agents/<id>/sessions/*.jsonl   transcripts with memory_search toolResult records
      home/.config/systemd/user/openclaw-gateway.service, home/Library/LaunchAgents/ai.openclaw.gateway.plist
      logs/openclaw.log              tslog JSON lines (``{"0":"{\\"subsystem\\":\\"memory\\"}","1":"…","_meta":{…}}``)
      steps/<name>/                  one command each: stdout.json|stdout.txt, stderr.txt, meta.json
                                     (``command``, ``rc``, ``seconds``, ``timed_out``, ``at``) — the layout of
                                     tests/data/recorded, so those real recordings can be referenced too

* **Assembly** (:func:`assemble`): the SAME interpret functions the live probes use —
  :func:`clawprobe.core.probes.config.read_config`/``config_facts``, :func:`clawprobe.core.probes.gateway.interpret`,
  :func:`clawprobe.core.probes.qmd_binary.interpret`, :func:`clawprobe.core.probes.openclaw_cli.parse_status`/``parse_search``,
  :func:`clawprobe.core.probes.openclaw_log.read_log`, :func:`clawprobe.core.probes.tool_results.parse_lines`, the orchestrator's
  merges — to a :class:`~clawprobe.core.receipt.Receipt`. Nothing in a bundle sets a verdict or a receipt field.

* **Refinement** (:func:`refine`, pure; :func:`gather_extra` is its live GATHER and :func:`refine_live`
  both): error-text signals (:data:`clawprobe.core.probes.openclaw_cli.SIGNATURES`) and the other :class:`Extra`
  inputs narrow the receipt — a transport/mangled/crashing qmd, a gateway stuck on builtin, a builtin
  engine that fails closed (provider, runtime, corrupt/locked index, rebuild failing, FTS5), aborted syncs,
  embed time-outs, status texts that misreport (kept in ``status_claims``), and why a canary missed.
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawprobe.core import ledger
from clawprobe.core import probe as orchestrator
from clawprobe.core.canary import parse_results, result_path, token_hits
from clawprobe.core.lease import Lease
from clawprobe.core.locate import has_qmd_backend, normalize_agent_id
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes import tool_results as tr
from clawprobe.core.probes.config import (
    ConfigSnapshot,
    _get,
    config_facts,
    lease_for,
    memory_settings,
    read_config,
)
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.probes.qmd_index import QmdStatusText, parse_qmd_status_text, update_notice_count
from clawprobe.core.proc import ProcResult
from clawprobe.core.receipt import Evidence, Finding, OpenClawFacts, Receipt, StatusClaim
from clawprobe.core.redaction import redact_text

MAX_STEP_CHARS = 4 * 1024 * 1024
MAX_TRANSCRIPT_LINES = 5000
MAX_SCAN_ENTRIES = 5000
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|\\")
_NODE_VERSION = re.compile(r"\bNode (?:v)?(\d+\.\d+\.\d+)")
_CRASH_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL")
_RESOURCE_TAGS = ("rerank_context", "heap_limit", "oom_killed")
_PROVIDER_TAGS = ("provider_auth", "provider_missing", "provider_unreachable", "provider_http", "local_model")


class BundleError(Exception):
    """An evidence bundle that cannot be used; ``str()`` names the bundle and the reason."""


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------------------------------------
# Bundle files
# --------------------------------------------------------------------------------------------------------

class Step(_M):
    """One recorded command (source: ``steps/<name>/``): argv text, exit code (negative = killed by that
    signal), wall seconds, whether it timed out, when it ran (UTC) and its output (text, ≤ 4 MiB a stream)."""

    name: str
    command: str | None = None
    rc: int | None = None
    seconds: float | None = None
    timed_out: bool = False
    at: datetime | None = None
    stdout: str = ""
    stderr: str = ""

    @property
    def output(self) -> str:
        """stdout and stderr together (OpenClaw prints ``[memory] …`` lines on either)."""
        return f"{self.stdout}\n{self.stderr}"


class GatewayRecord(_M):
    """Where the gateway's environment came from on the recorded host. ``source``: ``process`` (a running
    gateway: ``pid``, ``started_at`` UTC, ``exe``, its ``path`` = PATH), ``systemd``/``launchd`` (the service
    file under the bundle's ``home/``), ``shell`` (no gateway found). Never more than PATH/HOME."""

    source: Literal["process", "systemd", "launchd", "shell"]
    pid: int | None = None
    started_at: datetime | None = None
    exe: str | None = None
    path: str | None = None


class CanaryRecordSpec(_M):
    """The canary clawprobe planted on the recorded host: the token (synthetic), its workspace-relative
    path, when it was planted, and retired ``old_tokens`` whose searches are recorded too."""

    token: str
    expected_path: str
    planted_at: datetime | None = None
    content_sha256: str | None = None
    old_tokens: list[str] = Field(default_factory=list)


class HostRecord(_M):
    """The host at check time: CPU count, 1/5/15-minute load, memory in bytes, kernel log lines file."""

    cpus: int | None = None
    loadavg: list[float] = Field(default_factory=list)
    mem_total_bytes: int | None = None
    mem_available_bytes: int | None = None
    kernel_log: str | None = None


class BundleSpec(_M):
    """``bundle.json``. ``era`` is the OpenClaw version (CalVer); ``version_output`` the raw
    ``openclaw --version`` stdout when recorded. ``steps`` maps a role to its step dir(s): ``status``,
    ``status_deep``, ``status_text``, ``search``, ``old_search``, ``direct``, ``index`` (list), ``doctor``,
    ``qmd_status``, ``qmd_update``, ``outputs`` (list: other commands). ``qmd_binary`` is the qmd gather evidence with
    ``version``/``store`` naming step dirs. ``model_cache`` names a JSON file holding the model-cache evidence
    gathered on the recorded host. ``sources`` says, per file or step, what it is and where it came from."""

    case: str
    variant: str | None = None
    title: str = ""
    era: str
    version_output: str | None = None
    agent_id: str = "main"
    checked_at: datetime
    config: str | None = "home/.openclaw/openclaw.json"
    workspace: str | None = "home/.openclaw/workspace"
    env: dict[str, str] = Field(default_factory=dict)
    gateway: GatewayRecord | None = None
    qmd_binary: dict[str, Any] | None = None
    steps: dict[str, str | list[str]] = Field(default_factory=dict)
    log: str | None = None
    transcripts: list[str] = Field(default_factory=list)
    canary: CanaryRecordSpec | None = None
    host: HostRecord | None = None
    runtime: dict[str, str] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict)
    model_cache: str | None = None


class Bundle(_M):
    """A loaded bundle: its spec, its absolute ``root``, and the recorded steps by role."""

    root: str
    spec: BundleSpec
    steps: dict[str, list[Step]] = Field(default_factory=dict)

    @property
    def home(self) -> str:
        """The recorded HOME (``<bundle>/home``)."""
        return os.path.join(self.root, "home")

    @property
    def state_dir(self) -> str:
        """The recorded state dir (``<bundle>/home/.openclaw``)."""
        return os.path.join(self.home, ".openclaw")

    def path(self, rel: str | None) -> str | None:
        """``rel`` inside the bundle (absolute), or ``None``."""
        return os.path.normpath(os.path.join(self.root, rel)) if rel else None

    def step(self, role: str) -> Step | None:
        """The (first) step recorded for ``role``."""
        got = self.steps.get(role) or []
        return got[0] if got else None


def _read_text(path: Path, limit: int = MAX_STEP_CHARS) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read(limit)


def load_step(path: str | os.PathLike[str], name: str | None = None) -> Step:
    """Read one step dir (``stdout.json`` or ``stdout.txt``, ``stderr.txt``, ``meta.json``). Raises
    :class:`BundleError` when the dir or its meta is unusable."""
    d = Path(path)
    if not d.is_dir():
        raise BundleError(f"step dir {d} does not exist")
    meta: dict[str, Any] = {}
    if (d / "meta.json").is_file():
        try:
            meta = json.loads(_read_text(d / "meta.json"))
        except ValueError as e:
            raise BundleError(f"{d / 'meta.json'} is not JSON: {e}") from None
    out = next((d / n for n in ("stdout.json", "stdout.txt") if (d / n).is_file()), None)
    try:
        return Step(name=name or d.name, command=meta.get("command") if isinstance(meta.get("command"), str)
                    else (" ".join(meta["command"]) if isinstance(meta.get("command"), list) else None),
                    rc=meta.get("rc"), seconds=meta.get("seconds"), timed_out=bool(meta.get("timed_out")),
                    at=meta.get("at"), stdout=_read_text(out) if out else "",
                    stderr=_read_text(d / "stderr.txt") if (d / "stderr.txt").is_file() else "")
    except ValidationError as e:
        raise BundleError(f"{d}/meta.json: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None


def load_bundle(path: str | os.PathLike[str]) -> Bundle:
    """GATHER: read a bundle directory (``bundle.json`` + its step dirs). Raises :class:`BundleError` with
    the bundle and the reason — never a traceback for a bad file."""
    root = Path(path).resolve()
    spec_file = root / "bundle.json"
    try:
        spec = BundleSpec.model_validate_json(_read_text(spec_file))
    except FileNotFoundError:
        raise BundleError(f"{root}: no bundle.json") from None
    except ValidationError as e:
        err = e.errors()[0]
        raise BundleError(f"{spec_file}: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None
    steps: dict[str, list[Step]] = {}
    for role, rel in spec.steps.items():
        rels = [rel] if isinstance(rel, str) else list(rel)
        steps[role] = [load_step(root / r, role) for r in rels]
    return Bundle(root=str(root), spec=spec, steps=steps)


# --------------------------------------------------------------------------------------------------------
# Extra evidence and its refinement (pure)
# --------------------------------------------------------------------------------------------------------

class Sig(_M):
    """A signal with where it was seen: ``tag``/``value``/``line`` (:class:`clawprobe.core.probes.openclaw_cli.Signal`),
    ``source`` (``stderr of openclaw memory search``, ``log``, ``tool result``…) and ``at`` (UTC) if known."""

    tag: str
    value: str | None = None
    line: str
    source: str
    at: datetime | None = None


class Extra(_M):
    """Inputs of :func:`refine` beyond the receipt. Every field is optional evidence:

    ``tree`` the redacted config subset; ``status``/``search`` the CLI probes (``openclaw memory status
    --json``, ``memory search TOKEN --json``); ``status_deep`` a ``--deep`` status; ``status_text`` the plain
    status text as ``{key: value}``; ``index_runs`` recorded ``openclaw memory index`` runs; ``doctor``
    ``openclaw doctor`` output; ``log`` the JSON-lines log facts; ``tool_results`` memory_search payloads from
    transcripts (oldest first); ``qmd_status`` a ``qmd status`` text; ``qmd_update_notice`` the count in
    ``qmd update``'s notice; ``outputs`` other recorded commands (``qmd embed``, ``node -e …``); ``explainers``
    why the canary path is not indexed (``(tag, message)``); ``wrong_store_detail`` the managed-vs-default
    store comparison;
    ``builtin_findings`` warnings from the builtin store; ``builtin_tokenizer`` the index identity's FTS
    tokenizer; ``non_regular_files`` symlinks/other non-regular files among the memory sources
    (``path -> target``); ``extra_path_files`` files on disk per configured extra path; ``default_root_files``
    files on disk under MEMORY.md + memory/; ``host`` load and memory; ``node_version`` of the runtime;
    ``canary_token`` the exact token searched (a synthetic value, never a secret); ``old_token_outputs``
    retired canary token → the raw output of a search for it (OpenClaw or direct qmd JSON); ``model_cache``
    the gathered model-cache evidence (:func:`clawprobe.core.probes.models.gather_model_cache`) of the recorded host;
    ``reindex_orphans`` orphaned ``*.memory-reindex-*`` copies next to the builtin store, with their bytes.
    """

    tree: dict = Field(default_factory=dict)
    status: oc.StatusResult | None = None
    search: oc.SearchResult | None = None
    status_deep: oc.StatusResult | None = None
    status_text: dict[str, Any] | None = None
    index_runs: list[Step] = Field(default_factory=list)
    doctor: Step | None = None
    log: oclog.LogFacts | None = None
    tool_results: list[tr.ToolResult] = Field(default_factory=list)
    qmd_status: QmdStatusText | None = None
    qmd_update_notice: int | None = None
    outputs: list[Step] = Field(default_factory=list)
    explainers: list[tuple[str, str]] = Field(default_factory=list)
    wrong_store_detail: str | None = None
    builtin_findings: list[Finding] = Field(default_factory=list)
    builtin_tokenizer: str | None = None
    non_regular_files: list[str] = Field(default_factory=list)
    extra_path_files: dict[str, int] = Field(default_factory=dict)
    default_root_files: int | None = None
    host: HostRecord | None = None
    node_version: str | None = None
    canary_token: str | None = None
    old_token_outputs: dict[str, str] = Field(default_factory=dict)
    model_cache: ModelCacheEvidence | None = None
    reindex_orphans: list[tuple[str, int]] = Field(default_factory=list)


def _sigs_from(text: str, source: str, at: datetime | None = None) -> list[Sig]:
    return [Sig(tag=s.tag, value=s.value, line=s.line, source=source, at=at) for s in oc.error_signals(text)]


def collect_signals(x: Extra) -> list[Sig]:
    """Every known error text in the extra evidence, with its source (pure)."""
    out: list[Sig] = []
    for res, what in ((x.status, "openclaw memory status"), (x.search, "openclaw memory search"),
                      (x.status_deep, "openclaw memory status --deep")):
        if res is None:
            continue
        out += [Sig(tag=s.tag, value=s.value, line=s.line, source=f"stderr of `{what}`") for s in res.stderr.signals]
        if res.error:
            out += _sigs_from(res.error, f"`{what}` JSON error")
    for run in x.index_runs:
        out += _sigs_from(run.output, f"`{run.command or 'openclaw memory index'}` (exit {run.rc})", run.at)
    if x.doctor is not None:
        out += _sigs_from(x.doctor.output, "`openclaw doctor`", x.doctor.at)
    for q in x.outputs:
        out += _sigs_from(q.output, f"`{q.command or q.name}` (exit {q.rc})", q.at)
    if x.log is not None:
        for ev in x.log.signals:
            out += [s.model_copy(update={"source": ev.source or "log"}) for s in _sigs_from(ev.detail, "log", ev.at)]
    for t in x.tool_results:
        out += _sigs_from(t.error or "", "memory_search tool result", t.at)
        if t.fallback_reason:
            out += _sigs_from(f"fallback from {t.fallback_from}: {t.fallback_reason}", "memory_search fallback", t.at)
    if x.host is not None and x.host.kernel_log:
        out += _sigs_from(x.host.kernel_log, "kernel log")
    return out


def _first(sigs: Iterable[Sig], *tags: str) -> Sig | None:
    return next((s for s in sigs if s.tag in tags), None)


def _claim(r: Receipt, tool: str, claim: str, measured: str, finding: bool = False) -> None:
    if not any(c.tool == tool and c.claim == claim for c in r.status_claims):  # refine may run twice
        r.status_claims.append(StatusClaim(tool=tool, claim=claim, measured=measured, agrees=False))
    if finding and not any(f.tag == "status_misreport" and f.message.startswith(claim) for f in r.findings):
        r.findings.append(Finding(tag="status_misreport", source=tool, message=f"{claim} — measured: {measured}"))


def _qmd_configured(r: Receipt) -> bool:
    return r.config.configured_backend == "qmd" and r.openclaw.has_qmd_backend is not False


def _mangled(configured: str, attempted: str) -> bool:
    """A Windows command path that reached spawn without its drive letter/separators (RW08)."""
    if not _WINDOWS_PATH.search(configured) or "\\" in attempted or "/" in attempted:
        return False
    flat = re.sub(r"[\\/:]", "", configured).lower()
    att = re.sub(r"[\\/:]", "", attempted).lower()
    stem = lambda p: re.sub(r"\.(cmd|exe|bat|ps1)$", "", p)
    return bool(att) and (stem(att) in stem(flat) or stem(flat).endswith(stem(att)[-12:]))


def _refine_qmd(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """qmd reachability from signals: transport, a mangled path, a crashing child, a spawn ENOENT."""
    q = r.qmd
    configured = q.command or r.config.qmd_command or "qmd"
    fb_cmds = [f.fallback_command for f in (x.status.stderr if x.status else None,
                                            x.search.stderr if x.search else None) if f and f.fallback_command]
    mcporter = _get(x.tree, "memory", "qmd", "mcporter", "enabled") is True
    transport = _first(sigs, "transport_spawn")
    if mcporter and transport is not None and q.failure is None:
        q.resolves, q.failure = False, "transport_spawn"
        q.failure_detail = (f"memory.qmd.mcporter.enabled is true and the transport cannot be spawned: {transport.line} "
                            f"({transport.source}); direct qmd is not what OpenClaw runs")
    for s in sigs:
        if q.failure is not None:
            break
        attempted = s.value if s.tag == "spawn_enoent" else next(iter(fb_cmds), None) if s.tag == "command_shim" else None
        if attempted and _mangled(configured, attempted):
            q.resolves, q.failure = False, "command_path_mangled"
            q.failure_detail = f"configured {configured!r}; OpenClaw tried to spawn {attempted!r} ({s.source}: {s.line})"
    crash = next((f.crash_signal for f in (x.search.stderr if x.search else None, x.status.stderr if x.status else None)
                  if f and f.crash_signal in _CRASH_SIGNALS), None)
    binding = _first(sigs, "native_binding")
    if q.failure is None and q.store_ok is not False and (crash or binding):
        q.store_ok, q.failure = False, "native_binding"
        q.failure_detail = (f"a qmd child crashed ({crash or binding.line}) while OpenClaw ran it"
                            + (f"; `qmd --version` works ({q.version})" if q.version else "")
                            + " — the native SQLite binding does not match the Node that runs qmd")
    enoent = next((s for s in sigs if s.tag == "spawn_enoent" and s.value and
                   os.path.basename(s.value).startswith("qmd")), None)
    if q.failure is None and q.resolves is None and enoent is not None:
        pathlike = "/" in enoent.value or "\\" in enoent.value
        q.resolves, q.failure = False, "command_missing" if pathlike else "not_on_path"
        q.failure_detail = f"spawn {enoent.value} ENOENT ({enoent.source})"
    entry = x.status.entry(r.agent_id) if x.status else None
    if (q.resolves is False or q.store_ok is False) and entry is not None and entry.backend == "qmd":
        vec = " · vector available" if entry.vector_available else ""
        _claim(r, "openclaw memory status", f"backend qmd{vec} (looks healthy)",
               f"qmd cannot run: {q.failure_detail or q.failure}", finding=True)
    indexed = (x.status_text or {}).get("indexed")
    if (q.resolves is False or q.store_ok is False) and isinstance(indexed, str) and indexed.startswith("0/"):
        _claim(r, "openclaw memory status", f"Indexed: {indexed} (looks like an empty index)",
               f"qmd never ran: {q.failure or 'unavailable'} — not an index to rebuild")


def _served_by_builtin(t: tr.ToolResult) -> bool:
    return t.fallback_from == "qmd" or t.result_shape == "builtin" or t.backend == "builtin" \
        or (t.disabled and t.builtin_provider_error)


def _refine_gateway_backend(r: Receipt, x: Extra) -> None:
    """What the gateway's memory_search really served (transcripts), sticky fallback, wrong engine."""
    b = r.backend
    served = [t for t in x.tool_results if _served_by_builtin(t)]
    if served:
        newest = x.tool_results[-1]
        first = served[0]
        wrong = next((t for t in served if t.builtin_provider_error), None)
        if _served_by_builtin(newest):
            b.effective = "builtin"
        if wrong is not None:
            reason, detail = "wrong_engine", (f"builtin provider errors under backend qmd: {wrong.error}"
                                               " — the builtin engine answers, not QMD")
        elif r.qmd.failure == "transport_spawn":
            reason, detail = "transport_spawn", f"fallback from qmd: {first.fallback_reason}"
        elif first.fallback_reason and "timed out" in first.fallback_reason:
            reason, detail = "timeout", f"fallback from qmd: {first.fallback_reason}"
        else:
            reason = b.fallback_reason or "runtime_error"
            detail = f"memory_search served by builtin ({first.fallback_reason or first.result_shape or 'builtin'})"
        b.fallback_reason = b.fallback_reason if b.fallback_reason and reason == "runtime_error" else reason
        b.fallback_detail = b.fallback_detail or detail
        b.fallback_at = min([t for t in (b.fallback_at, first.at) if t is not None], default=None)
        ev = Evidence(source="memory_search tool results (session transcripts)",
                      detail=f"{len(served)} of {len(x.tool_results)} recorded searches served by builtin", at=newest.at)
        if ev not in b.evidence:
            b.evidence.append(ev)
    since = b.fallback_at
    later = [t for t in served if t.at and since and t.at > since]
    recovered = any(t.at and since and t.at > since and t.result_shape == "qmd" for t in x.tool_results)
    qmd_ok = r.qmd.store_ok is True or r.canary.direct_qmd_found is True
    if b.fallback_reason in ("runtime_error", "timeout") and later and qmd_ok and not recovered:
        b.fallback_reason = "sticky"
        b.fallback_detail = (f"qmd works now (direct probe), but the gateway has served builtin since "
                             f"{since.isoformat(timespec='seconds')} ({len(later)} later searches)")
    if b.fallback_reason in ("runtime_error", "timeout") and b.fallback_detail:
        res = next((s for s in oc.error_signals(b.fallback_detail) if s.tag in _RESOURCE_TAGS), None)
        if res is not None:
            b.fallback_reason = "resource"
            b.fallback_detail = f"QMD died on a resource limit and the gateway switched to builtin: {res.line}"
    if b.effective == "builtin" and r.canary.result_shape == "qmd" and served:
        _claim(r, "openclaw memory search (fresh CLI process)", "answered by qmd",
               "the gateway's own memory_search answers from builtin (transcripts)")


def _fails_closed(x: Extra, sigs: list[Sig]) -> Sig | None:
    """A provider signal while search returned nothing (or the tool said disabled)."""
    provider = _first(sigs, *_PROVIDER_TAGS)
    if provider is None:
        return None
    s = x.search
    failed = s is not None and (s.rc not in (0, None) or s.error is not None or not s.hits)
    disabled = any(t.disabled for t in x.tool_results)
    return provider if failed or disabled else None


def _refine_builtin(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """The builtin engine failing closed, degrading, or unable to sync (RW30–RW40 kinds)."""
    b = r.builtin
    provider = (r.config.provider or "").strip().lower()
    entry = x.status.entry(r.agent_id) if x.status else None

    def unavailable(tag: str, detail: str) -> None:
        if b.unavailable_reason is None:
            b.unavailable_reason, b.unavailable_detail = tag, detail

    if (s := _first(sigs, "runtime_sqlite")) is not None:
        node = x.node_version or (m[1] if (m := _NODE_VERSION.search(s.line)) else None)
        unavailable("runtime", f"the runtime has no node:sqlite{f' (Node {node})' if node else ''}: {s.line} "
                               f"({s.source}); the provider error is a red herring")
    if (s := _first(sigs, "db_malformed")) is not None:
        unavailable("index_corrupt", f"{s.line} ({s.source})")
    locked = next((s for s in sigs if s.tag == "db_locked" and "log" not in s.source), None)
    if locked is not None and x.search is not None and not x.search.hits:
        unavailable("index_locked", f"{locked.line} ({locked.source}): a writer holds the index lock")
    failing = [run for run in x.index_runs if run.rc not in (0, None)]
    cant = next((s for run in failing for s in _sigs_from(run.output, run.command or "memory index")
                 if s.tag == "db_cantopen"), None)
    if cant is not None and (entry is not None or (x.status and x.status.rc == 0)):
        ops = ", ".join(sorted({run.command or "memory index" for run in failing}))
        unavailable("rebuild_failing", f"every index run fails ({ops}): {cant.line}; `memory status` opens the "
                                       f"same DB" + (f" — Node {x.node_version}" if x.node_version else ""))
    fts = _first(sigs, "fts5_missing")
    fts_error = entry.fts_error if entry is not None and entry.fts_available is False else None
    if fts is not None or fts_error:
        vectors = (entry is not None and entry.vector_available is True) or r.config.provider_explicit
        detail = f"keyword search impossible on this runtime: {fts.line if fts else fts_error}"
        if vectors:
            b.degraded_reason = b.degraded_reason or f"fts5_missing: {detail}"
        else:
            unavailable("fts5_missing", detail + " — and no embedding provider is left")
    if (s := _fails_closed(x, sigs)) is not None:
        tag = "local_model" if provider == "local" or s.tag == "local_model" else \
            "explicit_provider" if r.config.provider_explicit else "implicit_provider"
        unavailable(tag, f"{s.line} ({s.source})")
    degraded = _first(sigs, "vector_degraded")
    if degraded is not None and b.fts_only is None and x.search is not None and x.search.hits:
        b.fts_only = True
        b.degraded_reason = b.degraded_reason or degraded.line
    batch = [s for s in sigs if s.tag == "batch_timeout"]
    if batch:
        seconds = batch[0].value
        if entry is not None and entry.files == 0:
            unavailable("embed_timeout", f"nothing indexed: {batch[0].line} ({batch[0].source})")
        else:
            _stale_since(r, batch, "embed_timeout", f"embedding batches time out after {seconds} s"
                         + _unindexed(entry) + " — the provider probe still says ready")
    aborted = [s for s in sigs if s.tag == "not_regular_file"]
    aborted += [Sig(tag="not_regular_file", line=i, source="openclaw memory status (Issues)")
                for i in (x.status_text or {}).get("issues", []) if "regular file" in i]
    if aborted:
        names = ", ".join(x.non_regular_files[:5]) or "not named by OpenClaw (no non-regular file found on disk)"
        _stale_since(r, aborted, "sync_aborted", f"every sync fails: {aborted[0].line}; non-regular memory "
                                                 f"source(s): {names}")
    _builtin_unsynced_canary(r, x, entry)


def _builtin_unsynced_canary(r: Receipt, x: Extra, entry: oc.StatusEntry | None) -> None:
    """Builtin (no collection patterns: every memory file on disk is eligible): status counts fewer indexed
    files than ``scan.totalFiles``, the canary written at ``planted_at`` misses, and no successful index run
    followed it — the index has not caught up since the canary was written (RW16). The store probe's own
    disk-vs-index comparison, when it ran, takes precedence."""
    c = r.canary
    if r.freshness.last_proven_current is not None or c.outcome != "miss" or c.planted_at is None or entry is None:
        return
    if entry.files is None or entry.scan_total_files is None or entry.scan_total_files <= entry.files:
        return
    if any(run.rc == 0 and run.at is not None and run.at > c.planted_at for run in x.index_runs):
        return
    f = r.freshness
    f.last_proven_current, f.stale_reason = c.planted_at, "dirty"
    f.method = (f"canary written {c.planted_at.isoformat(timespec='seconds')} is not searchable and no index ran "
                "since (status: " + f"{entry.files} of {entry.scan_total_files} files indexed)")
    f.unindexed_files = [c.expected_path] if c.expected_path else []
    dirty = (x.status_text or {}).get("dirty")
    f.detail = f"status Dirty: {dirty}" if dirty else None


def _unindexed(entry: oc.StatusEntry | None) -> str:
    if entry is None or entry.files is None or entry.scan_total_files is None:
        return ""
    return f"; {entry.scan_total_files - entry.files} of {entry.scan_total_files} files on disk stay unindexed"


def _stale_since(r: Receipt, failures: list[Sig], reason: str, detail: str) -> None:
    """The index cannot catch up: it was last proven current no later than the first recorded failure."""
    times = [s.at for s in failures if s.at is not None]
    f = r.freshness
    first = min(times) if times else None
    if first is not None and (f.last_proven_current is None or first < f.last_proven_current):
        f.last_proven_current = first
        f.method = f"first failed sync/index at {first.isoformat(timespec='seconds')} (nothing indexed since)"
    f.stale_reason = reason
    f.detail = detail


def _refine_vectors(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Vector readiness: qmd status text, embed time-outs, partial embeds an old qmd hides (RW17–RW22)."""
    if x.model_cache is not None and r.config.search_mode != "search":
        from clawprobe.core import downloads as dl

        report, _ = dl.assess(x.model_cache, r.checked_at)
        r.vectors = dl.apply_to_vectors(r.vectors.model_copy(update={"not_ready_reason": None}
                                                             if r.vectors.not_ready_reason == "model_download" else {}),
                                        report)
    v = r.vectors
    qs = x.qmd_status
    if qs is not None and qs.total is not None:
        v.documents = v.documents if v.documents is not None else qs.total
        v.vector_rows = v.vector_rows if v.vector_rows is not None else qs.vectors
        v.pending = v.pending if v.pending is not None else qs.pending
        v.orphans = v.orphans if v.orphans is not None else qs.orphaned
    expired = _first(sigs, "session_expired")
    if expired is not None or (v.partial_documents and qs is not None and qs.pending == 0):
        v.partial_documents = max(v.partial_documents or 0, 1)
        if v.pending is None:
            v.pending = qs.pending if qs is not None else None
        v.not_ready_reason = "status_misreport"
        skipped = f"embed skipped {expired.value} chunks ({expired.line})" if expired else \
            f"{v.partial_documents} documents have fewer chunks than total_chunks"
        v.detail = f"{skipped}; documents stay partly embedded"
        if qs is not None and qs.pending == 0:
            _claim(r, "qmd status", "Pending: 0 (no Pending line)", skipped + " — partly embedded documents")
    killed = next((f for f in r.findings if f.tag == "stale_embed_lock"), None)
    if killed is not None and (v.pending or v.has_vector_table is False) \
            and v.not_ready_reason in (None, "pending", "no_vector_store", "model_download"):
        v.not_ready_reason = "embed_interrupted"
        note = f"an embed run was killed before it finished ({killed.message})"
        if note not in (v.detail or ""):
            v.detail = note + (f"; {v.detail}" if v.detail else "")
    timeouts = [e for e in (x.log.embed_failures if x.log else []) if "timed out" in e.detail]
    timeouts += [s for s in sigs if s.tag == "search_timeout" and "embed" in s.line and "qmd" in s.line]
    vc_fail = v.pending is None or v.pending > 0 or v.has_vector_table is False
    if timeouts and vc_fail and v.not_ready_reason != "status_misreport":
        t = timeouts[-1]
        v.not_ready_reason = "embed_timeout"
        limit = f" (memory.qmd.update.embedTimeoutMs = {r.config.embed_timeout_s * 1000:.0f} ms)" \
            if r.config.embed_timeout_s else ""
        v.detail = f"embed killed at its timeout{limit}: {t.detail if hasattr(t, 'detail') else t.line}" \
            + (f"; {v.pending} pending" if v.pending else "")
    n = x.qmd_update_notice
    if n is not None and v.pending is not None and n != v.pending:
        _claim(r, "qmd update", f"{n} unique hashes need vectors",
               f"{v.pending} pending for the configured model {v.embed_model or '?'} "
               "(the notice counts against qmd's default model)", finding=v.pending == 0)
    res = [s for s in sigs if s.tag in _RESOURCE_TAGS]
    host = x.host
    embedding_trouble = v.not_ready_reason in ("embed_timeout", "embed_interrupted") or bool(timeouts)
    if embedding_trouble and host is not None and host.cpus and host.loadavg and host.loadavg[0] > 2 * host.cpus:
        res.append(Sig(tag="load", line=f"load {host.loadavg[0]:.1f} on {host.cpus} cores", source="host"))
    if res and not any(f.tag == "resource" for f in r.findings):
        r.findings.append(Finding(tag="resource", source=res[0].source,
                                  message="; ".join(dict.fromkeys(s.line for s in res[:3]))))


def _session_gate(x: Extra, agent_id: str) -> str | None:
    """The first of the four session-recall gates that fails (RW28), or ``None`` when all pass."""
    ms = _get(x.tree, "agents", "defaults", "memorySearch") or _get(x.tree, "memory", "search") or {}
    if _get(ms, "experimental", "sessionMemory") is not True:
        return "experimental.sessionMemory is not true"
    if "sessions" not in (_get(ms, "sources") or []):
        return "sources does not include \"sessions\""
    if _get(x.tree, "memory", "backend") == "qmd" and _get(x.tree, "memory", "qmd", "sessions", "enabled") is not True:
        return "memory.qmd.sessions.enabled is not true (QMD never receives transcripts; off by default)"
    vis = _get(x.tree, "tools", "sessions", "visibility") or "tree"
    if vis == "tree":
        return "tools.sessions.visibility is \"tree\" (default): other sessions' transcripts are hidden"
    return None


def _refine_canary(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Narrow a failed retrieval; turn a found-but-too-slow canary into a timeout (RW13–RW44 kinds)."""
    c = r.canary
    tool_deadline = next((s for s in sigs if s.tag == "search_timeout" and s.source == "memory_search tool result"), None)
    if tool_deadline is not None and c.outcome in ("found", None) and c.latency_s is not None:
        d = _seconds(tool_deadline.value)
        if d is not None and c.latency_s > d:
            c.outcome, c.reason, c.deadline_s = "timeout", "timeout", d
            c.detail = (f"the probe needed {c.latency_s:.1f} s; the agent's memory_search gives up after {d:.0f} s "
                        f"({tool_deadline.line})")
            return
    if c.outcome not in ("miss", "error", "timeout", "wrong_source"):
        return
    search_sigs = [s for s in sigs if "memory search" in s.source or s.source.startswith("memory_search")]
    if c.outcome in ("error", "timeout") and (s := _first(search_sigs, *_RESOURCE_TAGS)) is not None:
        c.reason, c.detail = "resource", f"{s.line} ({s.source})"
        return
    missing = next((s for s in sigs if s.tag == "collection_missing" and s.value
                    and re.match(r"memory-(root|dir)-", s.value)), None)
    if c.outcome in ("miss", "error") and (missing is not None or x.wrong_store_detail):
        c.reason = "wrong_store"
        c.detail = "; ".join(v for v in (missing.line if missing else None, x.wrong_store_detail) if v)
        return
    if c.outcome != "miss" or c.reason not in (None, "miss", "wrong_source"):
        return
    if c.direct_qmd_found:
        c.reason = "search_not_invoked"
        c.detail = ("direct qmd (BM25) with the agent's XDG dirs finds the canary; OpenClaw returns nothing — "
                    + ("an OpenClaw-side retrieval fault, the index is fine" if r.config.search_mode == "search"
                       else f"the index holds it, so the {r.config.search_mode} path (vectors, models) is what misses"))
        return
    if x.explainers:
        c.reason, c.detail = x.explainers[0][0], "; ".join(m for _, m in x.explainers[:2])
        return
    path = c.expected_path or ""
    if path.startswith("sessions/") or path.endswith(".jsonl"):
        gate = _session_gate(x, r.agent_id)
        if gate:
            c.reason, c.detail = "sessions_export", f"session canary {path} not recalled: {gate}"
            return
    dropped = _dropped_extra_paths(r, x)
    if dropped:
        c.reason, c.detail = "extrapaths_dropped", dropped
        return
    if r.builtin.degraded_reason and r.builtin.degraded_reason.startswith("fts5_missing"):
        c.reason, c.detail = "fts5_missing", r.builtin.degraded_reason
        return
    if _CJK.search(x.canary_token or ""):
        engine = "builtin" if r.config.configured_backend != "qmd" else "qmd"
        how = (f"the FTS tokenizer is {x.builtin_tokenizer or 'unknown'} and this build's query planner matches the "
               "whole CJK run as one exact phrase") if engine == "builtin" else \
            "QMD's keyword index does not segment CJK text (newer qmd normalises it)"
        c.reason, c.detail = "cjk", f"a CJK canary missed: {how}"


def _seconds(value: str | None) -> float | None:
    m = re.match(r"(\d+(?:\.\d+)?)\s*(ms|s)?", value or "")
    if not m:
        return None
    return float(m[1]) / (1000.0 if m[2] == "ms" else 1.0)


def _dropped_extra_paths(r: Receipt, x: Extra) -> str | None:
    """Extra paths with files on disk that the index does not hold although the default roots are all in it."""
    entry = x.status.entry(r.agent_id) if x.status else None
    if entry is None or entry.files is None or x.default_root_files is None or not x.extra_path_files:
        return None
    with_files = {p: n for p, n in x.extra_path_files.items() if n > 0}
    if not with_files or entry.files > x.default_root_files:
        return None
    listed = ", ".join(f"{p} (0 of {n} indexed)" for p, n in with_files.items())
    return (f"the index holds {entry.files} files = the {x.default_root_files} under MEMORY.md + memory/; extra "
            f"paths with 0 indexed files: {listed}")


def _refine_claims(r: Receipt, x: Extra, sigs: list[Sig]) -> None:
    """Status texts that disagree with the probe (healthy-with-misreport kinds, RW16/21/34/41/42)."""
    found = r.canary.outcome == "found"
    text = x.status_text or {}
    deep = x.status_deep.entry(r.agent_id) if x.status_deep else None
    entry = x.status.entry(r.agent_id) if x.status else None
    if r.config.configured_backend == "qmd" and r.config.search_mode == "search":
        emb = str(text.get("embeddings") or "")
        bad = (deep is not None and deep.embedding_ok is False) or emb.startswith("unavailable")
        if bad:
            said = f"Embeddings: {emb}" if emb else f"embeddingProbe.ok false ({deep.embedding_error})"
            _claim(r, "openclaw memory status --deep", said,
                   "searchMode search (BM25) needs no vectors — vectors not required in search mode", finding=found)
    vec = str(text.get("vector") or text.get("vector store") or "")
    if vec.startswith("unknown") or "unprobed" in vec:
        measured = "canary found through OpenClaw" + ("; --deep says ready" if deep and deep.embedding_ok else "")
        _claim(r, "openclaw memory status", f"Vector: {vec}", measured + " — 'unknown' means not probed",
               finding=found)
    doctor = _first([s for s in sigs if s.source == "`openclaw doctor`"], "provider_missing")
    if doctor is not None and r.config.configured_backend == "qmd" and r.backend.effective != "builtin":
        _claim(r, "openclaw doctor", doctor.line, "QMD is the effective backend: builtin provider rules do not apply",
               finding=found)
    dirty = text.get("dirty") or (entry.dirty if entry is not None and entry.backend == "builtin" else None)
    if dirty in ("yes", True) and r.freshness.unindexed_files == [] and found:
        _claim(r, "openclaw memory status", "Dirty: yes", "disk matches the index (in status mode Dirty may only "
                                                          "mean 'never indexed')")
    if entry is not None and entry.index_identity == "mismatched" and found:
        _claim(r, "openclaw memory status --json", f"indexIdentity mismatched ({entry.index_identity_reason})",
               "keyword search returns the canary; semantic vectors are paused")


def refine(r: Receipt, x: Extra) -> Receipt:
    """Narrow ``r`` with the extra evidence ``x`` (pure; returns a new receipt). Never sets a verdict: it
    fills the receipt fields the rules read (``qmd``, ``backend``, ``builtin``, ``freshness``, ``vectors``,
    ``canary``), and records every disagreement between a tool's own status and the probe in
    ``status_claims`` (plus a ``status_misreport`` finding where the verdict stays healthy)."""
    out = r.model_copy(deep=True)
    sigs = collect_signals(x)
    if out.config.error is not None:
        return out
    if _qmd_configured(out):
        _refine_qmd(out, x, sigs)
        _refine_gateway_backend(out, x)
        _refine_vectors(out, x, sigs)
    elif out.config.configured_backend != "qmd":
        _refine_builtin(out, x, sigs)
        _refine_vectors(out, x, [s for s in sigs if s.tag in _RESOURCE_TAGS])
    if out.freshness.last_proven_current is None and out.canary.outcome == "found" and out.canary.planted_at:
        out.freshness.last_proven_current = out.canary.planted_at
        out.freshness.method = (f"canary planted {out.canary.planted_at.isoformat(timespec='seconds')} came back "
                                "through OpenClaw (the index is current at least as of then)")
    if x.old_token_outputs:
        from clawprobe.core.canary import old_token_found

        out.canary.old_token_found = old_token_found(x.old_token_outputs)
    if out.canary.old_token_found and (out.freshness.unindexed_files or out.freshness.ghost_files):
        out.freshness.stale_reason = "ghost_content"
        note = "a retired canary token is still found"
        if note not in (out.freshness.detail or ""):
            out.freshness.detail = f"{note}; {out.freshness.detail}" if out.freshness.detail else note
    _refine_canary(out, x, sigs)
    _refine_claims(out, x, sigs)
    for f in x.builtin_findings:
        if not any(g.tag == f.tag and g.message == f.message for g in out.findings):
            out.findings.append(f)
    out.ledger = ledger.build(out, log=x.log, runs=ledger_runs(x),
                              tool_errors=[(t.error, t.at) for t in x.tool_results if t.error])
    ledger.refine_kinds(out, status=x.status, search=x.search, status_text=x.status_text, log=x.log,
                        tool_results=x.tool_results, orphans=x.reindex_orphans,
                        index_ok_at=[run.at for run in x.index_runs if run.rc == 0 and run.at is not None])
    return out


def ledger_runs(x: Extra) -> list[ledger.CliRun]:
    """The CLI calls of ``x`` as :class:`clawprobe.core.ledger.CliRun` (``openclaw doctor`` is advice, not
    evidence: its claims go to ``status_claims``)."""
    runs: list[ledger.CliRun] = []
    for res, what in ((x.status, "openclaw memory status"), (x.search, "openclaw memory search"),
                      (x.status_deep, "openclaw memory status --deep")):
        if res is not None:
            lines = tuple(res.stderr.lines) + tuple(res.stdout_noise) \
                + ((res.error,) if res.error and res.error not in res.stderr.lines else ())
            runs.append(ledger.CliRun(command=what, rc=res.rc, lines=lines, timed_out=res.timed_out))
    for st in [*x.index_runs, *x.outputs]:
        lines = tuple(ln.strip() for ln in st.output.splitlines() if ln.strip())[:200]
        runs.append(ledger.CliRun(command=st.command or st.name, rc=st.rc, lines=lines, timed_out=st.timed_out,
                                  at=st.at))
    return runs


# --------------------------------------------------------------------------------------------------------
# Workspace helpers (GATHER: lstat/scandir only, bounded, never follow symlinks)
# --------------------------------------------------------------------------------------------------------

def non_regular_files(workspace: str | None, extra_paths: Iterable[str] = ()) -> list[str]:
    """Non-regular files among the memory sources (root ``*.md``, ``memory/**``, extra paths) as
    ``"rel -> target"`` (symlinks) or ``"rel (not a regular file)"``; at most 20, bounded scan."""
    if not workspace or not os.path.isdir(workspace):
        return []
    out: list[str] = []
    seen = 0

    def note(p: str) -> None:
        rel = os.path.relpath(p, workspace)
        try:
            st = os.lstat(p)
        except OSError:
            return
        if stat_mod.S_ISLNK(st.st_mode):
            try:
                out.append(f"{rel} -> {os.readlink(p)}")
            except OSError:
                out.append(f"{rel} -> ?")
        elif not (stat_mod.S_ISREG(st.st_mode) or stat_mod.S_ISDIR(st.st_mode)):
            out.append(f"{rel} (not a regular file)")

    with os.scandir(workspace) as it:
        for e in it:
            if e.name.lower().endswith(".md") or e.name == "memory":
                note(e.path)
    stack = [os.path.join(workspace, "memory")] + [p if os.path.isabs(p) else os.path.join(workspace, p)
                                                  for p in extra_paths]
    while stack and seen < MAX_SCAN_ENTRIES and len(out) < 20:
        d = stack.pop()
        if os.path.islink(d) or not os.path.isdir(d):
            continue
        try:
            with os.scandir(d) as it:
                for e in it:
                    seen += 1
                    if e.is_symlink() or not (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False)):
                        note(e.path)
                    elif e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return list(dict.fromkeys(out))[:20]


def extra_path_counts(workspace: str, extra_paths: Iterable[str], home: str | None) -> tuple[int, dict[str, int]]:
    """(files the builtin engine would index under MEMORY.md + memory/, {extra path: its files}) — the
    builtin scanner's own rules (:func:`clawprobe.core.probes.workspace.scan_builtin`)."""
    from clawprobe.core.probes.workspace import scan_builtin

    base = len(scan_builtin(workspace, [], home=home, max_files=MAX_SCAN_ENTRIES).files)
    out = {}
    for p in extra_paths:
        out[p] = max(0, len(scan_builtin(workspace, [p], home=home, max_files=MAX_SCAN_ENTRIES).files) - base)
    return base, out


def explain_canary(expected_path: str, workspace: str, engine: str, agent_id: str, extra_paths: Iterable[str],
                   state_dir: str | None = None) -> list[tuple[str, str]]:
    """Why the canary path would not be indexed (:func:`clawprobe.core.probes.workspace.explain_path` with the agent's
    collections — ``index.yml`` when present, else OpenClaw's defaults), as ``(tag, message)``."""
    from clawprobe.core.probes import qmd_index as qi
    from clawprobe.core.probes import workspace as wsm

    cols = []
    if engine == "qmd":
        if state_dir:
            cols = qi.read_qmd_yml(qi.qmd_paths(state_dir, agent_id).yml).collections
        cols = cols or wsm.default_qmd_collections(agent_id, workspace)
    found = wsm.explain_path(expected_path, workspace, engine="qmd" if engine == "qmd" else "builtin",
                             collections=cols, extra_paths=list(extra_paths))
    return [(e.tag, e.message) for e in found if e.tag != "missing"]


# --------------------------------------------------------------------------------------------------------
# Assembly of a bundle
# --------------------------------------------------------------------------------------------------------

def _proc(step: Step | None, argv: list[str]) -> ProcResult | None:
    if step is None:
        return None
    rc = step.rc if step.rc is not None else 0
    return ProcResult(argv=argv, rc=rc, stdout=step.stdout, stderr=step.stderr, seconds=step.seconds or 0.0,
                      timed_out=step.timed_out, killed=step.timed_out, signal=-rc if rc < 0 else None)


def _qmd_evidence(b: Bundle) -> qb.QmdBinaryEvidence:
    raw = dict(b.spec.qmd_binary or {})
    cmd = str(raw.get("resolved_path") or raw.get("command") or "qmd")
    version = _proc(b.step(raw.pop("version")) if raw.get("version") else None, [cmd, "--version"])
    store = _proc(b.step(raw.pop("store")) if raw.get("store") else None, [cmd, *qb.STORE_ARGS])
    raw.pop("version", None)
    raw.pop("store", None)
    try:
        return qb.QmdBinaryEvidence.model_validate({**raw, "version": version, "store": store})
    except ValidationError as e:
        raise BundleError(f"{b.root}/bundle.json qmd_binary: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None


def direct_from_output(step: Step, token: str, expected_path: str) -> orchestrator.DirectQmd:
    """The direct ``qmd search TOKEN --json`` cross-check (agent XDG dirs) from its raw output (pure)."""
    results, err = parse_results(step.stdout)
    hits = token_hits(results or [], token)
    files = [str(h.get("file") or h.get("path")) for h in results or []]
    found = expected_path in [result_path(h) for h in hits]
    last = (step.stderr.strip().splitlines() or [err or f"exit {step.rc}"])[-1]
    return orchestrator.DirectQmd(rc=step.rc or 0, seconds=step.seconds or 0.0, found=found, files=files[:10],
                                  error=None if (step.rc or 0) == 0 and err is None else last[:300])


def _tool_results(paths: Iterable[str]) -> list[tr.ToolResult]:
    out: list[tr.ToolResult] = []
    for p in paths:
        out += tr.parse_lines(oclog.tail_file(p, 2 * 1024 * 1024)[-MAX_TRANSCRIPT_LINES:])
    return sorted(out, key=lambda t: t.at or datetime.min.replace(tzinfo=UTC))


def _model_cache(b: Bundle) -> ModelCacheEvidence | None:
    p = b.path(b.spec.model_cache)
    if not p:
        return None
    try:
        return ModelCacheEvidence.model_validate_json(_read_text(Path(p)))
    except (OSError, ValidationError) as e:
        raise BundleError(f"{p}: not model-cache evidence ({type(e).__name__})") from None


def _orphans(state_dir: str, agent_id: str) -> list[tuple[str, int]]:
    from clawprobe.core.probes.builtin_index import reindex_orphans

    return reindex_orphans(state_dir, agent_id)


def assemble(b: Bundle) -> Receipt:
    """A receipt from a recorded bundle through the live probes' interpret functions, then :func:`refine`.

    Order as in :func:`clawprobe.core.probe.fast`: config (read from the recorded file) → gateway (recorded process or
    the service file in ``home/``, with the recorded log) → lease → qmd binary evidence → log merge → the
    recorded CLI probes (``SlowEvidence``) → refinement. ``checked_at`` is the recorded check time.
    """
    r, extra = assemble_parts(b)
    return r if extra is None else refine(r, extra)


def assemble_parts(b: Bundle) -> tuple[Receipt, Extra | None]:
    """:func:`assemble` before the refinement: (receipt, its :class:`Extra`); ``Extra`` is ``None`` when the
    config does not load (nothing else is interpreted then)."""
    spec = b.spec
    aid = normalize_agent_id(spec.agent_id)
    at = spec.checked_at
    version = oc.parse_version(spec.version_output or f"OpenClaw {spec.era}")
    env = {"HOME": b.home, "PATH": "/usr/bin:/bin", **spec.env}
    cfg = b.path(spec.config)
    snap = read_config(cfg, env, b.state_dir) if cfg else ConfigSnapshot(path=os.path.join(b.state_dir, "openclaw.json"),
                                                                          exists=False)
    ws = b.path(spec.workspace) if spec.workspace and not os.path.isabs(spec.workspace) else spec.workspace
    r = Receipt(agent_id=aid, checked_at=at)
    r.openclaw = OpenClawFacts(version=version, has_qmd_backend=has_qmd_backend(version),
                               node_version=spec.runtime.get("node"))
    r.config = config_facts(snap, aid, version, ws)
    log = oclog.read_log([p for p in [b.path(spec.log)] if p], aid)
    settings = memory_settings(snap.tree, aid) if snap.error is None else None
    if spec.gateway is not None:
        g = spec.gateway
        procs = [gw.GatewayProcess(pid=g.pid or 0, started_at=g.started_at, exe=g.exe,
                                   node_dir=os.path.dirname(g.exe) if g.exe and "node" in os.path.basename(g.exe) else None,
                                   env=gw.safe_env({"PATH": g.path or "", "HOME": b.home}))] if g.source == "process" else []
        service = gw.service_env(b.home, b.state_dir) if g.source in ("systemd", "launchd") else None
        gev = gw.GatewayEvidence(state_dir=b.state_dir, processes=procs, service=service, shell_env=gw.safe_env(env),
                                 reload_mode=settings.reload_mode if settings else None, log=log)
        r.gateway = gw.interpret(gev)
        if r.gateway.drift:
            r.backend.evidence.append(Evidence(source="gateway log", detail=gw.drift_detail(gev) or "config not applied"))
    if settings is None or r.config.error is not None:
        return r, None
    r.lease = lease_for(settings, log.normal_update_s(), "log: median qmd sync durationMs") \
        if settings.configured_backend == "qmd" else Lease(interval_s=settings.update_interval_s,
                                                           interval_source="builtin: watcher/on-search sync")
    if settings.configured_backend == "qmd" and r.openclaw.has_qmd_backend is not False and spec.qmd_binary:
        r.qmd = qb.interpret(_qmd_evidence(b))
        r.qmd.command = redact_text(settings.qmd_command_raw or settings.qmd_command)
    orchestrator._merge_log(r, log, aid)
    c = spec.canary
    cspec = orchestrator.CanarySpec(token=c.token, expected_path=c.expected_path, content_sha256=c.content_sha256,
                                    planted_at=c.planted_at) if c else None
    st, se, di = b.step("status"), b.step("search"), b.step("direct")
    status = oc.parse_status(st.stdout, st.stderr, st.rc, st.seconds, st.timed_out) if st else None
    search = oc.parse_search(se.stdout, se.stderr, se.rc, se.seconds, se.timed_out) if se else None
    direct = direct_from_output(di, c.token, c.expected_path) if di and c else None
    if status or search or direct:
        slow_ev = orchestrator.SlowEvidence(taken_at=at, agent_id=aid, env_source=r.gateway.env_source,
                                            status=status, canary=cspec, search=search, direct=direct)
        orchestrator._merge_slow(r, slow_ev, settings.search_mode, at)
    old = b.step("old_search")
    engine = "qmd" if settings.configured_backend == "qmd" else "builtin"
    ws_ok = bool(ws and os.path.isdir(ws))
    explainers = explain_canary(c.expected_path, ws, engine, aid, settings.extra_paths) \
        if c and ws_ok and r.canary.outcome == "miss" else []
    base, extras = extra_path_counts(ws, settings.extra_paths, b.home) if ws_ok and settings.extra_paths else (None, {})
    text = b.step("status_text")
    qs, qu, deep, doctor = b.step("qmd_status"), b.step("qmd_update"), b.step("status_deep"), b.step("doctor")
    host = spec.host.model_copy(update={"kernel_log": _read_text(Path(b.path(spec.host.kernel_log)))}) \
        if spec.host and spec.host.kernel_log else spec.host
    extra = Extra(
        tree=snap.tree, status=status, search=search,
        status_deep=oc.parse_status(deep.stdout, deep.stderr, deep.rc, deep.seconds) if deep else None,
        status_text=oc.parse_status_text(text.stdout) if text else None,
        index_runs=b.steps.get("index", []), doctor=doctor, log=log,
        tool_results=_tool_results([b.path(t) for t in spec.transcripts]),
        qmd_status=parse_qmd_status_text(qs.stdout) if qs else None,
        qmd_update_notice=update_notice_count(qu.output) if qu else None,
        outputs=b.steps.get("outputs", []), explainers=explainers,
        non_regular_files=non_regular_files(ws, settings.extra_paths) if ws_ok and engine == "builtin" else [],
        extra_path_files=extras, default_root_files=base, host=host, node_version=spec.runtime.get("node"),
        builtin_tokenizer=spec.runtime.get("fts_tokenizer"), canary_token=c.token if c else None,
        reindex_orphans=_orphans(b.state_dir, aid) if engine == "builtin" else [],
        old_token_outputs={t: old.stdout for t in c.old_tokens} if c and old else {},
        model_cache=_model_cache(b),
    )
    return r, extra


def assemble_dir(path: str | os.PathLike[str]) -> Receipt:
    """:func:`load_bundle` then :func:`assemble`."""
    return assemble(load_bundle(path))


# --------------------------------------------------------------------------------------------------------
# Live: gather the same extra evidence for a receipt the orchestrator made
# --------------------------------------------------------------------------------------------------------

def host_facts() -> HostRecord:
    """CPU count, load average and memory of this host (source: ``os``, ``/proc/meminfo``)."""
    h = HostRecord(cpus=os.cpu_count())
    try:
        h.loadavg = list(os.getloadavg())
    except OSError:
        pass
    try:
        info = dict(line.split(":", 1) for line in _read_text(Path("/proc/meminfo"), 8192).splitlines() if ":" in line)
        h.mem_total_bytes = int(info["MemTotal"].split()[0]) * 1024
        h.mem_available_bytes = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        pass
    return h


def gather_extra(ctx: orchestrator.ProbeContext, agent_id: str, receipt: Receipt,
                 slow_ev: orchestrator.SlowEvidence | None, now: datetime | None = None, *,
                 index_facts: Any = None, log: oclog.LogFacts | None = None) -> Extra:
    """GATHER for a live receipt: the log facts, the agent's session transcripts (newest 3 files, tail),
    path explainers for a missed canary, the managed-vs-default QMD store, the builtin store's findings,
    non-regular memory sources and extra-path counts, host load. Read-only; bounded. ``index_facts`` are the
    QMD or builtin index facts the fast probe already read, ``log`` the log facts it read (``None``: read
    them here)."""
    from clawprobe.core.locate import default_log_file
    from clawprobe.core.probes import builtin_index as bi
    from clawprobe.core.probes import qmd_index as qi
    from clawprobe.core.probes.config import log_file_for

    at = now or receipt.checked_at
    aid = normalize_agent_id(agent_id)
    x = Extra(tree=ctx.config.tree if ctx.config.error is None else {}, host=host_facts())
    if ctx.config.error is not None:
        return x
    s = memory_settings(ctx.config.tree, aid)
    if slow_ev is not None:
        x.status, x.search = slow_ev.status, slow_ev.search
        x.canary_token = slow_ev.canary.token if slow_ev.canary else None
    if log is not None:
        x.log = log
    else:
        lf = log_file_for(ctx.config, ctx.env)
        x.log = oclog.read_log(oclog.log_files(lf, at, lambda d: default_log_file(d, ctx.env)), aid,
                               scope=orchestrator.log_scope(ctx, aid))
    sessions = Path(ctx.state_dir.path) / "agents" / aid / "sessions"
    if sessions.is_dir():
        files = sorted(sessions.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-3:]
        x.tool_results = _tool_results(str(p) for p in files)
    ws = receipt.config.workspace
    ws_ok = bool(ws and os.path.isdir(ws))
    engine = "qmd" if s.configured_backend == "qmd" else "builtin"
    c = receipt.canary
    if ws_ok and c.outcome == "miss" and c.expected_path:
        x.explainers = explain_canary(c.expected_path, ws, engine, aid, s.extra_paths, ctx.state_dir.path)
    if engine == "qmd":
        facts = index_facts if isinstance(index_facts, qi.QmdIndexFacts) \
            else qi.read_qmd_index(qi.qmd_paths(ctx.state_dir.path, aid))
        if facts.open.state != "missing" and facts.missing_managed:
            default = qi.default_store_path(ctx.env)
            summary = qi.read_store_summary(default) if default and os.path.isfile(default) else None
            x.wrong_store_detail = qi.wrong_store_detail(facts, summary)
    else:
        facts_b = index_facts if isinstance(index_facts, bi.BuiltinIndexFacts) \
            else bi.read_builtin_index(ctx.state_dir.path, aid)
        x.builtin_findings = bi.builtin_findings(facts_b)
        x.builtin_tokenizer = facts_b.meta.fts_tokenizer if facts_b.meta else None
        x.reindex_orphans = bi.reindex_orphans(ctx.state_dir.path, aid)
        if ws_ok:
            x.non_regular_files = non_regular_files(ws, s.extra_paths)
            if s.extra_paths and c.outcome == "miss":
                x.default_root_files, x.extra_path_files = extra_path_counts(ws, s.extra_paths, ctx.env.get("HOME"))
    return x


def refine_live(ctx: orchestrator.ProbeContext, agent_id: str, receipt: Receipt,
                slow_ev: orchestrator.SlowEvidence | None = None, now: datetime | None = None, *,
                index_facts: Any = None, log: oclog.LogFacts | None = None) -> Receipt:
    """:func:`gather_extra` then :func:`refine` for a receipt from :func:`clawprobe.core.probe.fast`/``collect``.
    Never raises: a failure is added to ``probe_errors`` and the receipt is returned unrefined."""
    try:
        return refine(receipt, gather_extra(ctx, agent_id, receipt, slow_ev, now, index_facts=index_facts, log=log))
    except Exception as e:  # a refinement bug must not turn into a traceback
        out = receipt.model_copy(deep=True)
        out.probe_errors.append(f"refinement failed: {type(e).__name__}: {e}")
        return out


__all__ = ["Bundle", "BundleError", "BundleSpec", "Extra", "Sig", "Step", "assemble", "assemble_dir", "assemble_parts",
           "collect_signals", "direct_from_output", "explain_canary", "extra_path_counts", "gather_extra",
           "host_facts", "load_bundle", "load_step", "non_regular_files", "refine", "refine_live"]
