// Redirects, to watch what a client does with each: /api/lab/redirect/:n is a
// chain of n 302s ending at the echo; /api/lab/redirect-to sends one redirect
// of the status asked (301, 302 and 303 let a client turn POST into GET; 307
// and 308 keep the method and the body, RFC 9110 §15.4) to a URL on this
// server. Only a path on this server is taken: never an open redirect that
// would lend this origin to a link elsewhere.

import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { byteName } from "./bytes.js";
import { queryOf, refuse, whole } from "./params.js";
import { ECHO } from "./status.js";

export const MAX_REDIRECTS = 20;
export const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;

export function redirectChain(request: Request, n: string): Response {
  const left = whole(request, "n", n, 1, MAX_REDIRECTS);
  const next = left === 1 ? ECHO : `/api/lab/redirect/${left - 1}`;
  return { status: 302, headers: { Location: next, "Cache-Control": "no-store" } };
}

const URL_ALLOWED = "a path on this server: it starts with one /, then visible ASCII without \\ (e.g. /api/echo?x=1)";

/**
 * Why `url` is not a path on this server, or undefined when it is. A client
 * resolves Location against the request's URL (RFC 9110 §10.2.2), so only a
 * path-absolute reference stays here: "//host" and "\\host" (which browsers
 * read as "//host") name another host, a scheme names anywhere, and a browser
 * drops tabs and line breaks from a URL before reading it, so "/\t/host" is
 * "//host": every byte outside visible ASCII is refused with them.
 */
export function offSite(url: string): string | undefined {
  if (url === "") return "url is empty";
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return `url has ${c < 0x21 || c === 0x7f ? byteName(c) : "a character outside ASCII"} at position ${i} (a client would drop or re-encode it, and could end up elsewhere)`;
    if (c === 0x5c) return `url has a backslash at position ${i} (browsers read \\ as /, so it could name another host)`;
  }
  if (url[0] !== "/") return `url ${JSON.stringify(url)} does not start with / (a scheme or a relative path could lead off this server)`;
  if (url[1] === "/") return `url ${JSON.stringify(url)} starts with // (a network-path reference names another host)`;
  return undefined;
}

export function redirectTo(request: Request): Response {
  const q = queryOf(request, ["url", "status_code"]);
  if (q.url === undefined) refuse(request, "url", URL_ALLOWED, "url is missing");
  const why = offSite(q.url);
  if (why !== undefined) refuse(request, "url", URL_ALLOWED, why);
  const allowed = `one of ${REDIRECT_STATUSES.join(", ")}`;
  const status = q.status_code === undefined ? 302 : Number(q.status_code);
  if (!(REDIRECT_STATUSES as readonly number[]).includes(status) || !/^[0-9]{3}$/.test(q.status_code ?? "302")) {
    refuse(request, "status_code", allowed, `status_code ${JSON.stringify(q.status_code)} is not a redirect with a Location to follow`);
  }
  return { status, headers: { Location: q.url, "Cache-Control": "no-store" } };
}
