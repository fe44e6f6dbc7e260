"""The browser workspace, driven in a real Chromium against the real `svc` binary. Each test
also checks (in the fixtures) that the page made no request off the machine; screenshots go
to docs/workspace/."""

import os
import re
import shutil
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import SHOTS, Svc, free_port


def test_search_open_follow_wiki_link_and_backlinks(page, svc):
    p = page.page
    p.goto(svc.base + "/")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.evaluate("document.activeElement.blur()")
    p.keyboard.press("/")
    expect(p.locator("#q")).to_be_focused()
    expect(p.locator("#q")).to_have_value("")
    p.keyboard.type("garden")
    expect(p.locator("#results li").first).to_contain_text("Alpha")
    expect(p.locator("#results mark").first).to_have_text(re.compile("garden", re.I))
    # The snippet reads as text: no heading marks or wiki-link brackets (issue 35).
    snippet = p.locator("#results li .snippet").first
    expect(snippet).to_contain_text("links to Beta and Missing Note")
    expect(snippet).not_to_contain_text("[[")
    expect(snippet).not_to_contain_text("## ")
    # Tag facets carry counts.
    expect(p.locator("#tag-list .facet", has_text="#garden")).to_contain_text("1")
    page.shot("search")
    p.keyboard.press("ArrowDown")
    p.keyboard.press("Enter")
    expect(p.locator("#doc-title")).to_have_text("Alpha")
    # Front matter as a table, tags, outline, a broken link marked.
    expect(p.locator(".front-matter")).to_contain_text("garden")
    expect(p.locator(".outline")).to_contain_text("Watering")
    expect(p.locator("#doc-body a.broken")).to_have_text("Missing Note")
    expect(p.locator("#outgoing .broken")).to_contain_text("Missing Note")
    page.shot("reader")
    p.locator("#doc-body a.internal", has_text="Beta").click()
    expect(p.locator("#doc-title")).to_have_text("Beta")
    expect(p.locator("#backlinks")).to_contain_text("Alpha")
    p.locator("#backlinks a", has_text="Alpha").click()
    expect(p.locator("#doc-title")).to_have_text("Alpha")


def test_quick_switcher_opens_a_note(page, svc):
    p = page.page
    p.goto(svc.base + "/collections")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.keyboard.press("Control+k")
    expect(p.locator("#switcher")).to_be_visible()
    p.keyboard.type("old br")
    expect(p.locator("#switcher-list li").first).to_contain_text("Old Bridge")
    p.keyboard.press("Enter")
    expect(p.locator("#doc-title")).to_have_text("Old Bridge")


def test_edit_and_save(page, svc):
    p = page.page
    p.goto(svc.doc_url("beta.md"))
    p.locator("#edit-button").click()
    text = p.locator("#editor-text")
    expect(text).to_have_value(re.compile("compost and soil"))
    text.fill("# Beta\n\nBeta is about compost, soil and worms. See [the alpha note](alpha.md).\n")
    page.shot("editor")
    p.locator("#save-button").click()
    expect(p.locator("#doc-body")).to_contain_text("worms")
    assert "worms" in (svc.tmp / "notes/beta.md").read_text()


def test_conflict_shows_both_versions_and_never_overwrites(page, svc):
    p = page.page
    note = svc.tmp / "notes/bridge.md"
    p.goto(svc.doc_url("bridge.md"))
    p.locator("#edit-button").click()
    expect(p.locator("#editor-text")).to_have_value(re.compile("120 metres"))
    # Another program changes the file while the editor is open.
    note.write_text("# Old Bridge\n\nThe Old Bridge is 125 metres long (measured again).\n")
    p.locator("#editor-text").fill("# Old Bridge\n\nMy edit: the bridge is 130 metres long.\n")
    p.locator("#save-button").click()
    expect(p.locator("#conflict")).to_be_visible()
    expect(p.locator("#conflict-theirs")).to_contain_text("125 metres")
    expect(p.locator("#conflict-mine")).to_contain_text("130 metres")
    page.shot("conflict")
    assert "125 metres" in note.read_text(), "the disk version must survive a conflict"
    # Take the disk version, edit it, save: it lands on top of the disk version.
    p.locator("#take-theirs").click()
    expect(p.locator("#editor-text")).to_have_value(re.compile("125 metres"))
    p.locator("#editor-text").fill("# Old Bridge\n\nThe Old Bridge is 125 metres long (checked twice).\n")
    p.locator("#save-button").click()
    expect(p.locator("#doc-body")).to_contain_text("checked twice", timeout=30000)
    # A second conflict, settled by keeping mine: an explicit overwrite of the newer disk text.
    p.locator("#edit-button").click()
    expect(p.locator("#editor-text")).to_have_value(re.compile("checked twice"))
    note.write_text("# Old Bridge\n\nSomeone else's text.\n")
    p.locator("#editor-text").fill("# Old Bridge\n\nThe Old Bridge is 125 metres long. It was built in 1890.\n")
    p.locator("#save-button").click()
    expect(p.locator("#conflict")).to_be_visible()
    assert "Someone else" in note.read_text()
    p.locator("#keep-mine").click()
    expect(p.locator("#doc-body")).to_contain_text("built in 1890", timeout=30000)
    assert "built in 1890" in note.read_text()


