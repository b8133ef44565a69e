// Nothing acknowledged is lost when two instances share one PostgreSQL
// database: the checks of test/helpers/acknowledged-suite.ts, on a throwaway
// cluster (external tier). The SQLite half is
// test/scaling/acknowledged-sqlite.test.ts.

import t from "tap";
import { testDatabase } from "../helpers/postgres.js";
import { startServer } from "../helpers/process.js";
import { ADMIN, portOf, races, stopAtEnd, storedAsSent, type Deployment } from "../helpers/acknowledged-suite.js";

t.test("two instances on one PostgreSQL database", async (t) => {
  const db = await testDatabase(t);
  const url = await db.fresh();
  const a = stopAtEnd(t, startServer({ DATABASE_URL: url, ADMIN_TOKEN: ADMIN, QUIET: "1" }));
  const b = stopAtEnd(t, startServer({ DATABASE_URL: url, ADMIN_TOKEN: ADMIN, QUIET: "1" }));
  const deployment: Deployment = { ports: [await portOf(a), await portOf(b)] };
  await storedAsSent(t, deployment);
  await races(t, deployment);
});
