// The popup: two buttons, each a clip of the active tab (a click grants the clipper that tab).
const out = document.getElementById("out");
for (const mode of ["selection", "page"]) {
  document.getElementById(mode).addEventListener("click", async () => {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    out.textContent = "clipping…";
    const r = await chrome.runtime.sendMessage({ clip: mode, tabId: tab.id });
    out.textContent = r?.ok ? `saved as ${r.reply.uri}` : `not saved: ${r?.error}`;
  });
}
