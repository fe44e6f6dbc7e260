#!/usr/bin/env python3
"""A vault as Obsidian reads it: svc's links, embeds, same-note links and backlinks checked
against the vault's own files, and a known-item search per top-level folder.

  scripts/eval_vault.py --vault DIR [--bin target/release/svc] [--json out.json]
  scripts/eval_vault.py --make-manpages DIR [...]   # build a vault from Debian's manual pages first

For every Markdown note the links are read here, independently of svc, and resolved by
Obsidian's rules (docs/api-notes.md, "Wiki link resolution"): a name written with another
extension than `.md` reaches that file, any other name a note: by its path from the root, then
relative to the note, then by its file name anywhere (same folder, else the shortest path, else
the first by path). Each link svc reports is compared with that:

  resolved       links whose target exists, resolved by svc to that very file (target >= 0.99)
  to_picture     links svc resolved to a picture where a note of the name exists (target 0)
  embeds         `![[...]]` / `![](...)` in the files, and how many svc records as embeds (1.0)
  same_note      `[[#Heading]]` / `[[#^block]]` in the files, and how many svc records (1.0)
  backlinks      notes whose backlink count equals the links that resolve to them here

Known-item search: for each top-level folder (a language, in a vault of translations), words
found in exactly one note of the whole vault (letters only, 6 characters or more) are searched
for; recall@10 is the share whose note is among the first ten results (target >= 0.9), hit@1
the share whose note comes first, mrr@10 the mean reciprocal rank; the same with `lang` (the
folder's language, through /api/query) where the folder is named by a language code.

Short notes (`--short N` with `--make-manpages`): N two-line notes per language folder
(60-190 characters, cut from manual pages the vault does not hold), each searched for by another
form of one of its words: a word of the language's pages with the same Snowball stem that the
note does not hold (Python's `snowballstemmer`, the same algorithms as svc's). recall@10 per
folder: the note among the first ten (a note too short to tell its language is found so only
when it is indexed under its language's stems).

`--make-manpages DIR` writes a vault of real text with a vault's structure: one folder per
language (en, de, fr, es, it, pt, nl, ru, sv), a note per manual page (its section titles as
headings), `SEE ALSO` references as wiki links (`[[ls]]`: every language folder holds a note
of that name, so only the same-folder rule reaches the right one), an `Attachments` folder of
pictures named like notes, and in each English note an embed of one of them, an embed of another
note's heading and a link to its own heading.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import unicodedata
import urllib.parse
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))
from svclib import Http, Server, log, run_job  # noqa: E402

REPO = SCRIPTS.parent
COLLECTION = "vault"
PICTURES = {"png", "jpg", "jpeg", "gif", "webp", "bmp", "tiff"}
WORDS_PER_FOLDER = 100
# Folders named by the code of a language svc stems: the known-item search is also asked with
# `lang` set to it.
STEMMED_LANGUAGES = {"en", "de", "fr", "es", "it", "pt", "nl", "ru", "sv"}
# A 1x1 PNG: the pictures of the made vault.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154"
                    "78da63f8ffff3f0005fe02fedccc59e70000000049454e44ae426082")

WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MARKDOWN = re.compile(r"(!?)\[([^\[\]\n]*)\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def key(s: str) -> str:
    return unicodedata.normalize("NFC", s).lower()


def prose_lines(text: str):
    """(line, text) outside fenced code, inline code removed."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.startswith("    "):
            yield n, re.sub(r"`[^`]*`", "", line)


def links_of(text: str) -> list[dict]:
    out = []
    for n, line in prose_lines(text):
        for m in WIKI.finditer(line):
            inner = m.group(2).split("|", 1)[0].rstrip("\\").strip()
            target, _, anchor = inner.partition("#")
            if re.match(r"^[a-z][a-z0-9+.-]*://", target, re.I):
                continue
            if not target.strip() and not anchor.strip():
                continue
            out.append({"line": n, "kind": "wiki", "embed": m.group(1) == "!", "target": target.strip(),
                        "anchor": anchor.strip()})
        for m in MARKDOWN.finditer(WIKI.sub(lambda w: " " * len(w.group(0)), line)):
            dest = m.group(3)
            if re.match(r"^[a-z][a-z0-9+.-]*:", dest, re.I) or dest.startswith(("#", "//")):
                continue
            path = urllib.parse.unquote(dest.split("#", 1)[0].split("?", 1)[0])
            if path:
                out.append({"line": n, "kind": "markdown", "embed": m.group(1) == "!", "target": path, "anchor": ""})
    return out


