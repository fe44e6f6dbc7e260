"""tokenizer.json builders: BERT WordPiece."""
from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from .files import write_bytes_atomic

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
