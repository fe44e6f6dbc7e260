"""BERT encoder (HF BertModel / BertForSequenceClassification weights) as an ONNX graph.

Inputs  input_ids, attention_mask, token_type_ids: int64 [batch, sequence]
Attention is either the plain ONNX ops (MatMul, Softmax...) or ONNX Runtime's fused `Attention`
contrib op (com.microsoft domain, `fused_attention=True`): one packed QKV projection and one kernel
per layer, which `quantize_dynamic` turns into `QAttention` (int8 projection).

Outputs last_hidden_state float [batch, sequence, hidden]
        sentence_embedding float [batch, hidden]   (pool="mean": masked mean + L2 norm)
        logits float [batch, num_labels]           (classifier=True: cross-encoder head)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import onnx

from .graph import FLOAT, INT32, INT64, GraphBuilder

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
CONTRIB_DOMAIN = "com.microsoft"


@dataclass(frozen=True)
class BertConfig:
    hidden: int
    heads: int
    layers: int
    eps: float = 1e-12

    @classmethod
    def from_hf(cls, cfg: dict) -> "BertConfig":
        return cls(cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg.get("layer_norm_eps", 1e-12))

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


class _Weights:
    """Looks names up with or without the `bert.` prefix of *ForSequenceClassification checkpoints."""

    def __init__(self, tensors: Mapping[str, np.ndarray]):
        self.tensors = tensors

    def __getitem__(self, name: str) -> np.ndarray:
        for key in (name, "bert." + name):
            if key in self.tensors:
                return np.asarray(self.tensors[key], dtype=np.float32)
        raise KeyError(f"weight {name!r} not found in the checkpoint")


def _linear(g: GraphBuilder, w: _Weights, x: str, prefix: str) -> str:
    weight = g.weight(prefix + ".weight_T", w[prefix + ".weight"].T)
    bias = g.weight(prefix + ".bias", w[prefix + ".bias"])
    return g.op("Add", [g.op("MatMul", [x, weight]), bias])


def _layer_norm(g: GraphBuilder, w: _Weights, x: str, prefix: str, eps: float) -> str:
    gamma = g.weight(prefix + ".weight", w[prefix + ".weight"])
    beta = g.weight(prefix + ".bias", w[prefix + ".bias"])
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)


def _gelu(g: GraphBuilder, x: str) -> str:
    """Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))."""
    erf = g.op("Erf", [g.op("Div", [x, g.const(np.sqrt(2.0), np.float32)])])
    return g.op("Mul", [g.op("Mul", [x, g.const(0.5, np.float32)]), g.op("Add", [erf, g.const(1.0, np.float32)])])


def _embeddings(g: GraphBuilder, w: _Weights, cfg: BertConfig) -> str:
    words = g.op("Gather", [g.weight("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"], axis=0)
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const(1)], axis=0)
    positions = g.op("Range", [g.const(0), seq_len, g.const(1)])
    pos = g.op("Gather", [g.weight("position_embeddings", w["embeddings.position_embeddings.weight"]), positions], axis=0)
    types = g.op("Gather", [g.weight("token_type_embeddings", w["embeddings.token_type_embeddings.weight"]), "token_type_ids"], axis=0)
    summed = g.op("Add", [g.op("Add", [words, pos]), types])
    return _layer_norm(g, w, summed, "embeddings.LayerNorm", cfg.eps)


def _attention_bias(g: GraphBuilder, mask_f: str) -> str:
    """Additive mask [batch, 1, 1, sequence]: 0 where attended, -1e9 at padding."""
    bias = g.op("Mul", [g.op("Sub", [g.const(1.0, np.float32), mask_f]), g.const(-1e9, np.float32)])
    return g.op("Unsqueeze", [bias, g.const([1, 2])])


def _self_attention(g: GraphBuilder, w: _Weights, cfg: BertConfig, x: str, bias: str, prefix: str) -> str:
    def split_heads(t: str) -> str:
        return g.op("Transpose", [g.op("Reshape", [t, g.const([0, 0, cfg.heads, cfg.head_dim])])], perm=[0, 2, 1, 3])

    q = split_heads(_linear(g, w, x, prefix + "query"))
    k = split_heads(_linear(g, w, x, prefix + "key"))
    v = split_heads(_linear(g, w, x, prefix + "value"))
    scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    scores = g.op("Add", [g.op("Mul", [scores, g.const(1.0 / np.sqrt(cfg.head_dim), np.float32)]), bias])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    return g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), g.const([0, 0, cfg.hidden])])


def _fused_self_attention(g: GraphBuilder, w: _Weights, cfg: BertConfig, x: str, mask_i32: str, prefix: str) -> str:
    """com.microsoft `Attention`: Q, K and V weights packed as [hidden, 3 * hidden], the raw
    [batch, sequence] mask (1 attended, 0 padding) as mask_index."""
    names = ("query", "key", "value")
    weight = g.weight(prefix + "qkv.weight_T", np.concatenate([w[prefix + n + ".weight"].T for n in names], axis=1))
    bias = g.weight(prefix + "qkv.bias", np.concatenate([w[prefix + n + ".bias"] for n in names]))
    return g.op("Attention", [x, weight, bias, mask_i32], domain=CONTRIB_DOMAIN, num_heads=cfg.heads)


def _encoder_layer(g: GraphBuilder, w: _Weights, cfg: BertConfig, x: str, mask: str, i: int, fused: bool) -> str:
    """mask: the additive bias of `_attention_bias`, or the int32 mask for the fused op."""
    p = f"encoder.layer.{i}."
    if fused:
        context = _fused_self_attention(g, w, cfg, x, mask, p + "attention.self.")
    else:
        context = _self_attention(g, w, cfg, x, mask, p + "attention.self.")
    x = _layer_norm(g, w, g.op("Add", [_linear(g, w, context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm", cfg.eps)
    hidden = _gelu(g, _linear(g, w, x, p + "intermediate.dense"))
    return _layer_norm(g, w, g.op("Add", [_linear(g, w, hidden, p + "output.dense"), x]), p + "output.LayerNorm", cfg.eps)


def _mean_pool_l2(g: GraphBuilder, x: str, mask_f: str, output: str) -> str:
    mask3 = g.op("Unsqueeze", [mask_f, g.const([2])])
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), g.const([1])], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [mask3, g.const([1])], keepdims=0), g.const(1e-9, np.float32)])
    pooled = g.op("Div", [summed, count])
    norm = g.op("Max", [g.op("ReduceL2", [pooled], axes=[-1], keepdims=1), g.const(1e-12, np.float32)])
    return g.op("Div", [pooled, norm], output)


def _first_token(g: GraphBuilder, x: str) -> str:
    """x[:, 0, :]"""
    return g.op("Gather", [x, g.const(0)], axis=1)


def _classifier(g: GraphBuilder, w: _Weights, x: str, output: str) -> str:
    """BertForSequenceClassification head: tanh(pooler(x[:, 0])) @ classifier."""
    pooled = g.op("Tanh", [_linear(g, w, _first_token(g, x), "pooler.dense")])
    weight = g.weight("classifier.weight_T", w["classifier.weight"].T)
    return g.op("Gemm", [pooled, weight, g.weight("classifier.bias", w["classifier.bias"])], output)


def build_bert(cfg: BertConfig, tensors: Mapping[str, np.ndarray], pool: str = "mean", classifier: bool = False,
               fused_attention: bool = False) -> onnx.ModelProto:
    """pool: "mean" adds `sentence_embedding`, "none" leaves it out; classifier adds `logits`;
    fused_attention: ONNX Runtime's `Attention` op instead of the plain ops."""
    w = _Weights(tensors)
    g = GraphBuilder()
    for name in INPUTS:
        g.add_input(name, INT64, ["batch", "sequence"])
    mask_f = g.op("Cast", ["attention_mask"], to=FLOAT)
    mask = g.op("Cast", ["attention_mask"], to=INT32) if fused_attention else _attention_bias(g, mask_f)
    x = _embeddings(g, w, cfg)
    for i in range(cfg.layers):
        x = _encoder_layer(g, w, cfg, x, mask, i, fused_attention)

    g.op("Identity", [x], "last_hidden_state")
    g.add_output("last_hidden_state", FLOAT, ["batch", "sequence", cfg.hidden])
    if pool == "mean":
        _mean_pool_l2(g, x, mask_f, "sentence_embedding")
        g.add_output("sentence_embedding", FLOAT, ["batch", cfg.hidden])
    elif pool != "none":
        raise ValueError(f"unknown pooling {pool!r}")
    if classifier:
        _classifier(g, w, x, "logits")
        g.add_output("logits", FLOAT, ["batch", int(w["classifier.weight"].shape[0])])
    return g.build("bert", "svc-modelkit", domains=(CONTRIB_DOMAIN,) if fused_attention else ())
