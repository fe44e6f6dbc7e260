"""tokenizer.json builders: byte-level BPE (GPT-2 style) and BERT WordPiece."""
from __future__ import annotations

from collections import Counter

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from .files import write_bytes_atomic


def byte_level_bpe(vocab: dict[str, int], merges: list[tuple[str, str]], special: list[str], split_digits: bool = False) -> Tokenizer:
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if split_digits:
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in special])
    return tok


def byte_alphabet() -> list[str]:
    """GPT-2's printable stand-ins for the 256 byte values, in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = [], 0
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def learn_bpe_merges(corpus: str, count: int) -> list[tuple[str, str]]:
    """A deterministic BPE learner for small corpora: most frequent pair first, ties broken by the pair itself."""
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    words = Counter(tuple(piece) for piece, _ in pre.pre_tokenize_str(corpus))
    merges: list[tuple[str, str]] = []
    for _ in range(count):
        pairs: Counter = Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += freq
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        words = Counter({_merge_pair(word, best): freq for word, freq in words.items()})
    return merges


def _merge_pair(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def wordpiece_bert(vocab: list[str]) -> Tokenizer:
    """Lowercasing BERT WordPiece; `vocab` must start with [PAD], [UNK], [CLS], [SEP], [MASK]."""
    ids = {tok: i for i, tok in enumerate(vocab)}
    tok = Tokenizer(models.WordPiece(vocab=ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    return tok


def save_tokenizer(tokenizer: Tokenizer, path) -> None:
    write_bytes_atomic(path, tokenizer.to_str(pretty=True).encode("utf-8"))
