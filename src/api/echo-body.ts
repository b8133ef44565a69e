// The echo's answer for a large body, produced in pieces as the client reads
// it (src/http/connection/send-body.ts asks for the next piece only once the
// socket has taken the last): escaping control bytes multiplies a body by up
// to six in JSON, so rendering it whole would hold several times the body,
// per client, ahead of a client that may never read.
//
// The JSON is byte for byte JSON.stringify of the whole Echo: the body's
// content is the last member, everything before it is stringified whole, and
// the content is escaped slice by slice, straight from the body's bytes into
// one buffer that every piece reuses (escapeInto). JSON.stringify escapes
// each character on its own, and a slice ends on a character boundary, so
// the slices' escapes are the whole's. Why bytes: rendering each slice as a
// JS string and converting it made about six times the body in garbage per
// client (strings in V8's young generation, which grew to its largest, and a
// Buffer per piece), and 40 clients of a 1 MiB echo took some 30 MiB of RSS
// more for it (docs/reliability.md). The YAML is the dump of the rest, with
// the content as a double-quoted scalar in JSON's escapes, which YAML 1.2
// reads alike (js-yaml refuses DEL, the C1 controls and a few others raw in a
// document, so those are escaped too).

import { isUtf8 } from "node:buffer";
import { toYaml } from "../representation/yaml.js";
import type { Format } from "../representation/negotiate.js";

/** Bodies above this are echoed in pieces; below it the answer is built whole (with a Content-Length). */
export const ECHO_WHOLE_BYTES = 64 * 1024;
/** Body bytes per piece: at most six times as many bytes of JSON (a control byte is \u0001). */
export const ECHO_PIECE_BYTES = 8 * 1024;

/** In an escape table: the byte is written as it is. */
const RAW = 0;
/** In an escape table: the byte is written as \u00xx. */
const U_ESCAPE = 1;
/** In the YAML table: the byte may start a character js-yaml refuses raw (yamlForbidden). */
const MAYBE_FORBIDDEN = 2;

/**
 * How JSON.stringify writes each byte of UTF-8 text in a string: as it is
 * (every character from U+0080 up too), as a short escape (the letter after
 * the backslash: \b \t \n \f \r \" \\), or as \u00xx (the other controls).
 * The YAML table adds DEL, which js-yaml refuses raw in a document, and marks
 * the first bytes of the other characters it refuses. A typed array, read
 * once per byte: the loop below is the echo's whole cost per byte.
 */
function escapeTable(yaml: boolean): Uint8Array {
  const table = new Uint8Array(256);
  for (let b = 0; b < 0x20; b++) table[b] = U_ESCAPE;
  for (const [b, letter] of [[0x08, "b"], [0x09, "t"], [0x0a, "n"], [0x0c, "f"], [0x0d, "r"], [0x22, '"'], [0x5c, "\\"]] as const) table[b] = letter.charCodeAt(0);
  if (yaml) {
    table[0x7f] = U_ESCAPE;
    for (const b of [0xc2, 0xe2, 0xef]) table[b] = MAYBE_FORBIDDEN;
  }
  return table;
}
const JSON_ESCAPES = escapeTable(false);
const YAML_ESCAPES = escapeTable(true);
/** The most bytes one body byte becomes: \u0001 for a control byte (a multi-byte character escaped in YAML is at most as long as its bytes times two). */
const MOST_PER_BYTE = 6;
/** A placeholder that JSON and YAML leave as it is, for where the content goes. */
const SLOT = "ECHO-CONTENT-SLOT";

/** Where a slice of UTF-8 bytes may end: not inside a character (a continuation byte is 10xxxxxx). */
function characterEnd(body: Buffer, end: number): number {
  if (end >= body.length) return body.length;
  while (end > 0 && (body[end]! & 0xc0) === 0x80) end--;
  return end;
}

