// The pairing form: the server's address (this machine only), its token and the collection.
import { saveSettings, settings } from "./clip.js";

const form = document.getElementById("pair");
const out = document.getElementById("out");
settings().then((s) => {
  form.server.value = s.server;
  form.token.value = s.token;
  form.collection.value = s.collection;
}).catch((e) => { out.textContent = String(e.message || e); });
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await saveSettings({ server: form.server.value, token: form.token.value, collection: form.collection.value });
    out.textContent = "saved";
  } catch (e) {
    out.textContent = String(e.message || e);
  }
});
