"""Probe: the GGUF models a QMD search mode needs, and what the agent's model cache holds for them.

Two parts (probe contract):

* GATHER (:func:`gather_model_cache`): read-only file I/O — ``stat`` of each expected model file and of its
  ``<file>.ipull`` partial download, the first 4 bytes (``GGUF`` magic), the ``.ipull`` JSON trailer, and
  the embed lock ``.qmd-embed.lock`` (its PID, whether that PID is a live qmd process). Nothing is created,
  nothing is downloaded, ``qmd pull``/``qmd status`` are never run.
* INTERPRET (:func:`needed_models`, :func:`file_state`, :func:`missing_roles`): pure functions.

Facts and their sources (``shared/reference/qmd.md`` §3, ``field-report.md`` §2.4, read again in the
installed ``@tobilu/qmd`` 2.8.3 ``dist/llm.js`` and ``node-llama-cpp`` 3.20.0 ``dist/utils/parseModelUri.js``):

* which roles a mode loads: ``search`` none; ``vsearch`` embed + generate (query expansion);
  ``query`` embed + generate + rerank (:data:`clawprobe.core.modes.MODELS_NEEDED`);
* the model of a role: ``models.<role>`` in the agent's ``index.yml`` > env ``QMD_<ROLE>_MODEL`` > qmd's
  built-in default (``llm.js`` ``resolve*Model``); a value is an ``hf:`` URI or a local ``.gguf`` path;
* the cache dir: ``$XDG_CACHE_HOME/qmd/models`` — for an OpenClaw agent
  ``<state>/agents/<id>/qmd/xdg-cache/qmd/models`` (OpenClaw symlinks it to ``~/.cache/qmd/models`` when
  that exists);
* the cache file name of an ``hf:`` URI: node-llama-cpp's ``hf_<user>_[<model>_]<file>`` rule;
* complete = the final file exists, starts with ``GGUF``, has no ``.ipull`` beside it, and matches the
  expected size when one is known; a partial download is ``<file>.ipull`` (sparse: apparent size = total
  size + JSON trailer, so progress comes from allocated blocks or the trailer, never ``st_size``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import psutil
from pydantic import BaseModel, ConfigDict, Field

from clawprobe.core.probes.fileinfo import open_regular
from clawprobe.core.probes.qmd_yml import read_qmd_yml
from clawprobe.core.receipt import MODELS_NEEDED, SearchMode

Role = Literal["embed", "generate", "rerank"]
ROLES: tuple[Role, ...] = ("embed", "generate", "rerank")

#: qmd 2.8.3 built-in defaults (``dist/llm.js`` DEFAULT_*_MODEL).
DEFAULT_MODELS: dict[str, str] = {
    "embed": "hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf",
    "generate": "hf:tobil/qmd-query-expansion-1.7B-gguf/qmd-query-expansion-1.7B-q4_k_m.gguf",
    "rerank": "hf:ggml-org/Qwen3-Reranker-0.6B-Q8_0-GGUF/qwen3-reranker-0.6b-q8_0.gguf",
}
#: env overrides qmd reads when ``index.yml`` has no ``models.<role>``.
ENV_OVERRIDES: dict[str, str] = {"embed": "QMD_EMBED_MODEL", "generate": "QMD_GENERATE_MODEL",
                                 "rerank": "QMD_RERANK_MODEL"}
#: expected sizes in bytes of the default models' cache files (qmd.md §3.1: a third-party lock file pinned
#: at qmd 2.6.3, not verified against Hugging Face here). Other models: unknown (``None``).
EXPECTED_BYTES: dict[str, int] = {
    "hf_ggml-org_embeddinggemma-300M-Q8_0.gguf": 333_590_944,
    "hf_ggml-org_qwen3-reranker-0.6b-q8_0.gguf": 639_153_184,
    "hf_tobil_qmd-query-expansion-1.7B-q4_k_m.gguf": 1_282_438_912,
}
GGUF_MAGIC = b"GGUF"
IPULL_SUFFIX = ".ipull"
EMBED_LOCK = ".qmd-embed.lock"
TRAILER_SCAN_BYTES = 1 << 20  # the trailer of a 1.3 GB file in 5 MiB chunks is ~600 bytes
_QMD_CMDLINE = re.compile(r"(?:^|[\s/\\])qmd(?:\.(?:ts|js))?(?:\s|$)", re.IGNORECASE)  # qmd's own mcp-pid.ts test
_FILENAMIFY = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


class ModelSpec(BaseModel):
    """One model a role resolves to, and where the cache holds it.

    ``source``: ``index.yml`` (the agent's QMD config), ``env QMD_EMBED_MODEL`` (…), or ``qmd default``.
    ``path`` is the absolute final file (cache dir + cache file name, or the local ``.gguf`` path);
    ``None`` when the URI form has no predictable file name (``hf:user/model:quant``).
    ``expected_bytes`` is known only for qmd's default models (:data:`EXPECTED_BYTES`).
    """

    model_config = ConfigDict(extra="forbid")
    role: Role
    uri: str
    source: str
    local: bool
    path: str | None
    expected_bytes: int | None = None

    @property
    def name(self) -> str:
        """The file name shown to the operator (cache file name, or the local file's name)."""
        return Path(self.path).name if self.path else self.uri


class FileStat(BaseModel):
    """``stat`` of one file: apparent ``size`` and ``allocated`` (st_blocks*512) in bytes, ``mtime`` (UTC)."""

    model_config = ConfigDict(extra="forbid")
    exists: bool
    size: int | None = None
    allocated: int | None = None
    mtime: datetime | None = None


class ModelFileEvidence(BaseModel):
    """Raw evidence for one model (source: the final file, ``<file>.ipull`` and its JSON trailer).

    ``magic`` is the first 4 bytes of the final file (latin-1 text, e.g. ``"GGUF"``, ``"<!DO"``).
    ``trailer`` is the parsed ipull progress record (``{"part","chunks","chunkSize","parallelStreams"}``)
    and ``trailer_bytes`` its length, so the download's total size is ``ipull.size - trailer_bytes``.
    """

    model_config = ConfigDict(extra="forbid")
    spec: ModelSpec
    final: FileStat
    magic: str | None = None
    ipull: FileStat
    trailer: dict | None = None
    trailer_bytes: int | None = None


class EmbedLock(BaseModel):
    """The embed lock ``<dir of index.sqlite>/.qmd-embed.lock`` (qmd 2.8.3, holds ``"<pid>\\n"``).

    ``pid_alive`` uses qmd's own test: the PID exists and its command line looks like qmd
    (``src/cli/mcp-pid.ts``). ``mtime`` (UTC) is when the embed run took the lock. ``cmdline`` is the live
    process's argument list (no environment is read).
    """

    model_config = ConfigDict(extra="forbid")
    path: str
    exists: bool
    pid: int | None = None
    pid_alive: bool | None = None
    mtime: datetime | None = None
    cmdline: list[str] = Field(default_factory=list)


class ModelCacheEvidence(BaseModel):
    """Everything :func:`gather_model_cache` read, at ``taken_at`` (UTC).

    ``cache_dir_mtime`` (UTC) changes when a file is created or renamed in the cache — with one download in
    flight, when its ``.ipull`` appeared. ``cache_link`` is the symlink target when the cache dir is a link (OpenClaw
    links the agent's cache to ``~/.cache/qmd/models``). ``config_models`` is the ``models:`` block of the agent's ``index.yml``
    (``None`` when the file is absent; ``config_error`` when it does not parse).
    """

    model_config = ConfigDict(extra="forbid")
    taken_at: datetime
    mode: SearchMode
    cache_dir: str
    cache_dir_exists: bool
    cache_dir_mtime: datetime | None = None
    cache_link: str | None = None
    config_path: str | None = None
    config_models: dict[str, str] | None = None
    config_error: str | None = None
    models: list[ModelFileEvidence] = Field(default_factory=list)
    lock: EmbedLock | None = None


# ---------------------------------------------------------------------------------------------------------
# Pure: which models, which file names
# ---------------------------------------------------------------------------------------------------------

def _filenamify(text: str) -> str:
    return _FILENAMIFY.sub("!", text)


def cache_file_name(uri: str) -> str | None:
    """node-llama-cpp's cache file name for an ``hf:`` URI (``parseModelUri.js`` ``buildHuggingFaceFilePrefix``).

    ``hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf`` →
    ``hf_ggml-org_embeddinggemma-300M-Q8_0.gguf`` (the repo name is left out when the file name starts with
    it minus ``-GGUF``). Also accepts ``hf://``, ``huggingface:``, ``hf.co/`` and a ``#branch`` suffix.
    Returns ``None`` for forms without a file (``hf:user/model:Q4_K_M``) or non-``hf`` URIs.
    """
    rest = None
    for prefix in ("hf://", "huggingface://", "hf:", "huggingface:", "hf.co/", "huggingface.co/"):
        if uri.startswith(prefix):
            rest = uri[len(prefix):]
            break
    if rest is None:
        return None
    branch = "main"
    if "#" in rest:
        rest, branch = rest.split("#", 1)
        branch = branch or "main"
    parts = rest.split("/")
    if len(parts) < 3 or not parts[-1].lower().endswith(".gguf") or not parts[0] or not parts[1]:
        return None
    user, model, path_parts, filename = parts[0], parts[1], parts[2:-1], _filenamify(parts[-1])
    out = ["hf", _filenamify(user)]
    stem = filename[: -len(".gguf")]
    same_name = model.lower().endswith("-gguf") and stem.lower().startswith(model[: -len("-gguf")].lower())
    if not same_name or branch != "main":
        out.append(_filenamify(model))
    if branch != "main":
        out.append(_filenamify(branch))
    if path_parts and path_parts[-1].lower() == stem.lower():
        path_parts = path_parts[:-1]
    if path_parts:
        out.append(_filenamify("__".join(path_parts)))
    return "_".join(out) + "_" + filename


def _is_remote(value: str) -> bool:
    return bool(re.match(r"^(hf:|hf\.co/|huggingface[.:]|https?://)", value))


def resolve_model(role: Role, config_models: Mapping[str, str] | None, env: Mapping[str, str],
                  cache_dir: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None = None) -> ModelSpec:
    """The model qmd loads for ``role``: ``index.yml`` ``models.<role>`` > ``QMD_<ROLE>_MODEL`` > default.

    A local value (not an ``hf:``/URL form) is a path: ``~`` expands with ``env["HOME"]``, a relative path is
    taken from ``base_dir`` (qmd runs with the workspace as cwd under OpenClaw). Pure: no file access.
    """
    value, source = None, "qmd default"
    if config_models and isinstance(config_models.get(role), str) and config_models[role].strip():
        value, source = config_models[role].strip(), "index.yml"
    elif env.get(ENV_OVERRIDES[role], "").strip():
        value, source = env[ENV_OVERRIDES[role]].strip(), f"env {ENV_OVERRIDES[role]}"
    else:
        value = DEFAULT_MODELS[role]
    if _is_remote(value):
        name = cache_file_name(value)
        path = str(Path(cache_dir) / name) if name else None
        return ModelSpec(role=role, uri=value, source=source, local=False, path=path,
                         expected_bytes=EXPECTED_BYTES.get(name or ""))
    p = value
    if p.startswith("~") and env.get("HOME"):
        p = env["HOME"] + p[1:]
    if not os.path.isabs(p) and base_dir is not None:
        p = os.path.join(os.fspath(base_dir), p)
    return ModelSpec(role=role, uri=value, source=source, local=True, path=os.path.normpath(p))


def needed_models(mode: SearchMode, config_models: Mapping[str, str] | None, env: Mapping[str, str],
                  cache_dir: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None = None) -> list[ModelSpec]:
    """The models ``mode`` loads, in role order (``search``: none). Pure."""
    return [resolve_model(r, config_models, env, cache_dir, base_dir) for r in MODELS_NEEDED[mode]]  # type: ignore[arg-type]


FileState = Literal["complete", "partial", "missing", "corrupt", "size_mismatch"]


def file_state(e: ModelFileEvidence) -> tuple[FileState, str]:
    """Classify one model from its evidence (pure) → ``(state, human detail)``.

    ``complete``: final file with ``GGUF`` magic, no ``.ipull`` beside it, expected size when known.
    ``partial``: a ``.ipull`` exists. ``corrupt``: final file without ``GGUF`` magic (qmd deletes such
    files and fails). ``size_mismatch``: GGUF magic but not the expected size (truncated; qmd does not
    notice, issue #977). ``missing``: neither file.
    """
    s = e.spec
    if e.ipull.exists:
        return "partial", f"partial download {Path(s.path or s.uri).name}{IPULL_SUFFIX}"
    if not e.final.exists:
        where = "local file" if s.local else "model cache"
        return "missing", f"{s.name} not in the {where}"
    if e.magic != GGUF_MAGIC.decode("latin-1"):
        got = "empty" if not e.magic else repr(e.magic)
        return "corrupt", f"{s.name} is not GGUF (magic {got})"
    if s.expected_bytes is not None and e.final.size != s.expected_bytes:
        return "size_mismatch", f"{s.name} has {e.final.size} bytes, expected {s.expected_bytes}"
    return "complete", f"{s.name} complete ({e.final.size} bytes, GGUF)"


def missing_roles(evidence: ModelCacheEvidence) -> list[str]:
    """Roles the configured mode needs whose model is not complete (pure). ``[]`` = all present."""
    return [m.spec.role for m in evidence.models if file_state(m)[0] != "complete"]


def ipull_progress(e: ModelFileEvidence) -> tuple[int | None, int | None]:
    """``(done_bytes, total_bytes)`` of a partial download (pure), never from the apparent size.

    total = apparent size − trailer length (ipull writes the trailer right after the file's total size),
    or the expected size. done = allocated blocks (st_blocks*512, capped at total) — the live figure —
    or, when blocks are unknown, complete chunks × chunkSize from the trailer (statuses 0/1/2).
    """
    if not e.ipull.exists:
        return None, None
    total = None
    if e.trailer_bytes is not None and e.ipull.size is not None and e.ipull.size > e.trailer_bytes:
        total = e.ipull.size - e.trailer_bytes
    elif e.spec.expected_bytes is not None:
        total = e.spec.expected_bytes
    done = None
    if e.ipull.allocated is not None:
        done = e.ipull.allocated
    elif e.trailer:
        chunks = e.trailer.get("chunks") or []
        size = int(e.trailer.get("chunkSize") or 0)
        done = sum(1 for c in chunks if c == 2) * size
    if done is not None and total is not None:
        done = min(done, total)
    return done, total


# ---------------------------------------------------------------------------------------------------------
# Gather (read-only I/O)
# ---------------------------------------------------------------------------------------------------------

def agent_qmd_dirs(state_dir: str | os.PathLike[str], agent_id: str) -> tuple[Path, Path]:
    """``(xdg_config, xdg_cache)`` OpenClaw gives the agent's qmd (``<state>/agents/<id>/qmd/xdg-*``)."""
    base = Path(state_dir) / "agents" / agent_id / "qmd"
    return base / "xdg-config", base / "xdg-cache"


def model_cache_dir(xdg_cache: str | os.PathLike[str]) -> Path:
    """qmd's model cache under an ``XDG_CACHE_HOME``: ``<xdg_cache>/qmd/models``."""
    return Path(xdg_cache) / "qmd" / "models"


def read_config_models(path: str | os.PathLike[str]) -> tuple[dict[str, str] | None, str | None]:
    """The ``models:`` block of a qmd ``index.yml`` → ``(models, error)``; ``(None, None)`` when absent.

    Read-only (never created: qmd writes this file itself), parsed by ``clawprobe.core.probes.qmd_yml.read_qmd_yml``.
    Only string values of known roles are kept.
    """
    f = read_qmd_yml(path)
    if not f.exists:
        return None, None
    if f.error:
        return None, f"{os.fspath(path)}: {f.error}"
    return {k: v for k, v in f.models.items() if k in ROLES}, None


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def stat_file(path: str | os.PathLike[str] | None) -> FileStat:
    """``stat`` one regular file (follows symlinks); a missing or non-regular path is ``exists=False``."""
    if path is None:
        return FileStat(exists=False)
    try:
        st = os.stat(path)
    except OSError:
        return FileStat(exists=False)
    if not os.path.isfile(path):
        return FileStat(exists=False)
    return FileStat(exists=True, size=st.st_size, allocated=getattr(st, "st_blocks", 0) * 512,
                    mtime=_utc(st.st_mtime))


def read_magic(path: str | os.PathLike[str]) -> str | None:
    """The first 4 bytes of a file as latin-1 text (``"GGUF"`` for a model); ``None`` when unreadable."""
    try:
        with open_regular(path) as f:
            return f.read(4).decode("latin-1")
    except OSError:
        return None


def read_trailer(path: str | os.PathLike[str], size: int) -> tuple[dict | None, int | None]:
    """The ipull progress trailer at the end of a ``.ipull`` file → ``(record, length in bytes)``.

    ipull (3.9.5 ``saveMedataAfterFile``) writes ``JSON.stringify(progress)`` at offset = the file's total
    size, so the trailer is the last ``{"part":…}`` object. Only the last :data:`TRAILER_SCAN_BYTES` are read.
    """
    if size <= 0:
        return None, None
    n = min(size, TRAILER_SCAN_BYTES)
    try:
        with open_regular(path) as f:
            f.seek(size - n)
            tail = f.read(n)
    except OSError:
        return None, None
    at = tail.rfind(b'{"part":')
    if at < 0:
        return None, None
    raw = tail[at:]
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, None
    if not isinstance(record, dict) or not isinstance(record.get("chunks"), list):
        return None, None
    return record, len(raw)


def read_embed_lock(path: str | os.PathLike[str]) -> EmbedLock:
    """Read ``.qmd-embed.lock`` and test its PID the way qmd does (alive + qmd-looking command line)."""
    st = stat_file(path)
    lock = EmbedLock(path=os.fspath(path), exists=st.exists, mtime=st.mtime)
    if not st.exists:
        return lock
    try:
        with open(path, "rb") as f:  # "<pid>\n": the first 64 bytes are all it can hold
            text = f.read(64).decode("utf-8", "replace").strip()
        lock.pid = int(text.split()[0]) if text else None
    except (OSError, ValueError):
        return lock
    if lock.pid is None or lock.pid <= 0:
        return lock
    alive = False
    with contextlib.suppress(psutil.Error):
        proc = psutil.Process(lock.pid)
        if proc.status() != psutil.STATUS_ZOMBIE:
            lock.cmdline = proc.cmdline()
            alive = bool(_QMD_CMDLINE.search(" ".join(lock.cmdline)))
    lock.pid_alive = alive
    return lock


def gather_model_cache(mode: SearchMode, xdg_config: str | os.PathLike[str], xdg_cache: str | os.PathLike[str],
                       env: Mapping[str, str], *, base_dir: str | os.PathLike[str] | None = None,
                       now: datetime | None = None) -> ModelCacheEvidence:
    """Read the model evidence for ``mode`` under one agent's QMD dirs (read-only, never creates anything).

    ``xdg_config``/``xdg_cache`` are the agent's ``XDG_CONFIG_HOME``/``XDG_CACHE_HOME`` (see
    :func:`agent_qmd_dirs`); ``env`` supplies only ``HOME`` and the ``QMD_*_MODEL`` overrides (nothing else
    is read from it). Sources: ``<xdg_config>/qmd/index.yml``, ``<xdg_cache>/qmd/models/*``,
    ``<xdg_cache>/qmd/.qmd-embed.lock``, the process table (lock PID only).
    """
    cache = model_cache_dir(xdg_cache)
    cfg_path = Path(xdg_config) / "qmd" / "index.yml"
    cfg_models, cfg_err = read_config_models(cfg_path)
    link = None
    with contextlib.suppress(OSError):
        if cache.is_symlink():
            link = os.readlink(cache)
    dir_mtime = None
    with contextlib.suppress(OSError):
        dir_mtime = _utc(os.stat(cache).st_mtime)
    ev = ModelCacheEvidence(taken_at=now or datetime.now(UTC), mode=mode, cache_dir=str(cache),
                            cache_dir_exists=cache.is_dir(), cache_dir_mtime=dir_mtime, cache_link=link,
                            config_path=str(cfg_path) if cfg_path.exists() else None,
                            config_models=cfg_models, config_error=cfg_err)
    for spec in needed_models(mode, cfg_models, env, cache, base_dir):
        final = stat_file(spec.path)
        ipull_path = spec.path + IPULL_SUFFIX if spec.path and not spec.local else None
        ip = stat_file(ipull_path)
        trailer, tlen = (read_trailer(ipull_path, ip.size or 0) if ip.exists and ipull_path else (None, None))
        ev.models.append(ModelFileEvidence(spec=spec, final=final, magic=read_magic(spec.path) if final.exists and spec.path else None,
                                           ipull=ip, trailer=trailer, trailer_bytes=tlen))
    ev.lock = read_embed_lock(Path(xdg_cache) / "qmd" / EMBED_LOCK)
    return ev
