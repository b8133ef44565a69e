// Articles (spec rows 10 and 11): anyone reads; only an administrator changes
// one, with the custom method UPDATE carrying a JSON merge patch.

import { fail } from "../http/problem.js";
import type { Request } from "../http/request.js";
import type { Route } from "../router/route.js";
import type { Article, ArticleFields } from "../store/types.js";
import { requireRole } from "./auth.js";
import type { ApiContext } from "./context.js";
import { patchFields } from "./merge-patch.js";
import { chooseFormat } from "./negotiate.js";
import { articleFieldsSchema } from "./schemas.js";
import { requireMatch, single } from "./single.js";

function missing(request: Request, id: string): never {
  fail(404, { kind: "not-found", detail: `There is no article with id "${id}".`, instance: request.target });
}

const fieldsOf = (a: Article): ArticleFields => ({ title: a.title, body: a.body, author: a.author });

export function articleRoutes({ store }: ApiContext): Route[] {
  return [
    {
      method: "GET",
      version: "v1",
      path: "/artigo/:id",
      summary: "One article (public)",
      handler: (request, { id }) => single(request, store.articles.get(id!) ?? missing(request, id!)),
    },
    {
      method: "UPDATE",
      version: "v1",
      path: "/artigo/:id",
      summary: "Change an article with a JSON merge patch (administrators only)",
      handler: (request, { id }) => {
        // Authorization comes first: a caller without rights learns nothing, not even whether the id exists.
        requireRole(request, store.tokens, "admin");
        chooseFormat(request, ["json"]); // a 406 must come before anything changes
        const current = store.articles.get(id!) ?? missing(request, id!);
        requireMatch(request, current);
        const fields = patchFields<ArticleFields>(request, fieldsOf(current), articleFieldsSchema, "an article");
        const result = store.articles.update(id!, fields);
        if (result.kind === "missing") missing(request, id!);
        return single(request, result.item);
      },
    },
  ];
}
