// Kept reads are never stale, on one SQLite file: after a write, no other
// connection, worker or instance answers with the bytes or a 304 from
// before it (test/helpers/kept-suite.ts; PostgreSQL: test/scaling/kept-postgres.test.ts).

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { anotherConnection, anotherInstance, anotherWorker } from "../helpers/kept-suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-kept-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test("another connection to the same server", async (t) => anotherConnection(t, { DATA_DIR: path.join(dir, "connection") }));
t.test("another worker of the same server (WORKERS=2)", async (t) => anotherWorker(t, { DATA_DIR: path.join(dir, "worker") }));
t.test("another instance on the same file", async (t) => anotherInstance(t, { DATA_DIR: path.join(dir, "instance") }));
