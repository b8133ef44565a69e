// Interned strings for the methods and field names that nearly every request
// carries. Matching them straight from the bytes spares the parser two string
// allocations per field (slice, then lower-case) on the hot path.

import { latin1 } from "./latin1.js";

const COMMON_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "UPDATE"];

const COMMON_FIELDS = [
  "host",
  "accept",
  "accept-encoding",
  "accept-language",
  "authorization",
  "cache-control",
  "connection",
  "content-length",
  "content-type",
  "cookie",
  "expect",
  "if-match",
  "if-none-match",
  "origin",
  "pragma",
  "referer",
  "transfer-encoding",
  "user-agent",
];

function byLength(words: readonly string[]): string[][] {
  const out: string[][] = [];
  for (const w of words) (out[w.length] ??= []).push(w);
  return out;
}

const METHODS_BY_LENGTH = byLength(COMMON_METHODS);
const FIELDS_BY_LENGTH = byLength(COMMON_FIELDS);

/** The method token in buf[start, end), as an interned string when it is a common one. */
export function methodName(buf: Buffer, start: number, end: number): string {
  const candidates = METHODS_BY_LENGTH[end - start];
  if (candidates !== undefined) {
    outer: for (const m of candidates) {
      for (let i = 0; i < m.length; i++) if (buf[start + i] !== m.charCodeAt(i)) continue outer;
      return m;
    }
  }
  return latin1(buf, start, end);
}

/**
 * The field name in buf[start, end), lower-cased (field names are
 * case-insensitive, RFC 9110 §5.1). The bytes are known to be tchar, where
 * `b | 0x20` lower-cases letters and leaves digits and "-" as they are; the
 * only other tchar it changes ("^", "_") cannot match a name in the list.
 */
export function fieldName(buf: Buffer, start: number, end: number): string {
  const candidates = FIELDS_BY_LENGTH[end - start];
  if (candidates !== undefined) {
    outer: for (const f of candidates) {
      for (let i = 0; i < f.length; i++) if ((buf[start + i]! | 0x20) !== f.charCodeAt(i)) continue outer;
      return f;
    }
  }
  return latin1(buf, start, end).toLowerCase();
}
