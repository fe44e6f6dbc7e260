"""Tiny deterministic test models (seeded random weights, < 1 MB each) with the same I/O as the real ones:

  embed/   BERT encoder: last_hidden_state + sentence_embedding       + WordPiece tokenizer.json
  rerank/  BERT cross-encoder: logits [batch, 1]                        + the same tokenizer.json

(The generator is a GGUF file run by llama.cpp; its tests use the real SmolLM2-135M GGUF.)
"""
from __future__ import annotations

import string
from pathlib import Path

import numpy as np

from . import bert, run
from .graph import save_onnx
from .toks import save_tokenizer, wordpiece_bert

SEED = 20240601
BERT_SIZE = dict(hidden=32, heads=4, layers=2, ffn=64, max_positions=512)

COMMON_WORDS = """
the of and to a in is it you that he was for on are with as i his they be at one have this from or had by
not word but what some we can out other were all there when up use your how said an each she which do their
time if will way about many then them write would like so these her long make thing see him two has look more
day could go come did number sound no most people my over know water than call first who may down side been now
find any new work part take get place made live where after back little only round man year came show every good
me give our under name very through just form sentence great think say help low line differ turn cause much mean
before move right boy old too same tell does set three want air well also play small end put home read hand port
large spell add even land here must big high such follow act why ask men change went light kind off need house
picture try us again animal point mother world near build self earth father head stand own page should country
found answer school grow study still learn plant cover food sun four between state keep eye never last let
thought city tree cross farm hard start might story saw far sea draw left late run while press close night real
life few north open seem together next white children begin got walk example ease paper group always music those
both mark often letter until mile river car feet care second book carry took science eat room friend began idea
fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl usual young ready
above ever red list though feel talk bird soon body dog family direct pose leave song measure door product black
short numeral class wind question happen complete ship area half rock order fire south problem piece told knew
pass since top whole king space heard best hour better true during hundred five remember step early hold west
ground interest reach fast verb sing listen six table travel less morning ten simple several vowel toward war lay
against pattern slow center love person money serve appear road map rain rule govern pull cold notice voice
unit power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green quick develop ocean warm
free minute strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel
full force blue object decide surface deep moon island foot system busy test record boat common gold possible
plane age dry wonder laugh thousand ago ran check game shape yes hot miss brought heat snow bed bring sit perhaps
fill east weight language among cat mat kitten rug revenue percent search index document query file text model
""".split()


