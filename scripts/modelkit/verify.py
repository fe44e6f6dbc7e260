"""Sanity checks of the embedder in ONNX Runtime (the generators' GGUF files are checked by size and
SHA-256 when they are assembled)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import run
from .preset import EMBED_FILE

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


def verify(models: Path, only: str | None, threads: int) -> bool:
    checks = (
        ("embed", models / "sentence-transformers" / "all-MiniLM-L6-v2", verify_embedder),
    )
    ok = True
    for name, repo_dir, check in checks:
        if only and name != only:
            continue
        missing = [str(p) for p in (repo_dir / EMBED_FILE, repo_dir / "tokenizer.json") if not p.is_file()]
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
