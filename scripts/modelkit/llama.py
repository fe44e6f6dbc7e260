"""Llama-architecture decoder with KV cache as one ONNX graph ("merged" decoder: the past may be empty,
so the same model does prefill and decode). I/O follows the HF/optimum convention:

Inputs  input_ids       int64 [batch, seq]
        attention_mask  int64 [batch, total_seq]        (total_seq = past_seq + seq; 0 = padding)
        position_ids    int64 [batch, seq]
        past_key_values.{i}.key / .value  float [batch, kv_heads, past_seq, head_dim]
Outputs logits          float [batch, seq, vocab]
        present.{i}.key / .value          float [batch, kv_heads, total_seq, head_dim]

The causal mask is built in the graph from attention_mask and the past length (total_seq - seq).
Weights use HF names (model.layers.{i}.self_attn.q_proj.weight, ...; q/k in rotate-half layout).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import onnx

from .graph import BOOL, FLOAT, INT64, GraphBuilder


@dataclass(frozen=True)
class LlamaConfig:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    rms_eps: float = 1e-5
    rope_theta: float = 10000.0
    tied_embeddings: bool = True

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


def _rms_norm(g: GraphBuilder, x: str, weight: np.ndarray, name: str, eps: float) -> str:
    mean_sq = g.op("ReduceMean", [g.op("Mul", [x, x])], axes=[-1], keepdims=1)
    inv_rms = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [mean_sq, g.const(eps, np.float32)])])])
    return g.op("Mul", [g.op("Mul", [x, inv_rms]), g.weight(name, weight)])


def _project(g: GraphBuilder, x: str, weight: np.ndarray, name: str) -> str:
    """x @ W^T for an HF Linear weight W [out, in] (no bias in llama)."""
    return g.op("MatMul", [x, g.weight(name, np.asarray(weight, np.float32).T)])


def _rotary_tables(g: GraphBuilder, cfg: LlamaConfig) -> tuple[str, str]:
    """cos/sin [batch, 1, seq, head_dim] from position_ids (HF rotate-half layout)."""
    d = cfg.head_dim
    inv_freq = (1.0 / cfg.rope_theta ** (np.arange(0, d, 2, dtype=np.float64) / d)).astype(np.float32)
    pos = g.op("Unsqueeze", [g.op("Cast", ["position_ids"], to=FLOAT), g.const([-1])])
    freqs = g.op("Mul", [pos, g.const(inv_freq, np.float32)])
    angles = g.op("Unsqueeze", [g.op("Concat", [freqs, freqs], axis=-1), g.const([1])])
    return g.op("Cos", [angles]), g.op("Sin", [angles])


def _apply_rope(g: GraphBuilder, t: str, cos: str, sin: str) -> str:
    first, second = g.op_multi("Split", [t], 2, axis=-1)
    rotated = g.op("Concat", [g.op("Neg", [second]), first], axis=-1)
    return g.op("Add", [g.op("Mul", [t, cos]), g.op("Mul", [rotated, sin])])


def _attention_bias(g: GraphBuilder) -> str:
    """Additive mask [batch, 1, seq, total_seq]: query i (at past_len + i) sees key j iff j <= past_len + i
    and attention_mask[b, j] == 1."""
    total_len = g.op("Gather", [g.op("Shape", ["attention_mask"]), g.const(1)], axis=0)
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const(1)], axis=0)
    past_len = g.op("Sub", [total_len, seq_len])
    key_pos = g.op("Range", [g.const(0), total_len, g.const(1)])
    query_pos = g.op("Add", [g.op("Range", [g.const(0), seq_len, g.const(1)]), past_len])
    causal = g.op("LessOrEqual", [key_pos, g.op("Unsqueeze", [query_pos, g.const([1])])])
    not_pad = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=BOOL), g.const([1, 2])])
    allowed = g.op("And", [causal, not_pad])
    return g.op("Where", [allowed, g.const(0.0, np.float32), g.const(-1e9, np.float32)])


def _split_heads(g: GraphBuilder, t: str, heads: int, head_dim: int) -> str:
    """[batch, seq, heads*head_dim] -> [batch, heads, seq, head_dim]"""
    return g.op("Transpose", [g.op("Reshape", [t, g.const([0, 0, heads, head_dim])])], perm=[0, 2, 1, 3])


def _repeat_kv(g: GraphBuilder, t: str, cfg: LlamaConfig) -> str:
    """GQA: [batch, kv_heads, T, D] -> [batch, heads, T, D], each kv head repeated (HF repeat_kv order)."""
    rep = cfg.heads // cfg.kv_heads
    if rep == 1:
        return t
    expanded = g.op("Expand", [g.op("Unsqueeze", [t, g.const([2])]), g.const([1, 1, rep, 1, 1])])
    return g.op("Reshape", [expanded, g.const([0, cfg.heads, -1, cfg.head_dim])])


def _attention(g: GraphBuilder, w: Mapping[str, np.ndarray], cfg: LlamaConfig, x: str, rope: tuple[str, str], bias: str, i: int) -> str:
    p = f"model.layers.{i}.self_attn."
    d = cfg.head_dim
    q = _split_heads(g, _project(g, x, w[p + "q_proj.weight"], f"l{i}.q_proj"), cfg.heads, d)
    k = _split_heads(g, _project(g, x, w[p + "k_proj.weight"], f"l{i}.k_proj"), cfg.kv_heads, d)
    v = _split_heads(g, _project(g, x, w[p + "v_proj.weight"], f"l{i}.v_proj"), cfg.kv_heads, d)
    q, k = _apply_rope(g, q, *rope), _apply_rope(g, k, *rope)

    past_k = g.add_input(f"past_key_values.{i}.key", FLOAT, ["batch", cfg.kv_heads, "past_seq", d])
    past_v = g.add_input(f"past_key_values.{i}.value", FLOAT, ["batch", cfg.kv_heads, "past_seq", d])
    k = g.op("Concat", [past_k, k], g.add_output(f"present.{i}.key", FLOAT, ["batch", cfg.kv_heads, "total_seq", d]), axis=2)
    v = g.op("Concat", [past_v, v], g.add_output(f"present.{i}.value", FLOAT, ["batch", cfg.kv_heads, "total_seq", d]), axis=2)

    scores = g.op("MatMul", [q, g.op("Transpose", [_repeat_kv(g, k, cfg)], perm=[0, 1, 3, 2])])
    scores = g.op("Add", [g.op("Mul", [scores, g.const(1.0 / np.sqrt(d), np.float32)]), bias])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), _repeat_kv(g, v, cfg)])
    context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), g.const([0, 0, cfg.heads * d])])
    return _project(g, context, w[p + "o_proj.weight"], f"l{i}.o_proj")


def _mlp(g: GraphBuilder, w: Mapping[str, np.ndarray], x: str, i: int) -> str:
    """SwiGLU: down(silu(gate(x)) * up(x))"""
    p = f"model.layers.{i}.mlp."
    gate = _project(g, x, w[p + "gate_proj.weight"], f"l{i}.gate_proj")
    up = _project(g, x, w[p + "up_proj.weight"], f"l{i}.up_proj")
    silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    return _project(g, g.op("Mul", [silu, up]), w[p + "down_proj.weight"], f"l{i}.down_proj")


def _decoder_layer(g: GraphBuilder, w: Mapping[str, np.ndarray], cfg: LlamaConfig, x: str, rope: tuple[str, str], bias: str, i: int) -> str:
    p = f"model.layers.{i}."
    h = _rms_norm(g, x, w[p + "input_layernorm.weight"], f"l{i}.input_layernorm", cfg.rms_eps)
    x = g.op("Add", [x, _attention(g, w, cfg, h, rope, bias, i)])
    h = _rms_norm(g, x, w[p + "post_attention_layernorm.weight"], f"l{i}.post_attention_layernorm", cfg.rms_eps)
    return g.op("Add", [x, _mlp(g, w, h, i)])


def _lm_head(g: GraphBuilder, w: Mapping[str, np.ndarray], cfg: LlamaConfig, x: str, embed: str, output: str) -> str:
    if not cfg.tied_embeddings:
        return g.op("MatMul", [x, g.weight("lm_head_T", np.asarray(w["lm_head.weight"], np.float32).T)], output)
    # Tied: reuse the embedding matrix through Gemm(transB=1) on a 2-D view, no second copy of the weights.
    flat = g.op("Reshape", [x, g.const([-1, cfg.hidden])])
    logits = g.op("Gemm", [flat, embed], transB=1)
    shape = g.op("Concat", [g.op("Shape", ["input_ids"]), g.const([cfg.vocab])], axis=0)
    return g.op("Reshape", [logits, shape], output)


def build_llama(cfg: LlamaConfig, w: Mapping[str, np.ndarray], metadata: dict[str, str] | None = None,
                next_token_bias: np.ndarray | None = None) -> onnx.ModelProto:
    """`next_token_bias` [vocab, vocab] (test models only): logits += next_token_bias[input_ids]."""
    g = GraphBuilder()
    g.add_input("input_ids", INT64, ["batch", "seq"])
    g.add_input("attention_mask", INT64, ["batch", "total_seq"])
    g.add_input("position_ids", INT64, ["batch", "seq"])

    embed = g.weight("model.embed_tokens.weight", w["model.embed_tokens.weight"])
    x = g.op("Gather", [embed, "input_ids"], axis=0)
    rope = _rotary_tables(g, cfg)
    bias = _attention_bias(g)
    for i in range(cfg.layers):
        x = _decoder_layer(g, w, cfg, x, rope, bias, i)
    x = _rms_norm(g, x, w["model.norm.weight"], "model.norm", cfg.rms_eps)

    if next_token_bias is None:
        _lm_head(g, w, cfg, x, embed, "logits")
    else:
        table = g.weight("next_token_bias", next_token_bias)
        g.op("Add", [_lm_head(g, w, cfg, x, embed, None), g.op("Gather", [table, "input_ids"], axis=0)], "logits")
    # Outputs: logits first, then the present.* values in layer order.
    g.outputs.insert(0, onnx.helper.make_tensor_value_info("logits", FLOAT, ["batch", "seq", cfg.vocab]))
    return g.build("llama", "svc-modelkit", metadata)
