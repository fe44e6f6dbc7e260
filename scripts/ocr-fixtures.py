#!/usr/bin/env python3
"""Makes the OCR test pictures in tests/fixtures/ocr/ (committed; run again only to change them):
text rendered by Chromium, then
  screenshot.png  the screenshot as it is;
  photo.jpg       like a phone photo of a printed note: turned by 3 degrees, grainy, JPEG quality 60;
  scan.pdf        a scanned page: a PDF whose only content is the page as a JPEG image (no text layer).

  .venv/bin/python scripts/ocr-fixtures.py
"""
from __future__ import annotations

import io
import os
import random
import shutil
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ocr"
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
TEXTS = {
    "screenshot": ["Storage notes", "The quartermaster keeps the zephyr ledger in drawer 42."],
    "photo": ["Whiteboard", "Migrate the pelican service before Friday."],
    "scan": ["Invoice 7731", "Paid in full by the lighthouse keeper."],
}


def shot(browser, lines: list[str]) -> Image.Image:
    page = browser.new_page(viewport={"width": 640, "height": 150})
    body = f"<h2>{lines[0]}</h2><p>{lines[1]}</p>"
    page.set_content("<html><body style='font-family: sans-serif; font-size: 18px; margin: 20px; "
                     f"background: white; color: #111'>{body}</body></html>")
    png = page.screenshot()
    page.close()
    return Image.open(io.BytesIO(png)).convert("RGB")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(37)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        shot(browser, TEXTS["screenshot"]).save(OUT / "screenshot.png", optimize=True)
        photo = shot(browser, TEXTS["photo"]).rotate(3, resample=Image.BICUBIC, expand=True, fillcolor=(236, 232, 224))
        px = photo.load()
        for y in range(photo.height):
            for x in range(photo.width):
                n = rng.randint(-18, 18)
                r, g, b = px[x, y]
                px[x, y] = (max(0, min(255, r + n)), max(0, min(255, g + n)), max(0, min(255, b + n)))
        photo.save(OUT / "photo.jpg", quality=60)
        shot(browser, TEXTS["scan"]).save(OUT / "scan.pdf", resolution=96)
        browser.close()
    for f in sorted(OUT.iterdir()):
        print(f"{f.name}: {f.stat().st_size} bytes")


if __name__ == "__main__":
    main()
