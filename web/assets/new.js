// `/new`: create a note (optionally from a note preset) or capture a quick one; opens the
// note once it is indexed.
import { api, el, docHref, errorText, waitForJob, ready } from "./app.js";

const create = document.getElementById("create-form");
const capture = document.getElementById("capture-form");
const collection = document.getElementById("new-collection");
const preset = document.getElementById("new-preset");
const status = document.getElementById("new-status");

async function openWhenIndexed(reply) {
  if (reply.jobId) await waitForJob(reply.jobId, () => {}, { timeoutMs: 30000 });
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

const [cols, presets] = await Promise.all([api("/api/collections"), api("/api/note-presets")]);
if (cols.ok) {
  for (const c of cols.data) collection.append(el("option", { value: c.name }, c.name));
  const wanted = new URLSearchParams(location.search).get("collection");
  if (wanted) collection.value = wanted;
  if (!cols.data.length) status.textContent = "Add a collection first (Collections page).";
}
if (presets.ok) for (const p of presets.data.presets) preset.append(el("option", { value: p.id, title: p.description }, p.label));
ready();
