// Kept reads are never stale, on one PostgreSQL database: the checks of
// test/helpers/kept-suite.ts on a throwaway cluster (external tier). The
// SQLite half is test/api/kept-processes.test.ts.

import t from "tap";
import { testDatabase } from "../helpers/postgres.js";
import { anotherConnection, anotherInstance, anotherWorker } from "../helpers/kept-suite.js";

t.test("on one PostgreSQL database", async (t) => {
  const db = await testDatabase(t);
  await t.test("another connection to the same server", async (t) => anotherConnection(t, { DATABASE_URL: await db.fresh() }));
  await t.test("another worker of the same server (WORKERS=2)", async (t) => anotherWorker(t, { DATABASE_URL: await db.fresh() }));
  await t.test("another instance on the same database", async (t) => anotherInstance(t, { DATABASE_URL: await db.fresh() }));
});
