// Redirects, to watch what a client does with each, as httpbin names them:
// /api/lab/redirect/:n, relative-redirect/:n and absolute-redirect/:n are
// chains of n 302s ending at /api/lab/get (the first with ?absolute=true
// gives absolute URLs, as the third always does); /api/lab/redirect-to sends
// one redirect of the status asked (301, 302 and 303 let a client turn POST
// into GET; 307 and 308 keep the method and the body, RFC 9110 §15.4) to a
// URL on this server's origin (origin.ts). Every Location the lab makes stays
// on this origin: never an open redirect that would lend it to a link
// elsewhere.

import type { Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { formOrQuery } from "./form.js";
import { sameOrigin, type Scheme } from "./origin.js";
import { queryOf, refuse, whole } from "./params.js";

export const MAX_REDIRECTS = 20;
/** Where every chain ends, as httpbin's ends at its /get. */
export const CHAIN_END = "/api/lab/get";

export type ChainKind = "redirect" | "relative-redirect" | "absolute-redirect";

/** This server's URL for `path`, absolute when asked (and when the request named a host to write). */
function urlFor(request: Request, scheme: Scheme, path: string, absolute: boolean): string {
  return absolute && request.host !== "" ? `${scheme}://${request.host}${path}` : path;
}

export function redirectChain(request: Request, scheme: Scheme, kind: ChainKind, n: string): Response {
  const left = whole(request, "n", n, 1, MAX_REDIRECTS);
  let absolute = kind === "absolute-redirect";
  if (kind === "redirect") {
    const { absolute: asked } = queryOf(request, ["absolute"]);
    absolute = asked?.toLowerCase() === "true";
  }
  // redirect/:n?absolute=true goes on as absolute-redirect, as httpbin's does; without it, as relative-redirect.
  const step = kind === "redirect" ? (absolute ? "absolute-redirect" : "relative-redirect") : kind;
  const next = left === 1 ? CHAIN_END : `/api/lab/${step}/${left - 1}`;
  return { status: 302, headers: { Location: urlFor(request, scheme, next, absolute) } };
}

export const URL_ALLOWED =
  "a URL on this server's origin: a path (/api/lab/get), a reference resolved against this request's URL (get), or an absolute http(s) URL with this request's scheme and host (no userinfo); visible ASCII without \\";
export const STATUS_TAKEN = "a whole number from 300 to 399";

export function redirectTo(request: Request, scheme: Scheme): Response {
  // As httpbin: url and status_code from the query, or from a form body.
  const q = formOrQuery(request, ["url", "status_code"]);
  if (q.url === undefined) refuse(request, "url", URL_ALLOWED, "url is missing");
  const there = sameOrigin(request, scheme, q.url);
  if ("why" in there) refuse(request, "url", URL_ALLOWED, there.why);
  // httpbin answers 302 for a status_code outside 3xx without a word; here it is refused, saying so.
  const status = q.status_code === undefined ? 302 : whole(request, "status_code", q.status_code, 300, 399);
  return { status, headers: { Location: q.url } };
}
