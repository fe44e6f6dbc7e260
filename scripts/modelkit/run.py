"""Running the models with ONNX Runtime: encoder feeds, a greedy KV-cache decoder and consistency checks."""
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
    pad_id = tok.token_to_id("[PAD]") or 0
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


class Decoder:
    """Greedy generation with a KV-cache decoder exported by modelkit.llama."""

    def __init__(self, sess: ort.InferenceSession):
        self.sess = sess
        self.output_names = [o.name for o in sess.get_outputs()]
        past = [i for i in sess.get_inputs() if i.name.startswith("past_key_values.")]
        self.past_names = [i.name for i in past]
        _, self.kv_heads, _, self.head_dim = past[0].shape

    def empty_past(self, batch: int = 1) -> dict[str, np.ndarray]:
        return {n: np.zeros((batch, self.kv_heads, 0, self.head_dim), np.float32) for n in self.past_names}

    def run(self, ids: np.ndarray, mask: np.ndarray, positions: np.ndarray, past: dict[str, np.ndarray]) -> tuple[np.ndarray, dict]:
        """One forward pass; returns logits and the present values renamed as the next step's past."""
        feed = {"input_ids": ids, "attention_mask": mask, "position_ids": positions, **past}
        out = dict(zip(self.output_names, self.sess.run(None, feed)))
        present = {k.replace("present.", "past_key_values.", 1): v for k, v in out.items() if k.startswith("present.")}
        return out["logits"], present

    def full_logits(self, ids: list[int]) -> np.ndarray:
        n = len(ids)
        logits, _ = self.run(np.array([ids], np.int64), np.ones((1, n), np.int64), np.arange(n, dtype=np.int64)[None], self.empty_past())
        return logits[0]

    def greedy(self, prompt: list[int], eos: int, max_new: int) -> tuple[list[int], bool]:
        """Generated ids (without eos) and whether eos was reached."""
        ids = np.array([prompt], np.int64)
        positions = np.arange(len(prompt), dtype=np.int64)[None]
        past, total, out = self.empty_past(), len(prompt), []
        for _ in range(max_new):
            logits, past = self.run(ids, np.ones((1, total), np.int64), positions, past)
            nxt = int(logits[0, -1].argmax())
            if nxt == eos:
                return out, True
            out.append(nxt)
            ids, positions = np.array([[nxt]], np.int64), np.array([[total]], np.int64)
            total += 1
        return out, False

    def kv_cache_diff(self, ids: list[int]) -> float:
        """Max |logits| difference of the last token: one full pass vs prefill + one cached step."""
        n = len(ids)
        full = self.full_logits(ids)[-1]
        _, past = self.run(np.array([ids[:-1]], np.int64), np.ones((1, n - 1), np.int64),
                           np.arange(n - 1, dtype=np.int64)[None], self.empty_past())
        step, _ = self.run(np.array([ids[-1:]], np.int64), np.ones((1, n), np.int64), np.array([[n - 1]], np.int64), past)
        return float(np.abs(full - step[0, -1]).max())

    def left_padding_diff(self, short: list[int], long: list[int]) -> float:
        """Max |logits| difference for `short` run alone vs left-padded in a batch with `long`."""
        pad = len(long) - len(short)
        ids = np.array([[0] * pad + short, long], np.int64)
        mask = np.array([[0] * pad + [1] * len(short), [1] * len(long)], np.int64)
        positions = np.array([[0] * pad + list(range(len(short))), list(range(len(long)))], np.int64)
        batched, _ = self.run(ids, mask, positions, self.empty_past(2))
        alone = self.full_logits(short)
        return float(np.abs(batched[0, pad:] - alone).max())
