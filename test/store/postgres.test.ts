// The PostgreSQL store: the shared suite, then what only a database server
// shared by several processes can show (each store here has its own pool,
// as each instance would).

import t, { type Test } from "tap";
import pg from "pg";
import { StoreOpenError, StoreUnavailableError } from "../../src/store/errors.js";
import { MIGRATIONS_TABLE, PG_MIGRATIONS } from "../../src/store/pg-schema.js";
import { createPostgresStore, type PostgresOptions } from "../../src/store/postgres.js";
import { representationOf } from "../../src/store/representation.js";
import { BEFORE_YAML_POSTS, checkMigratedPosts, checkYamlAfterMigration, VERSION_4_POSTS } from "../helpers/migrated-posts.js";
import { seed, SEED_FACTS } from "../../src/store/seed.js";
import type { Store } from "../../src/store/types.js";
import { testDatabase, withSchema } from "../helpers/postgres.js";
import { happens } from "../helpers/hang.js";
import { refusedPort } from "../helpers/ports.js";
import { storeSuite } from "../helpers/store-suite.js";

const db = await testDatabase(t);

await storeSuite(t, "postgres store", async (options) => createPostgresStore(await db.fresh(), options));

/** A store on `url`, closed when the test ends. */
async function open(tt: Test, url: string, options?: PostgresOptions): Promise<Store> {
  const store = await createPostgresStore(url, options);
  tt.teardown(() => store.close());
  return store;
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

t.test("instances starting together on a new database migrate and seed it once", async (t) => {
  const url = await db.fresh();
  // Four pools opened at once race to create the tables; the advisory lock queues them.
  const stores = await Promise.all([1, 2, 3, 4].map(() => open(t, url)));
  const versions = await query<{ version: number }>(url, `SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`);
  t.strictSame(
    versions.map((r) => r.version),
    PG_MIGRATIONS.map((_, i) => i + 1),
    "each migration recorded once",
  );
  const seeded = await Promise.all(stores.map((s) => seed(s)));
  t.equal(seeded.filter((s) => s).length, 1, "one of them seeded");
  t.equal((await stores[3]!.facts.list()).length, SEED_FACTS.length, "each fact once");
  t.equal((await stores[0]!.articles.list()).length, 3, "each article once");
  const keys = await Promise.all(stores.map((s) => s.key("lab-digest")));
  t.equal(new Set(keys).size, 1, "one key, drawn once, for every instance");
});

t.test("two instances publishing one id at the same moment: one creates, the other is told it exists", async (t) => {
  const url = await db.fresh();
  const a = await open(t, url);
  const b = await open(t, url);
  for (let round = 0; round < 20; round++) {
    const id = `race-${round}`;
    const [ra, rb] = await Promise.all([a.posts.create({ id, title: "from a", body: "a" }), b.posts.create({ id, title: "from b", body: "b" })]);
    t.strictSame([ra.kind, rb.kind].sort(), ["created", "exists"], `round ${round}`);
  }
  t.equal((await a.posts.list()).length, 20, "20 posts, none twice");
});

t.test("a write through one instance is read through another at once", async (t) => {
  const url = await db.fresh();
  const a = await open(t, url);
  const b = await open(t, url);
  const created = await a.posts.create({ id: "shared", title: "T", body: "B", tags: [] });
  t.strictSame(await b.posts.get("shared"), created.kind === "created" ? created.item : undefined);
  const fact = await b.facts.create("Shared fact.", "api");
  t.strictSame(await a.facts.get(fact.id), fact);
});

t.test("the pool keeps at most DATABASE_POOL_SIZE connections", async (t) => {
  // A name of its own, so the count below sees this pool's connections and no other.
  const name = `pool_test_${process.pid}`;
  const u = new URL(await db.fresh());
  u.searchParams.set("application_name", name);
  const store = await open(t, u.toString(), { poolSize: 2 });
  await seed(store);
  const calls = await Promise.all(Array.from({ length: 40 }, () => store.facts.list()));
  t.ok(calls.every((facts) => facts.length === SEED_FACTS.length), "40 calls at once, every one answered");
  const [row] = await query<{ n: string }>(u.toString(), "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [name]);
  // The query's own connection carries the name too: one more than the pool's.
  t.equal(Number(row!.n) - 1, 2, "the pool opened 2 connections, no more");
});

t.test("the schema version is recorded, and a newer one is refused with a clear message", async (t) => {
  const url = await db.fresh();
  await (await createPostgresStore(url)).close();
  await query(url, `INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [PG_MIGRATIONS.length + 5]);
  await t.rejects(createPostgresStore(url), { name: "StoreOpenError", message: /schema version \d+, newer than this startline understands/ });
});

t.test("a server that is not there is refused at open with one clear line", async (t) => {
  const port = await refusedPort(t);
  const url = `postgres://startline:secret-password@127.0.0.1:${port}/startline`;
  const error = await createPostgresStore(url, { connectTimeoutMs: 2000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(error, StoreOpenError);
  const message = (error as Error).message;
  t.match(message, new RegExp(`^cannot reach the PostgreSQL server at postgres://startline:\\*\\*\\*@127\\.0\\.0\\.1:${port}/startline \\(.*ECONNREFUSED.*\\)\\. Check that it is running and that DATABASE_URL is right\\.$`));
  t.notOk(message.includes("secret-password"), "the password is never printed");
  t.notOk(message.includes("\n"), "one line");
});

t.test("a database that does not exist is named as such", async (t) => {
  const u = new URL(await db.fresh());
  u.pathname = "/no_such_database_here";
  await t.rejects(createPostgresStore(u.toString()), { name: "StoreOpenError", message: /does not exist .*Create it \(createdb\), or fix DATABASE_URL\.$/ });
});

t.test("schemas keep stores apart (how these tests isolate stores)", async (t) => {
  const one = await open(t, await db.fresh());
  const two = await open(t, await db.fresh());
  await one.posts.create({ id: "only-in-one", title: "T", body: "B" });
  t.strictSame(await two.posts.list(), []);
  t.match(withSchema("postgres://u@h:1/d?options=-c%20work_mem%3D4MB", "s"), /options=-c\+work_mem%3D4MB\+-c\+search_path%3Ds$/, "existing options are kept");
});

t.test("instances on one database read one revision, moved by any instance's writes in the same transaction", async (t) => {
  const url = await db.fresh();
  const a = await open(t, url);
  const b = await open(t, url);
  t.strictSame(await a.posts.revision(), await b.posts.revision());
  // Writes from both instances at once: the counter in the database counts every one.
  const created = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).posts.create({ id: `p${i % 10}`, title: "t", body: "b" })));
  const wins = created.filter((r) => r.kind === "created").length;
  t.equal(wins, 10);
  t.strictSame(await b.posts.revision(), await a.posts.revision());
  t.equal((await a.posts.revision()).n, 10);
  await b.posts.update("p1", (p) => ({ title: "by b", body: p.body }));
  await a.posts.delete("p2");
  t.equal((await b.posts.revision()).n, 12);
  // A write that rolls back (a change that throws) moves nothing.
  await t.rejects(
    a.posts.update("p3", () => {
      throw new Error("412");
    }),
  );
  t.equal((await b.posts.revision()).n, 12);
});

t.test("pages read through one instance while another writes: nothing repeated, nothing present throughout missed", async (t) => {
  const url = await db.fresh();
  const reader = await open(t, url);
  const writer = await open(t, url);
  const stable = Array.from({ length: 40 }, (_, i) => `s${i}`);
  for (const id of stable) {
    await writer.posts.create({ id, title: "t", body: "b" });
    await writer.posts.create({ id: `${id}-doomed`, title: "t", body: "b" });
  }
  const seen: string[] = [];
  let after = 0;
  for (let i = 0; i < 500; i++) {
    const writes = i < 40 ? [writer.posts.create({ id: `new-${i}`, title: "t", body: "b" }), writer.posts.delete(`s${i}-doomed`)] : [];
    const [page] = await Promise.all([reader.posts.page({ after, limit: 3 }), ...writes]);
    seen.push(...page.items.map((p) => p.id));
    if (page.items.length === 0 && i >= 40) break;
    after = page.last ?? after;
  }
  t.equal(new Set(seen).size, seen.length, "no post twice");
  t.strictSame(stable.filter((id) => !seen.includes(id)), [], "every post present throughout was seen");
});

t.test("a page is a range scan of an index, never a sort of the table", async (t) => {
  const url = await db.fresh();
  const store = await open(t, url);
  for (let i = 0; i < 50; i++) await store.posts.create({ id: `p${i}`, title: "t", body: "b" });
  // The table is small, so PostgreSQL would rightly scan (or bitmap-scan and sort) it whole; off with those, to
  // see that an index serves the range in order (the plan a big table gets).
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  for (const setting of ["enable_seqscan", "enable_bitmapscan", "enable_sort"]) await client.query(`SET ${setting} = off`);
  const plan = async (sql: string) => (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`)).rows.map((r) => r["QUERY PLAN"]).join("\n");
  t.match(await plan("SELECT seq, id FROM posts WHERE seq > 10 AND seq <= 9007199254740991 ORDER BY seq LIMIT 5"), /Index Scan using posts_seq_key on posts/);
  t.notMatch(await plan("SELECT seq, id FROM posts WHERE seq > 10 AND seq <= 9007199254740991 ORDER BY seq LIMIT 5"), /Sort/);
  t.match(await plan("SELECT id FROM facts WHERE id > 10 AND id <= 9007199254740991 ORDER BY id LIMIT 5"), /Index (Only )?Scan using facts_pkey on facts/);
});

t.test("a database of schema version 3 gains each post's representation, and its revision stays as it was", async (t) => {
  const url = await db.fresh();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const [i, migration] of PG_MIGRATIONS.slice(0, 3).entries()) {
      await client.query(migration as string);
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [i + 1]);
    }
    const insert = "INSERT INTO posts (id, title, body, author, tags, published_at, updated_at) VALUES ($1, $2, $3, $4, $5, '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')";
    await client.query(insert, ["one", "T\u{1F600}", "line\nbreak", "ann", ["a", "b"]]);
    await client.query(insert, ["two", "t", "b", null, null]);
    await client.query(`INSERT INTO posts (id, title, body, tags, published_at, updated_at) SELECT 'many-' || i, 't', 'b', '{}', now(), now() FROM generate_series(0, 1499) AS i`);
  } finally {
    await client.end();
  }
  const [revision] = await query<{ n: string; epoch: string }>(url, "SELECT n, epoch FROM revisions WHERE collection = 'posts'");
  const store = await open(t, url);
  t.strictSame(await store.posts.revision(), { epoch: revision!.epoch, n: Number(revision!.n) }, "the revision did not move: no post changed");
  for (const id of ["one", "two", "many-0", "many-1499"]) {
    t.strictSame(await store.posts.representation(id), representationOf((await store.posts.get(id))!), `${id}'s representation`);
  }
  const page = await store.posts.pageJson({ limit: 2 });
  t.equal(Buffer.from(page.members).toString(), JSON.stringify((await store.posts.list()).slice(0, 2)).slice(1, -1));
});

t.test("a database of schema version 4 keeps each post as its stored JSON alone: fields, bytes, tag, order, revision and positions as they were", async (t) => {
  const url = await db.fresh();
  const written = VERSION_4_POSTS;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const [i, migration] of PG_MIGRATIONS.slice(0, 4).entries()) {
      await client.query(typeof migration === "string" ? migration : migration.sql);
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [i + 1]);
    }
    for (const post of written) {
      const { json, tag } = representationOf(post);
      await client.query("INSERT INTO posts (id, title, body, author, tags, published_at, updated_at, json, tag) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", [
        post.id, post.title, post.body, post.author ?? null, post.tags ?? null, post.publishedAt, post.updatedAt, json, tag,
      ]);
    }
    // The post written last is gone: its position (3) must never come back.
    await client.query("DELETE FROM posts WHERE id = 'three'");
  } finally {
    await client.end();
  }
  const [revision] = await query<{ n: string; epoch: string }>(url, "SELECT n, epoch FROM revisions WHERE collection = 'posts'");
  const store = await open(t, url);
  await checkMigratedPosts(t, store, { epoch: revision!.epoch, n: Number(revision!.n) });
  const columns = await query<{ column_name: string }>(url, "SELECT column_name FROM information_schema.columns WHERE table_name = 'posts' AND table_schema = current_schema() ORDER BY ordinal_position");
  t.strictSame(columns.map((c) => c.column_name).sort(), ["id", "json", "seq", "tag", "yaml"], "the row holds the JSON (and its YAML entry), not the fields a second time");
});

