// The API tests' own tools (test/api/client.ts), checked for what the other
// files rely on: raw() delivers the exact bytes it was given (invalid UTF-8
// included) with a correct Content-Length, and checkProblem passes a real
// problem response and fails what is not one. These checks once sat at the
// end of client.ts, run only when that file was run by hand: tap runs
// *.test.ts files alone, so `npm test` never ran them.

import t, { type Test } from "tap";
import { listen } from "../helpers/wire.js";
import { checkProblem, raw, startApi } from "./client.js";

t.test("raw() sends exactly the given head fields and body bytes", async (t) => {
  let seen: { method: string; target: string; fields: readonly string[]; body: Buffer } | undefined;
  const s = await listen((request) => {
    seen = { method: request.method, target: request.target, fields: request.fields, body: request.body };
    return { status: 200, headers: { "Content-Type": "text/plain" }, body: "ok" };
  });
  t.teardown(s.close);
  const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x7d]);
  const r = await raw(s.port, "UPDATE", "/x?y=1", { "X-A": "1", "Content-Type": "application/json" }, bytes);
  t.equal(r.status, 200);
  t.equal(r.body, "ok");
  t.equal(seen?.method, "UPDATE");
  t.equal(seen?.target, "/x?y=1");
  t.same(seen?.fields, ["host", `127.0.0.1:${s.port}`, "x-a", "1", "content-type", "application/json", "content-length", "5", "connection", "close"]);
  t.same(seen?.body, bytes, "body bytes unchanged");
  await raw(s.port, "GET", "/");
  t.same(seen?.fields, ["host", `127.0.0.1:${s.port}`, "connection", "close"], "no Content-Length without a body");
  t.equal(seen?.body.length, 0);
});

t.test("raw() throws when other than exactly one response comes back", async (t) => {
  const s = await listen(() => ({ status: 200, body: "ok" }));
  t.teardown(s.close);
  // A target that smuggles a second request in: two responses to what raw() sent as one.
  await t.rejects(raw(s.port, "GET", "/x HTTP/1.1\r\nHost: t\r\n\r\nGET /y"), /expected exactly one response to GET \/x[\s\S]*got 2/);
});

/**
 * The assertions checkProblem makes, run against a stand-in for tap's Test
 * that records which failed instead of failing this test.
 */
function failuresOf(check: (t: Test) => unknown): string[] {
  const failed: string[] = [];
  const record = (ok: boolean, message: string) => {
    if (!ok) failed.push(message);
    return ok;
  };
  const recorder = {
    equal: (a: unknown, b: unknown, m = "equal") => record(a === b, m),
    not: (a: unknown, b: unknown, m = "not") => record(a !== b, m),
    match: (a: unknown, re: RegExp, m = "match") => record(typeof a === "string" && re.test(a), m),
    type: (a: unknown, type: string, m = "type") => record(typeof a === type, m),
    ok: (a: unknown, m = "ok") => record(Boolean(a), m),
    fail: (m = "fail") => record(false, m),
  };
  check(recorder as unknown as Test);
  return failed;
}

t.test("checkProblem passes a real problem response, and fails one that is not", async (t) => {
  const api = await startApi(t);
  const r = await raw(api.port, "GET", "/api/v1/post/none");
  t.strictSame(failuresOf((rt) => checkProblem(rt, r, 404, /"none"/, "/api/v1/post/none")), [], "the app's 404 is a problem");
  const body = checkProblem(t, r, 404, /"none"/, "/api/v1/post/none");
  t.equal(body?.type, "/problems/not-found");

  const ok = await raw(api.port, "GET", "/api/v2/status");
  t.not(failuresOf((rt) => checkProblem(rt, ok, 404, /./)).length, 0, "a 200 is not the 404 asked for");
  const plain = { status: 404, headers: { "content-type": "text/plain" }, body: "not found" };
  t.not(failuresOf((rt) => checkProblem(rt, plain, 404, /./)).length, 0, "a text/plain 404 is not a problem");
  const noDetail = { status: 404, headers: { "content-type": "application/problem+json" }, body: JSON.stringify({ type: "/problems/not-found", title: "Not found", status: 404, instance: "/x" }) };
  t.strictSame(failuresOf((rt) => checkProblem(rt, noDetail, 404, /./)), ["detail is a string", "detail names the field or rule: undefined"], "a problem without a detail");
  t.strictSame(failuresOf((rt) => checkProblem(rt, r, 404, /"none"/, "/elsewhere")), ["instance is the request target"], "an instance other than the target");
});
