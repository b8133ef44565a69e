// Changing one stored resource with a JSON merge patch (RFC 7396), made
// conditional by If-Match / If-None-Match (RFC 9110 §13.1): one function for
// every resource that can be changed (posts, articles, and any later one).
// The order is the one the answers promise: a 406 before anything changes,
// a 400 or 422 for the patch itself, then 404, then 412 decided on the
// resource as stored, in the store's write transaction with the merge (one
// atomic step, so no other write can slip between the check and the change).

import type { Request } from "../http/message/request.js";
import type { Response } from "../http/message/response.js";
import type { Change } from "../store/types.js";
import { mergePatcher } from "../representation/merge-patch.js";
import { chooseFormat } from "../representation/negotiate.js";
import { requireMatch } from "./single.js";

/** A store collection: its atomic read-change-write of one record. */
export interface Updatable<T, F, W extends { readonly kind: "updated" }> {
  update(id: string, change: Change<T, F>): Promise<W | { readonly kind: "missing" }>;
}

/** What the update needs to know of the resource. */
export interface Patchable<T, F> {
  /** The client-written fields of a stored record: what the patch applies to. */
  readonly fieldsOf: (current: T) => F;
  /** The JSON Schema the patched fields must meet, and what they are called in a 422 ("a post"). */
  readonly schema: object;
  readonly what: string;
  /** The 404 for an id with no record. */
  readonly missing: (request: Request, id: string) => never;
}

/** The handler of a conditional merge-patch update of one record of `collection`; `answer` makes the 200 of the record as written. */
export function conditionalUpdate<T, F, W extends { readonly kind: "updated" }>(
  collection: Updatable<T, F, W>,
  resource: Patchable<T, F>,
  answer: (request: Request, written: W) => Response,
): (request: Request, id: string) => Promise<Response> {
  return async (request, id) => {
    chooseFormat(request, ["json"]); // a 406 must come before anything changes
    const merge = mergePatcher<F>(request, resource.schema, resource.what);
    const result = await collection.update(id, (current) => {
      requireMatch(request, current);
      return merge(resource.fieldsOf(current));
    });
    if (result.kind === "missing") resource.missing(request, id);
    return answer(request, result as W);
  };
}
