// What one request may cost the parser: every buffer it keeps has a bound here.

import { MAX_CHUNK_SIZE_DIGITS, MAX_LENGTH_DIGITS } from "./line-scan.js";

export interface ParserLimits {
  /** Longest request line, CRLF excluded (414 when the target is what overflows). */
  readonly maxRequestLineBytes: number;
  /** Largest header section (all field lines with their CRLFs); also bounds the trailer section. */
  readonly maxHeaderBytes: number;
  /** Most field lines in the header section; also bounds the trailer section. */
  readonly maxHeaderCount: number;
  /** Largest body, checked against Content-Length before any body byte is read. */
  readonly maxBodyBytes: number;
  /** Most bytes of chunk extensions in one message (they are ignored, RFC 9112 §7.1.1). */
  readonly maxChunkExtensionBytes: number;
  /** Accept a bare LF as a line ending (RFC 9112 §2.2 permits it); off unless asked for. */
  readonly allowBareLf: boolean;
  /**
   * How maxBodyBytes may be raised, in the words of whoever set it (an app
   * names its own setting: "its MAX_BODY_BYTES setting raises it"), for the
   * 413 that this limit gives. The engine knows no setting's name, so
   * without it the 413 only says that the limit is the server's.
   */
  readonly raiseBodyLimit?: string;
}

export const DEFAULT_LIMITS: ParserLimits = Object.freeze({
  maxRequestLineBytes: 8 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxHeaderCount: 100,
  maxBodyBytes: 1024 * 1024,
  maxChunkExtensionBytes: 4 * 1024,
  allowBareLf: false,
});

/**
 * The largest body limit: the scanner stops reading a Content-Length at
 * MAX_LENGTH_DIGITS significant digits and a chunk size at
 * MAX_CHUNK_SIZE_DIGITS hex digits, and calls what goes on larger than any
 * body this server takes. That is true only for a limit below both, 16^12 - 1
 * bytes (256 TiB).
 */
export const MAX_BODY_LIMIT = Math.min(10 ** MAX_LENGTH_DIGITS, 16 ** MAX_CHUNK_SIZE_DIGITS) - 1;

const COUNTED = ["maxRequestLineBytes", "maxHeaderBytes", "maxHeaderCount", "maxBodyBytes", "maxChunkExtensionBytes"] as const;

/**
 * Limits are counted in whole bytes and fields: a line of exactly the limit
 * fits, one byte more does not. The scanner's rooms (line-scan.ts) draw that
 * edge exactly only for whole numbers, so a fraction, a negative number or
 * NaN is refused up front. Returns limits that cannot change.
 */
export function checkLimits(limits: ParserLimits): ParserLimits {
  for (const name of COUNTED) {
    const value = limits[name];
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`The parser limit ${name} must be a whole number, 0 or more; it is ${value}`);
  }
  if (limits.maxBodyBytes > MAX_BODY_LIMIT) {
    throw new RangeError(`The parser limit maxBodyBytes must be at most ${MAX_BODY_LIMIT} (a chunk size of ${MAX_CHUNK_SIZE_DIGITS} hex digits); it is ${limits.maxBodyBytes}`);
  }
  // Frozen: a parser's limits are its for its whole life (what it remembers of a head was judged under them).
  // A frozen object is taken as it is, so that the server's one copy serves every connection.
  return Object.isFrozen(limits) ? limits : Object.freeze({ ...limits });
}
