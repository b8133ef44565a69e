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
// Some fields act on the whole origin, not on this one answer: Refresh
// navigates anywhere (Chromium follows it, sandbox or not: an open
// redirect), Strict-Transport-Security, Clear-Site-Data, Alt-Svc, NEL,
// Report-To and Accept-CH set what a browser does with every later request
// to this origin, Service-Worker-Allowed widens a worker's scope, Link can
// make a browser fetch or apply another resource, and a Set-Cookie for the
// whole site rides on every request to the page and the API (a few large ones
// push each past the header limit: a 431 from every route). These are
// refused with why; a Set-Cookie is taken only for a Path under /api/lab/,
// without Domain, and a Location only on this server's origin (origin.ts).
// The CORS fields are the CORS policy's (cors.ts), never the client's.
//
// The client chooses Content-Type and the body holds its values, so
// `?Content-Type=text/html&x=<script>...</script>` is a page of the client's
// making served from this origin: script run there acts as the page at / and
// passes the wire view's same-origin check. The route therefore declares a
// sandboxed answer (policies/sandbox.ts): every answer carries
// `Content-Security-Policy: sandbox`, which gives such a document an origin
// of its own and runs none of its script, and the client cannot replace it.

import { TCHAR } from "../../http/parse/byte-classes.js";
import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { sameOrigin, type Scheme } from "./origin.js";
import { queryPairs, refuse } from "./params.js";
import { byteName } from "./bytes.js";

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

/** Fields that act on the whole origin, not on this answer, and what each would do. */
export const ORIGIN_FIELDS: Readonly<Record<string, string>> = {
  refresh: "a browser follows it to any URL, sandboxed or not, so the lab would be an open redirect",
  "strict-transport-security": "it sets the transport of every later request to this host, for as long as it says",
  "clear-site-data": "it clears the cookies, storage and caches of the whole origin, the page's token included",
  "alt-svc": "it sends every later request to this origin to another service",
  nel: "it sets a network error logging policy for the whole origin",
  "report-to": "it sets reporting endpoints for the whole origin",
  "accept-ch": "it sets the client hints a browser sends on every later request to this origin",
  "critical-ch": "it sets the client hints a browser sends on every later request to this origin",
  "service-worker-allowed": "it widens the scope a service worker may control on this origin",
  link: "it can make a browser fetch or apply another resource (rel=preload, rel=stylesheet), from anywhere",
};

/** The largest Set-Cookie taken: a few large cookies would push every later lab request past the header limit. */
export const MAX_COOKIE_CHARS = 1024;
export const COOKIE_PATH = "/api/lab/";

/** Why this Set-Cookie value would reach past the lab, or undefined when it stays there. */
export function cookieReach(value: string): string | undefined {
  if (value.length > MAX_COOKIE_CHARS) return `it is ${value.length} characters long, over ${MAX_COOKIE_CHARS}: a few such cookies would push every later lab request past the header limit`;
  let path: string | undefined;
  for (const attribute of value.split(";").slice(1)) {
    const eq = attribute.indexOf("=");
    const name = (eq === -1 ? attribute : attribute.slice(0, eq)).trim().toLowerCase();
    if (name === "domain") return "it has a Domain attribute, which would send it to other hosts too (and to every port: cookies ignore ports)";
    if (name === "path") path = eq === -1 ? "" : attribute.slice(eq + 1).trim();
  }
  if (path === undefined) return `it has no Path attribute: give Path=${COOKIE_PATH} (or a path below it), so it rides only on requests to the lab`;
  if (!path.startsWith(COOKIE_PATH)) return `its Path ${JSON.stringify(path)} is not under ${COOKIE_PATH}: it would ride on requests to the page and the API`;
  return undefined;
}


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
  const key = name.toLowerCase();
  const why = SERVER_FIELDS[key] ?? ORIGIN_FIELDS[key] ?? (key.startsWith("access-control-") ? "the CORS fields are the server's, which answers CORS for the lab without credentials" : undefined);
  if (why !== undefined) refuse(request, name, NAMES_ALLOWED, `${name} cannot be set here: ${why}`);
}

const NAMES_ALLOWED = `any field but those that frame the message (${Object.keys(SERVER_FIELDS).join(", ")}), act on the whole origin (${Object.keys(ORIGIN_FIELDS).join(", ")}) or answer CORS (access-control-*)`;

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

/** Set-Cookie and Location are taken only when they stay on the lab and on this origin. */
function checkReach(request: Request, scheme: Scheme, name: string, value: string): void {
  const key = name.toLowerCase();
  if (key === "set-cookie") {
    const why = cookieReach(value);
    if (why !== undefined) refuse(request, name, `a cookie under Path=${COOKIE_PATH} without Domain, at most ${MAX_COOKIE_CHARS} characters`, `Set-Cookie cannot be set here: ${why}`);
  } else if (key === "location") {
    const there = sameOrigin(request, scheme, value, "Location");
    if ("why" in there) refuse(request, name, "a URL on this server's origin", `Location cannot be set here: ${there.why}`);
  }
}

export function responseHeadersAnswer(request: Request, scheme: Scheme): Response {
  const pairs = queryPairs(request);
  if (pairs.length > MAX_FIELDS) refuse(request, "(query)", `at most ${MAX_FIELDS} pairs`, `The query has ${pairs.length} pairs`);
  const fields: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of pairs) {
    checkName(request, name);
    checkValue(request, name, value);
    checkReach(request, scheme, name, value);
    const key = name.toLowerCase();
    if (seen.has(key)) refuse(request, name, "one value per field name", `${name} is given twice (combine the values with a comma, where the field allows a list)`);
    seen.add(key);
    fields[name] = value;
  }
  // The defaults give way to a field of the same name in any case: one field each, the client's.
  const defaults = Object.entries({ "Content-Type": "application/json", "Cache-Control": "no-store" }).filter(([name]) => !seen.has(name.toLowerCase()));
  const body = JSON.stringify(Object.fromEntries(pairs));
  return { status: 200, headers: { ...Object.fromEntries(defaults), ...fields }, body };
}
