// Strings are stored as sent, or refused: a JSON string escape that is a lone
// surrogate ("x\udfffy") is not Unicode text, and UTF-8 stores would keep
// U+FFFD in its place, so every JSON body refuses it with a 422 that names
// the field. Surrogate pairs, written as escapes or as UTF-8, are text like
// any other. A text/plain fact cannot hold a surrogate at all: its bytes are
// decoded as strict UTF-8 (400).

import t from "tap";
import { MAX_JSON_VALUES } from "../../src/representation/body.js";
import { illFormedPlace } from "../../src/representation/unicode.js";
import { ADMIN_TOKEN, checkProblem, jsonOf, raw, startApi } from "./client.js";

const MP = { "Content-Type": "application/merge-patch+json" };
const JSON_CT = { "Content-Type": "application/json" };
const ADMIN = { ...MP, Authorization: `Bearer ${ADMIN_TOKEN}` };

/** JSON text with `\uXXXX` escapes spelled out, as a client would send them (JSON.stringify escapes lone surrogates the same way). */
const LONE = '"x\\udfffy"';

t.test("a lone surrogate anywhere in a JSON body is a 422 naming the field; nothing is stored", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B", tags: ["a"] });
  const post = (await raw(api.port, "GET", "/api/v1/post/p")).body;
  const article = (await raw(api.port, "GET", "/api/v1/artigo/1")).body;

  const cases: [string, string, string, Record<string, string>, string, RegExp][] = [
    ["publish: title", "POST", "/api/v1/post/new", JSON_CT, `{"title": ${LONE}, "body": "b"}`, /^"title" holds a lone surrogate/],
    ["publish: a tag", "POST", "/api/v1/post/new", JSON_CT, `{"title": "t", "body": "b", "tags": ["ok", ${LONE}]}`, /^"tags\/1" holds a lone surrogate/],
    ["publish: a high surrogate alone", "POST", "/api/v1/post/new", JSON_CT, '{"title": "t", "body": "a\\ud83d b"}', /^"body" holds a lone surrogate/],
    ["publish: pair halves in the wrong order", "POST", "/api/v1/post/new", JSON_CT, '{"title": "\\ude80\\ud83d", "body": "b"}', /^"title" holds/],
    ["patch: body", "PATCH", "/api/v1/post/p", MP, `{"body": ${LONE}}`, /^"body" holds a lone surrogate/],
    ["patch: an unknown member's value", "PATCH", "/api/v1/post/p", MP, `{"extra": {"deep": [${LONE}]}}`, /^"extra\/deep\/0" holds/],
    ["patch: a member name", "PATCH", "/api/v1/post/p", MP, '{"ti\\udfffe": "x"}', /^The member name at "ti\\uDFFFe" holds a lone surrogate/],
    ["patch: the whole body is one string", "PATCH", "/api/v1/post/p", MP, LONE, /^The body holds a lone surrogate/],
    ["article update: author", "UPDATE", "/api/v1/artigo/1", ADMIN, `{"author": ${LONE}}`, /^"author" holds a lone surrogate/],
  ];
  for (const [what, method, target, headers, body, detail] of cases) {
    const r = await raw(api.port, method, target, headers, body);
    const problem = checkProblem(t, r, 422, detail, target);
    t.match(problem?.type, "/problems/invalid-fields", what);
    t.match(problem?.detail, /\\uD800-\\uDFFF escape that is not half of a pair/, `${what}: says what is wrong`);
    t.strictSame(problem?.errors, [problem?.detail], `${what}: the errors list holds it too`);
  }
  t.equal((await raw(api.port, "GET", "/api/v1/post/new")).status, 404, "nothing was published");
  t.equal((await raw(api.port, "GET", "/api/v1/post/p")).body, post, "the post is unchanged");
  t.equal((await raw(api.port, "GET", "/api/v1/artigo/1")).body, article, "the article is unchanged");
});

t.test("the 422 for a lone surrogate comes after 404 and after a failed If-Match, like any problem with the content", async (t) => {
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  checkProblem(t, await raw(api.port, "PATCH", "/api/v1/post/none", MP, `{"title": ${LONE}}`), 404, /"none"/);
  checkProblem(t, await raw(api.port, "PATCH", "/api/v1/post/p", { ...MP, "If-Match": '"stale"' }, `{"title": ${LONE}}`), 412, /If-Match/);
});

t.test("surrogate pairs are text: escaped or raw, they are stored and served as sent, under one ETag", async (t) => {
  const api = await startApi(t);
  const published = await raw(api.port, "POST", "/api/v1/post/rocket", JSON_CT, '{"title": "\\ud83d\\ude80 launch", "body": "raw 🚀 and escaped \\ud83d\\ude80", "tags": ["𝄞"]}');
  t.equal(published.status, 201);
  const get = await raw(api.port, "GET", "/api/v1/post/rocket");
  t.equal(jsonOf(get).title, "🚀 launch");
  t.equal(jsonOf(get).body, "raw 🚀 and escaped 🚀");
  const patched = await raw(api.port, "PATCH", "/api/v1/post/rocket", { ...MP, "If-Match": get.headers.etag! }, '{"author": "\\ud834\\udd1e"}');
  t.equal(patched.status, 200);
  const again = await raw(api.port, "GET", "/api/v1/post/rocket");
  t.equal(again.body, patched.body, "served as acknowledged");
  t.equal(again.headers.etag, patched.headers.etag, "under the ETag it was acknowledged with");
  t.equal(jsonOf(again).author, "𝄞");
});

t.test("a text/plain fact cannot carry a surrogate: UTF-8-encoded surrogates are invalid UTF-8, a 400", async (t) => {
  const api = await startApi(t);
  const before = (await api.store.facts.list()).length;
  // ED BF BF would be U+DFFF in UTF-8 if surrogates could be encoded (CESU-8 style); RFC 3629 §3 forbids it.
  const r = await raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, Buffer.from([0x78, 0xed, 0xbf, 0xbf, 0x79]));
  checkProblem(t, r, 400, /not valid UTF-8/, "/api/v2/facts");
  const escaped = await raw(api.port, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "x\\udfffy is text, not an escape");
  t.equal(escaped.status, 201, "in text/plain a backslash-u is just characters");
  t.equal(jsonOf(escaped).text, "x\\udfffy is text, not an escape");
  t.equal((await api.store.facts.list()).length, before + 1);
});

t.test("a body nested a hundred thousand levels deep is checked without running out of stack", async (t) => {
  const deep = (depth: number) => `{"title": ${"[".repeat(depth)}${LONE}${"]".repeat(depth)}}`;
  const text = deep(100_000);
  t.match(illFormedPlace(text, JSON.parse(text)), { path: /^title\/0\/0\/0\//, what: "value" }, "found, at its place");
  // A body holds at most MAX_JSON_VALUES values, so the deepest one the API reads is that deep.
  const api = await startApi(t);
  await api.store.posts.create({ id: "p", title: "T", body: "B" });
  const r = await raw(api.port, "PATCH", "/api/v1/post/p", MP, deep(MAX_JSON_VALUES - 1));
  checkProblem(t, r, 422, /^"title\/0\/0\/0\/0.{0,100}" holds a lone surrogate/);
  t.ok(r.body.length < 2000, "the detail names the place in a bounded number of characters");
});
