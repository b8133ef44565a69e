// A 422 costs what the body cost, not more. A JSON body of more values than
// any resource here holds is refused before it is parsed (MAX_JSON_VALUES,
// src/representation/body.ts): 1 MiB of `{"k0":0,...}` cost 65 ms to parse,
// and as a merge patch 440 ms in all, on the one thread. Below that bound,
// every violation of a small body is listed (`errors`), but past
// MAX_LISTED_VALUES values only the first is, and the detail says so: a
// body of half a million violations used to be answered with every one of
// them, 17 MB of problem JSON for 1 MB sent. Over a real socket (startApi),
// for publish, patch and the article's UPDATE.

import t from "tap";
import { MAX_JSON_VALUES } from "../../src/representation/body.js";
import { MAX_LISTED_VALUES } from "../../src/validation/validate.js";
import { ADMIN_TOKEN, checkProblem, raw, startApi } from "./client.js";

const JSON_CT = { "Content-Type": "application/json" };
const MP = { "Content-Type": "application/merge-patch+json" };
const ADMIN_MP = { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` };

/**
 * Members no resource has: the text JSON.stringify gives an object of `base`'s members and then k0 to
 * k<count - 1>, written out directly (an object of 90,000 keys cost a third of a second to build and write).
 */
function unknownMembers(base: Record<string, unknown>, count: number): string {
  const members = Object.entries(base).map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`);
  for (let i = 0; i < count; i++) members.push(`"k${i}":0`);
  return `{${members.join(",")}}`;
}

/** Far more than a first violation and the rest of a problem take, far less than one line per value. */
const SMALL_ANSWER = 2048;

t.test("a 1 MB body of half a million values is refused before it is parsed", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  const article = (await raw(api.port, "GET", "/api/v1/artigo/1")).body;
  const cases: [string, string, string, Record<string, string>, string][] = [
    ["publish: 500,000 tags", "POST", "/api/v1/post/new", JSON_CT, JSON.stringify({ title: "t", body: "b", tags: new Array(500_000).fill(0) })],
    ["publish: 90,000 unknown members", "POST", "/api/v1/post/new", JSON_CT, unknownMembers({ title: "t", body: "b" }, 90_000)],
    ["patch: 90,000 unknown members", "PATCH", "/api/v1/post/p", MP, unknownMembers({}, 90_000)],
    ["patch: 500,000 tags", "PATCH", "/api/v1/post/p", MP, JSON.stringify({ tags: new Array(500_000).fill(0) })],
    ["patch: 340,000 empty objects", "PATCH", "/api/v1/post/p", MP, JSON.stringify({ tags: new Array(340_000).fill({}) })],
    ["article update: 90,000 unknown members", "UPDATE", "/api/v1/artigo/1", ADMIN_MP, unknownMembers({}, 90_000)],
  ];
  for (const [what, method, target, headers, body] of cases) {
    t.ok(body.length > 900_000 && body.length <= 1_048_576, `${what}: the body is about 1 MB, within the body limit (${body.length} bytes)`);
    const r = await raw(api.port, method, target, headers, body);
    const problem = checkProblem(t, r, 422, new RegExp(`^The body holds more than ${MAX_JSON_VALUES} JSON values`), target);
    t.ok(r.body.length < SMALL_ANSWER, `${what}: the answer is small (${r.body.length} bytes)`);
    t.strictSame(problem?.errors, [problem?.detail], `${what}: the errors list holds it too`);
  }
  t.equal((await raw(api.port, "GET", "/api/v1/post/new")).status, 404, "nothing was published");
  t.equal((await raw(api.port, "GET", "/api/v1/post/p")).status, 200);
  t.equal((await raw(api.port, "GET", "/api/v1/artigo/1")).body, article, "the article is unchanged");
});

t.test("commas and brackets inside strings are text, not values", async (t) => {
  const api = await startApi(t);
  const body = ',[{\\"'.repeat(10_000);
  const sent = JSON.stringify({ title: "commas, [brackets] and {braces}", body, tags: ["a,b", "[", "{"] });
  const r = await raw(api.port, "POST", "/api/v1/post/text", JSON_CT, sent);
  t.equal(r.status, 201, "published");
  t.equal(JSON.parse((await raw(api.port, "GET", "/api/v1/post/text")).body).body, body, "as sent");
});

t.test("a body at the bound is parsed; past MAX_LISTED_VALUES values only its first violation is listed", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  // The object, and title, body, tags, the array and its items: the commas and brackets the bound counts.
  const tags = new Array(MAX_JSON_VALUES - 3).fill(0);
  const cases: [string, string, string, Record<string, string>, string, RegExp][] = [
    ["publish: tags up to the bound", "POST", "/api/v1/post/new", JSON_CT, JSON.stringify({ title: "t", body: "b", tags }), /^"tags" may hold at most 50 items/],
    ["patch: members up to the bound", "PATCH", "/api/v1/post/p", MP, unknownMembers({}, MAX_JSON_VALUES), /^"k0" is not a field of this resource/],
    ["article update: members up to the bound", "UPDATE", "/api/v1/artigo/1", ADMIN_MP, unknownMembers({}, MAX_JSON_VALUES), /^"k0" is not a field/],
  ];
  for (const [what, method, target, headers, body, first] of cases) {
    const r = await raw(api.port, method, target, headers, body);
    const problem = checkProblem(t, r, 422, first, target);
    t.ok(r.body.length < SMALL_ANSWER, `${what}: the answer is small (${r.body.length} bytes)`);
    t.equal(problem?.errors?.length, 1, `${what}: one violation listed`);
    t.match(problem?.detail, `the body holds more than ${MAX_LISTED_VALUES} values, so only its first violation is listed`, `${what}: the detail says why only one`);
  }
});

t.test("a small body still gets every violation listed", async (t) => {
  const api = await startApi(t);
  const body = JSON.stringify({ title: "", body: 1, tags: ["ok", 2, ""], colour: "red" });
  const problem = checkProblem(t, await raw(api.port, "POST", "/api/v1/post/new", JSON_CT, body), 422, /Fix the request body/);
  t.same(
    [...(problem?.errors ?? [])].sort(),
    [
      '"body" must be a string',
      '"colour" is not a field of this resource',
      '"tags/1" must be a string',
      '"tags/2" must have at least 1 character',
      '"title" must have at least 1 character',
    ],
    "each of the five violations",
  );
  t.notMatch(problem?.detail, /only its first violation/, "nothing is left out, so the detail does not say so");
});

t.test("at MAX_LISTED_VALUES itself every violation is still listed", async (t) => {
  const api = await startApi(t);
  // title, body, tags, and the tags' items: MAX_LISTED_VALUES values in all.
  const tags = new Array(MAX_LISTED_VALUES - 3).fill(0);
  const problem = checkProblem(t, await raw(api.port, "POST", "/api/v1/post/new", JSON_CT, JSON.stringify({ title: "t", body: "b", tags })), 422, /^"tags" may hold at most 50 items/);
  t.equal(problem?.errors?.length, 1 + tags.length, "the maxItems violation and one per tag");
});
