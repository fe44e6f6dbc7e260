#!/usr/bin/env python3
"""Checks scripts/ask_eval/questions.json against the cargo registry sources.

Usage: check_questions.py [REGISTRY_SRC_DIR]

REGISTRY_SRC_DIR defaults to the first match of ~/.cargo/registry/src/index.crates.io-*/ (the
directory `cargo fetch` of this repository fills). Checks that:
- every corpus glob matches at least one file (globs use Python glob.glob(recursive=True));
- every question has a unique id; answerable ones have answers and files, unanswerable ones
  have neither;
- every listed file is matched by the corpus globs;
- every answer phrase occurs (case-insensitive) in at least one of its question's files.
Prints one summary line and exits non-zero on any failure. Python standard library only.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def registry_dir(argv):
    if len(argv) > 1:
        return argv[1]
    found = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/index.crates.io-*/")))
    if not found:
        sys.exit("no ~/.cargo/registry/src/index.crates.io-*/ directory; run `cargo fetch` first")
    return found[0]


def main(argv):
    root = registry_dir(argv)
    with open(os.path.join(HERE, "questions.json"), encoding="utf-8") as f:
        doc = json.load(f)
    errors = []

    corpus = set()
    for pattern in doc["corpus"]["globs"]:
        matched = [os.path.relpath(p, root) for p in glob.glob(os.path.join(root, pattern), recursive=True)
                   if os.path.isfile(p)]
        if not matched:
            errors.append(f"glob matches no file: {pattern}")
        corpus.update(m.replace(os.sep, "/") for m in matched)
    total_bytes = sum(os.path.getsize(os.path.join(root, p)) for p in corpus)

    seen = set()
    answerable = unanswerable = 0
    texts = {}
    for q in doc["questions"]:
        qid = q.get("id", "?")
        if qid in seen:
            errors.append(f"{qid}: duplicate id")
        seen.add(qid)
        if not q.get("question", "").strip():
            errors.append(f"{qid}: empty question")
        if q.get("unanswerable"):
            unanswerable += 1
            if q.get("answers") or q.get("files"):
                errors.append(f"{qid}: unanswerable question lists answers or files")
            continue
        answerable += 1
        if not q.get("answers") or not q.get("files"):
            errors.append(f"{qid}: answerable question without answers or files")
            continue
        for path in q["files"]:
            if path not in corpus:
                errors.append(f"{qid}: file not in corpus: {path}")
            elif path not in texts:
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    texts[path] = f.read().lower()
        for phrase in q["answers"]:
            if not phrase.strip():
                errors.append(f"{qid}: empty answer phrase")
            elif not any(phrase.lower() in texts.get(p, "") for p in q["files"]):
                errors.append(f"{qid}: answer {phrase!r} not found in {q['files']}")

    for e in errors:
        print(e)
    status = "OK" if not errors else f"FAILED ({len(errors)} problems)"
    print(f"{status}: {answerable} answerable + {unanswerable} unanswerable questions; "
          f"{len(doc['corpus']['globs'])} globs, {len(corpus)} files, {total_bytes} bytes in {root}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
