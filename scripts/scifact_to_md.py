#!/usr/bin/env python3
"""Convert a BEIR corpus.jsonl (SciFact) into one Markdown file per document.

Usage: scifact_to_md.py CORPUS_JSONL OUT_DIR

Each document {"_id", "title", "text"} becomes OUT_DIR/<_id>.md containing
"# <title>\n\n<text>\n" (no front matter). The output is deterministic.
"""
import json
import urllib.parse
import os
import sys


def doc_to_markdown(doc):
    return f"# {doc.get('title', '')}\n\n{doc.get('text', '')}\n"


def convert(corpus_jsonl, out_dir):
    """Write one <_id>.md per line of corpus_jsonl into out_dir; return the ids in file order."""
    os.makedirs(out_dir, exist_ok=True)
    ids = []
    with open(corpus_jsonl, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            doc = json.loads(line)
            doc_id = str(doc["_id"])
            if not doc_id or "/" in doc_id or doc_id in (".", ".."):
                raise ValueError(f"unsafe document id for a file name: {doc_id!r}")
            path = os.path.join(out_dir, doc_id + ".md")
            with open(path, "w", encoding="utf-8", newline="") as out:
                out.write(doc_to_markdown(doc))
            ids.append(doc_id)
    return ids


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: scifact_to_md.py CORPUS_JSONL OUT_DIR")
    ids = convert(argv[1], argv[2])
    print(f"wrote {len(ids)} documents to {argv[2]}")


def load_queries(path):
    """[(query id, text)] in file order."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                out.append((str(q["_id"]), q["text"]))
    return out


def load_qrels(path):
    """{query id: {corpus id: score}}; the first line is the header `query-id corpus-id score`."""
    qrels = {}
    with open(path, encoding="utf-8") as f:
        for line in list(f)[1:]:
            if not line.strip():
                continue
            q, d, s = line.rstrip("\n").split("\t")
            qrels.setdefault(q, {})[d] = int(s)
    return qrels


def uri_to_id(uri):
    """svc://scifact/<corpus id>.md -> corpus id (last path segment, minus .md, percent-decoded)."""
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".md"):
        name = name[:-3]
    return urllib.parse.unquote(name)


if __name__ == "__main__":
    main(sys.argv)
