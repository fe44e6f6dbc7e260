// The clipper's service worker: the context menu, the keyboard command and the popup's
// requests all end in `clip` (clip.js). `self.clip` is there for the popup and the tests.
import { clip } from "./clip.js";

self.clip = clip;

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.create({ id: "clip-selection", title: "Clip selection to svc", contexts: ["selection"] });
  chrome.contextMenus.create({ id: "clip-page", title: "Clip page to svc", contexts: ["page"] });
});

async function clipAndTell(tabId, mode) {
  try {
    const reply = await clip(tabId, mode);
    await chrome.action.setBadgeText({ tabId, text: "✓" });
    return { ok: true, reply };
  } catch (e) {
    await chrome.action.setBadgeText({ tabId, text: "!" });
    return { ok: false, error: String(e.message || e) };
  }
}

chrome.contextMenus.onClicked.addListener((info, tab) => {
  if (tab?.id !== undefined) {
    clipAndTell(tab.id, info.menuItemId === "clip-selection" ? "selection" : "page");
  }
});

chrome.commands.onCommand.addListener((command, tab) => {
  if (command === "clip-selection" && tab?.id !== undefined) {
    clipAndTell(tab.id, "selection");
  }
});

chrome.runtime.onMessage.addListener((message, _sender, respond) => {
  if (message?.clip) {
    clipAndTell(message.tabId, message.clip).then(respond);
    return true;
  }
  return false;
});
