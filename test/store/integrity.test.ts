// A corrupt SQLite file must not start: zeroed pages in the middle of the
// file (a bad disk, a bad copy) are found by the check at open, and the start
// stops with one line saying what to do, instead of serving 500s.

import t, { type Test } from "tap";
import { closeSync, copyFileSync, mkdirSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DATABASE_FILE } from "../../src/store/open.js";
import { createSqliteStore } from "../../src/store/sqlite.js";
import { startServer, type ServerProcess } from "../helpers/process.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-integrity-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const PAGE = 4096; // SQLite's default page size, which the store keeps

/** A database of enough posts to span a few hundred pages: written once (2,000 posts), copied for each test. */
let populated: Promise<string> | undefined;
function populatedFile(): Promise<string> {
  populated ??= (async () => {
    const file = path.join(dir, "populated.sqlite");
    const store = createSqliteStore(file);
    for (let i = 0; i < 2000; i++) await store.posts.create({ id: `post-${i}`, title: `Post ${i}`, body: "A body that fills the page. ".repeat(20) });
    await store.close(); // the last connection checkpoints the WAL into the file and removes it: the file is the whole database
    return file;
  })();
  return populated;
}

/**
 * A data directory whose database holds enough posts to span a few hundred
 * pages, then has `bytes` zero bytes written at `skip` bytes into its middle
 * page: by default eight whole pages.
 */
async function corruptDataDir(t: Test, name: string, bytes = 8 * PAGE, skip = 0): Promise<{ dataDir: string; file: string }> {
  const dataDir = path.join(dir, name);
  mkdirSync(dataDir);
  const file = path.join(dataDir, DATABASE_FILE);
  copyFileSync(await populatedFile(), file);
  const size = statSync(file).size;
  t.ok(size > 200 * PAGE, `the file spans ${size / PAGE} pages`);
  const fd = openSync(file, "r+");
  writeSync(fd, Buffer.alloc(bytes), 0, bytes, Math.floor(size / PAGE / 2) * PAGE + skip);
  closeSync(fd);
  return { dataDir, file };
}

const ONE_LINE = /^startline: .+ is corrupt: PRAGMA quick_check found (a problem|\d+ problems|10 or more problems), the first: ".+"\. Stop every process using it, then restore a backup, or save what is readable with: sqlite3 .+ \.recover \| sqlite3 recovered\.sqlite \(and use that file\)\.$/;

for (const [what, bytes, skip, finding] of [
  ["zeroed pages (the check itself stops on them)", 8 * PAGE, 0, /the first: "database disk image is malformed"/],
  ["zeroed cell pointers in one page (the check lists what it found)", 4, 8, /found \d+ problems, the first: "\*\*\* in database main \*\*\* Tree \d+ page \d+ cell \d+: Offset 0 out of range/],
] as const) {
  t.test(`the store refuses to open a file with ${what}, in one line saying what to do`, async (t) => {
    const { file } = await corruptDataDir(t, `store-${skip}`, bytes, skip);
    let error: unknown;
    try {
      createSqliteStore(file);
    } catch (e) {
      error = e;
    }
    t.equal((error as Error | undefined)?.name, "StoreOpenError");
    const message = (error as Error).message;
    t.match(`startline: ${message}`, ONE_LINE, message);
    t.match(message, finding);
    t.notOk(message.includes("\n"), "one line");
    t.doesNotThrow(() => void createSqliteStore(file, { checkIntegrity: false }).close(), "without the check (as a worker opens it) it would have opened");
  });
}

t.test("a sound file passes the check, and stays usable after it", async (t) => {
  const file = path.join(dir, "sound.sqlite");
  const first = createSqliteStore(file);
  await first.posts.create({ id: "p", title: "t", body: "b" });
  await first.close();
  const again = createSqliteStore(file);
  t.equal((await again.posts.get("p"))?.title, "t");
  t.equal((await again.posts.update("p", (c) => ({ title: "t2", body: c.body }))).kind, "updated");
  await again.close();
});

/** The exit code; or, should the server start serving after all, a failure (and the server stopped), rather than a wait for an exit that never comes. */
async function exitCode(t: Test, server: ServerProcess): Promise<number | null> {
  const outcome = await Promise.race([server.exited().then((code) => ({ code })), server.line(/^listening on /).then((line) => ({ line }))]);
  if ("code" in outcome) return outcome.code;
  t.fail(`it started serving on a corrupt file: ${outcome.line}`);
  server.child.kill("SIGKILL");
  return server.exited();
}

t.test("npm start on a corrupt file: one line, exit code 1, nothing served", async (t) => {
  const { dataDir } = await corruptDataDir(t, "single");
  const server = startServer({ DATA_DIR: dataDir });
  t.equal(await exitCode(t, server), 1);
  t.equal(server.lines.length, 1, server.lines.join("\n"));
  t.match(server.lines[0], ONE_LINE);
});

t.test("WORKERS=2 on a corrupt file: the primary's check stops the start, before any worker", async (t) => {
  const { dataDir } = await corruptDataDir(t, "workers");
  const server = startServer({ DATA_DIR: dataDir, WORKERS: "2" });
  t.equal(await exitCode(t, server), 1);
  t.equal(server.lines.length, 1, server.lines.join("\n"));
  t.match(server.lines[0], ONE_LINE);
});
