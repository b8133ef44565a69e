// The echo's answer for a large body, produced in pieces as the client reads
// it (src/http/connection/send-body.ts asks for the next piece only once the
// socket has taken the last): escaping control bytes multiplies a body by up
// to six in JSON, so rendering it whole would hold several times the body,
// per client, ahead of a client that may never read.
//
// The JSON is byte for byte JSON.stringify of the whole Echo: the body's
// content is the last member, everything before it is stringified whole, and
// the content is escaped slice by slice (JSON.stringify escapes each UTF-16
// code unit on its own, and a slice ends on a character boundary, so the
// slices' escapes are the whole's). The YAML is the dump of the rest, with
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

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
/** What YAML must not carry raw (js-yaml's non-printable set, and the line separators it would read as breaks). */
const YAML_RAW_FORBIDDEN = /[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/g;
const escapeYaml = (c: string) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
/** A placeholder that JSON and YAML leave as it is, for where the content goes. */
const SLOT = "ECHO-CONTENT-SLOT";

/** Where a slice of UTF-8 bytes may end: not inside a character (a continuation byte is 10xxxxxx). */
function characterEnd(body: Buffer, end: number): number {
  if (end >= body.length) return body.length;
  while (end > 0 && (body[end]! & 0xc0) === 0x80) end--;
  return end;
}

export function echoEncoding(body: Buffer): "utf-8" | "base64" {
  return isUtf8(body) ? "utf-8" : "base64";
}

/** The pieces of the text of `shown` (an Echo whose body.content is left out), with `body` as its content. */
export async function* echoPieces(shown: object, body: Buffer, encoding: "utf-8" | "base64", format: Format): AsyncGenerator<string, void, undefined> {
  const withSlot = { ...shown, body: { length: body.length, encoding, content: SLOT } };
  const text = format === "json" ? JSON.stringify(withSlot) : toYaml(withSlot);
  const at = text.lastIndexOf(format === "json" ? `"${SLOT}"` : SLOT);
  yield text.slice(0, at) + '"';
  const after = text.slice(at + SLOT.length + (format === "json" ? 2 : 0));
  if (encoding === "base64") {
    // Whole groups of three bytes encode on their own: the slices' base64 is the whole's.
    const step = ECHO_PIECE_BYTES - (ECHO_PIECE_BYTES % 3);
    for (let i = 0; i < body.length; i += step) yield body.toString("base64", i, Math.min(body.length, i + step));
  } else {
    for (let i = 0; i < body.length; ) {
      const end = characterEnd(body, i + ECHO_PIECE_BYTES);
      const escaped = JSON.stringify(UTF8.decode(body.subarray(i, end))).slice(1, -1);
      yield format === "json" ? escaped : escaped.replace(YAML_RAW_FORBIDDEN, escapeYaml);
      i = end;
    }
  }
  yield '"' + after;
}
