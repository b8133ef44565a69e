// When the database is not there: at start (one line, exit 1), while
// serving (503 with Retry-After, no crash, and service again once it is
// back), and when two instances race to publish one post id (the primary
// key decides: one 201, one 409).
//
// This file stops and restarts PostgreSQL, so it always runs its own
// throwaway cluster, even when TEST_DATABASE_URL names a server, and that
// cluster listens on a unix socket in its own directory only: a TCP port left
// free while the server is stopped could be taken by another process, and
// the restart would fail.

import t, { type Test } from "tap";
import pg from "pg";
import { startCluster } from "../helpers/postgres.js";
import { refusedPort } from "../helpers/ports.js";
import { startServer, type ServerProcess } from "../helpers/process.js";

const cluster = await startCluster({ listen: "socket" });
t.teardown(() => cluster.destroy());

let databases = 0;
/** A new, empty database on the throwaway cluster. */
async function freshDatabase(): Promise<string> {
  const name = `failures_${++databases}`;
  const client = new pg.Client({ connectionString: cluster.adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return cluster.urlOf(name);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

function serve(t: Test, env: Record<string, string>): ServerProcess {
  const server = startServer({ QUIET: "1", ...env });
  t.teardown(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill("SIGTERM");
      await server.exited();
    }
  });
  return server;
}

/** Polls `url` until it answers `status`, for up to `ms`: the server coming back is not an event we can wait on. */
async function until(url: string, status: number, ms: number): Promise<Response> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await fetch(url);
    if (response.status === status || Date.now() > deadline) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test("a database that is not there at start: one clear line, exit code 1", async (t) => {
  const port = await refusedPort(t);
  const server = startServer({ DATABASE_URL: `postgres://startline:hunter2-secret@127.0.0.1:${port}/startline` });
  t.equal(await server.exited(), 1, "non-zero exit");
  t.equal(server.lines.length, 1, `one line: ${server.lines.join(" | ")}`);
  t.match(server.lines[0], new RegExp(`^startline: cannot reach the PostgreSQL server at postgres://startline:\\*\\*\\*@127\\.0\\.0\\.1:${port}/startline \\(.*\\)\\. Check that it is running and that DATABASE_URL is right\\.$`));
  t.notOk(server.lines[0]!.includes("hunter2-secret"), "the password is not printed");
});

t.test("a DATABASE_URL that is not a PostgreSQL URL is refused before any connection", async (t) => {
  const server = startServer({ DATABASE_URL: "mysql://root:pw@127.0.0.1/db" });
  t.equal(await server.exited(), 1);
  t.strictSame(server.lines, ["startline: DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@127.0.0.1:5432/startline"]);
});

t.test("the database lost while serving: 503 with Retry-After, no crash, and service again when it is back", async (t) => {
  const admin = "failures-admin-token-0123456789";
  const url = await freshDatabase();
  const server = serve(t, { DATABASE_URL: url, ADMIN_TOKEN: admin });
  const base = await server.url();
  const published = await fetch(`${base}/api/v1/post/kept`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "Kept", body: "Written before the outage." }) });
  t.equal(published.status, 201);

  await cluster.stop();
  const requests: [string, RequestInit][] = [
    ["/api/v1/posts", {}],
    ["/api/v1/post/kept", {}],
    ["/api/v2/facts/random", {}],
    ["/api/v2/facts", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "Written during the outage." }],
    ["/api/v1/artigo/1", { method: "UPDATE", headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin}` }, body: '{"title": "During the outage"}' }],
  ];
  for (const [path, init] of requests) {
    const response = await fetch(`${base}${path}`, init);
    t.equal(response.status, 503, `${init.method ?? "GET"} ${path}: 503`);
    t.equal(response.headers.get("retry-after"), "5", "with Retry-After");
    t.equal(response.headers.get("content-type"), "application/problem+json");
    const problem = (await response.json()) as Record<string, unknown>;
    t.match(problem, { type: "/problems/store-unavailable", status: 503, title: "Database unavailable", instance: path });
    t.match(problem.detail, /cannot reach its database/);
  }
  const status = await fetch(`${base}/api/v2/status`);
  t.equal(status.status, 200, "what needs no database still answers");
  await status.arrayBuffer();
  t.equal(server.child.exitCode, null, "the process is still running");
  t.ok(server.lines.some((l) => new RegExp(`^startline: lost the database at ${escape(url)} `).test(l)), "the operator is told, once");
  t.equal(server.lines.filter((l) => l.includes("lost the database")).length, 1, "once, not once per request");

  await cluster.start();
  const back = await until(`${base}/api/v1/post/kept`, 200, 20_000);
  t.equal(back.status, 200, "answers again once the database is back, without a restart");
  t.equal(((await back.json()) as { title: string }).title, "Kept", "with the data written before the outage");
  const fact = await fetch(`${base}/api/v2/facts`, { method: "POST", headers: { "Content-Type": "text/plain" }, body: "Written after the outage." });
  t.equal(fact.status, 201, "and writes again");
  await fact.arrayBuffer();
  await server.line(/the database at .* is reachable again/);
  t.pass("the operator is told it is back");
});

t.test("two instances publishing one post id at the same moment: one 201, one 409, never two 201", async (t) => {
  const url = await freshDatabase();
  const a = serve(t, { DATABASE_URL: url });
  const b = serve(t, { DATABASE_URL: url });
  const [baseA, baseB] = await Promise.all([a.url(), b.url()]);
  const publish = (base: string, id: string, from: string) =>
    fetch(`${base}/api/v1/post/${id}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: `From ${from}`, body: "Racing." }) });
  const ROUNDS = 30;
  for (let round = 0; round < ROUNDS; round++) {
    const id = `race-${round}`;
    const [ra, rb] = await Promise.all([publish(baseA, id, "A"), publish(baseB, id, "B")]);
    const statuses = [ra.status, rb.status].sort();
    t.strictSame(statuses, [201, 409], `round ${round}: ${ra.status} from A, ${rb.status} from B`);
    const winner = ra.status === 201 ? ((await ra.json()) as { post: unknown }).post : ((await rb.json()) as { post: unknown }).post;
    const loser = ra.status === 201 ? rb : ra;
    t.match(await loser.json(), { type: "/problems/already-exists", status: 409 });
    t.strictSame(await (await fetch(`${baseA}/api/v1/post/${id}`)).json(), winner, "the stored post is the winner's");
  }
  const { posts } = (await (await fetch(`${baseB}/api/v1/posts`)).json()) as { posts: unknown[] };
  t.equal(posts.length, ROUNDS, "each id stored once");
});
