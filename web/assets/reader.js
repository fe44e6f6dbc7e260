// `/doc`: edit and save with the source hash (a conflict shows both versions and never
// overwrites silently), rename and move through the refactor plan, deactivate, live refresh,
// and the pdf.js viewer for PDFs.
import { api, el, docHref, errorText, onEvents, ready, sha256Hex, waitForJob } from "./app.js";

const article = document.getElementById("reader");
const status = document.getElementById("doc-status");
const uri = article ? article.dataset.uri : null;
const docPath = article ? `/api/docs/${encodeURIComponent(article.dataset.docid)}` : null;
// The version on screen: the indexed one, then the bytes the editor loaded, then what it saved.
// A `document-changed` event naming this hash is this page's own save (or a touch), not news.
let hash = article ? article.dataset.sourceHash || null : null;
let editing = false;
// A save or refactor of this page is in flight: the events it causes are expected.
let ownWrite = false;

function say(text, kind = "") {
  status.textContent = text;
  status.className = kind;
}

/** The file as it is on disk, and the hash of exactly those bytes (the index may not have
 * seen a change made by another program yet, so its hash is not used). */
async function diskVersion() {
  const raw = await fetch(`/api/doc-asset?uri=${encodeURIComponent(uri)}`, { cache: "no-store" });
  if (!raw.ok) return null;
  const bytes = await raw.arrayBuffer();
  return { text: new TextDecoder().decode(bytes), hash: await sha256Hex(bytes) };
}

function setupEditor() {
  const button = document.getElementById("edit-button");
  if (!button) return;
  const editor = document.getElementById("editor");
  const text = document.getElementById("editor-text");
  const conflict = document.getElementById("conflict");
  const body = document.getElementById("doc-body");
  const open = async () => {
    const disk = await diskVersion();
    if (!disk) {
      say("The note could not be loaded for editing.", "error");
      return;
    }
    hash = disk.hash;
    text.value = disk.text;
    text.dataset.loaded = disk.text;
    editing = true;
    editor.hidden = false;
    conflict.hidden = true;
    if (body) body.hidden = true;
    text.focus();
  };
  const close = () => {
    editing = false;
    editor.hidden = true;
    if (body) body.hidden = false;
  };
  const save = async (expected) => {
    ownWrite = true;
    const r = await api(docPath, { method: "PUT", body: { uri, content: text.value, expectedSourceHash: expected } });
    ownWrite = false;
    if (r.ok) {
      hash = r.data.version.sourceHash;
      editing = false;
      say("Saved; indexing…", "ok");
      await waitForJob(r.data.jobId, () => {}, { timeoutMs: 30000 });
      location.reload();
      return;
    }
    if (r.status === 409 && r.data.error.code === "CONFLICT") {
      const disk = await diskVersion();
      const details = r.data.error.details || {};
      const current = details.currentVersion ? details.currentVersion.sourceHash : disk ? disk.hash : "";
      document.getElementById("conflict-mine").textContent = text.value;
      document.getElementById("conflict-theirs").textContent = disk ? disk.text : "(unavailable)";
      conflict.hidden = false;
      conflict.dataset.theirsHash = current;
      conflict.dataset.theirsText = disk ? disk.text : "";
      say("Not saved: the file changed on disk since you opened it.", "error");
      conflict.scrollIntoView({ block: "nearest" });
      return;
    }
    say(`Not saved: ${errorText(r)}`, "error");
  };
  button.addEventListener("click", open);
  document.getElementById("cancel-button").addEventListener("click", close);
  document.getElementById("save-button").addEventListener("click", () => save(hash));
  document.getElementById("keep-mine").addEventListener("click", () => save(conflict.dataset.theirsHash));
  document.getElementById("take-theirs").addEventListener("click", () => {
    text.value = conflict.dataset.theirsText;
    hash = conflict.dataset.theirsHash;
    conflict.hidden = true;
    say("Loaded the version on disk.", "ok");
  });
  // Leaving with unsaved text asks first.
  window.addEventListener("beforeunload", (e) => {
    if (editing && text.value !== text.dataset.loaded) e.preventDefault();
  });
  text.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
      e.preventDefault();
      save(hash);
    }
  });
}

