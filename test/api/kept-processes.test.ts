// Kept reads are never stale, on one SQLite file: after a write, no other
// connection, worker or instance answers with the bytes or a 304 from
// before it (test/helpers/kept-suite.ts; PostgreSQL: test/scaling/kept-postgres.test.ts).

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { anotherConnection, anotherInstance, anotherWorker, instances } from "../helpers/kept-suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-kept-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// The connection's check runs on the first of the two instances (each check has posts of its own): a
// server of its own cost a start more, and a write on one connection must reach a kept read on another
// all the same when a second process shares the file.
t.test("two instances on the same file", async (t) => {
  const [a, b] = await instances(t, { DATA_DIR: path.join(dir, "instances") }, 2);
  await t.test("another connection to the same server", async (t) => anotherConnection(t, a!));
  await t.test("another instance on the same file", async (t) => anotherInstance(t, [a!, b!]));
});
t.test("another worker of the same server (WORKERS=2)", async (t) => anotherWorker(t, { DATA_DIR: path.join(dir, "worker") }));
