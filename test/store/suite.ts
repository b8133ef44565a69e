// The shared store test suite. Every Store implementation runs it:
//
//   await storeSuite(t, "memory store", (options) => createMemoryStore(options));
//
// The factory must return a new, empty store each time it is called and must
// pass `options` (the clock and the random source) through: several tests pin
// time and chance with them. Each store made is closed when its test ends.

import { createHash, randomBytes } from "node:crypto";
import type { Test } from "tap";
import { SEED_ARTICLES, SEED_FACTS, seed } from "../../src/store/seed.js";
import { asTokenHash, type ArticleStore, type Store, type StoreOptions } from "../../src/store/types.js";

export type StoreFactory = (options?: StoreOptions) => Store;

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

export async function storeSuite(t: Test, name: string, makeStore: StoreFactory): Promise<void> {
  await t.test(name, async (t) => {
    /** A fresh store, closed when the test `tt` ends. */
    function open(tt: Test, options?: StoreOptions): Store {
      const store = makeStore(options);
      tt.teardown(() => store.close());
      return store;
    }

    await t.test("a new store is empty", async (t) => {
      const store = open(t);
      t.strictSame(store.posts.list(), []);
      t.strictSame(store.articles.list(), []);
      t.strictSame(store.facts.list(), []);
      t.equal(store.facts.random(), undefined);
      t.equal(store.tokens.hasAdmin(), false);
    });

    await t.test("posts", async (t) => {
      await t.test("create, then get and list return the post", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        const result = store.posts.create({ id: "hello", title: "Hello", body: "World", author: "ann", tags: ["a", "b"] });
        const expected = {
          id: "hello",
          title: "Hello",
          body: "World",
          author: "ann",
          tags: ["a", "b"],
          publishedAt: clock.iso(),
          updatedAt: clock.iso(),
        };
        t.strictSame(result, { kind: "created", item: expected });
        t.strictSame(store.posts.get("hello"), expected);
        t.strictSame(store.posts.list(), [expected]);
      });

      await t.test("keys come in the declared order, whatever order they came in", async (t) => {
        const store = open(t);
        store.posts.create({ tags: ["x"], author: "ann", body: "b", title: "t", id: "p" });
        t.strictSame(Object.keys(store.posts.get("p") ?? {}), [
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
        const store = open(t);
        store.posts.create({ id: "bare", title: "t", body: "b" });
        store.posts.create({ id: "undef", title: "t", body: "b", author: undefined, tags: undefined });
        store.posts.create({ id: "empty-tags", title: "t", body: "b", tags: [] });
        for (const id of ["bare", "undef"]) {
          const post = store.posts.get(id);
          t.ok(post, id);
          t.notOk(post !== undefined && "author" in post, `${id} has no author key`);
          t.notOk(post !== undefined && "tags" in post, `${id} has no tags key`);
        }
        t.strictSame(store.posts.get("empty-tags")?.tags, []);
      });

      await t.test("only the post's own fields are stored", async (t) => {
        const store = open(t);
        const input = { id: "p", title: "t", body: "b", admin: true, publishedAt: "1970-01-01T00:00:00.000Z" };
        const result = store.posts.create(input);
        t.equal(result.kind, "created");
        const post = store.posts.get("p");
        t.notOk(post !== undefined && "admin" in post, "unknown field dropped");
        t.not(post?.publishedAt, "1970-01-01T00:00:00.000Z", "publishedAt is the store's, not the caller's");
      });

      await t.test("an existing id is 'exists' and nothing changes", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        const first = store.posts.create({ id: "p", title: "first", body: "b" });
        clock.advance();
        const second = store.posts.create({ id: "p", title: "second", body: "c", author: "x" });
        t.equal(first.kind, "created");
        t.strictSame(second, { kind: "exists", existing: first.kind === "created" ? first.item : undefined });
        t.equal(store.posts.get("p")?.title, "first");
        t.equal(store.posts.list().length, 1);
      });

      await t.test("ids are exact strings", async (t) => {
        const store = open(t);
        store.posts.create({ id: "Post-1", title: "t", body: "b" });
        t.equal(store.posts.get("post-1"), undefined);
        t.equal(store.posts.get("Post-1 "), undefined);
        t.equal(store.posts.create({ id: "post-1", title: "t", body: "b" }).kind, "created");
        t.equal(store.posts.list().length, 2);
      });

      await t.test("list is oldest first, and an update keeps a post's place", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        for (const id of ["c", "a", "b"]) {
          store.posts.create({ id, title: id, body: id });
          clock.advance();
        }
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ["c", "a", "b"],
        );
        store.posts.update("c", { title: "changed", body: "c" });
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ["c", "a", "b"],
        );
        store.posts.delete("c");
        clock.advance();
        store.posts.create({ id: "c", title: "again", body: "c" });
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ["a", "b", "c"],
          "a post deleted and published again is the newest",
        );
      });

      await t.test("posts published in the same millisecond keep creation order", async (t) => {
        const store = open(t, { now: fakeClock().now });
        const ids = ["z", "y", "x", "w", "v"];
        for (const id of ids) store.posts.create({ id, title: id, body: id });
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ids,
        );
      });

      await t.test("update replaces the fields, keeps publishedAt and sets updatedAt", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        store.posts.create({ id: "p", title: "t", body: "b", author: "ann", tags: ["x"] });
        const publishedAt = clock.iso();
        clock.advance(60_000);
        const result = store.posts.update("p", { title: "t2", body: "b2", tags: ["y", "z"] });
        const expected = { id: "p", title: "t2", body: "b2", tags: ["y", "z"], publishedAt, updatedAt: clock.iso() };
        t.strictSame(result, { kind: "updated", item: expected });
        t.strictSame(store.posts.get("p"), expected, "author removed by leaving it out");
      });

      await t.test("update of a missing post is 'missing' and creates nothing", async (t) => {
        const store = open(t);
        t.strictSame(store.posts.update("nope", { title: "t", body: "b" }), { kind: "missing" });
        t.strictSame(store.posts.list(), []);
      });

      await t.test("updatedAt never goes backwards when the clock does", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        store.posts.create({ id: "p", title: "t", body: "b" });
        const publishedAt = clock.iso();
        clock.set(T0 - 3_600_000);
        const result = store.posts.update("p", { title: "t2", body: "b" });
        t.equal(result.kind === "updated" ? result.item.updatedAt : undefined, publishedAt);
        t.equal(store.posts.get("p")?.title, "t2", "the update still happened");
      });

      await t.test("delete is true once, then false", async (t) => {
        const store = open(t);
        store.posts.create({ id: "a", title: "t", body: "b" });
        store.posts.create({ id: "b", title: "t", body: "b" });
        t.equal(store.posts.delete("a"), true);
        t.equal(store.posts.delete("a"), false);
        t.equal(store.posts.delete("never"), false);
        t.equal(store.posts.get("a"), undefined);
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ["b"],
        );
        t.equal(store.posts.create({ id: "a", title: "t", body: "b" }).kind, "created", "the id is free again");
      });

      await t.test("callers cannot change stored posts through objects they hold", async (t) => {
        const store = open(t);
        const tags = ["a"];
        const input = { id: "p", title: "t", body: "b", tags };
        const result = store.posts.create(input);
        tags.push("pushed into the input");
        (input as { title: string }).title = "changed input";
        if (result.kind === "created") {
          (result.item.tags as string[]).push("pushed into the result");
          (result.item as { title: string }).title = "changed result";
        }
        const got = store.posts.get("p");
        if (got !== undefined) (got.tags as string[]).push("pushed into get");
        const listed = store.posts.list();
        if (listed[0] !== undefined) (listed[0] as { body: string }).body = "changed list";
        listed.pop();
        const updated = store.posts.update("p", { title: "t", body: "b", tags: ["a"] });
        if (updated.kind === "updated") (updated.item.tags as string[]).push("pushed into the update");
        const again = store.posts.create({ id: "p", title: "x", body: "x" });
        if (again.kind === "exists") (again.existing as { title: string }).title = "changed existing";
        t.strictSame(store.posts.get("p")?.tags, ["a"]);
        t.equal(store.posts.get("p")?.title, "t");
        t.equal(store.posts.get("p")?.body, "b");
        t.equal(store.posts.list().length, 1);
      });

      await t.test("timestamps from the real clock are RFC 3339 UTC", async (t) => {
        const store = open(t);
        const before = Date.now();
        const result = store.posts.create({ id: "p", title: "t", body: "b" });
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
      await t.test("create, get, list, and 'exists'", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        const article = { id: "7", title: "T", body: "B", author: "A" };
        const expected = { ...article, updatedAt: clock.iso() };
        t.strictSame(store.articles.create(article), { kind: "created", item: expected });
        t.strictSame(Object.keys(store.articles.get("7") ?? {}), ["id", "title", "body", "author", "updatedAt"]);
        clock.advance();
        t.strictSame(store.articles.create({ ...article, title: "other" }), { kind: "exists", existing: expected });
        t.strictSame(store.articles.get("7"), expected);
        t.equal(store.articles.get("8"), undefined);
        store.articles.create({ id: "10", title: "T", body: "B", author: "A" });
        store.articles.create({ id: "2", title: "T", body: "B", author: "A" });
        t.strictSame(
          store.articles.list().map((a) => a.id),
          ["7", "10", "2"],
          "creation order",
        );
      });

      await t.test("update replaces the fields and sets updatedAt", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        store.articles.create({ id: "1", title: "T", body: "B", author: "A" });
        store.articles.create({ id: "2", title: "T", body: "B", author: "A" });
        clock.advance(5000);
        const expected = { id: "1", title: "T2", body: "B2", author: "A2", updatedAt: clock.iso() };
        t.strictSame(store.articles.update("1", { title: "T2", body: "B2", author: "A2" }), {
          kind: "updated",
          item: expected,
        });
        t.strictSame(store.articles.get("1"), expected);
        t.strictSame(
          store.articles.list().map((a) => a.id),
          ["1", "2"],
          "keeps its place",
        );
        clock.set(T0 - 1000);
        const back = store.articles.update("1", { title: "T3", body: "B2", author: "A2" });
        t.equal(back.kind === "updated" ? back.item.updatedAt : undefined, expected.updatedAt, "never backwards");
      });

      await t.test("callers cannot change stored articles through objects they hold", async (t) => {
        const store = open(t);
        const input = { id: "1", title: "T", body: "B", author: "A" };
        const created = store.articles.create(input);
        input.title = "changed input";
        if (created.kind === "created") (created.item as { title: string }).title = "changed result";
        const listed = store.articles.list();
        if (listed[0] !== undefined) (listed[0] as { body: string }).body = "changed list";
        listed.pop();
        const got = store.articles.get("1");
        if (got !== undefined) (got as { author: string }).author = "changed get";
        t.strictSame(
          store.articles.list().map((a) => [a.id, a.title, a.body, a.author]),
          [["1", "T", "B", "A"]],
        );
      });

      await t.test("update of a missing article is 'missing'", async (t) => {
        const store = open(t);
        t.strictSame(store.articles.update("1", { title: "T", body: "B", author: "A" }), { kind: "missing" });
        t.strictSame(store.articles.list(), []);
      });
    });

    await t.test("facts", async (t) => {
      await t.test("create assigns ids 1, 2, 3 and sets createdAt", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        const one = store.facts.create("first", "RFC 1");
        clock.advance();
        const two = store.facts.create("second", "api");
        t.strictSame(one, { id: "1", text: "first", source: "RFC 1", createdAt: new Date(T0).toISOString() });
        t.strictSame(two, { id: "2", text: "second", source: "api", createdAt: clock.iso() });
        t.strictSame(Object.keys(one), ["id", "text", "source", "createdAt"]);
        t.equal(store.facts.create("third", "api").id, "3");
        t.strictSame(store.facts.get("2"), two);
        t.strictSame(
          store.facts.list().map((f) => f.id),
          ["1", "2", "3"],
        );
      });

      await t.test("the same text twice is two facts", async (t) => {
        const store = open(t);
        store.facts.create("same", "api");
        store.facts.create("same", "api");
        t.equal(store.facts.list().length, 2);
      });

      await t.test("get matches the id string exactly", async (t) => {
        const store = open(t);
        store.facts.create("first", "api");
        for (const id of ["01", "0", "1.0", " 1", "1 ", "+1", "1e0", "0x1", "", "one", "2", "-1"]) {
          t.equal(store.facts.get(id), undefined, JSON.stringify(id));
        }
        t.equal(store.facts.get("1")?.text, "first");
      });

      await t.test("callers cannot change stored facts through objects they hold", async (t) => {
        const store = open(t);
        const fact = store.facts.create("text", "api");
        (fact as { text: string }).text = "changed";
        const listed = store.facts.list();
        listed.pop();
        const first = store.facts.list()[0];
        if (first !== undefined) (first as { source: string }).source = "changed";
        const got = store.facts.get("1");
        if (got !== undefined) (got as { id: string }).id = "2";
        const picked = store.facts.random();
        if (picked !== undefined) (picked as { text: string }).text = "changed random";
        t.strictSame(
          store.facts.list().map((f) => [f.id, f.text, f.source]),
          [["1", "text", "api"]],
        );
      });

      await t.test("random on an empty store is undefined", async (t) => {
        const store = open(t, { random: () => 0.5 });
        t.equal(store.facts.random(), undefined);
      });

      await t.test("random picks list()[floor(r * length)]", async (t) => {
        let r = 0;
        const store = open(t, { random: () => r });
        for (const text of ["a", "b", "c", "d"]) store.facts.create(text, "api");
        const cases: [number, string][] = [
          [0, "a"],
          [0.2499, "a"],
          [0.25, "b"],
          [0.5, "c"],
          [0.9999999, "d"],
        ];
        for (const [value, text] of cases) {
          r = value;
          t.equal(store.facts.random()?.text, text, `r = ${value}`);
        }
        r = 1;
        t.equal(store.facts.random()?.text, "d", "a random source that returns 1 still picks a fact");
      });

      await t.test("random over the seeded facts returns seeded facts", async (t) => {
        const store = open(t);
        seed(store);
        const all = store.facts.list();
        const seen = new Set<string>();
        for (let i = 0; i < 300; i++) {
          const fact = store.facts.random();
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
          [...seen].every((id) => SEED_FACTS.some((f) => f.text === store.facts.get(id)?.text)),
          "every one is from the seed",
        );
      });
    });

    await t.test("seed", async (t) => {
      await t.test("fills an empty store with the facts and articles, no posts", async (t) => {
        const store = open(t);
        t.equal(seed(store), true);
        const facts = store.facts.list();
        t.ok(facts.length >= 20, "at least 20 facts");
        t.strictSame(
          facts.map((f) => ({ text: f.text, source: f.source })),
          SEED_FACTS.map((f) => ({ text: f.text, source: f.source })),
        );
        t.strictSame(
          facts.map((f) => f.id),
          SEED_FACTS.map((_, i) => String(i + 1)),
        );
        t.strictSame(
          store.articles.list().map((a) => ({ id: a.id, title: a.title, body: a.body, author: a.author })),
          SEED_ARTICLES.map((a) => ({ id: a.id, title: a.title, body: a.body, author: a.author })),
        );
        t.ok(store.articles.get("1") && store.articles.get("2") && store.articles.get("3"), "articles 1, 2 and 3");
        t.strictSame(store.posts.list(), []);
        t.equal(store.tokens.hasAdmin(), false, "no tokens");
      });

      await t.test("seeds only once", async (t) => {
        const store = open(t);
        t.equal(seed(store), true);
        const facts = store.facts.list();
        const articles = store.articles.list();
        t.equal(seed(store), false);
        t.strictSame(store.facts.list(), facts);
        t.strictSame(store.articles.list(), articles);
      });

      await t.test("does nothing to a store that has a fact or an article", async (t) => {
        const withFact = open(t);
        withFact.facts.create("mine", "api");
        t.equal(seed(withFact), false);
        t.equal(withFact.facts.list().length, 1);
        t.strictSame(withFact.articles.list(), []);

        const withArticle = open(t);
        withArticle.articles.create({ id: "9", title: "T", body: "B", author: "A" });
        t.equal(seed(withArticle), false);
        t.strictSame(withArticle.facts.list(), []);
        t.equal(withArticle.articles.list().length, 1);
      });

      await t.test("posts and tokens do not count", async (t) => {
        const store = open(t);
        store.posts.create({ id: "p", title: "t", body: "b" });
        store.tokens.add(sha256(newToken()), "admin");
        t.equal(seed(store), true);
        t.equal(store.posts.list().length, 1);
      });

      await t.test("is all or nothing", async (t) => {
        const store = open(t);
        const failing: ArticleStore = {
          list: () => store.articles.list(),
          get: (id) => store.articles.get(id),
          create: (article) => {
            if (article.id === "3") throw new Error("disk full");
            return store.articles.create(article);
          },
          update: (id, fields) => store.articles.update(id, fields),
        };
        const broken: Store = {
          posts: store.posts,
          articles: failing,
          facts: store.facts,
          tokens: store.tokens,
          transaction: (fn) => store.transaction(fn),
          close: () => store.close(),
        };
        t.throws(() => seed(broken), { message: "disk full" });
        t.strictSame(store.facts.list(), [], "no facts left behind");
        t.strictSame(store.articles.list(), [], "no articles left behind");
        t.equal(seed(store), true, "and a later seed still works");
      });
    });

    await t.test("tokens", async (t) => {
      await t.test("add, then findByHash", async (t) => {
        const clock = fakeClock();
        const store = open(t, { now: clock.now });
        const hash = sha256(newToken());
        const result = store.tokens.add(hash, "user");
        t.equal(result.kind, "created");
        if (result.kind !== "created") return;
        t.strictSame(result.item, { id: result.item.id, role: "user", hash, createdAt: clock.iso() });
        t.type(result.item.id, "string");
        t.ok(result.item.id.length > 0);
        t.strictSame(store.tokens.findByHash(hash), result.item);
        t.equal(store.tokens.findByHash(sha256(newToken())), undefined);
      });

      await t.test("each token gets its own id", async (t) => {
        const store = open(t);
        const ids = new Set<string>();
        for (let i = 0; i < 5; i++) {
          const result = store.tokens.add(sha256(newToken()), i % 2 === 0 ? "user" : "admin");
          if (result.kind === "created") ids.add(result.item.id);
        }
        t.equal(ids.size, 5);
      });

      await t.test("a hash already stored is 'exists', and its role does not change", async (t) => {
        const store = open(t);
        const hash = sha256(newToken());
        const first = store.tokens.add(hash, "user");
        const second = store.tokens.add(hash, "admin");
        t.strictSame(second, { kind: "exists", existing: first.kind === "created" ? first.item : undefined });
        t.equal(store.tokens.findByHash(hash)?.role, "user");
        t.equal(store.tokens.hasAdmin(), false);
      });

      await t.test("hasAdmin is true once an admin token exists", async (t) => {
        const store = open(t);
        t.equal(store.tokens.hasAdmin(), false);
        store.tokens.add(sha256(newToken()), "user");
        t.equal(store.tokens.hasAdmin(), false, "a user token is not enough");
        store.tokens.add(sha256(newToken()), "admin");
        t.equal(store.tokens.hasAdmin(), true);
      });

      await t.test("callers cannot change stored tokens through objects they hold", async (t) => {
        const store = open(t);
        const hash = sha256(newToken());
        const added = store.tokens.add(hash, "user");
        if (added.kind === "created") (added.item as { role: string }).role = "admin";
        const found = store.tokens.findByHash(hash);
        if (found !== undefined) (found as { role: string }).role = "admin";
        t.equal(store.tokens.findByHash(hash)?.role, "user");
        t.equal(store.tokens.hasAdmin(), false);
      });

      await t.test("the store holds the hash, never the token", async (t) => {
        const store = open(t);
        const token = newToken();
        const hash = sha256(token);
        store.tokens.add(hash, "admin");
        const record = store.tokens.findByHash(hash);
        t.equal(record?.hash, createHash("sha256").update(token).digest("hex"));
        t.notOk(JSON.stringify(record).includes(token), "the token appears nowhere in the record");
        t.throws(() => asTokenHash(token), TypeError, "a plaintext token is not a hash");
        t.throws(() => asTokenHash(hash.toUpperCase()), TypeError, "hashes are lowercase hex");
        t.throws(() => asTokenHash(hash.slice(1)), TypeError, "of exactly 64 digits");
      });
    });

    await t.test("transactions", async (t) => {
      await t.test("commit returns the function's value and keeps the writes", async (t) => {
        const store = open(t);
        const value = store.transaction(() => {
          store.posts.create({ id: "p", title: "t", body: "b" });
          return 42;
        });
        t.equal(value, 42);
        t.equal(store.posts.list().length, 1);
      });

      await t.test("a throw undoes every write and rethrows", async (t) => {
        const store = open(t);
        store.posts.create({ id: "kept", title: "t", body: "b" });
        store.articles.create({ id: "1", title: "T", body: "B", author: "A" });
        const error = new Error("boom");
        const thrown = (() => {
          try {
            store.transaction(() => {
              store.posts.create({ id: "p", title: "t", body: "b" });
              store.posts.update("kept", { title: "changed", body: "b" });
              store.articles.update("1", { title: "changed", body: "B", author: "A" });
              store.facts.create("text", "api");
              store.tokens.add(sha256(newToken()), "admin");
              t.equal(store.posts.list().length, 2, "writes are visible inside");
              throw error;
            });
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        t.equal(thrown, error, "the same error");
        t.strictSame(
          store.posts.list().map((p) => [p.id, p.title]),
          [["kept", "t"]],
        );
        t.equal(store.articles.get("1")?.title, "T");
        t.strictSame(store.facts.list(), []);
        t.equal(store.tokens.hasAdmin(), false);
        t.equal(store.posts.delete("p"), false);
      });

      await t.test("transactions nest: an inner failure undoes only the inner writes", async (t) => {
        const store = open(t);
        store.transaction(() => {
          store.posts.create({ id: "outer", title: "t", body: "b" });
          t.throws(() =>
            store.transaction(() => {
              store.posts.create({ id: "inner", title: "t", body: "b" });
              throw new Error("inner");
            }),
          );
          store.posts.create({ id: "after", title: "t", body: "b" });
        });
        t.strictSame(
          store.posts.list().map((p) => p.id),
          ["outer", "after"],
        );
      });

      await t.test("an async function is refused and its writes undone", async (t) => {
        const store = open(t);
        t.throws(
          () =>
            store.transaction(async () => {
              store.facts.create("text", "api");
            }),
          TypeError,
        );
        t.strictSame(store.facts.list(), []);
      });
    });

    await t.test("close", async (t) => {
      const store = makeStore();
      store.posts.create({ id: "p", title: "t", body: "b" });
      store.close();
      t.throws(() => store.posts.list(), "posts");
      t.throws(() => store.articles.get("1"), "articles");
      t.throws(() => store.facts.random(), "facts");
      t.throws(() => store.tokens.hasAdmin(), "tokens");
      t.throws(() => store.transaction(() => 1), "transaction");
      t.doesNotThrow(() => store.close(), "closing twice is harmless");
    });
  });
}
