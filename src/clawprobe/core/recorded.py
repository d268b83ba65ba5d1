"""Recorded evidence: a bundle directory of raw program outputs loaded into the one
:class:`~clawprobe.core.evidence.Evidence` model, then the same :func:`clawprobe.core.interpret.interpret`
the live probe uses (GATHER only: nothing in here decides a receipt field).

A bundle directory holds one file per raw output a real program printed — for failures that cannot exist on
this machine (Windows, macOS/launchd, GPU, remote providers, old builds, a live chat turn). Layout (paths
relative to the bundle; every part optional)::

    bundle.json                    era/version, agent id, check time, gateway env source, canary, host,
                                   and which step dir / file is which (``steps``, ``sources``)
    home/.openclaw/openclaw.json   the config text, exactly as written (JSON5)
    home/.openclaw/workspace/…     memory files as they were (symlinks kept)
    home/.openclaw/agents/<id>/sessions/*.jsonl   transcripts with memory_search toolResult records
    home/.config/systemd/user/openclaw-gateway.service, home/Library/LaunchAgents/ai.openclaw.gateway.plist
    etc/systemd/system/openclaw-gateway.service   a system unit (run as its User=)
    logs/openclaw.log              tslog JSON lines (``{"0":"{\\"subsystem\\":\\"memory\\"}","1":"…","_meta":{…}}``)
    steps/<name>/                  one command each: stdout.json|stdout.txt, stderr.txt, meta.json
                                   (``command``, ``rc``, ``seconds``, ``timed_out``, ``at``) — the layout of
                                   tests/data/recorded, so those real recordings can be referenced too

:func:`load_bundle` reads the directory, :func:`evidence_of` turns it into :class:`Evidence` (the programs'
outputs through the live probes' own parsers), :func:`assemble` interprets it.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawprobe.core import memory_sources as msrc
from clawprobe.core.evidence import CanarySpec, DirectQmd, Evidence, Extra, HostRecord, SlowEvidence, Step
from clawprobe.core.interpret import interpret, interpret_parts
from clawprobe.core.interpret.canary import direct_of_run
from clawprobe.core.locate import normalize_agent_id
from clawprobe.core.probes import gateway as gw
from clawprobe.core.probes import openclaw_cli as oc
from clawprobe.core.probes import openclaw_log as oclog
from clawprobe.core.probes import qmd_binary as qb
from clawprobe.core.probes.builtin_index import reindex_orphans
from clawprobe.core.probes.config import ConfigSnapshot, memory_settings, read_config
from clawprobe.core.probes.models import ModelCacheEvidence
from clawprobe.core.probes.note_scripts import note_scripts
from clawprobe.core.probes.qmd_index import parse_qmd_status_text, update_notice_count
from clawprobe.core.receipt import Receipt
from clawprobe.core.runrecord import RunRecord, argv_of, record

MAX_STEP_CHARS = 4 * 1024 * 1024


class BundleError(Exception):
    """An evidence bundle that cannot be used; ``str()`` names the bundle and the reason."""


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------------------------------------
# Bundle files
# --------------------------------------------------------------------------------------------------------

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


class BundleSpec(_M):
    """``bundle.json``. ``era`` is the OpenClaw version (CalVer); ``version_output`` the raw
    ``openclaw --version`` stdout when recorded. ``steps`` maps a role to its step dir(s): ``status``,
    ``status_deep``, ``status_text``, ``validate``, ``search``, ``old_search``, ``direct``, ``index`` (list), ``doctor``,
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


def _proc(step: Step | None, argv: list[str]) -> RunRecord | None:
    return run_of_step(step, argv) if step is not None else None


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


