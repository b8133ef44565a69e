// Facts (docs/api.md, rows 12, 13, B and C): a random fact, cacheable privately for an
// hour; new facts arrive as one plain-text sentence.

import { fail } from "../http/message/problem.js";
import { headerValue, type Request } from "../http/message/request.js";
import { ifMatch, noneMatch } from "../http/message/conditional.js";
import type { Revision } from "../store/types.js";
import { apiRoute, type ApiRoute } from "./route.js";
import { readText } from "../representation/body.js";
import type { ApiContext } from "./context.js";
import { ETAG, INVALID_QUERY, JSON_ONLY, JSON_OR_YAML, LIST_HEADERS, LIST_NOT_MODIFIED, LIST_QUERY, NOT_ACCEPTABLE, NOT_MODIFIED, notFound } from "./docs.js";
import { json } from "../representation/json.js";
import { listEtag, listHandler } from "./lists.js";
import { chooseFormat, VARY } from "../representation/negotiate.js";
import { factListSchema, factSchema, factTextSchema } from "../validation/schemas.js";
import { single } from "./single.js";

const MAX_FACT_CHARACTERS = 500;
/** The largest fact body taken: refused from its head past this (413), before it is read. */
const MAX_FACT_BODY_BYTES = 4 * 1024;
const CONTROL = /\p{Cc}/u;

function invalid(request: Request, detail: string): never {
  fail(422, { kind: "invalid-fact", title: "Invalid fact", detail, instance: request.target });
}

export function factRoutes(ctx: ApiContext): ApiRoute[] {
  const { store } = ctx;
  return [
    apiRoute({
      method: "GET",
      store: true,
      version: "v2",
      path: "/facts",
      summary: "All facts, or a page of them (JSON or YAML)",
      handler: listHandler("facts", store.facts, ctx.kept),
      query: LIST_QUERY,
      responses: {
        200: {
          description: "Every fact in id order (or one page of them, with limit), as JSON or YAML (negotiated like the post list)",
          mediaTypes: JSON_OR_YAML,
          schema: factListSchema,
          headers: LIST_HEADERS,
        },
        304: LIST_NOT_MODIFIED,
        400: INVALID_QUERY,
        406: NOT_ACCEPTABLE,
      },
    }),
    apiRoute({
      method: "GET",
      store: true,
      version: "v2",
      path: "/facts/random",
      summary: "A random fact about HTTP (Cache-Control: private, max-age=3600)",
      // The spec's own value: a browser may keep a random fact an hour; a shared cache must not hand one client's to the next.
      cache: { scope: "private", maxAge: 3600 },
      handler: async (request) => {
        chooseFormat(request, ["json"]);
        const fact = await store.facts.random();
        if (fact === undefined) {
          const collection = request.path.slice(0, request.path.lastIndexOf("/"));
          fail(404, { kind: "no-facts", title: "No facts", detail: `There are no facts yet; add one with POST ${collection}.`, instance: request.target });
        }
        return json(200, fact, { Vary: VARY });
      },
      responses: {
        200: {
          description: "A fact picked at random",
          mediaTypes: JSON_ONLY,
          schema: factSchema,
        },
        404: { description: "There are no facts yet" },
        406: NOT_ACCEPTABLE,
      },
    }),
    apiRoute({
      method: "GET",
      store: true,
      version: "v2",
      path: "/facts/:id",
      summary: "One fact",
      handler: async (request, { id }) =>
        single(request, (await store.facts.get(id)) ?? fail(404, { kind: "not-found", detail: `There is no fact with id "${id}".`, instance: request.target })),
      params: { id: { description: "The fact's id, as in the Location of its creation", example: "1" } },
      responses: {
        200: { description: "The fact", mediaTypes: JSON_ONLY, schema: factSchema, headers: ETAG },
        304: NOT_MODIFIED,
        404: notFound("fact"),
        406: NOT_ACCEPTABLE,
      },
    }),
    apiRoute({
      method: "POST",
      store: true,
      version: "v2",
      path: "/facts",
      summary: "Add a fact: the body is one sentence as text/plain (UTF-8)",
      auth: "token-if-configured",
      request: {
        description: "One sentence, as plain UTF-8 text",
        mediaTypes: ["text/plain"],
        // 500 characters of at most 4 bytes each in UTF-8, with room for whitespace that trimming removes.
        maxBytes: MAX_FACT_BODY_BYTES,
        schema: factTextSchema,
        example: "RFC 9110 defines HTTP semantics.",
      },
      responses: {
        201: { description: 'The new fact, with source "api"', mediaTypes: JSON_ONLY, schema: factSchema, headers: { Location: "Where the new fact is served: /api/v2/facts/<id>" } },
        400: { description: "The body is not valid UTF-8" },
        422: { description: "The sentence is empty, longer than 500 characters, or holds control characters" },
      },
      handler: async (request) => {
        const text = readText(request).trim();
        const length = [...text].length;
        if (length === 0) invalid(request, "The fact is empty; send one sentence as the body.");
        if (length > MAX_FACT_CHARACTERS) invalid(request, `The fact has ${length} characters; the limit is ${MAX_FACT_CHARACTERS}.`);
        if (CONTROL.test(text)) invalid(request, "The fact holds control characters (line breaks, tabs, ...); send one sentence on one line.");
        await collectionPreconditions(request, await store.facts.revision());
        const fact = await store.facts.create(text, "api");
        // The new fact is served below the collection this request was sent to, in the version it was sent to.
        return json(201, fact, { Location: `${request.path}/${encodeURIComponent(fact.id)}` });
      },
    }),
  ];
}

/**
 * The preconditions of a POST to the collection (RFC 9110 §13.1.1, §13.1.2),
 * evaluated against the collection as a GET of it in JSON would show it: its
 * tag is weak, so If-Match holds only as `*` (strong comparison never matches
 * a weak tag), and If-None-Match fails as `*` (the collection exists) or with
 * the collection's current tag. They are read just before the fact is added,
 * not in one step with it: two posts may both pass the same tag.
 */
async function collectionPreconditions(request: Request, revision: Revision): Promise<void> {
  const match = headerValue(request, "if-match");
  const none = headerValue(request, "if-none-match");
  if (match === undefined && none === undefined) return;
  const etag = listEtag("facts", revision, "json", {});
  if (match !== undefined && !ifMatch(match, etag)) {
    fail(412, {
      kind: "precondition-failed",
      detail: `If-Match: ${match.slice(0, 100)} does not match the facts collection, whose ETag ${etag} is weak: If-Match compares strongly (RFC 9110 §13.1.1), so only If-Match: * can hold here.`,
      instance: request.target,
    });
  }
  if (none !== undefined && noneMatch(none, etag)) {
    fail(412, {
      kind: "precondition-failed",
      detail: `If-None-Match: ${none.slice(0, 100)} matches the facts collection as it is now (ETag ${etag}), so the request asked not to proceed.`,
      instance: request.target,
    });
  }
}