class Vault:
    def __init__(self, root: Path):
        self.root = root
        self.files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
        self.by_key = {key(f): f for f in self.files}
        self.by_name: dict[str, list[str]] = {}
        for f in self.files:
            self.by_name.setdefault(key(f.rsplit("/", 1)[-1]), []).append(f)

    def notes(self) -> list[str]:
        return [f for f in self.files if f.endswith(".md")]

    def resolve(self, source: str, link: dict) -> str | None:
        here = source.rsplit("/", 1)[0] if "/" in source else ""
        if link["kind"] == "markdown":
            return self.at(here, link["target"], root_first=False)
        name = key(link["target"].replace("%20", " ")).lstrip("/")
        if not name:
            return source
        ext = name.rsplit(".", 1)[-1] if "." in name.rsplit("/", 1)[-1] else ""
        if ext and ext != "md":
            found = self.at(here, name) or self.named(here, name)
            if found:
                return found
        stem = name[:-3] if name.endswith(".md") else name
        return self.at(here, stem + ".md") or self.named(here, stem + ".md")

    def at(self, here: str, path: str, root_first: bool = True) -> str | None:
        joined = os.path.normpath(os.path.join(here, path)).replace(os.sep, "/") if here else None
        tries = [path, joined] if root_first else [joined or path, path]
        for p in tries:
            if p and key(p) in self.by_key:
                return self.by_key[key(p)]
        return None

    def named(self, here: str, name: str) -> str | None:
        found = [f for f in self.by_name.get(name.rsplit("/", 1)[-1], [])
                 if "/" not in name or key(f).endswith("/" + name) or key(f) == name]
        beside = [f for f in found if (f.rsplit("/", 1)[0] if "/" in f else "") == here]
        if beside:
            return beside[0]
        found.sort(key=lambda f: (f.count("/"), len(f), f))
        return found[0] if found else None


def uri_of(rel: str) -> str:
    return f"svc://{COLLECTION}/{rel}"


def check_links(client: Http, vault: Vault) -> dict:
    totals = {"links": 0, "with_target": 0, "resolved": 0, "to_picture": 0, "embeds_in_files": 0,
              "embeds_recorded": 0, "same_note_in_files": 0, "same_note_recorded": 0, "wrong": []}
    incoming: dict[str, int] = {}
    for note in vault.notes():
        status, reply = client.request("GET", f"/api/doc?uri={urllib.parse.quote(uri_of(note), safe='')}")
        if status != 200:
            log(f"{note}: not indexed ({status})")
            continue
        # Link positions are lines of the canonical text (runs of blank lines folded, ...): the
        # links are read from it, their targets checked against the files.
        mine = links_of(reply.get("content") or "")
        docid = urllib.parse.quote(reply["docid"], safe="")
        _, got = client.request("GET", f"/api/doc/{docid}/links")
        theirs = got["links"]
        totals["links"] += len(mine)
        totals["embeds_in_files"] += sum(1 for m in mine if m["embed"])
        totals["embeds_recorded"] += sum(1 for t in theirs if t.get("embed"))
        totals["same_note_in_files"] += sum(1 for m in mine if m["kind"] == "wiki" and not m["target"])
        totals["same_note_recorded"] += sum(1 for t in theirs if t["linkType"] == "wiki" and not t["targetRef"])
        by_line: dict[int, list[dict]] = {}
        for t in theirs:
            by_line.setdefault(t["startLine"], []).append(t)
        for m in mine:
            want = vault.resolve(note, m)
            if want is None:
                continue
            if m["kind"] == "wiki" and not m["target"]:
                continue  # the note itself: counted above
            totals["with_target"] += 1
            if want != note:
                incoming[want] = incoming.get(want, 0) + 1
            same = [t for t in by_line.get(m["line"], []) if t["linkType"] == m["kind"]
                    and t.get("embed", False) == m["embed"] and key(t["targetRef"]).replace("%20", " ").lstrip("/")
                    in (key(m["target"]).replace("%20", " ").lstrip("/"), key(urllib.parse.quote(m["target"])))]
            got_uri = next((t.get("resolvedUri") for t in same if t.get("resolvedUri") == uri_of(want)), None)
            if got_uri is None:
                got_uri = same[0].get("resolvedUri") if same else None
            if got_uri == uri_of(want):
                totals["resolved"] += 1
            elif len(totals["wrong"]) < 20:
                totals["wrong"].append({"note": note, "link": m, "want": want, "got": got_uri})
            if got_uri and got_uri.rsplit(".", 1)[-1].lower() in PICTURES and want.endswith(".md"):
                totals["to_picture"] += 1
    backlinks_ok = 0
    for note in vault.notes():
        _, reply = client.request("GET", f"/api/doc?uri={urllib.parse.quote(uri_of(note), safe='')}")
        docid = urllib.parse.quote(reply["docid"], safe="")
        _, back = client.request("GET", f"/api/doc/{docid}/backlinks")
        backlinks_ok += back["meta"]["totalBacklinks"] == incoming.get(note, 0)
    totals["backlinks_match"] = backlinks_ok
    totals["notes"] = len(vault.notes())
    return totals