def run_of_step(step: Step, default_argv: list[str], keep: tuple[str, ...] = ()) -> RunRecord:
    """A recorded step as the run record the live probe keeps (:func:`clawprobe.core.runrecord.record`:
    redacted, ≤ 64 KiB a stream); ``argv`` from the step's ``command`` (else ``default_argv``); a recording
    that names no exit code counts as exit 0, a negative one as that signal."""
    rc = step.rc if step.rc is not None else 0
    return record(argv_of(step.command, default_argv), rc, step.stdout, step.stderr, seconds=step.seconds,
                  timed_out=step.timed_out, keep=keep, reason=f"timed out after {step.seconds:g} s (process tree killed)"
                  if step.timed_out and step.seconds else None)


def direct_from_output(step: Step, token: str, expected_path: str) -> DirectQmd:
    """The direct ``qmd search TOKEN --json`` cross-check from a recorded step (its run record through
    :func:`clawprobe.core.interpret.canary.direct_of_run`, the parse interpret uses)."""
    return direct_of_run(run_of_step(step, ["qmd", "search", token, "--json"], (token,)), token, expected_path)


def _model_cache(b: Bundle) -> ModelCacheEvidence | None:
    p = b.path(b.spec.model_cache)
    if not p:
        return None
    try:
        return ModelCacheEvidence.model_validate_json(_read_text(Path(p)))
    except (OSError, ValidationError) as e:
        raise BundleError(f"{p}: not model-cache evidence ({type(e).__name__})") from None




