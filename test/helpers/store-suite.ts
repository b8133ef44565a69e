// The shared store test suite. Every Store implementation runs it:
//
//   await storeSuite(t, "memory store", async (options) => createMemoryStore(options));
//
// The factory must resolve with a new, empty store each time it is called and
// must pass `options` (the clock and the random source) through: several tests
// pin time and chance with them. Each store made is closed when its test ends.
//
// Records are compared with strictSame and, where the bytes matter (ETags are
// hashes of them), as JSON text: every store must return the same bytes.

import { createHash, randomBytes } from "node:crypto";
import type { Test } from "tap";
import { SEED_ARTICLES, SEED_FACTS, seed } from "../../src/store/seed.js";
import { asTokenHash, type NewArticle, type Store, type StoreOptions } from "../../src/store/types.js";
import { pagesSuite } from "./store-pages-suite.js";
import { representationOf } from "../../src/store/representation.js";

export type StoreFactory = (options?: StoreOptions) => Promise<Store>;

/** RFC 3339 in UTC with milliseconds, the one shape the store writes. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const T0 = Date.UTC(2025, 0, 31, 12, 0, 0);

/** A clock that moves only when told to. */
function fakeClock(start = T0) {
  let ms = start;
  return {
    now: () => new Date(ms),
    /** The timestamp the store should write now. */
    iso: () => new Date(ms).toISOString(),
    advance(by = 1000) {
      ms += by;
    },
    set(to: number) {
      ms = to;
    },
  };
}

function sha256(token: string) {
  return asTokenHash(createHash("sha256").update(token).digest("hex"));
}

function newToken(): string {
  return randomBytes(32).toString("base64url");
}

const article = (id: string, title = "T"): NewArticle => ({ id, title, body: "B", author: "A" });

/** Seed data with articles only: how a test puts articles in a store (the API never creates one). */
const articlesOnly = (...articles: NewArticle[]) => ({ facts: [], articles });

