"""The measurements of scripts/bench.py, one function each over a running server: search,
reads during a sync, write -> searchable, reads during a write burst, capsules and changes,
MCP over stdio, answers, the browser workspace. Python standard library only (the workspace's
measure runs scripts/bench_workspace.py in the project's .venv).
"""
import http.client
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse

from svclib import REPO, SCRIPTS, Http, ask_streamed, log, percentile, probe_token, reader_loop, rss_mb, run_job

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
