#!/usr/bin/env python3
"""A multilingual yardstick of real text: Debian's translated manual pages.

The same command's page exists in English (/usr/share/man/man1) and in translations
(/usr/share/man/<lang>/man1: manpages-de, -fr, -es, -ru, -ja, -zh and what other packages
ship). Each page is rendered to text with groff as `man` does (`col -bx` after it), its first PAGE_CHARS characters kept,
and put in one collection per language. Three sets:

  keyword       words sampled from each language's pages (for Chinese and Japanese, dictionary
                words of a sentence, cut by jieba and janome); each must find its own page in
                the top 10 of that language's collection. A word is sampled only where it is
                rare enough to name a page: in at most RARE_PAGES pages of its language.
  en->xx        the English page's NAME line (what the command does, in a few words) asked of
                language xx's collection; its relevant document is the same command's page.
  xx->en        the reverse: the xx page's NAME line asked of the English collection.

Reports recall@10 and nDCG@10 per set, language and search mode, for one preset per run
(`--preset`), indexed with the CLI in-process like scripts/eval.py.

  scripts/eval_manpages.py --preset default --json out.json [--modes bm25,vector,hybrid]

Needs groff, the manpages packages (apt), and jieba + janome in the Python that runs it:
`.venv/bin/pip install jieba==0.42.1 janome==0.5.1` (dictionary word cutters for Chinese and
Japanese, used to sample the keyword set only; svc does not use them).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
from svclib import default_cache_dir, run_svc  # noqa: E402

MAN = Path("/usr/share/man")
LANGUAGES = ("de", "fr", "es", "ru", "ja", "zh_CN")
PAGES_PER_LANGUAGE = 80
PAGE_CHARS = 6000
WORDS_PER_LANGUAGE = 200
RARE_PAGES = 3
MODES = {"bm25": ["search"], "vector": ["vsearch"], "hybrid": ["query"]}


def page_file(lang: str, command: str) -> Path | None:
    folder = MAN / "man1" if lang == "en" else MAN / lang / "man1"
    hits = sorted(folder.glob(f"{command}.1*"))
    return hits[0] if hits else None


def render(path: Path) -> str:
    """The page as `man` shows it, in UTF-8, left-adjusted, without hyphenation or overstrike."""
    source = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    # groff runs troff as a child: a page that sends it into a loop is ended with its whole
    # process group, and is left out (an empty text).
    groff = subprocess.Popen(["groff", "-Kutf8", "-man", "-Tutf8", "-P-c", "-dAD=l", "-rHY=0", "-rLL=100n"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=dict(os.environ, LC_ALL="C.UTF-8"), start_new_session=True)
    try:
        rendered, _ = groff.communicate(source, timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(groff.pid, signal.SIGKILL)
        groff.wait()
        print(f"{path}: groff took over 60 s; left out", file=sys.stderr)
        return ""
    text = subprocess.run(["col", "-bx"], input=rendered, capture_output=True).stdout.decode("utf-8", "replace")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def name_line(text: str) -> str | None:
    """What the NAME section says the command does: the words after its dash."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if i > 0 and line.strip() and not line.startswith(" ") and i + 1 < len(lines):
            body = lines[i + 1].strip()
            for dash in (" - ", " — ", " – ", " -- ", "－", " ― "):
                if dash in body:
                    what = body.split(dash, 1)[1].strip()
                    return what if len(what) >= 4 else None
            return None
    return None


def commands() -> list[str]:
    """English commands with the most translations first, then by name."""
    english = {p.name.split(".")[0] for p in (MAN / "man1").glob("*.1*")}
    counts = {c: sum(page_file(lang, c) is not None for lang in LANGUAGES) for c in english}
    return sorted((c for c, n in counts.items() if n), key=lambda c: (-counts[c], c))


def build_corpus(root: Path, per_language: int) -> dict[str, dict[str, str]]:
    """{lang: {command: text}} written to root/<lang>/<command>.txt."""
    pages: dict[str, dict[str, str]] = {"en": {}}
    for lang in LANGUAGES:
        pages[lang] = {}
    for command in commands():
        if all(len(pages[lang]) >= per_language for lang in LANGUAGES):
            break
        english = page_file("en", command)
        langs = [lang for lang in LANGUAGES if len(pages[lang]) < per_language and page_file(lang, command)]
        if not english or not langs:
            continue
        en_text = render(english)
        if not name_line(en_text):
            continue
        pages["en"][command] = en_text[:PAGE_CHARS]
        for lang in langs:
            text = render(page_file(lang, command))
            if len(text) > 200:
                pages[lang][command] = text[:PAGE_CHARS]
    for lang, docs in pages.items():
        (root / lang).mkdir(parents=True, exist_ok=True)
        for command, text in docs.items():
            (root / lang / f"{command}.txt").write_text(text + "\n")
    return pages


