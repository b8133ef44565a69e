// Every row of the endpoint table in docs/api.md (rows 1 to 13), over real
// sockets, with the details that file gives for each.

import t from "tap";
import { load } from "js-yaml";
import { createApp } from "../../src/app.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { SEED_ARTICLES, SEED_FACTS } from "../../src/store/seed.js";
import { listen } from "../helpers/wire.js";
import { ADMIN_TOKEN, bearer, jsonOf, raw, startApi, USER_TOKEN } from "./client.js";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

t.test("row 1: GET /api/v1/status answers `resposta`, with deprecation fields", async (t) => {
  const api = await startApi(t);
  const res = await fetch(`${api.base}/api/v1/status`);
  t.equal(res.status, 200);
  t.equal(res.headers.get("content-type"), "application/json");
  const body = await res.json() as any;
  t.same(Object.keys(body), ["resposta"], "one field, named resposta");
  t.type(body.resposta, "string");
  t.ok(body.resposta.length > 0);
  t.equal(res.headers.get("deprecation"), "@1767225600", "RFC 9745 structured-field date");
  t.equal(res.headers.get("link"), '</api/v2/status>; rel="successor-version"');
  t.equal(res.headers.get("sunset"), null, "no Sunset unless a date is set");
});

t.test("row 1 with a sunset date: the Sunset field is an HTTP-date", async (t) => {
  const app = createApp({ store: createMemoryStore(), v1Sunset: new Date("2027-06-30T00:00:00Z") });
  const s = await listen(app.handle);
  t.teardown(s.close);
  const res = await fetch(`http://127.0.0.1:${s.port}/api/v1/status`);
  t.equal(res.status, 200);
  t.equal(res.headers.get("sunset"), "Wed, 30 Jun 2027 00:00:00 GMT");
  t.equal(res.headers.get("deprecation"), "@1767225600");
});

t.test("row 2: GET /api/v2/status answers `response`, not deprecated", async (t) => {
  const api = await startApi(t);
  const res = await fetch(`${api.base}/api/v2/status`);
  t.equal(res.status, 200);
  t.equal(res.headers.get("content-type"), "application/json");
  const body = await res.json() as any;
  t.same(Object.keys(body), ["response"], "one field, named response");
  t.type(body.response, "string");
  t.equal(res.headers.get("deprecation"), null);
  t.equal(res.headers.get("link"), null);
});

t.test("v1-1 status: v1's `resposta` plus one field, not deprecated", async (t) => {
  const api = await startApi(t);
  const res = await fetch(`${api.base}/api/v1-1/status`);
  t.equal(res.status, 200);
  const body = await res.json() as any;
  t.type(body.resposta, "string");
  t.same(Object.keys(body).length, 2, "v1's field plus one");
  t.equal(body.versao, "v1-1");
  t.equal(res.headers.get("deprecation"), null);
  const v1 = await (await fetch(`${api.base}/api/v1/status`)).json() as any;
  t.equal(body.resposta, v1.resposta, "same message as v1");
});

