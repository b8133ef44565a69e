// Credentials that can be taken back, with two instances on one PostgreSQL
// database: the checks of test/helpers/tokens-suite.ts, on a throwaway
// cluster (external tier). The SQLite half is test/scaling/tokens-sqlite.test.ts.

import t from "tap";
import { testDatabase } from "../helpers/postgres.js";
import { commands, rotation } from "../helpers/tokens-suite.js";

t.test("two instances on one PostgreSQL database", async (t) => {
  const db = await testDatabase(t);
  await t.test("a new ADMIN_TOKEN revokes the old one at start", async (t) => rotation(t, { DATABASE_URL: await db.fresh() }, 2, {}));
  await t.test("npm run token -- list and revoke; a revoked token is refused at once by every instance", async (t) =>
    commands(t, { DATABASE_URL: await db.fresh() }, 2, {}),
  );
});