def words_of(lang: str, text: str) -> list[str]:
    if lang == "zh_CN":
        import jieba
        return [w for w in jieba.cut(text) if len(w) >= 2 and all("\u4e00" <= c <= "\u9fff" for c in w)]
    if lang == "ja":
        from janome.tokenizer import Tokenizer
        tok = words_of.janome = getattr(words_of, "janome", None) or Tokenizer()
        return [t.surface for t in tok.tokenize(text)
                if t.part_of_speech.startswith("名詞") and len(t.surface) >= 2
                and all("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in t.surface)]
    return [w for w in re.findall(r"[^\W\d_]{5,}", text)]


def keyword_set(pages: dict[str, dict[str, str]], rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    """{lang: [(word, command)]}: words inside the page's running text, rare in its language."""
    out = {}
    for lang, docs in pages.items():
        words = {c: words_of(lang, t) for c, t in docs.items()}
        df: dict[str, int] = {}
        for ws in words.values():
            for w in {w.lower() for w in ws}:
                df[w] = df.get(w, 0) + 1
        pool = [(w, c) for c, ws in sorted(words.items()) for w in sorted(set(ws)) if df[w.lower()] <= RARE_PAGES]
        rng.shuffle(pool)
        out[lang] = pool[:WORDS_PER_LANGUAGE]
    return out


def cross_sets(pages: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """{"en->de": [(query, collection, command)], "de->en": ...}"""
    out = {}
    for lang in LANGUAGES:
        forward, back = [], []
        for command, text in sorted(pages[lang].items()):
            en = name_line(pages["en"].get(command, ""))
            xx = name_line(text)
            if en:
                forward.append((en, lang, command))
            if xx:
                back.append((xx, "en", command))
        out[f"en->{lang}"], out[f"{lang}->en"] = forward, back
    return out


def search(binary: str, env: dict, mode: str, collection: str, queries: list[str]) -> list[list[str]]:
    stdin = "".join(json.dumps({"id": str(i), "query": q}) + "\n" for i, q in enumerate(queries))
    out = run_svc(binary, env, MODES[mode] + ["--batch", "--json", "--limit", "10", "--collection", collection],
                  stdin).stdout
    ranked: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.strip():
            row = json.loads(line)
            names = []
            for hit in row.get("results", []):
                name = hit["uri"].rsplit("/", 1)[-1].removesuffix(".txt")
                if name not in names:
                    names.append(name)
            ranked[row["id"]] = names
    return [ranked.get(str(i), []) for i in range(len(queries))]


def score(rankings: list[list[str]], wanted: list[str]) -> dict:
    recall = [1.0 if w in r[:10] else 0.0 for r, w in zip(rankings, wanted)]
    ndcg = [next((1 / math.log2(i + 2) for i, d in enumerate(r[:10]) if d == w), 0.0) for r, w in zip(rankings, wanted)]
    n = max(len(wanted), 1)
    return {"recall@10": sum(recall) / n, "ndcg@10": sum(ndcg) / n, "queries": len(wanted)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="default")
    ap.add_argument("--modes", default="bm25,vector,hybrid")
    ap.add_argument("--pages", type=int, default=PAGES_PER_LANGUAGE, help="pages per language")
    ap.add_argument("--bin", default=str(SCRIPTS.parent / "target" / "release" / "svc"))
    ap.add_argument("--cache", default=default_cache_dir())
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    modes = args.modes.split(",")
    try:
        import janome  # noqa: F401
        import jieba  # noqa: F401
    except ImportError:
        sys.exit("needs jieba and janome: .venv/bin/pip install jieba==0.42.1 janome==0.5.1")
    missing = [lang for lang in LANGUAGES if not (MAN / lang / "man1").is_dir()]
    if missing:
        sys.exit(f"no translated manual pages for {', '.join(missing)}: apt-get install manpages-de manpages-fr "
                 "manpages-es manpages-ru manpages-ja manpages-zh")
    tmp = Path(tempfile.mkdtemp(prefix="svc-manpages-"))
    try:
        env = dict(os.environ, SVC_CONFIG_DIR=str(tmp / "config"), SVC_DATA_DIR=str(tmp / "data"),
                   SVC_CACHE_DIR=args.cache)
        t0 = time.perf_counter()
        pages = build_corpus(tmp / "pages", args.pages)
        print(f"pages: {', '.join(f'{l} {len(d)}' for l, d in pages.items())} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr)
        run_svc(args.bin, env, ["models", "use", args.preset])
        t0 = time.perf_counter()
        for lang in pages:
            run_svc(args.bin, env, ["collection", "add", str(tmp / "pages" / lang), "--name", lang.lower().replace("_", "-")])
        if {"vector", "hybrid"} & set(modes):
            run_svc(args.bin, env, ["embed"])
        index_s = time.perf_counter() - t0
        rng = random.Random(args.seed)
        results: dict = {"preset": args.preset, "pages": {l: len(d) for l, d in pages.items()},
                         "index_seconds": round(index_s, 1), "keyword": {}, "cross": {}}
        for lang, pairs in keyword_set(pages, rng).items():
            for mode in modes:
                if mode == "vector":
                    continue
                ranked = search(args.bin, env, mode, lang.lower().replace("_", "-"), [w for w, _ in pairs])
                results["keyword"].setdefault(lang, {})[mode] = score(ranked, [c for _, c in pairs])
        for name, triples in cross_sets(pages).items():
            for mode in modes:
                by_collection: dict[str, list[int]] = {}
                for i, (_, coll, _) in enumerate(triples):
                    by_collection.setdefault(coll, []).append(i)
                ranked: list[list[str]] = [[] for _ in triples]
                for coll, idx in by_collection.items():
                    got = search(args.bin, env, mode, coll.lower().replace("_", "-"), [triples[i][0] for i in idx])
                    for i, r in zip(idx, got):
                        ranked[i] = r
                results["cross"].setdefault(name, {})[mode] = score(ranked, [c for _, _, c in triples])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for kind in ("keyword", "cross"):
        print(f"\n{kind} ({args.preset}): recall@10 / nDCG@10")
        for name, by_mode in results[kind].items():
            cells = "  ".join(f"{m} {v['recall@10']:.3f}/{v['ndcg@10']:.3f}" for m, v in by_mode.items())
            print(f"  {name:10} n={next(iter(by_mode.values()))['queries']:4}  {cells}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