t.test("a database of schema version 6 gains a YAML entry for each post: none made by the migration, each made and stored by the first read that needs it", async (t) => {
  const url = await db.fresh();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const [i, migration] of PG_MIGRATIONS.slice(0, 6).entries()) {
      await client.query(typeof migration === "string" ? migration : migration.sql);
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES ($1)`, [i + 1]);
    }
    for (const post of BEFORE_YAML_POSTS) {
      const { json, tag } = representationOf(post);
      await client.query("INSERT INTO posts (id, json, tag) VALUES ($1, $2, $3)", [post.id, json, tag]);
    }
  } finally {
    await client.end();
  }
  const [revision] = await query<{ n: string; epoch: string }>(url, "SELECT n, epoch FROM revisions WHERE collection = 'posts'");
  const store = await open(t, url);
  const stored = async () => (await query<{ yaml: string | null }>(url, "SELECT yaml FROM posts ORDER BY seq")).map((row) => row.yaml);
  await checkYamlAfterMigration(t, store, { epoch: revision!.epoch, n: Number(revision!.n) }, stored);
});

t.test("a write that outlasts queryTimeoutMs is cancelled by the server: the 503 it gets changed nothing, then or later", async (t) => {
  // Before, only node-postgres gave up (query_timeout): the API answered 503 "nothing was read or changed"
  // while the statement stayed queued on the server, and ran once the lock it waited for was free: the
  // post was deleted, a fact added (which the client, retrying as told, then added twice).
  const url = await db.fresh();
  const store = await open(t, url, { queryTimeoutMs: 300, log: () => undefined });
  await store.posts.create({ id: "held", title: "t", body: "b" });
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query("BEGIN");
  await holder.query("SELECT id FROM posts WHERE id = 'held' FOR UPDATE");
  await holder.query("LOCK TABLE facts IN EXCLUSIVE MODE");
  await t.rejects(store.posts.delete("held"), StoreUnavailableError, "the delete waits for the row past the timeout: unavailable");
  await t.rejects(store.facts.create("A fact.", "api"), StoreUnavailableError, "the fact waits for the table past the timeout: unavailable");
  await holder.query("COMMIT");
  // Whatever the server still had of those statements runs now that the locks are free; wait until none is left.
  const running = async () =>
    (await holder.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'startline' AND state <> 'idle' AND pid <> pg_backend_pid()")).rows[0]!.n;
  await happens(t, (async () => { while ((await running()) > 0) await new Promise((resolve) => setTimeout(resolve, 10)); })(), "the store's statements are done");
  t.ok(await store.posts.get("held"), "the post is still there");
  t.equal((await store.facts.list()).length, 0, "no fact was added");
});

t.test("a random fact is found down the id's index: no step of the query facts.random() runs reads more than a row or two", async (t) => {
  // With a million facts, a pick that counted the table and skipped to an OFFSET
  // read every row (hundreds of milliseconds a request, a pooled connection held
  // all along). The query random() sends is recorded here, and PostgreSQL's own
  // account of it (EXPLAIN ANALYZE) says how many rows each step produced.
  const url = await db.fresh();
  const store = await open(t, url, { random: () => 0.7 });
  await query(url, "INSERT INTO facts (text, source, created_at) SELECT 'fact ' || i, 'api', now() FROM generate_series(1, 1000) AS i");
  const sent: { text: string; values: unknown[] }[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
    if (typeof first === "string") sent.push({ text: first, values: second ?? [] });
    else if (first !== null && typeof first === "object" && "text" in first) sent.push({ text: first.text, values: first.values ?? [] });
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  let picked;
  try {
    picked = await store.facts.random();
  } finally {
    pg.Client.prototype.query = original;
  }
  const all = await store.facts.list();
  t.equal(picked?.id, all[Math.floor(0.7 * all.length)]!.id, "the pick is list()[floor(0.7 * length)], as before");
  const facts = sent.filter((q) => /\bfacts\b/.test(q.text));
  t.ok(facts.length > 0, "random() sent its query");
  for (const q of facts) {
    const [row] = await query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(url, `EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values);
    const most = maxRows(row!["QUERY PLAN"][0].Plan);
    t.ok(most <= 2, `at most 2 rows from any step (${most}): ${q.text}`);
  }
});

