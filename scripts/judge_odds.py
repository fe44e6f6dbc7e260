#!/usr/bin/env python3
"""What the judge's odds would have vouched for: replays a verified-mode run at other thresholds.

A run of `scripts/eval --mode ask-docs --keep --answers FILE` with the worker's judge logged
(`SVC_LOG=info,worker::answer::verified=debug`, built with `MEANING_YES` at 0, so every claim held
in other words reaches the judge and is taken) leaves, per question, the judge's share of "yes"
for each group of claims held by meaning (`verified judged: ... by meaning true ... yes Some(p)`
in `serve.log`). A verified answer of that run is still verified at threshold T when every such
group's share is at least T: this prints, for each T, the answers vouched for, right and wrong,
and the answers held by words alone (no group judged by meaning), so that the threshold is chosen
on one set and read off the others from the same runs. Python standard library only.

    python3 scripts/judge_odds.py --answers A.json --log KEPT_DIR/serve.log --set rustdocs
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_docs import contains_any, is_decline, load_set  # noqa: E402

JUDGED = re.compile(r'verified judged: (".*?") \[(\d+)\] claims \[[^\]]*\] by meaning (true|false) '
                    r'ruling (\w+) yes (?:Some\(([-\d.e]+)\)|None)')


def shares(log_path):
    """{question text: [share of each group held by meaning]}, from the judge's debug lines."""
    by_question = collections.defaultdict(list)
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = JUDGED.search(line)
            if not m or m.group(3) != "true":
                continue
            question = json.loads(m.group(1))
            by_question[question].append(float(m.group(5)) if m.group(5) else 0.0)
    return by_question


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", required=True, help="the run's --answers FILE")
    ap.add_argument("--log", required=True, help="the kept run's serve.log")
    ap.add_argument("--set", default=None, help="the question set (as scripts/eval --set)")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--thresholds", default="0,0.5,0.6,0.7,0.8,0.85,0.9,0.95,0.98,0.99,1.01")
    args = ap.parse_args()
    questions, _ = load_set(args.set)
    by_id = json.load(open(args.answers))[args.preset]
    odds = shares(args.log)
    print(f"{'T':>6} {'right':>6} {'wrong':>6}  (by words alone: right / wrong)  wrong ids")
    for t in [float(x) for x in args.thresholds.split(",")]:
        right, wrong, words_right, words_wrong, wrong_ids = 0, 0, 0, 0, []
        for q in questions:
            v = by_id.get(q["id"], {}).get("verified") or {}
            if not v.get("meta") or v["meta"]["abstained"] or is_decline((200, v)):
                continue
            groups = odds.get(q["question"], [])
            if groups and min(groups) < t:
                continue
            ok = not q.get("unanswerable") and contains_any(v.get("answer") or "", q["answers"])
            right, wrong = right + ok, wrong + (not ok)
            if not groups:
                words_right, words_wrong = words_right + ok, words_wrong + (not ok)
            if not ok:
                wrong_ids.append(q["id"])
        print(f"{t:>6} {right:>6} {wrong:>6}  ({words_right} / {words_wrong})  {' '.join(wrong_ids)}")


if __name__ == "__main__":
    main()
