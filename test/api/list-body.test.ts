// The streamed list body on its own: the same bytes as serializing the whole
// wrapper, for any strings; batches that follow the items' sizes; and nothing
// read past what the consumer asked for.

import t from "tap";
import fc from "fast-check";
import { dump, load } from "js-yaml";
import { runInNewContext } from "node:vm";
import v8 from "node:v8";
import { BATCH_CHARS, FIRST_BATCH, FIRST_BATCH_CHARS, JSON_BATCH, jsonListBody, listBody, MAX_BATCH, PIECE_CHARS, type ListSource } from "../../src/api/list-body.js";
import { createMemoryStore } from "../../src/store/memory.js";
import { codePoint } from "../helpers/code-points.js";
import type { JsonPage, Page, PageQuery } from "../../src/store/types.js";

/** An item's size as the store counts it for maxChars (here: its JSON). */
const charsOf = (item: unknown) => JSON.stringify(item).length;

/** Items at positions 1, 2, 3, ..., served a page at a time as a store would, with every query and page recorded. */
function source<T>(items: readonly T[]): ListSource<T> & { queries: PageQuery[]; pages: T[][] } {
  const queries: PageQuery[] = [];
  const pages: T[][] = [];
  return {
    queries,
    pages,
    async page(query): Promise<Page<T>> {
      queries.push(query);
      const from = query.after ?? 0;
      const to = Math.min(items.length, from + query.limit, query.through ?? Infinity);
      const slice: T[] = [];
      let chars = 0;
      for (let i = from; i < to && chars < (query.maxChars ?? Infinity); i++) {
        slice.push(items[i]!);
        chars += charsOf(items[i]);
      }
      pages.push(slice);
      return slice.length === 0 ? { items: [] } : { items: slice, last: from + slice.length };
    },
  };
}

async function collect(body: AsyncIterable<string>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const piece of body) pieces.push(piece);
  return pieces;
}

/** Strings that need quoting, escaping or a block scalar in YAML, mixed with arbitrary Unicode. */
const awkward = fc.oneof(
  fc.string({ unit: codePoint, maxLength: 30 }).filter((s) => !/\p{Cs}/u.test(s)), // well-formed: the API refuses lone surrogates,
  fc.constantFrom("", " ", "- x", ": ", "a: b", "#", "'", '"', "\n", "\r\n", "\t", "  x", "x  ", "null", "~", "yes", "no", "on", "0x1f", "1e3", "0123", "&a", "*a", "!t", "%", "@", "`", "{a}", "[x]", "\u2028", "\u0085", "\ufeff", "é", "😀"),
  fc.array(fc.constantFrom("a", " ", "\n", ":", "-", "#", "'", '"', "\\", "\u2028", "😀"), { maxLength: 20 }).map((a) => a.join("")),
);

const post = fc.record(
  {
    id: fc.stringMatching(/^[A-Za-z0-9_-]{1,10}$/),
    title: awkward,
    body: awkward,
    author: awkward,
    tags: fc.array(awkward, { maxLength: 4 }),
    publishedAt: fc.constant("2026-01-01T00:00:00.000Z"),
  },
  { requiredKeys: ["id", "title", "body", "publishedAt"] },
);

t.test("for any items: the bytes of JSON.stringify and of js-yaml's dump of the whole wrapper, and they read back exactly", async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(post, { maxLength: 40 }), async (items) => {
      const json = (await collect(listBody(source(items), { wrapper: "posts", format: "json" }))).join("");
      const yaml = (await collect(listBody(source(items), { wrapper: "posts", format: "yaml" }))).join("");
      return (
        json === JSON.stringify({ posts: items }) &&
        yaml === dump({ posts: items }, { noRefs: true, lineWidth: -1 }) &&
        JSON.stringify(load(yaml)) === JSON.stringify({ posts: items })
      );
    }),
    { numRuns: 300 },
  );
  t.pass("300 random lists");
});

