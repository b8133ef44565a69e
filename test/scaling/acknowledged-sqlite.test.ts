// Nothing acknowledged is lost when several processes share one SQLite file
// (WORKERS=2): the checks of test/helpers/acknowledged-suite.ts. This half
// needs no program from outside the repository, so it runs in the fast tier;
// the PostgreSQL half is test/scaling/acknowledged-postgres.test.ts.

import t from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startServer } from "../helpers/process.js";
import { ADMIN, portOf, races, stopAtEnd, storedAsSent } from "../helpers/acknowledged-suite.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-acknowledged-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test("WORKERS=2 on one SQLite file", async (t) => {
  const server = stopAtEnd(t, startServer({ WORKERS: "2", DATA_DIR: path.join(dir, "sqlite"), ADMIN_TOKEN: ADMIN, QUIET: "1" }));
  const port = await portOf(server);
  await storedAsSent(t, { ports: [port, port] });
  await races(t, { ports: [port, port] });
});

