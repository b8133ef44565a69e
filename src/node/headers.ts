// A request's header fields as node:http presents them (IncomingMessage's
// `headers`): names lower-cased, and a field sent on several lines joined
// the way node joins it, so that code written against node:http reads the
// same values here.
//
// - Set-Cookie stays a list (RFC 9110 §5.3: its values cannot be joined).
// - Cookie lines join with "; " (RFC 6265 §5.4: one Cookie field is what a
//   user agent sends; node joins extra lines into it the same way).
// - The fields node takes once, keeping the first and dropping the rest:
//   those whose value is a single item, where a second line would be
//   meaningless (a second Host, Content-Length or Content-Type among them).
// - Every other field joins with ", " (RFC 9110 §5.3: a list field sent on
//   several lines means the same as one line with the values comma-joined).

/** Fields node:http keeps only the first line of. */
const FIRST_ONLY = new Set([
  "age",
  "authorization",
  "content-length",
  "content-type",
  "etag",
  "expires",
  "from",
  "host",
  "if-modified-since",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "referer",
  "retry-after",
  "server",
  "user-agent",
]);

export type NodeHeaders = Record<string, string | string[] | undefined>;

/** Adds one field line (name lower-cased) to `into`, joined as node joins it. */
export function addHeader(into: NodeHeaders, name: string, value: string): void {
  // A name "__proto__" would set the object's prototype through a plain assignment.
  if (name === "__proto__") {
    Object.defineProperty(into, name, { value, enumerable: true, writable: true, configurable: true });
    return;
  }
  const before = into[name];
  if (before === undefined) {
    into[name] = name === "set-cookie" ? [value] : value;
  } else if (name === "set-cookie") {
    (before as string[]).push(value);
  } else if (name === "cookie") {
    into[name] = `${before as string}; ${value}`;
  } else if (!FIRST_ONLY.has(name)) {
    into[name] = `${before as string}, ${value}`;
  }
}

/** node:http's `headers` from the parser's fields (lower-cased name, value, ...). */
export function joinHeaders(fields: readonly string[]): NodeHeaders {
  const headers: NodeHeaders = {};
  for (let i = 0; i < fields.length; i += 2) addHeader(headers, fields[i]!, fields[i + 1]!);
  return headers;
}

/**
 * node:http's `headersDistinct` from the parser's fields (lower-cased name,
 * value, ...): every value of a name in a list, none joined or dropped.
 * Without a prototype, as node's, so that no name meets Object's members
 * ("constructor", "__proto__"); made so with setPrototypeOf on a literal, not
 * Object.create(null), which V8 makes a dictionary (about 120 bytes more,
 * for every request), while an object made this way stays fast.
 */
export function distinctHeaders(fields: readonly string[]): Record<string, string[]> {
  const out = Object.setPrototypeOf({}, null) as Record<string, string[]>;
  for (let i = 0; i < fields.length; i += 2) {
    // A name's first value as a list of one: an empty list grown by push() would hold room for 17.
    const list = out[fields[i]!];
    if (list === undefined) out[fields[i]!] = [fields[i + 1]!];
    else list.push(fields[i + 1]!);
  }
  return out;
}

/** node:http's `rawHeaders`: name as sent, value, name, value... */
export function rawHeaders(fields: readonly string[], names: readonly string[] | undefined): string[] {
  const raw = new Array<string>(fields.length);
  for (let i = 0; i < fields.length; i += 2) {
    raw[i] = names === undefined ? fields[i]! : names[i / 2]!;
    raw[i + 1] = fields[i + 1]!;
  }
  return raw;
}
