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
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import scifact_to_md  # noqa: E402
import bench_large  # noqa: E402
import bench_watch  # noqa: E402
from bench_measures import (  # noqa: E402
    ASK_QUESTIONS, BURST_WRITES, MCP_CALLS, WRITE_PROBES, capsule_latency, measure_ask, measure_evidence, measure_mcp,
    measure_reads_during_sync, measure_reads_during_write_burst, measure_search, measure_workspace,
    measure_write_to_searchable, wait_embedded,
)
from svclib import REPO, Http, Server, fmt, job_seconds, log, md_files, notes_corpus, percentile, rss_mb, run_job  # noqa: E402

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
    ap.add_argument("--notes", type=int, metavar="N",
                    help="a large vault instead of --corpus: N generated notes (scripts/bench_large.py: first "
                         "index, RSS, search, write -> searchable, disk, restart)")
    ap.add_argument("--sync-edit", type=int, metavar="M",
                    help="with --notes: also M notes edited on disk and synced, reads meanwhile")
    args = ap.parse_args()
    if args.sync_edit and not args.notes:
        ap.error("--sync-edit needs --notes")
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

    names = ["large"] if args.notes else ["notes", "scifact", "watch"] if args.corpus == "all" else [args.corpus]
    tmp = tempfile.mkdtemp(prefix="svc-bench-")
    results, failed = {}, []
    try:
        for name in names:
            corpus_dir = os.path.join(tmp, "corpus", name)
            try:
                if name == "watch":
                    results[name] = bench_watch.bench_watch(args, tmp)
                    continue
                if name == "large":
                    results[name] = bench_large.bench_large(args, tmp)
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

    if set(results) - {"watch", "large"}:
        print_table({k: v for k, v in results.items() if k not in ("watch", "large")})
    if "large" in results:
        bench_large.print_table(results["large"])
    if "watch" in results:
        bench_watch.print_table(results["watch"])
    if args.json:
        # Each target under the corpus it is set for (the large vault's share figure names).
        targets = {key: {"max": check[1], "corpus": check[0]} for key, _, _, _, check in ROWS if check}
        targets.update({key: {"max": limit, "corpus": "watch"} for key, _, _, _, limit in bench_watch.ROWS
                        if limit is not None})
        if "large" in results:
            targets["large"] = {key: {"max": limit} for key, _, _, _, limit in bench_large.ROWS if limit is not None}
        meta = {"bin": args.bin, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count()}
        with open(args.json, "w") as f:
            json.dump({"results": results, "targets": targets, "meta": meta}, f, indent=2)
            f.write("\n")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
