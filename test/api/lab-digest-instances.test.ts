// The lab's digest nonces across instances, as the binary runs them with no
// LAB_SECRET set: a nonce one instance issued verifies on another instance on
// the same database (they sign with the key the database holds, Store.key),
// and not on an instance with a database of its own.

import t, { type Test } from "tap";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startServer } from "../helpers/process.js";
import { checkProblem, raw } from "./client.js";
import { digestAuthorization } from "./digest-client.js";

const dir = mkdtempSync(path.join(tmpdir(), "startline-digest-"));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function instance(t: Test, dataDir: string): Promise<number> {
  const server = startServer({ QUIET: "1", DATA_DIR: dataDir });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  return Number(new URL(await server.url()).port);
}

t.test("a nonce issued by one instance verifies on another on the same database, not on one with its own", async (t) => {
  const shared = path.join(dir, "shared");
  // One after the other: the first makes the database (and draws its key), the second opens it.
  const a = await instance(t, shared);
  const b = await instance(t, shared);
  const other = await instance(t, path.join(dir, "other"));
  const target = "/api/lab/digest-auth/auth/ada/s3cret";
  const challenge = (await raw(a, "GET", target)).headers["www-authenticate"]!;
  const authorization = digestAuthorization(challenge, "GET", target, "ada", "s3cret", 1);
  const verified = await raw(b, "GET", target, { Authorization: authorization });
  t.equal(verified.status, 200, "issued by one instance, verified by the other");
  t.same(JSON.parse(verified.body), { authenticated: true, user: "ada" });
  checkProblem(t, await raw(other, "GET", target, { Authorization: authorization }), 401, /not one this server issued/);
});
