"""Writes real slide decks and mail into a folder for the black-box tests, each with the
format's own library: python-pptx (PPTX), odfpy (ODP) and Python's email and mailbox
modules (.eml, .mbox). Usage: write_formats.py FOLDER

With `pictures SCREENSHOT PHOTO`, writes instead a DOCX (python-docx) and a PPTX that show
those pictures: the OCR tests' documents with text in their pictures."""

import email.message
import email.utils
import mailbox
import pathlib
import sys

from odf.draw import Frame, Page, TextBox
from odf.namespaces import PRESENTATIONNS
from odf.opendocument import OpenDocumentPresentation
from odf.presentation import Notes
from odf.style import MasterPage, PageLayout, PageLayoutProperties
from odf.text import P
from pptx import Presentation
from pptx.util import Inches


def pptx(path):
    deck = Presentation()
    deck.core_properties.title = "Orchard review"
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Orchard review"
    first.placeholders[1].text = "Season of the medlar"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Pruning plan"
    body = second.placeholders[1].text_frame
    body.text = "Prune the quince in late winter"
    body.add_paragraph().text = "Burn the canker wood"
    second.notes_slide.notes_text_frame.text = "Remind everyone about the loppers"
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Yields"
    table = third.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table
    for (r, c), value in {(0, 0): "Tree", (0, 1): "Crates", (1, 0): "Mulberry", (1, 1): "17"}.items():
        table.cell(r, c).text = value
    deck.save(path)


def odp(path):
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="Layout")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Master", pagelayoutname=layout)
    doc.masterstyles.addElement(master)

    def frame(parent, kind, text, y):
        f = Frame(width="20cm", height="3cm", x="2cm", y=y)
        f.setAttrNS(PRESENTATIONNS, "class", kind)
        box = TextBox()
        f.addElement(box)
        box.addElement(P(text=text))
        parent.addElement(f)

    for i, (title, body, notes) in enumerate(
        [("Soil health", "Mulch keeps the loam moist", "Ask about clay"), ("Compost", "Turn the heap weekly", None)]
    ):
        page = Page(masterpagename=master, name=f"page{i + 1}")
        doc.presentation.addElement(page)
        frame(page, "title", title, "1cm")
        frame(page, "outline", body, "5cm")
        if notes:
            n = Notes()
            page.addElement(n)
            frame(n, "notes", notes, "1cm")
    doc.save(path)


def message(subject, sender, to, date, text, attachment=None):
    m = email.message.EmailMessage()
    m["Subject"] = subject
    m["From"] = sender
    m["To"] = to
    m["Date"] = email.utils.format_datetime(date)
    m.set_content(text)
    if attachment:
        m.add_attachment(b"%PDF-1.4 nothing", maintype="application", subtype="pdf", filename=attachment)
    return m


def mail(folder):
    import datetime as dt

    utc = dt.timezone.utc
    one = message(
        "Beehive inspection",
        "Ann Keeper <ann@example.org>",
        "bob@example.org",
        dt.datetime(2026, 3, 3, 9, 15, tzinfo=utc),
        "The queen in hive four is laying well.\nWe saw no varroa mites.\n",
        attachment="hive-four.pdf",
    )
    (folder / "inspection.eml").write_bytes(bytes(one))
    box = mailbox.mbox(folder / "club.mbox")
    box.add(message("Swarm season", "Cy <cy@example.org>", "club@example.org", dt.datetime(2026, 4, 1, 8, 0, tzinfo=utc),
                    "Bring a spare nucleus box to the apiary.\n"))
    box.add(message("Honey harvest", "Dee <dee@example.org>", "club@example.org", dt.datetime(2026, 8, 20, 18, 30, tzinfo=utc),
                    "The extractor is booked for Saturday.\n"))
    box.flush()
    box.close()


def with_pictures(folder, screenshot, photo):
    import docx
    from docx.shared import Inches as DocxInches

    report = docx.Document()
    report.core_properties.title = "Harbour report"
    report.add_heading("Harbour report", 1)
    report.add_paragraph("The harbour master sent this screenshot of the roster.")
    report.add_picture(str(screenshot), width=DocxInches(6))
    report.add_paragraph("Nothing else was logged that week.")
    report.save(folder / "report.docx")
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Field trip"
    first.placeholders[1].text = "Notes from the coast"
    second = deck.slides.add_slide(deck.slide_layouts[6])
    second.shapes.add_picture(str(photo), Inches(1), Inches(1), width=Inches(8))
    deck.save(folder / "trip.pptx")


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    if sys.argv[2:3] == ["pictures"]:
        with_pictures(out, pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4]))
        sys.exit(0)
    pptx(out / "orchard.pptx")
    odp(out / "soil.odp")
    mail(out)
