// JSON Merge Patch (RFC 7396) on PATCH /api/v1/post/:id and UPDATE
// /api/v1/artigo/:id: null removes a member, arrays and other non-objects
// replace, a patch that is not an object is a 422, both media types work, and
// "__proto__" is just an unknown field that reaches no prototype.

import t from "tap";
import { ADMIN_TOKEN, checkProblem, jsonOf, raw, startApi, type Api } from "./client.js";

const MP = { "Content-Type": "application/merge-patch+json" };

function patchPost(api: Api, id: string, patch: string, type = "application/merge-patch+json") {
  return raw(api.port, "PATCH", `/api/v1/post/${id}`, { "Content-Type": type }, patch);
}

function fieldsOf(post: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, publishedAt: _p, updatedAt: _u, ...fields } = post;
  return fields;
}

t.test("null removes author and tags; other members stay", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B", author: "Ana", tags: ["a", "b"] });
  const r = await patchPost(api, "p", JSON.stringify({ author: null, tags: null }));
  t.equal(r.status, 200);
  const post = jsonOf(r);
  t.same(fieldsOf(post), { title: "T", body: "B" });
  t.notOk("author" in post, "author is gone, not null");
  t.notOk("tags" in post, "tags are gone, not null");
  const stored = jsonOf(await raw(api.port, "GET", "/api/v1/post/p"));
  t.same(fieldsOf(stored), { title: "T", body: "B" }, "and stays gone");

  const again = await patchPost(api, "p", JSON.stringify({ author: null }));
  t.equal(again.status, 200, "removing a member that is absent is no error");
  t.same(fieldsOf(jsonOf(again)), { title: "T", body: "B" });

  const back = await patchPost(api, "p", JSON.stringify({ author: "Bia", tags: [] }));
  t.same(fieldsOf(jsonOf(back)), { title: "T", body: "B", author: "Bia", tags: [] }, "an empty tags array is kept");
});

t.test("arrays and nested values replace, never merge", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B", tags: ["a", "b", "c"] });
  const r = await patchPost(api, "p", JSON.stringify({ tags: ["z"] }));
  t.equal(r.status, 200);
  t.same(jsonOf(r).tags, ["z"], "the array is replaced as a whole");

  const asObject = await patchPost(api, "p", JSON.stringify({ tags: { "0": "y" } }));
  checkProblem(t, asObject, 422, /"tags" must be a array/, "/api/v1/post/p");
  const nested = await patchPost(api, "p", JSON.stringify({ author: { name: "Ana" } }));
  checkProblem(t, nested, 422, /"author" must be a string/, "/api/v1/post/p");
  const deep = await patchPost(api, "p", JSON.stringify({ title: { a: { b: null } } }));
  checkProblem(t, deep, 422, /"title" must be a string/, "/api/v1/post/p");
  t.same((await api.store.posts.get("p"))?.tags, ["z"], "the failed patches changed nothing");

  const empty = await patchPost(api, "p", "{}");
  t.equal(empty.status, 200, "an empty patch is a no-op");
  t.same(fieldsOf(jsonOf(empty)), { title: "T", body: "B", tags: ["z"] });
});

