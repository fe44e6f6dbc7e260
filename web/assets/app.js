// Shared by every workspace page: API calls, safe DOM building, live events, the quick
// switcher (Ctrl/Cmd-K) and the global keys. No page ever builds HTML from strings.

/** Calls the API; resolves to {ok, status, data} (data: the JSON reply or the error envelope). */
export async function api(path, { method = "GET", body, signal } = {}) {
  const init = { method, signal, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    if (e.name === "AbortError") throw e;
    return { ok: false, status: 0, data: { error: { code: "UNAVAILABLE", message: "The server cannot be reached" } } };
  }
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  return { ok: resp.ok, status: resp.status, data };
}

/** The message of an error reply. */
export function errorText(r) {
  const e = r && r.data && r.data.error;
  return e ? `${e.code}: ${e.message}` : `HTTP ${r ? r.status : "?"}`;
}

/** Creates an element: el("a", {href: "/"}, "text", child). Text is always text. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** The workspace page of a document. */
export function docHref(uri, line) {
  return `/doc?uri=${encodeURIComponent(uri)}${line ? `#L${line}` : ""}`;
}

/** Subscribes to `/api/events`; `handlers` maps an event name to a function of its payload. */
export function onEvents(handlers) {
  if (!window.EventSource) return null;
  const source = new EventSource("/api/events");
  // The page says when live updates flow (tests wait for it before they cause a change).
  source.addEventListener("open", () => (document.body.dataset.live = "open"));
  for (const [name, fn] of Object.entries(handlers)) {
    source.addEventListener(name, (ev) => {
      try {
        fn(JSON.parse(ev.data));
      } catch {
        /* a malformed event is ignored */
      }
    });
  }
  return source;
}

/** Marks the page ready (scripts ran, first data shown): `data-ready`, and when, in ms since
 * navigation start (`data-ready-ms`, read by the browser tests and scripts/bench). */
export function ready() {
  document.body.dataset.readyMs = performance.now().toFixed(1);
  document.body.dataset.ready = "true";
}

/** Calls `fn` at most once per `ms`, with the latest arguments. */
export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

// The quick switcher: titles from /api/docs/autocomplete.
function setupSwitcher() {
  const dialog = document.getElementById("switcher");
  const input = document.getElementById("switcher-input");
  const list = document.getElementById("switcher-list");
  const opener = document.getElementById("open-switcher");
  if (!dialog || !input || !list) return;
  let items = [];
  let active = -1;
  let controller = null;
  const paint = () => {
    list.replaceChildren(
      ...items.map((d, i) =>
        el("li", { role: "option", "aria-selected": i === active ? "true" : "false", id: `sw-${i}` },
          el("a", { href: docHref(d.uri) }, d.title, el("span", { class: "muted" }, ` ${d.collection}`)))),
    );
    if (active >= 0) input.setAttribute("aria-activedescendant", `sw-${active}`);
  };
  const lookup = debounce(async () => {
    const q = input.value.trim();
    if (controller) controller.abort();
    if (!q) {
      items = [];
      active = -1;
      paint();
      return;
    }
    controller = new AbortController();
    try {
      const r = await api(`/api/docs/autocomplete?limit=10&query=${encodeURIComponent(q)}`, { signal: controller.signal });
      items = r.ok ? r.data.docs : [];
      active = items.length ? 0 : -1;
      paint();
    } catch {
      /* aborted by a newer keystroke */
    }
  }, 60);
  const open = () => {
    if (!dialog.open) dialog.showModal();
    input.select();
  };
  opener && opener.addEventListener("click", open);
  input.addEventListener("input", lookup);
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!items.length) return;
      active = (active + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      paint();
    } else if (e.key === "Enter" && active >= 0) {
      e.preventDefault();
      location.href = docHref(items[active].uri);
    }
  });
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") {
      e.preventDefault();
      open();
    }
  });
}

// `/` focuses the page's search box, or opens search from another page.
function setupSlash() {
  document.addEventListener("keydown", (e) => {
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    e.preventDefault();
    const q = document.getElementById("q");
    if (q) q.focus();
    else location.href = "/";
  });
}

setupSwitcher();
setupSlash();

/** Adds an option per collection to `select` (after what it holds); resolves to the names. */
export async function fillCollections(select, wanted = "") {
  const r = await api("/api/collections");
  if (!r.ok) return [];
  for (const c of r.data) select.append(el("option", { value: c.name }, c.name));
  if (wanted) select.value = wanted;
  return r.data.map((c) => c.name);
}

/** SHA-256 of bytes, lower-case hex (a note's `sourceHash`). */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Polls a job until it leaves `running`; `onTick(job)` sees every state. Resolves to the last. */
export async function waitForJob(id, onTick = () => {}, { intervalMs = 300, timeoutMs = 600000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(`/api/jobs/${encodeURIComponent(id)}`);
    if (r.ok) {
      onTick(r.data);
      if (r.data.status !== "running") return r.data;
    } else if (r.status !== 503) {
      return null;
    }
    if (Date.now() > deadline) return null;
    await new Promise((ok) => setTimeout(ok, intervalMs));
  }
}
