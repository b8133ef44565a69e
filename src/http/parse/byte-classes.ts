// Byte classes of the HTTP grammar as 256-entry lookup tables.
//
// The parser asks "may this byte appear here?" once per byte of every request
// head, so each answer is one indexed load instead of a chain of comparisons.

function table(allowed: (byte: number) => boolean): Uint8Array {
  const t = new Uint8Array(256);
  for (let b = 0; b < 256; b++) t[b] = allowed(b) ? 1 : 0;
  return t;
}

const isAlpha = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

export const CR = 0x0d;
export const LF = 0x0a;
export const SP = 0x20;
export const HTAB = 0x09;
export const COLON = 0x3a;
export const SEMICOLON = 0x3b;

/** RFC 9110 §5.6.2: tchar, the characters of a token (methods, field names). */
export const TCHAR = table((b) => isAlpha(b) || isDigit(b) || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(b)));

/**
 * RFC 9110 §5.5: field-vchar = VCHAR / obs-text, plus SP and HTAB inside a value.
 * NUL, CR, LF and the other controls (and DEL) are refused: RFC 9110 §5.5 lets a
 * recipient reject them, and accepting any of them is how header injection and
 * request smuggling begin.
 */
export const FIELD_VALUE = table((b) => b === HTAB || (b >= 0x20 && b !== 0x7f));

/**
 * The characters RFC 3986 allows in a request-target (RFC 9112 §3.2):
 * unreserved, sub-delims, gen-delims that have a role in URIs, and "%" for
 * percent-encoding. Anything else (space, controls, `"<>\^`{|}`, non-ASCII)
 * must be percent-encoded by the client.
 */
export const TARGET = table(
  (b) => isAlpha(b) || isDigit(b) || "-._~!$&'()*+,;=:@/?%[]".includes(String.fromCharCode(b)),
);

/** RFC 3986 §3.2.2 reg-name / IP-literal / port characters of a Host value (RFC 9112 §3.2). */
export const HOST = table((b) => isAlpha(b) || isDigit(b) || "-._~!$&'()*+,;=:[]%".includes(String.fromCharCode(b)));

/** Values of a hex digit, or 255 for a byte that is not one (chunk-size, RFC 9112 §7.1). */
export const HEX = (() => {
  const t = new Uint8Array(256).fill(255);
  for (let b = 0x30; b <= 0x39; b++) t[b] = b - 0x30;
  for (let b = 0x41; b <= 0x46; b++) t[b] = b - 0x41 + 10;
  for (let b = 0x61; b <= 0x66; b++) t[b] = b - 0x61 + 10;
  return t;
})();

/** RFC 9112 §7.1.1: chunk-ext-val may be a quoted-string; qdtext plus the escape. */
export const QDTEXT = table((b) => b === HTAB || b === SP || b === 0x21 || (b >= 0x23 && b <= 0x5b) || (b >= 0x5d && b !== 0x7f));
