// The chunked transfer coding's own lines (RFC 9112 §7.1):
//
//   chunk-size [ chunk-ext ] CRLF      chunk-size = 1*HEXDIG
//
// The data after each line, its CR LF, and the trailer section are walked by
// the parser's state machine; this reads one chunk-size line.

import { FIELD_VALUE, HEX, HTAB, QDTEXT, SEMICOLON, SP, TCHAR } from "./byte-classes.js";
import { describe, type ScanError } from "./line-scan.js";

/** Hex digits in a chunk size before it is certainly larger than any body limit. */
export const MAX_CHUNK_SIZE_DIGITS = 12;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

export interface ChunkSizeLine {
  readonly size: number;
  /** Where the digits end: the extensions, if any, are [digitsEnd, e). */
  readonly digitsEnd: number;
}

/**
 * Reads buf[s, e), a chunk-size line without its CR LF. `room` is how many
 * more body bytes the message may take (of `limit`); a size past it is a 413
 * before a byte of the chunk is read. Extensions are ignored (RFC 9112
 * §7.1.1), but count against a limit of their own: `extensionRoom` bytes are
 * left of the message's `extensionLimit`.
 */
export function readChunkSizeLine(
  buf: Buffer,
  s: number,
  e: number,
  room: number,
  limit: number,
  extensionRoom: number,
  extensionLimit: number,
): ChunkSizeLine | ScanError {
  if (s === e) return { code: "INVALID_CHUNK_SIZE", what: "A chunk-size line is empty", at: s };
  let i = s;
  // Leading zeros add nothing to the size, so they do not count as digits.
  while (i < e && buf[i] === 0x30) i++;
  const significant = i;
  let size = 0;
  while (i < e && HEX[buf[i]!] !== 255) size = size * 16 + HEX[buf[i++]!]!;
  if (i === s) return { code: "INVALID_CHUNK_SIZE", what: `Unexpected ${describe(buf[i])} in a chunk size`, at: i };
  if (i - significant > MAX_CHUNK_SIZE_DIGITS || size > room) {
    return { code: "CONTENT_TOO_LARGE", what: `The chunked body grows past the limit of ${limit} bytes`, at: s };
  }
  if (i < e) {
    // Bare CRs were ruled out before; bad === e is the end of the line, not a byte in it.
    const bad = chunkExtensionError(buf, i, e);
    if (bad !== -1) return { code: "INVALID_CHUNK_EXTENSION", what: `Unexpected ${describe(bad < e ? buf[bad] : undefined)} in a chunk extension`, at: bad };
    if (e - i > extensionRoom) return { code: "CHUNK_EXTENSIONS_TOO_LARGE", what: `Chunk extensions exceed ${extensionLimit} bytes`, at: i };
  }
  return { size, digitsEnd: i };
}

/**
 * chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 * (RFC 9112 §7.1.1). Returns the index of the first byte that breaks it, or -1.
 */
function chunkExtensionError(buf: Buffer, s: number, e: number): number {
  let i = s;
  const skipBws = () => {
    while (i < e && (buf[i] === SP || buf[i] === HTAB)) i++;
  };
  while (i < e) {
    skipBws();
    if (buf[i] !== SEMICOLON) return i;
    i++;
    skipBws();
    const nameStart = i;
    while (i < e && TCHAR[buf[i]!] === 1) i++;
    if (i === nameStart) return i;
    const nameEnd = i;
    skipBws();
    // BWS only ever leads to "=" or ";": whitespace that ends the line is not in the grammar.
    if (i === e && i !== nameEnd) return e;
    if (i < e && buf[i] === EQUALS) {
      i++;
      skipBws();
      if (buf[i] === DQUOTE) {
        i++;
        for (;;) {
          if (i >= e) return i;
          const b = buf[i]!;
          if (b === DQUOTE) break;
          if (b === BACKSLASH) {
            i++;
            if (i >= e || FIELD_VALUE[buf[i]!] !== 1) return i;
          } else if (QDTEXT[b] !== 1) return i;
          i++;
        }
        i++;
      } else {
        const valueStart = i;
        while (i < e && TCHAR[buf[i]!] === 1) i++;
        if (i === valueStart) return i;
      }
    }
  }
  return -1;
}
