// Two policies every route is served under (src/app.ts), each from what the
// route declares: the store's (a database that cannot be reached is a 503
// with Retry-After, wherever in the route's handling the store is read, the
// token check included; documented on the rows that declare `store: true`)
// and the cache's (the declared Cache-Control on every answer below 400, 304s
// included, and on none of the errors; documented from the same declaration).

import t from "tap";
import { createApp } from "../../src/app.js";
import { hashToken } from "../../src/policies/auth.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { StoreUnavailableError } from "../../src/store/errors.js";
import { seed } from "../../src/store/seed.js";
import type { Store } from "../../src/store/types.js";
import { createRouter } from "../../src/router/router.js";
import { cachePolicy, type CacheDeclared } from "../../src/policies/cache.js";
import type { Route } from "../../src/router/route.js";
import { inject } from "../../src/http/connection/inject.js";
import { fail } from "../../src/http/message/problem.js";
import { splitResponses } from "../helpers/wire.js";
import { request } from "../helpers/app.js";
import { bodilessRequest } from "../helpers/request.js";
import type { Response } from "../../src/http/message/response.js";

const ADMIN = "admin-token-store-0123456789";

/** A memory store whose every method, once `down` is set, fails as an unreachable database does. */
async function flakyStore(): Promise<{ store: Store; down: () => void }> {
  const real = createMemoryStore();
  await seed(real);
  await real.tokens.add(hashToken(ADMIN), "admin");
  let isDown = false;
  const failing = <T extends object>(part: T): T =>
    new Proxy(part, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (isDown) return Promise.reject(new StoreUnavailableError("connection refused"));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const store = { ...real, posts: failing(real.posts), articles: failing(real.articles), facts: failing(real.facts), tokens: failing(real.tokens) } as Store;
  return { store, down: () => void (isDown = true) };
}

t.test("an unreachable database: 503 with Retry-After from the routes that use the store and from the token check; the rest answer", async (t) => {
  const { store, down } = await flakyStore();
  const app = createApp({ store });
  t.equal((await request(app, "GET", "/api/v1/post/hello")).status, 404, "up: the store answers");
  down();
  for (const [method, target, headers] of [
    ["GET", "/api/v1/post/hello", {}],
    ["GET", "/api/v2/facts/random", {}],
    ["GET", "/api/v1/artigo/1", {}],
    ["UPDATE", "/api/v1/artigo/1", { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/merge-patch+json" }],
  ] as const) {
    const r = await request(app, method, target, headers, method === "UPDATE" ? '{"title":"x"}' : undefined);
    t.equal(r.status, 503, `${method} ${target}`);
    t.equal(r.headers["retry-after"], "5");
    t.equal(JSON.parse(r.body).type, "/problems/store-unavailable");
    t.equal(r.headers["cache-control"], undefined, "an error carries no freshness");
  }
  t.equal((await request(app, "GET", "/api/v2/status")).status, 200, "a route that never reads the store still answers");
  const doc = JSON.parse((await request(app, "GET", "/api/openapi.json")).body);
  t.ok(doc.paths["/api/v1/post/{id}"].get.responses["503"], "documented where the row declares store: true");
  t.ok(doc.paths["/api/v1/artigo/{id}"].UPDATE ?? doc.paths["/api/v1/artigo/{id}"].additionalOperations?.UPDATE, "the UPDATE operation is documented");
  t.notOk(doc.paths["/api/v2/status"].get.responses["503"], "and nowhere else");
});

t.test("the API's declared Cache-Control, on 200 and 304 alike, from the declaration the docs show", async (t) => {
  const store = createMemoryStore();
  await seed(store);
  await store.posts.create({ id: "c", title: "T", body: "B" });
  const app = createApp({ store });
  const doc = JSON.parse((await request(app, "GET", "/api/openapi.json")).body);
  const documented = (path: string, method: string) => doc.paths[path][method].responses["200"].headers?.["Cache-Control"]?.description as string;
  for (const [target, path, expected] of [
    ["/api/v2/facts/random", "/api/v2/facts/random", "private, max-age=3600"],
    ["/api/usage", "/api/usage", "no-store"],
    ["/api/echo", "/api/echo", "no-store"],
    ["/api/v1/post/c", "/api/v1/post/{id}", "no-cache"],
    ["/api/v2/status", "/api/v2/status", "no-cache"],
  ] as const) {
    const r = await request(app, "GET", target);
    t.equal(r.headers["cache-control"], expected, `GET ${target}`);
    t.match(documented(path, "get"), new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`), `documented as sent: ${path}`);
  }
  const first = await request(app, "GET", "/api/v1/post/c");
  const revalidated = await request(app, "GET", "/api/v1/post/c", { "If-None-Match": first.headers.etag! });
  t.equal(revalidated.status, 304);
  t.equal(revalidated.headers["cache-control"], "no-cache", "the 304 carries the Cache-Control its 200 would (RFC 9110 §15.4.5)");
  const missing = await request(app, "GET", "/api/v1/post/none");
  t.equal(missing.status, 404);
  t.equal(missing.headers["cache-control"], undefined);
});

t.test("the policy alone, on a table of its own: from a parameter, the default, a handler's own value overruled", async (t) => {
  const routes: (Route & CacheDeclared)[] = [
    { method: "GET", path: "/fresh/:seconds", summary: "", cache: { scope: "public", maxAgeParam: "seconds" }, handler: () => ({ status: 200, body: "x" }) },
    { method: "GET", path: "/plain", summary: "", handler: () => ({ status: 200, headers: { "Cache-Control": "max-age=99" }, body: "x" }) },
    { method: "GET", path: "/refused", summary: "", cache: { scope: "public", maxAge: 60 }, handler: () => fail(409, { detail: "no" }) },
    { method: "GET", path: "/refused-unstored", summary: "", cache: "no-store", handler: () => fail(409, { detail: "no" }) },
    { method: "GET", path: "/moved", summary: "", cache: "no-store", handler: () => ({ status: 302, headers: { Location: "/plain" } }) },
  ];
  const router = createRouter(routes, { policies: [cachePolicy] });
  const ask = async (target: string) => splitResponses((await inject(router, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).output)[0]!;
  t.equal((await ask("/fresh/60")).headers["cache-control"], "public, max-age=60", "from the path");
  const plain = await ask("/plain");
  t.equal(plain.headers["cache-control"], "no-cache", "the default, over what the handler said");
  t.equal(plain.fieldOrder.filter((n) => n.toLowerCase() === "cache-control").length, 1, "one field, not two");
  t.equal((await ask("/refused")).headers["cache-control"], undefined, "an error keeps what its problem says: no freshness meant for the resource");
  t.equal((await ask("/refused-unstored")).headers["cache-control"], "no-store", "but no-store, never wrong, is on every answer");
  t.equal((await ask("/moved")).headers["cache-control"], "no-store", "a redirect too");
});

t.test("a frozen answer stays one frozen answer through the policies, so the writer's kept bytes for it are used again", async (t) => {
  const FROZEN = Object.freeze({ status: 200, headers: { "Content-Type": "text/plain" }, body: "same" });
  const router = createRouter([{ method: "GET", path: "/same", summary: "", handler: () => FROZEN } as Route & CacheDeclared], { policies: [cachePolicy] });
  const first = await router.handle(bodilessRequest("GET", "/same"));
  const second = await router.handle(bodilessRequest("GET", "/same"));
  t.ok(Object.isFrozen(first), "the answer with Cache-Control is frozen");
  t.equal(first, second, "and the very same object the next time");
  t.equal(first.headers?.["Cache-Control"], "no-cache");
  const app = createApp({ store: createMemoryStore() });
  const status = (await app.handle(bodilessRequest("GET", "/api/v1/status"))) as Response;
  t.ok(Object.isFrozen(status), "the status endpoint's answer, through every policy of the app, is still frozen");
  t.equal(await app.handle(bodilessRequest("GET", "/api/v1/status")), status, "and the same object each time");
});