t.test("batches: a small first one, then up to MAX_BATCH items or BATCH_CHARS of text, whatever the items' sizes", async (t) => {
  const small = Array.from({ length: 5000 }, (_, i) => ({ id: `s${i}` }));
  const src = source(small);
  const pieces = await collect(listBody(src, { wrapper: "posts", format: "json" }));
  t.strictSame(src.queries[0], { after: 0, limit: FIRST_BATCH, maxChars: FIRST_BATCH_CHARS }, "the first batch is small, for an early first byte");
  t.ok(src.queries.slice(1).every((q) => q.limit === MAX_BATCH && q.maxChars === BATCH_CHARS), "then full batches");
  // A piece is handed on once it reaches PIECE_CHARS (a group of items may take it past), or earlier when the producer has worked TURN_MS.
  t.ok(pieces.every((p) => p.length < PIECE_CHARS + 16 * 1024 + 100), "pieces of about PIECE_CHARS");
  t.equal(pieces.join(""), JSON.stringify({ posts: small }));

  // Small posts, then large ones: no batch grows with the items. A count alone would read the 40 large ones
  // at once (2 MB, where BATCH_CHARS is 128 KiB), in the batch that starts among the small ones; more of them
  // would only make the YAML longer to write.
  const mixed = [...Array.from({ length: 600 }, (_, i) => ({ id: `m${i}` })), ...Array.from({ length: 40 }, (_, i) => ({ id: `l${i}`, body: "x".repeat(50_000) }))];
  const src2 = source(mixed);
  const yaml = (await collect(listBody(src2, { wrapper: "posts", format: "yaml" }))).join("");
  t.equal(yaml, dump({ posts: mixed }, { noRefs: true, lineWidth: -1 }));
  const largest = Math.max(...src2.pages.map((page) => page.reduce((sum, item) => sum + charsOf(item), 0)));
  t.ok(largest < BATCH_CHARS + 51_000, `the largest batch held ${largest} characters: about BATCH_CHARS and one item`);
});

t.test("a JSON list: batches of at most BATCH_CHARS, each asking for about as many items as the last one says fit", async (t) => {
  const store = createMemoryStore();
  t.teardown(() => store.close());
  const sizes = [...Array.from({ length: 700 }, () => 900), ...Array.from({ length: 40 }, () => 50_000), ...Array.from({ length: 300 }, () => 300)];
  for (const [i, chars] of sizes.entries()) await store.posts.create({ id: `p${i}`, title: "t", body: "x".repeat(chars) });
  const queries: PageQuery[] = [];
  const pages: JsonPage[] = [];
  const recording = {
    async pageJson(query: PageQuery): Promise<JsonPage> {
      queries.push(query);
      const page = await store.posts.pageJson(query);
      pages.push(page);
      return page;
    },
  };
  const first = await recording.pageJson({ ...JSON_BATCH });
  const pieces: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const piece of jsonListBody(recording, first, { wrapper: "posts" })) {
    buffers.add(piece.buffer);
    // A copy, as the socket takes one: the next piece is written over this one.
    pieces.push(Buffer.from(piece));
  }
  t.equal(Buffer.concat(pieces).toString(), JSON.stringify({ posts: await store.posts.list() }), "the bytes of the whole list");
  // One buffer, and one more each time a batch outgrew it (the 50 KB items): never a new one per piece.
  t.ok(pieces.length >= 20 && buffers.size <= 3, `${pieces.length} pieces written into ${buffers.size} buffers`);
  t.ok(queries.every((q) => q.maxChars === BATCH_CHARS && q.limit >= 1 && q.limit <= MAX_BATCH), "every batch bounded by BATCH_CHARS and MAX_BATCH");
  const largest = Math.max(...pages.map((page) => page.members.length));
  t.ok(largest < BATCH_CHARS + 51_000, `the largest batch held ${largest} bytes: about BATCH_CHARS and one item`);
  for (let i = 1; i < queries.length; i++) {
    const before = pages[i - 1]!;
    t.equal(queries[i]!.limit, Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_CHARS / (before.members.length / before.count)))), `batch ${i + 1} asks for what fits at the last batch's size per item`);
  }
  t.ok(pages.at(-1)!.more === false && pages.every((page) => page.count > 0), "no empty batch is read to learn the end");
});

