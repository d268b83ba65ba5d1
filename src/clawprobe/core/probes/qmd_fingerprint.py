"""QMD's embedding fingerprint, and the embed model it belongs to.

Pending embeddings are counted per (model URI, fingerprint) pair, so clawprobe must reproduce both
exactly as qmd 2.8.3 does (source: tobi/qmd ``src/store.ts:114-123``, ``src/llm.ts:90-119, 282-320``;
verified: the default embeddinggemma URI gives ``c37385`` like ``qmd doctor``, and a local GGUF path gives
the fingerprint qmd stored in ``content_vectors.embed_fingerprint``). Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from clawprobe.core.probes.models import Role, model_cache_dir, resolve_model

CHUNK_TOKENS = 900
CHUNK_OVERLAP_TOKENS = 135
_QWEN_EMBED = (re.compile(r"qwen.*embed", re.I), re.compile(r"embed.*qwen", re.I))


class ModelChoice(BaseModel):
    """The model qmd resolves for one role, and where that came from.

    ``source``: ``index.yml`` (the agent's QMD config — wins, and qmd writes it on its first run),
    ``env QMD_EMBED_MODEL`` (only while the YAML has no entry) or ``qmd default``.
    """

    model_config = ConfigDict(extra="forbid")

    role: Role = "embed"
    model: str
    source: str
    fingerprint: str


def fingerprint(model: str) -> str:
    """The 6-hex embed fingerprint qmd stores in ``content_vectors.embed_fingerprint`` for ``model``.

    ``model`` is the resolved embed model exactly as qmd sees it (an ``hf:`` URI or a local path).
    sha256 over five newline-joined lines: the model, the query and document prompt formats (Qwen3
    embedding models use an instruction format) and the chunk sizes (900 / 135 tokens).
    """
    if any(rx.search(model) for rx in _QWEN_EMBED):
        query = "Instruct: Retrieve relevant documents for the given query\nQuery: __qmd_embedding_query_probe__"
        doc = "__qmd_embedding_title_probe__\n__qmd_embedding_document_probe__"
    else:
        query = "task: search result | query: __qmd_embedding_query_probe__"
        doc = "title: __qmd_embedding_title_probe__ | text: __qmd_embedding_document_probe__"
    text = "\n".join([f"model:{model}", f"query:{query}", f"doc:{doc}", f"chunk_tokens:{CHUNK_TOKENS}",
                      f"chunk_overlap_tokens:{CHUNK_OVERLAP_TOKENS}"])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def resolve_embed_model(yml_models: Mapping[str, str] | None, env: Mapping[str, str] | None,
                        xdg_cache: str | None = None) -> ModelChoice:
    """The embed model qmd uses — YAML ``models.embed`` > env ``QMD_EMBED_MODEL`` > default (resolution by
    :func:`clawprobe.core.probes.models.resolve_model`) — with its fingerprint.

    ``yml_models`` is the ``models:`` mapping of the agent's ``index.yml`` (``None`` when absent);
    ``env`` the environment qmd runs with (the gateway's, which OpenClaw passes on).
    """
    spec = resolve_model("embed", yml_models, dict(env or {}), model_cache_dir(xdg_cache or "."))
    return ModelChoice(role="embed", model=spec.uri, source=spec.source, fingerprint=fingerprint(spec.uri))
