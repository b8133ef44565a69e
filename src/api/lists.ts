// The list endpoints (docs/api.md, rows 3, 8, 9, B and section 9): every
// item, streamed, or one page of them with `?limit=N`, a `Link: rel="next"`
// while more remain, and an ETag taken from the collection's revision, so
// that If-None-Match answers 304 without reading the collection.

import { cacheFields, notModified } from "../http/message/conditional.js";
import { headerValue, type Request } from "../http/message/request.js";
import type { FieldValue, Response } from "../http/message/response.js";
import type { PagedCollection, Revision } from "../store/types.js";
import { answer, current, isResponse, keptResponse, keptWhileSent, responseBytes, type KeptReads } from "./kept-reads.js";
import { FIRST_JSON_BATCH, JSON_BATCH, jsonList, jsonListBody, listBody, yamlListBody, yamlPageWhole } from "./list-body.js";
import type { YamlListSource } from "./yaml-entries.js";
import { encodeCursor, parseListQuery, type ListQuery } from "./list-query.js";
import { chooseFormat, MEDIA_TYPES, VARY, type Format } from "../representation/negotiate.js";

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
 * The handler of a list, wrapping the items in `{"<name>": [...]}`. Checks run in this order: the
 * query (400 naming the parameter), the format (406), then the revision
 * (304 when If-None-Match matches it, with no item read; the kept response
 * when one was read at it, see kept-reads.ts).
 *
 * JSON is the store's text, sent as it is: the first batch is read with the
 * revision in one statement, and when it holds the whole page (or the whole
 * list) the body goes out with a Content-Length; a longer list is streamed
 * batch by batch (jsonListBody). YAML is the posts' stored entries joined
 * (yamlListBody and yamlPageWhole, given `yaml`: a store of posts, which keeps
 * each one's YAML entry), or made from the items as they are read (listBody). A body that went out
 * whole is kept for the next request at the same revision.
 */
export function listHandler<T>(name: string, collection: PagedCollection<T>, kept: KeptReads, yaml?: YamlListSource): (request: Request) => Promise<Response> {
  return async (request) => {
    // Where this list is served (its version is the table's, not this handler's): the path its next links point to.
    const path = request.path;
    const query = parseListQuery(request, name);
    const format = chooseFormat(request, ["json", "yaml"]);
    const key = `${path} ${format} ${query.limit ?? ""} ${query.after ?? ""}`;
    const keeping = kept.responses.budget > 0;
    const conditional = headerValue(request, "if-none-match") !== undefined;
    if (!keeping && !conditional && format === "yaml" && yaml !== undefined && query.limit !== undefined) {
      // A page of posts in YAML with nothing kept: one read of its stored entries, joined, sent whole (as the JSON page is).
      const whole = await yamlPageWhole(yaml, name, { ...(query.after === undefined ? {} : { after: query.after }), limit: query.limit });
      if (whole !== undefined) {
        const validated = { type: MEDIA_TYPES.yaml, etag: listEtag(name, whole.page.revision, "yaml", query), vary: VARY };
        const headers: Record<string, FieldValue> = { "Content-Type": validated.type, ...cacheFields(validated) };
        if (whole.page.more) headers.Link = nextLink(path, name, query.limit, whole.page.last!);
        return { status: 200, headers, body: whole.body };
      }
    }
    if (keeping || conditional || format !== "json") {
      // The revision first: the items read after it are at least as new as the tag says.
      const revision = await collection.revision();
      const validated = { type: MEDIA_TYPES[format], etag: listEtag(name, revision, format, query), vary: VARY };
      const unchanged = notModified(request, validated);
      if (unchanged !== undefined) return unchanged;
      const known = kept.responses.get(key);
      if (current(known, revision, isResponse)) return answer(known);
      if (format !== "json") {
        const response = await streamed(name, path, collection, query, format, { "Content-Type": validated.type, ...cacheFields(validated) }, kept, yaml);
        return keptAfterSent(kept, key, revision, response);
      }
    }
    const after = query.after === undefined ? {} : { after: query.after };
    const first = await collection.pageJson({ ...after, ...(query.limit === undefined ? FIRST_JSON_BATCH : { ...JSON_BATCH, limit: query.limit }) });
    const validated = { type: MEDIA_TYPES.json, etag: listEtag(name, first.revision, "json", query), vary: VARY };
    const headers: Record<string, FieldValue> = { "Content-Type": validated.type, ...cacheFields(validated) };
    const respond = (body: Response["body"]) => (keeping ? keptAfterSent(kept, key, first.revision, { status: 200, headers, body }) : { status: 200, headers, body });
    if (query.limit === undefined) {
      return respond(first.more ? jsonListBody(collection, first, { wrapper: name }) : jsonList(name, first.members));
    }
    if (first.count === query.limit || !first.more) {
      if (first.more) headers.Link = nextLink(path, name, query.limit, first.last!);
      return respond(jsonList(name, first.members));
    }
    // The batch stopped at its size before the page's end: fix where the page ends (from the index alone), then stream the rest.
    const span = await collection.span({ ...after, limit: query.limit });
    if (span.more) headers.Link = nextLink(path, name, query.limit, span.last!);
    return respond(jsonListBody(collection, first, { wrapper: name, through: span.last ?? query.after ?? 0 }));
  };
}

/** The response as it is, kept under `key` with the revision it was read at: at once when its body is whole, once it has all been sent when it is streamed. */
function keptAfterSent(kept: KeptReads, key: string, revision: Revision, response: Response): Response {
  const { body, headers } = response;
  const keep = (bytes: Buffer | string) => {
    kept.responses.set(key, keptResponse(revision, headers ?? {}, bytes), responseBytes(bytes));
  };
  if (typeof body === "string" || body instanceof Uint8Array) {
    keep(typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.length));
    return response;
  }
  if (body === undefined) return response;
  return { ...response, body: keptWhileSent(body, key, kept.gathering, kept.responses.entryLimit, keep) };
}

function nextLink(path: string, name: string, limit: number, last: number): string {
  return `<${path}?limit=${limit}&after=${encodeCursor(name, last)}>; rel="next"`;
}

/** A list streamed in batches under back-pressure: from stored YAML entries when the collection keeps them, else made from its items as they are read. */
async function streamed<T>(
  name: string,
  path: string,
  collection: PagedCollection<T>,
  query: ListQuery,
  format: Format,
  fields: Readonly<Record<string, FieldValue>>,
  kept: KeptReads,
  yaml: YamlListSource | undefined,
): Promise<Response> {
  const headers: Record<string, FieldValue> = { ...fields };
  const from = query.after === undefined ? {} : { after: query.after };
  const body = (through?: number) =>
    yaml !== undefined && format === "yaml"
      ? yamlListBody(yaml, { wrapper: name, ...from, ...(through === undefined ? {} : { through }) })
      : listBody(collection, { wrapper: name, format, ...from, ...(through === undefined ? {} : { through }) });
  if (query.limit === undefined) return { status: 200, headers, body: body() };
  // Where the page ends is fixed now, from the index alone, so the head can say whether a next page exists;
  // the items are then read in batches up to that end. A post added meanwhile lands after it, on a later page.
  const span = await collection.span({ ...from, limit: query.limit });
  if (span.more) headers.Link = nextLink(path, name, query.limit, span.last!);
  return { status: 200, headers, body: body(span.last ?? query.after ?? 0) };
}
