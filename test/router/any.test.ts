// Routes that serve any method ("*") and trailing `*name` segments that take
// the rest of a path: what they match, what they leave to more specific
// routes, and what OPTIONS, HEAD and Allow say about them.

import t from "tap";
import { createRouter } from "../../src/router/router.js";
import { ANY_METHOD, type Route } from "../../src/router/route.js";
import type { Request } from "../../src/http/message/request.js";
import { bodilessRequest } from "../helpers/request.js";
import type { Response } from "../../src/http/message/response.js";

const request = bodilessRequest;

/** A handler that says which route answered, with what method and parameters. */
const tell =
  (name: string) =>
  (r: Request, params: Readonly<Record<string, string>>): Response => ({ status: 200, body: JSON.stringify({ name, method: r.method, params }) });

const routes: Route[] = [
  { method: ANY_METHOD, path: "/echo", summary: "any method", handler: tell("echo") },
  { method: ANY_METHOD, path: "/echo/*rest", summary: "any method, any path below", handler: tell("echo-below") },
  { method: "DELETE", path: "/echo/*rest", summary: "a method of its own beside the wildcard method", handler: tell("echo-delete") },
  { method: "GET", path: "/echo/fixed", summary: "a static path below the wildcard", handler: tell("fixed") },
  { method: "GET", path: "/echo/fixed/deeper", summary: "deeper static", handler: tell("deeper") },
  { method: "GET", path: "/files/:id", summary: "param", handler: tell("file") },
  { method: "GET", path: "/files/*rest", summary: "wildcard beside a param", handler: tell("files-rest") },
  { method: "GET", path: "/u/:id/*rest", summary: "param before a wildcard", handler: tell("user-rest") },
  { method: "GET", path: "/t/:a/deep/:b", summary: "a long branch", handler: tell("long") },
  { method: "GET", path: "/t/*rest", summary: "what the long branch leaves", handler: tell("t-rest") },
  { method: "GET", path: "/both", summary: "GET and any", handler: tell("both-get") },
  { method: ANY_METHOD, path: "/both", summary: "GET and any", handler: tell("both-any") },
];

const router = createRouter(routes);
const call = async (method: string, target: string) => router.handle(request(method, target));
const answer = async (method: string, target: string) => {
  const r = await call(method, target);
  return { status: r.status, ...(r.status === 200 ? JSON.parse(String(r.body)) : {}), headers: r.headers ?? {} };
};

t.test("an any-method route takes every method token, custom and lower-case ones too", async (t) => {
  for (const method of ["GET", "POST", "FOO", "UPDATE", "PURGE", "purge", "update", "M-SEARCH", "*"]) {
    const a = await answer(method, "/echo");
    t.equal(a.status, 200, `${method} /echo`);
    t.equal(a.name, "echo");
    t.equal(a.method, method, "the handler sees the method exactly as sent");
  }
});

t.test("a method's own route wins over the any-method route at the same path", async (t) => {
  t.equal((await answer("DELETE", "/echo/a")).name, "echo-delete");
  t.equal((await answer("delete", "/echo/a")).name, "echo-below", "methods are case-sensitive: delete is another method");
  t.equal((await answer("GET", "/both")).name, "both-get");
  t.equal((await answer("PUT", "/both")).name, "both-any");
});

t.test("HEAD goes to GET's route where there is one, else to the any-method route", async (t) => {
  t.equal((await answer("HEAD", "/both")).name, "both-get");
  const h = await answer("HEAD", "/echo");
  t.equal(h.name, "echo");
  t.equal(h.method, "HEAD");
});

