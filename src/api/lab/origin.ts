// This server's origin, as a request names it, and whether a URL stays on it.
// The lab sends URLs a client chose (redirect-to's Location, a Location field
// asked of response-headers): each must stay on this server's origin, or the
// lab would be an open redirect, lending this origin to a link that leads
// anywhere. A URL may be given relatively (`/api/lab/get`, `get`), resolved
// against the request's own URL as a client resolves Location (RFC 9110
// §10.2.2), or absolutely on this very origin
// (`HTTP://127.0.0.1:8080/api/lab/html`): the scheme and host are compared
// without regard to case, a default port counts as written, and userinfo is
// refused (`http://127.0.0.1@elsewhere/` names elsewhere to many readers).

import type { Request } from "../../http/message/request.js";
import { byteName } from "./bytes.js";

/** "http" or "https": how this server is reached (the request itself does not say). */
export type Scheme = "http" | "https";

/** The request's own URL, absolute: scheme from the server, host from the request (RFC 9112 §3.3). */
export function requestUrl(request: Request, scheme: Scheme): string {
  return `${scheme}://${request.host}${request.target.startsWith("/") ? request.target : request.path}`;
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Where `url` leads when a client follows it from this request, or why it
 * would leave this server's origin (or could be read two ways). Each byte is
 * checked first: a browser drops tabs and line breaks from a URL before
 * reading it and reads `\` as `/`, so `/\t/host` and `/\host` are `//host`;
 * CR and LF would be header injection; anything outside visible ASCII is
 * re-encoded differently by different clients.
 */
export function sameOrigin(request: Request, scheme: Scheme, url: string, name = "url"): { readonly resolved: string } | { readonly why: string } {
  if (url === "") return { why: `${name} is empty` };
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return { why: `${name} has ${c < 0x21 || c === 0x7f ? byteName(c) : "a character outside ASCII"} at position ${i} (a client would drop or re-encode it, and could end up elsewhere)` };
    if (c === 0x5c) return { why: `${name} has a backslash at position ${i} (browsers read \\ as /, so it could name another host)` };
  }
  const scheme_ = SCHEME.exec(url)?.[0];
  // "http:elsewhere" is a path to a browser (same scheme as the base) and a host to others: only "scheme://" is taken.
  if (scheme_ !== undefined && !url.startsWith("//", scheme_.length)) return { why: `${name} ${JSON.stringify(url)} has a scheme but no // after it (clients read such a URL in different ways)` };
  const authority = url.startsWith("//") ? url.slice(2) : scheme_ !== undefined ? url.slice(scheme_.length + 2) : undefined;
  // An HTTP/1.0 request may name no host: then only a reference without one is known to stay here.
  if (authority !== undefined && request.host === "") return { why: `${name} ${JSON.stringify(url)} names a host, and this request sent no Host to compare it with: give a path instead` };
  let here: URL;
  let there: URL;
  try {
    here = new URL(requestUrl(request.host === "" ? { ...request, host: "host.invalid" } : request, scheme));
    there = new URL(url, here);
  } catch {
    return { why: `${name} ${JSON.stringify(url)} is not a URL` };
  }
  if (authority !== undefined && /^[^/?#]*@/.test(authority)) return { why: `${name} ${JSON.stringify(url)} has userinfo (user@host), which names a host other than the one it seems to` };
  if (there.origin !== here.origin) {
    return { why: `${name} ${JSON.stringify(url)} leads to ${there.origin}, not this server's origin ${here.origin} (scheme and host compared without case, default ports as written): the lab never redirects elsewhere` };
  }
  return { resolved: there.href };
}