def bert_vocab() -> list[str]:
    """Specials, single characters (word-initial and ##continuation) and common words: any ASCII text tokenizes."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list(string.ascii_lowercase + string.digits) + list(string.punctuation)
    continuations = ["##" + c for c in string.ascii_lowercase + string.digits]
    vocab = specials + chars + continuations
    seen = set(vocab)
    for word in COMMON_WORDS:
        if word not in seen:
            vocab.append(word)
            seen.add(word)
    return vocab


def _normal(rng: np.random.Generator, *shape: int, std: float) -> np.ndarray:
    return rng.normal(0.0, std, size=shape).astype(np.float32)


def _linear(rng: np.random.Generator, out_dim: int, in_dim: int) -> np.ndarray:
    return _normal(rng, out_dim, in_dim, std=1.0 / np.sqrt(in_dim))


def bert_weights(rng: np.random.Generator, vocab: int, classifier: bool) -> dict[str, np.ndarray]:
    h, f = BERT_SIZE["hidden"], BERT_SIZE["ffn"]
    w = {
        "embeddings.word_embeddings.weight": _normal(rng, vocab, h, std=1.0),
        "embeddings.position_embeddings.weight": _normal(rng, BERT_SIZE["max_positions"], h, std=0.1),
        "embeddings.token_type_embeddings.weight": _normal(rng, 2, h, std=0.1),
    }

    def dense(name: str, out_dim: int, in_dim: int) -> None:
        w[name + ".weight"] = _linear(rng, out_dim, in_dim)
        w[name + ".bias"] = _normal(rng, out_dim, std=0.02)

    def layer_norm(name: str) -> None:
        w[name + ".weight"] = np.ones(h, np.float32)
        w[name + ".bias"] = np.zeros(h, np.float32)

    layer_norm("embeddings.LayerNorm")
    for i in range(BERT_SIZE["layers"]):
        p = f"encoder.layer.{i}."
        for part in ("query", "key", "value"):
            dense(p + "attention.self." + part, h, h)
        dense(p + "attention.output.dense", h, h)
        layer_norm(p + "attention.output.LayerNorm")
        dense(p + "intermediate.dense", f, h)
        dense(p + "output.dense", h, f)
        layer_norm(p + "output.LayerNorm")
    if classifier:
        dense("pooler.dense", h, h)
        dense("classifier", 1, h)
    return w


def make_bert(out: Path, tokenizer, seed: int, classifier: bool) -> None:
    vocab = tokenizer.get_vocab_size()
    cfg = bert.BertConfig(BERT_SIZE["hidden"], BERT_SIZE["heads"], BERT_SIZE["layers"])
    weights = bert_weights(np.random.default_rng(seed), vocab, classifier)
    model = bert.build_bert(cfg, weights, pool="none" if classifier else "mean", classifier=classifier)
    save_onnx(model, out / "model.onnx")
    save_tokenizer(tokenizer, out / "tokenizer.json")


def make_all(out_dir: Path) -> None:
    wordpiece = wordpiece_bert(bert_vocab())
    make_bert(out_dir / "embed", wordpiece, SEED, classifier=False)
    make_bert(out_dir / "rerank", wordpiece, SEED + 1, classifier=True)


# ---- checks ----

def _print_io(sess) -> None:
    for line in run.describe_io(sess):
        print(f"    {line}")


def check_embed(d: Path) -> bool:
    print(f"embed: {d}")
    sess = run.session(d / "model.onnx")
    _print_io(sess)
    tok = run.load_tokenizer(d / "tokenizer.json")
    texts = ["The cat sits on the mat.", "Zebras quickly jumped over 42 fences!", "héllo wörld"]
    feed = run.encoder_feed(tok, texts)
    hidden, emb = sess.run(["last_hidden_state", "sentence_embedding"], feed)
    pool_diff = float(np.abs(run.mean_pool_l2(hidden, feed["attention_mask"]) - emb).max())
    single = sess.run(["sentence_embedding"], run.encoder_feed(tok, texts[:1]))[0]
    pad_diff = float(np.abs(single[0] - emb[0]).max())
    unk = tok.token_to_id("[UNK]")
    return all([
        run.report(hidden.shape == (3, feed["input_ids"].shape[1], 32) and emb.shape == (3, 32),
               f"shapes last_hidden_state {hidden.shape}, sentence_embedding {emb.shape}"),
        run.report(pool_diff < 1e-5, f"in-graph mean pooling == numpy pooling (max diff {pool_diff:.1e})"),
        run.report(pad_diff < 1e-5, f"padding invariance (max diff {pad_diff:.1e})"),
        run.report(unk not in feed["input_ids"], f"no [UNK] in {tok.encode(texts[1]).tokens}"),
    ])


def check_rerank(d: Path) -> bool:
    print(f"rerank: {d}")
    sess = run.session(d / "model.onnx")
    _print_io(sess)
    tok = run.load_tokenizer(d / "tokenizer.json")
    pairs = [("how many people live in berlin", "berlin has many people"), ("how many people live in berlin", "a cat sat")]
    feed = run.encoder_feed(tok, pairs)
    logits = sess.run(["logits"], feed)[0]
    single = sess.run(["logits"], run.encoder_feed(tok, pairs[1:]))[0]
    pad_diff = float(np.abs(single[0] - logits[1]).max())
    return all([
        run.report(logits.shape == (2, 1), f"logits shape {logits.shape}, values {[round(float(v), 4) for v in logits.ravel()]}"),
        run.report(int(feed["token_type_ids"].sum()) > 0, "pair encoding sets token_type_ids 1 on the second text"),
        run.report(pad_diff < 1e-5, f"padding invariance (max diff {pad_diff:.1e})"),
    ])


def check_all(out_dir: Path) -> bool:
    results = [check_embed(out_dir / "embed"), check_rerank(out_dir / "rerank")]
    return all(results)
