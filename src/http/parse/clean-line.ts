// The common case in one pass: a whole request line or field line that
// breaks no rule, read straight from the buffer, one tight loop per part.
//
// Why a second reader: the line scan (line-scan.ts) is resumable, and judges
// a line byte by byte as it arrives, so that a verdict never depends on how
// the stream was cut. But nearly every line a server sees arrives whole and
// breaks nothing, and for those lines the resumable machinery (a search for
// the LF, a phase switch per run of bytes, a context refilled per line) was
// most of what a request cost to parse.
//
// These functions accept a subset of what the full path accepts, within the
// same limits (whole numbers, which limits.ts requires), and answer -1 ("not here") for anything else: a line cut by
// the end of the buffer, a byte out of place, a limit reached, an unusual
// Content-Length. The parser then reads that line the full way, so every
// refusal is still found, worded and placed by one code path, and a line
// taken here gives the very values the full path would give.

import { COLON, CR, FIELD_VALUE, HTAB, LF, SP, TARGET, TCHAR } from "./byte-classes.js";
import type { FieldBounds } from "./line-scan.js";
import { isHttp1At, MAX_LENGTH_DIGITS } from "./line-scan.js";

/** Where the parts of a clean request line lie. */
export interface RequestLineBounds {
  /** The space after the method. */
  methodEnd: number;
  /** The first byte of "HTTP/1.x". */
  versionStart: number;
}

/**
 * A whole request line at buf[s] (RFC 9112 §3): method SP request-target SP
 * "HTTP/1." DIGIT CR LF, with at most `max` bytes before the CR. Fills `into`
 * and returns the index of its LF, or -1.
 */
export function cleanRequestLine(buf: Buffer, s: number, max: number, into: RequestLineBounds): number {
  // Every byte before the CR lies in [s, stop): past it the line is too long.
  const stop = Math.min(buf.length, s + max);
  // The tables as locals: an imported binding is checked (initialized? a Uint8Array?) at every byte.
  const tchar = TCHAR;
  const targetChar = TARGET;
  let i = s;
  // method = token (RFC 9110 §9.1), then one SP (RFC 9112 §3).
  while (i < stop && tchar[buf[i]!] === 1) i++;
  if (i === s || i >= stop || buf[i] !== SP) return -1;
  const methodEnd = i++;
  // request-target: the bytes RFC 3986 allows (RFC 9112 §3.2), then one SP.
  const target = i;
  while (i < stop && targetChar[buf[i]!] === 1) i++;
  if (i === target || i >= stop || buf[i] !== SP) return -1;
  const versionStart = ++i;
  // HTTP-version (RFC 9112 §2.3), then CR LF (§2.2).
  const cr = versionStart + 8;
  if (cr > stop || cr + 1 >= buf.length || !isHttp1At(buf, versionStart) || buf[cr] !== CR || buf[cr + 1] !== LF) return -1;
  into.methodEnd = methodEnd;
  into.versionStart = versionStart;
  return cr + 1;
}

/**
 * A whole field line at buf[s] (RFC 9112 §5): field-name ":" OWS field-value
 * OWS CR LF, at most `room` bytes with its CR LF, the value made of
 * field-vchar, SP and HTAB only (RFC 9110 §5.5). Fills `into` with the name's
 * end and the value without its OWS, and returns the index of its LF, or -1.
 */
export function cleanFieldLine(buf: Buffer, s: number, room: number, into: FieldBounds): number {
  // The whole line, CR LF included, lies in [s, stop).
  const stop = Math.min(buf.length, s + room);
  const tchar = TCHAR;
  const valueChar = FIELD_VALUE;
  let i = s;
  // field-name = token (RFC 9110 §5.1), then the colon with no whitespace before it (RFC 9112 §5.1).
  while (i < stop && tchar[buf[i]!] === 1) i++;
  if (i === s || i >= stop || buf[i] !== COLON) return -1;
  const nameEnd = i++;
  while (i < stop && (buf[i] === SP || buf[i] === HTAB)) i++;
  const vs = i;
  while (i < stop && valueChar[buf[i]!] === 1) i++;
  if (i + 1 >= stop || buf[i] !== CR || buf[i + 1] !== LF) return -1;
  let ve = i;
  while (ve > vs && (buf[ve - 1] === SP || buf[ve - 1] === HTAB)) ve--;
  into.nameEnd = nameEnd;
  into.vs = vs;
  into.ve = ve;
  return i + 1;
}

/**
 * A Content-Length value, buf[vs, ve) without its OWS, in its plain form:
 * 1*DIGIT (RFC 9110 §8.6) with at most MAX_LENGTH_DIGITS significant digits.
 * Anything else (a list, a sign, too many digits) is the full path's to refuse.
 */
export function isPlainLength(buf: Buffer, vs: number, ve: number): boolean {
  if (vs === ve) return false;
  let significant = 0;
  for (let i = vs; i < ve; i++) {
    const b = buf[i]!;
    if (b < 0x30 || b > 0x39) return false;
    if (b !== 0x30 || significant > 0) significant++;
  }
  return significant <= MAX_LENGTH_DIGITS;
}
