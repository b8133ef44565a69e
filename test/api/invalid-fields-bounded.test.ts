// A 422 costs what the body cost, not more. Every violation of a small body
// is listed (`errors`), but a body made of half a million values, each a
// violation (1 MiB of `[0,0,...]` as tags, or of unknown members), used to
// be answered with every one of them: 17 MB of problem JSON for 1 MB sent,
// 200 MiB of server memory and 0.8 s of its one thread. Past
// MAX_LISTED_VALUES values only the first violation is reported, and the
// detail says so. Over a real socket (startApi), for publish, patch and the
// article's UPDATE.

import t from "tap";
import { MAX_LISTED_VALUES } from "../../src/validation/validate.js";
import { ADMIN_TOKEN, checkProblem, raw, startApi } from "./client.js";

const JSON_CT = { "Content-Type": "application/json" };
const MP = { "Content-Type": "application/merge-patch+json" };

/** About 1 MB of violations: half a million tags that are not strings. */
const manyBadTags = JSON.stringify({ title: "t", body: "b", tags: new Array(500_000).fill(0) });

/** About 1 MB of violations: members no resource has. */
function manyUnknownMembers(base: Record<string, unknown>): string {
  const o: Record<string, unknown> = { ...base };
  for (let i = 0; i < 90_000; i++) o[`k${i}`] = 0;
  return JSON.stringify(o);
}

/** Far more than a first violation and the rest of a problem take, far less than one line per value. */
const SMALL_ANSWER = 2048;

t.test("a body of half a million violations gets a 422 naming the first, not all of them", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  const article = (await raw(api.port, "GET", "/api/v1/artigo/1")).body;
  const cases: [string, string, string, Record<string, string>, string, RegExp][] = [
    ["publish: 500,000 tags that are not strings", "POST", "/api/v1/post/new", JSON_CT, manyBadTags, /^"tags" may hold at most 50 items/],
    ["publish: 90,000 unknown members", "POST", "/api/v1/post/new", JSON_CT, manyUnknownMembers({ title: "t", body: "b" }), /^"k0" is not a field of this resource/],
    ["patch: 90,000 unknown members", "PATCH", "/api/v1/post/p", MP, manyUnknownMembers({}), /^"k0" is not a field of this resource/],
    ["patch: 500,000 tags", "PATCH", "/api/v1/post/p", MP, JSON.stringify({ tags: new Array(500_000).fill(0) }), /^"tags" may hold at most 50 items/],
    ["article update: 90,000 unknown members", "UPDATE", "/api/v1/artigo/1", { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` }, manyUnknownMembers({}), /^"k0" is not a field/],
  ];
  for (const [what, method, target, headers, body, first] of cases) {
    t.ok(body.length > 900_000 && body.length <= 1_048_576, `${what}: the body is about 1 MB, within the body limit (${body.length} bytes)`);
    const r = await raw(api.port, method, target, headers, body);
    const problem = checkProblem(t, r, 422, first, target);
    t.ok(r.body.length < SMALL_ANSWER, `${what}: the answer is small (${r.body.length} bytes)`);
    t.equal(problem?.errors?.length, 1, `${what}: one violation listed`);
    t.match(problem?.detail, `the body holds more than ${MAX_LISTED_VALUES} values, so only its first violation is listed`, `${what}: the detail says why only one`);
  }
  t.equal((await raw(api.port, "GET", "/api/v1/post/new")).status, 404, "nothing was published");
  t.equal((await raw(api.port, "GET", "/api/v1/post/p")).status, 200);
  t.equal((await raw(api.port, "GET", "/api/v1/artigo/1")).body, article, "the article is unchanged");
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

t.test("at the bound itself every violation is still listed", async (t) => {
  const api = await startApi(t);
  // title, body, tags, and the tags' items: MAX_LISTED_VALUES values in all.
  const tags = new Array(MAX_LISTED_VALUES - 3).fill(0);
  const problem = checkProblem(t, await raw(api.port, "POST", "/api/v1/post/new", JSON_CT, JSON.stringify({ title: "t", body: "b", tags })), 422, /^"tags" may hold at most 50 items/);
  t.equal(problem?.errors?.length, 1 + tags.length, "the maxItems violation and one per tag");
});
