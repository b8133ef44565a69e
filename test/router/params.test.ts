// Route params are typed from the path literal: the compiler, run by
// `npm run typecheck` over this file, is the first half of this test.

import t from "tap";
import { createRouter } from "../../src/router/router.js";
import { route, type ParamsOf } from "../../src/router/route.js";
import type { Request } from "../../src/http/message/request.js";

const byId = route({
  method: "GET",
  path: "/api/v1/post/:id/comment/:n",
  summary: "typed",
  handler: (_request, params) => {
    const id: string = params.id; // a string, no `!` needed
    const n: string = params.n;
    // @ts-expect-error: there is no :slug in the path
    void params.slug;
    return { status: 200, body: `${id}/${n}` };
  },
});

const files = route({
  method: "GET",
  path: "/files/*rest",
  summary: "wildcard",
  handler: (_request, { rest }) => ({ status: 200, body: rest }),
});

// Type-level checks on the helper type itself.
const none: ParamsOf<"/api/v2/status"> = {};
const two: ParamsOf<"/a/:x/b/:y"> = { x: "1", y: "2" };
void none;
void two;

function get(path: string): Request {
  return { method: "GET", target: path, path, query: "", minor: 1, fields: [], host: "t", framing: { kind: "none" }, keepAlive: true, expectContinue: false, peer: "-", body: Buffer.alloc(0) };
}

t.test("typed params arrive as the router fills them", async (t) => {
  const router = createRouter([byId, files]);
  const a = await router.handle(get("/api/v1/post/hello/comment/3"));
  t.equal(a.body, "hello/3");
  const b = await router.handle(get("/files/a/b%2Fc"));
  t.equal(b.body, "a/b%2Fc");
});

t.test("a path asked again gets its own params, not the last path's, and they cannot be changed", async (t) => {
  const seen: object[] = [];
  const keep = route({
    method: "GET",
    path: "/api/v1/post/:id",
    summary: "keeps its params",
    handler: (_request, params) => {
      seen.push(params);
      return { status: 200, body: params.id };
    },
  });
  const router = createRouter([keep, byId]);
  const bodies: unknown[] = [];
  for (const id of ["a", "a", "b", "a", "b%20c"]) bodies.push((await router.handle(get(`/api/v1/post/${id}`))).body);
  t.same(bodies, ["a", "a", "b", "a", "b c"], "each path's own id, asked in any order");
  t.equal(seen[0], seen[1], "the same path again: the same (kept) params");
  t.not(seen[1], seen[2], "another path: params of its own");
  t.ok(seen.every((params) => Object.isFrozen(params)), "params handed out again are frozen");
  t.equal((await router.handle(get("/api/v1/post/a/comment/7"))).body, "a/7", "a deeper path after it");
  t.equal((await router.handle(get("/api/v1/post/a"))).body, "a");
  t.equal((await router.handle({ ...get("/api/v1/post/a"), method: "DELETE" })).status, 405, "the same path with another method right after: not the kept match");
});