def known_items(client: Http, vault: Vault, rng: random.Random, dump: list | None = None) -> dict:
    words_of = {n: {w.lower() for w in re.findall(r"[^\W\d_]{6,}", (vault.root / n).read_text(errors="replace"))}
                for n in vault.notes()}
    df: dict[str, int] = {}
    for ws in words_of.values():
        for w in ws:
            df[w] = df.get(w, 0) + 1
    folders: dict[str, list[tuple[str, str]]] = {}
    for note, ws in sorted(words_of.items()):
        folder = note.split("/", 1)[0] if "/" in note else "."
        folders.setdefault(folder, []).extend((w, note) for w in sorted(ws) if df[w] == 1)
    out = {}
    for folder, pool in sorted(folders.items()):
        rng.shuffle(pool)
        sample = pool[:WORDS_PER_FOLDER]
        if not sample:
            continue
        # /api/search reads no language; /api/query (keyword side alone without an embedder)
        # is told the folder's, where the folder is named by a language code.
        asks = [("search", "/api/search", {})]
        if folder in STEMMED_LANGUAGES:
            asks.append(("lang", "/api/query", {"lang": folder, "noRerank": True}))
        row = {"queries": len(sample)}
        for label, path, extra in asks:
            hits = first = 0
            rr = 0.0
            for word, note in sample:
                _, r = client.request("POST", path, {"query": word, "limit": 10, **extra})
                uris = [x["uri"] for x in r.get("results", [])]
                if dump is not None:
                    dump.append({"ask": label, "word": word, "note": note, "top": uris[:3],
                                 "rank": uris.index(uri_of(note)) + 1 if uri_of(note) in uris else None})
                if uri_of(note) in uris:
                    rank = uris.index(uri_of(note)) + 1
                    hits += 1
                    first += rank == 1
                    rr += 1 / rank
            suffix = "" if label == "search" else f" {label}"
            row[f"recall@10{suffix}"] = round(hits / len(sample), 3)
            row[f"hit@1{suffix}"] = round(first / len(sample), 3)
            row[f"mrr@10{suffix}"] = round(rr / len(sample), 3)
        out[folder] = row
    return out


SNOWBALL = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
            "pt": "portuguese", "nl": "dutch", "ru": "russian", "sv": "swedish"}
# Manual pages per language held out of the vault, for its short notes.
SHORT_SOURCE_PAGES = 10


def short_snippets(text: str) -> list[str]:
    """Two consecutive prose lines of a page, 60-190 characters together."""
    lines = [ln.strip() for ln in text.splitlines()]
    out = []
    for a, b in zip(lines, lines[1:]):
        two = f"{a}\n{b}"
        if 60 <= len(two) <= 190 and len(re.findall(r"[^\W\d_]{5,}", two)) >= 4 and "[[" not in two:
            out.append(two)
    return out


def make_manpages(root: Path, per_language: int, rng: random.Random, short: int = 0) -> dict[str, str]:
    """Writes the vault; returns the text of every page read, by language (for --short)."""
    import eval_manpages as em
    languages = ["de", "fr", "es", "it", "pt", "nl", "ru", "sv"]
    em.LANGUAGES = tuple(languages)
    held = SHORT_SOURCE_PAGES if short else 0
    corpus = em.build_corpus(Path(tempfile.mkdtemp(prefix="svc-vault-pages-")), per_language + held)
    everything = {lang: "\n".join(pages.values()) for lang, pages in corpus.items()}
    if short:
        for lang, pages in corpus.items():
            source = sorted(pages)[-held:]
            snippets = [t for c in source for t in short_snippets(pages.pop(c))]
            rng.shuffle(snippets)
            (root / lang).mkdir(parents=True, exist_ok=True)
            for i, two in enumerate(snippets[:short]):
                (root / lang / f"jot-{i:03}.md").write_text(two + "\n", encoding="utf-8")
    commands = sorted(corpus["en"])
    for lang, pages in corpus.items():
        for command, text in pages.items():
            body = []
            for line in text.splitlines():
                if re.fullmatch(r"[A-ZÀ-ÞА-Я][A-ZÀ-ÞА-Я .\-]{2,}", line.strip()) and not line.startswith(" "):
                    body.append(f"\n## {line.strip()}\n")
                else:
                    body.append(re.sub(r"\b([a-z][a-z0-9_.+-]*)\(\d\)",
                                       lambda m: f"[[{m.group(1)}]]" if m.group(1) in pages else m.group(0), line))
            note = f"# {command}\n" + "\n".join(body) + "\n"
            if lang == "en":
                other = rng.choice(commands)
                note += (f"\n![[{other}.png]]\n\n![[{other}#NAME]]\n\nBack to [[#NAME]].\n")
            (root / lang).mkdir(parents=True, exist_ok=True)
            (root / lang / f"{command}.md").write_text(note, encoding="utf-8")
    (root / "Attachments").mkdir(parents=True, exist_ok=True)
    for command in commands:
        (root / "Attachments" / f"{command}.png").write_bytes(PNG)
    return everything