export async function storeSuite(t: Test, name: string, makeStore: StoreFactory): Promise<void> {
  await t.test(name, async (t) => {
    /** A fresh store, closed when the test `tt` ends. */
    async function open(tt: Test, options?: StoreOptions): Promise<Store> {
      const store = await makeStore(options);
      tt.teardown(() => store.close());
      return store;
    }

    await t.test("a new store is empty", async (t) => {
      const store = await open(t);
      t.strictSame(await store.posts.list(), []);
      t.strictSame(await store.articles.list(), []);
      t.strictSame(await store.facts.list(), []);
      t.equal(await store.facts.random(), undefined);
      t.equal(await store.tokens.findByHash(sha256(newToken())), undefined);
    });

    await t.test("posts", async (t) => {
      await t.test("create, then get and list return the post", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        const result = await store.posts.create({ id: "hello", title: "Hello", body: "World", author: "ann", tags: ["a", "b"] });
        const expected = {
          id: "hello",
          title: "Hello",
          body: "World",
          author: "ann",
          tags: ["a", "b"],
          publishedAt: clock.iso(),
          updatedAt: clock.iso(),
        };
        t.strictSame(result, { kind: "created", item: expected, representation: representationOf(expected) });
        t.strictSame(await store.posts.get("hello"), expected);
        t.strictSame(await store.posts.list(), [expected]);
      });

      await t.test("keys come in the declared order, whatever order they came in", async (t) => {
        const store = await open(t);
        await store.posts.create({ tags: ["x"], author: "ann", body: "b", title: "t", id: "p" });
        t.strictSame(Object.keys(await store.posts.get("p") ?? {}), [
          "id",
          "title",
          "body",
          "author",
          "tags",
          "publishedAt",
          "updatedAt",
        ]);
      });

      await t.test("absent optional fields are absent keys; an empty tags array stays", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "bare", title: "t", body: "b" });
        await store.posts.create({ id: "undef", title: "t", body: "b", author: undefined, tags: undefined });
        await store.posts.create({ id: "empty-tags", title: "t", body: "b", tags: [] });
        for (const id of ["bare", "undef"]) {
          const post = await store.posts.get(id);
          t.ok(post, id);
          t.notOk(post !== undefined && "author" in post, `${id} has no author key`);
          t.notOk(post !== undefined && "tags" in post, `${id} has no tags key`);
        }
        t.strictSame((await store.posts.get("empty-tags"))?.tags, []);
      });

      await t.test("only the post's own fields are stored", async (t) => {
        const store = await open(t);
        const input = { id: "p", title: "t", body: "b", admin: true, publishedAt: "1970-01-01T00:00:00.000Z" };
        const result = await store.posts.create(input);
        t.equal(result.kind, "created");
        const post = await store.posts.get("p");
        t.notOk(post !== undefined && "admin" in post, "unknown field dropped");
        t.not(post?.publishedAt, "1970-01-01T00:00:00.000Z", "publishedAt is the store's, not the caller's");
      });

      await t.test("an existing id is 'exists' and nothing changes", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        const first = await store.posts.create({ id: "p", title: "first", body: "b" });
        clock.advance();
        const second = await store.posts.create({ id: "p", title: "second", body: "c", author: "x" });
        t.equal(first.kind, "created");
        t.strictSame(second, { kind: "exists", existing: first.kind === "created" ? first.item : undefined });
        t.equal((await store.posts.get("p"))?.title, "first");
        t.equal((await store.posts.list()).length, 1);
      });

      await t.test("ids are exact strings", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "Post-1", title: "t", body: "b" });
        t.equal(await store.posts.get("post-1"), undefined);
        t.equal(await store.posts.get("Post-1 "), undefined);
        t.equal((await store.posts.create({ id: "post-1", title: "t", body: "b" })).kind, "created");
        t.equal((await store.posts.list()).length, 2);
      });

      await t.test("list is oldest first, and an update keeps a post's place", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        for (const id of ["c", "a", "b"]) {
          await store.posts.create({ id, title: id, body: id });
          clock.advance();
        }
        t.strictSame(
          (await store.posts.list()).map((p) => p.id),
          ["c", "a", "b"],
        );
        await store.posts.update("c", () => ({ title: "changed", body: "c" }));
        t.strictSame(
          (await store.posts.list()).map((p) => p.id),
          ["c", "a", "b"],
        );
        await store.posts.delete("c");
        clock.advance();
        await store.posts.create({ id: "c", title: "again", body: "c" });
        t.strictSame(
          (await store.posts.list()).map((p) => p.id),
          ["a", "b", "c"],
          "a post deleted and published again is the newest",
        );
      });

      await t.test("posts published in the same millisecond keep creation order", async (t) => {
        const store = await open(t, { now: fakeClock().now });
        const ids = ["z", "y", "x", "w", "v"];
        for (const id of ids) await store.posts.create({ id, title: id, body: id });
        t.strictSame(
          (await store.posts.list()).map((p) => p.id),
          ids,
        );
      });

      await t.test("update replaces the fields, keeps publishedAt and sets updatedAt", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.posts.create({ id: "p", title: "t", body: "b", author: "ann", tags: ["x"] });
        const publishedAt = clock.iso();
        clock.advance(60_000);
        const result = await store.posts.update("p", () => ({ title: "t2", body: "b2", tags: ["y", "z"] }));
        const expected = { id: "p", title: "t2", body: "b2", tags: ["y", "z"], publishedAt, updatedAt: clock.iso() };
        t.strictSame(result, { kind: "updated", item: expected, representation: representationOf(expected) });
        t.strictSame(await store.posts.get("p"), expected, "author removed by leaving it out");
      });

      await t.test("each post keeps its representation, made when it was written: JSON.stringify of the post and the tag of those bytes", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        // Text whose bytes are easy to get wrong on the way through a database: astral characters, escapes, quotes, line breaks.
        const fields = { title: 'Caf\u00e9 \u{1F600} "quoted" \\ back', body: "line\nbreak\ttab \u2028 \u0001 end", author: "\u00c5sa", tags: ["\u{1F4A9}", ""] };
        const created = await store.posts.create({ id: "rep", ...fields });
        if (created.kind !== "created") throw new Error("not created");
        const stored = await store.posts.representation("rep");
        t.strictSame(stored, created.representation, "what the write returned is what is stored");
        t.equal(stored!.json, JSON.stringify(await store.posts.get("rep")), "the bytes of the post as get() returns it");
        t.equal(stored!.tag, createHash("sha256").update(stored!.json).digest("base64url").slice(0, 27), "the tag: 27 base64url characters of the SHA-256 of the JSON");
        clock.advance();
        const updated = await store.posts.update("rep", (p) => ({ ...fields, title: p.title + "!" }));
        if (updated.kind !== "updated") throw new Error("not updated");
        t.strictSame(await store.posts.representation("rep"), updated.representation, "an update writes the new representation");
        t.equal(updated.representation.json, JSON.stringify(await store.posts.get("rep")));
        t.not(updated.representation.tag, created.representation.tag, "a new tag");
        await t.rejects(store.posts.update("rep", () => { throw new Error("keep it"); }), /keep it/);
        t.strictSame(await store.posts.representation("rep"), updated.representation, "a Change that throws leaves the representation");
        await store.posts.create({ id: "rep", title: "other", body: "other" });
        t.strictSame(await store.posts.representation("rep"), updated.representation, "a create of a taken id leaves it");
        t.equal(await store.posts.representation("nope"), undefined, "none for a missing post");
        await store.posts.delete("rep");
        t.equal(await store.posts.representation("rep"), undefined, "none once deleted");
      });

      await t.test("update of a missing post is 'missing' and creates nothing", async (t) => {
        const store = await open(t);
        t.strictSame(await store.posts.update("nope", () => ({ title: "t", body: "b" })), { kind: "missing" });
        t.strictSame(await store.posts.list(), []);
      });

      await t.test("an id holding U+0000 names no post: not found, nothing to update or delete, in every store", async (t) => {
        // The API looks any id up (docs/api.md: one that could never be valid is simply not found), and PostgreSQL's
        // text refuses U+0000 in a parameter: that store used to reject, which the API answered as a 500.
        const store = await open(t);
        await store.posts.create({ id: "a", title: "t", body: "b" });
        const id = "a\u0000";
        t.equal(await store.posts.get(id), undefined);
        t.equal(await store.posts.representation(id), undefined);
        t.strictSame(await store.posts.update(id, () => t.fail("no post to change") as never), { kind: "missing" });
        t.equal(await store.posts.delete(id), false);
        t.equal(await store.posts.delete(id, () => t.fail("no post to check")), false);
        t.equal((await store.posts.list()).length, 1, "the post with the id before the NUL is untouched");
      });

      await t.test("updatedAt never goes backwards when the clock does", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.posts.create({ id: "p", title: "t", body: "b" });
        const publishedAt = clock.iso();
        clock.set(T0 - 3_600_000);
        const result = await store.posts.update("p", () => ({ title: "t2", body: "b" }));
        t.equal(result.kind === "updated" ? result.item.updatedAt : undefined, publishedAt);
        t.equal((await store.posts.get("p"))?.title, "t2", "the update still happened");
      });

      await t.test("delete is true once, then false", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "a", title: "t", body: "b" });
        await store.posts.create({ id: "b", title: "t", body: "b" });
        t.equal(await store.posts.delete("a"), true);
        t.equal(await store.posts.delete("a"), false);
        t.equal(await store.posts.delete("never"), false);
        t.equal(await store.posts.get("a"), undefined);
        t.strictSame(
          (await store.posts.list()).map((p) => p.id),
          ["b"],
        );
        t.equal((await store.posts.create({ id: "a", title: "t", body: "b" })).kind, "created", "the id is free again");
      });

      await t.test("callers cannot change stored posts through objects they hold", async (t) => {
        const store = await open(t);
        const tags = ["a"];
        const input = { id: "p", title: "t", body: "b", tags };
        const result = await store.posts.create(input);
        tags.push("pushed into the input");
        (input as { title: string }).title = "changed input";
        if (result.kind === "created") {
          (result.item.tags as string[]).push("pushed into the result");
          (result.item as { title: string }).title = "changed result";
        }
        const got = await store.posts.get("p");
        if (got !== undefined) (got.tags as string[]).push("pushed into get");
        const listed = await store.posts.list();
        if (listed[0] !== undefined) (listed[0] as { body: string }).body = "changed list";
        listed.pop();
        const updated = await store.posts.update("p", () => ({ title: "t", body: "b", tags: ["a"] }));
        if (updated.kind === "updated") (updated.item.tags as string[]).push("pushed into the update");
        const again = await store.posts.create({ id: "p", title: "x", body: "x" });
        if (again.kind === "exists") (again.existing as { title: string }).title = "changed existing";
        t.strictSame((await store.posts.get("p"))?.tags, ["a"]);
        t.equal((await store.posts.get("p"))?.title, "t");
        t.equal((await store.posts.get("p"))?.body, "b");
        t.equal((await store.posts.list()).length, 1);
      });

      await t.test("the same bytes in every store", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.posts.create({ tags: ["x"], author: "ann", body: "b", title: "t", id: "p" });
        await store.posts.create({ id: "q", title: "t", body: "b" });
        t.equal(
          JSON.stringify(await store.posts.list()),
          '[{"id":"p","title":"t","body":"b","author":"ann","tags":["x"],"publishedAt":"2025-01-31T12:00:00.000Z","updatedAt":"2025-01-31T12:00:00.000Z"},' +
            '{"id":"q","title":"t","body":"b","publishedAt":"2025-01-31T12:00:00.000Z","updatedAt":"2025-01-31T12:00:00.000Z"}]',
        );
      });

      await t.test("any text, and tags that need quoting, come back exactly as they went in", async (t) => {
        const store = await open(t);
        const tags = ["a,b", 'say "hi"', "{braces}", "NULL", "back\\slash", " spaced ", "ünïcødé", "emoji 🚀", "'single'", "", "x".repeat(100)];
        const body = "Line one\nLine two\ttab, quotes \" ' ` and 🚀 — ünïcødé; \\N and NULL and \\x00";
        await store.posts.create({ id: "q", title: "Ünïcødé 🚀", body, author: "Zoë", tags });
        const post = await store.posts.get("q");
        t.strictSame(post?.tags, tags);
        t.equal(post?.body, body);
        t.equal(post?.title, "Ünïcødé 🚀");
        t.equal(post?.author, "Zoë");
      });

      await t.test("publishing one id from many callers at once creates it exactly once", async (t) => {
        const store = await open(t);
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.posts.create({ id: "race", title: `title ${i}`, body: "b" })));
        const created = results.filter((r) => r.kind === "created");
        t.equal(created.length, 1, "one created");
        t.equal(results.filter((r) => r.kind === "exists").length, 7, "the others are told it exists");
        const winner = created[0]?.kind === "created" ? created[0].item : undefined;
        t.strictSame(await store.posts.get("race"), winner, "the stored post is the one that was created");
        for (const r of results) if (r.kind === "exists") t.strictSame(r.existing, winner, "'exists' carries the stored post");
      });

      await t.test("update hands its change the post as stored, and stores what the change returns", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.posts.create({ id: "p", title: "t", body: "b", author: "ann", tags: ["x"] });
        const stored = await store.posts.get("p");
        clock.advance();
        const seen: unknown[] = [];
        const result = await store.posts.update("p", (current) => {
          seen.push(current);
          return { title: `${current.title}!`, body: current.body, tags: [...(current.tags ?? []), "y"] };
        });
        t.strictSame(seen, [stored], "called once, with the stored post");
        const expected = { id: "p", title: "t!", body: "b", tags: ["x", "y"], publishedAt: stored!.publishedAt, updatedAt: clock.iso() };
        t.strictSame(result, { kind: "updated", item: expected, representation: representationOf(expected) });
        t.strictSame(await store.posts.get("p"), expected);
      });

      await t.test("a change that throws writes nothing, and the update rejects with what it threw", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.posts.create({ id: "p", title: "t", body: "b" });
        const before = await store.posts.get("p");
        clock.advance();
        const refusal = new Error("precondition failed");
        await t.rejects(
          store.posts.update("p", () => {
            throw refusal;
          }),
          refusal,
        );
        t.strictSame(await store.posts.get("p"), before, "the post, updatedAt included, is as it was");
        t.equal((await store.posts.update("p", (c) => ({ title: "after", body: c.body }))).kind, "updated", "and the store works on");
      });

      await t.test("update and a delete with a precondition do not call their function for a missing post", async (t) => {
        const store = await open(t);
        let calls = 0;
        t.strictSame(await store.posts.update("nope", () => (calls++, { title: "t", body: "b" })), { kind: "missing" });
        t.equal(await store.posts.delete("nope", () => void calls++), false);
        t.equal(calls, 0);
      });

      await t.test("many updates at once: each change sees the ones before it, so none is lost", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "p", title: "t", body: "b", tags: [] });
        const n = 24;
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => store.posts.update("p", (c) => ({ title: c.title, body: c.body, tags: [...(c.tags ?? []), `tag ${i}`] }))),
        );
        t.ok(results.every((r) => r.kind === "updated"), "every update succeeded");
        const tags = (await store.posts.get("p"))?.tags ?? [];
        t.equal(tags.length, n, `all ${n} changes kept`);
        t.strictSame([...tags].sort(), Array.from({ length: n }, (_, i) => `tag ${i}`).sort());
        const lengths = results.map((r) => (r.kind === "updated" ? (r.item.tags?.length ?? 0) : 0)).sort((a, b) => a - b);
        t.strictSame(lengths, Array.from({ length: n }, (_, i) => i + 1), "each update returned the post as it wrote it, one after another");
      });

      await t.test("conditional updates and deletes at once on one version: exactly one wins", async (t) => {
        const store = await open(t);
        const refused = new Error("the post changed");
        for (let round = 0; round < 5; round++) {
          const id = `c${round}`;
          await store.posts.create({ id, title: "v0", body: "b" });
          // The condition a client's If-Match stands for: the post is still as it was read.
          const unchanged = (c: { title: string }) => {
            if (c.title !== "v0") throw refused;
          };
          const attempts: Promise<unknown>[] = Array.from({ length: 6 }, (_, i) =>
            i % 3 === 2
              ? store.posts.delete(id, unchanged)
              : store.posts.update(id, (c) => {
                  unchanged(c);
                  return { title: `v${i + 1}`, body: c.body };
                }),
          );
          const outcomes = await Promise.allSettled(attempts);
          const won = outcomes.filter((o) => o.status === "fulfilled" && (o.value === true || (o.value as { kind?: string }).kind === "updated"));
          t.equal(won.length, 1, `round ${round}: one winner`);
          const lost = outcomes.filter((o) => o !== won[0]);
          t.ok(
            lost.every((o) => (o.status === "rejected" && o.reason === refused) || (o.status === "fulfilled" && (o.value === false || (o.value as { kind?: string }).kind === "missing"))),
            `round ${round}: every other one was refused, or found the post gone`,
          );
        }
      });

      await t.test("a delete with a precondition gives it the stored post, and keeps the post if it throws", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "p", title: "t", body: "b" });
        const stored = await store.posts.get("p");
        const refusal = new Error("keep it");
        await t.rejects(
          store.posts.delete("p", () => {
            throw refusal;
          }),
          refusal,
        );
        t.strictSame(await store.posts.get("p"), stored, "still there");
        const seen: unknown[] = [];
        t.equal(await store.posts.delete("p", (c) => void seen.push(c)), true);
        t.strictSame(seen, [stored]);
        t.equal(await store.posts.get("p"), undefined);
      });

      await t.test("timestamps from the real clock are RFC 3339 UTC", async (t) => {
        const store = await open(t);
        const before = Date.now();
        const result = await store.posts.create({ id: "p", title: "t", body: "b" });
        const after = Date.now();
        t.equal(result.kind, "created");
        if (result.kind !== "created") return;
        t.match(result.item.publishedAt, TIMESTAMP);
        t.equal(result.item.updatedAt, result.item.publishedAt);
        const ms = Date.parse(result.item.publishedAt);
        t.ok(ms >= before && ms <= after, "now");
      });
    });

    await t.test("articles", async (t) => {
      await t.test("get and list return the seeded articles, in order", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.seedIfEmpty(articlesOnly(article("7"), article("10"), article("2")));
        const expected = { ...article("7"), updatedAt: clock.iso() };
        t.strictSame(await store.articles.get("7"), expected);
        t.equal(JSON.stringify(await store.articles.get("7")), '{"id":"7","title":"T","body":"B","author":"A","updatedAt":"2025-01-31T12:00:00.000Z"}');
        t.equal(await store.articles.get("8"), undefined);
        t.equal(await store.articles.get("07"), undefined, "ids are exact strings");
        t.strictSame(
          (await store.articles.list()).map((a) => a.id),
          ["7", "10", "2"],
          "creation order",
        );
      });

      await t.test("update replaces the fields and sets updatedAt", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        await store.seedIfEmpty(articlesOnly(article("1"), article("2")));
        clock.advance(5000);
        const expected = { id: "1", title: "T2", body: "B2", author: "A2", updatedAt: clock.iso() };
        t.strictSame(await store.articles.update("1", () => ({ title: "T2", body: "B2", author: "A2" })), {
          kind: "updated",
          item: expected,
        });
        t.strictSame(await store.articles.get("1"), expected);
        t.strictSame(Object.keys((await store.articles.get("1")) ?? {}), ["id", "title", "body", "author", "updatedAt"]);
        t.strictSame(
          (await store.articles.list()).map((a) => a.id),
          ["1", "2"],
          "keeps its place",
        );
        clock.set(T0 - 1000);
        const back = await store.articles.update("1", () => ({ title: "T3", body: "B2", author: "A2" }));
        t.equal(back.kind === "updated" ? back.item.updatedAt : undefined, expected.updatedAt, "never backwards");
        t.equal((await store.articles.get("1"))?.title, "T3", "the update still happened");
      });

      await t.test("callers cannot change stored articles through objects they hold", async (t) => {
        const store = await open(t);
        const input = article("1");
        await store.seedIfEmpty(articlesOnly(input));
        (input as { title: string }).title = "changed input";
        const listed = await store.articles.list();
        if (listed[0] !== undefined) (listed[0] as { body: string }).body = "changed list";
        listed.pop();
        const got = await store.articles.get("1");
        if (got !== undefined) (got as { author: string }).author = "changed get";
        const updated = await store.articles.update("1", () => ({ title: "T", body: "B", author: "A" }));
        if (updated.kind === "updated") (updated.item as { title: string }).title = "changed update";
        t.strictSame(
          (await store.articles.list()).map((a) => [a.id, a.title, a.body, a.author]),
          [["1", "T", "B", "A"]],
        );
      });

      await t.test("update hands its change the stored article; many at once lose nothing; a throw writes nothing", async (t) => {
        const store = await open(t);
        await store.seedIfEmpty(articlesOnly(article("1")));
        const stored = await store.articles.get("1");
        const seen: unknown[] = [];
        await store.articles.update("1", (c) => (seen.push(c), { title: c.title, body: c.body, author: c.author }));
        t.strictSame(seen.map((a) => ({ ...(a as object), updatedAt: undefined })), [{ ...stored, updatedAt: undefined }], "the stored article");
        const n = 16;
        await Promise.all(Array.from({ length: n }, (_, i) => store.articles.update("1", (c) => ({ title: c.title, body: `${c.body}|${i}`, author: c.author }))));
        const parts = ((await store.articles.get("1"))?.body ?? "").split("|").slice(1);
        t.strictSame(parts.sort(), Array.from({ length: n }, (_, i) => String(i)).sort(), `all ${n} changes kept`);
        const before = await store.articles.get("1");
        const refusal = new Error("no");
        await t.rejects(
          store.articles.update("1", () => {
            throw refusal;
          }),
          refusal,
        );
        t.strictSame(await store.articles.get("1"), before, "unchanged");
      });

      await t.test("an id holding U+0000 names no article", async (t) => {
        const store = await open(t);
        await store.seedIfEmpty(articlesOnly(article("1")));
        t.equal(await store.articles.get("1\u0000"), undefined);
        t.strictSame(await store.articles.update("1\u0000", () => t.fail("no article to change") as never), { kind: "missing" });
        t.equal((await store.articles.get("1"))?.title, "T");
      });

      await t.test("update of a missing article is 'missing'", async (t) => {
        const store = await open(t);
        t.strictSame(await store.articles.update("1", () => ({ title: "T", body: "B", author: "A" })), { kind: "missing" });
        t.strictSame(await store.articles.list(), []);
      });
    });

    await t.test("facts", async (t) => {
      await t.test("create assigns ids 1, 2, 3 and sets createdAt", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        const one = await store.facts.create("first", "RFC 1");
        clock.advance();
        const two = await store.facts.create("second", "api");
        t.strictSame(one, { id: "1", text: "first", source: "RFC 1", createdAt: new Date(T0).toISOString() });
        t.strictSame(two, { id: "2", text: "second", source: "api", createdAt: clock.iso() });
        t.strictSame(Object.keys(one), ["id", "text", "source", "createdAt"]);
        t.equal((await store.facts.create("third", "api")).id, "3");
        t.strictSame(await store.facts.get("2"), two);
        t.strictSame(
          (await store.facts.list()).map((f) => f.id),
          ["1", "2", "3"],
        );
      });

      await t.test("the same text twice is two facts", async (t) => {
        const store = await open(t);
        await store.facts.create("same", "api");
        await store.facts.create("same", "api");
        t.equal((await store.facts.list()).length, 2);
      });

      await t.test("get matches the id string exactly", async (t) => {
        const store = await open(t);
        await store.facts.create("first", "api");
        for (const id of ["01", "0", "1.0", " 1", "1 ", "+1", "1e0", "0x1", "", "one", "2", "-1"]) {
          t.equal(await store.facts.get(id), undefined, JSON.stringify(id));
        }
        t.equal((await store.facts.get("1"))?.text, "first");
      });

      await t.test("callers cannot change stored facts through objects they hold", async (t) => {
        const store = await open(t);
        const fact = await store.facts.create("text", "api");
        (fact as { text: string }).text = "changed";
        const listed = await store.facts.list();
        listed.pop();
        const first = (await store.facts.list())[0];
        if (first !== undefined) (first as { source: string }).source = "changed";
        const got = await store.facts.get("1");
        if (got !== undefined) (got as { id: string }).id = "2";
        const picked = await store.facts.random();
        if (picked !== undefined) (picked as { text: string }).text = "changed random";
        t.strictSame(
          (await store.facts.list()).map((f) => [f.id, f.text, f.source]),
          [["1", "text", "api"]],
        );
      });

      await t.test("random on an empty store is undefined", async (t) => {
        const store = await open(t, { random: () => 0.5 });
        t.equal(await store.facts.random(), undefined);
      });

      await t.test("random picks list()[floor(r * length)]", async (t) => {
        let r = 0;
        const store = await open(t, { random: () => r });
        for (const text of ["a", "b", "c", "d"]) await store.facts.create(text, "api");
        const cases: [number, string][] = [
          [0, "a"],
          [0.2499, "a"],
          [0.25, "b"],
          [0.5, "c"],
          [0.9999999, "d"],
        ];
        for (const [value, text] of cases) {
          r = value;
          t.equal((await store.facts.random())?.text, text, `r = ${value}`);
        }
        r = 1;
        t.equal((await store.facts.random())?.text, "d", "a random source that returns 1 still picks a fact");
        r = -0.1;
        t.equal((await store.facts.random())?.text, "a", "below 0 picks the first");
        r = Number.NaN;
        t.equal((await store.facts.random())?.text, "a", "NaN picks the first");
      });

      await t.test("random over the seeded facts returns seeded facts", async (t) => {
        const store = await open(t);
        await seed(store);
        const all = await store.facts.list();
        const seen = new Set<string>();
        for (let i = 0; i < 300; i++) {
          const fact = await store.facts.random();
          if (fact === undefined) {
            t.fail("random returned undefined on a seeded store");
            return;
          }
          const stored = all.find((f) => f.id === fact.id);
          t.strictSame(fact, stored, `fact ${fact.id} is a stored fact`);
          seen.add(fact.id);
        }
        t.ok(seen.size > 1, `more than one fact comes up (${seen.size} did)`);
        t.ok(
          [...seen].every((id) => SEED_FACTS.some((f) => f.text === all.find((a) => a.id === id)?.text)),
          "every one is from the seed",
        );
      });
    });

    await t.test("seed", async (t) => {
      await t.test("fills an empty store with the facts and articles, no posts", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        t.equal(await seed(store), true);
        const facts = await store.facts.list();
        t.ok(facts.length >= 20, "at least 20 facts");
        t.strictSame(
          facts.map((f) => ({ text: f.text, source: f.source })),
          SEED_FACTS.map((f) => ({ text: f.text, source: f.source })),
        );
        t.strictSame(
          facts.map((f) => f.id),
          SEED_FACTS.map((_, i) => String(i + 1)),
        );
        t.ok(facts.every((f) => f.createdAt === clock.iso()), "createdAt is now");
        t.strictSame(
          await store.articles.list(),
          SEED_ARTICLES.map((a) => ({ id: a.id, title: a.title, body: a.body, author: a.author, updatedAt: clock.iso() })),
        );
        t.ok((await store.articles.get("1")) && (await store.articles.get("2")) && (await store.articles.get("3")), "articles 1, 2 and 3");
        t.strictSame(await store.posts.list(), []);
        t.equal(await store.tokens.addFirstAdmin(sha256(newToken())), true, "no tokens: no admin yet");
      });

      await t.test("seeds only once", async (t) => {
        const store = await open(t);
        t.equal(await seed(store), true);
        const facts = await store.facts.list();
        const articles = await store.articles.list();
        t.equal(await seed(store), false);
        t.strictSame(await store.facts.list(), facts);
        t.strictSame(await store.articles.list(), articles);
      });

      await t.test("seeds once when many callers seed at the same moment", async (t) => {
        const store = await open(t);
        const results = await Promise.all([seed(store), seed(store), seed(store), seed(store)]);
        t.strictSame(
          results.filter((seeded) => seeded),
          [true],
          "exactly one seeded",
        );
        t.equal((await store.facts.list()).length, SEED_FACTS.length, "each fact once");
        t.equal((await store.articles.list()).length, SEED_ARTICLES.length, "each article once");
      });

      await t.test("does nothing to a store that has a fact or an article", async (t) => {
        const withFact = await open(t);
        await withFact.facts.create("mine", "api");
        t.equal(await seed(withFact), false);
        t.equal((await withFact.facts.list()).length, 1);
        t.strictSame(await withFact.articles.list(), []);

        const withArticle = await open(t);
        t.equal(await withArticle.seedIfEmpty(articlesOnly(article("9"))), true, "articles alone are seed data too");
        t.equal(await seed(withArticle), false);
        t.strictSame(await withArticle.facts.list(), []);
        t.equal((await withArticle.articles.list()).length, 1);
      });

      await t.test("posts and tokens do not count", async (t) => {
        const store = await open(t);
        await store.posts.create({ id: "p", title: "t", body: "b" });
        await store.tokens.add(sha256(newToken()), "admin");
        t.equal(await seed(store), true);
        t.equal((await store.posts.list()).length, 1);
      });

      await t.test("is all or nothing", async (t) => {
        const store = await open(t);
        // Two articles under one id: the second cannot be stored, so nothing may be, not even the facts before it.
        const broken = { facts: SEED_FACTS, articles: [article("1"), article("2"), article("1", "again")] };
        await t.rejects(store.seedIfEmpty(broken));
        t.strictSame(await store.facts.list(), [], "no facts left behind");
        t.strictSame(await store.articles.list(), [], "no articles left behind");
        t.equal(await seed(store), true, "and a later seed still works");
        t.strictSame(
          (await store.articles.list()).map((a) => a.id),
          ["1", "2", "3"],
        );
        t.equal((await store.facts.list()).length, SEED_FACTS.length);
      });
    });

    await t.test("tokens", async (t) => {
      await t.test("add, then findByHash", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        const hash = sha256(newToken());
        const result = await store.tokens.add(hash, "user");
        t.equal(result.kind, "created");
        if (result.kind !== "created") return;
        t.strictSame(result.item, { id: result.item.id, role: "user", origin: "command", hash, createdAt: clock.iso() });
        t.strictSame(Object.keys(result.item), ["id", "role", "origin", "hash", "createdAt"], "no lastUsedAt key before the first use");
        t.match(result.item.id, /^[1-9][0-9]*$/);
        t.strictSame(await store.tokens.findByHash(hash), result.item);
        t.equal(await store.tokens.findByHash(sha256(newToken())), undefined);
      });

      await t.test("each token gets its own id", async (t) => {
        const store = await open(t);
        const ids = new Set<string>();
        for (let i = 0; i < 5; i++) {
          const result = await store.tokens.add(sha256(newToken()), i % 2 === 0 ? "user" : "admin");
          if (result.kind === "created") ids.add(result.item.id);
        }
        t.equal(ids.size, 5);
      });

      await t.test("a hash already stored is 'exists', and its role does not change", async (t) => {
        const store = await open(t);
        const hash = sha256(newToken());
        const first = await store.tokens.add(hash, "user");
        const second = await store.tokens.add(hash, "admin");
        t.strictSame(second, { kind: "exists", existing: first.kind === "created" ? first.item : undefined });
        t.equal((await store.tokens.findByHash(hash))?.role, "user");
      });

      await t.test("addFirstAdmin stores an admin only while there is none", async (t) => {
        const store = await open(t);
        await store.tokens.add(sha256(newToken()), "user");
        const first = sha256(newToken());
        t.equal(await store.tokens.addFirstAdmin(first), true, "a user token does not count");
        t.equal((await store.tokens.findByHash(first))?.role, "admin");
        const second = sha256(newToken());
        t.equal(await store.tokens.addFirstAdmin(second), false, "there is an admin now");
        t.equal(await store.tokens.findByHash(second), undefined, "so nothing was stored");

        const other = await open(t);
        await other.tokens.add(sha256(newToken()), "admin");
        t.equal(await other.tokens.addFirstAdmin(sha256(newToken())), false, "an admin added with add counts too");
      });

      await t.test("addFirstAdmin never promotes a user token", async (t) => {
        const store = await open(t);
        const hash = sha256(newToken());
        await store.tokens.add(hash, "user");
        t.equal(await store.tokens.addFirstAdmin(hash), false);
        t.equal((await store.tokens.findByHash(hash))?.role, "user");
      });

      await t.test("of many first admins at the same moment, exactly one is stored", async (t) => {
        const store = await open(t);
        const hashes = Array.from({ length: 6 }, () => sha256(newToken()));
        const results = await Promise.all(hashes.map((h) => store.tokens.addFirstAdmin(h)));
        t.equal(results.filter((added) => added).length, 1);
        const stored = await Promise.all(hashes.map((h) => store.tokens.findByHash(h)));
        t.equal(stored.filter((r) => r !== undefined).length, 1, "one admin token in the store");
      });

      await t.test("callers cannot change stored tokens through objects they hold", async (t) => {
        const store = await open(t);
        const hash = sha256(newToken());
        const added = await store.tokens.add(hash, "user");
        if (added.kind === "created") (added.item as { role: string }).role = "admin";
        const found = await store.tokens.findByHash(hash);
        if (found !== undefined) (found as { role: string }).role = "admin";
        t.equal((await store.tokens.findByHash(hash))?.role, "user");
      });

      await t.test("list gives every token in id order; revoke by id or by hash removes it for good", async (t) => {
        const store = await open(t);
        const hashes = [sha256(newToken()), sha256(newToken()), sha256(newToken())];
        const added = [];
        for (const [i, hash] of hashes.entries()) {
          const r = await store.tokens.add(hash, i === 1 ? "admin" : "user");
          if (r.kind === "created") added.push(r.item);
        }
        t.strictSame(await store.tokens.list(), added);
        t.strictSame(await store.tokens.revoke({ id: added[0]!.id }), added[0], "by id: resolves with the record");
        t.strictSame(await store.tokens.revoke({ hash: hashes[2]! }), added[2], "by hash");
        t.equal(await store.tokens.findByHash(hashes[0]!), undefined, "a revoked token is found nowhere");
        t.equal(await store.tokens.findByHash(hashes[2]!), undefined);
        t.strictSame(await store.tokens.list(), [added[1]]);
        t.equal(await store.tokens.revoke({ id: added[0]!.id }), undefined, "revoking again finds nothing");
        t.equal(await store.tokens.revoke({ hash: hashes[2]! }), undefined);
        for (const id of ["0", "01", "x", "", "-1", added[1]!.id + " "]) t.equal(await store.tokens.revoke({ id }), undefined, `no token has id ${JSON.stringify(id)}`);
        t.strictSame(await store.tokens.list(), [added[1]], "the others are untouched");
        const again = await store.tokens.add(hashes[0]!, "user");
        t.equal(again.kind, "created", "a revoked token's hash may be stored again");
        t.ok(again.kind === "created" && Number(again.item.id) > Number(added[2]!.id), "under a new id: ids are never reused");
      });

      await t.test("markUsed records the last use, at most once per period", async (t) => {
        const clock = fakeClock();
        const store = await open(t, { now: clock.now });
        const hash = sha256(newToken());
        const r = await store.tokens.add(hash, "user");
        const id = r.kind === "created" ? r.item.id : "";
        clock.advance(5000);
        const first = clock.iso();
        await store.tokens.markUsed(id, new Date(Date.parse(first) - 60_000).toISOString());
        t.equal((await store.tokens.findByHash(hash))?.lastUsedAt, first);
        t.strictSame(Object.keys((await store.tokens.findByHash(hash)) ?? {}), ["id", "role", "origin", "hash", "createdAt", "lastUsedAt"]);
        clock.advance(30_000);
        await store.tokens.markUsed(id, new Date(Date.parse(clock.iso()) - 60_000).toISOString());
        t.equal((await store.tokens.findByHash(hash))?.lastUsedAt, first, "used again within the period: not written");
        clock.advance(60_000);
        await store.tokens.markUsed(id, new Date(Date.parse(clock.iso()) - 60_000).toISOString());
        t.equal((await store.tokens.findByHash(hash))?.lastUsedAt, clock.iso(), "after the period: written");
        await t.resolves(store.tokens.markUsed("999999", clock.iso()), "a token that is gone: nothing happens");
        await t.resolves(store.tokens.markUsed("x", clock.iso()));
      });

      await t.test("origins: add says 'command' unless told, the first admin 'first-start'", async (t) => {
        const store = await open(t);
        const first = sha256(newToken());
        await store.tokens.addFirstAdmin(first);
        t.equal((await store.tokens.findByHash(first))?.origin, "first-start");
        const told = sha256(newToken());
        await store.tokens.add(told, "user", "unknown");
        t.equal((await store.tokens.findByHash(told))?.origin, "unknown");
      });

      await t.test("setSettingToken: the setting's value is the one token it grants", async (t) => {
        const store = await open(t);
        const [a, b, c] = [sha256(newToken()), sha256(newToken()), sha256(newToken())];
        const granted = await store.tokens.setSettingToken(a);
        t.match(granted, { kind: "granted", token: { role: "admin", origin: "setting", hash: a }, revoked: [] });
        t.match(await store.tokens.setSettingToken(a), { kind: "kept", token: { hash: a, origin: "setting" }, revoked: [] }, "the same value again: nothing to do");

        const rotated = await store.tokens.setSettingToken(b);
        t.match(rotated, { kind: "granted", token: { hash: b, origin: "setting" } });
        t.strictSame(rotated.kind === "granted" ? rotated.revoked.map((r) => r.hash) : undefined, [a], "the old value is revoked");
        t.equal(await store.tokens.findByHash(a), undefined, "and found nowhere");

        const user = sha256(newToken());
        const userRecord = await store.tokens.add(user, "user");
        const conflict = await store.tokens.setSettingToken(user);
        t.strictSame(conflict, { kind: "conflict", existing: userRecord.kind === "created" ? userRecord.item : undefined }, "a user's token is never made an admin's");
        t.equal((await store.tokens.findByHash(b))?.origin, "setting", "and on a conflict nothing is revoked");

        await store.tokens.add(c, "admin");
        const claimed = await store.tokens.setSettingToken(c);
        t.match(claimed, { kind: "kept", token: { hash: c, role: "admin", origin: "setting" } }, "an admin token named by the setting becomes the setting's");
        t.strictSame(claimed.kind === "kept" ? claimed.revoked.map((r) => r.hash) : undefined, [b]);

        const none = await store.tokens.setSettingToken(undefined);
        t.equal(none.kind, "none");
        t.strictSame(none.kind === "none" ? none.revoked.map((r) => r.hash) : undefined, [c], "no value: what it granted is revoked");
        t.strictSame(
          (await store.tokens.list()).map((r) => [r.hash, r.origin]),
          [[user, "command"]],
          "only the token the setting never granted is left",
        );
      });

      await t.test("setSettingToken from many callers at once: one token of the setting is left", async (t) => {
        const store = await open(t);
        const hashes = Array.from({ length: 6 }, () => sha256(newToken()));
        const results = await Promise.all(hashes.map((h) => store.tokens.setSettingToken(h)));
        t.ok(results.every((r) => r.kind === "granted"), "each was granted in its turn");
        const left = (await store.tokens.list()).filter((r) => r.origin === "setting");
        t.equal(left.length, 1, "one left");
        const revoked = results.flatMap((r) => (r.kind === "granted" ? r.revoked.map((x) => x.hash) : []));
        t.strictSame([...revoked, left[0]!.hash].sort(), [...hashes].sort(), "every other one was revoked, each once");
      });

      await t.test("the store holds the hash, never the token", async (t) => {
        const store = await open(t);
        const token = newToken();
        const hash = sha256(token);
        await store.tokens.add(hash, "admin");
        const record = await store.tokens.findByHash(hash);
        t.equal(record?.hash, createHash("sha256").update(token).digest("hex"));
        t.notOk(JSON.stringify(record).includes(token), "the token appears nowhere in the record");
        t.throws(() => asTokenHash(token), TypeError, "a plaintext token is not a hash");
        t.throws(() => asTokenHash(hash.toUpperCase()), TypeError, "hashes are lowercase hex");
        t.throws(() => asTokenHash(hash.slice(1)), TypeError, "of exactly 64 digits");
      });
    });

    await pagesSuite(t, open);

    await t.test("keys: 64 hex digits, the same on every call, different in another store", async (t) => {
      const [a, b] = [await open(t), await open(t)];
      const key = await a.key("lab-digest");
      t.match(key, /^[0-9a-f]{64}$/, "64 lower-case hex digits");
      t.equal(await a.key("lab-digest"), key, "the same on the next call");
      await a.posts.create({ id: "p", title: "t", body: "b" });
      t.equal(await a.key("lab-digest"), key, "writes do not move it");
      t.not(await b.key("lab-digest"), key, "another store (another database) has its own");
    });

    await t.test("close", async (t) => {
      const store = await makeStore();
      await store.posts.create({ id: "p", title: "t", body: "b" });
      await store.close();
      await t.rejects(store.posts.list(), "posts");
      await t.rejects(store.articles.get("1"), "articles");
      await t.rejects(store.facts.random(), "facts");
      await t.rejects(store.tokens.findByHash(sha256(newToken())), "tokens");
      await t.rejects(store.seedIfEmpty({ facts: [], articles: [] }), "seed");
      await t.rejects(store.key("lab-digest"), "keys");
      await t.resolves(store.close(), "closing twice is harmless");
    });
  });
}
