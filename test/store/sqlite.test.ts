// The SQLite store: the shared suite, then what only a file can show.

import t, { type Test } from "tap";
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "../../src/store/errors.js";
import { createSqliteStore, MAX_INSERT_GROUP, MAX_INSERT_GROUP_CHARS } from "../../src/store/sqlite.js";
import { openDatabase } from "../../src/store/sqlite-open.js";
import { seed, SEED_FACTS } from "../../src/store/seed.js";
import { MIGRATIONS } from "../../src/store/schema.js";
import { representationOf } from "../../src/store/representation.js";
import type { Revision } from "../../src/store/types.js";
import { BEFORE_YAML_POSTS, checkMigratedPosts, checkYamlAfterMigration, VERSION_4_POSTS } from "../helpers/migrated-posts.js";
import { storeSuite } from "../helpers/store-suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-sqlite-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => path.join(dir, `db-${++n}.sqlite`);

await storeSuite(t, "sqlite store (file)", async (options) => createSqliteStore(freshFile(), options));

t.test("data survives closing and reopening the file", async (t) => {
  const file = freshFile();
  const a = createSqliteStore(file);
  await a.posts.create({ id: "kept", title: "t", body: "b", tags: [] });
  const fact = await a.facts.create("A fact.", "api");
  await a.close();
  const b = createSqliteStore(file);
  t.strictSame((await b.posts.get("kept"))?.tags, [], "an empty tags array stays an empty array");
  t.strictSame(await b.facts.get(fact.id), fact);
  await b.close();
});

t.test("seed data is inserted once, however often the store is reopened", async (t) => {
  const file = freshFile();
  for (let i = 0; i < 3; i++) {
    const s = createSqliteStore(file);
    await seed(s);
    await s.close();
  }
  const s = createSqliteStore(file);
  const facts = await s.facts.list();
  t.equal(new Set(facts.map((f) => f.text)).size, facts.length, "no fact twice");
  t.equal(facts.length, SEED_FACTS.length);
  t.equal((await s.articles.list()).length, 3);
  await s.close();
});

t.test("two stores on one file (as two processes would be) hold one key, and it survives reopening", async (t) => {
  const file = freshFile();
  const a = createSqliteStore(file);
  const b = createSqliteStore(file);
  const key = await a.key("lab-digest");
  t.equal(await b.key("lab-digest"), key, "the other connection reads the same key");
  await a.close();
  await b.close();
  const c = createSqliteStore(file);
  t.equal(await c.key("lab-digest"), key, "and so does the file reopened");
  await c.close();
});

t.test("two stores on one file (as two processes would be) seed it once", async (t) => {
  const file = freshFile();
  const a = createSqliteStore(file);
  const b = createSqliteStore(file);
  t.strictSame(await Promise.all([seed(a), seed(b)]), [true, false]);
  t.equal((await b.facts.list()).length, SEED_FACTS.length);
  await a.close();
  await b.close();
});

t.test("the schema version is recorded, and a newer one is refused with a clear message", async (t) => {
  const file = freshFile();
  await createSqliteStore(file).close();
  const raw = new Database(file);
  t.equal(raw.pragma("user_version", { simple: true }), MIGRATIONS.length);
  t.equal(raw.pragma("journal_mode", { simple: true }), "wal");
  raw.pragma(`user_version = ${MIGRATIONS.length + 5}`);
  raw.close();
  t.throws(() => createSqliteStore(file), { name: "StoreOpenError", message: /newer than this startline understands/ });
});

t.test("a file that is not a database is refused with a clear message", async (t) => {
  const file = freshFile();
  writeFileSync(file, "this is not sqlite ".repeat(100));
  t.throws(() => createSqliteStore(file), new StoreOpenError(`${file} is not a startline database or is corrupt (SQLITE_NOTADB). Move it aside (or restore a backup) and start again.`));
});

