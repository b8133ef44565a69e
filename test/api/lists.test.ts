// The list endpoints (rows 3, 8, 9, B; docs/api.md section 9): whole lists
// streamed in JSON and YAML, pages with Link: rel="next", the 400s for bad
// parameters, and list ETags with If-None-Match, in-process and over sockets.

import t from "tap";
import { dump, load } from "js-yaml";
import { createApp, type App, type AppOptions } from "../../src/app.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { seed } from "../../src/store/seed.js";
import type { NewPost, Store } from "../../src/store/types.js";
import { request } from "../helpers/app.js";
import { yamlEntry } from "../../src/representation/yaml.js";
import { FIRST_BATCH_CHARS } from "../../src/api/list-body.js";
import { listen, splitResponses, talk, type RawResponse } from "../helpers/wire.js";
import { checkProblem, raw } from "./client.js";

const YAML_OPTIONS = { noRefs: true, lineWidth: -1 };
const JSON_ACCEPT = { Accept: "application/json" };
const YAML_ACCEPT = { Accept: "application/yaml" };

/** Strings a YAML or JSON writer must take care with, each in a post somewhere. */
const TRICKY = [
  "plain",
  "key: value",
  "- starts like a list entry",
  "# not a comment",
  "'single' and \"double\" quotes",
  "line one\nline two\n",
  "\n\nstarts with blank lines",
  "  leading spaces",
  "trailing spaces  ",
  "tab\there",
  "ação, 日本語, emoji 😀",
  "null",
  "yes",
  "0123",
  "1e3",
  "~",
  "&anchor *alias !tag %directive @at `tick`",
  "{flow: map} [flow, seq]",
  "carriage\r\nreturn",
  "line\u2028separator\u2029paragraph\u0085next line",
  "back\\slash",
  "",
];

function trickyPost(i: number): NewPost {
  const s = TRICKY[i % TRICKY.length]!;
  return {
    id: `p-${String(i).padStart(4, "0")}`,
    title: s === "" ? `title ${i}` : s.slice(0, 200),
    // Some posts are large, so that a list spans several batches and pieces.
    body: i % 25 === 0 ? `${s} `.repeat(2000) : `${s} (post ${i})`,
    ...(i % 2 === 0 ? { author: TRICKY[(i + 3) % TRICKY.length] || "ana" } : {}),
    ...(i % 3 === 0 ? { tags: i % 9 === 0 ? [] : [TRICKY[(i + 1) % TRICKY.length] || "x", "on"] } : {}),
  };
}

/** An app over `posts` tricky posts; `options.kept` to count what a request reads without kept responses (test/api/kept-reads.test.ts has those). */
async function appWith(posts: number, options: Partial<AppOptions> = {}): Promise<{ app: App; store: Store }> {
  const store = createMemoryStore();
  await seed(store);
  for (let i = 0; i < posts; i++) await store.posts.create(trickyPost(i));
  return { app: createApp({ store, ...options }), store };
}

const NOTHING_KEPT: Partial<AppOptions> = { kept: { responseBytes: 0 } };

/** Counts the store's reads of posts and facts, to show what a request did not read. */
function countReads(store: Store): Record<"page" | "pageJson" | "span" | "list" | "revision", number> {
  const counts = { page: 0, pageJson: 0, span: 0, list: 0, revision: 0 };
  for (const collection of [store.posts, store.facts]) {
    for (const name of ["page", "pageJson", "span", "list", "revision"] as const) {
      const c = collection as unknown as Record<string, (...args: unknown[]) => unknown>;
      const original = c[name]!.bind(collection);
      c[name] = (...args: unknown[]) => {
        counts[name]++;
        return original(...args);
      };
    }
  }
  return counts;
}

/** The URL a Link: rel="next" points to, or undefined. */
function nextOf(r: RawResponse): string | undefined {
  const link = r.headers.link;
  if (link === undefined) return undefined;
  const m = /^<([^>]+)>; rel="next"$/.exec(link);
  if (m === null) throw new Error(`unexpected Link: ${link}`);
  return m[1];
}

