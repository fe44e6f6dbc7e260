#!/usr/bin/env python3
"""The workspace's figures in headless Chromium (Debian's, driven by Playwright), against a
running svc whose index holds the 2,000-note corpus. Run by scripts/bench.py with the
repository's .venv Python (scripts/browser-env installs Playwright); prints one JSON object.

- `/` interactive: navigation start → the page's scripts ran and its filters loaded
  (`data-ready-ms`), each load in a fresh browser context (nothing cached).
- search round trip painted: the request of a submitted query → two animation frames after
  the result list changed (`data-search-paint-ms`); also keystroke → painted
  (`data-keystroke-paint-ms`), which adds the 60 ms typing debounce.
- 1 MB note: navigation start → the rendered note is ready (`data-ready-ms`) on `/doc`.
- JS on first load: every script `/` loads, raw and gzip-compressed (level 6).
- graph: `/graph` with every note (up to 2,000): navigation → drawn, and the layout's own time.
- layout shift: the cumulative layout shift score of `/` over a search.
"""
import argparse
import gzip
import json
import os
import sys
import urllib.parse

from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import percentile  # noqa: E402  (the percentile every other figure uses)

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
LOADS = 10


def p50(values):
    return percentile(values, 50)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--big-uri", required=True, help="the svc:// URI of the 1 MB note")
    ap.add_argument("--queries", required=True, help="JSON list of queries")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()
    queries = json.loads(a.queries)
    out = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=ARGS)

        def fresh():
            ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            return ctx, ctx.new_page()

        # `/` interactive, cold, and the scripts it loads.
        ready, scripts = [], {}
        for i in range(LOADS):
            ctx, page = fresh()
            if i == 0:
                page.on("response", lambda r: scripts.setdefault(r.url, r) if r.request.resource_type == "script" else None)
            page.goto(a.base + "/")
            page.wait_for_selector("body[data-ready=true]", state="attached")
            ready.append(float(page.get_attribute("body", "data-ready-ms")))
            if i == 0:
                bodies = [r.body() for r in scripts.values()]
                out["workspace_js_files"] = len(bodies)
                out["workspace_js_raw_kb"] = sum(len(b) for b in bodies) / 1024
                out["workspace_js_gzip_kb"] = sum(len(gzip.compress(b, 6)) for b in bodies) / 1024
            ctx.close()
        out["workspace_ready_p50_ms"] = p50(ready)

        # Search round trips on one warm page, with the layout-shift score over them.
        ctx, page = fresh()
        page.add_init_script("""window.__cls = 0; new PerformanceObserver((l) => { for (const e of l.getEntries())
            if (!e.hadRecentInput) window.__cls += e.value; }).observe({type: 'layout-shift', buffered: true});""")
        page.goto(a.base + "/")
        page.wait_for_selector("body[data-ready=true]", state="attached")
        painted, typed = [], []
        for i, q in enumerate(queries * 2):
            page.evaluate("delete document.body.dataset.searchDone")
            if i % 2 == 0:
                page.evaluate("q => { const i = document.getElementById('q'); i.value = q;"
                              " document.getElementById('search-form').requestSubmit(); }", q)
                page.wait_for_selector("body[data-search-done]", state="attached")
                painted.append(float(page.get_attribute("body", "data-search-paint-ms")))
            else:
                page.evaluate("q => { const i = document.getElementById('q'); i.value = q;"
                              " i.dispatchEvent(new Event('input')); }", q)
                page.wait_for_selector("body[data-search-done]", state="attached")
                typed.append(float(page.get_attribute("body", "data-keystroke-paint-ms")))
        out["workspace_search_painted_p50_ms"] = p50(painted)
        out["workspace_search_painted_p99_ms"] = percentile(painted, 99)
        out["workspace_keystroke_painted_p50_ms"] = p50(typed)
        out["workspace_layout_shift"] = page.evaluate("window.__cls")
        ctx.close()

        # The 1 MB note.
        big = []
        for _ in range(5):
            ctx, page = fresh()
            page.goto(a.base + "/doc?uri=" + urllib.parse.quote(a.big_uri, safe=""))
            page.wait_for_selector("body[data-ready=true]", state="attached", timeout=60000)
            big.append(float(page.get_attribute("body", "data-ready-ms")))
            ctx.close()
        out["workspace_big_note_p50_ms"] = p50(big)

        # The graph of the whole corpus.
        ctx, page = fresh()
        page.goto(a.base + "/graph")
        page.wait_for_selector("body[data-graph-ready=true]", state="attached", timeout=120000)
        out["workspace_graph_ready_ms"] = page.evaluate("performance.now()")
        out["workspace_graph_layout_ms"] = float(page.get_attribute("body", "data-graph-layout-ms"))
        out["workspace_graph_nodes"] = page.evaluate("window.__svcGraph.count()")
        ctx.close()
        browser.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