t.test("an unwritable directory is refused with a clear message", async (t) => {
  const locked = path.join(dir, "locked");
  // root ignores permission bits, so make the parent a file: mkdir under it must fail for anyone.
  writeFileSync(locked, "");
  chmodSync(locked, 0o444);
  t.throws(() => createSqliteStore(path.join(locked, "sub", "db.sqlite")), { name: "StoreOpenError", message: /Check that DATA_DIR exists and is writable/ });
});

t.test("full durability is a setting: synchronous=FULL on the connection the store opens, NORMAL by default", async (t) => {
  // What the setting changes is how a commit reaches the disk, which no read-back after a clean close can
  // tell: the connection's own pragma is what says it (per connection, so asked of the one the store opens).
  const synchronous = (options: Parameters<typeof openDatabase>[1]) => {
    const db = openDatabase(freshFile(), options);
    try {
      return db.pragma("synchronous", { simple: true });
    } finally {
      db.close();
    }
  };
  t.equal(synchronous({ durability: "full" }), 2, "full: synchronous=FULL (2), every commit synced");
  t.equal(synchronous({}), 1, "by default: synchronous=NORMAL (1), which WAL keeps consistent");
  t.equal(synchronous({ durability: "normal" }), 1);
  // And a store opened so works as any other.
  const file = freshFile();
  const s = createSqliteStore(file, { durability: "full" });
  await s.posts.create({ id: "x", title: "t", body: "b" });
  await s.close();
  const again = createSqliteStore(file);
  t.equal((await again.posts.get("x"))?.id, "x");
  await again.close();
});

t.test("two stores on one file (as two processes would be) read one revision, moved by either's writes", async (t) => {
  const file = freshFile();
  const a = createSqliteStore(file);
  const b = createSqliteStore(file);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  t.strictSame(await a.posts.revision(), await b.posts.revision());
  await a.posts.create({ id: "from-a", title: "t", body: "b" });
  t.strictSame(await b.posts.revision(), await a.posts.revision());
  t.equal((await b.posts.revision()).n, 1);
  await b.posts.update("from-a", (p) => ({ title: "changed by b", body: p.body }));
  await b.posts.delete("from-a");
  t.equal((await a.posts.revision()).n, 3, "a sees b's update and delete");
  await b.facts.create("A fact.", "api");
  t.strictSame(await a.facts.revision(), await b.facts.revision());
});

t.test("a page is a range of the rowid: the same cost at any depth, never a scan", async (t) => {
  const file = freshFile();
  await createSqliteStore(file).close();
  const raw = new Database(file, { readonly: true });
  t.teardown(() => raw.close());
  const plan = (sql: string) => (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, 100, 10) as { detail: string }[]).map((r) => r.detail).join("; ");
  t.match(plan("SELECT seq, id FROM posts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"), /^SEARCH posts USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$/);
  t.match(plan("SELECT id FROM facts WHERE id > ? AND id <= ? ORDER BY id LIMIT ?"), /^SEARCH facts USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$/);
});

t.test("a JSON page of posts comes over as bytes, or as one string when asked for text, whichever statement cut it", async (t) => {
  const store = createSqliteStore(freshFile());
  t.teardown(() => store.close());
  for (let i = 0; i < 20; i++) await store.posts.create({ id: `p${i}`, title: "t", body: "é".repeat(1000 + i) });
  const posts = await store.posts.list();
  for (const text of [false, true]) {
    const whole = await store.posts.pageJson({ limit: 5, text });
    // maxChars reached inside the page: the second statement cuts it.
    const cut = await store.posts.pageJson({ limit: 10, maxChars: 4000, text });
    for (const [name, page, count] of [["under maxChars", whole, 5], ["cut at maxChars", cut, 2]] as const) {
      // Text is collected with V8's young generation; a Buffer waits for V8 to count external memory.
      t.equal(typeof page.members === "string", text, `${name}, text ${text}: ${text ? "a string" : "bytes"}`);
      t.equal(Buffer.from(page.members).toString(), JSON.stringify(posts.slice(0, count)).slice(1, -1), `${name}, text ${text}: the items' JSON`);
    }
  }
});

