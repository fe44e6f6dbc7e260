"""Running the models with ONNX Runtime: encoder feeds and consistency checks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def report(ok: bool, what: str) -> bool:
    """Prints one check result line and returns `ok`."""
    print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    return ok


def session(path: Path, threads: int = 1) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def describe_io(sess: ort.InferenceSession) -> list[str]:
    """One line per graph input/output: name, element type and shape."""
    def line(kind: str, arg) -> str:
        return f"{kind} {arg.name}: {arg.type.removeprefix('tensor(').removesuffix(')')} {arg.shape}"
    return [line("in ", a) for a in sess.get_inputs()] + [line("out", a) for a in sess.get_outputs()]


def load_tokenizer(path: Path, max_length: int = 256) -> Tokenizer:
    """The tokenizer with batch-longest padding and truncation (overriding any built into the json)."""
    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length)
    pad_id = next((i for i in (tok.token_to_id(t) for t in ("[PAD]", "<pad>")) if i is not None), 0)
    tok.enable_padding(pad_id=pad_id, pad_token=tok.id_to_token(pad_id))
    return tok


def encoder_feed(tok: Tokenizer, inputs: list) -> dict[str, np.ndarray]:
    """input_ids / attention_mask / token_type_ids for texts or (text, text) pairs."""
    enc = tok.encode_batch(inputs)
    return {
        "input_ids": np.array([e.ids for e in enc], np.int64),
        "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
        "token_type_ids": np.array([e.type_ids for e in enc], np.int64),
    }


def mean_pool_l2(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[..., None].astype(np.float32)
    pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
