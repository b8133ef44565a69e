// Articles (docs/api.md, rows 10 and 11): anyone reads; only an administrator changes
// one, with the custom method UPDATE carrying a JSON merge patch.

import { fail } from "../http/message/problem.js";
import type { Request } from "../http/message/request.js";
import { apiRoute, type ApiRoute } from "./route.js";
import type { Article, ArticleFields } from "../store/types.js";
import { conditionalUpdate } from "./conditional-update.js";
import type { ApiContext } from "./context.js";
import { ETAG, INVALID_JSON, invalidFields, JSON_ONLY, MERGE_PATCH_TYPES, NOT_ACCEPTABLE, NOT_MODIFIED, notFound, PRECONDITION_FAILED } from "./docs.js";
import { articleFieldsSchema, articlePatchSchema, articleSchema } from "../validation/schemas.js";
import { single } from "./single.js";

function missing(request: Request, id: string): never {
  fail(404, { kind: "not-found", detail: `There is no article with id "${id}".`, instance: request.target });
}

const fieldsOf = (a: Article): ArticleFields => ({ title: a.title, body: a.body, author: a.author });

const ARTICLE_ID = { description: "The article's id (1, 2 and 3 are seeded)", example: "1" };

export function articleRoutes({ store }: ApiContext): ApiRoute[] {
  const patch = conditionalUpdate(store.articles, { what: "an article", schema: articleFieldsSchema, fieldsOf, missing }, (request, written) => single(request, written.item));
  return [
    apiRoute({
      method: "GET",
      store: true,
      version: "v1",
      path: "/artigo/:id",
      summary: "One article (public)",
      handler: async (request, { id }) => single(request, (await store.articles.get(id)) ?? missing(request, id)),
      params: { id: ARTICLE_ID },
      responses: {
        200: { description: "The article", mediaTypes: JSON_ONLY, schema: articleSchema, headers: ETAG },
        304: NOT_MODIFIED,
        404: notFound("article"),
        406: NOT_ACCEPTABLE,
      },
    }),
    apiRoute({
      method: "UPDATE",
      store: true,
      version: "v1",
      path: "/artigo/:id",
      summary: "Change an article with a JSON merge patch (administrators only)",
      auth: "admin",
      params: { id: ARTICLE_ID },
      request: {
        description: "A JSON merge patch of the article's title, body and author; If-Match makes it conditional",
        mediaTypes: MERGE_PATCH_TYPES,
        schema: articlePatchSchema,
        example: '{"title": "A new title"}',
      },
      responses: {
        200: { description: "The updated article", mediaTypes: JSON_ONLY, schema: articleSchema, headers: ETAG },
        400: INVALID_JSON,
        404: notFound("article"),
        406: NOT_ACCEPTABLE,
        412: PRECONDITION_FAILED,
        422: invalidFields("an article"),
      },
      handler: (request, { id }) => patch(request, id),
    }),
  ];
}
