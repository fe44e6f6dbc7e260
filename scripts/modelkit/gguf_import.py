"""Reads a llama-architecture GGUF file: config, dequantized weights (HF names and layout) and tokenizer."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Mapping

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize
from tokenizers import Tokenizer

from .llama import LlamaConfig
from .toks import byte_level_bpe

TOKEN_TYPE_CONTROL = 3

# GGUF tensor name -> HF name; "{i}" is the layer index.
_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_GLOBAL_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def _hf_name(gguf_name: str) -> str:
    if gguf_name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[gguf_name]
    blk, layer, kind, suffix = gguf_name.split(".")
    assert blk == "blk", gguf_name
    return f"model.layers.{layer}.{_LAYER_NAMES[kind]}.{suffix}"


def _unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """Undoes llama.cpp's q/k row permutation (interleaved rotary pairs) -> HF rotate-half layout."""
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


class GGUFWeights(Mapping[str, np.ndarray]):
    """HF-named float32 weights, dequantized when looked up (keeps peak memory low)."""

    def __init__(self, reader: GGUFReader, cfg: LlamaConfig):
        self.cfg = cfg
        self.tensors = {_hf_name(t.name): t for t in reader.tensors}

    def __getitem__(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        shape = tuple(int(n) for n in reversed(t.shape.tolist()))   # GGUF lists dims innermost first
        w = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        if name.endswith("q_proj.weight"):
            w = _unpermute(w, self.cfg.heads)
        elif name.endswith("k_proj.weight"):
            w = _unpermute(w, self.cfg.kv_heads)
        return w

    def __iter__(self) -> Iterator[str]:
        return iter(self.tensors)

    def __len__(self) -> int:
        return len(self.tensors)


class GGUFModel:
    def __init__(self, path: Path):
        self.reader = GGUFReader(str(path))
        self.fields = self.reader.fields
        arch = self.value("general.architecture")
        if arch != "llama":
            raise ValueError(f"{path}: architecture {arch!r}, only 'llama' is supported")
        self.config = self._config()
        self.weights = GGUFWeights(self.reader, self.config)

    def value(self, key: str, default=None):
        field = self.fields.get(key)
        return default if field is None else field.contents()

    def _config(self) -> LlamaConfig:
        tensor_names = {t.name for t in self.reader.tensors}
        hidden = int(self.value("llama.embedding_length"))
        vocab = self.value("llama.vocab_size") or len(self.value("tokenizer.ggml.tokens"))
        return LlamaConfig(
            vocab=int(vocab),
            hidden=hidden,
            layers=int(self.value("llama.block_count")),
            heads=int(self.value("llama.attention.head_count")),
            kv_heads=int(self.value("llama.attention.head_count_kv")),
            ffn=int(self.value("llama.feed_forward_length")),
            rms_eps=float(self.value("llama.attention.layer_norm_rms_epsilon")),
            rope_theta=float(self.value("llama.rope.freq_base", 10000.0)),
            tied_embeddings="output.weight" not in tensor_names,
        )

    def metadata(self) -> dict[str, str]:
        """Facts the runtime needs besides the graph, stored in the ONNX metadata_props."""
        meta = {
            "model_type": "llama",
            "bos_token_id": self.value("tokenizer.ggml.bos_token_id"),
            "eos_token_id": self.value("tokenizer.ggml.eos_token_id"),
            "max_position_embeddings": self.value("llama.context_length"),
            "chat_template": self.value("tokenizer.chat_template"),
            "source_name": self.value("general.name"),
            "license": self.value("general.license"),
        }
        return {k: str(v) for k, v in meta.items() if v is not None}

    def tokenizer(self) -> Tokenizer:
        """A HF tokenizer.json equivalent of the GGUF's GPT-2-style byte-level BPE vocabulary."""
        model = self.value("tokenizer.ggml.model")
        if model != "gpt2":
            raise ValueError(f"tokenizer model {model!r}: only byte-level BPE ('gpt2') is supported")
        tokens = self.value("tokenizer.ggml.tokens")
        types = self.value("tokenizer.ggml.token_type")
        merges = [tuple(m.split(" ", 1)) for m in self.value("tokenizer.ggml.merges")]
        special = [tok for tok, kind in zip(tokens, types) if kind == TOKEN_TYPE_CONTROL]
        split_digits = self.value("tokenizer.ggml.pre") == "smollm"
        return byte_level_bpe({tok: i for i, tok in enumerate(tokens)}, merges, special, split_digits)
