// The three ways a kept read (src/api/kept-reads.ts) could be stale, each
// across processes and over real sockets: after a write is acknowledged, a
// read must answer with the new bytes, and an old ETag must not get a 304,
//   - on another connection to the same server,
//   - on another worker of the same server (WORKERS=2),
//   - on another instance on the same database.
// Before each write every read is made twice, so that what it answers is
// kept where it will be read again. Run on SQLite (test/api/kept-processes.test.ts)
// and on PostgreSQL (test/scaling/kept-postgres.test.ts). With the revision
// check taken out of kept-reads.ts (a kept read served whatever the
// revision), every one of these fails.

import http from "node:http";
import type { Test } from "tap";
import { startServer, type ServerProcess } from "./process.js";

const ADMIN_TOKEN = "kept-admin-token-0000001";

/** The reads that keep bytes: a post, a page and a whole list, in JSON and YAML. */
const READS: readonly { readonly path: string; readonly accept: string }[] = [
  { path: "/api/v1/post/kept-1", accept: "application/json" },
  { path: "/api/v1/posts?limit=2", accept: "application/json" },
  { path: "/api/v1/posts", accept: "application/json" },
  { path: "/api/v1/posts?limit=2", accept: "application/yaml" },
  { path: "/api/v1/posts", accept: "application/yaml" },
];

interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly body: string;
}

/** One request over `agent` (a kept-alive connection), or on a connection of its own (agent false). */
function send(base: string, method: string, path: string, headers: Record<string, string>, agent: http.Agent | false, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, base), { method, headers: { ...headers, ...(agent === false ? { Connection: "close" } : {}) }, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, etag: response.headers.etag, body: Buffer.concat(chunks).toString() }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

async function start(t: Test, env: Record<string, string>): Promise<{ server: ServerProcess; base: string }> {
  const server = startServer({ QUIET: "1", ADMIN_TOKEN, ...env });
  t.teardown(async () => {
    server.child.kill("SIGTERM");
    await server.exited();
  });
  return { server, base: await server.url() };
}

const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const publish = (base: string, id: string, title: string) =>
  send(base, "POST", `/api/v1/post/${id}`, { ...auth, "Content-Type": "application/json" }, false, JSON.stringify({ title, body: `the body of ${id}` }));
const retitle = (base: string, id: string, title: string) =>
  send(base, "PATCH", `/api/v1/post/${id}`, { ...auth, "Content-Type": "application/merge-patch+json" }, false, JSON.stringify({ title }));

/** Every read, twice (the second is answered from what the first kept), on `agent`; the second answers. */
async function readAll(base: string, agent: http.Agent | false): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const read of READS) {
    await send(base, "GET", read.path, { Accept: read.accept }, agent);
    answers.push(await send(base, "GET", read.path, { Accept: read.accept }, agent));
  }
  return answers;
}

/**
 * After a write through `writer`, every read through `reader` shows it, and
 * no ETag from before gets a 304. `before` are the reader's answers from
 * before the write; `title` is what the write put in post kept-1.
 */
async function checkFresh(t: Test, label: string, base: string, agent: http.Agent | false, before: readonly Answer[], title: string): Promise<void> {
  const after = await readAll(base, agent);
  READS.forEach((read, i) => {
    const name = `${label}: ${read.accept.slice(12)} ${read.path}`;
    t.equal(after[i]!.status, 200, name);
    t.ok(after[i]!.body.includes(title), `${name}: the write shows`);
    t.not(after[i]!.etag, before[i]!.etag, `${name}: a new ETag`);
  });
  for (const [i, read] of READS.entries()) {
    const revalidated = await send(base, "GET", read.path, { Accept: read.accept, "If-None-Match": before[i]!.etag! }, agent);
    t.equal(revalidated.status, 200, `${label}: ${read.accept.slice(12)} ${read.path}: the old ETag gets the new bytes, not a 304`);
  }
}

async function seedPosts(base: string): Promise<void> {
  for (const id of ["kept-1", "kept-2", "kept-3"]) {
    const r = await publish(base, id, `first title of ${id}`);
    if (r.status !== 201) throw new Error(`publishing ${id}: ${r.status} ${r.body}`);
  }
}

/** Another connection to the same server: a kept-alive reader, a writer on connections of its own. */
export async function anotherConnection(t: Test, env: Record<string, string>): Promise<void> {
  const { base } = await start(t, env);
  await seedPosts(base);
  const reader = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => reader.destroy());
  for (let round = 0; round < 3; round++) {
    const before = await readAll(base, reader);
    const title = `round ${round} on another connection`;
    t.equal((await retitle(base, "kept-1", title)).status, 200);
    await checkFresh(t, `round ${round}`, base, reader, before, title);
  }
}

/** Another instance on the same database: reads on one, writes on the other. */
export async function anotherInstance(t: Test, env: Record<string, string>): Promise<void> {
  const a = await start(t, env);
  const b = await start(t, env);
  await seedPosts(a.base);
  for (let round = 0; round < 3; round++) {
    const before = await readAll(a.base, false);
    const title = `round ${round} from the other instance`;
    t.equal((await retitle(b.base, "kept-1", title)).status, 200);
    await checkFresh(t, `round ${round}`, a.base, false, before, title);
    // And a new post, published on the other instance, is in every list at once.
    t.equal((await publish(b.base, `kept-new-${round}`, `new in round ${round}`)).status, 201);
    const list = await send(a.base, "GET", "/api/v1/posts", { Accept: "application/yaml" }, false);
    t.ok(list.body.includes(`kept-new-${round}`), `round ${round}: the new post is listed on the first instance`);
  }
}

/**
 * Another worker of the same server (WORKERS=2, which hands connections to
 * its workers in turn): every read is made on connections of its own until
 * both workers have answered it twice, before the write and after it; the
 * access log's `worker` field says who answered.
 */
export async function anotherWorker(t: Test, env: Record<string, string>): Promise<void> {
  const { server, base } = await start(t, { ...env, WORKERS: "2", QUIET: "", LOG_FORMAT: "json" });
  await seedPosts(base);
  const workersSince = (from: number): Set<number> =>
    new Set(server.lines.slice(from).flatMap((line) => (line.startsWith("{") && line.includes('"GET"') ? [(JSON.parse(line) as { worker: number }).worker] : [])));
  for (let round = 0; round < 2; round++) {
    const mark = server.lines.length;
    // Four rounds of reads on fresh connections: each worker answers every read at least twice (the connections alternate).
    let before: Answer[] = [];
    for (let i = 0; i < 4; i++) before = await readAll(base, false);
    t.equal(workersSince(mark).size, 2, `round ${round}: both workers answered (and kept) the reads before the write`);
    const title = `round ${round} through one worker`;
    t.equal((await retitle(base, "kept-1", title)).status, 200);
    const after = server.lines.length;
    for (let i = 0; i < 4; i++) await checkFresh(t, `round ${round}, pass ${i}`, base, false, before, title);
    t.equal(workersSince(after).size, 2, `round ${round}: both workers answered after the write`);
  }
}
