// The SQLite store: the shared suite, then what only a file can show.

import t from "tap";
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "../../src/store/errors.js";
import { createSqliteStore } from "../../src/store/sqlite.js";
import { seed, SEED_FACTS } from "../../src/store/seed.js";
import { MIGRATIONS } from "../../src/store/schema.js";
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

t.test("full durability is a setting", async (t) => {
  const file = freshFile();
  const s = createSqliteStore(file, { durability: "full" });
  await s.posts.create({ id: "x", title: "t", body: "b" });
  await s.close();
  const again = createSqliteStore(file);
  t.equal((await again.posts.get("x"))?.id, "x");
  await again.close();
});
