#!/usr/bin/env python3
"""The OCR yardstick (issue 37): pages of real documentation rendered in Chromium, read by svc
and by the reference pipeline (rapidocr-onnxruntime, the PP-OCRv4 models' own Python code).

  python3 scripts/eval_ocr.py --pages 20 [--json OUT] [--no-reference]

Pages: the rustdocs-ask corpus (../shared/datasets/rustdocs-ask/build.sh), every k-th page,
its main text (headings, paragraphs, list items) cut to about 1,800 characters and laid out
as a page of its own (sans-serif 16 px, 1,000 px wide) so that the text on the screenshot is
known exactly. Variants of each screenshot: the PNG, JPEG at quality 80 and 40, turned by +3
and -3 degrees, and a scanned PDF (the page as a JPEG picture in a PDF without text, as a
scanner writes it; its reading's `# Page 1` line is not counted), and a DOCX that shows the PNG
as its one picture (python-docx; its `## Picture 1` heading is not counted). With --chinese N, N pages of
Chinese text (Debian's zh_CN manual pages, rendered by groff as `man` does) are laid out in
Noto Sans CJK and read as PNGs (their CER counts characters, without whitespace). Each variant
is a collection of its own on one `svc serve`.

Figures, per variant: the character error rate (edit distance over the page's length, runs of
whitespace counted as one space; also without any whitespace), the share of sampled words of
the page (whole words of letters and digits, five letters or more) that find the picture by
keyword search, and svc's pages per second; the worker's RSS before any picture, after them all, and at its peak; the same CER for the reference pipeline when it is installed
(a virtualenv with `rapidocr-onnxruntime==1.4.4`: --reference-python).
"""
from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import svclib

DATASET = HERE.parent.parent / "shared" / "datasets" / "rustdocs-ask"
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
PAGE_CHARS = 1800
WORDS_PER_PAGE = 10
VARIANTS = ("png", "jpeg80", "jpeg40", "turned+3", "turned-3", "scan", "docx")
MAN_ZH = Path("/usr/share/man/zh_CN/man1")
ZH_PAGE_CHARS = 500


class MainText(HTMLParser):
    """The blocks (headings, paragraphs, list items) inside <main>, as plain text."""

    BLOCKS = {"h1", "h2", "h3", "h4", "p", "li"}

    def __init__(self):
        super().__init__()
        self.in_main = 0
        self.skip = 0
        self.block = None
        self.blocks: list[tuple[str, str]] = []
        self.buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "main":
            self.in_main += 1
        elif tag in ("pre", "script", "style", "table", "nav"):
            self.skip += 1
        elif self.in_main and not self.skip and tag in self.BLOCKS and self.block is None:
            self.block, self.buf = tag, []

    def handle_endtag(self, tag):
        if tag == "main":
            self.in_main -= 1
        elif tag in ("pre", "script", "style", "table", "nav"):
            self.skip = max(0, self.skip - 1)
        elif tag == self.block:
            text = " ".join("".join(self.buf).split())
            if text:
                self.blocks.append((self.block, text))
            self.block = None

    def handle_data(self, data):
        if self.block is not None and not self.skip:
            self.buf.append(data)


def page_blocks(path: Path) -> list[tuple[str, str]]:
    parser = MainText()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    out, size = [], 0
    for tag, text in parser.blocks:
        if size + len(text) > PAGE_CHARS and out:
            break
        out.append(("h2" if tag.startswith("h") else "p", text))
        size += len(text)
    return out


def chinese_blocks(path: Path) -> list[tuple[str, str]]:
    """A zh_CN manual page's paragraphs that hold Chinese, up to ZH_PAGE_CHARS characters."""
    from eval_manpages import render as render_manpage
    out, size = [], 0
    for para in re.split(r"\n\s*\n", render_manpage(path)):
        text = " ".join(para.split())
        if not re.search(r"[\u4e00-\u9fff]", text) or len(text) < 20:
            continue
        if size + len(text) > ZH_PAGE_CHARS and out:
            break
        out.append(("p", text))
        size += len(text)
    return out


def render(blocks, out_png: Path, browser, font: str = "sans-serif") -> str:
    body = "\n".join(f"<{t}>{html.escape(x)}</{t}>" for t, x in blocks)
    doc = (f"<html><body style='font-family: {font}; font-size: 16px; width: 1000px; margin: 24px; "
           "background: white; color: #111'>" + body + "</body></html>")
    page = browser.new_page(viewport={"width": 1048, "height": 600})
    page.set_content(doc)
    page.screenshot(path=str(out_png), full_page=True)
    page.close()
    return "\n".join(x for _, x in blocks)