t.test("rows 3 and 8: GET /api/v1/post and /api/v1/posts list every post, oldest first", async (t) => {
  const api = await startApi(t);
  for (const path of ["/api/v1/post", "/api/v1/posts"]) {
    const empty = await fetch(api.base + path);
    t.equal(empty.status, 200);
    t.same(await empty.json() as any, { posts: [] }, `${path}: empty at first (the seed has no posts)`);
  }
  const ids = ["zeta", "alpha", "m-1"];
  for (const [i, id] of ids.entries()) {
    const res = await fetch(`${api.base}/api/v1/post/${id}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title: `Post ${i}`, body: `Body ${i}` }),
    });
    t.equal(res.status, 201);
  }
  for (const path of ["/api/v1/post", "/api/v1/posts"]) {
    const res = await fetch(api.base + path);
    t.equal(res.status, 200);
    t.equal(res.headers.get("content-type"), "application/json");
    const body = await res.json() as any;
    t.same(Object.keys(body), ["posts"], `${path}: the list wrapper`);
    t.same(body.posts.map((p: { id: string }) => p.id), ids, `${path}: oldest first, not sorted by id`);
    t.same(body.posts[0], { id: "zeta", title: "Post 0", body: "Body 0", publishedAt: body.posts[0].publishedAt, updatedAt: body.posts[0].updatedAt });
  }
  // A post changed later keeps its place.
  const patched = await fetch(`${api.base}/api/v1/post/zeta`, {
    method: "PATCH",
    headers: { "Content-Type": "application/merge-patch+json" },
    body: JSON.stringify({ title: "Changed" }),
  });
  t.equal(patched.status, 200);
  const after = await (await fetch(`${api.base}/api/v1/posts`)).json() as any;
  t.same(after.posts.map((p: { id: string }) => p.id), ids, "an update does not move a post");
});

t.test("row 5: POST /api/v1/post/:id publishes: 201, Location, confirmation", async (t) => {
  const api = await startApi(t);
  const post = { title: "Olá, mundo", body: "Primeiro post.", author: "Ana", tags: ["intro", "http"] };
  const res = await fetch(`${api.base}/api/v1/post/hello-world_1`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(post),
  });
  t.equal(res.status, 201);
  t.equal(res.headers.get("content-type"), "application/json");
  t.equal(res.headers.get("location"), "/api/v1/post/hello-world_1");
  const body = await res.json() as any;
  t.equal(body.published, true);
  t.match(body.post, { id: "hello-world_1", ...post });
  t.match(body.post.publishedAt, RFC3339);
  t.equal(body.post.updatedAt, body.post.publishedAt, "updatedAt equals publishedAt on creation");
  t.same(Object.keys(body.post).sort(), ["author", "body", "id", "publishedAt", "tags", "title", "updatedAt"]);

  const located = await fetch(api.base + res.headers.get("location")!);
  t.equal(located.status, 200, "Location resolves");
  t.same(await located.json() as any, body.post, "and holds the published post");
});

t.test("row 4: GET /api/v1/post/:id answers one post, with an ETag", async (t) => {
  const api = await startApi(t);
  await fetch(`${api.base}/api/v1/post/one`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title":"T","body":"B"}' });
  const res = await fetch(`${api.base}/api/v1/post/one`);
  t.equal(res.status, 200);
  t.equal(res.headers.get("content-type"), "application/json");
  t.match(res.headers.get("etag"), /^"[^"]+"$/, "a strong ETag");
  const post = await res.json() as any;
  t.equal(post.id, "one");
  t.equal(post.title, "T");
  t.equal(post.body, "B");
  t.notOk("author" in post, "no author key when none was given");
  t.notOk("tags" in post, "no tags key when none were given");
});

t.test("row 6: PATCH /api/v1/post/:id answers the updated post", async (t) => {
  const api = await startApi(t);
  const created = await (
    await fetch(`${api.base}/api/v1/post/p`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title":"Old","body":"Text","author":"Ana"}' })
  ).json() as any;
  const res = await fetch(`${api.base}/api/v1/post/p`, {
    method: "PATCH",
    headers: { "Content-Type": "application/merge-patch+json" },
    body: JSON.stringify({ title: "New", tags: ["x"] }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get("content-type"), "application/json");
  const post = await res.json() as any;
  t.same({ id: post.id, title: post.title, body: post.body, author: post.author, tags: post.tags }, { id: "p", title: "New", body: "Text", author: "Ana", tags: ["x"] });
  t.equal(post.publishedAt, created.post.publishedAt, "publishedAt never changes");
  t.ok(post.updatedAt >= created.post.updatedAt, "updatedAt does not go backwards");
  t.same(await (await fetch(`${api.base}/api/v1/post/p`)).json() as any, post, "the change is stored");
});

t.test("row 7: DELETE /api/v1/post/:id deletes the post", async (t) => {
  const api = await startApi(t);
  await fetch(`${api.base}/api/v1/post/gone`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title":"T","body":"B"}' });
  const res = await fetch(`${api.base}/api/v1/post/gone`, { method: "DELETE" });
  t.equal(res.status, 200);
  t.same(await res.json() as any, { deleted: true, id: "gone" });
  t.equal((await fetch(`${api.base}/api/v1/post/gone`)).status, 404, "then it is gone");
  t.same(await (await fetch(`${api.base}/api/v1/posts`)).json() as any, { posts: [] });
  t.equal((await fetch(`${api.base}/api/v1/post/gone`, { method: "DELETE" })).status, 404, "a second DELETE finds nothing");
});

t.test("row 8: GET /api/v1/posts with Content-Type: application/json answers JSON", async (t) => {
  const api = await startApi(t);
  await fetch(`${api.base}/api/v1/post/a`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"title":"A","body":"x"}' });
  const r = await raw(api.port, "GET", "/api/v1/posts", { "Content-Type": "application/json" });
  t.equal(r.status, 200);
  t.equal(r.headers["content-type"], "application/json");
  const body = jsonOf(r);
  t.same(Object.keys(body), ["posts"]);
  t.same(body.posts.map((p: { id: string }) => p.id), ["a"]);
});

t.test("row 9: GET /api/v1/posts with Content-Type: application/yaml answers YAML with the same posts", async (t) => {
  const api = await startApi(t);
  // Values that a careless YAML writer would turn into other types.
  const posts = [
    { id: "y1", title: "123", body: "yes", author: "null", tags: ["true", "1.5", "~", "- dash", "a: b", "#hash"] },
    { id: "y2", title: "Olá: \"quoted\" 'single'", body: "line one\nline two\n\n  indented", tags: [] },
    { id: "y3", title: "2025-01-01", body: "0x1F" },
  ];
  for (const { id, ...fields } of posts) {
    const res = await fetch(`${api.base}/api/v1/post/${id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(fields) });
    t.equal(res.status, 201, `publish ${id}`);
  }
  const asJson = jsonOf(await raw(api.port, "GET", "/api/v1/posts"));
  const r = await raw(api.port, "GET", "/api/v1/posts", { "Content-Type": "application/yaml" });
  t.equal(r.status, 200);
  t.equal(r.headers["content-type"], "application/yaml");
  t.equal(r.headers.vary, "Accept, Content-Type, Accept-Encoding", "a list may be coded, so Accept-Encoding is named whatever its size");
  t.throws(() => JSON.parse(r.body), "the body is not JSON");
  const doc = load(r.body) as { posts: unknown[] };
  t.same(Object.keys(doc), ["posts"], "top-level key posts");
  t.same(doc, asJson, "the YAML document holds exactly what the JSON does, with the same types");
  t.equal(doc.posts.length, 3);
});

