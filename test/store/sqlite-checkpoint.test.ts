// Checkpoints on a thread of their own (src/store/sqlite-checkpoint.ts): the
// server's connection never runs one in a commit; once the WAL holds more
// than CHECKPOINT_FRAMES frames not yet copied back, a write asks the
// thread, which copies them back; one at a time; the connection's own
// checkpoints come back when the thread cannot do its work, and not when
// another connection's thread, on the same file, is checkpointing.

import t, { type Test } from "tap";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CHECKPOINT_FRAMES, checkpointer, type CheckpointResult } from "../../src/store/sqlite-checkpoint.js";
import { createSqliteStore } from "../../src/store/sqlite.js";

function database(t: Test): { db: Database.Database; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "startline-checkpoint-"));
  const file = path.join(dir, "db.sqlite");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (x TEXT)");
  t.teardown(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, file };
}

const ownCheckpoints = (db: Database.Database) => (on: boolean) => db.pragma(`wal_autocheckpoint = ${on ? CHECKPOINT_FRAMES : 0}`);

/** Frames in the WAL, as a checkpoint of nothing reports them (PASSIVE with nothing to copy copies nothing new). */
const walFrames = (db: Database.Database) => (db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0]!.log;

t.test("the connection never checkpoints; past CHECKPOINT_FRAMES a write has the thread copy the WAL back", async (t) => {
  const { db, file } = database(t);
  const checkpoints = checkpointer(file, "NORMAL", ownCheckpoints(db));
  t.teardown(() => checkpoints.close());
  t.equal(db.pragma("wal_autocheckpoint", { simple: true }), 0, "the server's connection runs none itself");
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  // About a page a row, a frame of the WAL each when written in one transaction.
  const rows = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) insert.run("x".repeat(3000));
  });
  rows(CHECKPOINT_FRAMES / 2);
  checkpoints.afterWrite();
  t.equal(await checkpoints.settled(), undefined, "no checkpoint below the mark");
  rows(CHECKPOINT_FRAMES / 2 + 100);
  checkpoints.afterWrite();
  const done = await checkpoints.settled();
  t.ok(done !== undefined, "a checkpoint ran once the WAL passed the mark");
  t.ok(done!.log >= CHECKPOINT_FRAMES, `it found the WAL's ${done!.log} frames (the connection had copied none back itself)`);
  t.equal(done!.checkpointed, done!.log, "and copied every one back (no reader held any)");
  t.equal((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, CHECKPOINT_FRAMES + 100, "every row is there");
  // The next write starts the WAL over, since all of it was copied back: it stays bounded.
  insert.run("x");
  const frames = walFrames(db);
  t.ok(frames < CHECKPOINT_FRAMES / 10, `the WAL started over: ${frames} frames`);
});

t.test("one checkpoint at a time: writes while one runs do not ask for another", async (t) => {
  const { db, file } = database(t);
  const checkpoints = checkpointer(file, "FULL", ownCheckpoints(db));
  t.teardown(() => checkpoints.close());
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  const many = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) insert.run("y".repeat(3000));
  });
  many(CHECKPOINT_FRAMES + 100);
  checkpoints.afterWrite();
  const first = checkpoints.settled();
  many(10);
  checkpoints.afterWrite();
  t.equal(checkpoints.settled(), first, "the same checkpoint still runs");
  t.ok((await first)!.checkpointed >= CHECKPOINT_FRAMES, "which copied the WAL back");
});

t.test("when the thread fails, the connection checkpoints for itself again", async (t) => {
  const { db, file } = database(t);
  const turned: boolean[] = [];
  // A thread whose program fails as it starts (as one that cannot load its module, or open the file, would).
  const checkpoints = checkpointer(file, "NORMAL", (on) => (turned.push(on), ownCheckpoints(db)(on)), undefined, "throw new Error('no thread today')");
  t.teardown(() => checkpoints.close());
  db.transaction(() => {
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < CHECKPOINT_FRAMES + 100; i++) insert.run("z".repeat(3000));
  })();
  checkpoints.afterWrite();
  t.equal(await checkpoints.settled(), undefined, "no checkpoint was made");
  t.same(turned, [false, true], "the connection's own checkpoints: off, then on again");
  t.equal(db.pragma("wal_autocheckpoint", { simple: true }), CHECKPOINT_FRAMES, "as SQLite has them by default");
  checkpoints.afterWrite();
  t.equal(await checkpoints.settled(), undefined, "and the thread is not asked again");
});

t.test("the SQLite store's writes have the thread checkpoint, not the connection", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "startline-checkpoint-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const made: CheckpointResult[] = [];
  const store = createSqliteStore(path.join(dir, "db.sqlite"), { onCheckpoint: (result) => made.push(result) });
  // Posts of 30,000 characters: about eight pages each, so some 130 pass the mark.
  const body = "b".repeat(30_000);
  for (let n = 0; n < 200; n++) await store.posts.create({ id: `p${n}`, title: "t", body, tags: [] });
  // Closing waits for a checkpoint still running.
  await store.close();
  t.ok(made.length > 0, `${made.length} checkpoint(s) made on the thread`);
  t.ok(made[0]!.log >= CHECKPOINT_FRAMES, `the first of a WAL of ${made[0]!.log} frames: the connection copied none back in a commit`);
});

t.test("two connections on one file, each with its thread, asked at once: one copies the WAL back, neither gives up", async (t) => {
  // As two instances (or WORKERS=2) on one SQLite file: each server's connection has a checkpoint thread of its own,
  // and a write of either may find the WAL past the mark. SQLite lets one checkpoint run at a time; the other,
  // PASSIVE and never waiting, answers busy. That is not a thread failing: its connection must not take its own
  // checkpoints back (they would run on the loop again), and the next write past the mark asks again.
  const { db, file } = database(t);
  const other = new Database(file);
  t.teardown(() => other.close());
  const turned: boolean[] = [];
  const spy = (connection: Database.Database) => (on: boolean) => (turned.push(on), ownCheckpoints(connection)(on));
  const first = checkpointer(file, "NORMAL", spy(db));
  const second = checkpointer(file, "NORMAL", spy(other));
  t.teardown(() => Promise.all([first.close(), second.close()]));
  db.transaction(() => {
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 4 * CHECKPOINT_FRAMES; i++) insert.run("w".repeat(3000));
  })();
  // Both see the WAL past the mark (the -shm file is shared), so both threads are asked in the same turn.
  first.afterWrite();
  second.afterWrite();
  const results = await Promise.all([first.settled(), second.settled()]);
  t.ok(results.every((r) => r !== undefined), "each thread answered");
  for (const r of results) t.ok(r!.busy === 1 || r!.checkpointed === r!.log, `busy, or every frame copied back: ${JSON.stringify(r)}`);
  t.ok(results.some((r) => r!.busy === 0 && r!.checkpointed >= 4 * CHECKPOINT_FRAMES), "one of them copied the whole WAL back");
  t.strictSame(turned, [false, false], "neither connection took its own checkpoints back");
  t.equal(other.pragma("wal_autocheckpoint", { simple: true }), 0);
  // Asked again after another write: the one that was busy (if one was) still has its thread.
  other.prepare("INSERT INTO t VALUES (?)").run("v");
  t.ok(walFrames(other) < CHECKPOINT_FRAMES / 10, "the WAL started over, from the other connection's write too");
  t.equal((other.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n, 4 * CHECKPOINT_FRAMES + 1, "and the other connection reads every row");
});
