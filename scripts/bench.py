#!/usr/bin/env python3
"""Benchmark the svc server over HTTP on two deterministic corpora.

Corpora: (a) "notes": 2,000 generated Markdown notes (scripts/corpus_gen.py, seed 42);
(b) "scifact": BEIR SciFact abstracts as Markdown (scripts/scifact_to_md.py).

For each corpus a fresh `svc serve` runs with temporary config/data/cache dirs, and we measure:
first index, no-op re-index, search latency, read latency during a sync that touches every file,
single-note write -> searchable latency, read latency during a burst of writes, Context
Capsule compile (fast; balanced with --models) and verify latency, a page of 100 changes,
impact with default bounds, and gateway/worker RSS. `--corpus watch` measures the live index
(scripts/bench_watch.py). Normally run through scripts/bench (which builds the release binary).
Python standard library only.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import urllib.request

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import scifact_to_md  # noqa: E402
import bench_watch  # noqa: E402
from svclib import (  # noqa: E402
    REPO, Http, Server, ask_streamed, fmt, job_seconds, log, md_files, notes_corpus, percentile, probe_token, reader_loop,
    rss_mb, run_job,
)

MIN_SYNC_READS = 200
MAX_SYNC_ROUNDS = 10
MAX_SYNC_SECONDS = 10.0  # stop repeating edit+sync rounds once this much sync time was spent
# Single-note writes timed from the PUT to the first search that finds them. 200, so that the
# p99 is the second-slowest write and not the single slowest (with 50 it was the maximum).
WRITE_PROBES = 200
WRITE_SEARCHABLE_TIMEOUT_S = 10.0  # a probe not found by then counts as a failure
BURST_WRITES = 200  # PUTs in the write burst
BURST_NOTES = 20  # distinct notes the burst writes to, round robin
BURST_READERS = 2  # reader threads during the burst

SCIFACT_QUERY_COUNT = 200

# (key, label, format, target text, target check) — rows of the printed table.
ROWS = [
    ("first_index_wall_s", "first index, wall (s)", "{:.2f}", "<= 2 s (notes)", ("notes", 2.0)),
    ("first_index_job_s", "first index, job totalDurationMs (s)", "{:.2f}", "", None),
    ("files_indexed", "files indexed", "{:d}", "", None),
    ("noop_reindex_wall_s", "no-op re-index, wall (s)", "{:.3f}", "<= 0.5 s", ("all", 0.5)),
    ("noop_reindex_job_s", "no-op re-index, job (s)", "{:.3f}", "", None),
    ("search_p50_ms", "search p50 (ms)", "{:.2f}", "<= 5 ms", ("all", 5.0)),
    ("search_p99_ms", "search p99 (ms)", "{:.2f}", "", None),
    ("search_zero_hit_queries", "queries with 0 results", "{:d}", "", None),
    ("edit_sync_wall_s", "edit sync (all files), wall (s)", "{:.2f}", "", None),
    ("edit_sync_files_updated", "edit sync, files updated", "{:d}", "", None),
    ("read_p50_during_sync_ms", "read p50 during sync (ms)", "{:.2f}", "", None),
    ("read_p99_during_sync_ms", "read p99 during sync (ms)", "{:.2f}", "<= 50 ms", ("all", 50.0)),
    ("read_max_during_sync_ms", "read max during sync (ms)", "{:.2f}", "", None),
    ("reads_during_sync", "reads during sync", "{:d}", "", None),
    ("read_errors_during_sync", "read errors during sync", "{:d}", "", None),
    ("sync_rounds", "edit+sync rounds", "{:d}", "", None),
    ("write_searchable_p50_ms", "single-note write -> searchable p50 (ms)", "{:.2f}", "< 1000 ms", ("all", 1000.0)),
    ("write_searchable_p99_ms", "single-note write -> searchable p99 (ms)", "{:.2f}", "", None),
    ("write_searchable_failures", "writes not searchable within 10 s", "{:d}", "0", ("all", 0)),
    ("burst_writes", "writes in burst", "{:d}", "", None),
    ("burst_write_p50_ms", "PUT p50 during burst (ms)", "{:.2f}", "", None),
    ("burst_wall_s", "write burst, wall (s)", "{:.2f}", "", None),
    ("read_p50_during_writes_ms", "read p50 during write burst (ms)", "{:.2f}", "", None),
    ("read_p99_during_writes_ms", "read p99 during write burst (ms)", "{:.2f}", "< 50 ms", ("all", 50.0)),
    ("read_max_during_writes_ms", "read max during write burst (ms)", "{:.2f}", "", None),
    ("reads_during_writes", "reads during write burst", "{:d}", "", None),
    ("read_errors_during_writes", "read/write errors during burst", "{:d}", "0", ("all", 0)),
    ("capsule_fast_p50_ms", "capsule compile fast p50 (ms, 4,000 tokens)", "{:.2f}", "<= 30 ms (notes)", ("notes", 30.0)),
    ("capsule_fast_p99_ms", "capsule compile fast p99 (ms)", "{:.2f}", "", None),
    ("capsule_balanced_p50_ms", "capsule compile balanced p50 (ms, --models)", "{:.2f}", "<= 120 ms (notes)", ("notes", 120.0)),
    ("capsule_balanced_p99_ms", "capsule compile balanced p99 (ms)", "{:.2f}", "", None),
    ("capsule_exact_tokens", "capsules counted by a tokenizer", "{}", "", None),
    ("ask_p50_ms", "ask p50 (ms, raw, maxAnswerTokens 128, --models)", "{:.0f}", "", None),
    ("ask_first_token_p50_ms", "ask time to first streamed token p50 (ms)", "{:.0f}", "", None),
    ("ask_decode_tok_s", "ask decode (tokens/s, streamed)", "{:.1f}", "", None),
    ("ask_prompt_tok_s", "ask prompt processing (tokens/s: prompt tokens / (first token - retrieval))", "{:.1f}", "", None),
    ("llama_bench_tg_tok_s", "llama-bench decode, same model and threads (tokens/s)", "{:.1f}", "", None),
    ("llama_bench_pp_tok_s", "llama-bench prompt processing, same prompt length (tokens/s)", "{:.1f}", "", None),
    ("ask_decode_share", "ask decode / llama-bench", "{:.2f}", ">= 0.9", None),
    ("ask_prompt_share", "ask prompt processing / llama-bench", "{:.2f}", ">= 0.9", None),
    ("worker_rss_gen_mb", "worker RSS with the generator loaded (MB)", "{:.0f}", "", None),
    ("capsule_verify_p50_ms", "capsule verify p50 (ms)", "{:.2f}", "<= 15 ms", ("all", 15.0)),
    ("changes_page_p50_ms", "changes page of 100 p50 (ms)", "{:.2f}", "<= 10 ms", ("all", 10.0)),
    ("impact_p50_ms", "impact, default bounds, p50 (ms)", "{:.2f}", "<= 20 ms", ("all", 20.0)),
    ("autocomplete_p50_ms", "docs/autocomplete p50 (ms)", "{:.2f}", "<= 2 ms (notes)", ("notes", 2.0)),
    ("mcp_start_ms", "svc mcp: spawn to initialized (ms)", "{:.0f}", "", None),
    ("mcp_search_p50_ms", "svc mcp: svc_search tool call p50 (ms, stdio)", "{:.2f}", "", None),
    ("mcp_search_p99_ms", "svc mcp: svc_search tool call p99 (ms)", "{:.2f}", "", None),
    ("workspace_ready_p50_ms", "workspace: / interactive p50 (ms, cold)", "{:.0f}", "<= 300 ms (notes)", ("notes", 300.0)),
    ("workspace_search_painted_p50_ms", "workspace: search round trip painted p50 (ms)", "{:.1f}", "<= 100 ms (notes)", ("notes", 100.0)),
    ("workspace_search_painted_p99_ms", "workspace: search round trip painted p99 (ms)", "{:.1f}", "", None),
    ("workspace_keystroke_painted_p50_ms", "workspace: keystroke to painted p50 (ms, 60 ms debounce)", "{:.1f}", "", None),
    ("workspace_big_note_p50_ms", "workspace: 1 MB note ready p50 (ms)", "{:.0f}", "<= 500 ms (notes)", ("notes", 500.0)),
    ("workspace_js_gzip_kb", "workspace: JS on first load (KB, gzip)", "{:.1f}", "<= 150 KB (notes)", ("notes", 150.0)),
    ("workspace_js_raw_kb", "workspace: JS on first load (KB, raw)", "{:.1f}", "", None),
    ("workspace_layout_shift", "workspace: layout shift over searches (CLS)", "{:.3f}", "", None),
    ("workspace_graph_nodes", "workspace: graph nodes drawn", "{:d}", "", None),
    ("workspace_graph_ready_ms", "workspace: graph navigation to drawn (ms)", "{:.0f}", "", None),
    ("workspace_graph_layout_ms", "workspace: graph layout (ms)", "{:.0f}", "", None),
    ("gateway_rss_mb", "gateway RSS (MB)", "{:.1f}", "<= 30 MB", ("all", 30.0)),
    ("worker_rss_mb", "worker RSS (MB)", "{:.1f}", "", None),
    ("supervisor_rss_mb", "supervisor RSS (MB)", "{:.1f}", "", None),
]


# ---------------------------------------------------------------- HTTP


# ---------------------------------------------------------------- processes


# ---------------------------------------------------------------- corpora


def make_scifact(shared, out_dir):
    data = os.path.join(shared, "datasets", "beir-scifact")
    scifact_to_md.convert(os.path.join(data, "corpus.jsonl"), out_dir)
    queries = []
    with open(os.path.join(data, "queries.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip() and len(queries) < SCIFACT_QUERY_COUNT:
                queries.append(json.loads(line)["text"])
    return queries


CORPORA = {"notes": lambda _shared, out_dir: notes_corpus(out_dir), "scifact": make_scifact}


# ---------------------------------------------------------------- measurements

def measure_search(client, queries, runs=3):
    zero_hits = 0
    for q in queries:  # warm-up pass
        _, status, payload = client.timed("POST", "/api/search", {"query": q, "limit": 10})
        if status != 200:
            raise RuntimeError(f"search {q!r} -> {status}: {payload}")
        if not payload.get("results"):
            zero_hits += 1
    lat = []
    for _ in range(runs):
        for q in queries:
            ms, status, payload = client.timed("POST", "/api/search", {"query": q, "limit": 10})
            if status != 200:
                raise RuntimeError(f"search {q!r} -> {status}: {payload}")
            lat.append(ms)
    return lat, zero_hits


def measure_reads_during_sync(client, port, files, doc_uri, query, timeout_s):
    requests = [
        ("docs", "GET", "/api/docs?limit=20", None),
        ("doc", "GET", "/api/doc?uri=" + urllib.parse.quote(doc_uri, safe=""), None),
        ("search", "POST", "/api/search", {"query": query}),
    ]
    reads, rounds, sync_total, first = [], 0, 0.0, None
    while True:
        rounds += 1
        for path in files:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"\nbench-edit {rounds}\n")
        buf, stop = [], threading.Event()
        thread = threading.Thread(target=reader_loop, args=(port, requests, stop, buf), daemon=True)
        thread.start()
        try:
            wall, job = run_job(client, "/api/sync", {}, timeout_s)
        finally:
            t_done = time.perf_counter()
            stop.set()
            thread.join()
        reads.extend(r for r in buf if r[1] < t_done)
        sync_total += wall
        if first is None:
            first = (wall, (job.get("result") or {}).get("totalFilesUpdated"))
        if len(reads) >= MIN_SYNC_READS or rounds >= MAX_SYNC_ROUNDS or sync_total >= MAX_SYNC_SECONDS:
            break
    ok = [r[2] for r in reads if 200 <= r[3] < 300]
    by_kind = {k: percentile([r[2] for r in reads if r[0] == k and 200 <= r[3] < 300], 99)
               for k, *_ in requests}
    return {
        "edit_sync_wall_s": first[0],
        "edit_sync_files_updated": first[1],
        "read_p50_during_sync_ms": percentile(ok, 50),
        "read_p99_during_sync_ms": percentile(ok, 99),
        "read_max_during_sync_ms": max(ok) if ok else None,
        "read_p99_by_kind_ms": by_kind,
        "reads_during_sync": len(reads),
        "read_errors_during_sync": len(reads) - len(ok),
        "sync_rounds": rounds,
    }


def create_note(client, collection, rel_path, content):
    """POST /api/docs (raw form); returns (docUri, docid)."""
    status, payload = client.request("POST", "/api/docs", {"collection": collection, "relPath": rel_path, "content": content})
    if status not in (200, 202) or not isinstance(payload, dict) or "docid" not in payload:
        raise RuntimeError(f"POST /api/docs {rel_path} -> {status}: {payload}")
    return payload["docUri"], payload["docid"]


def put_note(client, doc_uri, docid, content):
    """PUT /api/docs/:id with new content; returns (status, new docid or the old one)."""
    path = "/api/docs/" + urllib.parse.quote(docid, safe="")
    status, payload = client.request("PUT", path, {"uri": doc_uri, "content": content})
    if status == 200 and isinstance(payload, dict) and payload.get("docId"):
        return status, payload["docId"]
    return status, docid


def measure_write_to_searchable(client, collection):
    """Time from sending a PUT with a fresh token to the first search whose top hit is the note."""
    doc_uri, docid = create_note(client, collection, "bench-probe/write-probe.md", "# Write probe\n\nstarting text\n")
    lat, failures = [], 0
    for i in range(WRITE_PROBES):
        token = probe_token(i)
        content = f"# Write probe\n\nprobe {i} carries the word {token}\n"
        t0 = time.perf_counter()
        status, docid = put_note(client, doc_uri, docid, content)
        if status != 200:
            raise RuntimeError(f"PUT {doc_uri} -> {status}")
        found = False
        while time.perf_counter() - t0 < WRITE_SEARCHABLE_TIMEOUT_S:
            status, payload = client.request("POST", "/api/search", {"query": token, "limit": 1})
            hits = payload.get("results") if status == 200 and isinstance(payload, dict) else None
            if hits and hits[0].get("uri") == doc_uri:
                found = True
                break
            time.sleep(0.005)
        if found:
            lat.append((time.perf_counter() - t0) * 1000.0)
        else:
            failures += 1
    return {
        "write_searchable_p50_ms": percentile(lat, 50),
        "write_searchable_p99_ms": percentile(lat, 99),
        "write_searchable_failures": failures,
    }


def writer_loop(port, notes, count, out):
    """PUT `count` times, round robin over `notes` ([uri, docid] lists, updated in place)."""
    client = Http(port)
    try:
        client.request("GET", "/api/health")
        for i in range(count):
            note = notes[i % len(notes)]
            t0 = time.perf_counter()
            try:
                status, note[1] = put_note(client, note[0], note[1], f"# Burst note\n\nburst write {i} {probe_token(i)}\n")
            except (OSError, http.client.HTTPException):
                status = 0
                client.close()
            out.append((t0, (time.perf_counter() - t0) * 1000.0, status))
    finally:
        client.close()


def measure_reads_during_write_burst(client, port, collection, doc_uri, query):
    """Reader threads (GET /api/doc, POST /api/search) while one writer PUTs BURST_WRITES times."""
    notes = [list(create_note(client, collection, f"bench-burst/note-{n:02d}.md", f"# Burst note {n}\n\nstart\n"))
             for n in range(BURST_NOTES)]
    requests = [
        ("doc", "GET", "/api/doc?uri=" + urllib.parse.quote(doc_uri, safe=""), None),
        ("search", "POST", "/api/search", {"query": query}),
    ]
    stop, buffers, readers = threading.Event(), [], []
    for k in range(BURST_READERS):
        buf = []
        buffers.append(buf)
        # Each reader starts at a different request kind.
        readers.append(threading.Thread(target=reader_loop, args=(port, requests[k % 2:] + requests[:k % 2], stop, buf),
                                        daemon=True))
    for t in readers:
        t.start()
    time.sleep(0.2)  # readers connected and running before the burst
    writes = []
    t_start = time.perf_counter()
    writer = threading.Thread(target=writer_loop, args=(port, notes, BURST_WRITES, writes), daemon=True)
    writer.start()
    writer.join()
    t_end = time.perf_counter()
    stop.set()
    for t in readers:
        t.join()
    reads = [r for buf in buffers for r in buf if t_start <= r[1] <= t_end]
    ok = [r[2] for r in reads if 200 <= r[3] < 300]
    write_ok = [w[1] for w in writes if w[2] == 200]
    return {
        "burst_writes": len(write_ok),
        "burst_write_p50_ms": percentile(write_ok, 50),
        "burst_wall_s": t_end - t_start,
        "read_p50_during_writes_ms": percentile(ok, 50),
        "read_p99_during_writes_ms": percentile(ok, 99),
        "read_max_during_writes_ms": max(ok) if ok else None,
        "read_p99_during_writes_by_kind_ms": {k: percentile([r[2] for r in reads if r[0] == k and 200 <= r[3] < 300], 99)
                                              for k, *_ in requests},
        "reads_during_writes": len(reads),
        "read_errors_during_writes": (len(reads) - len(ok)) + (len(writes) - len(write_ok)),
    }


def timed_ok(client, method, path, body, what, ok=(200,)):
    ms, status, payload = client.timed(method, path, body)
    if status not in ok:
        raise RuntimeError(f"{what} -> {status}: {str(payload)[:300]}")
    return ms, status, payload


def capsule_latency(client, queries, depth, runs=2):
    """Compile latency over the queries (budget 4,000 tokens); the capsules compiled."""
    body = lambda q: {"goal": q, "budgetTokens": 4000, "depthPolicy": depth}  # noqa: E731
    for q in queries[:5]:  # warm-up
        timed_ok(client, "POST", "/api/context", body(q), f"context {q!r}", ok=(200, 400, 404))
    lat, capsules = [], []
    for _ in range(runs):
        for q in queries:
            ms, status, payload = timed_ok(client, "POST", "/api/context", body(q), f"context {q!r}", ok=(200, 400, 404))
            lat.append(ms)
            if status == 200 and len(capsules) < 30:
                capsules.append(payload)
    return lat, capsules


def measure_evidence(client, queries, doc_uris):
    """Capsule compile (fast) and verify, a page of 100 changes, impact with default bounds,
    autocomplete."""
    res = {}
    lat, capsules = capsule_latency(client, queries, "fast")
    res["capsule_fast_p50_ms"], res["capsule_fast_p99_ms"] = percentile(lat, 50), percentile(lat, 99)
    res["capsule_exact_tokens"] = any(c["budget"]["estimator"] == "active_tokenizer" for c in capsules)
    lat = []
    for _ in range(3):
        for c in capsules:
            lat.append(timed_ok(client, "POST", "/api/context/verify", {"capsule": c}, "verify")[0])
    res["capsule_verify_p50_ms"] = percentile(lat, 50)
    lat, cursor = [], None
    for _ in range(60):
        path = "/api/changes?limit=100" + (f"&since={urllib.parse.quote(cursor)}" if cursor else "")
        ms, _, page = timed_ok(client, "GET", path, None, "changes")
        lat.append(ms)
        cursor = page["page"]["nextCursor"]  # walk the journal; start over at its end
    res["changes_page_p50_ms"] = percentile(lat, 50)
    lat = []
    for _ in range(2):
        for uri in doc_uris[:50]:
            lat.append(timed_ok(client, "GET", f"/api/impact?ref={urllib.parse.quote(uri, safe='')}", None, "impact")[0])
    res["impact_p50_ms"] = percentile(lat, 50)
    # The quick switcher: every 1-4 letter prefix of each query's first word.
    prefixes = sorted({q.split()[0][:n].lower() for q in queries for n in range(1, 5)})
    lat = []
    for _ in range(3):
        for p in prefixes:
            path = f"/api/docs/autocomplete?query={urllib.parse.quote(p)}"
            lat.append(timed_ok(client, "GET", path, None, "autocomplete")[0])
    res["autocomplete_p50_ms"] = percentile(lat, 50)
    return res


MCP_CALLS = 100  # svc_search tool calls over `svc mcp` (stdio, through the server's worker)


def measure_mcp(server, queries):
    """An agent's view: `svc mcp` spawned as an MCP client would, the handshake, then
    svc_search calls (newline-delimited JSON-RPC on stdin/stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([server.binary, "mcp"], env=server.env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    next_id = [0]

    def rpc(method, params):
        next_id[0] += 1
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params}) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("svc mcp closed stdout")
            msg = json.loads(line)
            if msg.get("id") == next_id[0]:
                return msg

    try:
        rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        proc.stdin.flush()
        start_ms = (time.perf_counter() - t0) * 1000.0
        lat = []
        for i in range(MCP_CALLS):
            q = queries[i % len(queries)]
            t = time.perf_counter()
            msg = rpc("tools/call", {"name": "svc_search", "arguments": {"query": q, "limit": 10}})
            lat.append((time.perf_counter() - t) * 1000.0)
            if msg.get("result", {}).get("isError") is not False:
                raise RuntimeError(f"svc_search failed: {msg}")
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"mcp_start_ms": start_ms, "mcp_search_p50_ms": percentile(lat, 50), "mcp_search_p99_ms": percentile(lat, 99)}