t.test("the handler itself reads a small first batch of a whole JSON list; the rest is read as the body is paced", async (t) => {
  // Posts of about 30 KB: a full batch (BATCH_CHARS) would be several of them, read by the handler before any
  // turn of the loop paces the list (fifty clients asking at once made a status request wait that long).
  const store = createMemoryStore();
  for (let i = 0; i < 12; i++) await store.posts.create({ id: `big-${i}`, title: `Big ${i}`, body: `${i} `.repeat(15_000) });
  const app = createApp({ store, ...NOTHING_KEPT });
  const asked: { maxChars?: number; limit: number }[] = [];
  const original = store.posts.pageJson.bind(store.posts);
  store.posts.pageJson = (query) => {
    asked.push({ limit: query.limit, ...(query.maxChars === undefined ? {} : { maxChars: query.maxChars }) });
    return original(query);
  };
  const r = await request(app, "GET", "/api/v1/posts", JSON_ACCEPT);
  t.equal(r.body, JSON.stringify({ posts: await store.posts.list() }), "the whole list, as serializing it whole gives");
  t.ok(asked.length > 1, "read in batches");
  t.ok(asked[0]!.maxChars !== undefined && asked[0]!.maxChars <= FIRST_BATCH_CHARS, `the first read stops at ${FIRST_BATCH_CHARS} characters (asked: ${JSON.stringify(asked[0])})`);
  // A page keeps its first read whole-page sized: a page that fits one batch is answered from that one read.
  asked.length = 0;
  await request(app, "GET", "/api/v1/posts?limit=2", JSON_ACCEPT);
  t.equal(asked.length, 1, "a page that fits one batch: one read");
});

