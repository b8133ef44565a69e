// /api/lab/response-headers?Name=value: the query's pairs become header
// fields of the answer, so a client's handling of any field can be tried.
// Each pair is checked here, and refused with a 400 that names the fault,
// before anything is written: a name must be a token (RFC 9110 §5.1); a value
// may hold visible ASCII, spaces and tabs only, so CR, LF or NUL (the bytes of
// header injection) are refused by name; and the fields that frame the
// message or manage the connection are the server's alone. The writer checks
// every field again (response.ts), so even a mistake here could not split
// the response.
//
// The client chooses Content-Type and the body holds its values, so
// `?Content-Type=text/html&x=<script>...</script>` is a page of the client's
// making served from this origin: script run there acts as the page at / and
// passes the wire view's same-origin check. Every answer therefore carries
// `Content-Security-Policy: sandbox`, which gives such a document an origin
// of its own and runs none of its script, and the client cannot replace it.

import { TCHAR } from "../../http/parse/byte-classes.js";
import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { queryPairs, refuse } from "./params.js";
import { byteName } from "./redirects.js";

export const MAX_FIELDS = 50;

/** Fields the server writes itself, and why a client may not choose them. */
export const SERVER_FIELDS: Readonly<Record<string, string>> = {
  "content-length": "it frames the body, and the server counts the bytes it sends",
  "transfer-encoding": "it frames the body, and the server chooses the framing",
  trailer: "it announces trailer fields, which this server never sends",
  connection: "it manages this connection, which is the server's to keep or close",
  "keep-alive": "it manages this connection, which is the server's to keep or close",
  upgrade: "it would offer a protocol switch this server does not make",
  date: "the server sets it on every response, from its clock",
  "x-content-type-options": "the server sets nosniff on every response",
  "content-security-policy": "the server sets sandbox on this answer, so that a page it reflects (Content-Type: text/html) runs no script as this origin",
};

/** On every answer: whatever Content-Type the client chose, the document has an origin of its own and runs no script. */
export const SANDBOX = { "Content-Security-Policy": "sandbox" } as const;

const VALUE_ALLOWED = "visible ASCII, spaces and tabs (no CR, LF, NUL or other control byte)";

function checkName(request: Request, name: string): void {
  if (name === "") refuse(request, "(empty name)", "a field name: a token (RFC 9110 §5.1)", "A query pair has an empty name");
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0xff || TCHAR[c] !== 1) {
      const what = c < 0x21 || c === 0x7f ? byteName(c) : JSON.stringify(name[i]);
      refuse(request, name, "a field name: a token of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110 §5.1)", `The field name ${JSON.stringify(name)} has ${what} at position ${i}`);
    }
  }
  const why = SERVER_FIELDS[name.toLowerCase()];
  if (why !== undefined) refuse(request, name, "any field but Content-Length, Transfer-Encoding, Trailer, Connection, Keep-Alive, Upgrade, Date, X-Content-Type-Options and Content-Security-Policy", `${name} cannot be set here: ${why}`);
}

function checkValue(request: Request, name: string, value: string): void {
  if (/^[ \t]|[ \t]$/.test(value)) {
    refuse(request, name, VALUE_ALLOWED + ", not starting or ending with a space or tab", `The value of ${name} starts or ends with whitespace, which a recipient strips (RFC 9110 §5.5): the field would not say what was asked`);
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c <= 0x7e)) continue;
    const what = c < 0x20 || c === 0x7f ? byteName(c) : `the non-ASCII character U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
    refuse(request, name, VALUE_ALLOWED, `The value of ${name} has ${what} at position ${i}: header injection is refused`);
  }
}

export function responseHeadersAnswer(request: Request): Response {
  const pairs = queryPairs(request);
  if (pairs.length > MAX_FIELDS) refuse(request, "(query)", `at most ${MAX_FIELDS} pairs`, `The query has ${pairs.length} pairs`);
  const fields: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    checkName(request, name);
    checkValue(request, name, value);
    const key = name.toLowerCase();
    if (seen.has(key)) refuse(request, name, "one value per field name", `${name} is given twice (combine the values with a comma, where the field allows a list)`);
    seen.add(key);
    fields[name] = value;
  }
  // The defaults give way to a field of the same name in any case: one field each, the client's.
  const defaults = Object.entries({ "Content-Type": "application/json", "Cache-Control": "no-store" }).filter(([name]) => !seen.has(name.toLowerCase()));
  const body = JSON.stringify(Object.fromEntries(pairs));
  return { status: 200, headers: { ...SANDBOX, ...Object.fromEntries(defaults), ...fields }, body };
}
