// Posts (docs/api.md, rows 3 to 9): publish under a client-chosen id, read one or all,
// change with a JSON merge patch, delete.

import { fail } from "../http/message/problem.js";
import { headerValue, type Request } from "../http/message/request.js";
import { apiRoute, type ApiRoute } from "./route.js";
import type { Post, PostFields } from "../store/types.js";
import { conditionalUpdate } from "./conditional-update.js";
import { readJson } from "../representation/body.js";
import type { ApiContext } from "./context.js";
import {
  ETAG,
  INVALID_JSON,
  INVALID_QUERY,
  invalidFields,
  JSON_ONLY,
  JSON_OR_YAML,
  LIST_HEADERS,
  LIST_NOT_MODIFIED,
  LIST_QUERY,
  MERGE_PATCH_TYPES,
  NOT_ACCEPTABLE,
  NOT_MODIFIED,
  notFound,
  PRECONDITION_FAILED,
  postId,
} from "./docs.js";
import { json, JSON_TYPE } from "../representation/json.js";
import { listHandler } from "./lists.js";
import { keptPost } from "./kept-reads.js";
import { deletedSchema, ID_PATTERN, ID_RULE, postFieldsSchema, postListSchema, postPatchSchema, postSchema, publishedSchema } from "../validation/schemas.js";
import { hasPreconditions, requireMatch, stored } from "./single.js";
import { validate } from "../validation/validate.js";

const ID = new RegExp(ID_PATTERN);

function missing(request: Request, id: string): never {
  fail(404, { kind: "not-found", detail: `There is no post with id "${id}".`, instance: request.target });
}

/** The client-written fields of a post, in a stable order. */
function fieldsOf(post: Post): PostFields {
  return {
    title: post.title,
    body: post.body,
    ...(post.author === undefined ? {} : { author: post.author }),
    ...(post.tags === undefined ? {} : { tags: post.tags }),
  };
}