t.test("row 10: GET /api/v1/artigo/:id answers 200 to anonymous, standard users and admins", async (t) => {
  const api = await startApi(t);
  const expected = SEED_ARTICLES[0]!;
  for (const [who, headers] of [
    ["anonymous", {}],
    ["a standard user", bearer(USER_TOKEN)],
    ["an administrator", bearer(ADMIN_TOKEN)],
  ] as const) {
    const res = await fetch(`${api.base}/api/v1/artigo/${expected.id}`, { headers });
    t.equal(res.status, 200, who);
    t.equal(res.headers.get("content-type"), "application/json", who);
    const article = await res.json() as any;
    t.same(Object.keys(article).sort(), ["author", "body", "id", "title", "updatedAt"], who);
    t.match(article, { id: expected.id, title: expected.title, body: expected.body, author: expected.author }, who);
    t.match(article.updatedAt, RFC3339);
  }
  for (const a of SEED_ARTICLES) t.equal((await fetch(`${api.base}/api/v1/artigo/${a.id}`)).status, 200, `seeded article ${a.id}`);
});

t.test("row 11: UPDATE /api/v1/artigo/:id: 401 for a standard user, 200 for an administrator", async (t) => {
  const api = await startApi(t);
  const before = await (await fetch(`${api.base}/api/v1/artigo/2`)).json() as any;
  const patch = JSON.stringify({ title: "Status codes, revisited" });
  const asUser = await fetch(`${api.base}/api/v1/artigo/2`, {
    method: "UPDATE",
    headers: { ...bearer(USER_TOKEN), "Content-Type": "application/merge-patch+json" },
    body: patch,
  });
  t.equal(asUser.status, 401);
  t.match(asUser.headers.get("www-authenticate"), /^Bearer/);
  t.same(await (await fetch(`${api.base}/api/v1/artigo/2`)).json() as any, before, "a refused update changes nothing");

  const asAdmin = await fetch(`${api.base}/api/v1/artigo/2`, {
    method: "UPDATE",
    headers: { ...bearer(ADMIN_TOKEN), "Content-Type": "application/merge-patch+json" },
    body: patch,
  });
  t.equal(asAdmin.status, 200);
  t.equal(asAdmin.headers.get("content-type"), "application/json");
  const updated = await asAdmin.json() as any;
  t.same({ ...updated, updatedAt: undefined }, { ...before, title: "Status codes, revisited", updatedAt: undefined });
  t.ok(updated.updatedAt >= before.updatedAt);
  t.same(await (await fetch(`${api.base}/api/v1/artigo/2`)).json() as any, updated, "the change is stored");
});

