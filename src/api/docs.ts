// Documentation fragments the route definitions share: the wording of the
// answers many endpoints give, written once so the OpenAPI document and the
// interactive page say the same thing everywhere.

import type { RouteParamDoc, RouteResponseDoc } from "../router/route.js";
import { MERGE_PATCH_TYPES } from "../representation/merge-patch.js";
import { MEDIA_TYPES } from "../representation/negotiate.js";
import { MAX_LIMIT } from "./list-query.js";
import { ID_PATTERN, ID_RULE } from "../validation/schemas.js";

export const JSON_ONLY = [MEDIA_TYPES.json];
export const JSON_OR_YAML = [MEDIA_TYPES.json, MEDIA_TYPES.yaml];
export { MERGE_PATCH_TYPES };

export const ETAG = { ETag: "A strong validator of this representation; send it back in If-None-Match (reads) or If-Match (writes)" };
export const VARY = { Vary: "Accept, Content-Type, Accept-Encoding: the representation was negotiated, and may be compressed" };
/** What a 304 carries besides its ETag: the cache fields its 200 would (RFC 9110 §15.4.5), so a cache can update the response it keeps. */
const CACHE_FIELDS_OF_200 = { "Cache-Control": "no-cache, as on the 200", ...VARY };

/** The query parameters of the list endpoints (list-query.ts). */
export const LIST_QUERY: Readonly<Record<string, RouteParamDoc>> = {
  limit: {
    description: `Return one page of at most this many items (1 to ${MAX_LIMIT}), in the same wrapper and order, with Link: rel="next" while more remain. Without it: every item.`,
    schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT },
    example: "50",
  },
  after: {
    description: 'An opaque cursor: start after the item it names. Take it from a Link: rel="next" as given; do not build or change it.',
    schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" },
  },
};

/** The fields of a list's 200, besides Vary. */
export const LIST_HEADERS = {
  ...VARY,
  ETag: "A weak validator of the whole collection (and this page, format): it changes when an item is added, changed or removed; send it back in If-None-Match",
  Link: '<...?limit=N&after=CURSOR>; rel="next" (RFC 8288), on a page (limit given) while more items follow it',
  "Transfer-Encoding":
    "chunked when the list is streamed as it is read from the store: YAML always, JSON when it is longer than one batch (about 128 KiB); a shorter JSON list or page goes whole, with Content-Length",
};

export const LIST_NOT_MODIFIED: RouteResponseDoc = {
  description: "If-None-Match matched: the collection has not changed since (the collection itself is not read)",
  headers: { ETag: LIST_HEADERS.ETag, ...CACHE_FIELDS_OF_200 },
};

export const INVALID_QUERY: RouteResponseDoc = {
  description: "limit is not a whole number from 1 to 1000, or after is not a cursor of this list (or either is given twice); the problem's `parameter` names which",
};

export function postId(example = "hello"): RouteParamDoc {
  return { description: `The post's id: ${ID_RULE}`, schema: { type: "string", pattern: ID_PATTERN }, example };
}

export const NOT_MODIFIED: RouteResponseDoc = { description: "If-None-Match matched the current ETag: no body", headers: { ...ETAG, ...CACHE_FIELDS_OF_200 } };

export const NOT_ACCEPTABLE: RouteResponseDoc = {
  description: "Neither Accept nor (on a request without a body) Content-Type names a type this endpoint can produce",
};

export const PRECONDITION_FAILED: RouteResponseDoc = {
  description: "If-Match does not match the current ETag (or If-None-Match does): nothing changed",
};

export const INVALID_JSON: RouteResponseDoc = { description: "The body is not valid UTF-8 JSON" };

export function notFound(what: string): RouteResponseDoc {
  return { description: `There is no ${what} with this id` };
}

export function invalidFields(what: string): RouteResponseDoc {
  return { description: `Valid JSON that breaks the rules of ${what} (a missing, unknown, server-set or too long field); \`errors\` lists each` };
}
