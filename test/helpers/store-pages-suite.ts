// The shared suite for the cursor-style reads of the listable collections
// (posts and facts): keyset pages, their spans, and the revision counter.
// Run by storeSuite for every Store implementation.

import type { Test } from "tap";
import type { Fact, Page, PagedCollection, Position, Store, StoreOptions } from "../../src/store/types.js";
import { seed, SEED_FACTS } from "../../src/store/seed.js";
import { prng } from "./prng.js";
import { yamlEntry } from "../../src/representation/yaml.js";
import { OFF_LOOP_CHARS } from "../../src/store/yaml-entry.js";

type Open = (t: Test, options?: StoreOptions) => Promise<Store>;

const post = (id: string) => ({ id, title: `Title ${id}`, body: `Body of ${id}` });

async function createPosts(store: Store, ids: readonly string[]): Promise<void> {
  for (const id of ids) await store.posts.create(post(id));
}

/** Every page of `limit` items from the start, checking each page's own promises on the way. */
async function walk<T>(t: Test, collection: PagedCollection<T>, limit: number): Promise<T[]> {
  const all: T[] = [];
  let after: Position = 0;
  for (let pages = 0; pages < 10_000; pages++) {
    const span = await collection.span({ after, limit });
    const page: Page<T> = await collection.page({ after, limit });
    const json = await collection.pageJson({ after, limit });
    t.equal(Buffer.from(json.members).toString(), JSON.stringify(page.items).slice(1, -1), "pageJson holds the page's items as JSON text");
    t.strictSame([json.count, json.last, json.more], [page.items.length, page.last, span.more], "pageJson ends where the page ends and knows what span knows");
    t.strictSame(json.revision, await collection.revision(), "with the revision");
    t.ok(page.items.length <= limit, "a page holds at most limit items");
    t.equal(page.last, span.last, "span ends where the page ends");
    if (page.last !== undefined) t.ok(page.last > after, "positions grow");
    all.push(...page.items);
    if (!span.more) {
      t.equal((await collection.page({ after: page.last ?? after, limit })).items.length, 0, "nothing after the last page");
      return all;
    }
    t.equal(page.items.length, limit, "a page with more after it is full");
    after = page.last!;
  }
  throw new Error("the walk did not end");
}

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);