t.test("row 12: GET /api/v2/facts/random: exact Content-Type and Cache-Control, string id/text/source", async (t) => {
  const api = await startApi(t);
  const texts = new Set(SEED_FACTS.map((f) => f.text));
  for (let i = 0; i < 5; i++) {
    const r = await raw(api.port, "GET", "/api/v2/facts/random");
    t.equal(r.status, 200);
    t.equal(r.headers["content-type"], "application/json", "exactly application/json");
    t.equal(r.headers["cache-control"], "private, max-age=3600", "exactly private, max-age=3600");
    const fact = jsonOf(r);
    t.type(fact.id, "string");
    t.type(fact.text, "string");
    t.type(fact.source, "string");
    t.ok(texts.has(fact.text), "a seeded fact");
    t.ok(fact.source.length > 0, "with a source");
  }
});

t.test("row 13: POST /api/v2/facts with text/plain: 201, Location resolves, source api", async (t) => {
  const api = await startApi(t);
  const text = "The 103 status code, Early Hints, lets a server send header fields before the final response.";
  const res = await fetch(`${api.base}/api/v2/facts`, {
    method: "POST",
    headers: { "Content-Type": "text/plain; charset=utf-8" },
    body: `  ${text}\n`,
  });
  t.equal(res.status, 201);
  t.equal(res.headers.get("content-type"), "application/json");
  const fact = await res.json() as any;
  t.type(fact.id, "string");
  t.equal(fact.text, text, "trimmed");
  t.equal(fact.source, "api");
  t.match(fact.createdAt, RFC3339);
  const location = res.headers.get("location");
  t.equal(location, `/api/v2/facts/${fact.id}`);
  const got = await fetch(api.base + location!);
  t.equal(got.status, 200, "Location resolves via GET /api/v2/facts/:id");
  t.equal(got.headers.get("content-type"), "application/json");
  t.same(await got.json() as any, fact);

  const plain = await fetch(`${api.base}/api/v2/facts`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "Ünïcödé façt — 500 characters max." });
  t.equal(plain.status, 201, "text/plain without charset is UTF-8");
  t.equal((await plain.json() as any).text, "Ünïcödé façt — 500 characters max.");
  t.equal((await api.store.facts.list()).length, SEED_FACTS.length + 2, "both stored");
});

t.test("GET /api/v2/facts/:id serves each seeded fact", async (t) => {
  const api = await startApi(t);
  const res = await fetch(`${api.base}/api/v2/facts/1`);
  t.equal(res.status, 200);
  t.match(res.headers.get("etag"), /^"[^"]+"$/);
  const fact = await res.json() as any;
  t.match(fact, { id: "1", text: SEED_FACTS[0]!.text, source: SEED_FACTS[0]!.source });
});
