#!/usr/bin/env python3
"""Each language's mean passage vector under the `multilingual` preset's embedder.

multilingual-e5-small puts every text of one language near a point of its own: a question
in Chinese lies nearer to every Chinese passage, and to the English passages that lie
nearest to the Chinese ones, than its meaning says. svc takes a part of its language's mean
vector off a query before it searches (worker/src/models/language_means.rs). This script
makes those means, once, from text that is neither notes nor an evaluation set: the message
catalogues Debian ships for its programs (/usr/share/locale/<ll>/LC_MESSAGES/*.mo), their
translations for each language and their English originals for English. Strings are joined
into passages of about 1,200 characters (svc's chunks), embedded as passages ("passage: "),
and averaged, up to MAX_PASSAGES per language; a language with fewer than MIN_PASSAGES is
left out (its queries take the mean of every language's).

  .venv/bin/python scripts/language_means.py --model DIR --out worker/data/e5-language-means.bin

DIR holds `onnx/model_qint8.onnx` and `tokenizer.json` (scripts/models multilingual puts them in
the model cache's `models/intfloat/multilingual-e5-small`). The file: for each language, sorted
by whatlang's code, its ISO 639-1 code (2 ASCII bytes), whatlang's ISO 639-3 code (3 bytes) and
DIM little-endian float32s.
"""
from __future__ import annotations

import argparse
import gettext
import random
import struct
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

LOCALE = Path("/usr/share/locale")
DIM = 384
PASSAGE_CHARS = 1200
MAX_PASSAGES = 250
MIN_PASSAGES = 40
MAX_TOKENS = 256  # as svc's encoder cuts every text (worker/src/models/encoder.rs)
# Debian's locale names (their language part) to whatlang's codes, for the languages both know.
WHATLANG = {
    "af": "afr", "am": "amh", "ar": "ara", "az": "aze", "be": "bel", "bg": "bul", "bn": "ben",
    "ca": "cat", "cs": "ces", "da": "dan", "de": "deu", "el": "ell", "eo": "epo", "es": "spa",
    "et": "est", "fa": "pes", "fi": "fin", "fr": "fra", "gu": "guj", "he": "heb", "hi": "hin",
    "hr": "hrv", "hu": "hun", "hy": "hye", "id": "ind", "it": "ita", "ja": "jpn", "jv": "jav",
    "ka": "kat", "km": "khm", "kn": "kan", "ko": "kor", "la": "lat", "lt": "lit", "lv": "lav",
    "mk": "mkd", "ml": "mal", "mr": "mar", "my": "mya", "nb": "nob", "ne": "nep", "nl": "nld",
    "or": "ori", "pa": "pan", "pl": "pol", "pt": "por", "ro": "ron", "ru": "rus", "si": "sin",
    "sk": "slk", "sl": "slv", "sr": "srp", "sv": "swe", "ta": "tam", "te": "tel", "th": "tha",
    "tk": "tuk", "tl": "tgl", "tr": "tur", "uk": "ukr", "ur": "urd", "uz": "uzb", "vi": "vie",
    "yi": "yid", "zh": "cmn", "zu": "zul",
}


def catalogue_strings(folder: Path, originals: bool) -> list[str]:
    """The translated strings of every catalogue in `folder` (or their English originals)."""
    out = []
    for mo in sorted(folder.glob("*.mo")):
        try:
            with mo.open("rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except Exception:  # noqa: BLE001 - a catalogue Python cannot read is skipped
            continue
        for key, value in catalog.items():
            key = key[0] if isinstance(key, tuple) else key
            if key and value:
                out.append(key if originals else value)
    return out


def passages(strings: list[str], seed: int) -> list[str]:
    strings = sorted({" ".join(s.split()) for s in strings if len(s.strip()) >= 20})
    random.Random(seed).shuffle(strings)
    out, current = [], ""
    for s in strings:
        if current and len(current) + len(s) > PASSAGE_CHARS:
            out.append(current)
            current = ""
            if len(out) == MAX_PASSAGES:
                break
        current = f"{current} {s}" if current else s
    return out


class Encoder:
    def __init__(self, model: Path):
        self.tok = Tokenizer.from_file(str(model / "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(str(model / "onnx" / "model_qint8.onnx"), options)

    def mean(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """The mean of the texts' unit vectors (mean pooling, as svc's encoder)."""
        total = np.zeros(DIM, dtype=np.float64)
        for start in range(0, len(texts), batch):
            enc = self.tok.encode_batch(texts[start:start + batch])
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), np.int64)
            mask = np.zeros_like(ids)
            for i, e in enumerate(enc):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            total += (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).sum(0)
        return (total / len(texts)).astype(np.float32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    short = {code: two for two, code in WHATLANG.items()}
    short["eng"] = "en"
    strings: dict[str, list[str]] = {"eng": []}
    for folder in sorted(LOCALE.glob("*/LC_MESSAGES")):
        name = folder.parent.name
        code = WHATLANG.get(name.split("_")[0].split("@")[0].split(".")[0])
        if code is None or "@" in name:
            continue
        strings.setdefault(code, []).extend(catalogue_strings(folder, originals=False))
        if len(strings["eng"]) < 200_000:
            strings["eng"].extend(catalogue_strings(folder, originals=True))
    encoder = Encoder(args.model)
    rows = []
    for code in sorted(strings):
        texts = passages(strings[code], args.seed)
        if len(texts) < MIN_PASSAGES:
            print(f"{code}: {len(texts)} passages, left out", file=sys.stderr)
            continue
        mean = encoder.mean([f"passage: {t}" for t in texts])
        rows.append((short[code] + code).encode("ascii") + struct.pack(f"<{DIM}f", *mean))
        print(f"{code}: {len(texts)} passages, |mean| {np.linalg.norm(mean):.3f}", file=sys.stderr)
    args.out.write_bytes(b"".join(rows))
    print(f"{args.out}: {len(rows)} languages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