function setupRefactor() {
  const dialog = document.getElementById("refactor-dialog");
  const title = document.getElementById("refactor-title");
  const name = document.getElementById("refactor-name");
  const folder = document.getElementById("refactor-folder");
  const nameLabel = document.getElementById("refactor-name-label");
  const folderLabel = document.getElementById("refactor-folder-label");
  const output = document.getElementById("plan-output");
  const apply = document.getElementById("apply-button");
  let op = "rename";
  let plan = null;
  let planned = null; // the fields the plan was made for: Apply sends exactly these
  const fields = () => (op === "rename" ? { name: name.value.trim() } : { folderPath: folder.value.trim() });
  const openFor = (which) => {
    op = which;
    plan = null;
    apply.disabled = true;
    output.replaceChildren();
    title.textContent = which === "rename" ? "Rename" : "Move";
    nameLabel.hidden = which !== "rename";
    folderLabel.hidden = which === "rename";
    name.value = article.dataset.relPath.split("/").pop();
    dialog.showModal();
    (which === "rename" ? name : folder).focus();
  };
  for (const input of [name, folder]) {
    input.addEventListener("input", () => {
      plan = null;
      apply.disabled = true;
    });
  }
  // Absent for a read-only part of a file (a mailbox's message).
  document.getElementById("rename-button")?.addEventListener("click", () => openFor("rename"));
  document.getElementById("move-button")?.addEventListener("click", () => openFor("move"));
  document.getElementById("close-refactor").addEventListener("click", () => dialog.close());
  document.getElementById("plan-button").addEventListener("click", async () => {
    const r = await api(`${docPath}/refactor-plan`, { method: "POST", body: { uri, operation: op, ...fields() } });
    if (!r.ok) {
      output.replaceChildren(el("p", { class: "error" }, errorText(r)));
      return;
    }
    plan = r.data;
    planned = fields();
    const w = plan.refactorWarnings;
    output.replaceChildren(
      el("p", {}, `${plan.source.relPath} → ${plan.nextRelPath}`),
      el("p", {}, `${plan.affectedDocuments.length} other note(s) have links rewritten; ${w.backlinkCount} backlink(s).`),
      el("ul", { class: "plan-docs" }, plan.affectedDocuments.map((d) => el("li", {}, d.relPath || d.uri))),
      w.warnings.length ? el("ul", { class: "warnings" }, w.warnings.map((x) => el("li", {}, x))) : null,
      plan.canApply ? null : el("p", { class: "error" }, `Cannot apply: ${plan.safety.blockers.join(", ") || "blocked"}`),
    );
    apply.disabled = !plan.canApply;
  });
  apply.addEventListener("click", async () => {
    if (!plan) return;
    ownWrite = true; // until this page leaves for the note's new address
    const r = await api(`${docPath}/${op}`, {
      method: "POST",
      body: { uri, ...planned, planDigest: plan.planDigest, schemaVersion: "1.0", confirmation: "apply" },
    });
    if (!r.ok) {
      ownWrite = false;
      output.append(el("p", { class: "error" }, errorText(r)));
      return;
    }
    location.href = docHref(r.data.docUri || r.data.uri);
  });
}

function setupDeactivate() {
  document.getElementById("deactivate-button").addEventListener("click", async () => {
    if (!confirm("Deactivate this note? It leaves the index; the file stays on disk.")) return;
    const r = await api(`${docPath}/deactivate?uri=${encodeURIComponent(uri)}`, { method: "POST" });
    if (r.ok) location.href = "/";
    else say(errorText(r), "error");
  });
}

async function setupPdf() {
  const viewer = document.getElementById("pdf-viewer");
  if (!viewer) return;
  const pdfStatus = document.getElementById("pdf-status");
  const pages = document.getElementById("pdf-pages");
  try {
    const pdfjs = await import("/vendor/pdfjs/pdf.min.mjs");
    pdfjs.GlobalWorkerOptions.workerSrc = "/vendor/pdfjs/pdf.worker.min.mjs";
    const pdf = await pdfjs.getDocument({
      url: viewer.dataset.src,
      cMapUrl: "/vendor/pdfjs/cmaps/",
      cMapPacked: true,
      standardFontDataUrl: "/vendor/pdfjs/standard_fonts/",
      isEvalSupported: false,
    }).promise;
    pdfStatus.textContent = `${pdf.numPages} page${pdf.numPages === 1 ? "" : "s"}`;
    const width = Math.min(pages.clientWidth || 800, 900);
    for (let n = 1; n <= Math.min(pdf.numPages, 50); n++) {
      const page = await pdf.getPage(n);
      const base = page.getViewport({ scale: 1 });
      const viewport = page.getViewport({ scale: width / base.width });
      const canvas = el("canvas", { class: "pdf-page", "aria-label": `Page ${n}`, dataset: { page: n } });
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.floor(viewport.width * ratio);
      canvas.height = Math.floor(viewport.height * ratio);
      canvas.style.width = `${Math.floor(viewport.width)}px`;
      pages.append(canvas);
      await page.render({ canvasContext: canvas.getContext("2d"), viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : null }).promise;
      if (n === 1) viewer.dataset.rendered = "1";
    }
  } catch (e) {
    pdfStatus.textContent = `The PDF could not be shown: ${e.message || e}`;
    pdfStatus.className = "error";
  }
}

if (article) {
  setupEditor();
  setupRefactor();
  setupDeactivate();
  setupPdf();
  onEvents({
    "document-changed": (ev) => {
      if (ev.uri !== uri || ownWrite || (ev.sourceHash && ev.sourceHash === hash)) return;
      if (editing) say("This note changed on disk while you edit it: saving will show both versions.", "error");
      else location.reload();
    },
    // Changes this page missed may include this note's: shown again unless it is being edited.
    "events-dropped": () => {
      if (!editing && !ownWrite) location.reload();
    },
  });
}
ready();

// `#L<line>` (a citation's lines): scroll to the top-level block of the note holding that
// line (`data-block-lines` lists each block's first line).
function showLine() {
  const m = /^#L(\d+)$/.exec(location.hash);
  const body = document.getElementById("doc-body");
  if (!m || !body || !body.dataset.blockLines) return;
  const want = Number(m[1]);
  const lines = body.dataset.blockLines.split(",").map(Number);
  let idx = -1;
  for (let i = 0; i < lines.length && lines[i] <= want; i++) idx = i;
  const block = body.children[Math.max(0, idx)];
  if (!block) return;
  document.querySelectorAll(".cited").forEach((x) => x.classList.remove("cited"));
  block.classList.add("cited");
  block.scrollIntoView({ block: "center" });
}
window.addEventListener("hashchange", showLine);
showLine();
