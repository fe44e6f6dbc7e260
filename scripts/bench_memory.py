#!/usr/bin/env python3
"""The worker's memory by the size of the folder: for each count of generated notes
(scripts/corpus_gen.py, seed 42), a fresh `svc serve` indexes them (keyword index, no models),
then the worker's RSS is read after the job, after 50 searches, and once more after 10 s of
quiet. Reports MB and MB per 1,000 notes. Python standard library only.

Usage: scripts/bench_memory.py [--counts 2000,10000,50000] [--bin target/release/svc] [--json F]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svclib import NOTES_QUERIES, REPO, Http, Server, log, make_notes, rss_mb, run_job  # noqa: E402


def measure(binary, count, tmp):
    notes = os.path.join(tmp, f"notes-{count}")
    log(f"{count} notes: generating")
    make_notes(notes, count)
    server = Server(binary, os.path.join(tmp, f"svc-{count}"))
    server.start()
    try:
        client = Http(server.port)
        wall, _ = run_job(client, "/api/collections", {"path": notes, "name": "notes", "watch": False}, 3600)
        worker = server.processes()["worker"]
        indexed = rss_mb(worker)
        for q in NOTES_QUERIES + NOTES_QUERIES[:20]:
            client.request("POST", "/api/search", {"query": q, "limit": 10})
        searched = rss_mb(worker)
        time.sleep(10)
        quiet = rss_mb(worker)
        row = {"notes": count, "index_s": round(wall, 2), "rss_indexed_mb": round(indexed, 1),
               "rss_searched_mb": round(searched, 1), "rss_quiet_mb": round(quiet, 1),
               "mb_per_1000_notes": round(quiet / count * 1000, 1)}
        log(json.dumps(row))
        return row
    finally:
        server.stop()
        shutil.rmtree(notes, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", default="2000,10000,50000")
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "svc"))
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="svc-bench-memory-")
    try:
        rows = [measure(args.bin, int(c), tmp) for c in args.counts.split(",")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| notes | first index | worker RSS after indexing | after 70 searches | after 10 s quiet | MB per 1,000 notes |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['notes']:,} | {r['index_s']} s | {r['rss_indexed_mb']} MB | {r['rss_searched_mb']} MB | "
              f"{r['rss_quiet_mb']} MB | {r['mb_per_1000_notes']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
