// The SQLite store: the shared suite, then what only a file can show.

import t from "tap";
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { createSqliteStore, StoreOpenError } from "../../src/store/sqlite.js";
import { seed } from "../../src/store/seed.js";
import { MIGRATIONS } from "../../src/store/schema.js";
import { storeSuite } from "./suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-sqlite-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshFile = () => path.join(dir, `db-${++n}.sqlite`);

await storeSuite(t, "sqlite store (file)", (options) => createSqliteStore(freshFile(), options));

t.test("data survives closing and reopening the file", async (t) => {
  const file = freshFile();
  const a = createSqliteStore(file);
  a.posts.create({ id: "kept", title: "t", body: "b", tags: [] });
  const fact = a.facts.create("A fact.", "api");
  a.close();
  const b = createSqliteStore(file);
  t.strictSame(b.posts.get("kept")?.tags, [], "an empty tags array stays an empty array");
  t.strictSame(b.facts.get(fact.id), fact);
  b.close();
});

t.test("seed data is inserted once, however often the store is reopened", async (t) => {
  const file = freshFile();
  for (let i = 0; i < 3; i++) {
    const s = createSqliteStore(file);
    seed(s);
    s.close();
  }
  const s = createSqliteStore(file);
  const facts = s.facts.list();
  t.equal(new Set(facts.map((f) => f.text)).size, facts.length, "no fact twice");
  t.equal(s.articles.list().length, 3);
  s.close();
});

t.test("the schema version is recorded, and a newer one is refused with a clear message", async (t) => {
  const file = freshFile();
  createSqliteStore(file).close();
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
  s.posts.create({ id: "x", title: "t", body: "b" });
  s.close();
  t.equal(createSqliteStore(file).posts.get("x")?.id, "x");
});
