// Kept reads in one process (src/api/kept-reads.ts, kept.ts): what a second read does not read again, what a write
// makes it read again, and the bounds on what is kept. Across processes:
// test/api/kept-processes.test.ts.

import t from "tap";
import { gunzipSync } from "node:zlib";
import { dump } from "js-yaml";
import { createApp, type AppOptions } from "../../src/app.js";
import { Kept } from "../../src/api/kept.js";
import { Gathering, keptWhileSent, WHOLE_BYTES } from "../../src/api/kept-reads.js";
import { entryNow, entryOf, OFF_LOOP_CHARS } from "../../src/store/yaml-entry.js";
import { yamlEntry } from "../../src/representation/yaml.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { representationOf } from "../../src/store/representation.js";
import { makePost } from "../../src/store/records.js";
import type { Store } from "../../src/store/types.js";
import { request } from "../helpers/app.js";
import { inject } from "../../src/http/connection/inject.js";
import { dechunk } from "../helpers/wire.js";

const YAML = { Accept: "application/yaml" };

async function appWith(posts: number, options: Partial<AppOptions> = {}) {
  const store = createMemoryStore();
  for (let i = 0; i < posts; i++) await store.posts.create({ id: `p${i}`, title: i % 7 === 0 ? "yes" : `Post ${i}`, body: `line one\n\nline ${i}\n`.repeat(i % 5 === 0 ? 300 : 1), tags: i % 3 === 0 ? [] : ["- x", "#"] });
  return { store, app: createApp({ store, ...options }) };
}

/** Counts the calls of the store's post reads. */
function countReads(store: Store): Record<string, number> {
  const counts: Record<string, number> = {};
  const posts = store.posts as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ["representation", "page", "pageJson", "pageYaml", "span", "revision"]) {
    counts[name] = 0;
    const original = posts[name]!.bind(store.posts);
    posts[name] = (...args: unknown[]) => {
      counts[name]!++;
      return original(...args);
    };
  }
  return counts;
}

t.test("a post read twice is read from the store once; a write in between makes the next read go to the store", async (t) => {
  const { store, app } = await appWith(3);
  const counts = countReads(store);
  const first = await request(app, "GET", "/api/v1/post/p1");
  const second = await request(app, "GET", "/api/v1/post/p1");
  t.equal(second.body, first.body);
  t.equal(second.headers.etag, first.headers.etag);
  t.equal(counts.representation, 1, "the second answer is the kept one");
  t.equal(counts.revision, 2, "each read checks the revision");
  // Any post written moves the posts' revision: even another post's write makes the next read look again.
  await store.posts.update("p2", (p) => ({ title: "other", body: p.body }));
  await request(app, "GET", "/api/v1/post/p1");
  t.equal(counts.representation, 2, "a write to the posts: read again");
  const patched = await request(app, "PATCH", "/api/v1/post/p1", { "Content-Type": "application/merge-patch+json" }, JSON.stringify({ title: "changed" }));
  t.equal(patched.status, 200);
  const after = await request(app, "GET", "/api/v1/post/p1");
  t.match(after.body, /"title":"changed"/);
  t.equal((await request(app, "GET", "/api/v1/post/p1", { "If-None-Match": first.headers.etag! })).status, 200, "the old ETag: no 304");
  t.equal((await request(app, "GET", "/api/v1/post/p1", { "If-None-Match": after.headers.etag! })).status, 304);
});

