// The rules of each resource as JSON Schema (draft 2020-12 compatible): the
// one statement of what a valid post or article is, used to validate requests
// and, later, to document the API.

export const ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$";
export const ID_RULE = "1 to 64 characters of A-Z, a-z, 0-9, _ and -";

/**
 * No U+0000 in any string a client writes: PostgreSQL's text type cannot hold
 * it, and what one store accepts every store must keep.
 */
export const NO_NUL = "^[^\\u0000]*$";

const title = { type: "string", minLength: 1, maxLength: 200, pattern: NO_NUL } as const;
const body = { type: "string", maxLength: 100_000, pattern: NO_NUL } as const;
const author = { type: "string", minLength: 1, maxLength: 200, pattern: NO_NUL } as const;

/** A post as a client writes it (publish, and the result of a merge patch). */
export const postFieldsSchema = {
  $id: "post-fields",
  type: "object",
  additionalProperties: false,
  required: ["title", "body"],
  properties: {
    title,
    body,
    author,
    tags: { type: "array", maxItems: 50, items: { type: "string", minLength: 1, maxLength: 100, pattern: NO_NUL } },
  },
} as const;

/** An article as an administrator writes it (the result of a merge patch). */
export const articleFieldsSchema = {
  $id: "article-fields",
  type: "object",
  additionalProperties: false,
  required: ["title", "body", "author"],
  properties: { title, body, author },
} as const;

/** Fields the server sets; a client that sends one is told so, not that it is unknown. */
export const SERVER_FIELDS = ["id", "publishedAt", "updatedAt", "createdAt"];

// ---- Representations, as the server sends them (documentation: /api/openapi.json) ----
// Each carries a `title`, which names it among the OpenAPI document's components.

const timestamp = { type: "string", format: "date-time", description: "RFC 3339, set by the server" } as const;

/** RFC 7396: a merge patch of `fields`; null removes an optional member, required ones cannot be removed. */
function mergePatchOf(title: string, fields: { readonly required: readonly string[]; readonly properties: Readonly<Record<string, object>> }): object {
  const properties: Record<string, object> = {};
  for (const [name, schema] of Object.entries(fields.properties)) {
    properties[name] = fields.required.includes(name) ? schema : { anyOf: [schema, { type: "null" }] };
  }
  return {
    title,
    description: "A JSON merge patch (RFC 7396): members present replace, null removes an optional member, absent members stay.",
    type: "object",
    additionalProperties: false,
    properties,
  };
}

export const postPatchSchema = mergePatchOf("PostPatch", postFieldsSchema);
export const articlePatchSchema = mergePatchOf("ArticlePatch", articleFieldsSchema);

export const postSchema = {
  title: "Post",
  type: "object",
  additionalProperties: false,
  required: ["id", "title", "body", "publishedAt", "updatedAt"],
  properties: { id: { type: "string", pattern: ID_PATTERN }, ...postFieldsSchema.properties, publishedAt: timestamp, updatedAt: timestamp },
} as const;

export const postListSchema = {
  title: "PostList",
  type: "object",
  additionalProperties: false,
  required: ["posts"],
  properties: { posts: { type: "array", items: postSchema, description: "Oldest first" } },
} as const;

export const publishedSchema = {
  title: "Published",
  type: "object",
  additionalProperties: false,
  required: ["published", "post"],
  properties: { published: { const: true }, post: postSchema },
} as const;

export const deletedSchema = {
  title: "Deleted",
  type: "object",
  additionalProperties: false,
  required: ["deleted", "id"],
  properties: { deleted: { const: true }, id: { type: "string" } },
} as const;

export const articleSchema = {
  title: "Article",
  type: "object",
  additionalProperties: false,
  required: ["id", "title", "body", "author", "updatedAt"],
  properties: { id: { type: "string" }, ...articleFieldsSchema.properties, updatedAt: timestamp },
} as const;

export const factSchema = {
  title: "Fact",
  type: "object",
  additionalProperties: false,
  required: ["id", "text", "source", "createdAt"],
  properties: {
    id: { type: "string" },
    text: { type: "string", minLength: 1, maxLength: 500 },
    source: { type: "string", description: 'Where the fact can be checked (an RFC and section), or "api" for facts sent by clients' },
    createdAt: timestamp,
  },
} as const;

export const factListSchema = {
  title: "FactList",
  type: "object",
  additionalProperties: false,
  required: ["facts"],
  properties: { facts: { type: "array", items: factSchema } },
} as const;

export const factTextSchema = {
  title: "FactText",
  description: "One sentence of UTF-8 text: trimmed, 1 to 500 characters, no control characters (so no line breaks).",
  type: "string",
  minLength: 1,
} as const;

export const statusV1Schema = {
  title: "StatusV1",
  type: "object",
  additionalProperties: false,
  required: ["resposta"],
  properties: { resposta: { type: "string" } },
} as const;

export const statusV1_1Schema = {
  title: "StatusV1_1",
  type: "object",
  additionalProperties: false,
  required: ["resposta", "versao"],
  properties: { resposta: { type: "string" }, versao: { const: "v1-1" } },
} as const;

export const statusV2Schema = {
  title: "StatusV2",
  type: "object",
  additionalProperties: false,
  required: ["response"],
  properties: { response: { type: "string" } },
} as const;

export const usageSchema = {
  title: "Usage",
  type: "object",
  additionalProperties: false,
  required: ["since", "versions"],
  properties: {
    since: { ...timestamp, description: "When the server started" },
    versions: { type: "object", additionalProperties: { type: "integer", minimum: 0 }, description: "Requests routed to each API version" },
  },
} as const;
