// The administrator token as a newcomer meets it. The first one is printed
// once, so only a start that goes on to listen may make it: a start on a busy
// port exits without one, and the next start that listens prints it, alone
// and under WORKERS. `npm run token` says what is wrong with a role it does
// not know, and speaks English.

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import t, { type Test } from "tap";
import { startServer } from "./helpers/process.js";
import { tokenInProcess, tokenProcess } from "./helpers/token-command.js";

const CREATED = /^created an administrator token; it is shown only now, so keep it: (sl_[A-Za-z0-9_-]{43})$/;

async function dataDir(t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "startline-admin-token-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A port something else listens on, for as long as the test runs. */
async function busyPort(t: Test): Promise<number> {
  const other: Server = createServer();
  other.listen(0, "127.0.0.1");
  await once(other, "listening");
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  return (other.address() as { port: number }).port;
}

async function update(base: string, bearer: string): Promise<number> {
  const r = await fetch(`${base}/api/v1/artigo/1`, {
    method: "UPDATE",
    headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/merge-patch+json" },
    body: JSON.stringify({ title: "by the first token" }),
  });
  await r.arrayBuffer();
  return r.status;
}

for (const workers of ["1", "2"]) {
  t.test(`WORKERS=${workers}: a start that cannot listen makes no token; the next that listens prints one, and it works`, async (t) => {
    const env = { DATA_DIR: await dataDir(t), WORKERS: workers, QUIET: "1" };
    const busy = startServer({ ...env, PORT: String(await busyPort(t)) });
    if (workers === "1") {
      t.equal(await busy.exited(), 1, "the start on a busy port fails");
    } else {
      // The primary replaces a worker that dies, and gives up only when
      // five in a row die before serving; what matters here is that a
      // worker could not listen, after which this start is stopped.
      await busy.line(/the address is already in use/);
      busy.child.kill("SIGTERM");
      await busy.exited();
    }
    t.ok(busy.lines.some((l) => l.includes("the address is already in use")), `it says why:\n${busy.lines.join("\n")}`);
    t.notOk(busy.lines.some((l) => /token/.test(l)), "and neither makes nor shows a token");

    const next = startServer(env);
    t.teardown(async () => {
      next.child.kill("SIGTERM");
      await next.exited();
    });
    const base = await Promise.race([
      next.url(),
      next.exited().then((code) => {
        throw new Error(`the second start exited (${code}) before listening:\n${next.lines.join("\n")}`);
      }),
    ]);
    const shown = next.lines.filter((l) => CREATED.test(l));
    t.equal(shown.length, 1, `the start that listens shows one token, before "listening on":\n${next.lines.join("\n")}`);
    t.equal(await update(base, CREATED.exec(shown[0] ?? "")?.[1] ?? "none"), 200, "an administrator's token");
  });
}

// add, a role that is none, and list run as the real command (its exit status and its two streams);
// the rest in this process, through the function it runs (test/helpers/token-command.ts).
t.test("npm run token -- add: an admin token, a user token, and a role that is none", async (t) => {
  const where = { DATA_DIR: await dataDir(t) };
  const admin = await tokenProcess(where, "add", "--role", "admin");
  t.equal(admin.code, 0, admin.stderr);
  t.match(admin.stdout, /^created an admin token; it is shown only now, so keep it:\nsl_[A-Za-z0-9_-]{43}\n$/);
  const user = await tokenInProcess(where, "add", "--role", "user");
  t.match(user.stdout, /^created a user token; it is shown only now, so keep it:\n/);

  const root = await tokenProcess(where, "add", "--role", "root");
  t.equal(root.code, 2);
  t.equal(root.stdout, "", "nothing created");
  t.match(root.stderr, /^startline: "root" is not a role; a token's role is user or admin\nusage: npm run token -- add --role admin\|user\n/);
  t.equal((await tokenProcess(where, "list")).stdout.trim().split("\n").length, 3, "two tokens, under a header");

  const other = await tokenInProcess(where, "remove", "1");
  t.equal(other.code, 2);
  t.match(other.stderr, /^usage: /, "a command that is none gets the usage alone");
});