t.test("a list and a page, JSON and YAML, read twice: the second reads the revision only; whole up to WHOLE_BYTES, in pieces past it", async (t) => {
  const { store, app } = await appWith(300);
  const posts = await store.posts.list();
  const kinds = new Set<string>();
  for (const [target, headers, expected] of [
    ["/api/v1/posts", {}, JSON.stringify({ posts })],
    ["/api/v1/posts?limit=50", {}, JSON.stringify({ posts: posts.slice(0, 50) })],
    ["/api/v1/posts", YAML, dump({ posts }, { noRefs: true, lineWidth: -1 })],
    ["/api/v1/posts?limit=50", YAML, dump({ posts: posts.slice(0, 50) }, { noRefs: true, lineWidth: -1 })],
  ] as const) {
    const first = await request(app, "GET", target, headers);
    t.equal(first.body, expected, `${target} ${JSON.stringify(headers)}: js-yaml's or JSON.stringify's bytes of the whole`);
    const counts = countReads(store);
    const second = await request(app, "GET", target, headers);
    t.equal(second.body, expected, "the kept bytes are the same");
    t.equal(second.headers.etag, first.headers.etag);
    const whole = Buffer.byteLength(expected) <= WHOLE_BYTES;
    kinds.add(whole ? "whole" : "pieces");
    t.equal(second.headers["content-length"], whole ? String(Buffer.byteLength(expected)) : undefined, whole ? "a small kept list goes whole" : "a large one in pieces");
    t.equal(second.headers["transfer-encoding"], whole ? undefined : "chunked");
    t.strictSame(counts, { representation: 0, page: 0, pageJson: 0, pageYaml: 0, span: 0, revision: 1 }, "nothing read but the revision");
  }
  t.strictSame([...kinds].sort(), ["pieces", "whole"], "both kinds were read");
  // Kept bytes through a coding, whole and in pieces, twice.
  for (const target of ["/api/v1/posts", "/api/v1/posts?limit=50"]) {
    const plain = (await request(app, "GET", target)).body;
    for (let i = 0; i < 2; i++) {
      const { output } = await inject(app, `GET ${target} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n`);
      const end = output.indexOf("\r\n\r\n");
      const head = output.subarray(0, end).toString("latin1");
      t.match(head, /\r\ncontent-encoding: gzip\r\n/i);
      const content = output.subarray(end + 4);
      const coded = /\r\ntransfer-encoding: chunked\r\n/i.test(head) ? dechunk(content, 0).content : content;
      t.equal(gunzipSync(coded).toString(), plain, `${target}: gzip of the kept bytes (${i + 1})`);
    }
  }
  await store.posts.delete("p0");
  const after = await request(app, "GET", "/api/v1/posts", YAML);
  t.equal(after.body, dump({ posts: posts.slice(1) }, { noRefs: true, lineWidth: -1 }), "after a delete: the list without it");
});

t.test("with nothing kept, YAML is the same bytes", async (t) => {
  const { store, app } = await appWith(120, { kept: { responseBytes: 0 } });
  const posts = await store.posts.list();
  for (let i = 0; i < 2; i++) t.equal((await request(app, "GET", "/api/v1/posts", YAML)).body, dump({ posts }, { noRefs: true, lineWidth: -1 }));
});

t.test("Kept: at most its budget, the least recently used let go first, no entry over a quarter", async (t) => {
  const kept = new Kept<string>(1000);
  for (const key of ["a", "b", "c", "d"]) kept.set(key, key.toUpperCase(), 250);
  t.equal(kept.bytes, 1000, "four of a quarter each fill it");
  t.equal(kept.get("a"), "A", "a used again");
  kept.set("e", "E", 250);
  t.equal(kept.get("b"), undefined, "b, the least recently used, went");
  t.strictSame([kept.get("a"), kept.get("c"), kept.get("d"), kept.get("e")], ["A", "C", "D", "E"]);
  t.equal(kept.bytes, 1000);
  kept.set("f", "F", 251);
  t.equal(kept.get("f"), undefined, "over a quarter of the budget: not kept");
  kept.set("a", "A2", 10);
  t.equal(kept.bytes, 760, "replacing an entry counts its new size only");
  t.equal(new Kept<string>(0).entryLimit, 0);
});

