// The route table: compilation checks, lookup, and the answers HTTP defines;
// with the API's versions applied on top (src/api/versions.ts): deprecation
// fields, usage counts and the versioned 404, which the router itself knows nothing of.

import t from "tap";
import { applyVersions, type VersionedRoute } from "../../src/api/versions.js";
import { createRouter } from "../../src/router/router.js";
import type { Request } from "../../src/http/message/request.js";
import type { Response } from "../../src/http/message/response.js";

function request(method: string, target: string): Request {
  const q = target.indexOf("?");
  return {
    method,
    target,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? "" : target.slice(q + 1),
    minor: 1,
    fields: ["host", "t"],
    host: "t",
    framing: { kind: "none" },
    keepAlive: true,
    expectContinue: false,
    body: Buffer.alloc(0),
  };
}

const reply = (text: string) => (): Response => ({ status: 200, body: text });

const routes: VersionedRoute[] = [
  { method: "GET", version: "v1", path: "/items", summary: "list", handler: reply("list") },
  { method: "GET", version: "v1", path: "/items/:id", summary: "one", handler: (_r, p) => ({ status: 200, body: `one ${p.id}` }) },
  { method: "UPDATE", version: "v1", path: "/items/:id", summary: "update", handler: (_r, p) => ({ status: 200, body: `upd ${p.id}` }) },
  { method: "GET", version: "v1", path: "/items/special", summary: "static beats param", handler: reply("special") },
  { method: "GET", version: "v2", path: "/items", summary: "v2 list", handler: reply("v2"), deprecated: undefined },
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

const versioned = applyVersions(routes);
const router = createRouter(versioned.routes, { notFound: versioned.unknownVersion });
const call = async (method: string, target: string) => router.handle(request(method, target));
const body = (r: Response) => (typeof r.body === "string" ? r.body : r.body instanceof Uint8Array ? Buffer.from(r.body).toString() : "");

t.test("static paths, parameters, and static segments that win over a parameter", async (t) => {
  t.equal(body(await call("GET", "/api/v1/items")), "list");
  t.equal(body(await call("GET", "/api/v1/items/7")), "one 7");
  t.equal(body(await call("GET", "/api/v1/items/special")), "special");
  t.equal(body(await call("GET", "/api/v1/items/caf%C3%A9")), "one café", "parameters are percent-decoded");
  t.equal(body(await call("GET", "/")), "root");
  t.equal(body(await call("GET", "/api/v1/items?x=1")), "list", "the query does not take part in routing");
});

t.test("any method token routes, case-sensitively", async (t) => {
  t.equal(body(await call("UPDATE", "/api/v1/items/3")), "upd 3");
  const lower = await call("update", "/api/v1/items/3");
  t.equal(lower.status, 405, "methods are case-sensitive (RFC 9110 §9.1)");
  t.match(JSON.parse(body(lower)).detail, /case-sensitive.*send UPDATE/, "the 405 says why, when the uppercase form is served");
  const other = await call("DELETE", "/api/v1/items/3");
  t.notMatch(JSON.parse(body(other)).detail, /case-sensitive/, "and only then");
});

t.test("405 with Allow for a known path and another method", async (t) => {
  const r = await call("DELETE", "/api/v1/items/3");
  t.equal(r.status, 405);
  t.equal(r.headers?.Allow, "GET, HEAD, OPTIONS, UPDATE");
  t.match(JSON.parse(body(r)), { type: "/problems/method-not-allowed", status: 405 });
});

t.test("HEAD is served by GET; OPTIONS answers 204 with Allow from the table", async (t) => {
  t.equal(body(await call("HEAD", "/api/v1/items")), "list");
  const o = await call("OPTIONS", "/api/v1/items/9");
  t.equal(o.status, 204);
  t.equal(o.headers?.Allow, "GET, HEAD, OPTIONS, UPDATE");
  const star = await call("OPTIONS", "*");
  t.equal(star.status, 204);
  t.equal(star.headers?.Allow, "GET, HEAD, OPTIONS, UPDATE");
});

t.test("404 for unknown paths; unknown versions list the versions served", async (t) => {
  const r = await call("GET", "/api/v1/nothing");
  t.equal(r.status, 404);
  t.equal(JSON.parse(body(r)).type, "/problems/not-found");
  const v = await call("GET", "/api/v7/items");
  t.equal(v.status, 404);
  const p = JSON.parse(body(v));
  t.equal(p.type, "/problems/unknown-version");
  t.match(p.detail, /v1, v2, v1-1/);
  t.equal((await call("GET", "/api/v1/items/")).status, 404, "an empty parameter segment does not match");
  t.equal((await call("GET", "/api/v1/items/1/2")).status, 404);
});

t.test("malformed percent-encoding in a parameter is a 400", async (t) => {
  const r = await call("GET", "/api/v1/items/%E0%A4%A");
  t.equal(r.status, 400);
  t.equal(JSON.parse(body(r)).type, "/problems/bad-path");
});

t.test("deprecated routes carry Deprecation, Sunset and Link", async (t) => {
  const r = await call("GET", "/api/v1-1/old");
  t.equal(r.headers?.Deprecation, "@1767225600", "RFC 9745 structured date");
  t.equal(r.headers?.Sunset, "Fri, 01 Jan 2027 00:00:00 GMT", "RFC 8594 HTTP-date");
  t.equal(r.headers?.Link, '</api/v2/items>; rel="successor-version"');
  t.equal((await call("GET", "/api/v2/items")).headers?.Deprecation, undefined);
});

t.test("requests are counted per API version", async (t) => {
  const v = applyVersions(routes);
  const r = createRouter(v.routes, { notFound: v.unknownVersion });
  await r.handle(request("GET", "/api/v1/items"));
  await r.handle(request("GET", "/api/v1/items/1"));
  await r.handle(request("GET", "/api/v2/items"));
  await r.handle(request("GET", "/api/v9/items"));
  t.same(v.usage(), { v1: 2, v2: 1, "v1-1": 0 });
});

t.test("the router alone knows no versions: /api/v7/... is a path like any other", async (t) => {
  const plain = createRouter(versioned.routes);
  const r = await plain.handle(request("GET", "/api/v7/items"));
  t.equal(JSON.parse(body(r)).type, "/problems/not-found");
});

t.test("the table is checked when compiled", async (t) => {
  const h = reply("x");
  t.throws(() => createRouter([{ method: "GE T", path: "/", summary: "", handler: h }]), /not a token/);
  t.throws(() => applyVersions([{ method: "GET", version: "1", path: "/", summary: "", handler: h }]), /v<n>/);
  t.throws(() => createRouter([{ method: "GET", path: "x", summary: "", handler: h }]), /start with/);
  t.throws(
    () =>
      createRouter([
        { method: "GET", path: "/a", summary: "", handler: h },
        { method: "GET", path: "/a", summary: "", handler: h },
      ]),
    /twice/,
  );
  t.throws(
    () =>
      createRouter([
        { method: "GET", path: "/a/:id", summary: "", handler: h },
        { method: "PUT", path: "/a/:key", summary: "", handler: h },
      ]),
    /disagree/,
  );
});
