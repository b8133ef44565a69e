// JSON responses, the API's default representation.

import type { FieldValue, Response } from "../http/message/response.js";

export const JSON_TYPE = "application/json";

/** Cache-Control is not the representation's to say: the cache policy (src/policies/cache.ts) puts the route's declared value on every answer. */
export function json(status: number, value: unknown, headers?: Readonly<Record<string, FieldValue>>): Response {
  return { status, headers: { "Content-Type": JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}
