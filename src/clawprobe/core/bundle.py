"""Support bundles: the evidence of one check as one versioned, documented, redacted JSON document.

``clawprobe bundle [--agent ID] [-o FILE]`` writes it (:func:`make_bundle`, :func:`write_bundle`; a
``FILE.tar.gz`` holds ``bundle.json`` and a ``README.txt``);
``clawprobe check --bundle FILE`` reads it (:func:`read_bundle`) and diagnoses every agent in it through
the same :func:`clawprobe.core.interpret.interpret` a live check uses; ``clawprobe schema --bundle`` prints
its JSON Schema (:func:`bundle_schema`).

What a bundle holds is :class:`~clawprobe.core.evidence.Evidence` (one per agent), reduced by
:func:`redact_evidence` — said so in the document's ``about`` lines:

* no secret: config values are the redacted memory subset already; program output was redacted where it
  entered (each run record, :func:`clawprobe.core.runrecord.record_run`: argv, stdout, stderr; ≤ 64 KiB a
  stream, truncation flagged with the full byte count);
* no service environment: every environment (gateway process, service file, shell) keeps ``PATH`` and
  ``HOME`` only — the two the diagnosis reads;
* note contents only where the diagnosis needs them: search-result snippets — in the printed output of
  ``memory search`` and the direct ``qmd search`` (:func:`scrub_search_output`) — keep the canary token when
  they hold it (what decides ``found``) and are otherwise replaced by :data:`REMOVED_TEXT`; index and
  workspace facts are paths, hashes, sizes and times, never text.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import tarfile
import tempfile
import zlib
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clawprobe.core.evidence import Evidence
from clawprobe.core.probes.fileinfo import open_regular

BUNDLE_FORMAT = "clawprobe-bundle"
#: bump when the document's layout changes. 2: the CLI probes are run records (what the programs printed,
#: evidence version 2); a version-1 bundle (parsed CLI facts) is still read (:data:`READABLE_VERSIONS`)
BUNDLE_VERSION = 2
READABLE_VERSIONS = (1, 2)  #: :func:`read_bundle` refuses any other version, saying which it reads
_TEXT_KEYS = ("snippet", "body")  # search-result fields that hold note text the canary decision reads
_OTHER_TEXT_KEYS = ("title", "context")  # note text no decision reads
REMOVED_TEXT = "[note text removed from the bundle: it does not hold the canary token]"
KEPT_ENV_KEYS = ("PATH", "HOME")
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
ARCHIVE_MEMBER = "bundle.json"  #: the document inside a ``.tar.gz`` bundle
ARCHIVE_README = "README.txt"  #: what the archive holds, for the person who opens it

ABOUT = [
    "clawprobe support bundle: the evidence of one check (per agent), as gathered; diagnose it with "
    "`clawprobe check --bundle FILE`, its schema is `clawprobe schema --bundle`.",
    "No secrets: the config is its redacted memory subset; what each program printed (argv, stdout, stderr) was "
    "redacted as it was read and is kept to 64 KiB a stream (a cut stream says so, with its full byte count).",
    "No service environment: of every environment (gateway process, service file, shell) only PATH and HOME "
    "are kept.",
    "Note contents only where the diagnosis needs them: a search-result snippet (in the printed output of "
    "`memory search` and `qmd search`) keeps the canary token when it holds it and is replaced otherwise; index "
    "and workspace facts are paths, hashes, sizes and times.",
]


class BundleFileError(Exception):
    """A bundle file that cannot be used; ``str()`` names the file and the reason."""


class SupportBundle(BaseModel):
    """The bundle document: ``format`` (always ``clawprobe-bundle``), ``version``, ``evidence_version``
    (:data:`clawprobe.core.evidence.EVIDENCE_VERSION`), when and by which clawprobe it was written (UTC),
    ``about`` (what it holds and what was removed) and one :class:`Evidence` per agent checked."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["clawprobe-bundle"] = "clawprobe-bundle"  # BUNDLE_FORMAT
    version: Literal[1, 2] = 2  # BUNDLE_VERSION
    evidence_version: Literal[1, 2] = 2  # EVIDENCE_VERSION
    created_at: datetime
    clawprobe_version: str | None = None
    about: list[str] = Field(default_factory=lambda: list(ABOUT))
    agents: list[Evidence] = Field(default_factory=list)


def _env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in KEPT_ENV_KEYS}


