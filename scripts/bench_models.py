#!/usr/bin/env python3
"""Model benchmarks on BEIR SciFact (5,183 abstracts as Markdown).

1. Embedding throughput: `svc embed` (in-process) over the whole corpus, against plain ONNX
   Runtime in Python on the same batches (the chunk texts svc embeds, read from its catalog,
   sorted by length, 32 per batch, same tokenizer, truncation 256, padding to the longest,
   masked mean pooling + L2 norm, 2 intra-op threads).
2. Latency over HTTP (`svc serve`): `/api/search`, `/api/vsearch` and `/api/query` (hybrid:
   the default request, `noExpand: true`, and on a sample `noExpand: false`, which asks the
   generator for query variants) p50/p99 over the first N SciFact queries.
3. ANN: the index forced on (`SVC_ANN_MIN_ROWS=1000`): the recall@10 svc measured against exact
   search, and whether it uses the index; vsearch latency again.

Needs the default preset in the model cache (`scripts/models default`) and the
venv of scripts/ort-env (numpy, onnxruntime, tokenizers). Normally run through scripts/bench-models.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
import scifact_to_md  # noqa: E402
from svclib import Http, Server, default_cache_dir, log, percentile, run_svc  # noqa: E402

EMBED_DIR = os.path.join("models", "sentence-transformers", "all-MiniLM-L6-v2")
EMBED_FILE = os.path.join("onnx", "model_qint8_avx512.onnx")  # the presets' embedder (int8)
BATCH = 2  # svc's ONNX batch (ONNX_BATCH in worker/src/models/embedder.rs)
MAX_TOKENS = 256



def chunk_texts(binary, env):
    """What svc's embedder reads for each chunk of the index (`svc embed --texts`): the binary's
    own rule, so plain ONNX Runtime is fed the same texts."""
    return [json.loads(line) for line in run_svc(binary, env, ["embed", "--texts"]).stdout.splitlines() if line]


def ort_baseline(model_dir, texts, stride):
    """(chunks, seconds) for plain ONNX Runtime embedding `texts` in svc's batches (sorted by
    length, BATCH each); with stride k only every k-th batch runs, a sample that spans the whole
    length distribution."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(os.path.join(model_dir, EMBED_FILE), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    ordered = sorted(texts, key=len)
    done = 0
    t0 = time.perf_counter()
    for i in range(0, len(ordered), BATCH * stride):
        batch = ordered[i:i + BATCH]
        done += len(batch)
        enc = tok.encode_batch(batch)
        feed = {
            "input_ids": np.array([e.ids for e in enc], np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], np.int64),
        }
        hidden = sess.run(["last_hidden_state"], {k: v for k, v in feed.items() if k in names})[0]
        m = feed["attention_mask"][..., None].astype(np.float32)
        v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    return done, time.perf_counter() - t0


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def latencies(http, path, bodies, warmup=10):
    for b in bodies[:warmup]:
        http.request("POST", path, b)
    out, errors = [], 0
    for b in bodies:
        ms, status, _ = http.timed("POST", path, b)
        if status != 200:
            errors += 1
        out.append(ms)
    return {"p50_ms": round(percentile(out, 50), 2), "p99_ms": round(percentile(out, 99), 2), "errors": errors, "n": len(out)}