t.test("a whole list is streamed, and is exactly what serializing it whole gives, in JSON and YAML", async (t) => {
  const { app, store } = await appWith(300);
  const posts = await store.posts.list();
  const json = await request(app, "GET", "/api/v1/posts", JSON_ACCEPT);
  t.equal(json.status, 200);
  t.equal(json.headers["transfer-encoding"], "chunked", "streamed");
  t.equal(json.headers["content-length"], undefined);
  t.equal(json.headers["content-type"], "application/json");
  t.equal(json.headers["cache-control"], "no-cache");
  t.equal(json.headers.vary, "Accept, Content-Type, Accept-Encoding");
  t.match(json.headers.etag, /^W\/"posts\.[0-9a-f]{16}\.300\.json"$/);
  t.equal(json.body, JSON.stringify({ posts }), "byte for byte JSON.stringify of the wrapper");
  t.strictSame(JSON.parse(json.body), { posts });

  const yaml = await request(app, "GET", "/api/v1/post", YAML_ACCEPT);
  t.equal(yaml.headers["content-type"], "application/yaml");
  t.equal(yaml.body, dump({ posts }, YAML_OPTIONS), "byte for byte js-yaml's dump of the wrapper");
  t.strictSame(load(yaml.body), { posts }, "a YAML parser reads back exactly the posts");
  t.match(yaml.headers.etag, /\.yaml"$/, "each format its own tag");
});

t.test("facts are listed the same way", async (t) => {
  const { app, store } = await appWith(0);
  const facts = await store.facts.list();
  const r = await request(app, "GET", "/api/v2/facts");
  t.equal(r.headers["transfer-encoding"], undefined, "a list that fits in one batch goes whole");
  t.equal(r.headers["content-length"], String(Buffer.byteLength(r.body)), "with its Content-Length");
  t.equal(r.body, JSON.stringify({ facts }));
  const yaml = await request(app, "GET", "/api/v2/facts", { "Content-Type": "application/yaml" });
  t.strictSame(load(yaml.body), { facts });
  t.match(r.headers.etag, /^W\/"facts\./);
});

t.test("an empty list is still a whole document", async (t) => {
  const { app } = await appWith(0);
  t.equal((await request(app, "GET", "/api/v1/posts")).body, '{"posts":[]}');
  const yaml = await request(app, "GET", "/api/v1/posts", YAML_ACCEPT);
  t.equal(yaml.body, "posts: []\n");
  t.strictSame(load(yaml.body), { posts: [] });
  t.equal((await request(app, "GET", "/api/v1/posts?limit=5")).body, '{"posts":[]}', "an empty page too");
});

t.test("over a real socket: chunked JSON and YAML decode to the posts; HTTP/1.0 gets a bare body", async (t) => {
  const { app, store } = await appWith(120);
  const posts = await store.posts.list();
  const running = await listen(app.handle);
  t.teardown(running.close);
  const json = await raw(running.port, "GET", "/api/v1/posts");
  t.equal(json.headers["transfer-encoding"], "chunked");
  t.strictSame(JSON.parse(json.body), { posts });
  const yaml = await raw(running.port, "GET", "/api/v1/posts", { "Content-Type": "application/yaml" });
  t.strictSame(load(yaml.body), { posts });
  // Two lists pipelined on one connection: each ends where its last chunk says, the second follows it.
  const two = await talk(running.port, ["GET /api/v1/post HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/facts HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]);
  const [a, b] = splitResponses(two);
  t.strictSame(JSON.parse(a!.body), { posts });
  t.strictSame(JSON.parse(b!.body), { facts: await store.facts.list() });
  const old = (await talk(running.port, ["GET /api/v1/posts HTTP/1.0\r\n\r\n"])).toString("utf8");
  t.notMatch(old, /Transfer-Encoding/i);
  t.strictSame(JSON.parse(old.slice(old.indexOf("\r\n\r\n") + 4)), { posts }, "the body ends with the connection");
});

t.test("HEAD: the fields GET sends, no body, and no more read than the batch that decides them", async (t) => {
  // 300 posts: the whole list takes several batches, so GET streams it. (A kept list goes whole, with a Content-Length.)
  const { app, store } = await appWith(300, NOTHING_KEPT);
  const fields = ["content-type", "cache-control", "etag", "vary", "link", "transfer-encoding", "content-length"];
  for (const target of ["/api/v1/posts?limit=10", "/api/v1/posts", "/api/v2/facts"]) {
    const get = await request(app, "GET", target);
    const counts = countReads(store);
    const head = await request(app, "HEAD", target);
    t.equal(head.status, 200);
    t.equal(head.body, "");
    for (const name of fields) t.equal(head.headers[name], get.headers[name], `${target}: ${name}`);
    // JSON: the first batch, read with the revision, says whether the body is whole (Content-Length) or streamed, and where a page ends.
    t.strictSame(counts, { page: 0, pageJson: 1, span: 0, list: 0, revision: 0 }, `${target}: one batch read, nothing streamed`);
  }
  // YAML: a page is one read of its posts' representations (their kept entries joined, sent whole with a
  // Content-Length, as the JSON page is), so HEAD reads what GET reads to say the length; nothing else.
  const getYaml = await request(app, "GET", "/api/v1/posts?limit=10", YAML_ACCEPT);
  const yaml = countReads(store);
  const headYaml = await request(app, "HEAD", "/api/v1/posts?limit=10", YAML_ACCEPT);
  for (const name of fields) t.equal(headYaml.headers[name], getYaml.headers[name], `YAML page: ${name}`);
  t.strictSame(yaml, { page: 0, pageJson: 0, span: 0, list: 0, revision: 0 }, "YAML: no batch, span or revision read beside the one read of the page");
});

t.test("pages: limit N gives N items and a next link, until the last page", async (t) => {
  const { app, store } = await appWith(23);
  const posts = await store.posts.list();
  for (const [path, headers] of [
    ["/api/v1/posts", JSON_ACCEPT],
    ["/api/v1/post", YAML_ACCEPT],
  ] as const) {
    const seen: unknown[] = [];
    let target: string | undefined = `${path}?limit=5`;
    let pages = 0;
    while (target !== undefined) {
      const r = await request(app, "GET", target, headers);
      t.equal(r.status, 200);
      const items = (headers === YAML_ACCEPT ? (load(r.body) as { posts: unknown[] }) : JSON.parse(r.body)).posts;
      t.ok(items.length <= 5);
      seen.push(...items);
      target = nextOf(r);
      if (target !== undefined) {
        t.equal(items.length, 5, "a page with a next link is full");
        t.match(target, new RegExp(`^${path}\\?limit=5&after=[A-Za-z0-9_-]+$`), "the link keeps the path and limit");
      }
      pages++;
    }
    t.equal(pages, 5);
    t.strictSame(seen, posts, `${path}: every post once, oldest first`);
  }
  // A collection that fills its pages exactly: the last full page says there is nothing after it.
  const four = await request(app, "GET", "/api/v1/posts?limit=23");
  t.equal(JSON.parse(four.body).posts.length, 23);
  t.equal(four.headers.link, undefined, "no next link when nothing follows");
  const one = await request(app, "GET", "/api/v1/posts?limit=1000");
  t.equal(one.headers.link, undefined);
  t.equal(JSON.parse(one.body).posts.length, 23);
  // after alone: every item after the cursor.
  const first = await request(app, "GET", "/api/v1/posts?limit=20");
  const rest = await request(app, "GET", nextOf(first)!.replace("limit=20&", ""));
  t.strictSame(JSON.parse(rest.body).posts, posts.slice(20));
  t.equal(rest.headers.link, undefined);
});

t.test("paging through HTTP while posts are published, changed and deleted between pages: none skipped, none repeated", async (t) => {
  const { app, store } = await appWith(0);
  const json = { "Content-Type": "application/json" };
  const publish = async (id: string) => t.equal((await request(app, "POST", `/api/v1/post/${id}`, json, JSON.stringify({ title: id, body: "b" }))).status, 201);
  const start = Array.from({ length: 30 }, (_, i) => `s${i}`);
  for (const id of start) await publish(id);
  const seen: string[] = [];
  const deleted = new Set<string>();
  const added: string[] = [];
  let target: string | undefined = "/api/v1/posts?limit=4";
  for (let page = 0; target !== undefined; page++) {
    const r = await request(app, "GET", target);
    seen.push(...JSON.parse(r.body).posts.map((p: { id: string }) => p.id));
    target = nextOf(r);
    if (page >= 10 || target === undefined) continue; // a post published after the last page is for the next walk
    const id = `new${page}`;
    await publish(id);
    added.push(id);
    // One post already seen, one not yet reached: both go, and a third changes.
    for (const victim of [seen[page * 2], start[29 - page]]) {
      if (victim === undefined || deleted.has(victim)) continue;
      t.equal((await request(app, "DELETE", `/api/v1/post/${victim}`)).status, 200);
      deleted.add(victim);
    }
    const alive = (await store.posts.list()).map((p) => p.id);
    await request(app, "PATCH", `/api/v1/post/${alive[page]}`, json, '{"title": "changed"}');
  }
  t.equal(new Set(seen).size, seen.length, "no post twice");
  const kept = [...start, ...added].filter((id) => !deleted.has(id));
  t.strictSame(kept.filter((id) => !seen.includes(id)), [], "every post that was never deleted was seen");
  t.ok([...deleted].some((id) => !seen.includes(id)), "posts deleted before their page came were not seen");
});

t.test("bad parameters are 400 problems that name the parameter; unknown ones are ignored", async (t) => {
  const { app } = await appWith(5);
  const factCursor = new URL(`http://x${nextOf(await request(app, "GET", "/api/v2/facts?limit=1"))!}`).searchParams.get("after")!;
  const postCursor = new URL(`http://x${nextOf(await request(app, "GET", "/api/v1/posts?limit=1"))!}`).searchParams.get("after")!;
  const cases: [string, string, RegExp][] = [
    ["limit=0", "limit", /limit must be a whole number from 1 to 1000/],
    ["limit=1001", "limit", /from 1 to 1000.*"1001"/],
    ["limit=-1", "limit", /limit/],
    ["limit=1.5", "limit", /limit/],
    ["limit=05", "limit", /plain digits/],
    ["limit=1e3", "limit", /limit/],
    ["limit=abc", "limit", /"abc"/],
    ["limit=", "limit", /limit/],
    ["limit", "limit", /limit/],
    ["limit=%zz", "limit", /percent-encoding/],
    ["limit=2&limit=3", "limit", /twice/],
    ["after=", "after", /after is not a cursor of this list/],
    ["after=!!", "after", /after/],
    ["after=bm9wZQ", "after", /Link: rel="next"/],
    [`after=${Buffer.from("posts:-1").toString("base64url")}`, "after", /after/],
    [`after=${Buffer.from("posts:01").toString("base64url")}`, "after", /after/],
    [`after=${Buffer.from("posts:1").toString("base64")}=`, "after", /after/],
    [`after=${factCursor}`, "after", /not a cursor of this list/],
    [`limit=2&after=${postCursor}&after=${postCursor}`, "after", /twice/],
  ];
  for (const [query, parameter, detail] of cases) {
    const target = `/api/v1/posts?${query}`;
    const body = checkProblem(t, await request(app, "GET", target), 400, detail, target);
    t.equal(body?.type, "/problems/invalid-query", query);
    t.equal(body?.parameter, parameter, `${query}: names ${parameter}`);
  }
  checkProblem(t, await request(app, "GET", `/api/v2/facts?after=${postCursor}`), 400, /not a cursor of this list/);
  const ok = await request(app, "GET", `/api/v1/posts?foo=bar&limit=2&x&after=${postCursor}&utm=1`);
  t.equal(ok.status, 200, "unknown parameters are ignored");
  t.equal(JSON.parse(ok.body).posts.length, 2);
  t.equal((await request(app, "GET", "/api/v1/posts?lim%69t=1")).headers.link !== undefined, true, "names are percent-decoded");
});

t.test("list ETags: the same until the collection changes; If-None-Match answers 304 without reading it", async (t) => {
  const { app, store } = await appWith(3);
  const etag = async (target = "/api/v1/posts", headers: Record<string, string> = {}) => (await request(app, "GET", target, headers)).headers.etag!;
  const json = { "Content-Type": "application/json" };
  const first = await etag();
  t.equal(await etag(), first, "stable while nothing changes");
  t.not(await etag("/api/v1/posts", YAML_ACCEPT), first, "another format, another tag");
  t.not(await etag("/api/v1/posts?limit=2"), first, "a page has its own tag");
  t.equal(await etag("/api/v1/post"), first, "/post and /posts are the same list");

  const conflict = await request(app, "POST", "/api/v1/post/p-0000", json, '{"title": "t", "body": "b"}');
  t.equal(conflict.status, 409);
  t.equal(await etag(), first, "a refused publish changes nothing");
  t.equal((await request(app, "DELETE", "/api/v1/post/nope")).status, 404);
  t.equal(await etag(), first, "a delete of nothing changes nothing");
  t.equal((await request(app, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "Another fact.")).status, 201);
  t.equal(await etag(), first, "a new fact is not a new post");

  const tags = new Set([first]);
  for (const [method, target, body] of [
    ["POST", "/api/v1/post/fresh", '{"title": "t", "body": "b"}'],
    ["PATCH", "/api/v1/post/fresh", '{"title": "t2"}'],
    ["DELETE", "/api/v1/post/fresh", undefined],
  ] as const) {
    t.ok((await request(app, method, target, json, body)).status < 300);
    const now = await etag();
    t.notOk(tags.has(now), `${method} gives a new tag`);
    tags.add(now);
  }

  const current = await etag();
  const counts = countReads(store);
  for (const inm of [current, current.slice(2), `"other", ${current}`, "*"]) {
    const r = await request(app, "GET", "/api/v1/posts", { "If-None-Match": inm });
    t.equal(r.status, 304, `If-None-Match: ${inm}`);
    t.equal(r.body, "");
    t.equal(r.headers.etag, current);
    t.equal(r.headers.vary, "Accept, Content-Type, Accept-Encoding", "the 200's Vary");
    t.equal(r.headers["cache-control"], "no-cache");
    t.equal(r.headers["content-length"], undefined);
    t.equal(r.headers["transfer-encoding"], undefined);
  }
  t.strictSame(counts, { page: 0, pageJson: 0, span: 0, list: 0, revision: 4 }, "four 304s: four revisions read, nothing else");
  const page = await etag("/api/v1/posts?limit=2");
  for (const name of ["page", "pageJson", "span", "list", "revision"] as const) counts[name] = 0;
  t.equal((await request(app, "GET", "/api/v1/posts?limit=2", { "If-None-Match": page })).status, 304, "a page too");
  t.strictSame({ page: counts.page, pageJson: counts.pageJson, span: counts.span, list: counts.list }, { page: 0, pageJson: 0, span: 0, list: 0 }, "no item and no index entry read for a 304");
  t.equal(counts.revision, 1, "only the revision");
  t.equal((await request(app, "GET", "/api/v1/posts", { "If-None-Match": first })).status, 200, "an old tag gets the list");
});

t.test("facts: a new fact changes the facts list's tag; pages of facts follow their ids", async (t) => {
  const { app, store } = await appWith(0);
  const before = (await request(app, "GET", "/api/v2/facts")).headers.etag;
  await request(app, "POST", "/api/v2/facts", { "Content-Type": "text/plain" }, "A new fact.");
  const after = await request(app, "GET", "/api/v2/facts");
  t.not(after.headers.etag, before);
  t.equal((await request(app, "GET", "/api/v2/facts", { "If-None-Match": after.headers.etag! })).status, 304);
  const facts = await store.facts.list();
  const seen: unknown[] = [];
  for (let target: string | undefined = "/api/v2/facts?limit=7"; target !== undefined; ) {
    const r = await request(app, "GET", target, YAML_ACCEPT);
    seen.push(...(load(r.body) as { facts: unknown[] }).facts);
    target = nextOf(r);
  }
  t.strictSame(seen, facts);
});

t.test("a store that fails while a list streams: the connection is cut, and no last chunk makes it look complete", async (t) => {
  const { app, store } = await appWith(400);
  let calls = 0;
  const page = store.posts.pageJson.bind(store.posts);
  // The first batch goes out with the head; the second fails.
  store.posts.pageJson = async (query) => {
    if (++calls === 2) throw new Error("the database went away");
    return page(query);
  };
  const running = await listen(app.handle);
  t.teardown(running.close);
  const out = await talk(running.port, ["GET /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n"]);
  const text = out.toString("latin1");
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.throws(() => splitResponses(out), /cut short/, "the body has no last chunk");
  t.notMatch(text, /The server is up/, "and nothing follows it on that connection");
});

t.test("JSON text as the store keeps it: a page in one read with a Content-Length, a long list batch by batch with no empty read at its end", async (t) => {
  const { app, store } = await appWith(300, NOTHING_KEPT);
  const posts = await store.posts.list();
  const counts = countReads(store);
  const page = await request(app, "GET", "/api/v1/posts?limit=50");
  t.equal(page.body, JSON.stringify({ posts: posts.slice(0, 50) }));
  t.equal(page.headers["content-length"], String(Buffer.byteLength(page.body)), "a page that fits one batch goes whole");
  t.ok(nextOf(page), "with its next link");
  t.strictSame(counts, { page: 0, pageJson: 1, span: 0, list: 0, revision: 0 }, "one read: items and revision together");

  for (const name of Object.keys(counts) as (keyof typeof counts)[]) counts[name] = 0;
  const whole = await request(app, "GET", "/api/v1/posts");
  t.equal(whole.body, JSON.stringify({ posts }));
  t.equal(whole.headers["transfer-encoding"], "chunked", "a list longer than a batch is streamed");
  t.ok(counts.pageJson > 1, `${counts.pageJson} batches`);
  t.strictSame({ ...counts, pageJson: 0 }, { page: 0, pageJson: 0, span: 0, list: 0, revision: 0 }, "nothing else read");

  // A page whose items pass a batch's size before its end: the end is fixed from the index, the rest streamed up to it.
  for (const name of Object.keys(counts) as (keyof typeof counts)[]) counts[name] = 0;
  const big = await request(app, "GET", "/api/v1/posts?limit=200");
  t.equal(big.body, JSON.stringify({ posts: posts.slice(0, 200) }), "exactly the page");
  t.equal(big.headers["transfer-encoding"], "chunked");
  t.equal(counts.span, 1, "its end from the index");
  const rest = await request(app, "GET", nextOf(big)!);
  t.strictSame(JSON.parse(rest.body).posts, posts.slice(200), "the next link starts after it");
});

t.test("a YAML page with nothing kept: one read of the posts' stored YAML entries, sent whole, the same bytes and fields as the streamed page", async (t) => {
  const { app: plain, store } = await appWith(120, NOTHING_KEPT);
  const posts = await store.posts.list();
  const counts = countReads(store);
  const pageYaml = store.posts.pageYaml.bind(store.posts);
  let yamlReads = 0;
  store.posts.pageYaml = (query) => (yamlReads++, pageYaml(query));
  // The same store behind an app that keeps, whose first answer to a page is streamed (and then kept).
  const streaming = createApp({ store });
  for (const target of ["/api/v1/posts?limit=50", "/api/v1/post?limit=7&after=" + encodeURIComponent(nextOf(await request(plain, "GET", "/api/v1/posts?limit=3", YAML_ACCEPT))!.split("after=")[1]!)]) {
    yamlReads = 0;
    counts.span = 0;
    counts.page = 0;
    const whole = await request(plain, "GET", target, YAML_ACCEPT);
    t.equal(whole.status, 200);
    t.equal(whole.headers["transfer-encoding"], undefined, `${target}: sent whole`);
    t.equal(Number(whole.headers["content-length"]), Buffer.byteLength(whole.body));
    t.equal(yamlReads, 1, "one read of the entries");
    t.strictSame([counts.span, counts.page], [0, 0], "and no separate read of where the page ends, nor of the posts");
    const streamed = await request(streaming, "GET", target, YAML_ACCEPT);
    t.equal(streamed.headers["transfer-encoding"], "chunked", "the keeping app streams its first answer");
    t.equal(whole.body, streamed.body, "byte for byte the streamed page");
    for (const field of ["content-type", "etag", "link", "cache-control", "vary"]) t.equal(whole.headers[field], streamed.headers[field], field);
  }
  const first = await request(plain, "GET", "/api/v1/posts?limit=50", YAML_ACCEPT);
  t.strictSame((load(first.body) as { posts: unknown[] }).posts, posts.slice(0, 50), "the first 50 posts");
  t.equal(first.body, dump({ posts: posts.slice(0, 50) }, { noRefs: true, lineWidth: -1 }), "js-yaml's dump of the page, byte for byte");
});

t.test("a YAML page whose posts have no stored entry (written before the store kept YAML): made from their texts, sent, and stored, so the next read joins them", async (t) => {
  const { app, store } = await appWith(120, NOTHING_KEPT);
  const posts = await store.posts.list();
  // What a store migrated from before entries has for some of its posts: none (the memory store cannot hold that,
  // so its page is shown without them).
  const pageYaml = store.posts.pageYaml.bind(store.posts);
  const keepYaml = store.posts.keepYaml.bind(store.posts);
  let missing = new Set(posts.filter((_, i) => i % 3 === 1).map((p) => p.id));
  const kept: string[] = [];
  store.posts.pageYaml = async (query) => {
    const page = await pageYaml(query);
    const all = JSON.parse(`[${Buffer.from((await store.posts.pageJson(query)).members).toString()}]`) as { id: string }[];
    if (!all.some((post) => missing.has(post.id))) return page;
    const { entries: _entries, ...end } = page;
    const items = await Promise.all(all.map(async (post) => {
      const { json, tag } = (await store.posts.representation(post.id))!;
      return missing.has(post.id) ? { id: post.id, tag, yaml: null, json } : { id: post.id, tag, yaml: yamlEntry(post) };
    }));
    return { ...end, items };
  };
  store.posts.keepYaml = async (entries) => {
    for (const entry of entries) {
      kept.push(entry.id);
      missing.delete(entry.id);
    }
    return keepYaml(entries);
  };
  const expected = dump({ posts: posts.slice(0, 50) }, { noRefs: true, lineWidth: -1 });
  const first = await request(app, "GET", "/api/v1/posts?limit=50", YAML_ACCEPT);
  t.equal(first.body, expected, "the same bytes as js-yaml's dump of the page");
  t.strictSame(kept, posts.slice(0, 50).filter((_, i) => i % 3 === 1).map((p) => p.id), "the missing entries, made and given to the store");
  t.equal(missing.size, posts.filter((_, i) => i % 3 === 1).length - kept.length, "the posts not read stay without");
  kept.length = 0;
  const second = await request(app, "GET", "/api/v1/posts?limit=50", YAML_ACCEPT);
  t.equal(second.body, expected);
  t.strictSame(kept, [], "the second read makes nothing");
  // A whole list, streamed: the rest made as each batch is written, the same bytes.
  missing = new Set(posts.filter((_, i) => i % 2 === 0).map((p) => p.id));
  const list = await request(app, "GET", "/api/v1/posts", YAML_ACCEPT);
  t.equal(list.body, dump({ posts }, { noRefs: true, lineWidth: -1 }), "the whole list");
  t.equal(missing.size, 0, "every missing entry made and kept");
});
