// What the clipper does, apart from the browser's buttons: the settings it keeps, what it reads
// of a page, and the one request it makes (POST /api/capture on the user's own svc server).

/** The server a clipper talks to unless told otherwise (`svc serve`'s default). */
export const DEFAULT_SERVER = "http://127.0.0.1:3000";

/** Where a server may be: this machine only. Anything else is refused, so a note never leaves it. */
export function serverUrl(raw) {
  let url;
  try {
    url = new URL(String(raw || DEFAULT_SERVER).trim());
  } catch {
    throw new Error(`not an address: ${raw}`);
  }
  if (url.protocol !== "http:" || !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    throw new Error("the server must be on this machine (http://127.0.0.1, localhost or [::1])");
  }
  return url.origin;
}

/** The pairing: the server's address, its API token (`SVC_API_TOKEN`), the collection clipped into. */
export async function settings() {
  const s = await chrome.storage.local.get(["server", "token", "collection"]);
  return { server: serverUrl(s.server), token: s.token || "", collection: s.collection || "" };
}

export async function saveSettings({ server, token, collection }) {
  await chrome.storage.local.set({ server: serverUrl(server), token: String(token || "").trim(), collection: String(collection || "").trim() });
}

/** Runs in the page: the selection or the readable part of it, with what the page says of itself. */
export function readPage(mode) {
  const meta = (name) =>
    document.querySelector(`meta[property="${name}"], meta[name="${name}"]`)?.getAttribute("content") || undefined;
  let text;
  if (mode === "selection") {
    text = String(window.getSelection() || "").trim();
    if (!text) {
      return { error: "nothing is selected" };
    }
  } else {
    const root = document.querySelector("article") || document.querySelector("main") || document.body;
    text = (root ? root.innerText : "").trim();
  }
  return {
    text,
    title: (meta("og:title") || document.title || location.hostname).trim(),
    url: location.href,
    canonicalUrl: document.querySelector('link[rel="canonical"]')?.href || undefined,
    site: meta("og:site_name"),
    author: meta("author"),
    publishedAt: meta("article:published_time"),
  };
}

/** The capture body of a page read by `readPage`. */
export function captureBody(page, collection) {
  const source = { kind: "web", url: page.url, title: page.title };
  for (const key of ["canonicalUrl", "site", "author", "publishedAt"]) {
    if (page[key]) {
      source[key] = page[key];
    }
  }
  // Two clips of one page are two notes (`title-2.md`), never one overwritten.
  const body = { content: `${page.text}\n`, title: page.title, source, tags: ["clipped"], collisionPolicy: "create_with_suffix" };
  if (collection) {
    body.collection = collection;
  }
  return body;
}

/** The server's collection when it has exactly one (a clip names the collection it goes to). */
async function onlyCollection(server) {
  const response = await fetch(`${server}/api/collections`);
  const list = response.ok ? await response.json() : [];
  if (list.length !== 1) {
    throw new Error("which collection? name one in the clipper's options");
  }
  return list[0].name;
}

/** Clips tab `tabId` (`mode`: "selection" or "page") into svc; the capture's reply. */
export async function clip(tabId, mode) {
  const { server, token, collection } = await settings();
  if (!token) {
    throw new Error("not paired: give the clipper your server's API token (SVC_API_TOKEN) in its options");
  }
  const into = collection || (await onlyCollection(server));
  const [run] = await chrome.scripting.executeScript({ target: { tabId }, func: readPage, args: [mode] });
  const page = run?.result;
  if (!page || page.error) {
    throw new Error(page?.error || "the page could not be read");
  }
  const response = await fetch(`${server}/api/capture`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-SVC-Token": token },
    body: JSON.stringify(captureBody(page, into)),
  });
  const reply = await response.json().catch(() => ({}));
  if (!response.ok) {
    const e = reply.error || {};
    throw new Error(`svc answered ${response.status} ${e.code || ""}: ${e.message || "no reply"}`.trim());
  }
  return reply;
}