ASK_QUESTIONS = 10
ASK_TOKENS = 128


def llama_bench(gguf, threads, prompt_tokens, tokens):
    """llama.cpp's own llama-bench (scripts/llama-tools builds it from the same llama.cpp source
    and CPU options as svc): (prompt tokens/s, decode tokens/s), or None."""
    tools = subprocess.run([os.path.join(REPO, "scripts", "llama-tools"), "llama-bench"], capture_output=True, text=True)
    if tools.returncode != 0:
        log(f"WARNING scripts/llama-tools failed: {tools.stderr[-500:]}")
        return None
    exe = os.path.join(tools.stdout.strip().splitlines()[-1], "llama-bench")
    out = subprocess.run([exe, "-m", gguf, "-t", str(threads), "-p", str(prompt_tokens), "-n", str(tokens),
                          "-r", "3", "-o", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        log(f"WARNING llama-bench failed: {out.stderr[-500:]}")
        return None
    rows = json.loads(out.stdout)
    pp = next((r["avg_ts"] for r in rows if r.get("n_prompt", 0) > 0 and r.get("n_gen", 0) == 0), None)
    tg = next((r["avg_ts"] for r in rows if r.get("n_gen", 0) > 0 and r.get("n_prompt", 0) == 0), None)
    return pp, tg


def active_generator(client, models_dir):
    """The local GGUF file of the active preset's generator, or None."""
    _, status, presets = client.timed("GET", "/api/presets")
    if status != 200:
        return None
    ref = next((p.get("gen") for p in presets["presets"] if p.get("active")), None) or ""
    if not ref.startswith("hf:"):
        return None
    path = os.path.join(models_dir, "models", *ref[3:].split("/"))
    return path if os.path.isfile(path) else None


def measure_ask(client, port, queries, models_dir, worker_pid=None):
    """Raw ask latency, then the same questions streamed: time to the first token, the decode
    rate between the first and the last token event, and the prompt rate (prompt tokens over
    the time to the first token less the same query's retrieval time); against llama.cpp's own
    llama-bench on the same GGUF file, thread count and prompt length."""
    res = {}
    bodies = [{"query": q, "maxAnswerTokens": ASK_TOKENS} for q in queries[:ASK_QUESTIONS]]
    lat = []
    for b in bodies:
        ms, status, reply = client.timed("POST", "/api/ask", b)
        if status != 200:
            log(f"WARNING /api/ask -> {status}: {reply}")
            return res
        lat.append(ms)
    res["ask_p50_ms"] = percentile(lat, 50)
    if worker_pid:
        res["worker_rss_gen_mb"] = rss_mb(worker_pid)
    firsts, rates, prompt_rates, prompts = [], [], [], []
    for b in bodies:
        retrieval_ms, _, _ = client.timed("POST", "/api/query", {"query": b["query"], "limit": 12})
        streamed = ask_streamed(port, b)
        if streamed.first_s is None or not streamed.reply:
            continue
        first, last, reply = streamed.first_s * 1000.0, streamed.last_s * 1000.0, streamed.reply
        firsts.append(first)
        tokens = reply["meta"]["answerTokens"]
        prompts.append(reply["meta"]["promptTokens"])
        if first > retrieval_ms:
            prompt_rates.append(reply["meta"]["promptTokens"] / ((first - retrieval_ms) / 1000.0))
        if tokens > 8 and last > first:
            rates.append((tokens - 1) / ((last - first) / 1000.0))
    if firsts:
        res["ask_first_token_p50_ms"] = percentile(firsts, 50)
    if rates:
        res["ask_decode_tok_s"] = percentile(rates, 50)
    if prompt_rates:
        res["ask_prompt_tok_s"] = percentile(prompt_rates, 50)
    gguf = active_generator(client, models_dir)
    if prompts and gguf:
        measured = llama_bench(gguf, os.cpu_count() or 2, int(percentile(prompts, 50)), ASK_TOKENS)
        if measured:
            res["llama_bench_pp_tok_s"], res["llama_bench_tg_tok_s"] = measured
            if res.get("ask_decode_tok_s") and res["llama_bench_tg_tok_s"]:
                res["ask_decode_share"] = res["ask_decode_tok_s"] / res["llama_bench_tg_tok_s"]
            if res.get("ask_prompt_tok_s") and res["llama_bench_pp_tok_s"]:
                res["ask_prompt_share"] = res["ask_prompt_tok_s"] / res["llama_bench_pp_tok_s"]
    return res


BIG_NOTE_BYTES = 1_000_000


def write_big_note(path):
    """A ~1 MB Markdown note: sections with headings, paragraphs, lists, links and code."""
    parts, size, i = [], 0, 0
    while size < BIG_NOTE_BYTES:
        i += 1
        block = (f"## Section {i}\n\nParagraph {i} about indexing, *latency* and **search**, linking to "
                 f"[[Section {i + 1}]] and [a relative note](note-{i % 50:04d}.md). " + "Words of filler text. " * 20 +
                 f"\n\n- item one of {i}\n- item two with `code {i}`\n\n```\nfn section_{i}() {{}}\n```\n\n")
        parts.append(block)
        size += len(block.encode())
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("# A one-megabyte note\n\n" + "".join(parts))


def measure_workspace(client, corpus_dir, name, queries, job_timeout, models):
    """The browser workspace in headless Chromium (scripts/bench_workspace.py, run with the
    .venv Python that scripts/browser-env prepares); {} with a warning when it cannot run."""
    python = os.path.join(REPO, ".venv", "bin", "python")
    chromium = shutil.which("chromium")
    if not os.access(python, os.X_OK) or not chromium or subprocess.run(
            [python, "-c", "import playwright"], capture_output=True).returncode != 0:
        log(f"{name}: WARNING no Chromium or Playwright (run scripts/browser-env): no workspace figures")
        return {}
    write_big_note(os.path.join(corpus_dir, "workspace-bench", "big-note.md"))
    run_job(client, "/api/sync", {"collection": name}, job_timeout)
    if models:
        wait_embedded(client, job_timeout)  # the big note's chunks, before anything is timed
    cmd = [python, os.path.join(SCRIPTS, "bench_workspace.py"), "--base", f"http://127.0.0.1:{client.port}",
           "--big-uri", f"svc://{name}/workspace-bench/big-note.md", "--queries", json.dumps(queries[:20]),
           "--chromium", chromium]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        log(f"{name}: WARNING the workspace benchmark failed:\n{done.stderr[-3000:]}")
        return {}
    return json.loads(done.stdout.strip().splitlines()[-1])


def wait_embedded(client, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, st = client.request("GET", "/api/status")
        if status == 200 and st.get("embeddingBacklog") == 0 and all(
                c.get("embeddedCount") == c.get("documentCount") for c in st.get("collections", [])):
            return True
        time.sleep(1)
    return False


def bench_corpus(name, corpus_dir, queries, args, tmp):
    res = {"queries": len(queries)}
    files = md_files(corpus_dir)
    res["files"] = len(files)
    server = Server(args.bin, tempfile.mkdtemp(prefix=f"svc-{name}-", dir=tmp))
    if args.models:
        # The prepared model cache (scripts/models): vectors, the tokenizer, balanced capsules.
        cache = os.path.join(server.root, "cache")
        os.makedirs(cache, exist_ok=True)
        os.symlink(os.path.join(args.models, "models"), os.path.join(cache, "models"))
    client = None
    try:
        log(f"{name}: starting server")
        server.start()
        client = Http(server.port)
        log(f"{name}: first index of {len(files)} files")
        wall, job = run_job(client, "/api/collections", {"path": corpus_dir, "name": name}, args.job_timeout)
        res["first_index_wall_s"], res["first_index_job_s"] = wall, job_seconds(job)
        res["files_indexed"] = (job.get("result") or {}).get("totalFilesProcessed")

        log(f"{name}: no-op re-index")
        wall, job = run_job(client, "/api/sync", {}, args.job_timeout)
        res["noop_reindex_wall_s"], res["noop_reindex_job_s"] = wall, job_seconds(job)

        log(f"{name}: search latency ({len(queries)} queries x 3)")
        lat, zero = measure_search(client, queries)
        res["search_p50_ms"], res["search_p99_ms"] = percentile(lat, 50), percentile(lat, 99)
        res["search_zero_hit_queries"] = zero
        if zero:
            log(f"{name}: WARNING {zero} of {len(queries)} queries returned no results")

        status, docs = client.request("GET", "/api/docs?limit=100")
        if status != 200 or not docs.get("documents"):
            raise RuntimeError(f"GET /api/docs -> {status}: {docs}")
        doc_uri = docs["documents"][0]["uri"]

        # With models, the background embedding would share the cores with every timed
        # request: wait for it first.
        embedded = False
        if args.models:
            log(f"{name}: waiting for embeddings (--models)")
            embedded = wait_embedded(client, args.job_timeout)
            if not embedded:
                log(f"{name}: WARNING embeddings not done within {args.job_timeout} s; no balanced figure")
        log(f"{name}: capsules, changes, impact")
        res.update(measure_evidence(client, queries, [d["uri"] for d in docs["documents"]]))
        log(f"{name}: MCP tool calls over stdio ({MCP_CALLS})")
        res.update(measure_mcp(server, queries))
        if embedded:
            lat, _ = capsule_latency(client, queries, "balanced")
            res["capsule_balanced_p50_ms"], res["capsule_balanced_p99_ms"] = percentile(lat, 50), percentile(lat, 99)
            status, caps = client.request("GET", "/api/capabilities")
            if args.preset:
                status, body = client.request("POST", "/api/presets", {"presetId": args.preset})
                if status >= 300:
                    raise RuntimeError(f"POST /api/presets {args.preset} -> {status}: {body}")
                status, caps = client.request("GET", "/api/capabilities")
            if status == 200 and caps.get("answer"):
                log(f"{name}: ask ({ASK_QUESTIONS} questions, raw and streamed, preset {args.preset or 'active'})")
                res.update(measure_ask(client, server.port, queries, args.models, server.processes().get("worker")))

        log(f"{name}: reads during sync (every file edited)")
        res.update(measure_reads_during_sync(client, server.port, files, doc_uri, queries[0], args.job_timeout))
        if res["edit_sync_files_updated"] is not None and res["edit_sync_files_updated"] < len(files):
            log(f"{name}: WARNING the edit sync updated {res['edit_sync_files_updated']} of {len(files)} files")

        log(f"{name}: single-note write -> searchable ({WRITE_PROBES} writes)")
        res.update(measure_write_to_searchable(client, name))
        log(f"{name}: reads during a burst of {BURST_WRITES} writes")
        res.update(measure_reads_during_write_burst(client, server.port, name, doc_uri, queries[0]))

        if name == "notes":
            # Last: its 1 MB note (with 4,000 links) would change the other figures.
            log(f"{name}: the browser workspace (headless Chromium)")
            res.update(measure_workspace(client, corpus_dir, name, queries, args.job_timeout, embedded))

        procs = server.processes()
        for role in ("supervisor", "gateway", "worker"):
            res[f"{role}_rss_mb"] = rss_mb(procs[role]) if role in procs else None
            if role not in procs:
                log(f"{name}: WARNING no '{role}' process found under pid {server.proc.pid}")
        return res
    except Exception:
        tail = server.log_tail()
        if tail:
            log(f"{name}: last server log lines:\n{tail}")
        raise
    finally:
        if client is not None:
            client.close()
        server.stop()


# ---------------------------------------------------------------- report


def print_table(results):
    header = ["metric", "2000-note", "scifact", "target"]
    lines = [[label, fmt(f, results.get("notes", {}).get(key)), fmt(f, results.get("scifact", {}).get(key)), target]
             for key, label, f, target, _ in ROWS]
    widths = [max(len(r[i]) for r in [header] + lines) for i in range(4)]

    def row(cells):
        return " | ".join(c.ljust(w) if i == 0 else c.rjust(w) if i < 3 else c
                          for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(row(header))
    print("-+-".join("-" * w for w in widths))
    for line in lines:
        print(row(line))
    missed = []
    for key, label, _, _, check in ROWS:
        if not check:
            continue
        scope, limit = check
        for corpus, res in results.items():
            if (scope == "all" or scope == corpus) and res.get(key) is not None and res[key] > limit:
                missed.append(f"{label} [{corpus}] = {res[key]:.3g} > {limit:g}")
    print("targets missed: " + ("; ".join(missed) if missed else "none"))


def main():

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", choices=["notes", "scifact", "watch", "all"], default="all",
                    help="watch: the live index (scripts/bench_watch.py: edits on disk, a checkout, startup with "
                         "50,000 notes); all: notes, scifact and watch")
    target_dir = os.path.join(REPO, os.environ.get("CARGO_TARGET_DIR") or "target")  # an absolute value wins
    ap.add_argument("--bin", default=os.path.join(target_dir, "release", "svc"),
                    help="the svc binary (default: $CARGO_TARGET_DIR/release/svc, else target/release/svc)")
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"), help="shared/ directory")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    ap.add_argument("--job-timeout", type=float, default=900, help="seconds to wait for one job")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (corpora, server logs)")
    ap.add_argument("--no-build", action="store_true", help="(handled by scripts/bench)")
    ap.add_argument("--models", metavar="CACHE",
                    help="a model cache prepared by scripts/models (e.g. target/test-models/cache): adds vectors "
                         "and balanced capsules; needs ORT_DYLIB_PATH")
    ap.add_argument("--preset", metavar="ID",
                    help="switch to this model preset (POST /api/presets) before the ask figures; its generator "
                         "must be in the --models cache")
    args = ap.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop the servers and remove the temp dir.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.bin = os.path.abspath(args.bin)
    args.shared = os.path.abspath(args.shared)
    if args.models:
        args.models = os.path.abspath(args.models)
        if not os.path.isdir(os.path.join(args.models, "models")) or not os.environ.get("ORT_DYLIB_PATH"):
            sys.exit("--models needs CACHE/models and ORT_DYLIB_PATH (see scripts/ort-env)")
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"binary not found or not executable: {args.bin}")

    names = ["notes", "scifact", "watch"] if args.corpus == "all" else [args.corpus]
    tmp = tempfile.mkdtemp(prefix="svc-bench-")
    results, failed = {}, []
    try:
        for name in names:
            corpus_dir = os.path.join(tmp, "corpus", name)
            try:
                if name == "watch":
                    results[name] = bench_watch.bench_watch(args, tmp)
                    continue
                log(f"{name}: generating corpus in {corpus_dir}")
                queries = CORPORA[name](args.shared, corpus_dir)
                results[name] = bench_corpus(name, corpus_dir, queries, args, tmp)
            except Exception as e:
                traceback.print_exc()
                failed.append(name)
                results[name] = {"error": str(e)}
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    if set(results) - {"watch"}:
        print_table({k: v for k, v in results.items() if k != "watch"})
    if "watch" in results:
        bench_watch.print_table(results["watch"])
    if args.json:
        targets = {key: {"max": check[1], "corpus": check[0]} for key, _, _, _, check in ROWS if check}
        targets.update({key: {"max": limit, "corpus": "watch"} for key, _, _, _, limit in bench_watch.ROWS
                        if limit is not None})
        meta = {"bin": args.bin, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count()}
        with open(args.json, "w") as f:
            json.dump({"results": results, "targets": targets, "meta": meta}, f, indent=2)
            f.write("\n")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
