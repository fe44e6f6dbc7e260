"""The Chromium clipper (clipper/, a Manifest V3 extension) loaded into real Chromium: it clips
the selection or the readable part of a page served on loopback into a real `svc serve` that
has an API token, with the page's address and title as provenance; unpaired or with a wrong
token it saves nothing and says why; and it requests nothing but its server."""

import http.server
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from conftest import CHROMIUM, ROOT, Svc

CLIPPER = ROOT / "clipper"
TOKEN = "clip-s3cret"

ARTICLE = """<!doctype html><html><head><title>Lighthouse keeping</title>
<meta property="og:site_name" content="Coast Notes">
<meta name="author" content="Ada Keeper">
<link rel="canonical" href="http://127.0.0.1/lighthouse"></head>
<body><nav>Home | About | Subscribe now</nav>
<article><h1>Lighthouse keeping</h1>
<p id="lamp">The lamp was trimmed every evening at dusk.</p>
<p>The keeper logged the weather twice a day in a leather book.</p></article>
<footer>Copyright footer text</footer></body></html>"""


@pytest.fixture(scope="module")
def server():
    tmp = Path(tempfile.mkdtemp(prefix="svc-clipper-"))
    s = Svc(tmp)
    s.env["SVC_API_TOKEN"] = TOKEN
    (tmp / "inbox").mkdir()
    (tmp / "inbox" / "readme.md").write_text("# Inbox\n\nClipped pages land here.\n")
    s.start()
    s.add_collection(tmp / "inbox", "inbox")
    yield s
    s.stop()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def site():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = ARTICLE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def chromium():
    profile = tempfile.mkdtemp(prefix="svc-clipper-profile-")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--disable-extensions-except={CLIPPER}",
                f"--load-extension={CLIPPER}",
            ],
        )
        requests = []
        ctx.on("request", lambda r: requests.append(r.url))
        yield ctx, extension_worker(ctx), requests
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


def extension_worker(ctx):
    """The clipper's service worker, once its extension APIs are there."""
    deadline = time.time() + 30
    while time.time() < deadline:
        for w in ctx.service_workers:
            if w.url.startswith("chrome-extension://") and w.url.endswith("/background.js"):
                try:
                    if w.evaluate("() => typeof chrome !== 'undefined' && !!chrome.storage && !!self.clip"):
                        return w
                except Exception:
                    pass
        time.sleep(0.1)
    raise RuntimeError(f"the clipper's service worker did not start: {[w.url for w in ctx.service_workers]}")


def pair(worker, **settings):
    worker.evaluate("(s) => chrome.storage.local.clear().then(() => chrome.storage.local.set(s))", settings)


def clip(worker, url, mode):
    """The clip of the tab at `url`: the capture's reply, or the error's message."""
    return worker.evaluate(
        """async ([url, mode]) => {
            const [tab] = await chrome.tabs.query({ url });
            try { return { ok: true, reply: await self.clip(tab.id, mode) }; }
            catch (e) { return { ok: false, error: String(e.message || e) }; }
        }""",
        [url, mode],
    )


def note(server, uri):
    status, doc = server.get("/api/doc?uri=" + urllib.parse.quote(uri, safe=""))
    assert status == 200, doc
    return doc


def test_the_clipper_clips_a_selection_and_a_page_with_their_provenance(server, site, chromium):
    ctx, worker, requests = chromium
    page = ctx.new_page()
    url = f"{site}/lighthouse"
    page.goto(url)
    pair(worker, server=server.base, token=TOKEN)
    page.evaluate(
        """() => { const r = document.createRange(); r.selectNodeContents(document.getElementById('lamp'));
                   const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); }"""
    )
    r = clip(worker, url, "selection")
    assert r["ok"], r
    uri = r["reply"]["uri"]
    assert uri.startswith("svc://inbox/"), r
    if r["reply"]["sync"].get("jobId"):
        server.wait_job(r["reply"]["sync"]["jobId"])
    doc = note(server, uri)
    assert "The lamp was trimmed every evening at dusk." in doc["content"], doc["content"]
    assert "leather book" not in doc["content"], "only the selection"
    assert url in doc["content"] and "Coast Notes" in doc["content"], "the address and site as provenance"
    status, found = server.post("/api/search", {"query": "lamp trimmed dusk", "collection": "inbox"})
    assert status == 200 and found["results"] and found["results"][0]["uri"] == uri, (found, doc)

    r = clip(worker, url, "page")
    assert r["ok"], r
    assert r["reply"]["uri"] != uri, "a second clip of the page is a note of its own"
    doc = note(server, r["reply"]["uri"])
    assert "leather book" in doc["content"] and "trimmed every evening" in doc["content"], doc["content"]
    assert "Subscribe now" not in doc["content"] and "Copyright footer" not in doc["content"], "the article, not the page's frame"

    # Nothing but the page itself and the paired server was asked for.
    allowed = (site, server.base, "chrome-extension://", "data:", "about:")
    assert [u for u in requests if not u.startswith(allowed)] == []
    page.close()


def test_the_clipper_saves_nothing_unpaired_or_with_a_wrong_token(server, site, chromium):
    ctx, worker, _ = chromium
    page = ctx.new_page()
    url = f"{site}/lighthouse?again"
    page.goto(url)
    _, before = server.get("/api/status")
    pair(worker, server=server.base)
    r = clip(worker, url, "page")
    assert not r["ok"] and "not paired" in r["error"], r
    pair(worker, server=server.base, token="wrong", collection="inbox")
    r = clip(worker, url, "page")
    assert not r["ok"] and "403" in r["error"], r
    pair(worker, server="http://example.com:3000", token=TOKEN)
    r = clip(worker, url, "page")
    assert not r["ok"] and "this machine" in r["error"], r
    page.evaluate("() => window.getSelection().removeAllRanges()")
    pair(worker, server=server.base, token=TOKEN)
    r = clip(worker, url, "selection")
    assert not r["ok"] and "nothing is selected" in r["error"], r
    _, after = server.get("/api/status")
    assert after["totalDocuments"] == before["totalDocuments"], "no note was written"
    page.close()
