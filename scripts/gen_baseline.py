#!/usr/bin/env python3
"""Decode speed of the default generator on plain ONNX Runtime, for scripts/bench: greedy
decoding with the KV cache (the same merged-decoder I/O svc feeds), 2 intra-op threads, a
prompt of the given number of tokens. Prints one JSON line {prompt_tokens, tokens, decode_tok_s,
prefill_ms}. Run with the venv of scripts/ort-env (numpy, onnxruntime, tokenizers)."""
import argparse
import json
import os
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True, help="holds onnx/model.onnx and tokenizer.json")
    ap.add_argument("--prompt-tokens", type=int, required=True)
    ap.add_argument("--tokens", type=int, default=128)
    args = ap.parse_args()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(os.path.join(args.model_dir, "onnx", "model.onnx"), opts,
                                providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(os.path.join(args.model_dir, "tokenizer.json"))
    text = "Sources: the notes say many things about many topics, in many words. " * 200
    ids = tok.encode(text).ids[: args.prompt_tokens]
    inputs = {i.name: i for i in sess.get_inputs()}
    layers = sum(1 for n in inputs if n.startswith("past_key_values.") and n.endswith(".key"))
    shape = inputs["past_key_values.0.key"].shape
    heads, head_dim = shape[1], shape[3]
    past = {f"past_key_values.{i}.{k}": np.zeros((1, heads, 0, head_dim), np.float32)
            for i in range(layers) for k in ("key", "value")}
    step, total, made = list(ids), 0, 0
    t_prefill = None
    t0 = time.perf_counter()
    while made < args.tokens:
        feed = {"input_ids": np.array([step], np.int64),
                "attention_mask": np.ones((1, total + len(step)), np.int64), **past}
        if "position_ids" in inputs:
            feed["position_ids"] = np.arange(total, total + len(step), dtype=np.int64)[None, :]
        out = sess.run(None, feed)
        names = [o.name for o in sess.get_outputs()]
        logits = out[names.index("logits")]
        nxt = int(np.argmax(logits[0, -1]))
        for i in range(layers):
            for k in ("key", "value"):
                past[f"past_key_values.{i}.{k}"] = out[names.index(f"present.{i}.{k}")]
        total += len(step)
        step = [nxt]
        made += 1
        if t_prefill is None:
            t_prefill = time.perf_counter()
    t1 = time.perf_counter()
    print(json.dumps({"prompt_tokens": len(ids), "tokens": made,
                      "decode_tok_s": (made - 1) / (t1 - t_prefill) if made > 1 else None,
                      "prefill_ms": (t_prefill - t0) * 1000.0}))


if __name__ == "__main__":
    main()
