"""Writes a folder per format from the generated Markdown notes, for scripts/bench_formats.py:
the same note text as a sheet (XlsxWriter), a deck (python-pptx), an ODP (odfpy), mail (email:
a message per file, and one mailbox holding all the messages, by mailbox), a web page, and real
Rust code (files of the crates in the cargo registry). Runs in the
repository's .venv (scripts/browser-env installs the libraries).

Usage: make_formats.py NOTES_DIR OUT_DIR COUNT"""

import email.message
import glob
import html
import mailbox
import os
import pathlib
import sys

import xlsxwriter
from odf.draw import Frame, Page, TextBox
from odf.namespaces import PRESENTATIONNS
from odf.opendocument import OpenDocumentPresentation
from odf.style import MasterPage, PageLayout, PageLayoutProperties
from odf.text import P
from pptx import Presentation


def sections(text):
    """(heading, [paragraphs]) of a Markdown note, front matter dropped."""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        text = text[end + 4:] if end > 0 else text
    out, title, paras = [], "Notes", []
    for block in text.split("\n\n"):
        block = block.strip()
        if not block:
            continue
        if block.startswith("#"):
            if paras:
                out.append((title, paras))
            title, paras = block.lstrip("#").strip(), []
        else:
            paras.append(" ".join(block.split()))
    if paras:
        out.append((title, paras))
    return out or [("Notes", ["(empty)"])]


def xlsx(path, secs):
    book = xlsxwriter.Workbook(path)
    for i, (title, paras) in enumerate(secs[:5]):
        sheet = book.add_worksheet(f"S{i + 1}")
        sheet.write_row(0, 0, ["topic", "words", "text"])
        for r, p in enumerate(paras, start=1):
            sheet.write_row(r, 0, [title, len(p.split()), p])
    book.close()


def pptx(path, secs):
    deck = Presentation()
    for title, paras in secs:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = paras[0]
        for p in paras[1:]:
            body.add_paragraph().text = p
    deck.save(path)


def odp(path, secs):
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    for i, (title, paras) in enumerate(secs):
        page = Page(masterpagename=master, name=f"p{i}")
        doc.presentation.addElement(page)
        for kind, texts in (("title", [title]), ("outline", paras)):
            f = Frame(width="20cm", height="3cm", x="2cm", y="1cm")
            f.setAttrNS(PRESENTATIONNS, "class", kind)
            box = TextBox()
            f.addElement(box)
            for t in texts:
                box.addElement(P(text=t))
            page.addElement(f)
    doc.save(path)


def message(secs):
    m = email.message.EmailMessage()
    m["Subject"] = secs[0][0]
    m["From"] = "Bench <bench@example.org>"
    m["To"] = "notes@example.org"
    m["Date"] = "Tue, 03 Mar 2026 09:15:00 +0000"
    m.set_content("\n\n".join(p for _, ps in secs for p in ps))
    return m


def eml(path, secs):
    pathlib.Path(path).write_bytes(bytes(message(secs)))


def page(path, secs):
    body = "".join(f"<h2>{html.escape(t)}</h2>" + "".join(f"<p>{html.escape(p)}</p>" for p in ps) for t, ps in secs)
    doc = f"<!doctype html><html><head><title>{html.escape(secs[0][0])}</title></head><body><nav>Home</nav><main>{body}</main></body></html>"
    pathlib.Path(path).write_text(doc, encoding="utf-8")


WRITERS = {"xlsx": xlsx, "pptx": pptx, "odp": odp, "eml": eml, "html": page}


def rust_files(count):
    registry = os.path.expanduser("~/.cargo/registry/src")
    found = sorted(glob.glob(os.path.join(registry, "*", "*", "src", "**", "*.rs"), recursive=True))
    found = [f for f in found if 2_000 <= os.path.getsize(f) <= 200_000]
    step = max(1, len(found) // max(1, count))
    return found[::step][:count]


if __name__ == "__main__":
    notes_dir, out_dir, count = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    notes = sorted(glob.glob(os.path.join(notes_dir, "**", "*.md"), recursive=True))[:count]
    for ext, write in WRITERS.items():
        d = out_dir / ext
        d.mkdir(parents=True, exist_ok=True)
        for i, note in enumerate(notes):
            write(str(d / f"n{i:05d}.{ext}"), sections(pathlib.Path(note).read_text(encoding="utf-8")))
    d = out_dir / "rs"
    d.mkdir(parents=True, exist_ok=True)
    for i, src in enumerate(rust_files(count)):
        (d / f"f{i:05d}.rs").write_bytes(pathlib.Path(src).read_bytes())
    d = out_dir / "mbox"
    d.mkdir(parents=True, exist_ok=True)
    box = mailbox.mbox(str(d / "inbox.mbox"))
    for note in notes:
        box.add(message(sections(pathlib.Path(note).read_text(encoding="utf-8"))))
    box.flush()
    box.close()
    d = out_dir / "md"
    d.mkdir(parents=True, exist_ok=True)
    for i, note in enumerate(notes):
        (d / f"n{i:05d}.md").write_bytes(pathlib.Path(note).read_bytes())
