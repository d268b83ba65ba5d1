"""Value-shaped secret redaction: mask token-shaped strings wherever config- or CLI-derived text is kept.

Key-based redaction (``apiKey``, ``token``… → ``<redacted>``) lives in :mod:`clawprobe.core.probes.config`; this module
masks secrets by the shape of the *value*, for the fields whose name says nothing (``provider``,
``memory.backend``, ``model``, an error message that quotes a value). Pure, no I/O.

Shapes masked (modelled on OpenClaw 2026.7.35's own ``DEFAULT_REDACT_PATTERNS`` in ``dist/redact-*.js``, the
ones that can reach a config value or a CLI message):

* provider tokens by prefix: ``sk-…`` (OpenAI, Anthropic ``sk-ant-…``), ``sk_live_``/``rk_live_``, ``ghp_``/
  ``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, ``glpat-``, ``xox[baprs]-`` and ``xapp-`` (Slack),
  ``AKIA``/``ASIA`` (AWS), ``AIza`` (Google), ``ya29.``, ``hf_``, ``npm_``, ``pypi-``, ``gsk_``, ``xai-``,
  ``pplx-``, ``dop_v1_``, ``glsa_``, JWTs (``eyJ….….…``);
* ``Bearer <token>`` / ``Basic <token>``, and ``key=value`` / ``"key": "value"`` with a credential key name
  (a ``${VAR}`` reference is kept: it names a variable, not its value);
* credentials inside URLs: ``scheme://user:<password>@host`` (the user and host stay), and credential query
  parameters (``?key=…``, ``&token=…``, ``&api_key=…``, ``&sig=…``);
* secret-shaped command-line flags of any spelling, as in ``memory.qmd.command`` or a process's argv:
  ``--password X``, ``--password=X``, ``--api-key X``, ``--apikey``, ``--auth``, ``--token``, ``--secret``,
  ``--client-secret``, ``-k X`` (the flag stays, its value is masked; a value that is another flag or a
  ``${VAR}`` reference is kept);
* PEM private-key blocks;
* long high-entropy runs: ≥ 32 characters of the base64/base64url alphabet (``/`` included) with upper
  case, lower case and at least two digits, few ``-``/``_``/``/``, short lower-case runs (random text, not
  words: CamelCase names, ``model-name-v2``, path segments have long ones) and Shannon entropy ≥ 4
  bits/char; or ≥ 32 hex digits mixing letters and digits (a sha256 is masked too: never needed verbatim
  in a message).

Every match becomes :data:`MASK` (``<redacted>``); the surrounding text (key names, URL host, the rest of a
message) is kept so the message still says what went wrong.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Collection
from typing import Any

from pydantic import BaseModel

MASK = "<redacted>"

_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_-]{8,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|sk_[A-Za-z0-9_]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,}|glpat-[A-Za-z0-9._=-]{16,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"
    r"|A[KS]IA[A-Z0-9]{16}|AIza[0-9A-Za-z_-]{20,}|ya29\.[0-9A-Za-z_./+=-]{10,}"
    r"|hf_[A-Za-z0-9]{10,}|npm_[A-Za-z0-9]{10,}|pypi-[A-Za-z0-9_-]{10,}|gsk_[A-Za-z0-9_-]{10,}"
    r"|xai-[A-Za-z0-9]{20,}|pplx-[A-Za-z0-9_-]{10,}|do[opr]_v1_[A-Za-z0-9]{10,}|glsa_[A-Za-z0-9_]{20,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r")")
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})", re.I)
_CRED_KEY = (r"(?:[A-Za-z0-9]+[_-])?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|secret"
             r"|client[_-]?secret|passw(?:or)?d|pwd|credentials?|private[_-]?key)")
_ASSIGNMENT = re.compile(rf"(?<![A-Za-z0-9])({_CRED_KEY}\s*=\s*[\"']?)([^\s\"'&,;<>]{{4,}})", re.I)
_QUOTED_ASSIGNMENT = re.compile(rf"(?<![A-Za-z0-9])(\"{_CRED_KEY}\"\s*:\s*\")([^\"]+)(?=\")", re.I)
_URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://[^/\s:@]*):([^/\s@]+)@", re.I)
_FLAG_WORD = (r"(?:passw(?:or)?d|pass|pwd|api[-_]?key|apikey|key|auth|authorization|token|access[-_]?token"
              r"|secret|client[-_]?secret|credentials?|bearer|private[-_]?key)")
_FLAG = re.compile(rf"(?<![\w-])(--?(?:[a-z0-9]+[-_])*{_FLAG_WORD}|-k)(=|\s+)(\"[^\"]*\"|'[^']*'|[^\s\"'-][^\s\"']*)",
                   re.I)
_QUERY = re.compile(r"([?&](?:key|api[-_]?key|apikey|token|access[-_]?token|auth|sig|signature|password|secret"
                    r"|client[-_]?secret|code)=)([^&\s#\"'<>]+)", re.I)
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")
_RUN = re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32,}(?![0-9A-Za-z])")
_LOWER_RUN = re.compile(r"[a-z]+")


def _entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def _hex_secret(m: re.Match[str]) -> str:
    """A run of ≥ 32 hex digits that mixes letters and digits (a hex key, or a sha256: both are masked)."""
    h = m[0]
    return MASK if any(c.isdigit() for c in h) and any(c.isalpha() for c in h) else h


def _high_entropy(run: str) -> bool:
    """A random-looking base64/base64url run (thresholds in the module docstring).

    Words (CamelCase identifiers, ``model-name-v2``, path segments) have long lower-case runs; random
    base64 has lower-case runs of ~1.7 characters on average, so a mean above 2.6 is not a credential.
    """
    core = run.strip("/").rstrip("=")
    if len(core) < 32:
        return False
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and sum(c.isdigit() for c in core) >= 2):
        return False
    if sum(c in "-_/" for c in core) > max(3, len(core) // 6):
        return False
    lower = _LOWER_RUN.findall(core)
    if lower and sum(map(len, lower)) / len(lower) > 2.6:
        return False
    return _entropy(core) >= 4.0


def looks_secret(value: str) -> bool:
    """Whether ``value`` contains anything :func:`redact_text` would mask."""
    return isinstance(value, str) and redact_text(value) != value


def _flag(m: re.Match[str]) -> str:
    """``--flag VALUE`` with VALUE masked (quotes kept; a ``${VAR}`` reference or an existing mask kept)."""
    value = m[3]
    bare = value.strip("\"'")
    if bare.startswith("${") or bare == MASK or not bare:
        return m[0]
    q = value[0] if value[0] in "\"'" else ""
    return f"{m[1]}{m[2]}{q}{MASK}{q}"


def redact_shapes(text: str) -> str:
    """``text`` with the unambiguous secret shapes masked: PEM keys, URL credentials, auth schemes, prefixed
    provider tokens, credential flags, query parameters and ``key=value`` assignments — everything
    :func:`redact_text` masks except the entropy heuristics (long hex/base64 runs). Safe for text that
    legitimately holds hashes (a sha256, a config hash): the final sweep over a whole receipt
    (:func:`redact_model`) uses it. Non-strings are returned unchanged."""
    if not isinstance(text, str) or not text:
        return text
    out = _PEM.sub(MASK, text)
    out = _URL_CREDENTIALS.sub(lambda m: f"{m[1]}:{MASK}@", out)
    out = _AUTH_SCHEME.sub(lambda m: f"{m[1]} {MASK}", out)
    out = _PREFIXED.sub(MASK, out)
    out = _FLAG.sub(_flag, out)
    out = _QUERY.sub(lambda m: m[1] + (m[2] if m[2] == MASK else MASK), out)
    for rx in (_QUOTED_ASSIGNMENT, _ASSIGNMENT):
        out = rx.sub(lambda m: m[1] + (m[2] if m[2].startswith("${") or m[2] == MASK else MASK), out)
    return out


def redact_text(text: str) -> str:
    """``text`` with every secret-shaped part replaced by :data:`MASK` (non-strings are returned unchanged).

    ``"sk-SECRETINPROVIDER123"`` → ``"<redacted>"``; ``"https://u:pw@host/x"`` → ``"https://u:<redacted>@host/x"``;
    ``"apiKey=abcd1234"`` → ``"apiKey=<redacted>"``; ``"memory.backend is 'builtin'"`` is unchanged.
    """
    if not isinstance(text, str) or not text:
        return text
    out = _HEX.sub(_hex_secret, redact_shapes(text))
    return _RUN.sub(lambda m: MASK if _high_entropy(m[0]) else m[0], out)


def redact_values(obj: Any, keep: Collection[str] = (), _key: str | None = None) -> Any:
    """A copy of a JSON-like tree with :func:`redact_text` applied to every string leaf.

    Strings directly under a key named in ``keep`` (and the items of a list under such a key) are left as
    they are: those are values a probe must use verbatim (paths, commands). Dict keys are never changed.
    """
    if isinstance(obj, dict):
        return {k: redact_values(v, keep, str(k)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_values(v, keep, _key) for v in obj]
    if isinstance(obj, str) and _key not in keep:
        return redact_text(obj)
    return obj


def redact_model(model: BaseModel, text: Callable[[str], str] = redact_shapes) -> BaseModel:
    """``model`` (a pydantic model tree) with ``text`` applied to every string it holds — fields, list items,
    dict values, nested models — changed in place (no re-validation) and returned. Dict keys are kept.

    The one sweep every receipt passes before any output path sees it (``clawprobe.core.probe.fast``,
    receipts read back by ``replay``/history): with the default :func:`redact_shapes`, hashes and tokens
    clawprobe itself made stay intact while a secret any source carried in is masked."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        new = _sweep(value, text)
        if new is not value:
            object.__setattr__(model, name, new)
    return model


def _sweep(value: Any, text: Callable[[str], str]) -> Any:
    """:func:`redact_model` for one value: a new string/list/dict when something changed, else ``value``."""
    if isinstance(value, str):
        new = text(value)
        return value if new == value else new
    if isinstance(value, BaseModel):
        redact_model(value, text)
        return value
    if isinstance(value, list):
        items = [_sweep(v, text) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, tuple):
        items = [_sweep(v, text) for v in value]
        return tuple(items) if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        out = {k: _sweep(v, text) for k, v in value.items()}
        return out if any(out[k] is not value[k] for k in value) else value
    return value


__all__ = ["MASK", "looks_secret", "redact_model", "redact_shapes", "redact_text", "redact_values"]
