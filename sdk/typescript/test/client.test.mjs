// The typed client against the real server: `svc serve` on temp dirs (SVC_BIN, else the
// checkout's debug build), a small folder of notes, and with the test models (SVC_TEST_MODELS,
// as scripts/test prepares them) the small preset's generator for a streamed answer.
// Run with `npm test` after `npm run build` (scripts/test does both).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import { createSvcClient, SvcError } from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = resolve(here, "..");
const checkout = resolve(sdk, "../..");
const BIN = process.env.SVC_BIN ?? join(checkout, "target/debug/svc");
const GEN = "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

const NOTES = {
  "paris.md": "# Paris\n\nParis is the capital of France. The Eiffel Tower stands in Paris.\n",
  "bread.md": "# Sourdough\n\nMix flour, water and salt, let the dough rise overnight, then bake it.\n",
  "bridge.md": "# Old Bridge\n\nThe Old Bridge is 120 metres long. It was built in 1890.\n",
};

let tmp;
let server;
let svc;
let withModels = false;

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

async function waitJob(id) {
  for (let i = 0; i < 600; i++) {
    const job = svc.ok(await svc.api.GET("/api/jobs/{id}", { params: { path: { id } } }));
    if (job.status !== "running") {
      assert.equal(job.status, "completed", JSON.stringify(job));
      return job;
    }
    await sleep(100);
  }
  throw new Error(`job ${id} did not finish`);
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "svc-sdk-"));
  const models = process.env.SVC_TEST_MODELS;
  withModels = Boolean(models) && existsSync(join(models, "cache/models", GEN));
  if (withModels) {
    mkdirSync(join(tmp, "cache"), { recursive: true });
    symlinkSync(join(models, "cache/models"), join(tmp, "cache/models"));
  }
  mkdirSync(join(tmp, "notes"));
  for (const [name, text] of Object.entries(NOTES)) {
    writeFileSync(join(tmp, "notes", name), text);
  }
  const port = await freePort();
  const env = { ...process.env, SVC_CONFIG_DIR: join(tmp, "config"), SVC_DATA_DIR: join(tmp, "data"),
    SVC_CACHE_DIR: join(tmp, "cache"), SVC_LOG: "warn" };
  delete env.SVC_API_TOKEN;
  server = spawn(BIN, ["serve", "--port", String(port)], { env, cwd: tmp, stdio: "ignore" });
  svc = createSvcClient({ baseUrl: `http://127.0.0.1:${port}` });
  for (let i = 0; ; i++) {
    try {
      const r = await svc.api.GET("/api/collections");
      if (r.response.status === 200) {
        break;
      }
    } catch {
      // not listening yet
    }
    if (i > 300) {
      throw new Error("svc did not become ready");
    }
    await sleep(200);
  }
  if (withModels) {
    svc.ok(await svc.api.POST("/api/presets", { body: { presetId: "small" } }));
  }
  const added = svc.ok(await svc.api.POST("/api/collections", { body: { path: join(tmp, "notes"), name: "notes" } }));
  await waitJob(added.jobId);
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((ok) => server.once("exit", ok));
    server.kill("SIGTERM");
    await Promise.race([exited, sleep(15000)]);
  }
  if (tmp) {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("the committed OpenAPI document and its types are the server's own", async () => {
  const r = await fetch(`${svcBase()}/api/openapi.json`);
  const live = await r.json();
  const committed = JSON.parse(readFileSync(join(sdk, "openapi.json"), "utf8"));
  assert.deepEqual(committed, live, "openapi.json is stale: fetch it again and run `npm run generate`");
  const types = astToString(await openapiTS(live));
  const header = readFileSync(join(sdk, "src/schema.d.ts"), "utf8");
  assert.ok(header.endsWith(types), "src/schema.d.ts is stale: run `npm run generate`");
});

function svcBase() {
  return `http://127.0.0.1:${server.spawnargs[server.spawnargs.indexOf("--port") + 1]}`;
}

test("typed calls: search, a document, an error as SvcError with its code", async () => {
  const found = svc.ok(await svc.api.POST("/api/search", { body: { query: "Eiffel Tower", limit: 5 } }));
  assert.equal(found.results[0].uri, "svc://notes/paris.md");
  const doc = svc.ok(await svc.api.GET("/api/doc", { params: { query: { uri: "svc://notes/bridge.md" } } }));
  assert.equal(doc.title, "Old Bridge");
  assert.match(doc.content, /built in 1890/);
  await assert.rejects(
    async () => svc.ok(await svc.api.GET("/api/doc", { params: { query: { uri: "svc://notes/nope.md" } } })),
    (e) => e instanceof SvcError && e.status === 404 && e.code === "NOT_FOUND",
  );
  await assert.rejects(
    async () => svc.ok(await svc.api.POST("/api/search", { body: { limit: 5 } })),
    (e) => e instanceof SvcError && e.status === 400 && e.code === "VALIDATION",
  );
});

test("the event stream carries a note written through the API", async () => {
  const stop = new AbortController();
  const events = svc.events({ signal: stop.signal });
  const first = events.next();
  // The subscription is open once the server answered its headers; write after a moment.
  await sleep(300);
  const created = svc.ok(
    await svc.api.POST("/api/docs", { body: { collection: "notes", relPath: "kettle.md", content: "# Kettle\n\nBoil water.\n" } }),
  );
  assert.equal(created.docUri, "svc://notes/kettle.md");
  let seen;
  for (let e = await first; !e.done; e = await events.next()) {
    if (e.value.event === "document-changed" && e.value.data.includes("svc://notes/kettle.md")) {
      seen = e.value;
      break;
    }
  }
  stop.abort();
  assert.ok(seen, "a document-changed event for the new note");
  assert.ok(seen.id, "with an id to resume from");
});

test("a streamed answer: tokens as they come, then the answer (503 without a generator)", async () => {
  const ask = async () => {
    const tokens = [];
    let answer;
    for await (const e of svc.askStream({ query: "What is the capital of France?", maxAnswerTokens: 48 })) {
      if (e.event === "token") {
        tokens.push(e.token.text);
      } else {
        answer = e.answer;
      }
    }
    return { tokens, answer };
  };
  if (!withModels) {
    await assert.rejects(ask, (e) => e instanceof SvcError && e.status === 503 && e.code === "UNAVAILABLE");
    return;
  }
  const { tokens, answer } = await ask();
  assert.ok(tokens.length > 0, "tokens before the answer");
  assert.ok(answer, "the answer event");
  assert.equal(tokens.join(""), answer.answer);
  assert.match(answer.answer, /Paris/);
});
