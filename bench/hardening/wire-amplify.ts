// The wire view (POST /api/wire) as an amplifier and as a cross-site target,
// measured against the real server process on 127.0.0.1.
//
//   npm run --silent build && node dist/bench/hardening/wire-amplify.js [--posts 20] [--chars 100000] [--fill x] [--rounds 3]
//
// Setup: --posts posts whose bodies are --chars characters of --fill ("x";
// "quote" for '"', which JSON escapes once in the list and again in the wire
// view's answer; "ctl" for U+0001, escaped as six characters, then seven).
//
// Measured, --rounds times each (the largest figures are reported):
//   list10   a 390-byte body of 10 pipelined `GET /api/v1/posts`: the wire
//            view's answer (status, bytes), and meanwhile, on a second
//            connection, GET /api/v2/status one after another: how many were
//            answered before the wire answer's last byte, and the worst wait;
//   chunks   one POST whose chunked body is ~1 MiB of 1-byte chunks (three
//            parts of the account per 6 input bytes): the same figures;
//   direct   for comparison, one plain GET /api/v1/posts (no wire view) and
//            the same status requests beside it;
//   many     a 1 MiB body of 26,000 tiny requests (refused: at most 10): the same figures;
//   idle     the worst wait of the same status requests with no wire request;
// and the server's peak RSS (VmHWM) after all of it.
// Then the cross-site attempts: a text/plain POST (what a form or a no-cors
// fetch can send without a preflight) carrying `DELETE /api/v1/post/p-0`,
// with `Origin: https://evil.example`, and message/http with
// `Sec-Fetch-Site: cross-site`: the status each gets, and whether the post is
// still there afterwards.

import http from "node:http";
import { parseArgs } from "node:util";
import { fmt, memory, startServer, type ServerProcess } from "./lib.js";

const { values: opts } = parseArgs({
  options: {
    posts: { type: "string", default: "20" },
    chars: { type: "string", default: "100000" },
    fill: { type: "string", default: "x" },
    rounds: { type: "string", default: "3" },
  },
});
const FILLS: Record<string, string> = { x: "x", quote: '"', ctl: "\u0001" };
const fill = FILLS[opts.fill] ?? opts.fill;

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly bytes: number;
  readonly body: Buffer;
  readonly ms: number;
}

/** One request on `agent`; the body is kept only up to `keep` bytes (the wire answers can be huge). */
function send(port: number, agent: http.Agent, method: string, path: string, headers: Record<string, string>, body?: Buffer, keep = 1 << 20): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, agent, headers: body === undefined ? headers : { ...headers, "Content-Length": String(body.length) } }, (res) => {
      const kept: Buffer[] = [];
      let bytes = 0;
      res.on("data", (d: Buffer) => {
        if (bytes < keep) kept.push(d);
        bytes += d.length;
      });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, bytes, body: Buffer.concat(kept), ms: performance.now() - t0 }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface Contention {
  readonly wire: Answer;
  /** Status requests answered while the wire request was in flight, and the worst wait among them (ms). */
  readonly statusAnswered: number;
  readonly answeredBeforeWire: number;
  readonly worstWaitMs: number;
  /** Status requests whose connection was closed under them (counted in the worst wait until the failure). */
  readonly statusLost: number;
}

/** A wire request (or, with no body, a direct GET /api/v1/posts), and status requests one after another on another connection until it is answered. */
async function contend(port: number, wireBody: Buffer | null, contentType: string): Promise<Contention> {
  const wireAgent = new http.Agent({ keepAlive: false });
  const statusAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await send(port, statusAgent, "GET", "/api/v2/status", {}); // the connection is open before the race starts
  let done = false;
  let wire: Answer | undefined;
  const request =
    wireBody === null
      ? send(port, wireAgent, "GET", "/api/v1/posts", { Accept: "application/json" }, undefined, 4096)
      : send(port, wireAgent, "POST", "/api/wire", { "Content-Type": contentType, Accept: "application/json" }, wireBody, 4096);
  let failure: unknown;
  const wireDone = request.then(
    (a) => {
      done = true;
      wire = a;
    },
    (error: unknown) => {
      done = true;
      failure = error;
    },
  );
  let answered = 0;
  let before = 0;
  let worst = 0;
  let lost = 0;
  while (!done) {
    const t0 = performance.now();
    try {
      const a = await send(port, statusAgent, "GET", "/api/v2/status", {});
      answered++;
      if (!done) before++;
      worst = Math.max(worst, a.ms);
    } catch {
      // A stall longer than the keep-alive timeout: the server's sweep closed the connection with the request unread.
      lost++;
      worst = Math.max(worst, performance.now() - t0);
    }
  }
  await wireDone;
  statusAgent.destroy();
  wireAgent.destroy();
  if (failure !== undefined) throw failure;
  return { wire: wire!, statusAnswered: answered, answeredBeforeWire: before, worstWaitMs: worst, statusLost: lost };
}

async function idleWorst(port: number, n: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let worst = 0;
  for (let i = 0; i < n; i++) worst = Math.max(worst, (await send(port, agent, "GET", "/api/v2/status", {})).ms);
  agent.destroy();
  return worst;
}