t.test("a database of schema version 2 gains revisions, counting from 0, and keeps its posts in order", async (t) => {
  const file = freshFile();
  const old = new Database(file);
  old.exec(MIGRATIONS[0] as string);
  old.exec(MIGRATIONS[1] as string);
  old.pragma("user_version = 2");
  for (const id of ["one", "two", "three"]) {
    old.prepare("INSERT INTO posts (id, title, body, published_at, updated_at) VALUES (?, 't', 'b', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')").run(id);
  }
  old.close();
  const store = createSqliteStore(file);
  t.teardown(() => store.close());
  t.equal((await store.posts.revision()).n, 0);
  t.strictSame((await store.posts.page({ limit: 10 })).items.map((p) => p.id), ["one", "two", "three"]);
  await store.posts.delete("two");
  t.equal((await store.posts.revision()).n, 1);
});

t.test("a database of schema version 3 gains each post's representation, and its revision stays as it was", async (t) => {
  const file = freshFile();
  const old = new Database(file);
  for (const migration of MIGRATIONS.slice(0, 3)) old.exec(migration as string);
  old.pragma("user_version = 3");
  const insert = old.prepare("INSERT INTO posts (id, title, body, author, tags, published_at, updated_at) VALUES (?, ?, ?, ?, ?, '2025-01-01T00:00:00.000Z', ?)");
  insert.run("one", "T\u{1F600}", "line\nbreak", "ann", '["a","b"]', "2025-01-01T00:00:00.000Z");
  insert.run("two", "t", "b", null, null, "2025-01-02T00:00:00.000Z");
  // More than one batch of the backfill, written in one transaction (one by one, each was a commit of its own: 1,500 syncs to disk).
  old.transaction(() => {
    for (let i = 0; i < 1500; i++) insert.run(`many-${i}`, "t", "b", null, "[]", "2025-01-03T00:00:00.000Z");
  })();
  const revision = old.prepare("SELECT n, epoch FROM revisions WHERE collection = 'posts'").get();
  old.close();
  const store = createSqliteStore(file);
  t.teardown(() => store.close());
  t.strictSame(await store.posts.revision(), revision, "the revision did not move: no post changed");
  for (const id of ["one", "two", "many-0", "many-1499"]) {
    t.strictSame(await store.posts.representation(id), representationOf((await store.posts.get(id))!), `${id}'s representation`);
  }
  const page = await store.posts.pageJson({ limit: 2 });
  t.equal(Buffer.from(page.members).toString(), JSON.stringify((await store.posts.list()).slice(0, 2)).slice(1, -1));
});

