// The rules of each resource as JSON Schema (draft 2020-12 compatible): the
// one statement of what a valid post or article is, used to validate requests
// and, later, to document the API.

export const ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$";
export const ID_RULE = "1 to 64 characters of A-Z, a-z, 0-9, _ and -";

const title = { type: "string", minLength: 1, maxLength: 200 } as const;
const body = { type: "string", maxLength: 100_000 } as const;
const author = { type: "string", minLength: 1, maxLength: 200 } as const;

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
    tags: { type: "array", maxItems: 50, items: { type: "string", minLength: 1, maxLength: 100 } },
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
