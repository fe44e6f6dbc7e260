// A typed client for svc's HTTP API. The routes, their parameters, bodies and replies are the
// types `openapi-typescript` generates from the server's own OpenAPI document
// (`openapi.json`, as `GET /api/openapi.json` serves it; `npm run generate` writes
// `src/schema.d.ts` from it), and `openapi-fetch` makes the calls: nothing here restates a
// reply's shape. Added by hand: the token header, errors thrown as `SvcError`, and the two
// streams (a streamed answer, the event stream) as async iterators of Server-Sent Events.

import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths } from "./schema.js";

/** A reply body of the API, by its schema's name (`Schema<"SearchResponse">`). */
export type Schema<N extends keyof components["schemas"]> = components["schemas"][N];

/** The error envelope every route answers a failure with. */
export type ErrorEnvelope = Schema<"ErrorEnvelope">;

export interface SvcOptions {
  /** Where the server listens (`svc serve`): `http://127.0.0.1:3000` by default. */
  baseUrl?: string;
  /** The API token (`SVC_API_TOKEN`), sent as `X-SVC-Token` when given. */
  token?: string;
  /** A `fetch` of your own (tests, proxies). */
  fetch?: ClientOptions["fetch"];
}

/** A failure the server answered with its error envelope (or a reply that was not one). */
export class SvcError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, envelope: unknown) {
    const error = (envelope as ErrorEnvelope | undefined)?.error;
    super(error?.message ?? `HTTP ${status}`);
    this.name = "SvcError";
    this.status = status;
    this.code = error?.code ?? "HTTP_ERROR";
    this.details = (error as { details?: unknown } | undefined)?.details;
  }
}

/** One Server-Sent Event: its name (`token`, `answer`, `document-changed`…), id and data. */
export interface ServerEvent {
  event: string;
  id?: string;
  data: string;
}

/** A `token` or `answer` event of a streamed answer, its data parsed. */
export type AskEvent =
  | { event: "token"; token: Schema<"AnswerToken"> }
  | { event: "answer"; answer: Schema<"AskResponse"> | Schema<"VerifiedAskResponse"> };

export type AskBody = paths["/api/ask"]["post"]["requestBody"] extends { content: { "application/json": infer B } }
  ? B
  : never;

export interface SvcClient {
  /** Every route, typed: `api.GET("/api/search", …)`, `api.POST("/api/query", { body })`. */
  api: Client<paths>;
  /** The data of a call's result, or its error thrown as an [`SvcError`]. */
  ok<T>(result: { data?: T; error?: unknown; response: Response }): T;
  /** `POST /api/ask` streamed: each `token` as it is generated, then the `answer`. */
  askStream(body: AskBody, init?: { signal?: AbortSignal }): AsyncGenerator<AskEvent>;
  /** `GET /api/events`: every event the server pushes until `signal` aborts. */
  events(init?: { signal?: AbortSignal; lastEventId?: string }): AsyncGenerator<ServerEvent>;
}

export function createSvcClient(options: SvcOptions = {}): SvcClient {
  const baseUrl = (options.baseUrl ?? "http://127.0.0.1:3000").replace(/\/+$/, "");
  const headers: Record<string, string> = options.token ? { "X-SVC-Token": options.token } : {};
  const fetcher = options.fetch ?? globalThis.fetch;
  const api = createClient<paths>({ baseUrl, headers, fetch: fetcher });

  const ok = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
    if (!result.response.ok || result.data === undefined) {
      throw new SvcError(result.response.status, result.error);
    }
    return result.data;
  };

  async function* stream(path: string, init: RequestInit): AsyncGenerator<ServerEvent> {
    const response = await fetcher(new Request(baseUrl + path, init));
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok || !type.startsWith("text/event-stream") || !response.body) {
      const text = await response.text();
      let envelope: unknown;
      try {
        envelope = JSON.parse(text);
      } catch {
        envelope = undefined;
      }
      throw new SvcError(response.status, envelope);
    }
    yield* serverEvents(response.body);
  }

  return {
    api,
    ok,
    async *askStream(body, init = {}) {
      const events = stream("/api/ask", {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body),
        signal: init.signal,
      });
      for await (const e of events) {
        if (e.event === "token") {
          yield { event: "token", token: JSON.parse(e.data) };
        } else if (e.event === "answer") {
          yield { event: "answer", answer: JSON.parse(e.data) };
        } else if (e.event === "error") {
          const envelope = JSON.parse(e.data) as ErrorEnvelope;
          throw new SvcError(500, envelope);
        }
      }
    },
    events(init = {}) {
      const h: Record<string, string> = { ...headers, Accept: "text/event-stream" };
      if (init.lastEventId) {
        h["Last-Event-ID"] = init.lastEventId;
      }
      return stream("/api/events", { method: "GET", headers: h, signal: init.signal });
    },
  };
}

/** The events of a `text/event-stream` body, as the HTML standard reads them (comments and
 * keep-alives skipped, `data:` lines joined). */
export async function* serverEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
  let buffer = "";
  let event = "message";
  let id: string | undefined;
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        return;
      }
      buffer += value;
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) {
            yield { event, id, data: data.join("\n") };
          }
          event = "message";
          data = [];
          continue;
        }
        if (line.startsWith(":")) {
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") {
          event = value;
        } else if (field === "data") {
          data.push(value);
        } else if (field === "id") {
          id = value;
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
}