def variants(png: Path, out_dir: Path) -> dict[str, Path]:
    from PIL import Image
    img = Image.open(png).convert("RGB")
    out = {}
    for name in VARIANTS:
        (out_dir / name).mkdir(parents=True, exist_ok=True)
    out["png"] = out_dir / "png" / png.name
    img.save(out["png"])
    for q in (80, 40):
        p = out_dir / f"jpeg{q}" / (png.stem + ".jpg")
        img.save(p, quality=q)
        out[f"jpeg{q}"] = p
    for deg in (3, -3):
        p = out_dir / f"turned{deg:+d}" / png.name
        img.rotate(deg, resample=Image.BICUBIC, expand=True, fillcolor=(255, 255, 255)).save(p)
        out[f"turned{deg:+d}"] = p
    # A scanner's PDF: the page one JPEG picture (Pillow writes it DCT-encoded), no text.
    p = out_dir / "scan" / (png.stem + ".pdf")
    img.save(p, "PDF", resolution=96.0, quality=85)
    out["scan"] = p
    # A DOCX that shows the page as its one picture, and has no text of its own (python-docx).
    import docx
    from docx.shared import Inches
    p = out_dir / "docx" / (png.stem + ".docx")
    document = docx.Document()
    document.add_picture(str(out["png"]), width=Inches(6.5))
    document.save(p)
    out["docx"] = p
    return out


def without_page_lines(text: str) -> str:
    """A scan's reading without the lines svc writes to name its pages (and a document's
    without the headings that name its pictures)."""
    return "\n".join(line for line in text.splitlines()
                     if not re.fullmatch(r"# Page \d+|## Picture \d+( \(slide \d+\))?", line.strip()))


def norm(text: str) -> str:
    return " ".join(text.split())


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def cer(found: str, truth: str) -> tuple[int, int, int, int]:
    """(edits, length) with whitespace runs as one space, and without whitespace."""
    a, b = norm(found), norm(truth)
    a2, b2 = a.replace(" ", ""), b.replace(" ", "")
    return edit_distance(a, b), len(b), edit_distance(a2, b2), len(b2)


def reference(python: str, paths: list[Path], use_cls: bool = True) -> tuple[dict[str, str], float]:
    """The reference pipeline's text of each picture (its default configuration; without the
    angle classifier when `use_cls` is false) and its time."""
    code = ("import json,sys,time\nfrom rapidocr_onnxruntime import RapidOCR\ne=RapidOCR()\nout={}\n"
            "cls=sys.argv[1]=='1'\nt=time.perf_counter()\nfor p in sys.argv[2:]:\n r,_=e(p,use_cls=cls)\n"
            " out[p]='\\n'.join(x[1] for x in (r or []))\n"
            "print(json.dumps({'texts':out,'seconds':time.perf_counter()-t}))\n")
    args = [python, "-c", code, "1" if use_cls else "0", *map(str, paths)]
    res = subprocess.run(args, capture_output=True, text=True, check=True)
    data = json.loads(res.stdout.strip().splitlines()[-1])
    return data["texts"], data["seconds"]


def peak_rss_mb(pid) -> float | None:
    raw = svclib.read_proc(pid, "status")
    for line in (raw or b"").decode().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return None


