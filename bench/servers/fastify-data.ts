// The comparator a user would pick instead of startline for the data
// endpoints (bench/data.ts): fastify 5 with better-sqlite3, set up as its
// documentation suggests and nothing cleverer. WAL and synchronous=NORMAL,
// like startline's default store; one table with an autoincrement `seq` and a
// unique `id`; JSON schemas for the id in the path and the POST body (the
// limits of startline's post schema); a strong SHA-256 ETag and
// `Cache-Control: no-cache` on one post; pages cut by `seq` with a `Link` to
// the next one. YAML (Accept: application/yaml) is js-yaml's dump with
// startline's options, the way a fastify user would add it.
//
//   DATA_FILE=/tmp/x.sqlite PORT=0 node dist/bench/servers/fastify-data.js

import { createHash } from "node:crypto";
import Fastify from "fastify";
import { dump } from "js-yaml";
import { openPostTable, toPost } from "./post-table.js";

const { db, q } = openPostTable(process.env.DATA_FILE ?? ":memory:");

const app = Fastify({ logger: false });
const idParams = { type: "object", required: ["id"], properties: { id: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" } } } as const;
const postBody = {
  type: "object",
  additionalProperties: false,
  required: ["title", "body"],
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    body: { type: "string", maxLength: 100_000 },
    author: { type: "string", minLength: 1, maxLength: 200 },
    tags: { type: "array", maxItems: 50, items: { type: "string", minLength: 1, maxLength: 100 } },
  },
} as const;
const pageQuery = { type: "object", properties: { limit: { type: "integer", minimum: 1, maximum: 1000 }, after: { type: "integer", minimum: 0 } } } as const;

const wantsYaml = (accept: string | undefined) => accept !== undefined && accept.includes("yaml");

app.get<{ Params: { id: string } }>("/api/v1/post/:id", { schema: { params: idParams } }, async (request, reply) => {
  const row = q.get.get(request.params.id);
  if (row === undefined) return reply.code(404).send({ error: "not found" });
  const body = JSON.stringify(toPost(row));
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  if (request.headers["if-none-match"] === etag) return reply.code(304).header("etag", etag).send();
  return reply.header("content-type", "application/json; charset=utf-8").header("cache-control", "no-cache").header("etag", etag).send(body);
});

app.get<{ Querystring: { limit?: number; after?: number } }>("/api/v1/posts", { schema: { querystring: pageQuery } }, async (request, reply) => {
  const { limit, after = 0 } = request.query;
  const rows = limit === undefined ? q.all.all() : q.page.all(after, limit);
  const posts = rows.map(toPost);
  if (limit !== undefined && rows.length === limit) reply.header("link", `</api/v1/posts?limit=${limit}&after=${rows[rows.length - 1]!.seq}>; rel="next"`);
  reply.header("cache-control", "no-cache");
  if (wantsYaml(request.headers.accept)) return reply.header("content-type", "application/yaml").send(dump({ posts }, { noRefs: true, lineWidth: -1 }));
  return reply.send({ posts });
});

app.post<{ Params: { id: string }; Body: { title: string; body: string; author?: string; tags?: string[] } }>(
  "/api/v1/post/:id",
  { schema: { params: idParams, body: postBody } },
  async (request, reply) => {
    const { id } = request.params;
    const { title, body, author, tags } = request.body;
    const now = new Date().toISOString();
    try {
      q.insert.run(id, title, body, author ?? null, tags === undefined ? null : JSON.stringify(tags), now, now);
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") return reply.code(409).send({ error: "exists" });
      throw error;
    }
    const post = toPost(q.get.get(id)!);
    return reply.code(201).header("location", `/api/v1/post/${encodeURIComponent(id)}`).send({ published: true, post });
  },
);

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" });
console.log(`listening on ${address}`);
const stop = () => void app.close().then(() => (db.close(), process.exit(0)));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
