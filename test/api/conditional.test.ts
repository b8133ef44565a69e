// Conditional requests (RFC 9110 §13.1): single-resource GETs carry a strong
// ETag; If-None-Match gives 304 without content; If-Match on PATCH and UPDATE
// gives 412 when stale, and a stale write changes nothing.

import t from "tap";
import { ADMIN_TOKEN, checkProblem, jsonOf, raw, startApi, type Api } from "./client.js";

interface Resource {
  readonly name: string;
  readonly target: string;
  setup?(api: Api): Promise<void>;
}

const RESOURCES: readonly Resource[] = [
  { name: "post", target: "/api/v1/post/cond", setup: async (api) => void await api.store.posts.create({ id: "cond", title: "T", body: "B", tags: ["a"] }) },
  { name: "article", target: "/api/v1/artigo/1" },
  { name: "fact", target: "/api/v2/facts/3" },
];

for (const resource of RESOURCES) {
  t.test(`If-None-Match on a ${resource.name}`, async (t) => {
    const api = await startApi(t);
    await resource.setup?.(api);
    const first = await raw(api.port, "GET", resource.target);
    t.equal(first.status, 200);
    const etag = first.headers.etag!;
    t.match(etag, /^"[!#-~]+"$/, "a strong entity tag");
    const again = await raw(api.port, "GET", resource.target);
    t.equal(again.headers.etag, etag, "the same representation has the same tag");

    for (const [what, field] of [
      ["its ETag", etag],
      ["*", "*"],
      ["a list holding its ETag", `"other", ${etag}`],
      ["its ETag as a weak tag (weak comparison)", `W/${etag}`],
    ] as const) {
      await t.test(`If-None-Match: ${what} -> 304`, async (t) => {
        const r = await raw(api.port, "GET", resource.target, { "If-None-Match": field });
        t.equal(r.status, 304);
        t.equal(r.body, "", "no content");
        t.equal(r.headers["content-length"], undefined, "no Content-Length on a 304");
        t.equal(r.headers.etag, etag, "the 304 carries the ETag");
      });
    }
    for (const [what, field] of [
      ["another tag", '"not-the-tag"'],
      ["a list of other tags", '"a", "b"'],
      ["its ETag without quotes", etag.slice(1, -1)],
    ] as const) {
      await t.test(`If-None-Match: ${what} -> 200`, async (t) => {
        const r = await raw(api.port, "GET", resource.target, { "If-None-Match": field });
        t.equal(r.status, 200);
        t.equal(r.body, first.body, "the full representation");
        t.equal(r.headers.etag, etag);
      });
    }
  });
}

t.test("If-Match on PATCH /api/v1/post/:id", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "Original", body: "B" });
  const get = await raw(api.port, "GET", "/api/v1/post/p");
  const etag = get.headers.etag!;
  const patch = (ifMatch: string, title: string) =>
    raw(api.port, "PATCH", "/api/v1/post/p", { "Content-Type": "application/merge-patch+json", "If-Match": ifMatch }, JSON.stringify({ title }));

  for (const stale of ['"stale"', `W/${etag}`, etag.slice(1, -1)]) {
    const r = await patch(stale, "Lost update");
    const weak = stale === `W/${etag}`;
    // The weak form of the current tag never matches (strong comparison): the post did not change, and the detail must not say it did.
    checkProblem(t, r, 412, weak ? /is the current ETag as a weak tag, and If-Match compares strongly/ : /the resource changed since you read it/, "/api/v1/post/p");
    const now = await raw(api.port, "GET", "/api/v1/post/p");
    t.equal(now.body, get.body, `${stale}: nothing changed`);
    t.equal(now.headers.etag, etag, `${stale}: same ETag`);
  }

  const ok = await patch(etag, "Changed");
  t.equal(ok.status, 200, "the current tag: 200");
  t.equal(jsonOf(ok).title, "Changed");
  const newTag = ok.headers.etag;
  t.ok(newTag !== undefined && newTag !== etag, "the ETag changed with the post");
  const after = await raw(api.port, "GET", "/api/v1/post/p");
  t.equal(after.headers.etag, newTag, "the PATCH response's ETag is the one GET now gives");
  t.equal(after.body, ok.body);

  const lost = await patch(etag, "Lost update");
  checkProblem(t, lost, 412, /If-Match/, "/api/v1/post/p");
  t.equal((await api.store.posts.get("p"))?.title, "Changed", "the old tag is now stale");

  const listed = await patch(`"x", ${newTag}`, "Listed");
  t.equal(listed.status, 200, "a list holding the current tag matches");
  const star = await patch("*", "Any");
  t.equal(star.status, 200, "If-Match: * matches an existing post");
  t.equal((await api.store.posts.get("p"))?.title, "Any");
});

