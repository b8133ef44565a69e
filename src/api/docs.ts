// Documentation fragments the route definitions share: the wording of the
// answers many endpoints give, written once so the OpenAPI document and the
// interactive page say the same thing everywhere.

import type { RouteParamDoc, RouteResponseDoc } from "../router/route.js";
import { MERGE_PATCH_TYPES } from "./merge-patch.js";
import { MEDIA_TYPES } from "./negotiate.js";
import { ID_PATTERN, ID_RULE } from "./schemas.js";

export const JSON_ONLY = [MEDIA_TYPES.json];
export const JSON_OR_YAML = [MEDIA_TYPES.json, MEDIA_TYPES.yaml];
export { MERGE_PATCH_TYPES };

export const ETAG = { ETag: "A strong validator of this representation; send it back in If-None-Match (reads) or If-Match (writes)" };
export const VARY = { Vary: "Accept, Content-Type: the representation was negotiated" };

export function postId(example = "hello"): RouteParamDoc {
  return { description: `The post's id: ${ID_RULE}`, schema: { type: "string", pattern: ID_PATTERN }, example };
}

export const NOT_MODIFIED: RouteResponseDoc = { description: "If-None-Match matched the current ETag: no body", headers: ETAG };

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
