#!/usr/bin/env python3
"""Checks the manpages-de and manpages-fr answer-quality sets against their rendered pages.

Usage: check_manpages.py [--set NAME] [--out-de DIR] [--out-fr DIR]

Without --out-*, each set is built into a temporary directory by its own build.sh (a few minutes:
every page is rendered with man). With --out-de/--out-fr, an existing build (an OUT_DIR given to
that build.sh) is checked instead. --set de or --set fr checks one set only.

Checks, for each set's questions.jsonl:
- every line is a JSON object with id, question, answers, sources, kind, unanswerable; ids unique;
- answerable questions have 1-3 answers and at least one source; unanswerable ones have neither
  (nothing to check in the pages for them);
- every source exists under OUT_DIR;
- every answer phrase occurs (case-insensitive) in at least one of its question's sources.
Prints one line per failure and a summary per set; exits 1 on any failure. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = ("de", "fr")
FIELDS = ("id", "question", "answers", "sources", "kind", "unanswerable")


def load(path):
    questions, errors = [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"line {n}: not JSON ({e})")
                continue
            missing = [k for k in FIELDS if k not in q]
            if missing:
                errors.append(f"line {n}: missing {', '.join(missing)}")
                continue
            questions.append(q)
    return questions, errors


def check(lang, out):
    root = os.path.join(HERE, f"manpages-{lang}")
    questions, errors = load(os.path.join(root, "questions.jsonl"))
    seen = set()
    for q in questions:
        qid = q["id"]
        if qid in seen:
            errors.append(f"{qid}: duplicate id")
        seen.add(qid)
        if q["unanswerable"]:
            if q["answers"] or q["sources"]:
                errors.append(f"{qid}: unanswerable but has answers or sources")
            continue
        if not 1 <= len(q["answers"]) <= 3:
            errors.append(f"{qid}: {len(q['answers'])} answers (want 1-3)")
        if not q["sources"]:
            errors.append(f"{qid}: no sources")
        texts = []
        for src in q["sources"]:
            path = os.path.join(out, src)
            if not os.path.isfile(path):
                errors.append(f"{qid}: source {src} does not exist in {out}")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read().lower())
        for phrase in q["answers"]:
            if texts and not any(phrase.lower() in t for t in texts):
                errors.append(f"{qid}: answer {phrase!r} in none of {q['sources']}")
    answerable = sum(1 for q in questions if not q["unanswerable"])
    pages = sum(len(fs) for _, _, fs in os.walk(out))
    for e in errors:
        print(f"manpages-{lang}: {e}")
    status = "FAIL" if errors else "ok"
    print(f"manpages-{lang}: {status}: {len(questions)} questions ({answerable} answerable, "
          f"{len(questions) - answerable} unanswerable), {pages} pages in {out}, {len(errors)} failures")
    return not errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=SETS, help="check one set only")
    ap.add_argument("--out-de", help="an existing OUT_DIR built by manpages-de/build.sh")
    ap.add_argument("--out-fr", help="an existing OUT_DIR built by manpages-fr/build.sh")
    args = ap.parse_args()
    ok = True
    for lang in ([args.set] if args.set else SETS):
        out = getattr(args, f"out_{lang}")
        if out:
            ok &= check(lang, out)
            continue
        with tempfile.TemporaryDirectory(prefix=f"manpages-{lang}-") as tmp:
            build = os.path.join(HERE, f"manpages-{lang}", "build.sh")
            r = subprocess.run(["bash", build, tmp], stdout=sys.stderr)
            if r.returncode != 0:
                print(f"manpages-{lang}: FAIL: {build} exited {r.returncode}")
                ok = False
                continue
            ok &= check(lang, tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
