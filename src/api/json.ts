// JSON responses, the API's default representation.

import type { FieldValue, Response } from "../http/response.js";

export const JSON_TYPE = "application/json";

export function json(status: number, value: unknown, headers?: Readonly<Record<string, FieldValue>>): Response {
  return { status, headers: { "Content-Type": JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}