def evidence_of(b: Bundle) -> Evidence:
    """GATHER from a recorded bundle: the :class:`~clawprobe.core.evidence.Evidence` of its check — the config
    read from the recorded file, the gateway (recorded process or the service file in ``home/``), the recorded
    log (the install's own: ``log_attribution="own"``), the qmd binary evidence, the recorded CLI probes, and
    the extra outputs (deep/text status, index runs, doctor, transcripts, qmd status/update, host, path
    explainers). ``checked_at`` is the recorded check time. Raises :class:`BundleError` for unusable parts."""
    spec = b.spec
    aid = normalize_agent_id(spec.agent_id)
    at = spec.checked_at
    version = oc.parse_version(spec.version_output or f"OpenClaw {spec.era}")
    env = {"HOME": b.home, "PATH": "/usr/bin:/bin", **spec.env}
    cfg = b.path(spec.config)
    snap = read_config(cfg, env, b.state_dir) if cfg else ConfigSnapshot(path=os.path.join(b.state_dir, "openclaw.json"),
                                                                          exists=False)
    snap.mtime = None  # a checkout's file times are not recorded evidence (bundles must not depend on them)
    ws = b.path(spec.workspace) if spec.workspace and not os.path.isabs(spec.workspace) else spec.workspace
    log = oclog.read_log([p for p in [b.path(spec.log)] if p], aid)
    settings = memory_settings(snap.tree, aid) if snap.error is None else None
    ev = Evidence(agent_id=aid, checked_at=at, origin="bundle", openclaw_version=version,
                  node_version=spec.runtime.get("node"), config=snap, workspace=ws, log=log, log_attribution="own")
    if spec.gateway is not None:
        g = spec.gateway
        procs = [gw.GatewayProcess(pid=g.pid or 0, started_at=g.started_at, exe=g.exe,
                                   node_dir=os.path.dirname(g.exe) if g.exe and "node" in os.path.basename(g.exe) else None,
                                   env=gw.safe_env({"PATH": g.path or "", "HOME": b.home}))] if g.source == "process" else []
        service = gw.service_env(b.home, b.state_dir, [os.path.join(b.root, "etc", "systemd", "system")]) \
            if g.source in ("systemd", "launchd") else None  # the recorded host's system units, never this one's
        ev.gateway = gw.GatewayEvidence(state_dir=b.state_dir, processes=procs, service=service,
                                        shell_env=gw.safe_env(env), reload_mode=settings.reload_mode if settings else None)
    if settings is None:
        return ev
    if settings.configured_backend == "qmd" and spec.qmd_binary:
        ev.qmd_binary = _qmd_evidence(b)
    ev.model_cache = _model_cache(b)
    c = spec.canary
    cspec = CanarySpec(token=c.token, expected_path=c.expected_path, content_sha256=c.content_sha256,
                       planted_at=c.planted_at) if c else None
    st, va, se, di = b.step("status"), b.step("validate"), b.step("search"), b.step("direct")
    cli = ["openclaw"]
    if st or se or (di and c):
        ev.slow = SlowEvidence(
            taken_at=at, agent_id=aid, canary=cspec,
            status_run=run_of_step(st, [*cli, "memory", "status", "--json", "--agent", aid]) if st else None,
            validate_run=run_of_step(va, [*cli, "config", "validate", "--json"]) if st and va else None,
            search_run=run_of_step(se, [*cli, "memory", "search", c.token if c else "", "--json", "--agent", aid],
                                   (c.token,) if c else ()) if se else None,
            direct_run=run_of_step(di, ["qmd", "search", c.token, "--json"], (c.token,)) if di and c else None)
    old = b.step("old_search")
    engine = "qmd" if settings.configured_backend == "qmd" else "builtin"
    ws_ok = bool(ws and os.path.isdir(ws))
    explainers = msrc.explain_canary(c.expected_path, ws, engine, aid, settings.extra_paths, home=b.home) \
        if c and ws and ws_ok else []
    base, extras = msrc.extra_path_counts(ws, settings.extra_paths, b.home) if ws and ws_ok and settings.extra_paths \
        else (None, {})
    text = b.step("status_text")
    qs, qu, deep, doctor = b.step("qmd_status"), b.step("qmd_update"), b.step("status_deep"), b.step("doctor")
    host = spec.host.model_copy(update={"kernel_log": _read_text(Path(b.path(spec.host.kernel_log) or ""))}) \
        if spec.host and spec.host.kernel_log else spec.host
    binary: list[str] = []
    ev.extra = Extra(
        status_deep_run=run_of_step(deep, ["openclaw", "memory", "status", "--deep", "--json", "--agent", aid])
        if deep else None,
        status_text_run=run_of_step(text, ["openclaw", "memory", "status", "--agent", aid]) if text else None,
        index_runs=b.steps.get("index", []), doctor=doctor,
        tool_results=msrc.tool_results([p for p in (b.path(t) for t in spec.transcripts) if p]),
        qmd_status=parse_qmd_status_text(qs.stdout) if qs else None,
        qmd_update_notice=update_notice_count(qu.output) if qu else None,
        outputs=b.steps.get("outputs", []), explainers=explainers,
        non_regular_files=msrc.non_regular_files(ws, settings.extra_paths) if ws_ok and engine == "builtin" else [],
        extra_path_files=extras, default_root_files=base, host=host, node_version=spec.runtime.get("node"),
        builtin_tokenizer=spec.runtime.get("fts_tokenizer"),
        reindex_orphans=reindex_orphans(b.state_dir, aid) if engine == "builtin" else [],
        note_scripts=note_scripts(ws, settings.extra_paths, binary=binary) if ws and ws_ok and engine == "builtin"
        else None, binary_notes=binary,
        old_token_outputs={t: old.stdout for t in c.old_tokens} if c and old else {},
    )
    return ev


def assemble(b: Bundle) -> Receipt:
    """The receipt of a recorded bundle: :func:`evidence_of` then :func:`clawprobe.core.interpret.interpret`."""
    return interpret(evidence_of(b))


def assemble_parts(b: Bundle) -> tuple[Receipt, Extra | None]:
    """:func:`assemble` before the refinement (:func:`clawprobe.core.interpret.interpret_parts`)."""
    return interpret_parts(evidence_of(b))


def assemble_dir(path: str | os.PathLike[str]) -> Receipt:
    """:func:`load_bundle` then :func:`assemble`."""
    return assemble(load_bundle(path))


__all__ = ["Bundle", "BundleError", "BundleSpec", "HostRecord", "Step", "assemble", "assemble_dir", "assemble_parts",
           "direct_from_output", "evidence_of", "run_of_step", "load_bundle", "load_step"]