def read_all(server, coll: str, folder: Path, pictures: dict[str, Path], truth: dict[str, str],
             chinese: bool = False) -> dict:
    """Adds `folder` as the collection `coll`, waits until every picture is read, and scores
    what svc read against `truth`: CER, words found by search, pages per second."""
    t0 = time.perf_counter()
    svclib.request(server.port, "POST", "/api/collections", {"name": coll, "path": str(folder)})
    texts: dict[str, str] = {}
    while len(texts) < len(pictures):
        for name, path in pictures.items():
            if name in texts:
                continue
            uri = f"svc://{coll}/{path.name}"
            status, doc = svclib.request(server.port, "GET", "/api/doc?uri=" + urllib.parse.quote(uri, safe=""))
            ocr = (doc.get("source", {}).get("ocr") or {}) if status == 200 else {}
            if ocr.get("state") in ("read", "failed"):
                texts[name] = without_page_lines(doc.get("content", ""))
        if time.perf_counter() - t0 > 1800:
            raise RuntimeError(f"{coll}: OCR did not finish in 30 min")
        time.sleep(0.2)
    seconds = time.perf_counter() - t0
    edits = [cer(texts[n], truth[n]) for n in truth]
    rng = random.Random(37)
    found = asked = 0
    missed = []
    for name, text in truth.items():
        if chinese:
            words = sorted(set(re.findall(r"[\u4e00-\u9fff]{4}", text)))
        else:
            # Whole words: "AArch64" is one word a user would search, "AArch" is not a word of
            # the page (the letters alone were sampled before stop 50, and never found).
            tokens = re.findall(r"[A-Za-z0-9]+", text)
            words = sorted({t for t in tokens if t[0].isalpha() and sum(c.isalpha() for c in t) >= 5})
        for word in rng.sample(words, min(WORDS_PER_PAGE, len(words))):
            _, res = svclib.request(server.port, "POST", "/api/search", {"query": word, "collection": coll, "limit": 20})
            asked += 1
            hit = any(r.get("uri", "").endswith("/" + pictures[name].name) for r in res.get("results", []))
            found += hit
            if not hit:
                missed.append(f"{name}:{word}")
    row = {
        "cer_no_spaces": round(100 * sum(e[2] for e in edits) / sum(e[3] for e in edits), 2),
        "words_found": round(found / max(asked, 1), 3),
        "pages_per_s": round(len(pictures) / seconds, 3),
        "words_missed": missed,
    }
    if not chinese:
        row["cer"] = round(100 * sum(e[0] for e in edits) / sum(e[1] for e in edits), 2)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--chinese", type=int, default=0, help="also N pages of Chinese text")
    ap.add_argument("--binary", default=str(HERE.parent / "target" / "release" / "svc"))
    ap.add_argument("--cache", default=svclib.default_cache_dir())
    ap.add_argument("--reference-python", default=None, help="python with rapidocr-onnxruntime 1.4.4")
    ap.add_argument("--json", default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="svc-ocr-eval-"))
    try:
        corpus = tmp / "crates"
        subprocess.run([str(DATASET / "build.sh"), str(corpus)], check=True, capture_output=True)
        pages = sorted(p for p in corpus.rglob("*.html"))
        pages = [p for p in pages if len(page_blocks(p)) >= 3]
        step = max(1, len(pages) // args.pages)
        pages = pages[::step][: args.pages]
        zh_pages = []
        if args.chinese:
            zh = sorted(MAN_ZH.glob("*.1*"))
            zh = [p for p in zh if sum(len(t) for _, t in chinese_blocks(p)) >= 200]
            zh_pages = zh[:: max(1, len(zh) // args.chinese)][: args.chinese]
        from playwright.sync_api import sync_playwright
        truth: dict[str, str] = {}
        files: dict[str, dict[str, Path]] = {}
        zh_truth: dict[str, str] = {}
        zh_files: dict[str, Path] = {}
        shots = tmp / "shots"
        shots.mkdir()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            for i, page in enumerate(pages):
                name = f"page{i:02d}"
                png = shots / f"{name}.png"
                truth[name] = render(page_blocks(page), png, browser)
                files[name] = variants(png, tmp / "pictures")
            (tmp / "pictures" / "chinese").mkdir(parents=True, exist_ok=True)
            for i, page in enumerate(zh_pages):
                name = f"zh{i:02d}"
                png = tmp / "pictures" / "chinese" / f"{name}.png"
                zh_truth[name] = render(chinese_blocks(page), png, browser, font="'Noto Sans CJK SC'")
                zh_files[name] = png
            browser.close()
        print(f"{len(pages)} pages rendered ({sum(len(t) for t in truth.values())} characters), "
              f"{len(zh_pages)} Chinese ({sum(len(t) for t in zh_truth.values())})", file=sys.stderr)

        report: dict = {"pages": len(pages), "chinese_pages": len(zh_pages), "variants": {}}
        server = svclib.Server(args.binary, str(tmp / "server"), cache=args.cache)
        server.start()
        try:
            worker = server.processes().get("worker")
            report["worker_rss_before_mb"] = svclib.rss_mb(worker) if worker else None
            for variant in VARIANTS:
                coll = variant.replace("+", "p").replace("-", "m")
                pictures = {n: by[variant] for n, by in files.items()}
                row = read_all(server, coll, tmp / "pictures" / variant, pictures, truth)
                if args.reference_python and variant not in ("scan", "docx"):
                    ref, ref_s = reference(args.reference_python, [files[n][variant] for n in truth])
                    by_path = {str(files[n][variant]): n for n in truth}
                    ref_edits = [cer(ref[p], truth[by_path[p]]) for p in ref]
                    row["reference_cer"] = round(100 * sum(e[0] for e in ref_edits) / sum(e[1] for e in ref_edits), 2)
                    row["reference_cer_no_spaces"] = round(
                        100 * sum(e[2] for e in ref_edits) / sum(e[3] for e in ref_edits), 2)
                    row["reference_pages_per_s"] = round(len(pages) / ref_s, 3)
                    ref, _ = reference(args.reference_python, [files[n][variant] for n in truth], use_cls=False)
                    ref_edits = [cer(ref[p], truth[by_path[p]]) for p in ref]
                    row["reference_no_cls_cer"] = round(
                        100 * sum(e[0] for e in ref_edits) / sum(e[1] for e in ref_edits), 2)
                report["variants"][variant] = row
                print(variant, json.dumps(row), file=sys.stderr)
            if zh_pages:
                row = read_all(server, "chinese", tmp / "pictures" / "chinese", zh_files, zh_truth, chinese=True)
                if args.reference_python:
                    ref, _ = reference(args.reference_python, list(zh_files.values()))
                    by_path = {str(p): n for n, p in zh_files.items()}
                    ref_edits = [cer(ref[p], zh_truth[by_path[p]]) for p in ref]
                    row["reference_cer_no_spaces"] = round(
                        100 * sum(e[2] for e in ref_edits) / sum(e[3] for e in ref_edits), 2)
                report["variants"]["chinese"] = row
                print("chinese", json.dumps(row), file=sys.stderr)
            worker = server.processes().get("worker")
            report["worker_rss_after_mb"] = svclib.rss_mb(worker) if worker else None
            report["worker_peak_rss_mb"] = peak_rss_mb(worker) if worker else None
        finally:
            server.stop()
        print(json.dumps(report, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