export function postRoutes(ctx: ApiContext): ApiRoute[] {
  const { store, kept } = ctx;
  const patch = conditionalUpdate(store.posts, { what: "a post", schema: postFieldsSchema, fieldsOf, missing }, (request, written) => stored(request, written.representation));
  const listResponses = {
    200: {
      description: "Every post, oldest first (or one page of them, with limit), as JSON or YAML: chosen by Accept, or by the Content-Type of this body-less request",
      mediaTypes: JSON_OR_YAML,
      schema: postListSchema,
      headers: LIST_HEADERS,
    },
    304: LIST_NOT_MODIFIED,
    400: INVALID_QUERY,
    406: NOT_ACCEPTABLE,
  };
  const auth = "token-if-configured" as const;

  return [
    apiRoute({
      method: "GET",
      store: true,
      version: "v1",
      path: "/post",
      summary: "All posts, oldest first, or a page of them (JSON or YAML)",
      handler: listHandler("posts", store.posts, kept, store.posts),
      query: LIST_QUERY,
      responses: listResponses,
    }),
    apiRoute({
      method: "GET",
      store: true,
      version: "v1",
      path: "/posts",
      summary: "All posts, oldest first, or a page of them (JSON or YAML)",
      handler: listHandler("posts", store.posts, kept, store.posts),
      query: LIST_QUERY,
      responses: listResponses,
    }),
    apiRoute({
      method: "GET",
      store: true,
      version: "v1",
      path: "/post/:id",
      summary: "One post",
      handler: (request, { id }) => {
        const read = keptPost(store.posts, kept, id);
        const keeping = kept.responses.budget > 0;
        return read instanceof Promise
          ? read.then((found) => stored(request, found ?? missing(request, id), undefined, keeping))
          : stored(request, read ?? missing(request, id), undefined, keeping);
      },
      params: { id: postId() },
      responses: {
        200: { description: "The post", mediaTypes: JSON_ONLY, schema: postSchema, headers: ETAG },
        304: NOT_MODIFIED,
        404: notFound("post"),
        406: NOT_ACCEPTABLE,
      },
    }),
    apiRoute({
      method: "POST",
      store: true,
      version: "v1",
      path: "/post/:id",
      summary: "Publish a post under this id",
      auth,
      params: { id: postId() },
      request: {
        description: "The post's fields; the server sets id (from the path), publishedAt and updatedAt",
        mediaTypes: JSON_ONLY,
        schema: postFieldsSchema,
        example: '{"title": "Hello", "body": "The first post.", "tags": ["intro"]}',
      },
      responses: {
        201: {
          description: "Published",
          mediaTypes: JSON_ONLY,
          schema: publishedSchema,
          headers: { Location: "Where the new post is served: /api/v1/post/<id>" },
        },
        400: INVALID_JSON,
        409: { description: "A post with this id exists already; change it with PATCH" },
        422: invalidFields("a post (or an invalid id)"),
      },
      handler: async (request, { id }) => {
        if (!ID.test(id)) {
          fail(422, { kind: "invalid-fields", title: "Invalid fields", detail: `The post id "${id.slice(0, 80)}" is invalid: use ${ID_RULE}.`, instance: request.target });
        }
        // If-Match holds only for a resource that has a current representation (RFC 9110 §13.1.1), and a
        // publish succeeds only where there is none: it can never hold here. Where the post exists, the
        // answer without the precondition is a 409, so the precondition is not evaluated (§13.2.1).
        // If-None-Match always holds on a publish that succeeds (it is create-only anyway).
        const match = headerValue(request, "if-match");
        if (match !== undefined) {
          if ((await store.posts.representation(id)) !== undefined) alreadyExists(request, id);
          fail(412, {
            kind: "precondition-failed",
            detail: `If-Match: ${match.slice(0, 100)} needs a current post to match, and there is no post with id "${id}" (RFC 9110 §13.1.1). To publish it, send no If-Match; to publish only where nothing exists yet, send If-None-Match: *.`,
            instance: request.target,
          });
        }
        const fields = validate<PostFields>(postFieldsSchema, readJson(request), request.target);
        const result = await store.posts.create({ id: id, ...fields });
        if (result.kind === "exists") alreadyExists(request, id);
        // Published where it was asked for: the request's own path (the version is the table's, not this handler's).
        const location = request.path;
        // The stored text as it is: the bytes of JSON.stringify({ published: true, post }).
        return { status: 201, headers: { "Content-Type": JSON_TYPE, Location: location }, body: `{"published":true,"post":${result.representation.json}}` };
      },
    }),
    apiRoute({
      method: "PATCH",
      store: true,
      version: "v1",
      path: "/post/:id",
      summary: "Change a post with a JSON merge patch (RFC 7396)",
      auth,
      params: { id: postId() },
      request: {
        description: "A JSON merge patch of the post's fields; If-Match makes it conditional",
        mediaTypes: MERGE_PATCH_TYPES,
        schema: postPatchSchema,
        example: '{"title": "Hello again", "tags": null}',
      },
      responses: {
        200: { description: "The updated post", mediaTypes: JSON_ONLY, schema: postSchema, headers: ETAG },
        400: INVALID_JSON,
        404: notFound("post"),
        406: NOT_ACCEPTABLE,
        412: PRECONDITION_FAILED,
        422: invalidFields("a post"),
      },
      handler: (request, { id }) => patch(request, id),
    }),
    apiRoute({
      method: "DELETE",
      store: true,
      version: "v1",
      path: "/post/:id",
      summary: "Delete a post",
      auth,
      params: { id: postId() },
      responses: {
        200: { description: "Deleted", mediaTypes: JSON_ONLY, schema: deletedSchema },
        404: notFound("post"),
        412: PRECONDITION_FAILED,
      },
      handler: async (request, { id }) => {
        // If-Match is checked against the post as stored, in the same atomic step as the delete;
        // without a precondition there is nothing to read first (one statement on PostgreSQL).
        const precondition = hasPreconditions(request) ? (current: Post) => requireMatch(request, current) : undefined;
        if (!(await store.posts.delete(id, precondition))) missing(request, id);
        return json(200, { deleted: true, id });
      },
    }),
  ];
}

function alreadyExists(request: Request, id: string): never {
  fail(409, {
    kind: "already-exists",
    detail: `A post with id "${id}" already exists. Change it with PATCH, or publish under another id.`,
    instance: request.target,
  });
}
