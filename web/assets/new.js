// `/new`: create a note (optionally from a note preset) or capture a quick one; opens the
// note once it is indexed.
import { api, el, docHref, errorText, fillCollections, waitForJob, ready } from "./app.js";

const create = document.getElementById("create-form");
const capture = document.getElementById("capture-form");
const collection = document.getElementById("new-collection");
const preset = document.getElementById("new-preset");
const status = document.getElementById("new-status");

async function openWhenIndexed(reply) {
  // A created note names its job `jobId`; a capture, `sync.jobId`.
  const job = reply.jobId || (reply.sync && reply.sync.jobId);
  if (job) await waitForJob(job, () => {}, { timeoutMs: 30000 });
  location.href = docHref(reply.docUri || reply.uri);
}

create.addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = { collection: collection.value };
  for (const [id, key] of [["new-path", "relPath"], ["new-title", "title"], ["new-content", "content"]]) {
    const v = document.getElementById(id).value;
    if (v.trim()) body[key] = v;
  }
  if (preset.value) body.presetId = preset.value;
  const r = await api("/api/docs", { method: "POST", body });
  if (!r.ok) {
    status.textContent = errorText(r);
    return;
  }
  status.textContent = "Created; opening…";
  await openWhenIndexed(r.data);
});

capture.addEventListener("submit", async (e) => {
  e.preventDefault();
  const r = await api("/api/capture", { method: "POST", body: { collection: collection.value, content: document.getElementById("capture-text").value } });
  if (!r.ok) {
    status.textContent = errorText(r);
    return;
  }
  status.textContent = "Captured; opening…";
  await openWhenIndexed(r.data);
});

const [names, presets] = await Promise.all([
  fillCollections(collection, new URLSearchParams(location.search).get("collection") || ""),
  api("/api/note-presets"),
]);
if (!names.length) status.textContent = "Add a collection first (Collections page).";
if (presets.ok) for (const p of presets.data.presets) preset.append(el("option", { value: p.id, title: p.description }, p.label));
ready();
