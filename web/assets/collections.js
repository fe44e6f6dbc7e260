// `/collections`: add a folder (indexing shows live progress from `/api/events`), sync one,
// remove one (its files are never touched).
import { api, el, errorText, onEvents, waitForJob, ready } from "./app.js";

const form = document.getElementById("add-collection");
const pathInput = document.getElementById("col-path");
const nameInput = document.getElementById("col-name");
const status = document.getElementById("col-status");
const progress = document.getElementById("col-progress");
const tbody = document.querySelector("#col-table tbody");
let indexed = 0;
let tracking = null;

onEvents({
  "document-changed": (ev) => {
    if (tracking && (!tracking.collection || ev.collection === tracking.collection)) {
      indexed += 1;
      document.body.dataset.indexedLive = String(indexed);
      status.textContent = `${tracking.label}: ${indexed} note${indexed === 1 ? "" : "s"} indexed so far…`;
    }
  },
});

async function refresh() {
  const [cols, st] = await Promise.all([api("/api/collections"), api("/api/status")]);
  if (!cols.ok) {
    status.textContent = errorText(cols);
    return;
  }
  const counts = new Map((st.ok ? st.data.collections : []).map((c) => [c.name, c.documentCount]));
  tbody.replaceChildren(
    ...cols.data.map((c) =>
      el("tr", { dataset: { name: c.name } },
        el("td", {}, c.name),
        el("td", { class: "path" }, c.path),
        el("td", { class: "num" }, counts.has(c.name) ? counts.get(c.name) : "–"),
        el("td", {},
          el("button", { type: "button", onclick: () => sync(c.name) }, "Sync"),
          " ",
          el("button", { type: "button", class: "danger", onclick: () => remove(c.name) }, "Remove")))),
  );
  if (!cols.data.length) tbody.append(el("tr", {}, el("td", { colspan: 4 }, "No collections yet: add a folder above.")));
}

/** Counts the job's notes from here on (called before the request that starts it, so no
 * event of a quick job is missed). */
function startCounting(label, collection) {
  indexed = 0;
  tracking = { label, collection };
}

async function track(jobId, label, collection) {
  tracking = { label, collection };
  progress.hidden = false;
  progress.removeAttribute("value");
  status.textContent = `${label}: started…`;
  const job = await waitForJob(jobId);
  tracking = null;
  progress.hidden = true;
  if (!job) status.textContent = `${label}: the job could not be followed.`;
  else if (job.status === "failed") status.textContent = `${label} failed: ${job.error || "unknown error"}`;
  else {
    const res = job.result || {};
    status.textContent = `${label}: done, ${res.totalFilesProcessed ?? 0} files processed (${res.totalFilesAdded ?? 0} added, ${res.totalFilesUpdated ?? 0} updated) in ${res.totalDurationMs ?? 0} ms.`;
  }
  document.body.dataset.jobDone = jobId;
  await refresh();
}

async function sync(name) {
  startCounting(`Sync of ${name}`, name);
  const r = await api("/api/sync", { method: "POST", body: { collection: name } });
  if (!r.ok) {
    tracking = null;
    status.textContent = errorText(r);
    return;
  }
  await track(r.data.jobId, `Sync of ${name}`, name);
}

async function remove(name) {
  if (!confirm(`Remove the collection ${name}? Its files stay on disk.`)) return;
  const r = await api(`/api/collections/${encodeURIComponent(name)}`, { method: "DELETE" });
  status.textContent = r.ok ? `Removed ${name}.` : errorText(r);
  await refresh();
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = { path: pathInput.value.trim() };
  if (nameInput.value.trim()) body.name = nameInput.value.trim();
  startCounting("Indexing", body.name || null);
  const r = await api("/api/collections", { method: "POST", body });
  if (!r.ok) {
    tracking = null;
    status.textContent = errorText(r);
    return;
  }
  pathInput.value = "";
  nameInput.value = "";
  await refresh();
  await track(r.data.jobId, `Indexing ${r.data.collection.name}`, r.data.collection.name);
});

await refresh();
ready();
