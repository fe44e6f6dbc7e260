#!/usr/bin/env python3
"""Conversion and sync throughput per format (issue 23), on a fresh `svc serve` without models
(keyword index only, so the figures are conversion, parsing and indexing, not embedding).

Folders are made from the 2,000 generated notes (scripts/corpus_gen.py, seed 42) by
scripts/make_formats.py: the same text as XLSX, PPTX, ODP, EML and HTML, real Rust files of
the cargo registry, and the Markdown notes themselves. Per format: the sync time of COUNT files,
in MB/s (the files' bytes) and files/s. A mailbox of COUNT messages (the EML files' messages in
one .mbox, a document each): its first sync, and its sync after one message is appended (only
that message is converted). Then a mixed folder of 2,000 files (500 Markdown notes, 500 Rust
files, 500 sheets, 500 decks) against the 2,000 Markdown notes.

Usage: scripts/bench_formats.py --bin target/release/svc [--count 300]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
import svclib

FORMATS = ["md", "xlsx", "pptx", "odp", "eml", "html", "rs"]


def folder_bytes(d):
    return sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(d) for n in ns)


def sync_seconds(binary, tmp, folder, name, timeout):
    server = svclib.Server(binary, tempfile.mkdtemp(prefix=f"svc-fmt-{name}-", dir=tmp))
    try:
        server.start()
        client = svclib.Http(server.port)
        _, job = svclib.run_job(client, "/api/collections", {"path": folder, "name": name, "watch": False}, timeout)
        result = (job.get("result") or {}).get("collections", [{}])[0]
        client.close()
        return svclib.job_seconds(job), result
    finally:
        server.stop()


APPENDED = (b"From bench@example.org Wed Mar  4 10:00:00 2026\nFrom: Bench <bench@example.org>\n"
            b"Subject: One more\nDate: Wed, 04 Mar 2026 10:00:00 +0000\n\nAppended after the first sync.\n\n")


def mailbox_seconds(binary, tmp, folder, timeout):
    """A mailbox's first sync, then its sync after a message is appended: ((s, result), (s, result))."""
    server = svclib.Server(binary, tempfile.mkdtemp(prefix="svc-fmt-mbox-", dir=tmp))
    try:
        server.start()
        client = svclib.Http(server.port)
        _, first = svclib.run_job(client, "/api/collections", {"path": folder, "name": "mbox", "watch": False}, timeout)
        with open(os.path.join(folder, "inbox.mbox"), "ab") as f:
            f.write(APPENDED)
        _, again = svclib.run_job(client, "/api/sync", {}, timeout)
        client.close()
        out = []
        for job in (first, again):
            out.append((svclib.job_seconds(job), (job.get("result") or {}).get("collections", [{}])[0]))
        return out
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "svc"))
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--job-timeout", type=float, default=900)
    args = ap.parse_args()
    python = os.path.join(REPO, ".venv", "bin", "python")
    tmp = tempfile.mkdtemp(prefix="svc-bench-formats-")
    try:
        notes = os.path.join(tmp, "notes")
        svclib.make_notes(notes)
        made = os.path.join(tmp, "formats")
        svclib.log(f"writing {args.count} files per format")
        subprocess.run([python, os.path.join(SCRIPTS, "make_formats.py"), notes, made, str(max(args.count, 500))],
                       check=True)
        rows = []
        for fmt in FORMATS:
            folder = os.path.join(tmp, f"only-{fmt}")
            os.makedirs(folder)
            for n in sorted(os.listdir(os.path.join(made, fmt)))[: args.count]:
                os.link(os.path.join(made, fmt, n), os.path.join(folder, n))
            size = folder_bytes(folder)
            secs, res = sync_seconds(args.bin, tmp, folder, fmt, args.job_timeout)
            added, errored = res.get("filesAdded"), res.get("filesErrored")
            rows.append((fmt, args.count, size, secs, added, errored))
            svclib.log(f"{fmt}: {added} added, {errored} errored, {size / 1e6:.2f} MB in {secs:.2f} s")
        box = os.path.join(tmp, "only-mbox")
        os.makedirs(box)
        shutil.copy(os.path.join(made, "mbox", "inbox.mbox"), box)
        box_size = folder_bytes(box)
        (box_s, box_res), (again_s, again_res) = mailbox_seconds(args.bin, tmp, box, args.job_timeout)
        svclib.log(f"mbox: {box_res.get('filesAdded')} messages in {box_s:.2f} s, one appended in {again_s:.2f} s")
        mixed = os.path.join(tmp, "mixed")
        os.makedirs(mixed)
        for fmt in ["md", "rs", "xlsx", "pptx"]:
            for n in sorted(os.listdir(os.path.join(made, fmt)))[:500]:
                os.link(os.path.join(made, fmt, n), os.path.join(mixed, f"{fmt}-{n}"))
        mixed_s, mixed_res = sync_seconds(args.bin, tmp, mixed, "mixed", args.job_timeout)
        md_s, md_res = sync_seconds(args.bin, tmp, notes, "notes", args.job_timeout)

        print("\n| format | files | MB | sync s | MB/s | files/s | added | errored |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for fmt, count, size, secs, added, errored in rows:
            print(f"| {fmt} | {count} | {size / 1e6:.2f} | {secs:.2f} | {size / 1e6 / secs:.2f} | {count / secs:.0f} "
                  f"| {added} | {errored} |")
        print("\n| mailbox | messages | MB | sync s | MB/s | messages/s | added | unchanged | errored |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, secs, res in (("first sync", box_s, box_res), ("one message appended", again_s, again_res)):
            docs = (res.get("filesAdded") or 0) + (res.get("filesUpdated") or 0) + (res.get("filesUnchanged") or 0)
            print(f"| {name} | {docs} | {box_size / 1e6:.2f} | {secs:.2f} | {box_size / 1e6 / secs:.2f} "
                  f"| {docs / secs:.0f} | {res.get('filesAdded')} | {res.get('filesUnchanged')} | {res.get('filesErrored')} |")
        print("\n| folder | files | MB | sync s | added | errored |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, folder, secs, res in (("mixed (500 md, 500 rs, 500 xlsx, 500 pptx)", mixed, mixed_s, mixed_res),
                                        ("Markdown only (2,000 notes)", notes, md_s, md_res)):
            print(f"| {name} | {res.get('filesProcessed')} | {folder_bytes(folder) / 1e6:.2f} | {secs:.2f} "
                  f"| {res.get('filesAdded')} | {res.get('filesErrored')} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
