#!/usr/bin/env python3
"""Code search on real code nobody here wrote, run by `scripts/eval --mode code`.

The corpus is Rust source of the crates in Cargo.lock, from the cargo registry (so every
machine that built svc has the same files): every k-th file of 2-60 KB under a crate's `src/`,
300 files. The questions are the first line of a function's doc comment (at least six words);
the doc comment is blanked out of the indexed copy (line numbers kept), so a question can only
be answered from the code itself: its name, signature, body and the symbol path svc gives it.
One question per file, at most 120. Per mode (BM25 `/api/search`, vector `/api/vsearch`, hybrid
`/api/query`, 10 results): nDCG@10 and hit@5 by file, and symbol hit@5 (a top-5 result is the
right file and its chunk holds the function's `fn` line). Python standard library only.
"""
import glob
import math
import os
import re
import shutil
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from eval_ask import serve_collection  # noqa: E402
from svclib import request  # noqa: E402

FILES = 300
MAX_QUESTIONS = 120
DOC = re.compile(r"^\s*///\s?(.*)$")
ATTR = re.compile(r"^\s*#\[")
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")
MODES = {"bm25": "/api/search", "vector": "/api/vsearch", "hybrid": "/api/query"}


def locked_crates():
    names = set()
    with open(os.path.join(REPO, "Cargo.lock"), encoding="utf-8") as f:
        name = None
        for line in f:
            if line.startswith("name = "):
                name = line.split('"')[1]
            elif line.startswith("version = ") and name:
                names.add(f"{name}-{line.split(chr(34))[1]}")
                name = None
    return names


def corpus_files():
    roots = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/index.crates.io-*")))
    if not roots:
        sys.exit("no cargo registry sources under ~/.cargo/registry/src: build svc first")
    locked = locked_crates()
    found = []
    for crate in sorted(os.listdir(roots[0])):
        if crate not in locked:
            continue
        for path in sorted(glob.glob(os.path.join(roots[0], crate, "src", "**", "*.rs"), recursive=True)):
            if 2_000 <= os.path.getsize(path) <= 60_000 and "/tests/" not in path:
                found.append((crate, path))
    step = max(1, len(found) // FILES)
    return found[::step][:FILES]


def question_of(lines):
    """(question, fn name, fn line 1-based, doc line range) of the first documented function."""
    i = 0
    while i < len(lines):
        if not DOC.match(lines[i]):
            i += 1
            continue
        start = i
        while i < len(lines) and DOC.match(lines[i]):
            i += 1
        doc_end = i
        while i < len(lines) and ATTR.match(lines[i]):
            i += 1
        m = FN.match(lines[i]) if i < len(lines) else None
        first = DOC.match(lines[start]).group(1).strip()
        words = re.findall(r"[A-Za-z]{2,}", first)
        if m and len(words) >= 6 and "`" not in first and not first.startswith("#"):
            return first, m.group(7), i + 1, (start, doc_end)
    return None


def build(dest):
    os.makedirs(dest, exist_ok=True)
    questions = []
    for crate, path in corpus_files():
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        q = question_of(lines)
        rel = f"{crate}/{path.split(f'/{crate}/', 1)[1]}"
        if q and len(questions) < MAX_QUESTIONS:
            text, name, line, (a, b) = q
            for k in range(a, b):
                lines[k] = ""
            questions.append({"question": text, "file": rel, "fn": name, "line": line})
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return questions


def score(results, q, collection):
    uri = f"svc://{collection}/{q['file']}"
    ranked = []
    for r in results:
        if r["uri"] not in ranked:
            ranked.append(r["uri"])
    rank = ranked.index(uri) + 1 if uri in ranked[:10] else None
    ndcg = 1 / math.log2(rank + 1) if rank else 0.0
    sig = re.compile(r"\bfn\s+" + re.escape(q["fn"]) + r"\b")
    symbol = any(r["uri"] == uri and sig.search(r["chunk"]["text"]) for r in results[:5])
    return ndcg, bool(rank and rank <= 5), symbol


def run(args, binary):
    tmp = tempfile.mkdtemp(prefix="svc-eval-code-")
    t0 = time.perf_counter()
    try:
        code = os.path.join(tmp, "code")
        questions = build(code)
        files = sum(len(fs) for _, _, fs in os.walk(code))
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(code) for f in fs)
        print(f"corpus: {files} files, {size / 1e6:.1f} MB, {len(questions)} questions", file=sys.stderr)
        t_index = time.perf_counter()
        server = serve_collection(binary, tmp, args.cache, code)
        index_s = time.perf_counter() - t_index
        collection = request(server.port, "GET", "/api/collections")[1][0]["name"]
        report = {}
        try:
            for mode, path in MODES.items():
                totals = [0.0, 0, 0]
                for q in questions:
                    status, reply = request(server.port, "POST", path, {"query": q["question"], "limit": 10})
                    if status != 200:
                        print(f"WARNING [{mode}] {status} {reply}", file=sys.stderr)
                        continue
                    ndcg, hit, symbol = score(reply["results"], q, collection)
                    totals[0] += ndcg
                    totals[1] += hit
                    totals[2] += symbol
                n = max(1, len(questions))
                report[mode] = {"ndcg@10": round(totals[0] / n, 3), "hit@5": round(totals[1] / n, 3),
                                "symbol_hit@5": round(totals[2] / n, 3)}
                print(f"mode={mode} nDCG@10 {report[mode]['ndcg@10']} hit@5 {report[mode]['hit@5']} "
                      f"symbol hit@5 {report[mode]['symbol_hit@5']}")
        finally:
            server.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"mode": "code", "questions": len(questions), "corpus_files": files, "corpus_bytes": size,
            "index_and_embed_s": round(index_s, 1), "modes": report, "wall_s": round(time.perf_counter() - t0, 1)}
