// Media types and the Accept field (RFC 9110 §8.3.1, §12.5.1), parsed with
// their parameters and weights. Small and strict enough for negotiation:
// anything unparseable in Accept is skipped, as §2.4 lets a recipient do.
// Whitespace around parts is SP and HTAB only (RFC 9110 §5.6.3), never trim().

import { fieldListElements, trimOws } from "./field-lists.js";
import { problem } from "./problem.js";
import { headerValue, type RequestHead } from "./request.js";
import type { Response } from "./response.js";

export interface MediaRange {
  /** Lower-cased "type/subtype"; may be "*\/*" or "type/*". */
  readonly type: string;
  /** Weight from the q parameter, 0 to 1 (RFC 9110 §12.4.2); 1 when absent. */
  readonly q: number;
  /** Position in the field, for breaking ties in the client's favour. */
  readonly order: number;
}

const RANGE = /^([!#$%&'*+\-.^_`|~0-9a-z]+)\/([!#$%&'*+\-.^_`|~0-9a-z]+)$/;

/** "application/json; charset=utf-8" -> "application/json"; undefined when malformed. */
export function mediaType(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const semi = value.indexOf(";");
  const type = trimOws(semi === -1 ? value : value.slice(0, semi)).toLowerCase();
  return RANGE.test(type) ? type : undefined;
}

/** The value of one parameter of a media type, lower-cased, e.g. charset. */
export function mediaParameter(value: string, name: string): string | undefined {
  for (const part of value.split(";").slice(1)) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    if (trimOws(part.slice(0, eq)).toLowerCase() === name) return trimOws(part.slice(eq + 1)).replace(/^"(.*)"$/, "$1").toLowerCase();
  }
  return undefined;
}

export function parseAccept(value: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  let order = 0;
  for (const element of fieldListElements(value)) {
    const parts = element.split(";");
    const type = trimOws(parts[0]!).toLowerCase();
    const m = RANGE.exec(type);
    if (m === null || (m[1] === "*" && m[2] !== "*")) continue;
    let q = 1;
    for (const p of parts.slice(1)) {
      const [k, v] = p.split("=").map(trimOws);
      if (k?.toLowerCase() === "q" && v !== undefined && /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(v)) q = Number(v);
    }
    ranges.push({ type, q, order: order++ });
  }
  return ranges;
}

/** How specifically a range matches a type: 3 exact, 2 "type/*", 1 "*\/*", 0 not at all. */
export function matchLevel(range: string, type: string): number {
  if (range === type) return 3;
  if (range === "*/*") return 1;
  if (range.endsWith("/*") && type.startsWith(range.slice(0, -1))) return 2;
  return 0;
}

/**
 * The 415 (RFC 9110 §15.5.16) for a body whose Content-Type is not one of
 * `accepted`, or whose charset is not UTF-8; undefined when the type is fine.
 * Judged from the head alone, so it can be sent before the body is read.
 * It lists what to send: Accept-Patch (RFC 5789 §3.1) for a patch (PATCH, and
 * UPDATE, which takes a merge patch here), Accept-Post (W3C LDP §7.1.2) otherwise.
 */
export function refuseMediaType(head: RequestHead, accepted: readonly string[], why?: string): Response | undefined {
  const raw = headerValue(head, "content-type");
  const type = mediaType(raw);
  if (type === undefined || !accepted.includes(type)) {
    return problem(415, {
      kind: "unsupported-media-type",
      detail: `${raw === undefined ? "The request has no Content-Type" : `Content-Type ${raw.slice(0, 100)} is not accepted here`}. Send the body as ${accepted.join(" or ")}.${why === undefined ? "" : ` ${why}`}`,
      instance: head.target,
      headers: { [head.method === "PATCH" || head.method === "UPDATE" ? "Accept-Patch" : "Accept-Post"]: accepted.join(", ") },
    });
  }
  const charset = mediaParameter(raw!, "charset");
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return problem(415, {
      kind: "unsupported-media-type",
      detail: `charset=${charset.slice(0, 40)} is not accepted; send the body as UTF-8.`,
      instance: head.target,
    });
  }
  return undefined;
}
