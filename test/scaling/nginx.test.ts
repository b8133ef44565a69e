// Past one machine: two startline processes on two ports, one PostgreSQL
// database, nginx in front (deploy/nginx.conf). What one instance writes,
// the other reads; custom methods pass through nginx unchanged; and when one
// instance dies, nginx keeps answering through the other.

import t from "tap";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { SEED_FACTS } from "../../src/store/seed.js";
import { startNginx } from "../helpers/nginx.js";
import { testDatabase } from "../helpers/postgres.js";
import { startServer, type ServerProcess } from "../helpers/process.js";

const run = promisify(execFile);
const ADMIN = "scaling-admin-token-0123456789";

const db = await testDatabase(t);
const url = await db.fresh();

function instance(): ServerProcess {
  const server = startServer({ DATABASE_URL: url, ADMIN_TOKEN: ADMIN, DATABASE_POOL_SIZE: "4" });
  t.teardown(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exited();
    }
  });
  return server;
}

// Both start at the same moment on a new, empty database: they race to migrate and to seed it.
const a = instance();
const b = instance();
const [baseA, baseB] = await Promise.all([a.url(), b.url()]);
const portOf = (base: string) => Number(new URL(base).port);
const nginx = await startNginx(t, [portOf(baseA), portOf(baseB)]);

const json = { "Content-Type": "application/json" };
/** Access-log lines for `path` in an instance's output. */
const served = (server: ServerProcess, method: string, path: string) => server.lines.filter((l) => l.includes(`] "${method} ${path} HTTP/`)).length;

/**
 * Whether `check` holds once the instances have written their access-log
 * lines: a line is written just after its response, so it may reach the pipe
 * a moment after the client has the response. Checked again on every new line
 * of either instance; the 30 s only bound a failure.
 */
function eventually(check: () => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (value: boolean) => {
      for (const stop of stops) stop();
      clearTimeout(bound);
      resolve(value);
    };
    const listener = () => {
      if (check()) finish(true);
    };
    const stops = [a.onLine(listener), b.onLine(listener)];
    const bound = setTimeout(() => finish(check()), 30_000);
    listener();
  });
}

t.test("two instances starting together migrated and seeded the database once", async (t) => {
  const { facts } = (await (await fetch(`${nginx.base}/api/v2/facts`)).json()) as { facts: { id: string; text: string }[] };
  t.equal(facts.length, SEED_FACTS.length, "each seed fact once");
  t.strictSame(
    facts.map((f) => f.id),
    SEED_FACTS.map((_, i) => String(i + 1)),
  );
  t.notOk([...a.lines, ...b.lines].some((l) => /administrator token/.test(l)), "ADMIN_TOKEN set: no token printed");
});

t.test("a post published through one instance is read through the other, and through nginx", async (t) => {
  const created = await fetch(`${baseA}/api/v1/post/across`, { method: "POST", headers: json, body: JSON.stringify({ title: "Across", body: "Written on A.", tags: ["scaling"] }) });
  t.equal(created.status, 201);
  const { post } = (await created.json()) as { post: unknown };
  const onB = await fetch(`${baseB}/api/v1/post/across`);
  t.equal(onB.status, 200, "B serves what A wrote");
  const body = await onB.text();
  t.equal(body, JSON.stringify(post), "byte for byte");
  const etag = onB.headers.get("etag");
  for (let i = 0; i < 6; i++) {
    const viaNginx = await fetch(`${nginx.base}/api/v1/post/across`);
    t.equal(await viaNginx.text(), body, `through nginx, request ${i + 1}`);
    t.equal(viaNginx.headers.get("etag"), etag, "the same ETag from either instance");
  }
  t.ok(await eventually(() => served(a, "GET", "/api/v1/post/across") >= 1 && served(b, "GET", "/api/v1/post/across") >= 2), "nginx spread the reads over both instances");

  const patched = await fetch(`${baseB}/api/v1/post/across`, { method: "PATCH", headers: { "Content-Type": "application/merge-patch+json", "If-Match": etag! }, body: '{"title": "Changed on B"}' });
  t.equal(patched.status, 200, "B changes it, with A's ETag as the precondition");
  t.equal(((await (await fetch(`${baseA}/api/v1/post/across`)).json()) as { title: string }).title, "Changed on B", "A sees the change");
});

t.test("UPDATE passes through nginx unchanged (curl -X UPDATE)", async (t) => {
  const curl = (...args: string[]) => run("curl", ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", "UPDATE", `${nginx.base}/api/v1/artigo/2`, "-H", "Content-Type: application/json", ...args]);
  const admin = await curl("-H", `Authorization: Bearer ${ADMIN}`, "--data", '{"title": "Updated through nginx"}');
  const [body, status] = admin.stdout.split("\n");
  t.equal(status, "200", "the admin's UPDATE: 200");
  t.equal((JSON.parse(body!) as { title: string }).title, "Updated through nginx");
  const anonymous = await curl("-i", "--data", '{"title": "Nope"}');
  t.match(anonymous.stdout, /\n401$/, "without a token: startline's 401, not an nginx error page");
  t.match(anonymous.stdout, /^WWW-Authenticate: Bearer realm="startline"\r$/m, "with startline's challenge");
  t.match(anonymous.stdout, /^Content-Type: application\/problem\+json\r$/m);
  t.equal(((await (await fetch(`${baseA}/api/v1/artigo/2`)).json()) as { title: string }).title, "Updated through nginx", "stored, as both instances see");
  t.ok(await eventually(() => served(a, "UPDATE", "/api/v1/artigo/2") + served(b, "UPDATE", "/api/v1/artigo/2") === 2), "both UPDATEs reached an instance as UPDATE");
});

t.test("with one instance killed, the service keeps answering through the other", async (t) => {
  a.child.kill("SIGKILL");
  await a.exited();
  const before = served(b, "GET", "/api/v2/facts/random");
  for (let i = 0; i < 10; i++) {
    const r = await fetch(`${nginx.base}/api/v2/facts/random`);
    t.equal(r.status, 200, `read ${i + 1} answered`);
    await r.arrayBuffer();
  }
  t.ok(await eventually(() => served(b, "GET", "/api/v2/facts/random") - before === 10), "all of them by B");
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${nginx.base}/api/v1/post/after-${i}`, { method: "POST", headers: json, body: JSON.stringify({ title: "After the kill", body: "B." }) });
    t.equal(r.status, 201, `write ${i + 1} answered, once`);
    await r.arrayBuffer();
  }
  const { posts } = (await (await fetch(`${nginx.base}/api/v1/posts`)).json()) as { posts: { id: string }[] };
  t.strictSame(
    posts.map((p) => p.id),
    ["across", "after-0", "after-1", "after-2", "after-3", "after-4"],
    "every write stored once",
  );
  t.match(nginx.errorLog(), /connect\(\) failed \(111: Connection refused\)/, "nginx did try the dead instance, and passed the request on");
  t.notMatch(nginx.errorLog(), /\[(emerg|alert|crit)\]/, "nginx logged nothing worse than the refused connections");
});
