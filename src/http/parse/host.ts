// The one reading of host [":" port]: a Host field's value (head-framing.ts)
// and the authority of an absolute-form target, which stands for Host
// (RFC 9112 §3.2.2; request-line.ts), are both read by hostError, so that no
// host is taken in one place and refused in the other.

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
    for (i++; i < ve; i++) {
      const b = buf[i]!;
      if (b === 0x5d /* "]" */) break;
      if (host[b] !== 1 || b === 0x5b) return i;
    }
    if (i === ve) return ve;
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