def serve_latencies(binary, root, env_extra, queries, expand_queries=0):
    server = Server(binary, root)
    old = {k: os.environ.get(k) for k in env_extra}
    os.environ.update(env_extra)
    try:
        server.start()
        http = Http(server.port)
        # The worker loads its embedder in the background once it serves: wait for it.
        deadline = time.monotonic() + 60
        caps = http.request("GET", "/api/capabilities")[1]
        while not caps.get("vector") and time.monotonic() < deadline:
            time.sleep(0.1)
            caps = http.request("GET", "/api/capabilities")[1]
        if not caps.get("vector"):
            http.close()
            server.stop()
            raise RuntimeError(f"vector search unavailable: {caps}")
        bodies = [{"query": q, "limit": 10} for q in queries]
        out = {
            "search": latencies(http, "/api/search", bodies),
            "vsearch": latencies(http, "/api/vsearch", bodies),
            # The default request: what a client that sends only a query gets.
            "query": latencies(http, "/api/query", bodies),
            "query_no_expand": latencies(http, "/api/query", [dict(b, noExpand=True) for b in bodies]),
        }
        if caps.get("answer") and expand_queries:
            # Expansion asked for explicitly (noExpand: false), on a sample: ~0.6 s a query.
            sample = bodies[: max(expand_queries, 11)]
            out["query_expand"] = latencies(http, "/api/query", [dict(b, noExpand=False) for b in sample])
        http.close()
        return out
    finally:
        server.stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "svc"))
    ap.add_argument("--dataset", default=os.path.join(REPO, "..", "shared", "datasets", "beir-scifact"))
    ap.add_argument("--cache", default=default_cache_dir(), help="svc cache dir holding models/ and runtime/")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--expand-queries", type=int, default=50, metavar="N",
                    help="also time N queries with expansion asked for (noExpand: false) when the generator loads; 0: skip")
    ap.add_argument("--ort-stride", type=positive_int, default=4, metavar="K",
                    help="plain ORT runs every k-th of svc's batches (1 = all of them)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temp dir (Markdown, embedded index): `scripts/eval --reuse DIR` can score it")
    ap.add_argument("--no-build", action="store_true", help="(handled by scripts/bench-models)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    model_dir = os.path.join(args.cache, EMBED_DIR)
    if not os.path.isfile(os.path.join(model_dir, EMBED_FILE)):
        sys.exit(f"no embedder under {model_dir}: run scripts/models default --only embed")
    queries = []
    with open(os.path.join(args.dataset, "queries.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                queries.append(json.loads(line)["text"])
    queries = queries[:args.queries]

    tmp = tempfile.mkdtemp(prefix="svc-bench-models-")
    report = {}
    try:
        # The server of serve_latencies uses <tmp>/{config,data,cache}; share the index and
        # point its cache at the models.
        os.makedirs(os.path.join(tmp, "config"))
        os.makedirs(os.path.join(tmp, "data"))
        os.symlink(os.path.abspath(args.cache), os.path.join(tmp, "cache"))
        env = dict(os.environ, SVC_CONFIG_DIR=os.path.join(tmp, "config"), SVC_DATA_DIR=os.path.join(tmp, "data"),
                   SVC_CACHE_DIR=os.path.join(tmp, "cache"))
        md = os.path.join(tmp, "scifact")
        n_docs = len(scifact_to_md.convert(os.path.join(args.dataset, "corpus.jsonl"), md))
        log(f"indexing {n_docs} documents")
        index_s = run_svc(binary, env, ["collection", "add", md, "--name", "scifact"]).seconds
        log("embedding with svc")
        embed_s = run_svc(binary, env, ["embed"]).seconds
        texts = chunk_texts(binary, env)
        log(f"plain ONNX Runtime on 1 in {args.ort_stride} of svc's batches of the same {len(texts)} chunks")
        ort_n, ort_s = ort_baseline(model_dir, texts, args.ort_stride)
        report["embedding"] = {
            "documents": n_docs, "chunks": len(texts), "index_s": round(index_s, 2),
            "svc_s": round(embed_s, 2), "svc_chunks_per_s": round(len(texts) / embed_s, 1),
            "ort_chunks": ort_n, "ort_s": round(ort_s, 2), "ort_chunks_per_s": round(ort_n / ort_s, 1),
            "svc_vs_ort": round((len(texts) / embed_s) / (ort_n / ort_s), 3),
        }
        log(f"embedding: {json.dumps(report['embedding'])}")
        log("latency over HTTP (exact vector search)")
        report["exact"] = serve_latencies(binary, tmp, {}, queries, args.expand_queries)
        log("forcing an ANN index (SVC_ANN_MIN_ROWS=1000)")
        err = run_svc(binary, dict(env, SVC_ANN_MIN_ROWS="1000", SVC_LOG="info"), ["embed"]).stderr
        m = re.search(r"recall@10 ([0-9.]+), (in use|not used)", err)
        report["ann"] = {"recall_at_10": float(m.group(1)) if m else None, "used": bool(m and m.group(2) == "in use")}
        report["ann"]["latency"] = serve_latencies(binary, tmp, {}, queries)
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    e = report["embedding"]
    print(f"embedding: {e['chunks']} chunks of {e['documents']} documents")
    print(f"  svc embed        {e['svc_s']:8.2f} s  {e['svc_chunks_per_s']:8.1f} chunks/s")
    print(f"  plain ORT        {e['ort_s']:8.2f} s  {e['ort_chunks_per_s']:8.1f} chunks/s  ({e['ort_chunks']} chunks)")
    print(f"  svc / plain ORT  {e['svc_vs_ort']:.3f}   (target >= 0.70)")
    for label, lat in (("exact", report["exact"]), ("with ANN index", report["ann"]["latency"])):
        print(f"latency over HTTP, {label} ({lat['search']['n']} queries):")
        for route in ("search", "vsearch", "query", "query_no_expand", "query_expand"):
            if route not in lat:
                continue
            r = lat[route]
            target = "   (target p50 <= 50 ms)" if route == "query" else ""
            print(f"  {route:<16} p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  errors {r['errors']}{target}")
    a = report["ann"]
    print(f"ANN index: recall@10 {a['recall_at_10']}  used: {a['used']}   (used only when >= 0.95)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
