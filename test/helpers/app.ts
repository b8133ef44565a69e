// An app over a seeded memory store with a user and an admin token, and
// requests run through it in memory (src/http/connection/inject.ts, the real connection
// code, no port) so every byte is the server's own. Used by test/docs/.

import { createApp, type App, type AppOptions } from "../../src/app.js";
import { hashToken } from "../../src/policies/auth.js";
import { inject } from "../../src/http/connection/inject.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import type { Store } from "../../src/store/types.js";
import { splitResponses, type RawResponse } from "./wire.js";

export const ADMIN = "admin-token-docs-0123456789";
export const USER = "user-token-docs-0123456789";

export async function docsApp(options: Partial<AppOptions> = {}): Promise<{ store: Store; app: App }> {
  const store = createMemoryStore();
  await seed(store);
  await store.tokens.add(hashToken(ADMIN), "admin");
  await store.tokens.add(hashToken(USER), "user");
  return { store, app: createApp({ store, ...options }) };
}

/** One request (Host and Connection: close added, Content-Length for a body), and its one response. */
export async function request(
  app: App,
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  if (bytes !== undefined) head += `Content-Length: ${bytes.length}\r\n`;
  head += "Connection: close\r\n\r\n";
  const { output } = await inject(app, bytes === undefined ? head : Buffer.concat([Buffer.from(head, "latin1"), bytes]));
  const responses = splitResponses(output, [method === "HEAD"]);
  if (responses.length !== 1) throw new Error(`expected one response to ${method} ${target}, got: ${output.toString("latin1")}`);
  return responses[0]!;
}

/** POST /api/wire with `raw` as the body; the status and the parsed JSON answer. */
export async function wire(app: App, raw: string | Buffer, contentType = "message/http"): Promise<{ status: number; body: any; response: RawResponse }> {
  const response = await request(app, "POST", "/api/wire", { "Content-Type": contentType }, typeof raw === "string" ? Buffer.from(raw, "latin1") : raw);
  return { status: response.status, body: JSON.parse(response.body), response };
}
