// The one reading of host [":" port]: a Host field's value (head-framing.ts)
// and the authority of an absolute-form target, which stands for Host
// (RFC 9112 §3.2.2; request-line.ts), are both read by hostError, so that no
// host is taken in one place and refused in the other.

import { isIPv6 } from "node:net";
import { HOST } from "./byte-classes.js";

/** The bytes of a reg-name or IPv4 address: HOST without the colon and the brackets. */
const REG_NAME = HOST.map((ok, b) => (ok === 1 && b !== 0x3a && b !== 0x5b && b !== 0x5d ? 1 : 0));

/**
 * Host = uri-host [ ":" port ] (RFC 9110 §7.2), where uri-host is an
 * IP-literal in brackets or a reg-name / IPv4 address, and port = *DIGIT
 * (RFC 3986 §3.2.2, §3.2.3). Returns the index of the first byte that breaks
 * it (ve when the value ends too soon), or -1.
 */
export function hostError(buf: Buffer, vs: number, ve: number): number {
  // The tables as locals: a module binding is checked at every use.
  const host = HOST;
  const regName = REG_NAME;
  let i = vs;
  if (i < ve && buf[i] === 0x5b /* "[" */) {
    const open = i;
    for (i++; i < ve; i++) {
      const b = buf[i]!;
      if (b === 0x5d /* "]" */) break;
      if (host[b] !== 1 || b === 0x5b) return i;
    }
    if (i === ve) return ve;
    const bad = ipLiteralError(buf, open + 1, i);
    if (bad !== -1) return bad;
    i++;
  } else {
    while (i < ve && regName[buf[i]!] === 1) i++;
  }
  if (i < ve && buf[i] === 0x3a /* ":" */) {
    for (i++; i < ve; i++) {
      const b = buf[i]!;
      if (b < 0x30 || b > 0x39) break;
    }
  }
  return i === ve ? -1 : i;
}

const isHexDigit = (b: number): boolean => (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x66);

/**
 * What lies between an IP-literal's brackets, buf[s, e): IPv6address /
 * IPvFuture (RFC 3986 §3.2.2). IPvFuture = "v" 1*HEXDIG "." 1*( unreserved /
 * sub-delims / ":" ), read here; an IPv6 address (hex digits, colons, and the
 * dots of a trailing IPv4 address, no zone) is judged by node's own isIPv6,
 * since its grammar (eight groups, one "::") is long to write out again. Returns
 * the first byte that breaks it (s when the address as a whole is no IPv6
 * address; e when it ends too soon), or -1.
 */
function ipLiteralError(buf: Buffer, s: number, e: number): number {
  if (s === e) return e;
  if ((buf[s]! | 0x20) === 0x76 /* "v" */) {
    let i = s + 1;
    while (i < e && isHexDigit(buf[i]!)) i++;
    if (i === s + 1 || i === e || buf[i] !== 0x2e /* "." */) return i;
    if (i + 1 === e) return e;
    // The caller took HOST's bytes only: unreserved, sub-delims, ":" and, for a reg-name's pct-encoding, "%", which this is not.
    for (i++; i < e; i++) if (buf[i] === 0x25 /* "%" */) return i;
    return -1;
  }
  for (let i = s; i < e; i++) {
    const b = buf[i]!;
    if (!isHexDigit(b) && b !== 0x3a /* ":" */ && b !== 0x2e /* "." */) return i;
  }
  return isIPv6(buf.toString("latin1", s, e)) ? -1 : s;
}
