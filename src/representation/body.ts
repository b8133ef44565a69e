// Reading request bodies: the media type is checked (415), the bytes decoded
// (400), and only then is the content looked at.

import type { Request } from "../http/message/request.js";
import { fail, HttpError } from "../http/message/problem.js";
import { refuseMediaType } from "../http/message/media.js";
import { illFormedPlace } from "./unicode.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The same check the router makes from the head, for a request that reached its handler without a body. */
function requireType(request: Request, accepted: readonly string[]): void {
  const refusal = refuseMediaType(request, accepted);
  if (refusal !== undefined) throw new HttpError(refusal);
}

function decode(request: Request): string {
  try {
    return utf8.decode(request.body);
  } catch {
    fail(400, { kind: "invalid-utf8", detail: "The body is not valid UTF-8.", instance: request.target });
  }
}

/**
 * The most JSON values a body may hold. Every JSON body this API takes is a
 * resource's fields or a merge patch of them, a few dozen values at most (a
 * post: title, body, author, tags and 50 tags). A body of more is refused
 * before it is parsed: 1 MiB of `{"k0":0,"k1":0,...}` (90,000 members) cost
 * 65 ms to parse, and as a merge patch 440 ms in all, on the one thread.
 */
export const MAX_JSON_VALUES = 1000;

const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;

/**
 * Whether JSON text holds more than `limit` values, judged by its commas and
 * opening brackets outside strings (a value is its container's first, or
 * follows a comma). Read from the bytes: no byte of a multi-byte UTF-8
 * character is ASCII, so none is taken for a quote or a comma.
 */
function holdsMoreValues(bytes: Uint8Array, limit: number): boolean {
  let count = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if ((b === COMMA || b === OPEN_BRACKET || b === OPEN_BRACE) && ++count > limit) return true;
  }
  return false;
}

/**
 * The body as JSON of one of the accepted media types, with every string in
 * it well-formed Unicode (422 naming the first one that is not: see unicode.ts).
 */
export function readJson(request: Request, accepted: readonly string[] = ["application/json"]): unknown {
  requireType(request, accepted);
  const text = decode(request);
  if (text.trim() === "") fail(400, { kind: "invalid-json", detail: "The body is empty; send a JSON object.", instance: request.target });
  if (holdsMoreValues(request.body, MAX_JSON_VALUES)) {
    const detail = `The body holds more than ${MAX_JSON_VALUES} JSON values (counted by its commas and opening brackets outside strings); no resource here has more than a few dozen. Send only the resource's fields.`;
    fail(422, { kind: "invalid-fields", title: "Invalid fields", detail, instance: request.target, extensions: { errors: [detail] } });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    fail(400, { kind: "invalid-json", detail: `The body is not valid JSON: ${(error as Error).message}.`, instance: request.target });
  }
  const place = illFormedPlace(text, value);
  if (place !== undefined) {
    const where = place.path === "" ? "The body" : `"${place.path.slice(0, 100)}"`;
    const detail =
      place.what === "name"
        ? `The member name at ${where} holds a lone surrogate (a \\uD800-\\uDFFF escape that is not half of a pair), which is not Unicode text. Send well-formed text.`
        : `${where} holds a lone surrogate (a \\uD800-\\uDFFF escape that is not half of a pair), which is not Unicode text; it could not be stored as sent. Send well-formed text.`;
    fail(422, { kind: "invalid-fields", title: "Invalid fields", detail, instance: request.target, extensions: { errors: [detail] } });
  }
  return value;
}

/** The body as UTF-8 text/plain. */
export function readText(request: Request): string {
  requireType(request, ["text/plain"]);
  return decode(request);
}
