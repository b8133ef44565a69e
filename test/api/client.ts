// Shared tools for the API tests: an app on a real loopback port, raw requests
// whose bytes are exactly what the test wrote, and a check of the problem
// details every error must carry.

import type { Test } from "tap";
import { createApp, type App } from "../../src/app.js";
import { hashToken } from "../../src/policies/auth.js";
import type { ServerOptions } from "../../src/http/connection/server.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import type { Store } from "../../src/store/types.js";
import { listen, splitResponses, talk, type RawResponse } from "../helpers/wire.js";

export const USER_TOKEN = "user-token-0123456789abcdef";
export const ADMIN_TOKEN = "admin-token-0123456789abcdef";
export const WRONG_TOKEN = "wrong-token-0123456789abcdef";

export interface Api {
  readonly store: Store;
  readonly app: App;
  readonly port: number;
  /** "http://127.0.0.1:<port>" */
  readonly base: string;
}

export interface ApiOptions {
  /** Fill the store with the seed facts and articles (default true). */
  readonly seed?: boolean;
  readonly writeRequiresToken?: boolean;
  readonly server?: ServerOptions;
}

/** A fresh app over a fresh memory store, with a user and an admin token, served until the test ends. */
export async function startApi(t: Test, options: ApiOptions = {}): Promise<Api> {
  const store = createMemoryStore();
  if (options.seed ?? true) await seed(store);
  await store.tokens.add(hashToken(USER_TOKEN), "user");
  await store.tokens.add(hashToken(ADMIN_TOKEN), "admin");
  const app = createApp({ store, ...(options.writeRequiresToken === undefined ? {} : { writeRequiresToken: options.writeRequiresToken }) });
  const running = await listen(app.handle, options.server ?? {});
  t.teardown(running.close);
  return { store, app, port: running.port, base: `http://127.0.0.1:${running.port}` };
}

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

/**
 * One request on its own connection, exactly as given (plus Host, a
 * Content-Length when there is a body, and Connection: close), and the one
 * response to it. Fails the test if anything but exactly one response arrives.
 */
export async function raw(
  port: number,
  method: string,
  target: string,
  headers: Readonly<Record<string, string>> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  const bytes = body === undefined ? undefined : typeof body === "string" ? Buffer.from(body, "utf8") : body;
  if (bytes !== undefined) head += `Content-Length: ${bytes.length}\r\n`;
  head += "Connection: close\r\n\r\n";
  const out = await talk(port, bytes === undefined ? [head] : [Buffer.concat([Buffer.from(head, "latin1"), bytes])]);
  const responses = splitResponses(out);
  if (responses.length !== 1) throw new Error(`expected exactly one response to ${method} ${target}, got ${responses.length}: ${out.toString("latin1")}`);
  return responses[0]!;
}

/** The JSON body of a raw response. */
export function jsonOf(r: RawResponse): any {
  return JSON.parse(r.body);
}

/**
 * Checks an error response: the status, an RFC 9457 body with all five
 * members as application/problem+json, the instance being the target, and a
 * detail matching `detail` (the field or the rule it names).
 */
export function checkProblem(t: Test, r: RawResponse | { status: number; headers: Record<string, string | undefined>; body: string }, status: number, detail: RegExp, instance?: string): any {
  t.not(r.status, 200, "an error never answers 200");
  // The rest only makes sense for the expected error; one failure says enough.
  if (!t.equal(r.status, status, `status ${status}`)) return undefined;
  t.equal(r.headers["content-type"], "application/problem+json", "problem+json");
  let body: any;
  try {
    body = JSON.parse(r.body);
  } catch {
    t.fail(`the problem body is JSON: ${r.body}`);
    return undefined;
  }
  t.type(body.type, "string", "type is a string");
  t.match(body.type, /^\/problems\/[a-z0-9-]+$/, "type is a stable /problems/ URI");
  t.type(body.title, "string", "title is a string");
  t.ok(typeof body.title === "string" && body.title.length > 0, "title is not empty");
  t.equal(body.status, status, "status member matches the status line");
  t.type(body.detail, "string", "detail is a string");
  t.match(body.detail, detail, `detail names the field or rule: ${body.detail}`);
  t.type(body.instance, "string", "instance is a string");
  if (instance !== undefined) t.equal(body.instance, instance, "instance is the request target");
  return body;
}

/** A fetch response in the shape checkProblem takes. */
export async function fetched(res: Response): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  return { status: res.status, headers, body: await res.text() };
}
