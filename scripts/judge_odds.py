#!/usr/bin/env python3
"""What verified mode would have vouched for: replays a run at other thresholds of its two
semantic signals, the similarity of claim and sentence and the judge's odds.

A run of `scripts/eval --mode ask-docs --answers FILE` with the worker's verifier logged
(`SVC_LOG=info,worker::answer::verified=debug`), built for calibration with `SUPPORT_SIMILARITY`
and `MEANING_YES` at 0 and every group of claims judged (no ruling skipped once the answer is
lost), leaves per question each claim's similarity (`confidence` in the reply), how its words are
held (`ByWords` / `ByMeaning`, the `verified: ... claim i` lines) and each group's ruling and
share of "yes" (`verified judged: ... claims [..] by meaning B ruling R yes Some(p)`). The answer
is vouched for at similarity S and odds T when it rejected no citation and every claim listed is
a candidate with similarity at least S whose group holds: ruled yes (or every claim of it held by
meaning), and, when a claim of it is held by meaning, a share of "yes" of at least T (and of at least W when none is). Groups are
those of the run (formed at S = 0): a higher S leaves a claim out rather than regrouping it. This
prints, for each (S, T, W), the answers vouched for, right and wrong, with the wrong ones' ids, so a
threshold is chosen on one set and read off the others from the same kind of run. Python standard
library only.

    python3 scripts/judge_odds.py --answers A.json --log KEPT_DIR/serve.log --set rustdocs
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_docs import contains_any, load_set  # noqa: E402

CLAIM = re.compile(r'DEBUG worker::answer::verified: verified: (".*?") claim (\d+) .*?\(substantive (true|false), '
                   r'recited (?:true|false), (ByWords|ByMeaning)\)')
JUDGED = re.compile(r'verified judged: (".*?") \[(\d+)\] claims \[([^\]]*)\] by meaning (true|false) '
                    r'ruling (\w+) yes (?:Some\(([-\d.e]+)\)|None)')


def read_log(log_path):
    """{question: {claim index: (substantive, held)}} and {question: [(claims, holds, share)]} from the log."""
    held = collections.defaultdict(dict)
    groups = collections.defaultdict(list)
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = CLAIM.search(line)
            if m:
                held[json.loads(m.group(1))][int(m.group(2))] = (m.group(3) == "true", m.group(4))
                continue
            m = JUDGED.search(line)
            if m:
                members = [int(x) for x in m.group(3).split(",") if x.strip()]
                share = float(m.group(6)) if m.group(6) else None
                groups[json.loads(m.group(1))].append((members, m.group(5) == "Holds", share))
    return held, groups


def vouched(reply, held, groups, s, t, w):
    """Whether the calibration run's `reply` would be vouched for at similarity `s`, odds `t`
    (claims held by meaning) and `w` (groups held by their words: the ruling and this share)."""
    claims = reply["verification"]["claims"]
    if not claims["claims"] or claims["rejectedCitations"]:
        return False
    # The log's claim indices count every claim, substantive or not; the reply lists the
    # substantive ones, in the same order.
    substantive = sorted(i for i, (is_substantive, _) in held.items() if is_substantive)
    by_index = dict(zip(substantive, claims["claims"]))
    by_meaning = {i for i, (_, how) in held.items() if how == "ByMeaning"}
    for members, holds, share in groups:
        meaning = any(i in by_meaning for i in members)
        ruled = all(i in by_meaning for i in members) or (holds and (share is None or share >= w))
        meant = not meaning or (share is not None and share >= t)
        for i in members:
            if i in by_index:
                by_index[i]["_group"] = ruled and meant
    for c in claims["claims"]:
        if c["rejectedCitations"] or c["confidence"] is None or c["confidence"] < s or not c.get("_group"):
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", required=True, help="the run's --answers FILE")
    ap.add_argument("--log", required=True, help="the kept run's serve.log")
    ap.add_argument("--set", default=None, help="the question set (as scripts/eval --set)")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--similarities", default="0,0.3,0.4,0.5,0.6")
    ap.add_argument("--thresholds", default="0,0.5,0.6,0.65,0.7,0.8")
    ap.add_argument("--words-thresholds", default="0")
    args = ap.parse_args()
    questions, _ = load_set(args.set)
    by_id = json.load(open(args.answers))[args.preset]
    held, groups = read_log(args.log)
    print(f"{'S':>5} {'T':>5} {'W':>5} {'right':>6} {'wrong':>6}  wrong ids")
    grid = [(float(s), float(t), float(w)) for s in args.similarities.split(",")
            for t in args.thresholds.split(",") for w in args.words_thresholds.split(",")]
    for s, t, w in grid:
        right, wrong, wrong_ids = 0, 0, []
        for q in questions:
            v = by_id.get(q["id"], {}).get("verified") or {}
            if not v.get("meta") or not v["meta"].get("answerGenerated"):
                continue
            text = q["question"]
            v = json.loads(json.dumps(v))  # marks are set per replay
            if not vouched(v, held.get(text, {}), groups.get(text, []), s, t, w):
                continue
            draft = " ".join(c["text"] for c in v["verification"]["claims"]["claims"])
            ok = not q.get("unanswerable") and contains_any(draft, q["answers"])
            right, wrong = right + ok, wrong + (not ok)
            if not ok:
                wrong_ids.append(q["id"])
        print(f"{s:>5} {t:>5} {w:>5} {right:>6} {wrong:>6}  {' '.join(wrong_ids)}")


if __name__ == "__main__":
    main()
