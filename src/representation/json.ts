// JSON responses, the API's default representation.

import type { FieldValue, Response } from "../http/message/response.js";

export const JSON_TYPE = "application/json";

/**
 * Dynamic data may change at any time: caches may keep it but must ask again
 * before each reuse (RFC 9111 §5.2.2.4), rather than guess a freshness
 * lifetime of their own (RFC 9111 §4.2.2). A route that knows better says so
 * in `headers`.
 */
export const REVALIDATE = "no-cache";

export function json(status: number, value: unknown, headers?: Readonly<Record<string, FieldValue>>): Response {
  return { status, headers: { "Content-Type": JSON_TYPE, "Cache-Control": REVALIDATE, ...headers }, body: JSON.stringify(value) };
}