interface PlanNode {
  readonly "Actual Rows": number;
  readonly "Actual Loops": number;
  readonly Plans?: readonly PlanNode[];
}

function maxRows(node: PlanNode): number {
  return Math.max(node["Actual Rows"] * node["Actual Loops"], ...(node.Plans ?? []).map(maxRows));
}

t.test("a writer that knows nothing of YAML entries (an instance of an older version) changing a post's text clears its entry; this version's writes and keepYaml keep theirs", async (t) => {
  const url = await db.fresh();
  const store = await open(t, url);
  const created = await store.posts.create({ id: "mixed", title: "t", body: "b", tags: [] });
  if (created.kind !== "created") throw new Error("not created");
  const entry = async () => (await query<{ yaml: string | null }>(url, "SELECT yaml FROM posts WHERE id = 'mixed'"))[0]!.yaml;
  t.type(await entry(), "string", "the write stored its entry");
  const changed = representationOf({ ...created.item, title: "by an older instance" });
  await query(url, "UPDATE posts SET json = $1, tag = $2 WHERE id = 'mixed'", [changed.json, changed.tag]);
  t.equal(await entry(), null, "the old text's entry went with the old text");
  await store.posts.update("mixed", () => ({ title: "by this version", body: "b", tags: [] }));
  t.match(await entry(), /by this version/, "this version's update stores the new text's entry, and the trigger leaves it");
  await query(url, "UPDATE posts SET yaml = NULL WHERE id = 'mixed'");
  const current = await store.posts.representation("mixed");
  await store.posts.keepYaml([{ id: "mixed", tag: current!.tag, yaml: "  - kept\n" }]);
  t.equal(await entry(), "  - kept\n", "keepYaml sets the entry alone: nothing clears it");
});
