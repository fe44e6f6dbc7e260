#!/usr/bin/env python3
"""Where answers are lost before the generator: for every answerable question of an ask-docs set,
does a passage the answer is drawn from hold one of the answer phrases? Asks each question with a
one-token answer (the generator's time is left out; which passages are chosen does not depend on
it) and reads the chosen passages' lines back from GET /api/doc.

  scripts/eval_passages.py --set rustdocs|ask-docs [--bin target/release/svc] [--keep DIR]

Reports, per set: the share of answerable questions whose first two passages (the base every
answer starts from) hold an answer phrase, and whose chosen passages (all of them) do; and the
questions gained or lost against --against (a JSON this script wrote before).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_ask import serve_collection  # noqa: E402
from eval_docs import COLLECTION, contains_any, load_set  # noqa: E402
from svclib import Server, default_cache_dir, request  # noqa: E402


def passage_text(port, uri, start, end, cache):
    if uri not in cache:
        status, doc = request(port, "GET", "/api/doc?uri=" + urllib.parse.quote(uri, safe=""))
        cache[uri] = (doc.get("content") or "").split("\n") if status == 200 else []
    return "\n".join(cache[uri][start - 1:end])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="rustdocs")
    ap.add_argument("--bin", default="target/release/svc")
    ap.add_argument("--cache", default=default_cache_dir())
    ap.add_argument("--preset", default="fast", help="the generator does not choose passages: the fastest")
    ap.add_argument("--keep", help="a data dir kept between runs (indexed once)")
    ap.add_argument("--json")
    ap.add_argument("--against", help="an earlier --json of this script")
    args = ap.parse_args()
    questions, lay_corpus = load_set(args.set)
    answerable = [q for q in questions if not q.get("unanswerable")]
    root = os.path.abspath(args.keep) if args.keep else None
    if root is None:
        import tempfile
        root = tempfile.mkdtemp(prefix="svc-eval-passages-")
    md = os.path.join(root, COLLECTION)
    if os.path.isdir(md):
        server = Server(args.bin, root, cache=args.cache)
        server.start()
    else:
        lay_corpus(md)
        server = serve_collection(args.bin, root, args.cache, md)
    out = {}
    docs = {}
    try:
        request(server.port, "POST", "/api/presets", {"presetId": args.preset})
        t0 = time.perf_counter()
        for q in answerable:
            status, reply = request(server.port, "POST", "/api/ask", {"query": q["question"], "maxAnswerTokens": 1})
            selected = (reply.get("meta", {}).get("answerContext") or {}).get("selected", []) if status == 200 else []
            texts = [passage_text(server.port, s["uri"], s["startLine"], s["endLine"], docs) for s in selected]
            out[q["id"]] = {"base": contains_any("\n".join(texts[:2]), q["answers"]),
                            "any": contains_any("\n".join(texts), q["answers"]),
                            "selected": [f'{s["uri"].split("/", 3)[-1]}:{s["startLine"]}-{s["endLine"]}' for s in selected]}
        secs = time.perf_counter() - t0
    finally:
        server.stop()
    n = len(answerable)
    base = sum(v["base"] for v in out.values())
    anyp = sum(v["any"] for v in out.values())
    print(f"{args.set}: {n} answerable; an answer phrase in the first two passages {base} ({base / n:.2f}), "
          f"in any chosen passage {anyp} ({anyp / n:.2f}); {secs:.0f} s")
    if args.against:
        before = json.load(open(args.against))["questions"]
        gained = [k for k, v in out.items() if v["any"] and not before.get(k, {}).get("any")]
        lost = [k for k, v in out.items() if not v["any"] and before.get(k, {}).get("any")]
        print(f"against {args.against}: gained {gained}, lost {lost}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"set": args.set, "base": base, "any": anyp, "answerable": n, "questions": out}, f, indent=1)


if __name__ == "__main__":
    main()