def redact_evidence(ev: Evidence) -> Evidence:
    """The evidence as a bundle may hold it (a new object; pure): environments reduced to ``PATH``/``HOME``,
    search-result snippets without the canary token replaced by :data:`REMOVED_TEXT` (one with the token
    keeps only the token: the outcome is decided the same way)."""
    out = ev.model_copy(deep=True)
    g = out.gateway
    if g is not None:
        g.shell_env = _env(g.shell_env)
        for p in g.processes:
            p.env = _env(p.env)
        if g.service is not None:
            g.service.env = _env(g.service.env)
    slow = out.slow
    token = slow.canary.token if slow is not None and slow.canary is not None else None
    for run in (slow.search_run, slow.direct_run) if slow is not None else ():
        if run is not None:
            run.stdout = scrub_search_output(run.stdout, token)
    if slow is not None and slow.search is not None:  # a version-1 bundle's parsed hits
        for h in slow.search.hits:
            if not h.snippet.strip():
                continue
            h.snippet = token if token and token.lower() in h.snippet.lower() else REMOVED_TEXT
    return out


def _keep(text: str, token: str | None) -> str:
    """A note text as a bundle keeps it: the token alone when it holds it, else :data:`REMOVED_TEXT`; a
    diff-hunk header (``@@ -1,4 @@``, how QMD hits are told from builtin ones) stays in front."""
    if not text.strip():
        return text
    head = text.split("\n", 1)[0] if text.startswith("@@ -") else ""
    body = token if token and token.lower() in text.lower() else REMOVED_TEXT
    return f"{head}\n{body}" if head else body


def _scrub(value: Any, token: str | None) -> Any:
    if isinstance(value, list):
        return [_scrub(v, token) for v in value]
    if isinstance(value, dict):
        return {k: (_keep(v, token) if k in _TEXT_KEYS and isinstance(v, str)
                    else REMOVED_TEXT if k in _OTHER_TEXT_KEYS and isinstance(v, str) and v.strip()
                    else _scrub(v, token)) for k, v in value.items()}
    return value


def scrub_search_output(stdout: str, token: str | None) -> str:
    """A search's printed JSON (``openclaw memory search --json`` or ``qmd search --json``) with the note text
    of every result removed (pure): ``snippet``/``body`` keep only the canary token when they hold it
    (:func:`_keep`), ``title``/``context`` become :data:`REMOVED_TEXT`; paths, scores and lines stay, so the
    outcome is decided the same way. Text before the JSON (a warning line) is kept; output that holds result
    text but is not JSON is replaced whole by :data:`REMOVED_TEXT`."""
    s = stdout or ""
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if start < 0:
        return s
    try:
        doc = json.loads(s[start:])
    except ValueError:
        return REMOVED_TEXT if any(f'"{k}"' in s for k in _TEXT_KEYS + _OTHER_TEXT_KEYS) else s
    return s[:start] + json.dumps(_scrub(doc, token), indent=2, ensure_ascii=False) + "\n"


def make_bundle(evidence: list[Evidence], created_at: datetime, clawprobe_version: str | None = None) -> SupportBundle:
    """A bundle document of ``evidence`` (redacted by :func:`redact_evidence`)."""
    return SupportBundle(created_at=created_at, clawprobe_version=clawprobe_version,
                         agents=[redact_evidence(e) for e in evidence])


def bundle_text(b: SupportBundle) -> str:
    """The document as indented JSON (UTF-8 text, newline-terminated)."""
    return b.model_dump_json(indent=1) + "\n"


def is_archive_name(path: str) -> bool:
    """Whether ``path`` names a gzip'd tar archive (``.tar.gz``/``.tgz``): :func:`write_bundle` writes one."""
    return path.lower().endswith((".tar.gz", ".tgz"))


def readme_text(b: SupportBundle) -> str:
    """The ``README.txt`` of an archive bundle: what it holds and what was removed (the ``about`` lines), when
    it was written, and how to diagnose it."""
    lines = ["clawprobe support bundle", "", f"written: {b.created_at.isoformat()} by clawprobe "
             f"{b.clawprobe_version or '(unknown version)'}; bundle version {b.version}, evidence version "
             f"{b.evidence_version}; agents: {', '.join(a.agent_id for a in b.agents) or 'none'}", "",
             f"{ARCHIVE_MEMBER}: the evidence (JSON; its schema: `clawprobe schema --bundle`).",
             "Diagnose it: `clawprobe check --bundle <this archive or the JSON file>`.", "", *b.about]
    return "\n".join(lines) + "\n"


