// The version policy (src/policies/versions.ts) on a table of its own: the
// full paths, the deprecation fields, the per-version counts (a request the
// access policy refuses with 401 included), and the versioned 404; the router
// under it knows none of this.

import t from "tap";
import { accessPolicy, type AccessDeclared } from "../../src/policies/access.js";
import { hashToken } from "../../src/policies/auth.js";
import { applyVersions, type VersionDeclared } from "../../src/policies/versions.js";
import { createRouter } from "../../src/router/router.js";
import { route, type Route } from "../../src/router/route.js";
import { bodilessRequest } from "../helpers/request.js";
import type { Response } from "../../src/http/message/response.js";
import { HttpError } from "../../src/http/message/problem.js";
import { createMemoryStore } from "../../src/store/memory.js";

type Row = Route & VersionDeclared & AccessDeclared;

const request = bodilessRequest;

const reply = (text: string) => (): Response => ({ status: 200, body: text });

const table: Row[] = [
  { method: "GET", version: "v1", path: "/items", summary: "list", handler: reply("list") },
  route({ method: "GET", version: "v1", path: "/items/:id", summary: "one", handler: (_r, p) => ({ status: 200, body: `one ${p.id}` }) }),
  { method: "GET", version: "v2", path: "/items", summary: "v2 list", handler: reply("v2") },
  { method: "DELETE", version: "v2", path: "/items", summary: "admin only", handler: reply("gone"), auth: "admin" },
  {
    method: "GET",
    version: "v1-1",
    path: "/old",
    summary: "deprecated",
    handler: reply("old"),
    deprecated: { since: new Date("2026-01-01T00:00:00Z"), sunset: new Date("2027-01-01T00:00:00Z"), successor: "/api/v2/items" },
  },
  { method: "GET", path: "/", summary: "unversioned", handler: reply("root") },
];

async function served() {
  const store = createMemoryStore();
  await store.tokens.add(hashToken("admin-versions-test-token"), "admin");
  const versioned = applyVersions(table);
  const router = createRouter(versioned.routes, {
    policies: [versioned.policy, accessPolicy({ tokens: store.tokens, writeRequiresToken: false })],
    notFound: versioned.unknownVersion,
  });
  // A refusal is thrown (HttpError) and written by the connection; here, its status is what matters.
  const call = async (method: string, target: string, fields: string[] = []): Promise<Response> => {
    try {
      return await router.handle(request(method, target, fields));
    } catch (error) {
      if (error instanceof HttpError) return error.response;
      throw error;
    }
  };
  return { versioned, router, call };
}

const text = (r: Response) => (typeof r.body === "string" ? r.body : r.body instanceof Uint8Array ? Buffer.from(r.body).toString() : "");

t.test("routes are served below /api/<version>, and listed in the docs under it", async (t) => {
  const { versioned, call } = await served();
  t.same(versioned.versions, ["v1", "v2", "v1-1"]);
  t.equal(text(await call("GET", "/api/v1/items/7")), "one 7");
  t.equal(text(await call("GET", "/api/v2/items")), "v2");
  t.equal(text(await call("GET", "/")), "root", "a route without a version is served as written");
  t.same(
    versioned.routes.map((r) => [r.path, r.group]),
    [["/api/v1/items", "v1"], ["/api/v1/items/:id", "v1"], ["/api/v2/items", "v2"], ["/api/v2/items", "v2"], ["/api/v1-1/old", "v1-1"], ["/", undefined]],
  );
  t.throws(() => applyVersions([{ method: "GET", version: "1", path: "/", summary: "", handler: reply("x") }]), /v<n>/);
});

t.test("deprecated routes carry Deprecation, Sunset and Link, and their docs say so", async (t) => {
  const { call, router } = await served();
  const r = await call("GET", "/api/v1-1/old");
  t.equal(r.headers?.Deprecation, "@1767225600", "RFC 9745 structured date");
  t.equal(r.headers?.Sunset, "Fri, 01 Jan 2027 00:00:00 GMT", "RFC 8594 HTTP-date");
  t.equal(r.headers?.Link, '</api/v2/items>; rel="successor-version"');
  t.equal((await call("GET", "/api/v2/items")).headers?.Deprecation, undefined);
  const old = router.routes.find((r) => r.path === "/api/v1-1/old")!;
  t.match(old.policyDocs, [{ discouraged: true, note: /Deprecated since 2026-01-01: use \/api\/v2\/items/, successHeaders: { Deprecation: /@1767225600/ } }]);
  t.notOk(router.routes.find((r) => r.path === "/api/v2/items")!.policyDocs.some((d) => d.discouraged), "a route not deprecated is not marked");
});

t.test("a deprecated route's answers each carry the fields and their own content, whether the handler returns one frozen object or not", async (t) => {
  // The handler answers from a list, in turn: two frozen objects, one of them again, and one it changes between calls.
  const a: Response = Object.freeze({ status: 200, body: "a" });
  const b: Response = Object.freeze({ status: 200, body: "b" });
  const mutable = { status: 200, body: "m1" };
  const answers: Response[] = [a, a, b, a, mutable, mutable, b];
  let n = 0;
  const versioned = applyVersions<Row>([
    { method: "GET", version: "v1", path: "/turns", summary: "", handler: () => answers[n++]!, deprecated: { since: new Date("2026-01-01T00:00:00Z") } },
  ]);
  const router = createRouter(versioned.routes, { policies: [versioned.policy] });
  const seen: Response[] = [];
  for (let i = 0; i < answers.length; i++) {
    if (i === 5) mutable.body = "m2";
    seen.push(await router.handle(request("GET", "/api/v1/turns")));
  }
  t.same(seen.map(text), ["a", "a", "b", "a", "m1", "m2", "b"]);
  t.ok(seen.every((r) => r.headers?.Deprecation === "@1767225600"));
  t.equal(seen[1], seen[0], "the same frozen answer is the same combined object: nothing allocated per request");
  t.equal(seen[3], seen[0], "also after another answer came in between");
  t.not(seen[5], seen[4], "an answer that is not frozen is combined at each call");
});

t.test("requests are counted per API version, a 404 and a 401 from a versioned route included", async (t) => {
  const { versioned, call } = await served();
  await call("GET", "/api/v1/items");
  await call("GET", "/api/v1/items/1");
  t.equal((await call("DELETE", "/api/v2/items")).status, 401, "no token: refused by the access policy");
  t.equal((await call("DELETE", "/api/v2/items", ["authorization", "Bearer admin-versions-test-token"])).status, 200);
  await call("GET", "/api/v9/items");
  await call("GET", "/");
  t.same(versioned.usage(), { v1: 2, v2: 2, "v1-1": 0 }, "the refused DELETE counts for v2, as a v2 client; /api/v9 and / count for none");
});

t.test("a path naming a version not served gets a 404 that lists those that are", async (t) => {
  const { call } = await served();
  const v = await call("GET", "/api/v7/items");
  t.equal(v.status, 404);
  const p = JSON.parse(text(v));
  t.equal(p.type, "/problems/unknown-version");
  t.match(p.detail, /v1, v2, v1-1/);
  t.equal(JSON.parse(text(await call("GET", "/api/openapi.jsn"))).type, "/problems/not-found", "a segment not shaped like a version is just a path");
});
