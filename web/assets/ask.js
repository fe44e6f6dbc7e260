// `/ask`: the answer streams in token by token; `[n]` markers become links to the cited
// lines; a verified answer lists its claims with their verdicts and evidence, or says why it
// abstained.
import { el, docHref, errorText, ready } from "./app.js";

const form = document.getElementById("ask-form");
const question = document.getElementById("question");
const verify = document.getElementById("verify");
const status = document.getElementById("ask-status");
const answer = document.getElementById("answer");
const citations = document.getElementById("citations");
const verification = document.getElementById("verification");
const claims = document.getElementById("claims");
const summary = document.getElementById("verdict-summary");
let controller = null;

/** The answer text with each `[n]` that names a citation turned into a link to it. */
function linked(text, cites) {
  const byIndex = new Map(cites.map((c) => [c.index, c]));
  return text.split(/(\[\d+\])/).map((part) => {
    const m = /^\[(\d+)\]$/.exec(part);
    const c = m && byIndex.get(Number(m[1]));
    return c ? el("a", { href: docHref(c.uri, c.startLine), class: "cite", title: `${c.uri} lines ${c.startLine}–${c.endLine}` }, part) : part;
  });
}

function showAnswer(reply) {
  const cites = reply.citations || [];
  answer.replaceChildren(...linked(reply.answer || "", cites));
  citations.replaceChildren(
    ...cites.map((c) =>
      el("li", { value: c.index },
        el("a", { href: docHref(c.uri, c.startLine), class: "citation" }, `${c.uri}`),
        el("span", { class: "muted" }, ` lines ${c.startLine}–${c.endLine}`),
        c.via === "closest" ? el("span", { class: "muted closest" }, " · closest note, not a source of the answer") : null)),
  );
  const v = reply.verification;
  verification.hidden = !v;
  if (!v) return;
  const cv = v.claims;
  const sem = v.semantic;
  summary.replaceChildren(
    cv.abstained
      ? el("strong", { class: "abstained" }, `Abstained: ${cv.abstentionReason || "not every claim is supported"}`)
      : el("strong", { class: "verified" }, "Verified: every claim is supported by the notes"),
    el("span", { class: "muted" }, ` · ${cv.coverage.supportedClaims}/${cv.coverage.totalClaims} supported · semantic check ${sem.status} (${sem.reason})`),
  );
  claims.replaceChildren(
    ...cv.claims.map((claim) =>
      el("li", { class: `claim ${claim.status}` },
        el("span", { class: `verdict ${claim.status}` }, claim.status),
        " ",
        el("span", {}, claim.text),
        claim.evidence.length
          ? el("ul", { class: "evidence" }, claim.evidence.map((e) =>
              el("li", {}, el("a", { href: docHref(e.uri, e.startLine) }, `${e.uri}:${e.startLine}–${e.endLine}`), el("blockquote", {}, e.text))))
          : null)),
  );
}

/** Reads server-sent events from a fetch body: calls `on(name, data)` per event. */
async function readEvents(resp, on) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) on(name, data.join("\n"));
    }
  }
}

async function ask(q) {
  if (controller) controller.abort();
  controller = new AbortController();
  answer.replaceChildren();
  citations.replaceChildren();
  verification.hidden = true;
  status.textContent = verify.checked ? "Compiling evidence and verifying…" : "Thinking…";
  status.className = "";
  document.body.dataset.answered = "false";
  const started = performance.now();
  let text = "";
  let resp;
  try {
    resp = await fetch("/api/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ query: q, verify: verify.checked }),
      signal: controller.signal,
    });
  } catch {
    status.textContent = "The server cannot be reached.";
    return;
  }
  if (!resp.ok) {
    let data = null;
    try {
      data = await resp.json();
    } catch {
      /* not JSON */
    }
    status.textContent = errorText({ status: resp.status, data });
    status.className = "error";
    return;
  }
  answer.setAttribute("aria-busy", "true");
  try {
    await readEvents(resp, (name, data) => {
      if (name === "token") {
        text += JSON.parse(data).text;
        answer.textContent = text;
        status.textContent = "Answering…";
      } else if (name === "answer") {
        const reply = JSON.parse(data);
        showAnswer(reply);
        const cut = { max_tokens: "it reached the token limit", time_limit: "it reached the time limit" }[reply.meta?.finishReason];
        status.textContent = `Answered in ${((performance.now() - started) / 1000).toFixed(1)} s` + (cut ? ` (cut short: ${cut})` : "");
        document.body.dataset.answered = "true";
      } else if (name === "error") {
        status.textContent = errorText({ data: JSON.parse(data) });
        status.className = "error";
      }
    });
  } catch (e) {
    if (e.name !== "AbortError") {
      status.textContent = "The answer stopped: the connection to the server was lost.";
      status.className = "error";
    }
  } finally {
    answer.removeAttribute("aria-busy");
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = question.value.trim();
  if (!q) return;
  history.replaceState(null, "", `/ask?q=${encodeURIComponent(q)}`);
  ask(q);
});
question.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    form.requestSubmit();
  }
});
// A link may carry a question; it is filled in, never run (a page elsewhere must not be able
// to start a generation).
const initial = new URLSearchParams(location.search).get("q");
if (initial) question.value = initial;
ready();
