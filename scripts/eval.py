#!/usr/bin/env python3
"""Retrieval quality of svc on BEIR SciFact (train split): nDCG@10, Recall@100, MRR@10
(`--mode ask`: answer quality of /api/ask, see scripts/eval_ask.py; `--mode ask-docs`: answers on
real documents, see scripts/eval_docs.py; `--mode code`: code search on real Rust sources, see
scripts/eval_code.py).

Converts the corpus to Markdown in a temp dir, indexes it in-process with the CLI
(`svc collection add DIR --name scifact`, no server), then runs every query in one process with
`svc <search command> --batch --json --limit 100 --collection scifact` (JSON lines in and out).
The metric definitions are those of shared/datasets/beir-scifact/bm25_check.py, whose own BM25
scores nDCG@10 0.6947, Recall@100 0.9276, MRR@10 0.6636 on this split.
Normally run through scripts/eval (which builds the release binary). Python standard library only.
"""
import argparse
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
import scifact_to_md  # noqa: E402
from svclib import default_cache_dir, run_svc  # noqa: E402
from scifact_to_md import load_qrels, load_queries, uri_to_id  # noqa: E402,F401  (fusion_grid uses them too)

COLLECTION = "scifact"

# mode -> CLI subcommand; all share the batch interface
# (stdin: {"id","query"} lines; stdout: {"id","results":[{"uri","score",...}]} lines, input order).
MODES = {
    "bm25": ["search"],
    "vector": ["vsearch"],
    # expansion with the generator is off by default; `--expand` turns it on
    "hybrid": ["query"],
}
NEEDS_VECTORS = {"vector", "hybrid"}


# ---------------------------------------------------------------- data


# ---------------------------------------------------------------- metrics (as bm25_check.py)

def ndcg_at(ranked, rel, k=10):
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(r + 2) for r, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg else 0


def recall_at(ranked, rel, k=100):
    positives = len([1 for v in rel.values() if v > 0])
    return len([d for d in ranked[:k] if rel.get(d, 0) > 0]) / positives if positives else 0


def mrr_at(ranked, rel, k=10):
    return next((1 / (i + 1) for i, d in enumerate(ranked[:k]) if rel.get(d, 0) > 0), 0)


def evaluate(rankings, qrels):
    """Mean metrics over the queries that have qrels; a query with no ranking counts as zero."""
    nd, r100, mrr = [], [], []
    for q, rel in qrels.items():
        ranked = rankings.get(q, [])
        nd.append(ndcg_at(ranked, rel, 10))
        r100.append(recall_at(ranked, rel, 100))
        mrr.append(mrr_at(ranked, rel, 10))
    n = len(qrels)
    return {"ndcg@10": sum(nd) / n, "recall@100": sum(r100) / n, "mrr@10": sum(mrr) / n, "queries": n}


# ---------------------------------------------------------------- svc CLI


def index_corpus(binary, env, md_dir):
    t0 = time.perf_counter()
    run_svc(binary, env, ["collection", "add", md_dir, "--name", COLLECTION])
    return time.perf_counter() - t0


