// `/models`: the presets (switch the active one) and the download of the active preset's
// models with a progress bar from `/api/models/status`.
import { api, el, errorText, ready } from "./app.js";

const list = document.getElementById("preset-list");
const status = document.getElementById("models-status");
const bar = document.getElementById("pull-progress");
const pull = document.getElementById("pull-models");

async function refresh() {
  const r = await api("/api/presets");
  if (!r.ok) {
    status.textContent = errorText(r);
    return;
  }
  const caps = r.data.capabilities;
  status.textContent = `Active: ${r.data.activePreset} · keyword ${caps.bm25 ? "on" : "off"} · vector ${caps.vector ? "on" : "off"} · answers ${caps.answer ? "on" : "off"}`;
  list.replaceChildren(
    ...r.data.presets.map((p) =>
      el("li", { class: p.active ? "preset active" : "preset" },
        el("h2", {}, p.name, p.active ? el("span", { class: "badge" }, "active") : null),
        el("dl", {},
          el("dt", {}, "Embedder"), el("dd", {}, p.embed || "none"),
          el("dt", {}, "Reranker"), el("dd", {}, p.rerank || "none"),
          el("dt", {}, "Generator"), el("dd", {}, p.gen || "none")),
        p.active ? null : el("button", { type: "button", onclick: () => use(p.id) }, `Use ${p.name}`))),
  );
}

async function use(id) {
  const r = await api("/api/presets", { method: "POST", body: { presetId: id } });
  status.textContent = r.ok ? (r.data.note || `Now using ${r.data.activePreset}.`) : errorText(r);
  await refresh();
}

async function watchPull() {
  bar.hidden = false;
  for (;;) {
    const r = await api("/api/models/status");
    if (r.ok) {
      const s = r.data;
      if (s.progress) {
        bar.value = s.progress.percent;
        status.textContent = `Downloading ${s.currentType || ""}: ${s.progress.percent.toFixed(0)} % of ${(s.progress.totalBytes / 1e6).toFixed(1)} MB`;
      }
      if (!s.active) {
        bar.hidden = true;
        const failed = s.failed.map((f) => `${f.type}: ${f.error}`).join("; ");
        status.textContent = failed ? `Download failed: ${failed}` : `Models ready (${s.completed.join(", ") || "nothing to download"}).`;
        document.body.dataset.pullDone = "true";
        return;
      }
    }
    await new Promise((ok) => setTimeout(ok, 400));
  }
}

pull.addEventListener("click", async () => {
  const r = await api("/api/models/pull", { method: "POST" });
  if (!r.ok && r.status !== 409) {
    status.textContent = errorText(r);
    return;
  }
  await watchPull();
});

await refresh();
const s = await api("/api/models/status");
if (s.ok && s.data.active) watchPull();
ready();
