// Reading request bodies: the media type is checked (415), the bytes decoded
// (400), and only then is the content looked at.

import type { Request } from "../http/request.js";
import { fail, HttpError } from "../http/problem.js";
import { refuseMediaType } from "../http/media.js";

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

/** The body as JSON of one of the accepted media types. */
export function readJson(request: Request, accepted: readonly string[] = ["application/json"]): unknown {
  requireType(request, accepted);
  const text = decode(request);
  if (text.trim() === "") fail(400, { kind: "invalid-json", detail: "The body is empty; send a JSON object.", instance: request.target });
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(400, { kind: "invalid-json", detail: `The body is not valid JSON: ${(error as Error).message}.`, instance: request.target });
  }
}

/** The body as UTF-8 text/plain. */
export function readText(request: Request): string {
  requireType(request, ["text/plain"]);
  return decode(request);
}
