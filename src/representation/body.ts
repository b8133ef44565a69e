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
 * The body as JSON of one of the accepted media types, with every string in
 * it well-formed Unicode (422 naming the first one that is not: see unicode.ts).
 */
export function readJson(request: Request, accepted: readonly string[] = ["application/json"]): unknown {
  requireType(request, accepted);
  const text = decode(request);
  if (text.trim() === "") fail(400, { kind: "invalid-json", detail: "The body is empty; send a JSON object.", instance: request.target });
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
