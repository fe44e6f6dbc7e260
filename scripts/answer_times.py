#!/usr/bin/env python3
"""Where an answer's time goes, read from a server log (`serve.log` of `scripts/eval.py --mode
ask-docs --keep`/`--reuse DIR`, or any `svc serve` log at the default `info` level).

The worker logs, per ask: "sources drawn" (retrieval_ms: the hybrid search; passages_ms: the
pool of passages ranked and the sources chosen), one "generation timed" line per generation
(purpose: draft, second draft, verified draft, judge; prompt_ms: reading the prompt to the
first answer token's odds, reused_tokens of it taken from the cache; answer_ms: generating the
answer after it), and "answered" (mode raw or verified, total_ms). Each ask's lines end with its
"answered" line; one generator serves one ask at a time.

Prints, per mode, the median and the mean of each part over the asks and its share of the mean
total, as a Markdown table. Python standard library only.

    scripts/answer_times.py LOG [LOG...] [--json FILE]
"""
import argparse
import collections
import json
import re
import statistics
import sys

FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def fields(line):
    out = {}
    for key, value in FIELD.findall(line):
        out[key] = value[1:-1] if value.startswith('"') else value
    return out


def asks(lines):
    """Each ask's parts in ms (a Counter: retrieval, passages, "<purpose> prompt" / "answer" /
    "count" / "prompt tokens" / "reused tokens"), with its "mode" and "total"."""
    current = collections.Counter()
    for line in lines:
        f = fields(line)
        if "sources drawn" in line:
            current["retrieval"] += int(f.get("retrieval_ms", 0))
            current["passages"] += int(f.get("passages_ms", 0))
        elif "generation timed" in line:
            purpose = f.get("purpose", "draft")
            current[f"{purpose} prompt"] += int(f.get("prompt_ms", 0))
            current[f"{purpose} answer"] += int(f.get("answer_ms", 0))
            current[f"{purpose} count"] += 1
            current[f"{purpose} prompt tokens"] += int(f.get("prompt_tokens", 0))
            current[f"{purpose} reused tokens"] += int(f.get("reused_tokens", 0))
        elif " answered " in line and "total_ms" in f:
            yield {**current, "mode": f.get("mode", "raw"), "total": int(f["total_ms"])}
            current = collections.Counter()

ORDER = ["retrieval", "passages", "draft prompt", "draft answer", "second draft prompt", "second draft answer",
         "verified draft prompt", "verified draft answer", "judge prompt", "judge answer"]


def summary(rows):
    """Per part: median and mean ms over all asks (0 where an ask had none), share of the mean total."""
    total_mean = statistics.mean(r["total"] for r in rows)
    out = {"asks": len(rows), "total": {"median": statistics.median(r["total"] for r in rows), "mean": total_mean}}
    parts = [p for p in ORDER if any(p in r for r in rows)]
    for part in parts:
        values = [r.get(part, 0) for r in rows]
        out[part] = {"median": statistics.median(values), "mean": statistics.mean(values),
                     "share": statistics.mean(values) / total_mean if total_mean else 0.0}
    accounted = sum(out[p]["mean"] for p in parts)
    out["other"] = {"mean": total_mean - accounted, "share": (total_mean - accounted) / total_mean if total_mean else 0.0}
    for purpose in ("draft", "second draft", "verified draft", "judge"):
        counts = [r.get(f"{purpose} count", 0) for r in rows]
        if any(counts):
            tokens = sum(r.get(f"{purpose} prompt tokens", 0) for r in rows)
            reused = sum(r.get(f"{purpose} reused tokens", 0) for r in rows)
            read_ms = sum(r.get(f"{purpose} prompt", 0) for r in rows)
            out[f"{purpose} per ask"] = {"generations": sum(counts) / len(rows),
                                         "asks with one": sum(1 for c in counts if c) / len(rows),
                                         "prompt tokens read per second": round((tokens - reused) / (read_ms / 1000), 1) if read_ms else None,
                                         "prompt tokens (mean)": tokens / sum(counts), "reused (mean)": reused / sum(counts)}
    return out


def table(mode, s):
    print(f"\n{mode}: {s['asks']} asks, total median {s['total']['median'] / 1000:.2f} s, mean {s['total']['mean'] / 1000:.2f} s\n")
    print("| part | median (s) | mean (s) | share of the mean |")
    print("|---|---:|---:|---:|")
    for part in ORDER + ["other"]:
        if part in s:
            v = s[part]
            median = f"{v['median'] / 1000:.2f}" if "median" in v else ""
            print(f"| {part} | {median} | {v['mean'] / 1000:.2f} | {100 * v['share']:.0f}% |")
    for purpose in ("draft", "second draft", "verified draft", "judge"):
        k = f"{purpose} per ask"
        if k in s:
            v = s[k]
            print(f"\n{purpose}: {v['generations']:.2f} per ask (in {100 * v['asks with one']:.0f}% of asks), "
                  f"prompt {v['prompt tokens (mean)']:.0f} tokens of which {v['reused (mean)']:.0f} from the cache, "
                  f"read at {v['prompt tokens read per second']} tokens/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = ap.parse_args()
    rows = []
    for path in args.logs:
        with open(path, errors="replace") as f:
            rows.extend(asks(f))
    if not rows:
        sys.exit("no answered ask in the log (is it an `info` log of a build that times answers?)")
    report = {}
    for mode in ("raw", "verified"):
        mine = [r for r in rows if r["mode"] == mode]
        if mine:
            report[mode] = summary(mine)
            table(mode, report[mode])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
