// `/collections`: add a folder (indexing shows live progress from `/api/events`), sync one,
// remove one (its files are never touched). Each row says how svc follows the folder (watching,
// polling and why, off), and its note count follows changes made on disk by other programs.
import { api, el, errorText, onEvents, waitForJob, ready } from "./app.js";

const form = document.getElementById("add-collection");
const pathInput = document.getElementById("col-path");
const nameInput = document.getElementById("col-name");
const status = document.getElementById("col-status");
const progress = document.getElementById("col-progress");
const tbody = document.querySelector("#col-table tbody");
const problems = document.getElementById("col-problems");
const explainForm = document.getElementById("explain-form");
const explainPath = document.getElementById("explain-path");
const explainResult = document.getElementById("explain-result");
let indexed = 0;
let tracking = null;
let refreshSoon = null;

onEvents({
  "document-changed": (ev) => {
    if (tracking && (!tracking.collection || ev.collection === tracking.collection)) {
      indexed += 1;
      document.body.dataset.indexedLive = String(indexed);
      status.textContent = `${tracking.label}: ${indexed} note${indexed === 1 ? "" : "s"} indexed so far…`;
    } else if (!tracking) {
      // A change svc saw on disk (or made elsewhere): recount, once per burst.
      clearTimeout(refreshSoon);
      refreshSoon = setTimeout(refresh, 300);
    }
  },
  // Changes this page missed: the counts are read again.
  "events-dropped": () => {
    clearTimeout(refreshSoon);
    refreshSoon = setTimeout(refresh, 300);
  },
});

/** The `watch` state of `/api/status` as a table cell. */
function watchCell(watch) {
  if (!watch) return el("td", { class: "watch" }, "–");
  if (watch.state === "watching") return el("td", { class: "watch", dataset: { state: "watching" } }, "watching");
  if (watch.state === "polling") {
    const every = Math.max(1, Math.round(watch.intervalMs / 1000));
    return el("td", { class: "watch", dataset: { state: "polling" } },
      `polling every ${every} s: ${watch.reason}`);
  }
  return el("td", { class: "watch", dataset: { state: "off" } }, "off (sync to update)");
}

async function refresh() {
  const [cols, st] = await Promise.all([api("/api/collections"), api("/api/status")]);
  if (!cols.ok) {
    status.textContent = errorText(cols);
    return;
  }
  const states = new Map((st.ok ? st.data.collections : []).map((c) => [c.name, c]));
  tbody.replaceChildren(
    ...cols.data.map((c) =>
      el("tr", { dataset: { name: c.name } },
        el("td", {}, c.name, c.shared
          ? el("span", {
            class: "badge",
            dataset: { share: c.replica ? "replica" : "shared" },
            title: c.replica ? "a replica of a collection another member of the team owns" : "shared with the team",
          }, c.replica ? "replica" : "shared")
          : ""),
        el("td", { class: "path" }, c.path),
        el("td", { class: "num" }, states.has(c.name) ? states.get(c.name).documentCount : "–"),
        el("td", { class: "vec" }, states.has(c.name) ? states.get(c.name).embeddedCount : "–"),
        watchCell(states.get(c.name)?.watch),
        el("td", {},
          el("button", { type: "button", onclick: () => sync(c.name) }, "Sync"),
          " ",
          el("button", { type: "button", class: "danger", onclick: () => remove(c.name) }, "Remove")))),
  );
  if (!cols.data.length) tbody.append(el("tr", {}, el("td", { colspan: 6 }, "No collections yet: add a folder above.")));
  showVectors(st.ok ? st.data : null);
  showTeam(st.ok ? st.data.cluster : null);
}

const teamLine = document.getElementById("col-team");
let teamSoon = null;

/** The team this server joined (`cluster` of `/api/status`): connected or why not, its
 * members, and how far this replica has applied the team's stream. */
function showTeam(cluster) {
  clearTimeout(teamSoon);
  if (!cluster) {
    teamLine.textContent = "";
    delete teamLine.dataset.connected;
    return;
  }
  teamLine.dataset.connected = String(cluster.connected);
  const members = cluster.members.map((m) => m.name).join(", ") || "none heard yet";
  const state = cluster.connected
    ? `connected; stream at ${cluster.streamSeq}, applied ${cluster.appliedSeq}` +
      (cluster.lag ? ` (${cluster.lag} to go)` : "")
    : `not connected${cluster.error ? `: ${cluster.error}` : ""}; shared notes are read from this replica, their writes wait`;
  teamLine.textContent = `Team ${cluster.team} as ${cluster.member}: ${state}. Members: ${members}.`;
  // Followed while the page is open: the connection and the members change by themselves.
  teamSoon = setTimeout(refresh, 3000);
}

const vectorsLine = document.getElementById("col-vectors");
let vectorsSoon = null;

/** The backlogs of long work: the embedding's, with its pace, and the keyword index's while it is
 * re-fed (a new analyzer); followed every two seconds while there is one. */
function showVectors(st) {
  clearTimeout(vectorsSoon);
  const waiting = st ? st.embeddingBacklog : 0;
  const keywords = st ? st.keywordBacklog || 0 : 0;
  if (!waiting && !keywords) {
    vectorsLine.textContent = "";
    return;
  }
  const lines = [];
  if (keywords) {
    lines.push(`Keywords: ${keywords} note${keywords === 1 ? "" : "s"} still to be re-indexed; ` +
      "search finds the others meanwhile.");
  }
  if (waiting) {
    let pace = "";
    if (st.embeddingRate) {
      const secs = Math.ceil(waiting / st.embeddingRate);
      const left = secs < 60 ? `${secs} s` : `${Math.ceil(secs / 60)} min`;
      pace = ` (${st.embeddingRate.toFixed(1)} a second, about ${left} left)`;
    }
    lines.push(`Vectors: ${waiting} note${waiting === 1 ? "" : "s"} waiting to be embedded${pace}. ` +
      "Until then search and answers find them by their words.");
  }
  vectorsLine.textContent = lines.join(" ");
  vectorsSoon = setTimeout(refresh, 2000);
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
    showProblems(res.collections || []);
  }
  document.body.dataset.jobDone = jobId;
  await refresh();
}

/** The files a job skipped or could not index, each with a "Why?" that asks /api/explain. */
function showProblems(collections) {
  problems.replaceChildren(
    ...collections.flatMap((c) =>
      (c.problems || []).map((p) => {
        const why = el("span", { class: "why" });
        const uri = `svc://${c.collection}/${p.relPath}`;
        return el("li", {}, `${c.collection}/${p.relPath}: ${p.reason} `,
          el("button", { type: "button", onclick: async () => { why.textContent = await explain(uri); } }, "Why?"),
          " ", why);
      })));
}

/** The verdict of /api/explain for a path or svc:// URI, as a sentence. */
async function explain(path) {
  const r = await api(`/api/explain?path=${encodeURIComponent(path)}`);
  return r.ok ? r.data.message : errorText(r);
}

explainForm.addEventListener("submit", async (e) => {
  e.preventDefault();
  explainResult.textContent = await explain(explainPath.value.trim());
  document.body.dataset.explained = "true";
});

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
