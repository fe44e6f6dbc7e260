#!/usr/bin/env python3
"""Embedding throughput on real documents, before against after, in one invocation.

The folder is the ask-docs corpus (the Markdown of the crates in the cargo registry at
Cargo.lock's versions, scripts/eval_docs.py: about 1,200 files, 11 MB), or --folder DIR. Each run
indexes it into a fresh data dir (`svc collection add`, not timed) and then embeds every chunk
(`svc embed`, in-process, timed). A run is LABEL=BIN[,MODEL]: an svc binary and, optionally, an
ONNX file used in place of the preset's embedder (the tokenizer stays the cache's). Runs go in
the order given, `--rounds` times over, so that a slower stretch of the machine hits each alike;
reported per run: chunks, seconds, chunks/s (the best round) and the speed against the first run.

Example (what docs/benchmarks.md reports):
  scripts/bench_embed.py --cache target/test-models/cache \\
      --run before=/tmp/old/svc,/tmp/old/model_fp32.onnx --run after=target/release/svc
Python standard library only; ORT_DYLIB_PATH as for svc itself.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPTS)
import eval_docs  # noqa: E402
from bench_models import EMBED_DIR, EMBED_FILE, chunk_texts  # noqa: E402
from svclib import default_cache_dir, run_svc  # noqa: E402


def parse_run(text):
    label, sep, rest = text.partition("=")
    if not sep or not label or not rest:
        raise argparse.ArgumentTypeError("a run is LABEL=BIN[,MODEL]")
    binary, _, model = rest.partition(",")
    for path in filter(None, (binary, model)):
        if not os.path.isfile(path):
            raise argparse.ArgumentTypeError(f"{path}: no such file")
    return label, os.path.abspath(binary), os.path.abspath(model) if model else None


def model_cache(root, cache, model):
    """A cache dir whose embedder is `model` (symlinks into the real cache)."""
    repo = os.path.join(root, EMBED_DIR)
    os.makedirs(os.path.join(repo, os.path.dirname(EMBED_FILE)))
    real = os.path.join(os.path.abspath(cache), EMBED_DIR)
    os.symlink(model or os.path.join(real, EMBED_FILE), os.path.join(repo, EMBED_FILE))
    os.symlink(os.path.join(real, "tokenizer.json"), os.path.join(repo, "tokenizer.json"))
    if os.path.isdir(os.path.join(cache, "runtime")):
        os.symlink(os.path.join(os.path.abspath(cache), "runtime"), os.path.join(root, "runtime"))
    return root


def one_run(tmp, folder, cache, binary, model, chunks_from=None):
    work = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ, SVC_CONFIG_DIR=os.path.join(work, "config"), SVC_DATA_DIR=os.path.join(work, "data"),
               SVC_CACHE_DIR=model_cache(os.path.join(work, "cache"), cache, model))
    run_svc(binary, env, ["collection", "add", folder, "--name", "docs"])
    t0 = time.perf_counter()
    proc = subprocess.run([binary, "embed"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0 or "embedded 0 " in proc.stdout:
        sys.exit(f"`{binary} embed` exited with {proc.returncode}, saying {proc.stdout.strip()!r} "
                 f"(no embedder under {env['SVC_CACHE_DIR']}?):\n{proc.stderr[-2000:]}")
    chunks = len(chunk_texts(chunks_from or binary, env))
    shutil.rmtree(work, ignore_errors=True)
    return chunks, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=parse_run, action="append", required=True, metavar="LABEL=BIN[,MODEL]")
    ap.add_argument("--cache", default=default_cache_dir(), help="svc cache dir holding the default preset's embedder")
    ap.add_argument("--folder", help="the folder to embed (default: the ask-docs corpus)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--chunks-from", metavar="BIN",
                    help="the binary asked for what was embedded (`svc embed --texts`) after each run: a binary "
                         "older than that command is measured with a newer one's count (default: each run's own)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="svc-bench-embed-")
    try:
        folder = args.folder
        if not folder:
            folder = os.path.join(tmp, "crates")
            spec = json.load(open(eval_docs.QUESTIONS))
            eval_docs.copy_corpus(spec["corpus"]["globs"], eval_docs.registry_src(), folder)
        files = sum(len(fs) for _, _, fs in os.walk(folder))
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
        print(f"folder: {files} files, {size / 1e6:.1f} MB", file=sys.stderr)
        best = {}
        for r in range(args.rounds):
            for label, binary, model in args.run:
                chunks, seconds = one_run(tmp, folder, args.cache, binary, model, args.chunks_from)
                print(f"round {r + 1} {label}: {chunks} chunks in {seconds:.1f} s, {chunks / seconds:.1f} chunks/s",
                      file=sys.stderr, flush=True)
                if label not in best or seconds < best[label]["seconds"]:
                    best[label] = {"chunks": chunks, "seconds": round(seconds, 2),
                                   "chunks_per_s": round(chunks / seconds, 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    first = best[args.run[0][0]]["chunks_per_s"]
    for label, _, _ in args.run:
        b = best[label]
        b["vs_first"] = round(b["chunks_per_s"] / first, 2)
        print(f"{label:12s} {b['chunks']:6d} chunks {b['seconds']:8.1f} s {b['chunks_per_s']:7.1f} chunks/s  "
              f"{b['vs_first']:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": files, "bytes": size, "runs": best}, f, indent=1)


if __name__ == "__main__":
    main()
