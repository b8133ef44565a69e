// method SP request-target SP HTTP-version (RFC 9112 §3), read from a line
// whose bytes the scanner (line-scan.ts) has already found well-formed:
// what is left is what the tokens mean.

import { hostError } from "./host.js";
import { describe, type LineError } from "./line-scan.js";
import { methodName } from "./interned-names.js";
import { latin1 } from "./latin1.js";

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
 * method, `versionStart` the first byte of "HTTP/1.x" and `question` the
 * target's first "?" (or -1), all found by the scan.
 */
export function readRequestLine(buf: Buffer, s: number, e: number, methodEnd: number, versionStart: number, question: number): RequestLine | LineError {
  const method = methodName(buf, s, methodEnd);
  // RFC 9110 §6.2: a higher minor version of 1.x is answered as 1.1.
  const minor = buf[e - 1] === 0x30 ? 0 : 1;
  const ts = methodEnd + 1;
  const target = latin1(buf, ts, versionStart - 1);
  // RFC 9110 §9.3.6: this origin server opens no tunnels, whatever form the CONNECT target takes.
  if (method === "CONNECT") return { code: "CONNECT_NOT_SUPPORTED", what: `CONNECT ${target.slice(0, 64)} asks for a tunnel`, at: ts };
  // origin-form (RFC 9112 §3.2.1): the common case.
  if (buf[ts] === 0x2f /* "/" */) {
    const q = question === -1 ? -1 : question - ts;
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
  // The authority runs to the first "/" or "?" (the scanner let no "#" through); what follows is a path or a query.
  const m = /^https?:\/\/([^/?]*)(.*)$/i.exec(target);
  if (m === null) return { code: "INVALID_TARGET", what: `"${target.slice(0, 64)}" is neither a path starting with "/" nor an http(s) URI`, at: ts };
  const authority = m[1]!;
  const as = ts + target.length - m[2]!.length - authority.length;
  // RFC 9110 §4.2.4: no userinfo; RFC 9110 §4.2.1: the host is not empty.
  const at = authority.indexOf("@");
  if (at !== -1) return { code: "INVALID_TARGET", what: `The target's authority holds userinfo ("${authority.slice(0, at + 1).slice(0, 40)}"), which an http(s) URI may not carry`, at: as };
  if (authority === "" || authority[0] === ":") return { code: "INVALID_TARGET", what: `"${target.slice(0, 64)}" has no host`, at: as };
  // It stands for Host, so it is read by the one reading of a Host value: host [":" port].
  const ae = as + authority.length;
  const bad = hostError(buf, as, ae);
  if (bad !== -1) return { code: "INVALID_TARGET", what: `Unexpected ${bad < ae ? describe(buf[bad]) : "end"} in the authority (host[:port]) of the target`, at: bad };
  const rest = m[2]!;
  const q = rest.indexOf("?");
  const path = q === -1 ? rest : rest.slice(0, q);
  return { method, target, path: path === "" ? "/" : path, query: q === -1 ? "" : rest.slice(q + 1), minor, absoluteHost: authority };
}

export function isLineError(value: object): value is LineError {
  return "code" in value;
}
