// Reading request bodies: the media type is checked (415), the bytes decoded
// (400), and only then is the content looked at.

import { headerValue, type Request } from "../http/request.js";
import { fail } from "../http/problem.js";
import { mediaParameter, mediaType } from "../http/media.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function requireType(request: Request, accepted: readonly string[]): void {
  const raw = headerValue(request, "content-type");
  const type = mediaType(raw);
  if (type === undefined || !accepted.includes(type)) {
    fail(415, {
      kind: "unsupported-media-type",
      detail: `${raw === undefined ? "The request has no Content-Type" : `Content-Type ${raw.slice(0, 100)} is not accepted here`}. Send the body as ${accepted.join(" or ")}.`,
      instance: request.target,
      headers: { "Accept-Post": accepted.join(", ") },
    });
  }
  const charset = mediaParameter(raw!, "charset");
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    fail(415, {
      kind: "unsupported-media-type",
      detail: `charset=${charset} is not accepted; send the body as UTF-8.`,
      instance: request.target,
    });
  }
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
