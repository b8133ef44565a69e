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
//
// Each check has posts of its own (their ids begin with its name), so that
// two checks may share servers: on SQLite, the connection's check runs on
// one of the instances' pair, a server start less.

import http from "node:http";
import type { Test } from "tap";
import { startServer, type ServerProcess } from "./process.js";

const ADMIN_TOKEN = "kept-admin-token-0000001";

type Read = { readonly path: string; readonly accept: string };

/** The reads that keep bytes: a post (the check's first, `${name}-1`), a page that holds it (`page`) and a whole list, in JSON and YAML. */
const readsOf = (name: string, page: string): readonly Read[] => [
  { path: `/api/v1/post/${name}-1`, accept: "application/json" },
  { path: page, accept: "application/json" },
  { path: "/api/v1/posts", accept: "application/json" },
  { path: page, accept: "application/yaml" },
  { path: "/api/v1/posts", accept: "application/yaml" },
];

interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly link: string | undefined;
  readonly body: string;
}

/** One request over `agent` (a kept-alive connection), or on a connection of its own (agent false). */
function send(base: string, method: string, path: string, headers: Record<string, string>, agent: http.Agent | false, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(path, base), { method, headers: { ...headers, ...(agent === false ? { Connection: "close" } : {}) }, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, etag: response.headers.etag, link: response.headers.link as string | undefined, body: Buffer.concat(chunks).toString() }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** `count` servers on the database `env` names, started one after the other (the first makes it), stopped when `t` ends; their base URLs. */
export async function instances(t: Test, env: Record<string, string>, count: number): Promise<string[]> {
  const bases: string[] = [];
  for (let i = 0; i < count; i++) bases.push((await start(t, env)).base);
  return bases;
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
async function readAll(reads: readonly Read[], base: string, agent: http.Agent | false): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const read of reads) {
    await send(base, "GET", read.path, { Accept: read.accept }, agent);
    answers.push(await send(base, "GET", read.path, { Accept: read.accept }, agent));
  }
  return answers;
}

/**
 * After a write through `writer`, every read through `reader` shows it, and
 * no ETag from before gets a 304. `before` are the reader's answers from
 * before the write; `title` is what the write put in the first read's post.
 */
async function checkFresh(t: Test, label: string, reads: readonly Read[], base: string, agent: http.Agent | false, before: readonly Answer[], title: string): Promise<void> {
  const after = await readAll(reads, base, agent);
  reads.forEach((read, i) => {
    const name = `${label}: ${read.accept.slice(12)} ${read.path}`;
    t.equal(after[i]!.status, 200, name);
    t.ok(after[i]!.body.includes(title), `${name}: the write shows`);
    t.not(after[i]!.etag, before[i]!.etag, `${name}: a new ETag`);
  });
  for (const [i, read] of reads.entries()) {
    const revalidated = await send(base, "GET", read.path, { Accept: read.accept, "If-None-Match": before[i]!.etag! }, agent);
    t.equal(revalidated.status, 200, `${label}: ${read.accept.slice(12)} ${read.path}: the old ETag gets the new bytes, not a 304`);
  }
}

/**
 * Publishes posts `${name}-1` to `${name}-3`; resolves with the check's reads. Their page is the first,
 * of two posts, on a database of the check's own; where another check's posts come first, the page that
 * the first page of those (as many as they are) links to next, which begins with `${name}-1`.
 */
async function seedPosts(base: string, name: string): Promise<readonly Read[]> {
  const { posts } = JSON.parse((await send(base, "GET", "/api/v1/posts", { Accept: "application/json" }, false)).body) as { posts: unknown[] };
  for (const id of [`${name}-1`, `${name}-2`, `${name}-3`]) {
    const r = await publish(base, id, `first title of ${id}`);
    if (r.status !== 201) throw new Error(`publishing ${id}: ${r.status} ${r.body}`);
  }
  if (posts.length === 0) return readsOf(name, "/api/v1/posts?limit=2");
  const { link } = await send(base, "GET", `/api/v1/posts?limit=${posts.length}`, { Accept: "application/json" }, false);
  const next = /^<([^>]+)>; rel="next"$/.exec(link ?? "")?.[1];
  if (next === undefined) throw new Error(`the first ${posts.length} posts link to no next page: Link ${link}`);
  return readsOf(name, next);
}

/**
 * Another connection to the same server: a kept-alive reader, a writer on connections of its own. On a
 * server of its own (the settings `env`), or on `base`, one that runs already.
 */
export async function anotherConnection(t: Test, server: Record<string, string> | string): Promise<void> {
  const base = typeof server === "string" ? server : (await start(t, server)).base;
  const reads = await seedPosts(base, "connection");
  const reader = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => reader.destroy());
  for (let round = 0; round < 3; round++) {
    const before = await readAll(reads, base, reader);
    const title = `round ${round} on another connection`;
    t.equal((await retitle(base, "connection-1", title)).status, 200);
    await checkFresh(t, `round ${round}`, reads, base, reader, before, title);
  }
}

/** Another instance on the same database: reads on one, writes on the other. Two of its own (the settings `env`), or `[a, b]`, two that run already. */
export async function anotherInstance(t: Test, servers: Record<string, string> | readonly [string, string]): Promise<void> {
  const [a, b] = Array.isArray(servers) ? servers : await instances(t, servers as Record<string, string>, 2);
  const reads = await seedPosts(a, "instance");
  for (let round = 0; round < 3; round++) {
    const before = await readAll(reads, a, false);
    const title = `round ${round} from the other instance`;
    t.equal((await retitle(b, "instance-1", title)).status, 200);
    await checkFresh(t, `round ${round}`, reads, a, false, before, title);
    // And a new post, published on the other instance, is in every list at once.
    t.equal((await publish(b, `instance-new-${round}`, `new in round ${round}`)).status, 201);
    const list = await send(a, "GET", "/api/v1/posts", { Accept: "application/yaml" }, false);
    t.ok(list.body.includes(`instance-new-${round}`), `round ${round}: the new post is listed on the first instance`);
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
  const reads = await seedPosts(base, "worker");
  const workersSince = (from: number): Set<number> =>
    new Set(server.lines.slice(from).flatMap((line) => (line.startsWith("{") && line.includes('"GET"') ? [(JSON.parse(line) as { worker: number }).worker] : [])));
  for (let round = 0; round < 2; round++) {
    const mark = server.lines.length;
    // Four rounds of reads on fresh connections: each worker answers every read at least twice (the connections alternate).
    let before: Answer[] = [];
    for (let i = 0; i < 4; i++) before = await readAll(reads, base, false);
    t.equal(workersSince(mark).size, 2, `round ${round}: both workers answered (and kept) the reads before the write`);
    const title = `round ${round} through one worker`;
    t.equal((await retitle(base, "worker-1", title)).status, 200);
    const after = server.lines.length;
    for (let i = 0; i < 4; i++) await checkFresh(t, `round ${round}, pass ${i}`, reads, base, false, before, title);
    t.equal(workersSince(after).size, 2, `round ${round}: both workers answered after the write`);
  }
}
