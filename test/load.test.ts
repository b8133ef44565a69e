// `npm run load`: autocannon's command line with any method token accepted,
// and an exit status that says whether anything was measured. Each run is
// short (-a: a fixed number of requests) against a server started here on
// 127.0.0.1, whose own record of every exchange says what really arrived.

import { execFile } from "node:child_process";
import net from "node:net";
import t, { type Test } from "tap";
import type { Exchange } from "../src/http/connection/options.js";
import { ADMIN, docsApp, request } from "./helpers/app.js";
import { listen } from "./helpers/wire.js";
import { ROOT } from "./helpers/root.js";

// Each run waits out at least one of autocannon's one-second samples, and
// each has a server of its own: they run side by side rather than in turn,
// three at a time, as the subtests of one test (below, at the end). Set on
// tap's root instead, that would reach the files that run after this one in
// a process it shares with them (test/batch.mjs), so the file would need a
// process of its own, and the CPU to start and warm one up.
const runs: [name: string, check: (t: Test) => Promise<void>][] = [];
const check = (name: string, fn: (t: Test) => Promise<void>) => void runs.push([name, fn]);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` from the repository root, with none of the caller's settings that autocannon or the methods module read. */
function run(command: string, args: readonly string[]): Promise<Run> {
  const { PORT: _port, AUTOCANNON_EXTRA_METHODS: _methods, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}
const load = (args: readonly string[]) => run(process.execPath, ["bench/load.cjs", ...args]);

/** The app on a free port, with every exchange recorded. */
async function server(t: Test) {
  const { app } = await docsApp();
  const seen: Exchange[] = [];
  const s = await listen(app, { onExchange: (e) => seen.push(e) });
  t.teardown(() => s.close());
  return { app, seen, base: `http://127.0.0.1:${s.port}` };
}

const counts = (seen: readonly Exchange[]) => {
  const out: Record<string, number> = {};
  for (const e of seen) out[`${e.method} ${e.status}`] = (out[`${e.method} ${e.status}`] ?? 0) + 1;
  return out;
};

check("npm run load -- -m UPDATE with the admin token: every request arrives as UPDATE and succeeds", async (t) => {
  const { app, seen, base } = await server(t);
  const r = await run("npm", [
    "run", "--silent", "load", "--",
    "-m", "UPDATE",
    "-H", `Authorization: Bearer ${ADMIN}`,
    "-H", "Content-Type: application/merge-patch+json",
    "-b", '{"title":"x"}',
    "-a", "40", "-c", "2", "-j",
    `${base}/api/v1/artigo/1`,
  ]);
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr.slice(-500)})`);
  const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  t.equal(result["2xx"], 40, "autocannon counted 40 successes");
  t.same(counts(seen), { "UPDATE 200": 40 }, "the server saw exactly those: UPDATE, answered 200");
  const article = await request(app, "GET", "/api/v1/artigo/1");
  t.equal(JSON.parse(article.body).title, "x", "the patch was applied");
});

check("any token: a lower-case custom method reaches the echo as sent", async (t) => {
  const { seen, base } = await server(t);
  const r = await load(["-m", "purge", "-a", "10", "-c", "1", "-j", `${base}/api/echo/cache/1`]);
  t.equal(r.code, 0, r.stderr.slice(-500));
  t.same(counts(seen), { "purge 200": 10 });
});

check("-I with [<id>] in the URL: every POST publishes a post of its own", async (t) => {
  const { app, seen, base } = await server(t);
  const r = await load(["-m", "POST", "-I", "-H", "Content-Type: application/json", "-b", '{"title": "T", "body": "B"}', "-a", "10", "-c", "2", "-j", `${base}/api/v1/post/[<id>]`]);
  t.equal(r.code, 0, r.stderr.slice(-500));
  t.same(counts(seen), { "POST 201": 10 }, "201 each time, never 409");
  const posts = JSON.parse((await request(app, "GET", "/api/v1/posts")).body).posts;
  t.equal(new Set(posts.map((p: { id: string }) => p.id)).size, 10, "ten distinct ids");
});

check("exit 1 when every response is a refusal, and says why", async (t) => {
  const { seen, base } = await server(t);
  const r = await load(["-m", "UPDATE", "-H", "Content-Type: application/json", "-b", '{"title":"x"}', "-a", "5", "-c", "1", "-j", `${base}/api/v1/artigo/1`]);
  t.equal(r.code, 1);
  t.match(r.stderr, /every response was an error status \(5 × 401\)/);
  t.same(counts(seen), { "UPDATE 401": 5 }, "the requests were sent, and refused for want of a token");
});

check("exit 1 when no request gets a response", async (t) => {
  // A listener that hangs up on every connection: nothing ever answers, and no port is left to chance.
  const rude = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => rude.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => rude.close(() => resolve())));
  const port = (rude.address() as net.AddressInfo).port;
  const r = await load(["-m", "UPDATE", "-a", "3", "-c", "1", "-j", `http://127.0.0.1:${port}/`]);
  t.equal(r.code, 1);
  t.match(r.stderr, /no request got a response/);
});

check("exit 1 when every request times out, saying after how long and how to wait longer, not asking whether a server listens", async (t) => {
  // A listener that takes every connection and never answers: each request waits out autocannon's -t.
  const held: net.Socket[] = [];
  const silent = net.createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    for (const socket of held) socket.destroy();
    silent.close(() => resolve());
  }));
  const port = (silent.address() as net.AddressInfo).port;
  const r = await load(["-t", "1", "-a", "2", "-c", "1", "-j", `http://127.0.0.1:${port}/api/v1/posts`]);
  t.equal(r.code, 1);
  t.match(r.stderr, /every request \(2\) timed out: none was answered within 1 s/);
  t.match(r.stderr, /give it longer with -t/);
  t.notMatch(r.stderr, /is a server listening/);
  t.ok(held.length > 0, "the connections were made: something listened");
});

check("exit 2, before sending anything, for a method that is not a token or a command line without a URL", async (t) => {
  const { seen, base } = await server(t);
  const bad = await load(["-m", "NOT A TOKEN", "-a", "1", "-c", "1", `${base}/api/echo`]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /not a valid HTTP method token/);
  t.equal(seen.length, 0);
  const none = await load(["-m", "UPDATE"]);
  t.equal(none.code, 2, "autocannon printed its help; without a URL that is a usage error");
  t.match(none.stderr, /Usage: autocannon/);
  t.equal((await load(["--version"])).code, 0, "asking for the version is not an error");
});

t.test("npm run load, its runs side by side", async (all) => {
  all.jobs = 3;
  for (const [name, fn] of runs) all.test(name, fn);
});
