#!/usr/bin/env python3
"""Answer quality of `POST /api/ask` on BEIR SciFact (train split), run by `scripts/eval --mode ask`.

A sample of claims is asked as "Is it true that <claim>?" against a server with the default
preset (generator and embedder from --cache):
- raw mode, on an index that holds each claim's relevant abstracts plus distractors: the rate at
  which the answer cites at least one relevant abstract (citation hit rate), and how often an
  answer is generated at all;
- verified mode, on a copy of that index without the relevant abstracts (the claims cannot be
  answered from it): the rate at which it abstains;
- verified mode on the full index: how often it verifies, and how often a verified answer cites
  a relevant abstract.
The corpus is the sampled claims' relevant abstracts plus the first --distractors other ones (the
whole corpus takes an hour to embed on 2 cores). Python standard library only.
"""
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import scifact_to_md  # noqa: E402
from scifact_to_md import load_qrels, load_queries, uri_to_id  # noqa: E402
from svclib import Server, request  # noqa: E402

COLLECTION = "scifact"


def serve_collection(binary, root, cache, md_dir, preset=None):
    """`svc serve` over its own data dir and the model cache `cache`, with `md_dir` indexed and
    embedded as the collection every eval's index has had (its URIs reach the prompts). `preset`
    is made active first, so the notes are embedded once, by its embedder."""
    server = Server(binary, root, cache=cache)
    server.start()
    try:
        if preset:
            status, body = request(server.port, "POST", "/api/presets", {"presetId": preset})
            if status != 200:
                raise RuntimeError(f"preset {preset}: {status} {body}")
        server.add_collection(md_dir, COLLECTION)
    except Exception:
        server.stop()
        raise
    return server


def ask_all(server, questions, body):
    """[(claim id, status, reply, seconds)]"""
    out = []
    for qid, text in questions:
        t0 = time.perf_counter()
        status, reply = request(server.port, "POST", "/api/ask", {"query": text, **body})
        out.append((qid, status, reply, time.perf_counter() - t0))
    return out


def median_s(run_):
    return round(statistics.median(t for *_, t in run_), 3) if run_ else None


def cited(reply):
    return {uri_to_id(c["uri"]) for c in reply.get("citations", [])}


def run(args, binary):
    queries = dict(load_queries(os.path.join(args.dataset, "queries.jsonl")))
    qrels = load_qrels(os.path.join(args.dataset, "qrels", f"{args.split}.tsv"))
    rng = random.Random(args.seed)
    claim_ids = sorted(qrels, key=lambda q: int(q) if q.isdigit() else q)
    sample = sorted(rng.sample(claim_ids, min(args.sample, len(claim_ids))), key=claim_ids.index)
    relevant = {d for q in sample for d in qrels[q]}
    questions = [(q, f"Is it true that {queries[q].rstrip('.')}?") for q in sample]

    tmp = tempfile.mkdtemp(prefix="svc-eval-ask-")
    t_start = time.perf_counter()
    try:
        full_md = os.path.join(tmp, "full", COLLECTION)
        ids = scifact_to_md.convert(os.path.join(args.dataset, "corpus.jsonl"), full_md)
        keep = set(relevant) | set([d for d in ids if d not in relevant][: args.distractors])
        for name in os.listdir(full_md):
            if uri_to_id(name) not in keep:
                os.remove(os.path.join(full_md, name))
        held_out_md = os.path.join(tmp, "held-out", COLLECTION)
        shutil.copytree(full_md, held_out_md)
        for name in os.listdir(held_out_md):
            if uri_to_id(name) in relevant:
                os.remove(os.path.join(held_out_md, name))

        raw_body = {"maxAnswerTokens": args.max_answer_tokens}
        verified_body = {"maxAnswerTokens": args.max_answer_tokens, "verify": True}
        phases = {p.strip() for p in args.phases.split(",")}
        raw, verified_full, verified_held_out = [], [], []
        full = serve_collection(binary, os.path.join(tmp, "full"), args.cache, full_md)
        try:
            if "raw" in phases:
                raw = ask_all(full, questions, raw_body)
            if "verified" in phases:
                verified_full = ask_all(full, questions, verified_body)
        finally:
            full.stop()
        if "held-out" in phases:
            held_out = serve_collection(binary, os.path.join(tmp, "held-out"), args.cache, held_out_md)
            try:
                verified_held_out = ask_all(held_out, questions, verified_body)
            finally:
                held_out.stop()
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    errors = [(q, s, r) for run_ in (raw, verified_full, verified_held_out) for q, s, r, _ in run_ if s != 200]
    for q, s, r in errors[:5]:
        print(f"WARNING: claim {q}: HTTP {s} {r}", file=sys.stderr)
    ok = lambda run_: [(q, r) for q, s, r, _ in run_ if s == 200]  # noqa: E731
    raw_ok = ok(raw)
    hits = sum(1 for q, r in raw_ok if cited(r) & set(qrels[q]))
    generated = sum(1 for _, r in raw_ok if r["meta"]["answerGenerated"])
    with_citations = sum(1 for _, r in raw_ok if r["citations"])
    vf = ok(verified_full)
    verified = [(q, r) for q, r in vf if not r["meta"]["abstained"]]
    verified_relevant = sum(1 for q, r in verified if cited(r) & set(qrels[q]))
    vh = ok(verified_held_out)
    abstained = sum(1 for _, r in vh if r["meta"]["abstained"])
    reasons = {}
    for _, r in vh:
        reason = r["verification"]["claims"]["abstentionReason"] or "verified"
        reasons[reason] = reasons.get(reason, 0) + 1
    n = len(questions)
    report = {
        "mode": "ask", "split": args.split, "claims": n, "seed": args.seed,
        "documents_full": len(keep), "documents_held_out": len(keep) - len(relevant),
        "max_answer_tokens": args.max_answer_tokens,
        "raw_citation_hit_rate": round(hits / n, 4) if raw_ok else None,
        "raw_answers_generated": generated, "raw_answers_with_citations": with_citations,
        "raw_p50_s": median_s(raw),
        "verified_full_verified": len(verified), "verified_full_citing_relevant": verified_relevant,
        "verified_p50_s": median_s(verified_full),
        "held_out_abstention_rate": round(abstained / n, 4) if vh else None, "held_out_reasons": reasons,
        "errors": len(errors), "wall_s": round(time.perf_counter() - t_start, 1),
    }
    print(f"mode=ask split={args.split} claims={n} documents={len(keep)} (held out: {len(relevant)} relevant)")
    print(f"raw: citation hit rate {report['raw_citation_hit_rate']} (goal >= 0.6); "
          f"answers {generated}, with citations {with_citations}; p50 {report['raw_p50_s']} s")
    print(f"verified, full index: {len(verified)} verified, {verified_relevant} of them citing a relevant abstract; "
          f"p50 {report['verified_p50_s']} s")
    print(f"verified, relevant abstracts removed: abstention rate {report['held_out_abstention_rate']} "
          f"(goal >= 0.9); reasons {reasons}")
    print(f"errors {len(errors)}; wall {report['wall_s']} s")
    return report