t.test("through and after bound the items; nothing is read before the first piece is asked for", async (t) => {
  const items = Array.from({ length: 50 }, (_, i) => ({ id: `i${i}` }));
  const src = source(items);
  const body = listBody(src, { wrapper: "facts", format: "json", after: 10, through: 20 });
  t.equal(src.queries.length, 0, "made, not started: nothing read");
  t.strictSame(JSON.parse((await collect(body)).join("")), { facts: items.slice(10, 20) });
});

t.test("a consumer that stops (a client that left) stops the reading: nothing is held, nothing more is read", async (t) => {
  const items = Array.from({ length: 20_000 }, (_, i) => ({ id: `i${i}`, text: "some text to fill the pieces" }));
  const src = source(items);
  const body = listBody(src, { wrapper: "posts", format: "json" });
  await body.next();
  await body.next();
  const read = src.queries.length;
  t.ok(read <= 8, `only the batches two pieces need (${read} of ${Math.ceil(items.length / MAX_BATCH)})`);
  t.strictSame(await body.return(undefined), { done: true, value: undefined });
  t.strictSame(await body.next(), { done: true, value: undefined });
  t.equal(src.queries.length, read, "no batch read after the consumer stopped");
});

t.test("a JSON list paused mid-way (a client that stopped reading) holds only the piece being sent, not the batches before it", async (t) => {
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  // Ten batches of 1,000 one-character members; every batch's bytes watched for collection.
  const batches: WeakRef<Uint8Array>[] = [];
  const recording = {
    async pageJson(query: PageQuery): Promise<JsonPage> {
      const from = (query.after) ?? 0;
      const members = Buffer.from(Array.from({ length: 1000 }, () => "1").join(","));
      batches.push(new WeakRef(members));
      return { members, count: 1000, last: from + 1000, more: from + 1000 < 10_000, revision: { epoch: "e", n: 1 } };
    },
  };
  // The first batch is read where the handler reads it; nothing of it stays in this test's scope.
  const start = async () => jsonListBody(recording, await recording.pageJson({ ...JSON_BATCH }), { wrapper: "posts" });
  const body = await start();
  for (let i = 0; i < 4; i++) await body.next();
  // A new task: the WeakRefs made in the last one no longer keep their targets.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  t.equal(batches.length, 4, "four batches read for four pieces");
  t.strictSame(
    batches.slice(0, 3).map((ref) => ref.deref() === undefined),
    [true, true, true],
    "the first three batches are let go while the fourth piece waits to be sent",
  );
  await body.return(undefined);
});

t.test("a JSON list asks for its later batches as text (PageQuery.text), its first as bytes", async (t) => {
  const store = createMemoryStore();
  t.teardown(() => store.close());
  for (let i = 0; i < 300; i++) await store.posts.create({ id: `p${i}`, title: "t", body: "x".repeat(2000) });
  const queries: PageQuery[] = [];
  const recording = {
    async pageJson(query: PageQuery): Promise<JsonPage> {
      queries.push(query);
      const page = await store.posts.pageJson(query);
      // As a store that reads text answers it.
      return query.text === true ? { ...page, members: Buffer.from(page.members).toString() } : page;
    },
  };
  const first = await recording.pageJson({ ...JSON_BATCH });
  const pieces: Buffer[] = [];
  for await (const piece of jsonListBody(recording, first, { wrapper: "posts" })) pieces.push(Buffer.from(piece));
  t.equal(Buffer.concat(pieces).toString(), JSON.stringify({ posts: await store.posts.list() }), "the bytes of the whole list, from text as from bytes");
  t.ok(queries.length >= 3, `${queries.length} batches`);
  t.strictSame(queries.map((q) => q.text === true), [false, ...queries.slice(1).map(() => true)], "the first batch as bytes, the later ones as text");
});