def archive_bytes(b: SupportBundle) -> bytes:
    """The bundle as a gzip'd tar archive: ``bundle.json`` (:func:`bundle_text`) and ``README.txt``
    (:func:`readme_text`), both mode 0600 with the bundle's creation time — the same bytes for the same
    bundle."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=int(b.created_at.timestamp())) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, text in ((ARCHIVE_MEMBER, bundle_text(b)), (ARCHIVE_README, readme_text(b))):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o600, int(b.created_at.timestamp())
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def write_bundle(b: SupportBundle, path: str) -> None:
    """Write the document atomically to ``path`` (mode 0600): the JSON text, or — for a ``.tar.gz``/``.tgz``
    name (:func:`is_archive_name`) — :func:`archive_bytes`. Raises ``OSError``."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".clawprobe-bundle.", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(archive_bytes(b) if is_archive_name(path) else bundle_text(b).encode("utf-8"))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def parse_bundle(text: str, name: str = "bundle") -> SupportBundle:
    """Validate a bundle document. Raises :class:`BundleFileError` naming ``name``, the field and the reason
    (not JSON, not a clawprobe bundle, another version, an invalid field)."""
    try:
        raw: Any = json.loads(text)
    except ValueError as e:
        raise BundleFileError(f"{name}: not JSON ({e})") from None
    except RecursionError:
        raise BundleFileError(f"{name}: JSON nested too deeply") from None
    if not isinstance(raw, dict) or raw.get("format") != BUNDLE_FORMAT:
        raise BundleFileError(f"{name}: not a clawprobe bundle (no \"format\": \"{BUNDLE_FORMAT}\")")
    if raw.get("version") not in READABLE_VERSIONS:
        raise BundleFileError(f"{name}: bundle version {raw.get('version')!r} is not supported; this clawprobe reads "
                              f"versions {', '.join(str(v) for v in READABLE_VERSIONS)}")
    try:
        return SupportBundle.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        raise BundleFileError(f"{name}: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None
    except RecursionError:
        raise BundleFileError(f"{name}: JSON nested too deeply") from None


def _archive_member(data: bytes, path: str) -> bytes:
    """``bundle.json`` out of a gzip'd tar archive, read in memory (nothing is extracted to disk; at most
    :data:`MAX_BUNDLE_BYTES`). Raises :class:`BundleFileError`."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            member = next((m for m in tar.getmembers() if m.name.lstrip("./") == ARCHIVE_MEMBER), None)
            if member is None or not member.isfile():
                raise BundleFileError(f"{path}: a tar.gz archive without a {ARCHIVE_MEMBER} (not a clawprobe bundle)")
            if member.size > MAX_BUNDLE_BYTES:
                raise BundleFileError(f"{path}: {ARCHIVE_MEMBER} is larger than {MAX_BUNDLE_BYTES} bytes")
            f = tar.extractfile(member)
            return f.read(MAX_BUNDLE_BYTES + 1) if f is not None else b""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise BundleFileError(f"{path}: not a readable tar.gz archive ({type(e).__name__}: {e})") from None


def read_bundle(path: str) -> SupportBundle:
    """Read and validate a bundle file (≤ :data:`MAX_BUNDLE_BYTES`): the JSON document, or a gzip'd tar
    archive holding it as ``bundle.json`` (told by the gzip magic bytes, whatever the name). Raises
    :class:`BundleFileError`. A path that is not a regular file (a FIFO, whose open would wait for a writer
    forever; a device; a directory) is refused before anything is read, as ``replay`` refuses it."""
    try:
        with open_regular(path) as f:
            data = f.read(MAX_BUNDLE_BYTES + 1)
    except OSError as e:
        why = "is a directory, not a bundle file" if os.path.isdir(path) else f"cannot read: {e.strerror or e}"
        raise BundleFileError(f"{path}: {why}") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleFileError(f"{path}: larger than {MAX_BUNDLE_BYTES} bytes")
    if data[:2] == b"\x1f\x8b":
        data = _archive_member(data, path)
    return parse_bundle(data.decode("utf-8", "replace"), path)


def bundle_schema() -> dict[str, Any]:
    """The JSON Schema (pydantic's, draft 2020-12) of :class:`SupportBundle`."""
    return SupportBundle.model_json_schema()


__all__ = ["ABOUT", "ARCHIVE_MEMBER", "ARCHIVE_README", "BUNDLE_FORMAT", "BUNDLE_VERSION", "READABLE_VERSIONS",
           "REMOVED_TEXT", "BundleFileError", "SupportBundle", "archive_bytes", "bundle_schema", "bundle_text",
           "is_archive_name", "make_bundle", "parse_bundle", "read_bundle", "readme_text", "redact_evidence",
           "scrub_search_output", "write_bundle"]
