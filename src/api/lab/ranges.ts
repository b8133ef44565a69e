// /api/lab/range/:n: n bytes (a to z, again and again, the same bytes every
// time, as httpbin's) that honour Range requests as RFC 9110 §14 defines
// them: one range answers 206 with Content-Range, several answer 206 as
// multipart/byteranges (§14.6), none satisfiable 416 with `Content-Range:
// bytes */n` (§15.5.17); a suffix range (-k) is the last k bytes, an open
// one (k-) runs to the end. The answer carries Accept-Ranges: bytes and a
// strong ETag, and If-Range (§13.1.5) lets a range through only when it
// names that ETag; a date never does (there is no Last-Modified to compare).
// Range is read on GET only, as §14.2 says: every other method, HEAD
// included, gets the whole (HEAD its head). Several ranges are bounded: at most
// MAX_RANGES, none overlapping another, or the 416 says why (§14.2 lets a
// server reject them, so a request cannot make one body many times over).

import { randomBytes } from "node:crypto";
import { problem } from "../../http/message/problem.js";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { MAX_BYTES } from "./bodies.js";
import { whole } from "./params.js";

export const MAX_RANGES = 16;

/** a..z repeated, MAX_BYTES of it: every range/:n body is a slice of this, made once. */
let letters: Buffer | undefined;
function lettersOf(n: number): Buffer {
  if (letters === undefined) {
    letters = Buffer.allocUnsafe(MAX_BYTES);
    for (let i = 0; i < MAX_BYTES; i++) letters[i] = 0x61 + (i % 26);
  }
  return letters.subarray(0, n);
}

type Span = readonly [first: number, last: number];

/**
 * The ranges of a Range field for a body of `n` bytes: undefined when the
 * field is to be ignored (another unit, or syntax §14.1.1 does not allow),
 * else the satisfiable ones, in the order asked (empty: none is).
 */
function parseRanges(field: string, n: number): Span[] | undefined {
  const m = /^bytes[ \t]*=[ \t]*(.*)$/i.exec(field);
  if (m === null) return undefined;
  const spans: Span[] = [];
  for (const raw of m[1]!.split(",")) {
    const spec = raw.trim();
    if (spec === "") continue; // an empty list element (§5.6.1)
    const r = /^(\d{1,16})?-(\d{1,16})?$/.exec(spec);
    if (r === null || (r[1] === undefined && r[2] === undefined)) return undefined;
    if (r[1] === undefined) {
      const suffix = Number(r[2]);
      if (suffix > 0 && n > 0) spans.push([Math.max(0, n - suffix), n - 1]);
      continue;
    }
    const first = Number(r[1]);
    if (r[2] !== undefined && Number(r[2]) < first) return undefined; // invalid (§14.1.1): the field is ignored
    if (first < n) spans.push([first, r[2] === undefined ? n - 1 : Math.min(Number(r[2]), n - 1)]);
  }
  return spans;
}

const TYPE = "application/octet-stream";

export function rangeAnswer(request: Request, nText: string): Response {
  const n = whole(request, "n", nText, 1, MAX_BYTES);
  const body = lettersOf(n);
  const etag = `"range-${n}"`;
  const fields = { "Accept-Ranges": "bytes", ETag: etag };
  const whole200: Response = { status: 200, headers: { "Content-Type": TYPE, ...fields }, body };
  const field = headerValue(request, "range");
  if (field === undefined || request.method !== "GET") return whole200;
  const ifRange = headerValue(request, "if-range");
  if (ifRange !== undefined && ifRange.trim() !== etag) return whole200; // strong comparison; a date or another tag: the whole (§13.1.5)
  const spans = parseRanges(field, n);
  if (spans === undefined) return whole200;
  const unsatisfiable = (detail: string) =>
    problem(416, { kind: "range-not-satisfiable", detail, instance: request.target, headers: { ...fields, "Content-Range": `bytes */${n}` } });
  if (spans.length === 0) return unsatisfiable(`No range of ${field.slice(0, 200)} starts within the ${n} bytes of this resource (bytes 0 to ${n - 1}).`);
  if (spans.length > MAX_RANGES) return unsatisfiable(`${spans.length} ranges are asked for; this resource sends at most ${MAX_RANGES} in one answer (RFC 9110 §14.2). Ask for fewer, or for one that covers them.`);
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]![0] <= sorted[i - 1]![1]) return unsatisfiable(`The ranges ${sorted[i - 1]![0]}-${sorted[i - 1]![1]} and ${sorted[i]![0]}-${sorted[i]![1]} overlap: ask for each byte once (RFC 9110 §14.2).`);
  }
  if (spans.length === 1) {
    const [first, last] = spans[0]!;
    return { status: 206, headers: { "Content-Type": TYPE, ...fields, "Content-Range": `bytes ${first}-${last}/${n}` }, body: body.subarray(first, last + 1) };
  }
  // multipart/byteranges (§14.6): each part with its Content-Type and Content-Range, in the order asked.
  const boundary = `lab-${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [];
  for (const [first, last] of spans) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Type: ${TYPE}\r\nContent-Range: bytes ${first}-${last}/${n}\r\n\r\n`, "latin1"), body.subarray(first, last + 1), Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`, "latin1"));
  return { status: 206, headers: { "Content-Type": `multipart/byteranges; boundary=${boundary}`, ...fields }, body: Buffer.concat(parts) };
}