def run_queries(binary, env, mode, queries, limit):
    """Run all queries in one batch process. Returns ({query id: [corpus ids]}, seconds, warnings)."""
    stdin_text = "".join(json.dumps({"id": qid, "query": text}) + "\n" for qid, text in queries)
    t0 = time.perf_counter()
    out = run_svc(binary, env, MODES[mode] + ["--batch", "--json", "--limit", str(limit),
                                              "--collection", COLLECTION], stdin_text).stdout
    seconds = time.perf_counter() - t0
    rankings, order, dup, failed = {}, [], 0, []
    for line in out.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        qid = str(row["id"])
        order.append(qid)
        if row.get("error"):
            failed.append(f"{qid}: {row['error'].get('code')} {row['error'].get('message', '')[:80]}")
        ranked, seen = [], set()
        for hit in row.get("results", []):
            doc = uri_to_id(hit["uri"])
            if doc in seen:  # several chunks of one document: keep its best rank only
                dup += 1
                continue
            seen.add(doc)
            ranked.append(doc)
        rankings[qid] = ranked
    warnings = []
    if order != [qid for qid, _ in queries]:
        warnings.append(f"output ids differ from input order ({len(order)} lines for {len(queries)} queries)")
    if dup:
        warnings.append(f"{dup} duplicate documents in result lists (dropped)")
    if failed:
        warnings.append(f"{len(failed)} queries failed (scored as empty): " + "; ".join(failed[:3]))
    return rankings, seconds, warnings


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="bm25",
                    help="comma-separated modes from: " + ", ".join(sorted(MODES)) + " (one index, embedded once); "
                         "or `ask`: answer quality of /api/ask on SciFact (scripts/eval_ask.py); "
                         "or `ask-docs`: answer quality on the cargo registry's Markdown (scripts/eval_docs.py)")
    ap.add_argument("--presets", default="fast,small,default", help="ask-docs: the presets asked, in order")
    ap.add_argument("--preset", help="bm25/vector/hybrid: the preset made active before indexing (its embedder)")
    ap.add_argument("--verbose", action="store_true", help="ask-docs: print every answer")
    ap.add_argument("--set", default="ask-docs",
                    help="ask-docs: the question set: ask-docs (cargo registry Markdown), rustdocs "
                         "(../shared/datasets/rustdocs-ask) or a folder with build.sh and questions.jsonl")
    ap.add_argument("--answers", metavar="FILE", help="ask-docs: write every reply (raw and verified) as JSON")
    ap.add_argument("--rescore", metavar="FILE",
                    help="ask-docs: score the replies an earlier run saved with --answers FILE again, without a "
                         "server (with --no-build), and print the report")
    ap.add_argument("--sample", type=int, default=100, help="ask: claims asked")
    ap.add_argument("--seed", type=int, default=7, help="ask: the sample's seed")
    ap.add_argument("--distractors", type=int, default=1000, help="ask: abstracts indexed besides the relevant ones")
    ap.add_argument("--max-answer-tokens", type=int, default=128, help="ask: maxAnswerTokens")
    ap.add_argument("--phases", default="raw,verified,held-out",
                    help="ask: which runs (raw and verified on the full index, verified without the relevant abstracts); "
                         "ask-docs: raw, verified or both")
    ap.add_argument("--expand", action="store_true", help="hybrid: let the generator add query variants")
    ap.add_argument("--cache", default=default_cache_dir(), help="svc cache dir holding models/ (default: the user's)")
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "svc"))
    ap.add_argument("--dataset", default=os.path.join(REPO, "..", "shared", "datasets", "beir-scifact"))
    ap.add_argument("--split", default="train", help="qrels/<split>.tsv")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    ap.add_argument("--rankings", metavar="FILE",
                    help="also write each mode's ranked corpus ids per query as JSON (input of scripts/fusion_grid.py)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (Markdown, index)")
    ap.add_argument("--reuse", metavar="DIR",
                    help="score the index of a kept run (eval --keep or bench-models --keep) instead of building one "
                         "(ask-docs: ask over it); "
                         "its ANN decision is reset, so vector search is exact")
    ap.add_argument("--no-build", action="store_true", help="(handled by scripts/eval)")
    args = ap.parse_args()
    if args.mode in ("ask", "ask-docs", "code"):
        import eval_ask
        import eval_code
        import eval_docs
        binary = os.path.abspath(args.bin)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        report = {"ask": eval_ask, "ask-docs": eval_docs, "code": eval_code}[args.mode].run(args, binary)
        if args.rescore:
            print(json.dumps(report, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2)
                f.write("\n")
        return
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            sys.exit(f"unknown mode {m!r}; choose from {', '.join(sorted(MODES))}")
    if args.expand:
        MODES["hybrid"] = ["query", "--expand"]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: kill the svc child, remove the temp dir
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"binary not found or not executable: {binary}")

    queries = load_queries(os.path.join(args.dataset, "queries.jsonl"))
    qrels = load_qrels(os.path.join(args.dataset, "qrels", f"{args.split}.tsv"))
    tmp = os.path.abspath(args.reuse) if args.reuse else tempfile.mkdtemp(prefix="svc-eval-")
    t_start = time.perf_counter()
    try:
        env = dict(os.environ)
        for var, sub in (("SVC_CONFIG_DIR", "config"), ("SVC_DATA_DIR", "data")):
            env[var] = os.path.join(tmp, sub)
            os.makedirs(env[var], exist_ok=bool(args.reuse))
        env["SVC_CACHE_DIR"] = args.cache
        md_dir = os.path.join(tmp, COLLECTION)
        if args.reuse:
            n_docs = sum(1 for n in os.listdir(md_dir) if n.endswith(".md"))
            index_s = 0.0
            for root, _, files in os.walk(os.path.join(env["SVC_DATA_DIR"])):
                for name in files:
                    if name.endswith(".ann"):  # the ANN decision: without it, search is exact
                        os.remove(os.path.join(root, name))
        else:
            if args.preset:
                run_svc(binary, env, ["models", "use", args.preset])
            n_docs = len(scifact_to_md.convert(os.path.join(args.dataset, "corpus.jsonl"), md_dir))
            index_s = index_corpus(binary, env, md_dir)
        embed_s = None
        if NEEDS_VECTORS & set(modes):
            t0 = time.perf_counter()
            run_svc(binary, env, ["embed"])
            embed_s = time.perf_counter() - t0
        runs = {m: run_queries(binary, env, m, queries, args.limit) for m in modes}
    finally:
        if args.keep or args.reuse:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    wall_s = time.perf_counter() - t_start

    reports = []
    for mode, (rankings, search_s, warnings) in runs.items():
        for w in warnings:
            print(f"WARNING [{mode}]: {w}", file=sys.stderr)
        missing = [q for q in qrels if q not in rankings]
        if missing:
            print(f"WARNING [{mode}]: {len(missing)} judged queries have no output line (scored 0)", file=sys.stderr)
        m = evaluate(rankings, qrels)
        reports.append({"mode": mode, "split": args.split, **m, "documents": n_docs, "index_s": round(index_s, 3),
                        "embed_s": None if embed_s is None else round(embed_s, 3), "search_s": round(search_s, 3),
                        "wall_s": round(wall_s, 3), "missing_queries": len(missing)})
        print(f"mode={mode} split={args.split} queries={m['queries']} documents={n_docs}")
        print(f"nDCG@10    {m['ndcg@10']:.4f}   (bm25_check.py reference 0.6947)")
        print(f"Recall@100 {m['recall@100']:.4f}   (0.9276)")
        print(f"MRR@10     {m['mrr@10']:.4f}   (0.6636)")
        print(f"queries {len(queries)} in {search_s:.2f} s")
    embed_note = "" if embed_s is None else f", embed {embed_s:.2f} s"
    print(f"wall {wall_s:.2f} s (index {index_s:.2f} s{embed_note})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reports if len(reports) > 1 else reports[0], f, indent=2)
            f.write("\n")
    if args.rankings:
        with open(args.rankings, "w") as f:
            json.dump({"split": args.split, "limit": args.limit,
                       "modes": {mode: rankings for mode, (rankings, _, _) in runs.items()}}, f)
            f.write("\n")


if __name__ == "__main__":
    main()