t.test("If-Match on UPDATE /api/v1/artigo/:id", async (t) => {
  const api = await startApi(t);
  const get = await raw(api.port, "GET", "/api/v1/artigo/2");
  const etag = get.headers.etag!;
  const update = (ifMatch: string, title: string) =>
    raw(
      api.port,
      "UPDATE",
      "/api/v1/artigo/2",
      { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/merge-patch+json", "If-Match": ifMatch },
      JSON.stringify({ title }),
    );

  const stale = await update('"stale"', "Lost update");
  checkProblem(t, stale, 412, /If-Match.*"stale"/, "/api/v1/artigo/2");
  const unchanged = await raw(api.port, "GET", "/api/v1/artigo/2");
  t.equal(unchanged.body, get.body, "nothing changed");
  t.equal(unchanged.headers.etag, etag);

  const ok = await update(etag, "Codes, class by class");
  t.equal(ok.status, 200);
  t.equal(jsonOf(ok).title, "Codes, class by class");
  t.not(ok.headers.etag, etag, "the ETag changed with the article");
  const after = await raw(api.port, "GET", "/api/v1/artigo/2");
  t.equal(after.headers.etag, ok.headers.etag);

  const again = await update(etag, "Lost update");
  t.equal(again.status, 412, "the old tag is stale now");
  t.equal((await api.store.articles.get("2"))?.title, "Codes, class by class");

  const cached = await raw(api.port, "GET", "/api/v1/artigo/2", { "If-None-Match": etag });
  t.equal(cached.status, 200, "a cache holding the old tag gets the new representation");
  const fresh = await raw(api.port, "GET", "/api/v1/artigo/2", { "If-None-Match": ok.headers.etag! });
  t.equal(fresh.status, 304, "and the new tag revalidates");
});

t.test("a write without If-Match is unconditional", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  const r = await raw(api.port, "PATCH", "/api/v1/post/p", { "Content-Type": "application/json" }, '{"body":"New"}');
  t.equal(r.status, 200);
  t.equal(jsonOf(r).body, "New");
});

// RFC 9110 §13.1.2: when If-None-Match evaluates to false, "an origin server
// MUST NOT perform the requested method"; it answers 304 only to GET or HEAD
// and 412 to every other method. A PATCH is never answered with a 304.
for (const [name, method, target, headers] of [
  ["PATCH /api/v1/post/:id", "PATCH", "/api/v1/post/inm", { "Content-Type": "application/merge-patch+json" }],
  ["UPDATE /api/v1/artigo/:id", "UPDATE", "/api/v1/artigo/1", { "Content-Type": "application/merge-patch+json", Authorization: `Bearer ${ADMIN_TOKEN}` }],
] as const) {
  t.test(`If-None-Match on ${name} is a precondition: 412 and nothing changed`, async (t) => {
    const api = await startApi(t);
    await api.store.posts.create({ id: "inm", title: "Original", body: "B", author: "Ana" });
    const before = await raw(api.port, "GET", target);
    for (const field of ["*", before.headers.etag!]) {
      const r = await raw(api.port, method, target, { ...headers, "If-None-Match": field }, JSON.stringify({ title: `Changed with ${field}` }));
      t.not(r.status, 304, `If-None-Match: ${field}: a ${method} is never answered 304`);
      checkProblem(t, r, 412, /If-None-Match/, target);
      const now = await raw(api.port, "GET", target);
      t.equal(now.body, before.body, `If-None-Match: ${field}: nothing changed`);
    }
    const other = await raw(api.port, method, target, { ...headers, "If-None-Match": '"some-other-tag"' }, JSON.stringify({ title: "Changed" }));
    t.equal(other.status, 200, "a tag that does not match lets the write through");
    t.equal(jsonOf(other).title, "Changed");
  });
}

// RFC 9110 §13.1.1: "An origin server MUST NOT perform the requested method if
// a received If-Match condition evaluates to false." A client that deletes
// only what it last saw must not lose someone else's change.
t.test("If-Match on DELETE /api/v1/post/:id: stale -> 412 and not deleted; current -> 200", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "d", title: "T", body: "B" });
  const etag = (await raw(api.port, "GET", "/api/v1/post/d")).headers.etag!;
  const stale = await raw(api.port, "DELETE", "/api/v1/post/d", { "If-Match": '"stale"' });
  checkProblem(t, stale, 412, /If-Match/, "/api/v1/post/d");
  t.not(await api.store.posts.get("d"), undefined, "the post was not deleted");
  const current = await raw(api.port, "DELETE", "/api/v1/post/d", { "If-Match": etag });
  t.equal(current.status, 200);
  t.equal(await api.store.posts.get("d"), undefined, "deleted with the current tag");
});