def test_create_then_rename_through_the_plan(page, svc):
    p = page.page
    p.goto(svc.base + "/new")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.locator("#new-path").fill("drafts/idea.md")
    p.locator("#new-title").fill("Idea")
    p.locator("#new-content").fill("An idea that links to [[Alpha]].\n")
    page.shot("new-note")
    p.locator("#create-form button[type=submit]").click()
    expect(p.locator("#doc-title")).to_have_text("Idea", timeout=30000)
    assert (svc.tmp / "notes/drafts/idea.md").is_file()
    p.locator("#rename-button").click()
    p.locator("#refactor-name").fill("better-idea.md")
    p.locator("#plan-button").click()
    expect(p.locator("#plan-output")).to_contain_text("drafts/better-idea.md")
    expect(p.locator("#apply-button")).to_be_enabled()
    page.shot("rename-plan")
    p.locator("#apply-button").click()
    expect(p.locator("#reader[data-rel-path='drafts/better-idea.md']")).to_be_attached(timeout=30000)
    assert (svc.tmp / "notes/drafts/better-idea.md").is_file()
    assert not (svc.tmp / "notes/drafts/idea.md").exists()


def test_inline_script_in_a_note_is_neither_rendered_nor_run(page, svc):
    p = page.page
    p.goto(svc.doc_url("inject.md"))
    expect(p.locator("#doc-title")).to_have_text("Injected")
    expect(p.locator("#doc-body")).to_contain_text("<script>")
    assert p.evaluate("document.body.dataset.pwned") is None
    # Even a script the page itself injects inline is blocked by the CSP.
    p.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'document.body.dataset.pwned = "3"'; document.body.append(s); }""")
    time.sleep(0.2)
    assert p.evaluate("document.body.dataset.pwned") is None
    assert any("Content Security Policy" in v for v in page.csp_violations), page.csp_violations
    # The remote image is a link, not a load (the fixture asserts no foreign request).
    expect(p.locator("a.remote-image")).to_have_count(1)
    csp = svc.get("/")  # the CSP header is on every page
    assert csp[0] == 200


def test_note_headings_and_links_cannot_take_over_the_page(page, svc):
    p = page.page
    p.goto(svc.doc_url("editor.md"))
    expect(p.locator("#doc-title")).to_have_text("Editor")
    expect(p.locator("#doc-body h1#h-editor")).to_have_count(1)
    expect(p.locator("a[href^='javascript']")).to_have_count(0)
    # The page's own editor still opens although a heading is called "Editor".
    p.locator("#edit-button").click()
    expect(p.locator("#editor-text")).to_be_visible()
    expect(p.locator("#editor-text")).to_have_value(re.compile("named like the page"))


def test_capture_opens_the_captured_note(page, svc):
    p = page.page
    p.goto(svc.base + "/new")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.locator("#capture-text").fill("Quick thought about pruning roses in March.")
    p.locator("#capture-form button[type=submit]").click()
    expect(p.locator("#doc-body")).to_contain_text("pruning roses", timeout=30000)


def test_pdf_renders_its_first_page(page, svc):
    p = page.page
    p.goto(svc.doc_url("manual.pdf"))
    expect(p.locator("#pdf-viewer[data-rendered='1']")).to_be_attached(timeout=30000)
    expect(p.locator("#pdf-status")).to_have_text("1 page")
    # The first page has ink on it (the canvas is not blank).
    ink = p.evaluate("""() => { const c = document.querySelector('canvas.pdf-page');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let dark = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 128) dark++; return dark; }""")
    assert ink > 100, ink
    page.shot("pdf")


def test_a_picture_shows_beside_the_text_ocr_read_in_it(page, svc, tmp_path):
    pics = tmp_path / "pictures"
    pics.mkdir()
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "ocr" / "screenshot.png"
    shutil.copy(fixture, pics / "storage.png")
    svc.add_collection(pics, "pictures")
    for _ in range(600):
        status, doc = svc.get("/api/doc?uri=" + urllib.parse.quote("svc://pictures/storage.png", safe=""))
        if status == 200 and (doc["source"].get("ocr") or {}).get("state") != "pending":
            break
        time.sleep(0.2)
    assert doc["source"]["ocr"]["state"] == "read", doc
    p = page.page
    p.goto(svc.doc_url("storage.png", collection="pictures"))
    picture = p.locator(".picture-view img#picture")
    expect(picture).to_be_visible()
    assert p.eval_on_selector("#picture", "img => img.complete && img.naturalWidth") > 100
    expect(p.locator(".recognized #doc-body")).to_contain_text("quartermaster")
    expect(p.locator("#ocr-status")).to_contain_text("Read by PP-OCRv4")
    # Side by side: the text's column starts right of the picture's.
    img_box, text_box = picture.bounding_box(), p.locator(".recognized").bounding_box()
    assert text_box["x"] >= img_box["x"] + img_box["width"] - 1, (img_box, text_box)
    page.shot("picture")


def test_code_shows_coloured_numbered_lines_and_a_citation_marks_its_line(page, svc):
    p = page.page
    p.goto(svc.doc_url("kettle.rs") + "#L6")
    body = p.locator("#doc-body.code-view[data-language=rust]")
    expect(body).to_be_attached()
    expect(p.locator(".code-line")).to_have_count(9)
    # Keywords, comments, strings and functions each have their colour, unlike plain text.
    colour = lambda sel: p.eval_on_selector(sel, "e => getComputedStyle(e).color")
    plain = p.eval_on_selector("#doc-body", "e => getComputedStyle(e).color")
    expect(p.locator(".tok-keyword", has_text="impl")).to_have_count(1)
    expect(p.locator(".tok-comment", has_text="// Heats the water.")).to_have_count(1)
    expect(p.locator(".tok-string", has_text='"hot"')).to_have_count(1)
    expect(p.locator(".tok-function", has_text="boil")).to_have_count(1)
    colours = {colour(f".tok-{c}") for c in ("keyword", "comment", "string", "function")}
    assert len(colours) == 4 and plain not in colours, (colours, plain)
    # Line numbers come from the stylesheet's line counter; the cited line is marked and the
    # outline jumps to the symbol.
    number = p.eval_on_selector(".code-line[data-line='6']", "e => getComputedStyle(e, '::before').content")
    assert number == "counter(line)", number
    expect(p.locator(".code-line.cited")).to_have_attribute("data-line", "6")
    # A symbol starts at the comment above it.
    expect(p.locator(".code-line#h-kettleboil")).to_have_attribute("data-line", "5")
    page.shot("code")


def test_graph_renders_and_a_node_click_opens_the_note(page, svc):
    p = page.page
    p.goto(svc.base + "/graph")
    expect(p.locator("body[data-graph-ready=true]")).to_be_attached()
    expect(p.locator("#graph-status")).to_contain_text("notes")
    page.shot("graph")
    # Find the Beta node on screen and click it.
    pos = p.evaluate("""() => { const c = document.getElementById('graph-canvas');
        const r = c.getBoundingClientRect(); return window.__svcGraph.screenOf('Beta', r); }""")
    p.mouse.click(pos["x"], pos["y"])
    expect(p.locator("#doc-title")).to_have_text("Beta")


def test_the_reader_follows_a_change_made_on_disk_but_not_its_own_save(page, svc):
    note = svc.tmp / "notes" / "live.md"
    note.write_text("# Live\n\nFirst version.\n")
    uri = urllib.parse.quote("svc://notes/live.md", safe="")
    deadline = time.time() + 15
    while svc.get(f"/api/doc?uri={uri}")[0] != 200 and time.time() < deadline:
        time.sleep(0.1)
    p = page.page
    p.goto(svc.doc_url("live.md"))
    expect(p.locator("body[data-live=open]")).to_be_attached()
    expect(p.locator("#doc-body")).to_contain_text("First version")
    # Another program writes the note: the page shows the new version by itself.
    note.write_text("# Live\n\nSecond version, written by another program.\n")
    expect(p.locator("#doc-body")).to_contain_text("Second version", timeout=15000)
    # Its own save: no "changed on disk" warning while the save is indexed.
    expect(p.locator("body[data-live=open]")).to_be_attached()
    p.locator("#edit-button").click()
    expect(p.locator("#editor-text")).to_have_value(re.compile("Second version"))
    p.locator("#editor-text").fill("# Live\n\nThird version, saved here.\n")
    p.locator("#save-button").click()
    expect(p.locator("#doc-body")).to_contain_text("Third version", timeout=15000)
    expect(p.locator("#doc-status")).not_to_contain_text("changed on disk")


def test_collections_add_with_sync_progress(page, svc):
    extra = svc.tmp / "more"
    extra.mkdir(exist_ok=True)
    for i in range(30):
        (extra / f"n{i}.md").write_text(f"# Extra {i}\n\nExtra note number {i}.\n")
    p = page.page
    p.goto(svc.base + "/collections")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    expect(p.locator("body[data-live=open]")).to_be_attached()
    p.locator("#col-path").fill(str(extra))
    p.locator("#col-name").fill("more")
    p.locator("#add-collection button[type=submit]").click()
    expect(p.locator("body[data-job-done]")).to_be_attached(timeout=60000)
    expect(p.locator("#col-status")).to_contain_text("30 files processed")
    # Progress came live from /api/events while the job ran.
    assert int(p.evaluate("document.body.dataset.indexedLive || '0'")) >= 1
    expect(p.locator("#col-table tr[data-name=more] td.num")).to_have_text("30")
    expect(p.locator("#col-table tr[data-name=more] td.watch")).to_have_text("watching")
    # A note another program writes into the folder: the count follows, with no sync.
    (extra / "n30.md").write_text("# Extra 30\n\nWritten by another program.\n")
    expect(p.locator("#col-table tr[data-name=more] td.num")).to_have_text("31", timeout=15000)
    page.shot("collections")
    p.locator("#col-table tr[data-name=more] button", has_text="Sync").click()
    expect(p.locator("#col-status")).to_contain_text("Sync of more: done", timeout=60000)
    expect(p.locator("#col-status")).to_contain_text("31 files processed")
    if svc.has_models:
        # The vectors follow in the background; the page counts them as they come.
        expect(p.locator("#col-table tr[data-name=more] td.vec")).to_have_text("31", timeout=60000)
        expect(p.locator("#col-vectors")).to_have_text("", timeout=10000)


def test_collections_page_explains_why_a_file_is_not_indexed(page, svc):
    drafts = svc.tmp / "notes" / ".drafts"
    drafts.mkdir(exist_ok=True)
    (drafts / "idea.md").write_text("# Idea\n")
    p = page.page
    p.goto(svc.base + "/collections")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.locator("#explain-path").fill(str(drafts / "idea.md"))
    p.locator("#explain-form button[type=submit]").click()
    expect(p.locator("#explain-result")).to_contain_text("is left out")
    expect(p.locator("#explain-result")).to_contain_text(".drafts is hidden")
    p.locator("#explain-path").fill("relative/path.md")
    p.locator("#explain-form button[type=submit]").click()
    expect(p.locator("#explain-result")).to_contain_text("VALIDATION")


def test_models_page_lists_presets(page, svc):
    p = page.page
    p.goto(svc.base + "/models")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    expect(p.locator(".preset.active")).to_have_count(1)
    expect(p.locator("#models-status")).to_contain_text("Active:")
    page.shot("models")


def test_ask_streams_and_a_citation_click_opens_the_note(page, svc):
    p = page.page
    p.goto(svc.base + "/ask")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    p.locator("#question").fill("How long is the Old Bridge?")
    p.locator("#ask-form button[type=submit]").click()
    expect(p.locator("body[data-answered=true]")).to_be_attached(timeout=120000)
    expect(p.locator("#citations li").first).to_be_visible()
    page.shot("ask")
    p.locator("#citations a").first.click()
    expect(p.locator("#doc-title")).to_be_visible()
    assert "/doc?uri=svc" in p.url and "#L" in p.url
    # The cited lines are marked in the note.
    expect(p.locator("#doc-body > .cited")).to_have_count(1)


def test_phone_width_has_no_horizontal_scroll(phone, svc):
    p = phone.page
    for path in ["/", "/ask", "/collections", "/models", "/new"]:
        p.goto(svc.base + path)
        expect(p.locator("body[data-ready=true]")).to_be_attached()
        overflow = p.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (path, overflow)
    p.goto(svc.doc_url("alpha.md"))
    overflow = p.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, overflow
    phone.shot("phone-reader")


def test_pages_answer_with_security_headers_and_reject_foreign_hosts(svc):
    import urllib.request

    with urllib.request.urlopen(svc.base + "/") as r:
        csp = r.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
        assert r.headers["Content-Type"].startswith("text/html")
    req = urllib.request.Request(svc.base + "/", headers={"Host": "evil.example:80"})
    try:
        urllib.request.urlopen(req)
        raise AssertionError("a foreign Host must be refused")
    except urllib.error.HTTPError as e:
        assert e.code == 403
    # A write from another origin is refused, whatever page it comes from.
    req = urllib.request.Request(svc.base + "/api/docs", data=b'{"collection":"notes","relPath":"x.md","content":"x"}',
                                 method="POST", headers={"Content-Type": "application/json", "Origin": "http://evil.example"})
    try:
        urllib.request.urlopen(req)
        raise AssertionError("a cross-origin write must be refused")
    except urllib.error.HTTPError as e:
        assert e.code == 403
    assert not (svc.tmp / "notes/x.md").exists()
    status, _ = svc.get("/doc?uri=svc%3A%2F%2Fnotes%2Fnope.md")
    assert status == 404
    status, _ = svc.get("/doc")
    assert status == 400


def test_reader_refreshes_when_the_note_changes_on_disk(page, svc):
    p = page.page
    note = svc.tmp / "notes/paris.md"
    p.goto(svc.doc_url("paris.md"))
    expect(p.locator("body[data-live=open]")).to_be_attached()
    note.write_text("# Paris\n\nParis is the capital of France. The Louvre is in Paris too.\n")
    status, reply = svc.post("/api/sync", {"collection": "notes"})
    assert status == 202, reply
    expect(p.locator("#doc-body")).to_contain_text("Louvre", timeout=30000)


def test_verified_ask_shows_the_claims_or_the_abstention(page, svc):
    p = page.page
    p.goto(svc.base + "/ask?q=" + "What%20is%20the%20capital%20of%20France%3F")
    expect(p.locator("body[data-ready=true]")).to_be_attached()
    # A question in the link is filled in, not run.
    expect(p.locator("#question")).to_have_value("What is the capital of France?")
    assert p.get_attribute("body", "data-answered") is None
    p.locator("#verify").check()
    p.locator("#ask-form button[type=submit]").click()
    expect(p.locator("#verification")).to_be_visible(timeout=120000)
    expect(p.locator("#verdict-summary")).to_contain_text("Verified: every claim is supported")
    expect(p.locator("#claims .verdict.supported")).to_have_count(1)
    expect(p.locator("#verdict-summary")).to_contain_text("semantic check")
    page.shot("ask-verified")


def test_collections_page_shows_the_team_and_its_shared_collections(browser, tmp_path):
    """A server that joined a team (a real nats-server on loopback) says so on /collections:
    connected, its members, the shared collection marked; and that it is cut off when the
    cluster goes away."""
    nats = shutil.which("nats-server") or next(
        (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if os.path.isfile(p)), None)
    if not nats:
        assert not os.environ.get("SVC_TEST_REQUIRE_MODELS"), "nats-server is not installed"
        pytest.skip("nats-server is not installed (scripts/test installs it)")
    port = free_port()
    proc = subprocess.Popen([nats, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp_path / "nats")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    s = Svc(tmp_path)
    s.env.update(SVC_CLUSTER=f"nats://127.0.0.1:{port}", SVC_TEAM="eng", SVC_MEMBER="ann")
    ctx = None
    try:
        s.start()
        deadline = time.time() + 30
        while not (s.get("/api/status")[1].get("cluster") or {}).get("connected"):
            assert time.time() < deadline, "the server did not join its team"
            time.sleep(0.2)
        notes = tmp_path / "team-notes"
        notes.mkdir()
        (notes / "a.md").write_text("# A\n\nA shared note.\n")
        status, reply = s.post("/api/collections", {"path": str(notes), "name": "team", "shared": True})
        assert status == 202, reply
        s.wait_job(reply["jobId"])
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        p = ctx.new_page()
        p.goto(s.base + "/collections")
        expect(p.locator("body[data-ready=true]")).to_be_attached()
        expect(p.locator("#col-team")).to_contain_text("Team eng as ann: connected")
        expect(p.locator("#col-team")).to_contain_text("Members: ann", timeout=15000)
        expect(p.locator("#col-table tr[data-name=team] .badge[data-share=shared]")).to_have_text("shared")
        SHOTS.mkdir(parents=True, exist_ok=True)
        p.screenshot(path=str(SHOTS / "collections-team.png"))
        proc.kill()
        proc.wait()
        expect(p.locator("#col-team[data-connected=false]")).to_be_attached(timeout=20000)
        expect(p.locator("#col-team")).to_contain_text("not connected")
    finally:
        if ctx:
            ctx.close()
        s.stop()
        proc.kill()
