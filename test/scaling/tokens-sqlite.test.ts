// Credentials that can be taken back, with WORKERS=2 on one SQLite file: the
// checks of test/helpers/tokens-suite.ts. This half needs no program from
// outside the repository, so it runs in the fast tier; the PostgreSQL half is
// test/scaling/tokens-postgres.test.ts.

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { commands, rotation, userTokenAsSetting } from "../helpers/tokens-suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-tokens-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test("WORKERS=2 on one SQLite file", async (t) => {
  const env = { WORKERS: "2" };
  await t.test("an ADMIN_TOKEN that is a user's token stops the start, in one line", (t) => userTokenAsSetting(t, { DATA_DIR: path.join(dir, "conflict") }, env));
  await t.test("a new ADMIN_TOKEN revokes the old one at start", (t) => rotation(t, { DATA_DIR: path.join(dir, "rotation") }, 1, env));
  await t.test("npm run token -- list and revoke; a revoked token is refused at once by every worker", (t) => commands(t, { DATA_DIR: path.join(dir, "commands") }, 1, env));
});