t.test("a patch that is not a JSON object is a 422", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  for (const patch of ["[]", '[{"title":"x"}]', '"title"', "42", "true", "null"]) {
    const r = await patchPost(api, "p", patch);
    checkProblem(t, r, 422, /merge patch .* must be a JSON object/, "/api/v1/post/p");
    const a = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` }, patch);
    checkProblem(t, a, 422, /merge patch .* must be a JSON object/, "/api/v1/artigo/1");
  }
  t.equal((await api.store.posts.get("p"))?.title, "T");
});

t.test("application/merge-patch+json and application/json are both accepted", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  for (const [i, type] of ["application/merge-patch+json", "application/json", "application/merge-patch+json; charset=utf-8", "Application/JSON"].entries()) {
    const r = await patchPost(api, "p", JSON.stringify({ title: `T${i}` }), type);
    t.equal(r.status, 200, type);
    t.equal(jsonOf(r).title, `T${i}`, type);
    const a = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { "Content-Type": type, Authorization: `Bearer ${ADMIN_TOKEN}` }, JSON.stringify({ author: `A${i}` }));
    t.equal(a.status, 200, `article, ${type}`);
    t.equal(jsonOf(a).author, `A${i}`);
  }
});

t.test("the article update is a merge patch too", async (t) => {
  const api = await startApi(t);
  const before = (await api.store.articles.get("3"))!;
  const r = await raw(api.port, "UPDATE", "/api/v1/artigo/3", { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` }, JSON.stringify({ author: "Someone" }));
  t.equal(r.status, 200);
  const article = jsonOf(r);
  t.same({ id: article.id, title: article.title, body: article.body, author: article.author }, { id: "3", title: before.title, body: before.body, author: "Someone" }, "only author changed");
});

t.test('"__proto__" is an unknown field and pollutes nothing', async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  const patches = [
    '{"__proto__": {"polluted": "yes"}}',
    '{"__proto__": {"title": "from the prototype", "isAdmin": true}}',
    '{"title": "Fine", "__proto__": {"polluted": "yes"}}',
  ];
  for (const patch of patches) {
    const r = await patchPost(api, "p", patch);
    checkProblem(t, r, 422, /"__proto__" is not a field/, "/api/v1/post/p");
    const a = await raw(api.port, "UPDATE", "/api/v1/artigo/1", { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` }, patch);
    checkProblem(t, a, 422, /"__proto__" is not a field/, "/api/v1/artigo/1");
  }
  const published = await raw(api.port, "POST", "/api/v1/post/q", { "Content-Type": "application/json" }, '{"title":"T","body":"B","__proto__":{"polluted":"yes"}}');
  checkProblem(t, published, 422, /"__proto__" is not a field/, "/api/v1/post/q");
  const ctor = await patchPost(api, "p", '{"constructor": {"prototype": {"polluted": "yes"}}}');
  checkProblem(t, ctor, 422, /"constructor" is not a field/, "/api/v1/post/p");

  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), protoBefore, "Object.prototype has the same members");
  t.equal(({} as Record<string, unknown>).polluted, undefined, "a new object has no polluted member");
  t.equal(({} as Record<string, unknown>).isAdmin, undefined);
  t.equal(Object.getPrototypeOf(await api.store.posts.get("p")), Object.prototype);
  t.same(fieldsOf(jsonOf(await raw(api.port, "GET", "/api/v1/post/p"))), { title: "T", body: "B" }, "the post is unchanged");
  t.equal(await api.store.posts.get("q"), undefined, "nothing was published");
});

// A 60 KB body (well under the 1 MiB limit) nesting objects 10,000 deep: it is
// valid JSON that breaks the resource's rules, a client error, never a 500.
for (const [name, method, target, headers] of [
  ["PATCH /api/v1/post/:id", "PATCH", "/api/v1/post/p", MP],
  ["UPDATE /api/v1/artigo/:id", "UPDATE", "/api/v1/artigo/1", { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` }],
] as const) {
  t.test(`a deeply nested merge patch on ${name} is a client error, not a 500`, async (t) => {
    const api = await startApi(t);
    await api.store.posts.create({ id: "p", title: "T", body: "B" });
    const before = await raw(api.port, "GET", target);
    for (const depth of [1_000, 10_000, 100_000]) {
      const deep = '{"title":' + '{"a":'.repeat(depth) + "1" + "}".repeat(depth) + "}";
      const r = await raw(api.port, method, target, headers, deep);
      t.ok(r.status === 400 || r.status === 422, `depth ${depth}: 400 or 422, got ${r.status}`);
      t.equal(r.headers["content-type"], "application/problem+json");
    }
    t.equal((await raw(api.port, "GET", target)).body, before.body, "nothing changed");
  });
}
