#!/usr/bin/env python3
"""Tunes hybrid fusion on SciFact without re-running svc: replays weighted RRF over the BM25
and vector rankings that `scripts/eval --mode bm25,vector,hybrid --limit 200 --rankings FILE`
wrote, for a grid of RRF k, top-rank bonuses and list weights, and prints nDCG@10,
Recall@100 and MRR@10 for each.

The replay is the rule of worker/src/hybrid.rs `fuse` (no expansion, no reranker):
score(d) = sum over lists of w / (k + rank), plus `top1` when d is first in an original list,
else `topn` when its best original rank is <= n. When the rankings hold svc's own hybrid run,
the first line checks the replay against it (same configuration, same numbers expected up to
ties and the pool size).

Usage: scripts/fusion_grid.py RANKINGS.json [--dataset DIR] [--split train]
Python standard library only; reads ../shared/ (development only).
"""
import argparse
import itertools
import json
import os
import sys

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
from eval import evaluate, load_qrels  # noqa: E402

# svc's configuration (worker/src/hybrid.rs): k, bm25 weight, vector weight, top1, topn, n
SVC = (60, 2.0, 2.0, 0.1, 0.04, 3)


def fuse(bm25, vector, k, w_bm25, w_vec, top1, topn, n):
    scores, best = {}, {}
    for weight, ranked in ((w_bm25, bm25), (w_vec, vector)):
        for i, doc in enumerate(ranked):
            rank = i + 1
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
            best[doc] = min(best.get(doc, rank), rank)
    for doc, rank in best.items():
        scores[doc] += top1 if rank == 1 else topn if rank <= n else 0.0
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def run(modes, qrels, config):
    bm25, vector = modes["bm25"], modes["vector"]
    rankings = {q: fuse(bm25.get(q, []), vector.get(q, []), *config) for q in set(bm25) | set(vector)}
    return evaluate(rankings, qrels)


def row(label, m):
    return f"{label:<44} {m['ndcg@10']:.4f}  {m['recall@100']:.4f}  {m['mrr@10']:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rankings")
    ap.add_argument("--dataset", default=os.path.join(SCRIPTS, "..", "..", "shared", "datasets", "beir-scifact"))
    ap.add_argument("--split", default="train")
    args = ap.parse_args()
    with open(args.rankings, encoding="utf-8") as f:
        modes = json.load(f)["modes"]
    for needed in ("bm25", "vector"):
        if needed not in modes:
            sys.exit(f"{args.rankings} has no {needed} rankings: run scripts/eval --mode bm25,vector,hybrid --rankings FILE")
    qrels = load_qrels(os.path.join(args.dataset, "qrels", f"{args.split}.tsv"))
    print(f"{'configuration':<44} nDCG@10 R@100   MRR@10")
    for mode in ("bm25", "vector", "hybrid"):
        if mode in modes:
            print(row(f"svc {mode} (as run)", evaluate(modes[mode], qrels)))
    print(row("replay of svc's hybrid " + str(SVC), run(modes, qrels, SVC)))
    results = []
    for k, (w_bm25, w_vec), (top1, topn, n) in itertools.product(
            (10, 20, 40, 60, 100),
            ((2.0, 2.0), (2.0, 1.5), (1.5, 2.0), (2.0, 1.0), (1.0, 2.0)),
            ((0.0, 0.0, 0), (0.1, 0.04, 3), (0.1, 0.04, 5), (0.05, 0.02, 3), (0.05, 0.02, 5))):
        config = (k, w_bm25, w_vec, top1, topn, n)
        results.append((run(modes, qrels, config), config))
    results.sort(key=lambda r: -r[0]["ndcg@10"])
    print("best 15 of the grid (k, w_bm25, w_vector, top1, topn, n):")
    for m, config in results[:15]:
        print(row(str(config), m))
    print("worst 3:")
    for m, config in results[-3:]:
        print(row(str(config), m))


if __name__ == "__main__":
    main()