export async function pagesSuite(t: Test, open: Open): Promise<void> {
  await t.test("pages and revisions", async (t) => {
    await t.test("an empty collection: an empty page, no span, and a revision", async (t) => {
      const store = await open(t);
      t.strictSame(await store.posts.page({ limit: 10 }), { items: [] });
      t.strictSame(await store.posts.span({ limit: 10 }), { more: false });
      const rev = await store.posts.revision();
      t.equal(rev.n, 0);
      t.match(rev.epoch, /^[0-9a-f]{16}$/);
    });

    await t.test("pages walk the posts in list order, each exactly once, whatever the page size", async (t) => {
      const store = await open(t);
      const names = Array.from({ length: 23 }, (_, i) => `p${i}`);
      await createPosts(store, names);
      await store.posts.update("p4", (p) => ({ title: "changed", body: p.body })); // keeps its place
      const list = await store.posts.list();
      for (const limit of [1, 4, 5, 23, 100]) {
        t.strictSame(await walk(t, store.posts, limit), list, `limit ${limit}`);
      }
      const first = await store.posts.page({ limit: 5 });
      t.strictSame(JSON.stringify(first.items), JSON.stringify(list.slice(0, 5)), "the same bytes as list()");
    });

    await t.test("through leaves out what lies past it; span says what remains up to it", async (t) => {
      const store = await open(t);
      await createPosts(store, ["a", "b", "c", "d", "e"]);
      const head = await store.posts.page({ limit: 3 });
      t.strictSame(ids(head.items), ["a", "b", "c"]);
      const through = head.last!;
      t.strictSame(ids((await store.posts.page({ limit: 10, through })).items), ["a", "b", "c"]);
      t.strictSame(await store.posts.span({ limit: 10, through }), { last: through, more: false });
      t.strictSame(await store.posts.span({ limit: 2, through }), { last: (await store.posts.page({ limit: 2 })).last, more: true });
      const tail = await store.posts.page({ after: through, limit: 10 });
      t.strictSame(ids(tail.items), ["d", "e"]);
      t.strictSame(await store.posts.page({ after: tail.last!, limit: 10 }), { items: [] }, "after the end: empty");
      t.strictSame(await store.posts.page({ after: Number.MAX_SAFE_INTEGER, limit: 10 }), { items: [] }, "far past the end: empty");
    });

    await t.test("maxChars ends a page after the item whose text reaches it; at least one item always comes", async (t) => {
      const store = await open(t);
      // A post's size is its title and body: 100, 100, 5000, 10 characters.
      for (const [id, chars] of [["a", 100], ["b", 100], ["c", 5000], ["d", 10]] as const) await store.posts.create({ id, title: "t", body: "x".repeat(chars - 1) });
      t.strictSame(ids((await store.posts.page({ limit: 10, maxChars: 150 })).items), ["a", "b"], "b reaches 150: the page ends with it");
      t.strictSame(ids((await store.posts.page({ limit: 10, maxChars: 100 })).items), ["a"], "a reaches 100 by itself");
      const b = (await store.posts.page({ limit: 2 })).last!;
      t.strictSame(ids((await store.posts.page({ after: b, limit: 10, maxChars: 1 })).items), ["c"], "one item, however large");
      t.strictSame(ids((await store.posts.page({ after: b, limit: 10, maxChars: 5010 })).items), ["c", "d"]);
      t.strictSame(ids((await store.posts.page({ limit: 1, maxChars: 1_000_000 })).items), ["a"], "limit still counts");
      const walked: string[] = [];
      for (let after: Position = 0; ; ) {
        const page = await store.posts.page({ after, limit: 10, maxChars: 120 });
        if (page.last === undefined) break;
        walked.push(...ids(page.items));
        after = page.last;
      }
      t.strictSame(walked, ["a", "b", "c", "d"], "walking by last with maxChars reads everything once");
      await seed(store);
      // A fact's size is its text and source.
      const fact = (await store.facts.page({ limit: 1 })).items[0]!;
      const two = (await store.facts.page({ limit: 10, maxChars: fact.text.length + fact.source.length + 1 })).items;
      t.equal(two.length, 2, "facts count their text and source");
    });

    await t.test("pageJson: through and maxChars as page() has them, maxChars counting the JSON text, and more without reading an empty page", async (t) => {
      const store = await open(t);
      for (const [id, chars] of [["a", 100], ["b", 100], ["c", 5000], ["d", 10]] as const) await store.posts.create({ id, title: "t", body: "x".repeat(chars) });
      const sizes = (await store.posts.list()).map((p) => JSON.stringify(p).length);
      const ofJson = (page: { members: Uint8Array | string }) => ids(JSON.parse(`[${Buffer.from(page.members).toString()}]`) as { id: string }[]);
      const at = async (query: Parameters<typeof store.posts.pageJson>[0]) => {
        const page = await store.posts.pageJson(query);
        return { ids: ofJson(page), more: page.more, count: page.count };
      };
      t.strictSame(await at({ limit: 10, maxChars: sizes[0]! + 1 }), { ids: ["a", "b"], more: true, count: 2 }, "b reaches the size: the page ends with it");
      t.strictSame(await at({ limit: 10, maxChars: sizes[0]! }), { ids: ["a"], more: true, count: 1 }, "a reaches it by itself");
      const b = (await store.posts.page({ limit: 2 })).last!;
      t.strictSame(await at({ after: b, limit: 10, maxChars: 1 }), { ids: ["c"], more: true, count: 1 }, "one item, however large");
      t.strictSame(await at({ after: b, limit: 10, maxChars: sizes[2]! + 1 }), { ids: ["c", "d"], more: false, count: 2 }, "the last item: nothing more");
      t.strictSame(await at({ limit: 4 }), { ids: ["a", "b", "c", "d"], more: false, count: 4 }, "exactly the rest: nothing more");
      t.strictSame(await at({ limit: 3 }), { ids: ["a", "b", "c"], more: true, count: 3 });
      t.strictSame(await at({ limit: 10, through: b }), { ids: ["a", "b"], more: false, count: 2 }, "nothing more up to through");
      t.strictSame(await at({ limit: 1, through: b }), { ids: ["a"], more: true, count: 1 });
      const empty = await store.posts.pageJson({ after: Number.MAX_SAFE_INTEGER, limit: 10 });
      t.strictSame({ ...empty, members: Buffer.from(empty.members).toString() }, { members: "", count: 0, more: false, revision: await store.posts.revision() }, "past the end: an empty page, with the revision");
      await seed(store);
      const facts = await store.facts.pageJson({ limit: 3 });
      t.equal(Buffer.from(facts.members).toString(), JSON.stringify((await store.facts.list()).slice(0, 3)).slice(1, -1), "facts as JSON text too");
      t.strictSame(facts.revision, await store.facts.revision());
    });

    await t.test("pageYaml: each post's YAML entry as js-yaml writes it, joined, cut where pageJson cuts, with the revision", async (t) => {
      const store = await open(t);
      for (const [id, chars] of [["a", 100], ["b", 100], ["c", 5000], ["d", 10], ["e", 1]] as const) await store.posts.create({ id, title: "ünï ✓ - yes", body: "x\n\n  y".repeat(chars), tags: ["#", "null"] });
      await store.posts.update("b", (p) => ({ title: "changed: no", body: p.body }));
      await store.posts.delete("d");
      const queries = [{ limit: 10 }, { limit: 2 }, { limit: 10, maxChars: 1 }, { limit: 10, maxChars: 300 }, { after: 1, limit: 10 }, { limit: 10, through: 3 }, { after: 4, limit: 3 }, { after: 99, limit: 3 }];
      for (const query of queries) {
        const label = JSON.stringify(query);
        const json = await store.posts.pageJson(query);
        const posts = JSON.parse(`[${Buffer.from(json.members).toString()}]`) as object[];
        const page = await store.posts.pageYaml(query);
        t.equal(page.items, undefined, `${label}: every entry stored`);
        t.equal(Buffer.from(page.entries!).toString(), posts.map(yamlEntry).join(""), `${label}: the entries of the posts pageJson holds, joined`);
        t.strictSame([page.count, page.last, page.more, page.revision], [json.count, json.last, json.more, json.revision], `${label}: ends where pageJson ends, at its revision`);
        const text = await store.posts.pageYaml({ ...query, text: true });
        t.equal(text.entries, Buffer.from(page.entries!).toString(), `${label}: as a string when asked for text`);
      }
    });

    await t.test("pageYaml after writes: an update's entry replaces the old one; a long post's entry is stored (off the loop) by the time its write resolves", async (t) => {
      const store = await open(t);
      await store.posts.create({ id: "a", title: "first", body: "b" });
      const long = "\u0001 - ".repeat(OFF_LOOP_CHARS / 4);
      await store.posts.create({ id: "long", title: "yes", body: long });
      t.ok((await store.posts.representation("long"))!.json.length >= OFF_LOOP_CHARS, "too long to be made in the transaction");
      const entries = async () => Buffer.from((await store.posts.pageYaml({ limit: 10 })).entries ?? "(some entry missing)").toString();
      t.equal(await entries(), (await store.posts.list()).map(yamlEntry).join(""), "both entries stored");
      for (const [id, title] of [["a", "second"], ["long", "no"]] as const) {
        await store.posts.update(id, (p) => ({ title, body: p.body }));
        t.equal(await entries(), (await store.posts.list()).map(yamlEntry).join(""), `after ${id}'s update: its new entry, never the old one`);
      }
      await store.posts.update("long", () => ({ title: "short again", body: "b" }));
      t.equal(await entries(), (await store.posts.list()).map(yamlEntry).join(""), "a long post made short: its entry made in the write");
    });

    await t.test("keepYaml stores nothing over a post's own entry or under another tag, and moves no revision", async (t) => {
      const store = await open(t);
      await store.posts.create({ id: "a", title: "t", body: "b" });
      const before = await store.posts.revision();
      const { tag } = (await store.posts.representation("a"))!;
      await store.posts.keepYaml([{ id: "a", tag, yaml: "  - not: its own\n" }, { id: "a", tag: "another", yaml: "  - x\n" }, { id: "none", tag, yaml: "  - y\n" }]);
      t.equal(Buffer.from((await store.posts.pageYaml({ limit: 10 })).entries!).toString(), yamlEntry((await store.posts.get("a"))!), "the entry written with the post");
      t.strictSame(await store.posts.revision(), before, "the revision as it was");
    });

    await t.test("paging while posts are added, changed and deleted between pages: nothing skipped, nothing repeated", async (t) => {
      const random = prng(14);
      for (let round = 0; round < 4; round++) {
        const store = await open(t);
        const start = Array.from({ length: 40 }, (_, i) => `r${round}-${i}`);
        await createPosts(store, start);
        const deleted = new Set<string>();
        const added: string[] = [];
        const seen: string[] = [];
        let after: Position = 0;
        for (let pages = 0; ; pages++) {
          const page = await store.posts.page({ after, limit: 6 });
          seen.push(...ids(page.items));
          if (page.items.length === 0) break;
          after = page.last!;
          if (pages >= 8) continue; // then walk to the end undisturbed
          // Between pages: a new post, a change, and a deletion somewhere (seen or not).
          const id = `r${round}-new-${added.length}`;
          await store.posts.create(post(id));
          added.push(id);
          const alive = (await store.posts.list()).map((p) => p.id);
          await store.posts.update(alive[Math.floor(random() * alive.length)]!, (p) => ({ title: p.title + "!", body: p.body }));
          const victim = alive[Math.floor(random() * alive.length)]!;
          await store.posts.delete(victim);
          deleted.add(victim);
        }
        t.equal(new Set(seen).size, seen.length, `round ${round}: no post twice`);
        const kept = [...start, ...added].filter((id) => !deleted.has(id));
        t.strictSame(kept.filter((id) => !seen.includes(id)), [], `round ${round}: every post never deleted was seen`);
        const order = [...start, ...added];
        t.strictSame(seen, [...seen].sort((x, y) => order.indexOf(x) - order.indexOf(y)), `round ${round}: in creation order`);
      }
    });

    await t.test("deletes at the first, middle and last places between creates: pages hold the live posts in order, full while more follow", async (t) => {
      const store = await open(t);
      const random = prng(21);
      let serial = 0;
      const add = async () => {
        const id = `x${serial++}`;
        await store.posts.create(post(id));
        return id;
      };
      const live: string[] = [];
      for (let i = 0; i < 40; i++) live.push(await add());
      // Three deleted for one created each round: by the end most posts ever made are gone.
      for (let round = 0; round < 12; round++) {
        // The first, the last, and one in the middle; then a new post at the end.
        for (const place of [() => 0, () => live.length - 1, () => Math.floor(random() * live.length)]) {
          const [id] = live.splice(place(), 1);
          t.equal(await store.posts.delete(id!), true);
        }
        live.push(await add());
        t.strictSame(ids(await store.posts.list()), live, `round ${round}: list`);
        for (const limit of [1, 7, 50]) t.strictSame(ids(await walk(t, store.posts, limit)), live, `round ${round}: pages of ${limit}`);
      }
    });

    await t.test("a cursor at a deleted post's position goes on from where that post was", async (t) => {
      const store = await open(t);
      const names = Array.from({ length: 30 }, (_, i) => `c${i}`);
      await createPosts(store, names);
      // Each post's position: the last of a page that holds it alone.
      const positionOf = new Map<string, Position>();
      for (let after: Position = 0; ; ) {
        const page = await store.posts.page({ after, limit: 1 });
        if (page.last === undefined) break;
        positionOf.set(page.items[0]!.id, page.last);
        after = page.last;
      }
      const gone = ["c0", "c9", "c10", "c11", "c20", "c29"];
      for (const id of gone) await store.posts.delete(id);
      const live = names.filter((id) => !gone.includes(id));
      const livePast = (id: string) => live.filter((other) => positionOf.get(other)! > positionOf.get(id)!);
      const liveThrough = (id: string) => live.filter((other) => positionOf.get(other)! <= positionOf.get(id)!);
      for (const id of gone) {
        const at = positionOf.get(id)!;
        t.strictSame(ids((await store.posts.page({ after: at, limit: 5 })).items), livePast(id).slice(0, 5), `after ${id}`);
        t.strictSame(ids((await store.posts.page({ limit: 50, through: at })).items), liveThrough(id), `through ${id}`);
        const span = await store.posts.span({ after: at, limit: 5 });
        t.equal(span.more, livePast(id).length > 5, `span after ${id}`);
      }
      t.strictSame(await store.posts.page({ after: positionOf.get("c29")!, limit: 5 }), { items: [] }, "after the deleted last post: nothing");
    });

    await t.test("most posts deleted while a reader pages: its cursor goes on where it was, pages still full", async (t) => {
      const store = await open(t);
      const names = Array.from({ length: 200 }, (_, i) => `m${i}`);
      await createPosts(store, names);
      const seen: string[] = [];
      let after: Position = 0;
      for (let pages = 0; pages < 3; pages++) {
        const page = await store.posts.page({ after, limit: 10 });
        seen.push(...ids(page.items));
        after = page.last!;
      }
      // Three of every four, before the cursor, at it (m29 was the last read) and after it.
      const deleted = new Set(names.filter((_, i) => i % 4 !== 3));
      for (const id of deleted) t.equal(await store.posts.delete(id), true);
      const rest: string[] = [];
      for (;;) {
        const span = await store.posts.span({ after, limit: 10 });
        const page = await store.posts.page({ after, limit: 10 });
        if (span.more) t.equal(page.items.length, 10, "a page with more after it is full");
        if (page.last === undefined) break;
        rest.push(...ids(page.items));
        after = page.last;
      }
      t.strictSame(rest, names.slice(30).filter((id) => !deleted.has(id)), "the rest: every live post past the cursor, in order");
      t.strictSame(ids(await walk(t, store.posts, 10)), names.filter((id) => !deleted.has(id)), "and from the start");
    });

    await t.test("paging while other callers write at the same moment: nothing repeated, nothing present throughout missed", async (t) => {
      const store = await open(t);
      const stable = Array.from({ length: 30 }, (_, i) => `s${i}`);
      const doomed = Array.from({ length: 30 }, (_, i) => `d${i}`);
      // Interleaved, so the deletions open gaps all along the collection.
      await createPosts(store, stable.flatMap((id, i) => [id, doomed[i]!]));
      const seen: string[] = [];
      let after: Position = 0;
      for (let i = 0; ; i++) {
        const [page] = await Promise.all([
          store.posts.page({ after, limit: 4 }),
          i < 25 ? store.posts.create(post(`c${i}`)) : Promise.resolve(undefined),
          i < doomed.length ? store.posts.delete(doomed[i]!) : Promise.resolve(false),
        ]);
        seen.push(...ids(page.items));
        if (page.items.length === 0) break;
        after = page.last!;
        if (i > 200) throw new Error("the walk did not end");
      }
      t.equal(new Set(seen).size, seen.length, "no post twice");
      t.strictSame(stable.filter((id) => !seen.includes(id)), [], "every post present throughout was seen");
    });

    await t.test("a page holds what list() holds, byte for byte, for facts too", async (t) => {
      const store = await open(t);
      await seed(store);
      for (let i = 0; i < 5; i++) await store.facts.create(`Fact number ${i}.`, "api");
      const list = await store.facts.list();
      t.equal(list.length, SEED_FACTS.length + 5);
      for (const limit of [1, 7, 36, 1000]) {
        const walked = await walk<Fact>(t, store.facts, limit);
        t.equal(JSON.stringify(walked), JSON.stringify(list), `limit ${limit}`);
      }
      const second = await store.facts.page({ limit: 2 });
      t.strictSame(ids(second.items), ["1", "2"]);
      t.strictSame(ids((await store.facts.page({ after: second.last!, limit: 2 })).items), ["3", "4"], "a fact's position follows its id");
      t.strictSame(ids((await store.facts.page({ after: 3, through: 5, limit: 10 })).items), ["4", "5"]);
    });

    await t.test("the posts revision moves by one on every write, and on nothing else", async (t) => {
      const store = await open(t);
      const n = async () => (await store.posts.revision()).n;
      const epoch = (await store.posts.revision()).epoch;
      t.equal(await n(), 0);
      await store.posts.create(post("a"));
      t.equal(await n(), 1, "create");
      await store.posts.create(post("a"));
      t.equal(await n(), 1, "create of an id that exists: no write");
      await store.posts.update("a", (p) => ({ title: "new", body: p.body }));
      t.equal(await n(), 2, "update");
      await store.posts.update("a", (p) => ({ title: p.title, body: p.body }));
      t.equal(await n(), 3, "an update that keeps the fields still moves updatedAt: a change");
      await store.posts.update("missing", (p) => p);
      t.equal(await n(), 3, "update of a missing post");
      await t.rejects(
        store.posts.update("a", () => {
          throw new Error("412");
        }),
      );
      t.equal(await n(), 3, "a change that throws");
      await t.rejects(
        store.posts.delete("a", () => {
          throw new Error("412");
        }),
      );
      t.equal(await n(), 3, "a delete whose precondition throws");
      t.equal(await store.posts.delete("missing"), false);
      t.equal(await n(), 3, "delete of a missing post");
      await store.facts.create("A fact.", "api");
      await store.articles.update("nope", (a) => a);
      t.equal(await n(), 3, "writes to other collections");
      t.equal(await store.posts.delete("a"), true);
      t.equal(await n(), 4, "delete");
      t.equal((await store.posts.revision()).epoch, epoch, "the epoch stays");
    });

    await t.test("the facts revision moves with every fact added, seeded ones included", async (t) => {
      const store = await open(t);
      const before = await store.facts.revision();
      await seed(store);
      const seeded = await store.facts.revision();
      t.equal(seeded.n, before.n + SEED_FACTS.length);
      await store.facts.create("One more.", "api");
      t.equal((await store.facts.revision()).n, seeded.n + 1);
      await store.posts.create(post("p"));
      t.equal((await store.facts.revision()).n, seeded.n + 1, "a post is not a fact");
    });

    await t.test("many writes at once: the revision counts every one", async (t) => {
      const store = await open(t);
      await createPosts(store, ["x", "y"]);
      const before = (await store.posts.revision()).n;
      const results = await Promise.all([
        ...Array.from({ length: 12 }, (_, i) => store.posts.create(post(`many-${i % 6}`))),
        ...Array.from({ length: 6 }, () => store.posts.update("x", (p) => ({ title: p.title + "+", body: p.body }))),
        store.posts.delete("y"),
        store.posts.delete("y"),
      ]);
      const writes = results.filter((r) => r === true || (typeof r === "object" && (r.kind === "created" || r.kind === "updated"))).length;
      t.equal(writes, 6 + 6 + 1, "6 ids created once each, 6 updates, 1 delete");
      t.equal((await store.posts.revision()).n, before + writes);
    });

    await t.test("two new stores never share a revision", async (t) => {
      const a = await open(t);
      const b = await open(t);
      t.not((await a.posts.revision()).epoch, (await b.posts.revision()).epoch);
    });

    await t.test("pages and revisions of a closed store fail (a revision at hand may throw rather than reject)", async (t) => {
      const store = await open(t);
      await store.close();
      await t.rejects(store.posts.page({ limit: 1 }));
      await t.rejects(store.posts.span({ limit: 1 }));
      await t.rejects(async () => store.posts.revision());
      await t.rejects(store.facts.page({ limit: 1 }));
    });
  });
}
