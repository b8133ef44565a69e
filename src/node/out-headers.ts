// Where a response keeps its fields: in the very place node's OutgoingMessage
// keeps them, under node's own symbol (kOutHeaders), as {lower-cased name:
// [name as set, value]}. Libraries reach past a framework's methods to node's
// own: the `cookies` package (under cookie-session and others) calls
// http.OutgoingMessage.prototype.setHeader on an Express response, since
// Express replaces setHeader's meaning for Set-Cookie. node's setHeader,
// getHeader, appendHeader and removeHeader only store and read fields (the
// framing functions are the ones that write, and those never run here), so
// sharing their storage lets both kinds of call see the same fields. The
// symbol is not exported by node: it is found on a probe message once.

import { OutgoingMessage } from "node:http";

export type HeaderValue = string | number | readonly string[];
/**
 * A response's fields: lower-cased name to [the name as set, the value]; no
 * prototype, as node makes it. Ours add the value as startline checked it:
 * node's setHeader makes an entry without it, and its appendHeader replaces
 * a single value (a list it grows in place), so an entry whose value is
 * still that one needs no second check (writeHead).
 */
export type OutHeaders = Record<string, [name: string, value: HeaderValue, checked?: HeaderValue]>;

function findOutHeaders(): symbol {
  const probe = new OutgoingMessage();
  probe.setHeader("x-probe", "1");
  const symbol = Object.getOwnPropertySymbols(probe).find((s) => {
    const held = (probe as unknown as Record<symbol, unknown>)[s] as OutHeaders | null | undefined;
    return s.description === "kOutHeaders" && typeof held === "object" && held !== null && held["x-probe"]?.[1] === "1";
  });
  if (symbol === undefined) throw new Error("startline/node: this Node.js keeps a response's fields where startline cannot find them (kOutHeaders)");
  return symbol;
}

const kOutHeaders = findOutHeaders();

/**
 * A new message has no fields yet: null, as node's OutgoingMessage
 * constructor leaves it, and as node's own setHeader and appendHeader expect
 * (they make the fields when they find null, not undefined). The fields are
 * made only once one is set: a response that sets none (res.end("hi")) is
 * spared a dictionary object of about 200 bytes.
 */
export function noOutHeaders(message: object): void {
  (message as Record<symbol, OutHeaders | null>)[kOutHeaders] = null;
}

/** The fields of `message`, made (empty) on first use, as node's setHeader makes them. */
export function outHeaders(message: object): OutHeaders {
  const holder = message as Record<symbol, OutHeaders | null | undefined>;
  let fields = holder[kOutHeaders];
  // Without a prototype, as node's, but made by setPrototypeOf on a literal, which V8 keeps a fast object (stream-base.ts):
  // Object.create(null) is a dictionary from the start, and every response's fields a table of its own, each name
  // hashed anew at every store and read, and Object.keys of it (writeHead, engineResponse) a walk of the table.
  // The same names set in the same order share one hidden class instead; a field removed makes it a dictionary again.
  if (fields === null || fields === undefined) holder[kOutHeaders] = fields = Object.setPrototypeOf({}, null) as OutHeaders;
  return fields;
}

/** What a message with no fields yet reads as: empty, and frozen, so that no write can land in it. */
const NO_FIELDS: OutHeaders = Object.freeze(Object.create(null) as OutHeaders);

/** The fields of `message`, to read (or to change those it has): none made yet reads as empty, and nothing is made. */
export function heldOutHeaders(message: object): OutHeaders {
  return (message as Record<symbol, OutHeaders | null | undefined>)[kOutHeaders] ?? NO_FIELDS;
}

/** The fields of `message` when any were ever set (even if all were removed since), else null: a response that set none has nothing to go through. */
export function madeOutHeaders(message: object): OutHeaders | null {
  return (message as Record<symbol, OutHeaders | null | undefined>)[kOutHeaders] ?? null;
}