t.test("OPTIONS stays the router's: 204 with Allow advertising the common methods plus the declared ones", async (t) => {
  const o = await answer("OPTIONS", "/echo");
  t.equal(o.status, 204);
  t.equal(o.headers.Allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
  const below = await answer("OPTIONS", "/echo/x/y");
  t.equal(below.status, 204);
  t.equal(below.headers.Allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT");
  const star = await answer("OPTIONS", "*");
  t.equal(star.headers.Allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT", "OPTIONS * never lists a method named *");
  const custom = createRouter([
    { method: ANY_METHOD, path: "/x", summary: "", handler: tell("x") },
    { method: "UPDATE", path: "/x", summary: "", handler: tell("x-update") },
  ]);
  const r = await custom.handle(request("OPTIONS", "/x"));
  t.equal(r.headers?.Allow, "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, UPDATE", "a declared custom method is advertised too");
});

t.test("a *name segment takes the rest of the path, as sent", async (t) => {
  t.same((await answer("FOO", "/echo/a")).params, { rest: "a" });
  t.same((await answer("FOO", "/echo/a/b/c")).params, { rest: "a/b/c" });
  t.same((await answer("FOO", "/echo/")).params, { rest: "" }, "an empty rest after the slash");
  t.same((await answer("FOO", "/echo/a%2Fb/%E2%9C%93")).params, { rest: "a%2Fb/%E2%9C%93" }, "still percent-encoded, so %2F stays apart from /");
  t.same((await answer("FOO", "/echo/%ZZ")).params, { rest: "%ZZ" }, "not decoded, so never malformed");
  t.same((await answer("FOO", "/echo/a?x=1")).params, { rest: "a" }, "the query is not part of it");
  t.equal((await answer("FOO", "/echo")).name, "echo", "without the slash it is the parent's path");
  t.equal((await answer("GET", "/echoes")).status, 404, "a longer segment is another path");
});

t.test("more specific patterns win; a dead end falls back to the deepest wildcard passed", async (t) => {
  t.equal((await answer("GET", "/echo/fixed")).name, "fixed");
  t.equal((await answer("GET", "/echo/fixed/deeper")).name, "deeper");
  const past = await answer("GET", "/echo/fixed/other");
  t.equal(past.name, "echo-below", "a static branch that ends short falls back");
  t.same(past.params, { rest: "fixed/other" });
  t.same((await answer("GET", "/echo/fixed/deeper/still")).params, { rest: "fixed/deeper/still" });
  t.equal((await answer("FOO", "/echo/fixed")).status, 405, "a path belongs to its most specific pattern, methods and all");

  t.same((await answer("GET", "/files/7")).params, { id: "7" }, "a parameter beats the wildcard for one segment");
  t.same((await answer("GET", "/files/7/8")).params, { rest: "7/8" });
  t.same((await answer("GET", "/u/ana/x/y")).params, { id: "ana", rest: "x/y" }, "parameters before the wildcard are kept");
  t.equal((await answer("GET", "/u/ana")).status, 404, "the wildcard needs its slash");

  t.equal((await answer("GET", "/t/1/deep/2")).name, "long");
  const fell = await answer("GET", "/t/1/deep/2/3");
  t.equal(fell.name, "t-rest");
  t.same(fell.params, { rest: "1/deep/2/3" }, "parameters of the abandoned branch do not leak into the fallback");
});

t.test("the table's wildcards are checked when compiled", async (t) => {
  const h = tell("x");
  t.throws(() => createRouter([{ method: "GET", path: "/a/*rest/b", summary: "", handler: h }]), /last one/);
  t.throws(() => createRouter([{ method: "GET", path: "/a/*", summary: "", handler: h }]), /have a name/);
  t.throws(
    () =>
      createRouter([
        { method: "GET", path: "/a/*rest", summary: "", handler: h },
        { method: "PUT", path: "/a/*tail", summary: "", handler: h },
      ]),
    /disagree on the wildcard/,
  );
  t.throws(
    () =>
      createRouter([
        { method: ANY_METHOD, path: "/a", summary: "", handler: h },
        { method: ANY_METHOD, path: "/a", summary: "", handler: h },
      ]),
    /twice/,
  );
});

t.test("a table without API versions treats /api/v3/... as an ordinary unknown path", async (t) => {
  const plain = createRouter([{ method: "GET", path: "/x", summary: "", handler: tell("x") }]);
  const r = await plain.handle(request("GET", "/api/v3/x"));
  t.equal(r.status, 404);
  t.equal(JSON.parse(String(r.body)).type, "/problems/not-found");
  const empty = createRouter([]);
  t.equal((await empty.handle(request("GET", "/api/v1/x"))).status, 404, "an empty table answers 404, not a crash");
});