def short_items(client: Http, vault: Vault, texts: dict[str, str], rng: random.Random) -> dict:
    """Each short note (`jot-*.md`) searched for by another form of one of its words."""
    try:
        import snowballstemmer
    except ImportError:
        raise SystemExit("--short needs Python's snowballstemmer: pip install snowballstemmer")
    out = {}
    for lang, algorithm in SNOWBALL.items():
        stemmer = snowballstemmer.stemmer(algorithm)
        forms: dict[str, set[str]] = {}
        for w in set(re.findall(r"[^\W\d_]{5,}", texts.get(lang, "").lower())):
            forms.setdefault(stemmer.stemWord(w), set()).add(w)
        notes = sorted(n for n in vault.notes() if n.startswith(f"{lang}/jot-"))
        hits = asked = 0
        for note in notes:
            own = set(re.findall(r"[^\W\d_]{5,}", (vault.root / note).read_text().lower()))
            choices = sorted((w, other) for w in own for other in forms.get(stemmer.stemWord(w), ()) if other not in own)
            if not choices:
                continue
            _, query = rng.choice(choices)
            _, r = client.request("POST", "/api/search", {"query": query, "limit": 10})
            asked += 1
            hits += uri_of(note) in [x["uri"] for x in r.get("results", [])]
        if asked:
            out[lang] = {"queries": asked, "recall@10": round(hits / asked, 3)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", help="an Obsidian vault (a folder)")
    ap.add_argument("--make-manpages", help="write a vault of Debian's manual pages here first, then check it")
    ap.add_argument("--pages", type=int, default=40, help="pages per language for --make-manpages")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "svc"))
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dump", help="write each known-item query, its note's rank and the top three here")
    ap.add_argument("--short", type=int, default=0, help="short notes per language for --make-manpages")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.make_manpages:
        root = Path(args.make_manpages)
        if root.exists():
            shutil.rmtree(root)
        texts = make_manpages(root, args.pages, rng, args.short)
    elif args.vault:
        root = Path(args.vault)
        texts = {}
    else:
        ap.error("--vault or --make-manpages")
    vault = Vault(root)
    work = tempfile.mkdtemp(prefix="svc-eval-vault-")
    server = Server(args.bin, work)
    try:
        server.start()
        client = Http(server.port)
        seconds, _ = run_job(client, "/api/collections", {"path": str(root.resolve()), "name": COLLECTION}, 3600)
        log(f"indexed {len(vault.files)} files in {seconds:.1f} s")
        links = check_links(client, vault)
        dump: list | None = [] if args.dump else None
        search = known_items(client, vault, rng, dump)
        if args.dump:
            Path(args.dump).write_text(json.dumps(dump, indent=1, ensure_ascii=False))
        short = short_items(client, vault, texts, rng) if args.short else {}
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "notes": links["notes"],
        "links": links["links"],
        "resolved": round(links["resolved"] / max(links["with_target"], 1), 4),
        "with_target": links["with_target"],
        "to_picture": links["to_picture"],
        "embeds": f"{links['embeds_recorded']}/{links['embeds_in_files']}",
        "same_note": f"{links['same_note_recorded']}/{links['same_note_in_files']}",
        "backlinks_match": f"{links['backlinks_match']}/{links['notes']}",
        "known_item": search,
        "short_notes": short,
        "wrong": links["wrong"],
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "wrong"}, indent=2, ensure_ascii=False))
    for w in links["wrong"][:10]:
        log(f"unexpected: {w}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
