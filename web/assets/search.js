// `/`: search as you type (keyword, hybrid or vector), filters and tag facets in the URL,
// arrows move through the results, Enter opens one.
import { api, el, docHref, debounce, errorText, fillCollections, onEvents, ready } from "./app.js";

const form = document.getElementById("search-form");
const q = document.getElementById("q");
const mode = document.getElementById("mode");
const collection = document.getElementById("collection");
const since = document.getElementById("since");
const until = document.getElementById("until");
const category = document.getElementById("category");
const results = document.getElementById("results");
const status = document.getElementById("search-status");
const tagList = document.getElementById("tag-list");
const params = new URLSearchParams(location.search);
const selectedTags = new Set(params.getAll("tag"));
let controller = null;
let active = -1;
let seq = 0;
let typedAt = null; // when the keystroke that the debounced search answers happened

const ENDPOINT = { bm25: "/api/search", hybrid: "/api/query", vector: "/api/vsearch" };

/** A snippet as a reader sees it: Markdown's heading marks, link and wiki-link syntax (the
 * text kept, the address gone), emphasis, inline code marks and HTML tags removed. The API's
 * `snippet` stays the note's text as it is. */
export function plainSnippet(text) {
  return text
    .replace(/<[^>\n]+>/g, " ")
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
    .replace(/\[\[(?:[^\]|\n]*\|)?([^\]\n]*)\]\]/g, "$1")
    .replace(/(^|\s)#{1,6}(?=\s)/g, "$1")
    .replace(/(\*\*|__|~~|\*|`)(\S(?:[^\n]*?\S)?)\1/g, "$2")
    .replace(/\s+/g, " ")
    .trim();
}

/** The snippet with every query term marked, as nodes. */
function highlighted(text, query) {
  const terms = query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 1);
  if (!terms.length) return [text];
  const re = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`, "giu");
  return text.split(re).map((part, i) => (i % 2 ? el("mark", {}, part) : part));
}

function select(i) {
  const items = results.querySelectorAll("li > a");
  if (!items.length) return;
  active = Math.max(0, Math.min(items.length - 1, i));
  items.forEach((a, j) => a.parentElement.classList.toggle("active", j === active));
  items[active].focus();
}

function syncUrl() {
  const p = new URLSearchParams();
  if (q.value.trim()) p.set("q", q.value.trim());
  if (mode.value !== "bm25") p.set("mode", mode.value);
  if (collection.value) p.set("collection", collection.value);
  if (since.value) p.set("since", since.value);
  if (until.value) p.set("until", until.value);
  if (category.value.trim()) p.set("category", category.value.trim());
  for (const t of selectedTags) p.append("tag", t);
  const qs = p.toString();
  history.replaceState(null, "", qs ? `/?${qs}` : "/");
}

async function run() {
  syncUrl();
  const query = q.value.trim();
  if (controller) controller.abort();
  if (!query) {
    results.replaceChildren();
    status.textContent = "Type to search your notes.";
    return;
  }
  controller = new AbortController();
  const mine = ++seq;
  const body = { query, limit: 20 };
  if (collection.value) body.collection = collection.value;
  if (since.value) body.since = since.value;
  if (until.value) body.until = until.value;
  if (category.value.trim()) body.category = [category.value.trim()];
  if (selectedTags.size) body.tagsAll = [...selectedTags];
  const started = performance.now();
  const keystroke = typedAt;
  typedAt = null;
  let r;
  // Debounced typing ends here: the round trip runs from this request to the painted list.
  try {
    r = await api(ENDPOINT[mode.value] || ENDPOINT.bm25, { method: "POST", body, signal: controller.signal });
  } catch {
    return; // superseded
  }
  if (mine !== seq) return;
  if (!r.ok) {
    results.replaceChildren();
    status.textContent = errorText(r);
    return;
  }
  active = -1;
  const hits = r.data.results;
  results.replaceChildren(
    ...hits.map((hit) =>
      el("li", {},
        el("a", { href: docHref(hit.uri, hit.line), class: "result" },
          el("span", { class: "title" }, hit.title || hit.source.relPath),
          el("span", { class: "path" }, `${hit.collection}/${hit.source.relPath}`),
          hit.symbol ? el("code", { class: "symbol" }, hit.symbol) : null,
          el("span", { class: "snippet" }, highlighted(plainSnippet(hit.snippet), query)),
          hit.tags.length ? el("span", { class: "tags" }, hit.tags.map((t) => `#${t}`).join(" ")) : null))),
  );
  const ms = Math.round(performance.now() - started);
  status.textContent = hits.length ? `${hits.length} result${hits.length === 1 ? "" : "s"} · ${ms} ms` : "No results.";
  // Two frames later the list is on screen: the round trip, painted (scripts/bench reads it).
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      const now = performance.now();
      document.body.dataset.searchPaintMs = (now - started).toFixed(1);
      if (keystroke !== null) document.body.dataset.keystrokePaintMs = (now - keystroke).toFixed(1);
      document.body.dataset.searchDone = String(mine);
    }),
  );
}

async function loadFilters() {
  const [, tags] = await Promise.all([fillCollections(collection, params.get("collection") || ""), api("/api/tags")]);
  if (tags.ok) paintTags(tags.data.tags);
}

function paintTags(tags) {
  tagList.replaceChildren(
    ...tags.slice(0, 40).map((t) =>
      el("li", {},
        el("button", {
          type: "button",
          class: selectedTags.has(t.tag) ? "facet on" : "facet",
          "aria-pressed": selectedTags.has(t.tag) ? "true" : "false",
          onclick: () => {
            if (selectedTags.has(t.tag)) selectedTags.delete(t.tag);
            else selectedTags.add(t.tag);
            paintTags(tags);
            run();
          },
        }, `#${t.tag}`, el("span", { class: "count" }, t.count)))),
  );
}

async function loadModes() {
  const r = await api("/api/capabilities");
  const vector = mode.querySelector("option[value=vector]");
  if (r.ok && !r.data.vector) {
    vector.disabled = true;
    vector.textContent = "Vector (no embeddings yet)";
    if (mode.value === "vector") mode.value = "bm25";
  }
}

q.value = params.get("q") || "";
mode.value = params.get("mode") || "bm25";
since.value = params.get("since") || "";
until.value = params.get("until") || "";
category.value = params.get("category") || "";
const later = debounce(run, 60);
q.addEventListener("input", () => {
  typedAt = performance.now();
  later();
});
for (const c of [mode, collection, since, until]) c.addEventListener("change", run);
category.addEventListener("input", later);
form.addEventListener("submit", (e) => {
  e.preventDefault();
  run();
});
form.addEventListener("keydown", (e) => {
  if (e.key === "ArrowDown" && e.target === q) {
    e.preventDefault();
    select(0);
  }
});
results.addEventListener("keydown", (e) => {
  if (e.key === "ArrowDown") {
    e.preventDefault();
    select(active + 1);
  } else if (e.key === "ArrowUp") {
    e.preventDefault();
    if (active <= 0) q.focus();
    else select(active - 1);
  }
});
const rerun = debounce(() => q.value.trim() && run(), 300);
onEvents({ "document-changed": rerun, "events-dropped": rerun });
await Promise.all([loadFilters(), loadModes()]);
if (q.value.trim()) run();
else q.focus();
ready();