function describe(label: string, runs: readonly Contention[]): void {
  const biggest = runs.reduce((a, b) => (b.wire.bytes > a.wire.bytes ? b : a));
  const worst = Math.max(...runs.map((r) => r.worstWaitMs));
  const wireMs = Math.max(...runs.map((r) => r.wire.ms));
  console.log(
    `${label.padEnd(8)} answer: ${biggest.wire.status}, largest answer ${biggest.wire.bytes} bytes (${fmt(biggest.wire.bytes / 2 ** 20)} MiB), slowest ${fmt(wireMs, 0)} ms; ` +
      `status on another connection: worst wait ${fmt(worst, 1)} ms, answered before the wire answer ended: ${runs.map((r) => `${r.answeredBeforeWire}/${r.statusAnswered}`).join(", ")}` +
      (runs.some((r) => r.statusLost > 0) ? `; LOST (connection closed under them): ${runs.map((r) => r.statusLost).join(", ")}` : ""),
  );
  if (biggest.wire.status !== 200) console.log(`         ${biggest.wire.body.toString("utf8").slice(0, 300)}`);
}

async function main(): Promise<void> {
  const rounds = Number(opts.rounds);
  const posts = Number(opts.posts);
  const chars = Number(opts.chars);
  const server: ServerProcess = await startServer();
  // However this process ends (an error, a closed stdout pipe), the server must not outlive it.
  process.once("exit", () => server.child.kill("SIGKILL"));
  const port = server.port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const text = fill.repeat(Math.ceil(chars / fill.length)).slice(0, chars);
    for (let i = 0; i < posts; i++) {
      const r = await send(port, agent, "POST", `/api/v1/post/p-${i}`, { "Content-Type": "application/json" }, Buffer.from(JSON.stringify({ title: `Post ${i}`, body: text })));
      if (r.status !== 201) throw new Error(`publishing p-${i}: ${r.status} ${r.body.toString()}`);
    }
    const list = await send(port, agent, "GET", "/api/v1/posts", { Accept: "application/json" });
    console.log(`setup: ${posts} posts of ${chars} characters of ${JSON.stringify(fill)}; GET /api/v1/posts answers ${list.bytes} bytes`);

    const list10 = Buffer.from("GET /api/v1/posts HTTP/1.1\r\nHost: x\r\n\r\n".repeat(10), "latin1");
    const chunkCount = Math.floor((1024 * 1024 - 200) / 6);
    // To a route that takes a megabyte: the facts route takes 4 KiB, and the wire view refuses past that as a socket does.
    const chunks = Buffer.from(
      `POST /api/v1/post/chunks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${"1\r\na\r\n".repeat(chunkCount)}0\r\n\r\n`,
      "latin1",
    );
    const wireType = "message/http";
    console.log(`idle     status worst wait over 200 requests: ${fmt(await idleWorst(port, 200), 1)} ms`);
    const direct: Contention[] = [];
    for (let i = 0; i < rounds; i++) direct.push(await contend(port, null, wireType));
    describe("direct", direct);
    const runs: Contention[] = [];
    for (let i = 0; i < rounds; i++) runs.push(await contend(port, list10, wireType));
    describe("list10", runs);
    const chunkRuns: Contention[] = [];
    for (let i = 0; i < rounds; i++) chunkRuns.push(await contend(port, chunks, wireType));
    console.log(`chunks: a ${chunks.length}-byte body of ${chunkCount} 1-byte chunks`);
    describe("chunks", chunkRuns);
    const tiny = Buffer.from("GET /api/v2/status HTTP/1.1\r\nHost: x\r\n\r\n".repeat(Math.floor((1024 * 1024 - 100) / 40)), "latin1");
    const tinyRuns: Contention[] = [];
    for (let i = 0; i < rounds; i++) tinyRuns.push(await contend(port, tiny, wireType));
    console.log(`many: a ${tiny.length}-byte body of ${tiny.length / 40} requests (the limit is 10)`);
    describe("many", tinyRuns);
    const mem = memory(server.pid);
    console.log(`server RSS now ${fmt(mem.rssMiB, 0)} MiB, peak ${fmt(mem.peakMiB, 0)} MiB`);

    // ---- Cross-site use ----
    const del = (id: string) => Buffer.from(`DELETE /api/v1/post/${id} HTTP/1.1\r\nHost: x\r\n\r\n`, "latin1");
    const exists = async (id: string) => (await send(port, agent, "GET", `/api/v1/post/${id}`, {})).status === 200;
    const attempts: [string, Record<string, string>, string][] = [
      ["text/plain, Origin: https://evil.example", { "Content-Type": "text/plain", Origin: "https://evil.example" }, "p-0"],
      ["message/http, Sec-Fetch-Site: cross-site", { "Content-Type": "message/http", "Sec-Fetch-Site": "cross-site" }, "p-1"],
      ["message/http, Origin: https://evil.example", { "Content-Type": "message/http", Origin: "https://evil.example" }, "p-2"],
      [`message/http, Origin: http://127.0.0.1:${port} (same origin)`, { "Content-Type": "message/http", Origin: `http://127.0.0.1:${port}`, "Sec-Fetch-Site": "same-origin" }, "p-3"],
    ];
    for (const [what, headers, id] of attempts) {
      const r = await send(port, agent, "POST", "/api/wire", headers, del(id));
      const detail = r.status === 200 ? "" : ` "${(JSON.parse(r.body.toString()) as { detail?: string }).detail ?? ""}"`;
      console.log(`cross-site? ${what}: ${r.status}${detail}; ${id} ${(await exists(id)) ? "still there" : "DELETED"}`);
    }
  } finally {
    agent.destroy();
    await server.stop();
  }
}

await main();
