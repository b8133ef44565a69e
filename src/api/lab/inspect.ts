// Request inspection, by httpbin's names and members: /api/lab/anything (and
// any path below it) and /api/lab/get, post, put, patch and delete show the
// request as httpbin's request dict (request-dict.ts); headers, ip,
// user-agent and uuid show one part of it, or a fresh UUID.

import { randomUUID } from "node:crypto";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import type { Scheme } from "./origin.js";
import { dictJson, headersDict, originOf, type DictKey } from "./request-dict.js";

/** JSON as httpbin's jsonify writes it: ending with a line feed. */
export function jsonAnswer(value: unknown, status = 200): Response {
  return { status, headers: { "Content-Type": "application/json" }, body: JSON.stringify(value) + "\n" };
}

/** What anything shows; get shows no body (GET has none worth showing), the others everything but the method, as httpbin. */
export const ANYTHING_KEYS: readonly DictKey[] = ["args", "data", "files", "form", "headers", "json", "method", "origin", "url"];
export const GET_KEYS: readonly DictKey[] = ["args", "headers", "origin", "url"];
export const BODY_KEYS: readonly DictKey[] = ["args", "data", "files", "form", "headers", "json", "origin", "url"];

export function inspectAnswer(request: Request, scheme: Scheme, keys: readonly DictKey[]): Response {
  return { status: 200, headers: { "Content-Type": "application/json" }, body: dictJson(request, scheme, keys) };
}

export function headersAnswer(request: Request): Response {
  return jsonAnswer({ headers: headersDict(request) });
}

export function ipAnswer(request: Request): Response {
  return jsonAnswer({ origin: originOf(request) });
}

export function userAgentAnswer(request: Request): Response {
  return jsonAnswer({ "user-agent": headerValue(request, "user-agent") ?? null });
}

export function uuidAnswer(): Response {
  return jsonAnswer({ uuid: randomUUID() });
}
