"""Fixtures of the browser tests: a real `svc serve` on temp dirs with a small vault, and a
headless Chromium (the system's, driven by Playwright) that records every request a page
makes, so a test can assert that nothing left the machine."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("SVC_BIN", ROOT / "target/debug/svc"))
# Screenshots: target/screenshots by default; scripts/screenshots points this at docs/workspace.
SHOTS = Path(os.environ.get("SVC_SCREENSHOTS", ROOT / "target/screenshots"))
CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
# The real `small` preset (embedder and GGUF generator; scripts/test builds it), linked in as
# the server's model cache and made active: the default preset's 1.5B generator would triple
# the answer time and the memory of a test that only needs an answer with citations.
GEN = "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tiny_pdf(lines):
    """A valid one-page PDF (Helvetica) with these lines, with a correct xref table."""
    text = "BT /F1 18 Tf 72 720 Td " + " ".join(f"({l}) Tj 0 -28 Td" for l in lines) + " ET"
    objs = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(text)} >>\nstream\n{text}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{o}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


NOTES = {
    "alpha.md": "---\ntitle: Alpha\ntags: [garden, plans]\n---\n# Alpha\n\nThe garden plan links to [[Beta]] and [[Missing Note]].\n\n## Watering\n\nWater the tomatoes every morning.\n",
    "beta.md": "# Beta\n\nBeta is about compost and soil. See [the alpha note](alpha.md).\n",
    "inject.md": '# Injected\n\n<script>document.body.dataset.pwned = "1"</script>\n\n<img src="x" onerror="document.body.dataset.pwned=\'2\'">\n\n![remote](https://example.com/tracker.png)\n',
    "bridge.md": "# Old Bridge\n\nThe Old Bridge is 120 metres long. It was built in 1890.\n",
    "editor.md": "# Editor\n\n## Conflict\n\nA note whose headings are named like the page's parts. [click](javascript:alert(1))\n",
    "paris.md": "# Paris\n\nParis is the capital of France. The Eiffel Tower stands in Paris.\n",
    "kettle.rs": "/// A kettle.\npub struct Kettle;\n\nimpl Kettle {\n    // Heats the water.\n    pub fn boil(&self) -> &str {\n        \"hot\"\n    }\n}\n",
}


class Svc:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ)
        self.env.pop("SVC_API_TOKEN", None)
        self.env.update(
            SVC_CONFIG_DIR=str(tmp / "config"),
            SVC_DATA_DIR=str(tmp / "data"),
            SVC_CACHE_DIR=str(tmp / "cache"),
            SVC_LOG="warn",
        )
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--port", str(self.port)],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.tmp,  # not the checkout: the workspace must come from the binary
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.get("/api/collections")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("svc did not become ready")

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw[:1] == b"{" else raw)

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, body):
        return self.request("POST", path, body)

    def wait_job(self, job_id):
        for _ in range(600):
            status, job = self.get(f"/api/jobs/{job_id}")
            if status == 200 and job["status"] != "running":
                assert job["status"] == "completed", job
                return job
            time.sleep(0.1)
        raise RuntimeError(f"job {job_id} did not finish")

    def add_collection(self, path, name, include=None):
        body = {"path": str(path), "name": name}
        if include:
            body["include"] = include
        status, reply = self.post("/api/collections", body)
        assert status == 202, reply
        self.wait_job(reply["jobId"])

    def doc_url(self, rel, collection="notes"):
        return f"{self.base}/doc?uri=" + urllib.parse.quote(f"svc://{collection}/{rel}", safe="")


@pytest.fixture(scope="session")
def svc():
    tmp = Path(tempfile.mkdtemp(prefix="svc-browser-"))
    s = Svc(tmp)
    models = os.environ.get("SVC_TEST_MODELS")
    linked = bool(models) and (Path(models) / "cache/models" / GEN).is_file()
    if linked:
        (tmp / "cache").mkdir(parents=True)
        os.symlink(Path(models) / "cache/models", tmp / "cache/models")
    notes = tmp / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    (notes / "manual.pdf").write_bytes(tiny_pdf(["Pump manual", "Check the valve weekly."]))
    s.has_models = linked
    s.start()
    if linked:
        status, reply = s.post("/api/presets", {"presetId": "small"})
        assert status == 200, reply
    s.add_collection(notes, "notes", include="**/*.pdf,**/*.rs")
    yield s
    s.stop()
    if os.environ.get("SVC_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


class Page:
    """A Playwright page that records the URLs it requested and the console errors."""

    def __init__(self, page, svc):
        self.page = page
        self.svc = svc
        self.requests = []
        self.csp_violations = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.csp_violations.append(m.text) if "Content Security Policy" in m.text else None)

    def foreign_requests(self):
        local = (self.svc.base, f"http://localhost:{self.svc.port}")
        return [u for u in self.requests if not u.startswith(local) and not u.startswith(("data:", "blob:", "about:"))]

    def shot(self, name):
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.fixture
def page(browser, svc):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    p = Page(ctx.new_page(), svc)
    yield p
    foreign = p.foreign_requests()
    ctx.close()
    assert not foreign, f"requests left the machine: {foreign}"


@pytest.fixture
def phone(browser, svc):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    p = Page(ctx.new_page(), svc)
    yield p
    foreign = p.foreign_requests()
    ctx.close()
    assert not foreign, f"requests left the machine: {foreign}"