/** The code point of the YAML-forbidden character of two or three bytes starting at `i`, or -1: U+0080 to U+009F, U+2028, U+2029, U+FEFF, U+FFFE, U+FFFF. */
function yamlForbidden(body: Buffer, i: number, end: number): number {
  const b = body[i]!;
  if (b === 0xc2 && i + 1 < end && body[i + 1]! <= 0x9f) return body[i + 1]!;
  if (i + 2 >= end) return -1;
  const c = (b << 16) | (body[i + 1]! << 8) | body[i + 2]!;
  if (c === 0xe280a8 || c === 0xe280a9) return c === 0xe280a8 ? 0x2028 : 0x2029;
  if (c === 0xefbbbf) return 0xfeff;
  if (c === 0xefbfbe || c === 0xefbfbf) return 0xffff - (0xbf - (c & 0xff));
  return -1;
}

const HEX = new Uint8Array(Buffer.from("0123456789abcdef", "latin1"));

/**
 * Writes body[start, end) (whole characters of valid UTF-8) into `out` as the
 * inside of a JSON string, byte for byte what JSON.stringify writes for its
 * text (which leaves every character from U+0080 up raw, so those bytes are
 * copied as they are); in YAML the forbidden characters are escaped too.
 * Returns the bytes written. No string is made: a piece costs its bytes only.
 */
export function escapeInto(out: Buffer, body: Buffer, start: number, end: number, format: Format): number {
  const table = format === "yaml" ? YAML_ESCAPES : JSON_ESCAPES;
  let o = 0;
  for (let i = start; i < end; i++) {
    const b = body[i]!;
    const kind = table[b]!;
    if (kind === RAW) {
      out[o++] = b;
    } else if (kind === U_ESCAPE) {
      out[o] = 0x5c; // \u00xx
      out[o + 1] = 0x75;
      out[o + 2] = 0x30;
      out[o + 3] = 0x30;
      out[o + 4] = HEX[b >> 4]!;
      out[o + 5] = HEX[b & 0xf]!;
      o += 6;
    } else if (kind === MAYBE_FORBIDDEN) {
      const forbidden = yamlForbidden(body, i, end);
      if (forbidden === -1) {
        out[o++] = b;
        continue;
      }
      out[o++] = 0x5c; // \u and four hex digits
      out[o++] = 0x75;
      for (let shift = 12; shift >= 0; shift -= 4) out[o++] = HEX[(forbidden >> shift) & 0xf]!;
      i += forbidden < 0x100 ? 1 : 2;
    } else {
      out[o] = 0x5c; // a backslash and the letter
      out[o + 1] = kind;
      o += 2;
    }
  }
  return o;
}

export function echoEncoding(body: Buffer): "utf-8" | "base64" {
  return isUtf8(body) ? "utf-8" : "base64";
}

/**
 * The pieces of the text of `shown` (an Echo whose body.content is left out),
 * with `body` as its content; inside `wrap`'s document when given (the lab's
 * answers hold the echo as a member).
 */
export async function* echoPieces(
  shown: object,
  body: Buffer,
  encoding: "utf-8" | "base64",
  format: Format,
  wrap: (echo: object) => object = (echo) => echo,
): AsyncGenerator<string | Uint8Array, void, undefined> {
  const withSlot = wrap({ ...shown, body: { length: body.length, encoding, content: SLOT } });
  const text = format === "json" ? JSON.stringify(withSlot) : toYaml(withSlot);
  const at = text.lastIndexOf(format === "json" ? `"${SLOT}"` : SLOT);
  yield text.slice(0, at) + '"';
  const after = text.slice(at + SLOT.length + (format === "json" ? 2 : 0));
  if (encoding === "base64") {
    // Whole groups of three bytes encode on their own: the slices' base64 is the whole's.
    const step = ECHO_PIECE_BYTES - (ECHO_PIECE_BYTES % 3);
    for (let i = 0; i < body.length; i += step) yield body.toString("base64", i, Math.min(body.length, i + step));
  } else {
    // One buffer for every piece: the next piece is asked for only once the last is taken (stream-body.ts).
    const out = Buffer.allocUnsafe(ECHO_PIECE_BYTES * MOST_PER_BYTE);
    for (let i = 0; i < body.length; ) {
      const end = characterEnd(body, i + ECHO_PIECE_BYTES);
      yield out.subarray(0, escapeInto(out, body, i, end, format));
      i = end;
    }
  }
  yield '"' + after;
}
