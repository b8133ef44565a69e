// method SP request-target SP HTTP-version (RFC 9112 §3), read from a line
// whose bytes the line scan (line-scan.ts) has already found well-formed:
// what is left is what the tokens mean.

import { SP } from "./byte-classes.js";
import type { ScanError } from "./line-scan.js";
import { methodName } from "./interned-names.js";

export interface RequestLine {
  readonly method: string;
  readonly target: string;
  readonly path: string;
  readonly query: string;
  readonly minor: 0 | 1;
  /** The authority of an absolute-form target, which stands in for Host (RFC 9112 §3.2.2); null otherwise. */
  readonly absoluteHost: string | null;
}

/** Before a request line has been read: what an error before it reports. */
export const NO_REQUEST_LINE: RequestLine = Object.freeze({ method: "", target: "", path: "", query: "", minor: 1, absoluteHost: null });

/**
 * buf[s, e) is the line without its CR LF; `methodEnd` is the space after the
 * method and `versionStart` the first byte of "HTTP/1.x", both found by the scan.
 */
export function readRequestLine(buf: Buffer, s: number, e: number, methodEnd: number, versionStart: number): RequestLine | ScanError {
  const method = methodName(buf, s, methodEnd);
  // RFC 9112 §2.3: a higher minor version of 1.x is answered as 1.1.
  const minor = buf[e - 1] === 0x30 ? 0 : 1;
  const ts = methodEnd + 1;
  const target = buf.toString("latin1", ts, versionStart - 1);
  // RFC 9110 §9.3.6: this origin server opens no tunnels, whatever form the CONNECT target takes.
  if (method === "CONNECT") return { code: "CONNECT_NOT_SUPPORTED", what: `CONNECT ${target.slice(0, 64)} asks for a tunnel`, at: ts };
  // origin-form (RFC 9112 §3.2.1): the common case.
  if (buf[ts] === 0x2f /* "/" */) {
    const q = target.indexOf("?");
    return q === -1
      ? { method, target, path: target, query: "", minor, absoluteHost: null }
      : { method, target, path: target.slice(0, q), query: target.slice(q + 1), minor, absoluteHost: null };
  }
  // asterisk-form (RFC 9112 §3.2.4).
  if (target === "*") {
    if (method !== "OPTIONS") return { code: "INVALID_TARGET", what: "The asterisk-form target `*` is only for OPTIONS", at: ts };
    return { method, target, path: "*", query: "", minor, absoluteHost: null };
  }
  // absolute-form (RFC 9112 §3.2.2): the server uses its authority, not the Host field.
  // RFC 9110 §4.2.1, §4.2.4: the authority is host [":" port], no userinfo, and the
  // host is not empty; what follows it is a path or a query.
  const m = /^https?:\/\/([^/?#@:]+(?::[0-9]*)?|\[[^/?#@\]]*\](?::[0-9]*)?)((?:[/?][^#]*)?)$/i.exec(target);
  if (m === null) return { code: "INVALID_TARGET", what: `"${target.slice(0, 64)}" is neither a path starting with "/" nor an http(s) URI`, at: ts };
  const rest = m[2]!;
  const q = rest.indexOf("?");
  const path = q === -1 ? rest : rest.slice(0, q);
  return { method, target, path: path === "" ? "/" : path, query: q === -1 ? "" : rest.slice(q + 1), minor, absoluteHost: m[1]! };
}

/**
 * Which part of an over-long request line overflowed, judged from buf[s, e):
 * the first limit + 1 bytes of the line, however many have arrived. A long
 * target is a 414 (RFC 9110 §15.5.15); anything else a 400.
 */
export function requestLineTooLong(buf: Buffer, s: number, e: number, limit: number): ScanError {
  const sp1 = buf.indexOf(SP, s);
  const sp2 = sp1 === -1 || sp1 >= e ? -1 : buf.indexOf(SP, sp1 + 1);
  // The target is to blame only if it has begun within the limit: a method and its space that fill the line leave none of it read.
  if (sp1 !== -1 && sp1 + 1 < e && (sp2 === -1 || sp2 >= e || sp2 - sp1 > limit / 2)) {
    return { code: "URI_TOO_LONG", what: `The request target is longer than this server's limit (request line: ${limit} bytes)`, at: sp1 + 1 };
  }
  return { code: "REQUEST_LINE_TOO_LONG", what: `The request line is longer than ${limit} bytes`, at: s };
}

export function isScanError(value: object): value is ScanError {
  return "code" in value;
}
