// The list endpoints (docs/api.md, rows 3, 8, 9, B and section 9): every
// item, streamed, or one page of them with `?limit=N`, a `Link: rel="next"`
// while more remain, and an ETag taken from the collection's revision, so
// that If-None-Match answers 304 without reading the collection.

import { cacheFields, notModified } from "../http/message/conditional.js";
import type { Request } from "../http/message/request.js";
import type { FieldValue, Response } from "../http/message/response.js";
import type { PagedCollection, Revision } from "../store/types.js";
import { REVALIDATE } from "./json.js";
import { listBody } from "./list-body.js";
import { encodeCursor, parseListQuery, type ListQuery } from "./list-query.js";
import { chooseFormat, MEDIA_TYPES, VARY, type Format } from "./negotiate.js";

/**
 * The list's entity tag: the collection's revision (its database's epoch and
 * write counter), the format, and the page asked for. It changes when, and
 * only when, an item is added, changed or removed, and every process on one
 * database computes the same one.
 *
 * It is weak (RFC 9110 §8.8.1): the revision is read before the items, and a
 * long list is read in batches, not in one snapshot, so a write that lands
 * while it streams may show in a body labelled with the revision before it.
 * The label is then older than the body, never newer: the next If-None-Match
 * finds a later revision and gets the list again, so no client keeps a stale
 * list. If-None-Match compares weakly, so a weak tag loses nothing there.
 */
export function listEtag(collection: string, revision: Revision, format: Format, query: ListQuery): string {
  let tag = `${collection}.${revision.epoch}.${revision.n}.${format}`;
  if (query.limit !== undefined) tag += `.l${query.limit}`;
  if (query.after !== undefined) tag += `.a${query.after}`;
  return `W/"${tag}"`;
}

/**
 * The handler of a list served at `path` (the path a next link points to),
 * wrapping the items in `{"<name>": [...]}`. Checks run in this order: the
 * query (400 naming the parameter), the format (406), the revision (304 when
 * If-None-Match matches), then, for a page, where it ends.
 */
export function listHandler<T>(name: string, path: string, collection: PagedCollection<T>): (request: Request) => Promise<Response> {
  return async (request) => {
    const query = parseListQuery(request, name);
    const format = chooseFormat(request, ["json", "yaml"]);
    // The revision first: the items read after it are at least as new as the tag says.
    const etag = listEtag(name, await collection.revision(), format, query);
    const validated = { type: MEDIA_TYPES[format], etag, cacheControl: REVALIDATE, vary: VARY };
    const unchanged = notModified(request, validated);
    if (unchanged !== undefined) return unchanged;
    const headers: Record<string, FieldValue> = { "Content-Type": validated.type, ...cacheFields(validated) };
    if (query.limit === undefined) {
      return { status: 200, headers, body: listBody(collection, { wrapper: name, format, ...(query.after === undefined ? {} : { after: query.after }) }) };
    }
    // Where the page ends is fixed now, from the index alone, so the head can say whether a next page exists;
    // the items are then read in batches up to that end. A post added meanwhile lands after it, on a later page.
    const span = await collection.span(query.after === undefined ? { limit: query.limit } : { after: query.after, limit: query.limit });
    if (span.more) headers.Link = `<${path}?limit=${query.limit}&after=${encodeCursor(name, span.last!)}>; rel="next"`;
    const through = span.last ?? query.after ?? 0;
    return { status: 200, headers, body: listBody(collection, { wrapper: name, format, ...(query.after === undefined ? {} : { after: query.after }), through }) };
  };
}
