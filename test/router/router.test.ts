// The route table: compilation checks, lookup, and the answers HTTP defines.
// The API's versions on top of it are the version policy's (test/policies/versions.test.ts).

import t from "tap";
import { createRouter } from "../../src/router/router.js";
import { route, type Route } from "../../src/router/route.js";
import { bodilessRequest } from "../helpers/request.js";
import type { Response } from "../../src/http/message/response.js";

const request = bodilessRequest;

const reply = (text: string) => (): Response => ({ status: 200, body: text });

const routes: Route[] = [
  { method: "GET", path: "/api/v1/items", summary: "list", handler: reply("list") },
  route({ method: "GET", path: "/api/v1/items/:id", summary: "one", handler: (_r, p) => ({ status: 200, body: `one ${p.id}` }) }),
  route({ method: "UPDATE", path: "/api/v1/items/:id", summary: "update", handler: (_r, p) => ({ status: 200, body: `upd ${p.id}` }) }),
  { method: "GET", path: "/api/v1/items/special", summary: "static beats param", handler: reply("special") },
  { method: "GET", path: "/api/v2/items", summary: "v2 list", handler: reply("v2") },
  { method: "GET", path: "/", summary: "root", handler: reply("root") },
];

const router = createRouter(routes);
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

t.test("lookups give the same answer in any order: the last one found is no answer for another method or path", async (t) => {
  const table = createRouter([
    { method: "GET", path: "/a", summary: "", handler: reply("get a") },
    { method: "POST", path: "/a", summary: "", handler: reply("post a") },
    { method: "GET", path: "/ab", summary: "", handler: reply("get ab") },
    { method: "GET", path: "/b", summary: "", handler: reply("get b") },
    route({ method: "GET", path: "/a/:id", summary: "", handler: (_r, p) => ({ status: 200, body: `a ${p.id}` }) }),
  ]).table;
  const answer = (method: string, path: string) => {
    const m = table.lookup(method, path);
    return m.kind === "found" ? `${m.kind} ${m.route.method} ${m.route.path}` : m.kind;
  };
  // Each differs from the one before by a little: the method, the path, a path that extends it, one with parameters.
  const expected: [string, string, string][] = [
    ["GET", "/a", "found GET /a"],
    ["GET", "/a", "found GET /a"],
    ["POST", "/a", "found POST /a"],
    ["GET", "/a", "found GET /a"],
    ["HEAD", "/a", "found GET /a"],
    ["DELETE", "/a", "method-not-allowed"],
    ["GET", "/ab", "found GET /ab"],
    ["GET", "/a", "found GET /a"],
    ["GET", "/b", "found GET /b"],
    ["GET", "/a/1", "found GET /a/:id"],
    ["GET", "/a", "found GET /a"],
    ["PUT", "/a", "method-not-allowed"],
    ["GET", "/c", "not-found"],
    ["GET", "/a", "found GET /a"],
    ["get", "/a", "method-not-allowed"],
    ["GET", "/a", "found GET /a"],
  ];
  for (const order of [expected, [...expected].reverse()]) t.same(order.map(([method, path]) => answer(method, path)), order.map(([, , found]) => found));
  // A path built at run time (not the same string object as the last one) finds the same route.
  t.equal(answer("GET", ["", "a"].join("/")), "found GET /a");
  t.equal(answer(["P", "OST"].join(""), "/a"), "found POST /a");
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

t.test("404 for unknown paths says only what the router knows", async (t) => {
  const r = await call("GET", "/api/v1/nothing");
  t.equal(r.status, 404);
  t.equal(JSON.parse(body(r)).type, "/problems/not-found");
  t.notMatch(JSON.parse(body(r)).detail, /GET \//, "a library app's 404 points to no page it does not serve");
  t.equal(JSON.parse(body(await call("GET", "/api/v7/items"))).type, "/problems/not-found", "/api/v7/... is a path like any other");
  t.equal((await call("GET", "/api/v1/items/")).status, 404, "an empty parameter segment does not match");
  t.equal((await call("GET", "/api/v1/items/1/2")).status, 404);
});

t.test("malformed percent-encoding in a parameter is a 400", async (t) => {
  const r = await call("GET", "/api/v1/items/%E0%A4%A");
  t.equal(r.status, 400);
  t.equal(JSON.parse(body(r)).type, "/problems/bad-path");
});

t.test("a 400 for a bad path segment says what is wrong with it, truly, and how to write it", async (t) => {
  // Well-formed escapes (RFC 3986 §2.1) of bytes that are not UTF-8: the escapes are not what is wrong.
  const notUtf8 = JSON.parse(body(await call("GET", "/api/v1/items/%FF%FE"))).detail as string;
  t.notMatch(notUtf8, /malformed percent-encoding/, "well-formed escapes are not called malformed");
  t.match(notUtf8, /not UTF-8/, "it says the decoded bytes are not UTF-8");
  t.match(notUtf8, /%C3%A9/, "and shows how a character is escaped: its UTF-8 bytes");
  // A % that does not start an escape.
  for (const target of ["/api/v1/items/100%", "/api/v1/items/a%zzb", "/api/v1/items/%4"]) {
    const detail = JSON.parse(body(await call("GET", target))).detail as string;
    t.match(detail, /two hex digits/, `${target}: it says what a % must be followed by`);
    t.match(detail, /%25/, `${target}: and how to send a literal %`);
  }
});

t.test("the table is checked when compiled", async (t) => {
  const h = reply("x");
  t.throws(() => createRouter([{ method: "GE T", path: "/", summary: "", handler: h }]), /not a token/);
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
