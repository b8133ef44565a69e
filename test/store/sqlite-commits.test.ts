// The look for other connections' commits (src/store/sqlite-commits.ts): it
// changes after every commit by another connection, in WAL mode through the
// WAL-index header, and without one through PRAGMA data_version.

import t, { type Test } from "tap";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { commitWatch } from "../../src/store/sqlite-commits.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-commits-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Two connections on `file` and a watch from the reader's side, all closed when `t` ends. */
function pair(t: Test, file: string, wal: boolean, watchedAs = file) {
  const reader = new Database(file);
  const writer = new Database(file);
  if (wal) reader.pragma("journal_mode = WAL");
  reader.exec("CREATE TABLE IF NOT EXISTS t (n INTEGER)");
  const dataVersion = reader.prepare<[], number>("PRAGMA data_version").pluck();
  let asked = 0;
  const watch = commitWatch(watchedAs, wal, () => {
    asked++;
    return dataVersion.get()!;
  });
  t.teardown(() => {
    watch.close();
    reader.close();
    writer.close();
  });
  return { reader, writer, watch, asked: () => asked };
}

t.test("WAL: each commit by another connection changes what is seen, and nothing else does, without asking data_version", async (t) => {
  const { reader, writer, watch, asked } = pair(t, path.join(dir, "wal.sqlite"), true);
  reader.prepare("SELECT count(*) FROM t").get(); // the -shm file exists from the first read
  const first = watch.seen();
  t.equal(watch.seen(), first, "no commit: the same");
  for (let i = 0; i < 5; i++) {
    const before = watch.seen();
    writer.prepare("INSERT INTO t VALUES (?)").run(i);
    const after = watch.seen();
    t.not(after, before, `commit ${i + 1} is seen`);
    t.equal(watch.seen(), after, "and only once");
  }
  // A checkpoint that restarts the WAL, then a commit into the restarted WAL: still seen.
  writer.pragma("wal_checkpoint(TRUNCATE)");
  const restarted = watch.seen();
  writer.prepare("INSERT INTO t VALUES (99)").run();
  t.not(watch.seen(), restarted, "a commit after the WAL restarted is seen");
  t.equal(asked(), 0, "data_version was never needed");
});

t.test("without WAL (no -shm file): data_version is asked, and a commit is seen", async (t) => {
  const { reader, writer, watch, asked } = pair(t, path.join(dir, "rollback.sqlite"), false);
  const before = watch.seen();
  writer.prepare("INSERT INTO t VALUES (1)").run();
  t.not(watch.seen(), before, "the commit is seen");
  t.ok(asked() >= 2, "through data_version");
});

t.test("a database in memory has no other connection: nothing to look at", async (t) => {
  let asked = 0;
  const watch = commitWatch(":memory:", true, () => ++asked);
  t.equal(watch.seen(), watch.seen());
  t.equal(asked, 0);
});

t.test("a database reached through a symbolic link: its -shm is the real file's, not one beside the link", async (t) => {
  const real = path.join(dir, "real.sqlite");
  const link = path.join(dir, "link.sqlite");
  new Database(real).close();
  symlinkSync(real, link);
  // A stray file where a -shm beside the link would be: it never changes.
  writeFileSync(`${link}-shm`, Buffer.alloc(32 * 1024));
  const { reader, writer, watch } = pair(t, link, true);
  reader.prepare("SELECT count(*) FROM t").get();
  for (let i = 0; i < 3; i++) {
    const before = watch.seen();
    writer.prepare("INSERT INTO t VALUES (?)").run(i);
    t.not(watch.seen(), before, `commit ${i + 1} through the link is seen`);
  }
});

t.test("not in WAL mode, a stale -shm beside the file is not read: data_version is", async (t) => {
  const file = path.join(dir, "stale-shm.sqlite");
  writeFileSync(`${file}-shm`, Buffer.alloc(32 * 1024));
  const { reader, writer, watch, asked } = pair(t, file, false);
  const before = watch.seen();
  writer.prepare("INSERT INTO t VALUES (1)").run();
  t.not(watch.seen(), before, "the commit is seen");
  t.ok(asked() >= 2, "through data_version");
});