t.test("Kept: an entry used while among the newer half keeps its place; one used among the older half goes to the back", async (t) => {
  const kept = new Kept<number>(1000);
  const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
  for (const [i, key] of keys.entries()) kept.set(key, i, 100);
  t.equal(kept.get("k8"), 8, "k8: among the newer half");
  t.equal(kept.get("k1"), 1, "k1: among the older half, so moved behind k9");
  // Seven new entries push out the seven at the front: k0 and k2 to k7, never used again.
  for (let n = 0; n < 7; n++) kept.set(`new${n}`, -1, 100);
  t.strictSame(
    keys.map((key) => kept.get(key) !== undefined),
    [false, true, false, false, false, false, false, false, true, true],
    "k1, k8 and k9 stay; the others went, oldest first",
  );
});

async function* pieces(count: number, size: number) {
  const buffer = Buffer.alloc(size);
  for (let i = 0; i < count; i++) {
    buffer.fill(65 + i); // the same buffer each time, as a list's PieceBuffer
    yield buffer;
  }
}

t.test("keptWhileSent: a copy of what went out, one stream per key, within the gathering's budget", async (t) => {
  const gathering = new Gathering(1000);
  const kept: Buffer[] = [];
  const sent: Buffer[] = [];
  for await (const piece of keptWhileSent(pieces(3, 100), "k", gathering, 1000, (body) => kept.push(body))) sent.push(Buffer.from(piece as Uint8Array));
  t.equal(kept.length, 1);
  t.equal(kept[0]!.toString(), "A".repeat(100) + "B".repeat(100) + "C".repeat(100), "copied as each piece went, not the reused buffer at the end");
  t.equal(gathering.bytes, 0, "released when done");

  // Two streams of one key at once: the second only passes its pieces on.
  const one = keptWhileSent(pieces(3, 100), "same", gathering, 1000, (body) => kept.push(body));
  const two = keptWhileSent(pieces(3, 100), "same", gathering, 1000, (body) => kept.push(body));
  await one.next();
  await two.next();
  t.equal(gathering.bytes, 100, "one copy between them");
  // A client that leaves: its copy is let go.
  await one.return(undefined);
  t.equal(gathering.bytes, 0);
  for await (const _ of two);
  t.equal(kept.length, 1, "neither kept anything: the first left, the second never gathered");

  // Past the limit, or the gathering's budget: nothing kept, nothing held.
  for await (const _ of keptWhileSent(pieces(5, 100), "big", gathering, 400, (body) => kept.push(body)));
  t.equal(kept.length, 1);
  const small = new Gathering(250);
  for await (const _ of keptWhileSent(pieces(3, 100), "x", small, 1000, (body) => kept.push(body)));
  t.equal(kept.length, 1);
  t.equal(small.bytes, 0);
});

t.test("a large post's YAML is written on js-yaml's own thread, the same bytes as on the loop", async (t) => {
  const posts = [
    makePost("ctl", { title: "yes", body: "\u0001\u0085\u2028".repeat(20_000) }, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
    makePost("lines", { title: "- x", body: "a line\n\n  indented\n".repeat(2_000), tags: ["#", ""] }, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
  ];
  for (const post of posts) {
    const representation = representationOf(post);
    t.ok(representation.json.length >= OFF_LOOP_CHARS, `${post.id}: large enough to go to the thread`);
    t.equal(entryNow(post, representation.json), null, `${post.id}: not made in a write's transaction (made after it, on the thread)`);
    const entry = entryOf(representation.json);
    t.type(entry, Promise, `${post.id}: not written on the loop`);
    t.equal(await entry, yamlEntry(post), `${post.id}: js-yaml's entry`);
  }
  // Over HTTP: a list of such posts is js-yaml's dump of the whole.
  const store = createMemoryStore();
  for (const post of posts) await store.posts.create({ id: post.id, title: post.title, body: post.body, ...(post.tags === undefined ? {} : { tags: post.tags }) });
  const app = createApp({ store });
  t.equal((await request(app, "GET", "/api/v1/posts", YAML)).body, dump({ posts: await store.posts.list() }, { noRefs: true, lineWidth: -1 }));
});