t.test("a database of schema version 4 keeps each post as its stored JSON alone: fields, bytes, tag, order, revision and positions as they were", async (t) => {
  const file = freshFile();
  const old = new Database(file);
  for (const migration of MIGRATIONS.slice(0, 3)) old.exec(migration as string);
  old.exec((MIGRATIONS[3] as { sql: string }).sql);
  old.pragma("user_version = 4");
  const insert = old.prepare("INSERT INTO posts (id, title, body, author, tags, published_at, updated_at, json, tag) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const written = VERSION_4_POSTS;
  for (const post of written) {
    const { json, tag } = representationOf(post);
    insert.run(post.id, post.title, post.body, post.author ?? null, post.tags === undefined ? null : JSON.stringify(post.tags), post.publishedAt, post.updatedAt, json, tag);
  }
  // The post written last is gone: its position (3) must never come back.
  old.prepare("DELETE FROM posts WHERE id = 'three'").run();
  const revision = old.prepare<[], Revision>("SELECT n, epoch FROM revisions WHERE collection = 'posts'").get()!;
  old.close();

  const store = createSqliteStore(file);
  t.teardown(() => store.close());
  await checkMigratedPosts(t, store, revision);
  await store.close();
  const raw = new Database(file, { readonly: true });
  t.teardown(() => raw.close());
  t.strictSame((raw.prepare("SELECT name FROM pragma_table_info('posts') ORDER BY cid").pluck().all() as string[]), ["seq", "id", "json", "tag", "yaml"], "the row holds the JSON (and its YAML entry), not the fields a second time");
});

t.test("a database of schema version 7 gains a YAML entry for each post: none made by the migration, each made and stored by the first read that needs it", async (t) => {
  const file = freshFile();
  const old = new Database(file);
  for (const migration of MIGRATIONS.slice(0, 7)) {
    if (typeof migration === "string") old.exec(migration);
    else {
      old.exec(migration.sql);
      migration.then(old);
    }
  }
  old.pragma("user_version = 7");
  const insert = old.prepare("INSERT INTO posts (id, json, tag) VALUES (?, ?, ?)");
  for (const post of BEFORE_YAML_POSTS) {
    const { json, tag } = representationOf(post);
    insert.run(post.id, json, tag);
  }
  const revision = old.prepare<[], Revision>("SELECT n + coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'posts'), 0) AS n, epoch FROM revisions WHERE collection = 'posts'").get()!;
  old.close();
  const store = createSqliteStore(file);
  t.teardown(() => store.close());
  const raw = new Database(file, { readonly: true });
  t.teardown(() => raw.close());
  const stored = raw.prepare<[], string | null>("SELECT yaml FROM posts ORDER BY seq").pluck();
  await checkYamlAfterMigration(t, store, revision, async () => stored.all());
});

/**
 * A store on a fresh file, and another connection to the same file, as
 * another process would have: it sees only what was committed. Both closed
 * when the test ends.
 */
function storeAndReader(t: Test, options?: Parameters<typeof createSqliteStore>[1]) {
  const file = freshFile();
  const store = createSqliteStore(file, options);
  const other = new Database(file);
  t.teardown(async () => {
    other.close();
    await store.close();
  });
  return { store, other };
}

t.test("new posts asked for in one turn are written in one transaction, and each is answered only once it is committed", async (t) => {
  const { store, other } = storeAndReader(t);
  other.pragma("wal_checkpoint(TRUNCATE)");
  const walFrames = () => (other.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]!.log;
  const count = 20;
  // Twenty requests in one turn, one of them for an id another of them takes first.
  const results = await Promise.all([
    ...Array.from({ length: count }, (_, i) => store.posts.create({ id: `g${i}`, title: `t${i}`, body: "b" })),
    store.posts.create({ id: "g0", title: "again", body: "b" }),
  ]);
  t.strictSame(
    results.map((r) => r.kind),
    [...new Array(count).fill("created"), "exists"],
    "each answered on its own: the second g0 finds the first, written before it in the same transaction",
  );
  const seen = other.prepare("SELECT count(*) AS n FROM posts").get() as { n: number };
  t.equal(seen.n, count, "every post acknowledged is committed, visible to another connection");
  // One commit of twenty posts appends the few pages they share once; twenty commits would append them twenty times.
  const frames = walFrames();
  t.ok(frames < count, `one transaction: ${frames} WAL frames for ${count} posts`);
});

t.test("a turn's new posts beyond MAX_INSERT_GROUP wait for the next turn's transaction, so one commit holds the loop for a bounded time", async (t) => {
  const { store, other } = storeAndReader(t);
  const count = 2 * MAX_INSERT_GROUP + 1;
  const creates = Array.from({ length: count }, (_, i) => store.posts.create({ id: `m${i}`, title: "t", body: "b" }));
  const committed = () => (other.prepare("SELECT count(*) AS n FROM posts").get() as { n: number }).n;
  // The store asked for its commit before this turn's setImmediate: when this one runs, the first group is in.
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(committed(), MAX_INSERT_GROUP, "one turn, one group");
  t.strictSame(new Set((await Promise.all(creates)).map((r) => r.kind)), new Set(["created"]), "every post written");
  t.equal(committed(), count);
});

t.test("a turn's large posts are written a few per transaction: a group stops once its JSON reaches MAX_INSERT_GROUP_CHARS", async (t) => {
  const { store, other } = storeAndReader(t);
  // 100,000 control characters: the most JSON one valid body makes (600,000 characters, each \u0001). Before
  // the bound, all of them went into the first turn's transaction (256 of them held the loop for seconds).
  // Three are enough: one post passes the bound, so without it the first group's 1.8 MB is past the bound
  // and a post (checked: the bound taken out fails this); eight cost 0.3 s of CPU more.
  const body = "\u0001".repeat(100_000);
  const count = 3;
  const creates = Array.from({ length: count }, (_, i) => store.posts.create({ id: `big${i}`, title: "t", body }));
  const committed = () => other.prepare("SELECT count(*) AS n, coalesce(sum(length(json)), 0) AS chars FROM posts").get() as { n: number; chars: number };
  const perPost = representationOf({ id: "big0", title: "t", body, publishedAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" }).json.length;
  await new Promise((resolve) => setImmediate(resolve));
  const first = committed();
  t.ok(first.n >= 1, `the first group writes at least one post (${first.n})`);
  t.ok(first.chars < MAX_INSERT_GROUP_CHARS + perPost, `the first group's JSON stops at the bound: ${first.chars} characters in ${first.n} posts, bound ${MAX_INSERT_GROUP_CHARS} and one post`);
  t.strictSame(new Set((await Promise.all(creates)).map((r) => r.kind)), new Set(["created"]), "every post is written, in later turns");
  t.equal(committed().n, count);
});

t.test("closing the store writes the posts still waiting for their turn", async (t) => {
  const file = freshFile();
  const store = createSqliteStore(file);
  const creates = Array.from({ length: MAX_INSERT_GROUP + 5 }, (_, i) => store.posts.create({ id: `c${i}`, title: "t", body: "b" }));
  await store.close();
  t.equal((await Promise.all(creates)).filter((r) => r.kind === "created").length, MAX_INSERT_GROUP + 5, "every post asked for before close is written");
  const reopened = createSqliteStore(file);
  t.equal((await reopened.posts.list()).length, MAX_INSERT_GROUP + 5);
  await reopened.close();
});

t.test("a group whose transaction fails fails every post in it, and writes none", async (t) => {
  const { store, other } = storeAndReader(t, { busyTimeoutMs: 20 });
  // Another process holds the write lock past the store's busy timeout.
  other.exec("BEGIN IMMEDIATE");
  const outcomes = await Promise.allSettled(Array.from({ length: 3 }, (_, i) => store.posts.create({ id: `f${i}`, title: "t", body: "b" })));
  other.exec("ROLLBACK");
  t.strictSame(
    outcomes.map((o) => o.status),
    ["rejected", "rejected", "rejected"],
    "none is answered as written",
  );
  t.equal((await store.posts.list()).length, 0, "and none was");
  t.equal((await store.posts.create({ id: "f0", title: "t", body: "b" })).kind, "created", "the next group, with the lock free, is written");
});

t.test("a random fact is found through the id's B-tree: no statement facts.random() runs walks the table", async (t) => {
  // With a million facts (each POST /api/v2/facts adds one), a pick that counted
  // the table and skipped to an OFFSET walked it twice: 150 to 400 ms of the one
  // thread per GET /api/v2/facts/random, and ten of them at once held a status
  // request for 5 s. What random() runs is recorded here and each statement's
  // plan asked of SQLite: a SCAN visits every row; a SEARCH goes down the B-tree.
  const file = freshFile();
  const store = createSqliteStore(file, { random: () => 0.7 });
  t.teardown(() => store.close());
  for (const text of ["a", "b", "c", "d", "e"]) await store.facts.create(text, "api");
  const probe = new Database(file, { readonly: true });
  t.teardown(() => probe.close());
  const Statement = probe.prepare("SELECT 1").constructor.prototype as Record<string, (...args: unknown[]) => unknown> & { source?: string };
  const ran: [string, unknown[]][] = [];
  const methods = ["get", "all", "iterate", "run"] as const;
  const originals = methods.map((m) => Statement[m]!);
  methods.forEach((m, i) => {
    Statement[m] = function (this: { source: string }, ...args: unknown[]) {
      ran.push([this.source, args]);
      return originals[i]!.apply(this, args);
    };
  });
  let picked;
  try {
    picked = await store.facts.random();
  } finally {
    methods.forEach((m, i) => (Statement[m] = originals[i]!));
  }
  t.equal(picked?.text, "d", "the pick is list()[floor(0.7 * 5)], as before");
  t.ok(ran.length > 0, "random() ran statements");
  for (const [sql, args] of ran) {
    const plan = probe.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[];
    // SCAN CONSTANT ROW is the one row of a SELECT without FROM, not a table.
    t.notOk(plan.some((step) => /^SCAN (?!CONSTANT ROW)/.test(step.detail)), `no SCAN in: ${sql}`, { plan: plan.map((step) => step.detail) });
  }
});

t.test("keepYaml does not wait for another connection's write lock: it keeps nothing then, and keeps the entry once the lock is gone", async (t) => {
  const file = freshFile();
  // A wait past any test's time limit: should keepYaml wait for the lock (which this very thread holds), the file hangs and fails.
  const store = createSqliteStore(file, { busyTimeoutMs: 3_600_000 });
  t.teardown(() => store.close());
  const created = await store.posts.create({ id: "busy", title: "t", body: "b", tags: [] });
  const tag = created.kind === "created" ? created.representation.tag : "";
  const other = new Database(file);
  t.teardown(() => other.close());
  other.prepare("UPDATE posts SET yaml = NULL WHERE id = 'busy'").run();
  const entry = () => other.prepare<[], string | null>("SELECT yaml FROM posts WHERE id = 'busy'").pluck().get();
  other.exec("BEGIN IMMEDIATE");
  await store.posts.keepYaml([{ id: "busy", tag, yaml: "  - title: t\n" }]);
  other.exec("COMMIT");
  t.equal(entry(), null, "nothing kept while the lock was held");
  await store.posts.keepYaml([{ id: "busy", tag, yaml: "  - title: t\n" }]);
  t.equal(entry(), "  - title: t\n", "kept once it is free");
});

t.test("a writer that knows nothing of YAML entries (a server of an older version) changing a post's text clears its entry; this version's writes and keepYaml keep theirs", async (t) => {
  const file = freshFile();
  const store = createSqliteStore(file);
  t.teardown(() => store.close());
  const created = await store.posts.create({ id: "mixed", title: "t", body: "b", tags: [] });
  if (created.kind !== "created") throw new Error("not created");
  const older = new Database(file);
  t.teardown(() => older.close());
  const entry = () => older.prepare<[], string | null>("SELECT yaml FROM posts WHERE id = 'mixed'").pluck().get();
  t.type(entry(), "string", "the write stored its entry");
  const changed = representationOf({ ...created.item, title: "by an older server" });
  older.prepare("UPDATE posts SET json = ?, tag = ? WHERE id = 'mixed'").run(changed.json, changed.tag);
  t.equal(entry(), null, "the old text's entry went with the old text");
  const page = await store.posts.pageYaml({ limit: 10 });
  t.equal(page.count, 1);
  await store.posts.update("mixed", () => ({ title: "by this version", body: "b", tags: [] }));
  t.match(entry(), /by this version/, "this version's update stores the new text's entry, and the trigger leaves it");
  older.prepare("UPDATE posts SET yaml = NULL WHERE id = 'mixed'").run();
  const current = await store.posts.representation("mixed");
  await store.posts.keepYaml([{ id: "mixed", tag: current!.tag, yaml: "  - kept\n" }]);
  t.equal(entry(), "  - kept\n", "keepYaml sets the entry alone: nothing clears it");
});
