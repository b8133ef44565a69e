// Caching, to watch a cache or a client revalidate: /api/lab/cache answers
// 304 to a conditional GET it can validate (If-None-Match against its ETag;
// else If-Modified-Since against its Last-Modified, RFC 9110 §13.1.3);
// /api/lab/cache/:seconds is fresh for that long (Cache-Control: public,
// max-age); /api/lab/etag/:tag carries the tag asked for and honours
// If-None-Match and If-Match with it (RFC 9110 §13.1.1, §13.1.2). The 200 and
// the 304 carry the same cache fields, built by conditional.ts.

import { cacheFields, ifMatch, noneMatch, notModified, strongEtag, type Validated } from "../../http/message/conditional.js";
import { formatHttpDate } from "../../http/message/date.js";
import { problem } from "../../http/message/problem.js";
import { headerValue, type Request } from "../../http/message/request.js";
import type { Response } from "../../http/message/response.js";
import { echoJson } from "../echo.js";
import { refuse, whole } from "./params.js";

export const MAX_AGE_SECONDS = 31_536_000;

/** When this server started, to the second (an HTTP-date has no finer unit): the cache resource's Last-Modified. */
const STARTED = new Date(Math.floor(Date.now() / 1000) * 1000);
const CACHE_BODY = JSON.stringify({ resource: "/api/lab/cache", lastModified: STARTED.toISOString(), note: "The same bytes until the server restarts: revalidate with If-None-Match or If-Modified-Since to get a 304." });
const CACHE: Validated = { type: "application/json", etag: strongEtag(CACHE_BODY) };
const LAST_MODIFIED = formatHttpDate(STARTED);

/** RFC 9110 §5.6.7: an IMF-fixdate (the obsolete forms too, as Date.parse reads them); undefined when it is not a date. */
function parseHttpDate(text: string): number | undefined {
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : t;
}

export function cacheAnswer(request: Request): Response {
  const fields = { ...cacheFields(CACHE), "Last-Modified": LAST_MODIFIED };
  const read = request.method === "GET" || request.method === "HEAD";
  const inm = headerValue(request, "if-none-match");
  if (read && inm !== undefined) {
    if (noneMatch(inm, CACHE.etag)) return { status: 304, headers: fields };
  } else if (read) {
    // Only without If-None-Match (§13.1.3), and only a date it can read: anything else is ignored, as §13.1.3 says.
    const ims = headerValue(request, "if-modified-since");
    const since = ims === undefined ? undefined : parseHttpDate(ims);
    if (since !== undefined && STARTED.getTime() <= since) return { status: 304, headers: fields };
  }
  return { status: 200, headers: { "Content-Type": CACHE.type, ...fields }, body: CACHE_BODY };
}

/**
 * The echo shows every field the request carried, credentials included, and
 * `public` lets a shared cache keep an answer to a request with Authorization
 * (RFC 9111 §3.5): keyed on the URL alone, it would hand one client's token
 * to the next one to ask. Varying on the credentials, it reuses the answer
 * only for requests that carry the same ones.
 */
const CREDENTIALS_VARY = "Authorization, Cookie";

export function cacheForAnswer(request: Request, text: string): Response {
  // The freshness is the row's declaration, from this same parameter (cache policy); checked here, refused when out of range.
  whole(request, "seconds", text, 0, MAX_AGE_SECONDS);
  return { status: 200, headers: { "Content-Type": "application/json", Vary: CREDENTIALS_VARY }, body: echoJson(request, (echo) => echo) };
}

/** What an opaque-tag may hold (RFC 9110 §8.8.3: etagc), less obs-text, which this server never writes. */
const ETAGC = /^[\x21\x23-\x7e]{1,256}$/;

export function etagAnswer(request: Request, tag: string): Response {
  if (!ETAGC.test(tag)) {
    refuse(request, "tag", "1 to 256 visible ASCII characters other than a double quote (RFC 9110 §8.8.3)", `tag ${JSON.stringify(tag)} cannot be an entity tag`);
  }
  const body = JSON.stringify({ etag: `"${tag}"` });
  const validated: Validated = { type: "application/json", etag: `"${tag}"` };
  if (!ifMatch(headerValue(request, "if-match"), validated.etag)) {
    return problem(412, { kind: "precondition-failed", detail: `If-Match does not name this resource's entity tag, "${tag}".`, instance: request.target, headers: cacheFields(validated) });
  }
  const unchanged = notModified(request, validated);
  if (unchanged !== undefined) return unchanged;
  // Any other method: If-None-Match matching means the condition is false (§13.1.2), so 412.
  if (noneMatch(headerValue(request, "if-none-match"), validated.etag)) {
    return problem(412, { kind: "precondition-failed", detail: `If-None-Match names this resource's entity tag, "${tag}", and ${request.method} is not a read.`, instance: request.target, headers: cacheFields(validated) });
  }
  return { status: 200, headers: { "Content-Type": validated.type, ...cacheFields(validated) }, body };
}
