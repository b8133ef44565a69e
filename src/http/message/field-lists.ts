// Comma-separated lists in field values (RFC 9110 §5.6.1), where the optional
// whitespace around elements is SP and HTAB only (OWS, RFC 9110 §5.6.3).
//
// String.prototype.trim() is not that: it also strips NBSP (0xA0, legal
// obs-text in a field value), the Unicode line separators and every other
// Unicode space. With trim(), `Transfer-Encoding: chunked\xA0` reads as
// "chunked" here while a proxy that follows the grammar reads an unknown
// coding: two parties disagreeing about framing is request smuggling. So
// protocol code in src/http trims with these functions, never with trim().

import { isOws } from "../parse/byte-classes.js";

/** `value` without leading and trailing SP and HTAB; nothing else is removed. */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** The elements of a field list, OWS-trimmed, empty ones dropped (RFC 9110 §5.6.1 lets a recipient ignore them). */
export function fieldListElements(value: string): string[] {
  const out: string[] = [];
  for (const element of value.split(",")) {
    const trimmed = trimOws(element);
    if (trimmed !== "") out.push(trimmed);
  }
  return out;
}

