// Clients that keep the server busy in ways that cost little to send, and
// what they cost everybody else: how long a status request waits beside
// them (status-probe.ts times one every 20 ms from a process of its own).
// The bound is 50 ms: no step of any request may hold the event loop longer
// than a few milliseconds, and the engine's turns keep reads fair.
//
//   npm run attack -- status-wait [--only chunks,heads,delays,patches] [--hold-ms 4000] [--probe-ms 20]
//
//   chunks   8 clients each POST /api/echo a chunked body in one-byte chunks
//            (six bytes on the wire for each byte of body), each chunk its own
//            write, as fast as the socket takes them; a client the server
//            cuts (413 at MAX_BODY_BYTES) connects again and goes on.
//   heads    1,000 clients each send a request head a byte a second
//            (slowloris): the server holds 1,000 connections and their
//            headers deadlines.
//   delays   2,000 clients each GET /api/lab/delay/10: 2,000 answers wait on
//            timers at once.
//   patches  4 clients each PATCH one post again and again, in turn with a
//            merge patch of 100,000 characters (accepted, written) and one of
//            about 1 MiB (parsed whole, then refused by the post rules).
//
// Beside large responses that clients read or never read (echo, lists):
// stalled-readers.ts. Exit status 0 when every case keeps the status under
// its bound, 1 otherwise; a loaded machine can fail it: read the figures.

import net from "node:net";
import { once } from "node:events";
import { launch, type Server } from "../launch.js";
import { probeStatus, timedStatus } from "./status-probe.js";
import { option } from "../option.js";

const only = option("--only", "chunks,heads,delays,patches").split(",");
const holdMs = Number(option("--hold-ms", "4000"));
const probeMs = Number(option("--probe-ms", "20"));
const BOUND_MS = 50;
const ADMIN_TOKEN = "status-wait-admin-token-0123456789abcdef";

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : String(n));

/** Something that keeps a server busy until stopped; `stop` resolves once every client is gone. */
interface Load {
  readonly what: string;
  stop(): Promise<void>;
}

/** A socket whose errors (the server cutting it) are expected, and whose close is awaited. */
function connect(port: number): net.Socket {
  const socket = net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  socket.on("error", () => undefined);
  return socket;
}

/** `clients` clients each sending a chunked body in one-byte chunks, one write a chunk, reconnecting when cut. */
function oneByteChunks(port: number, clients: number): Load {
  let stopped = false;
  let chunks = 0;
  const client = async () => {
    while (!stopped) {
      const socket = connect(port);
      socket.resume();
      const closed = once(socket, "close");
      socket.write("POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
      while (!stopped && !socket.destroyed && socket.writable) {
        if (!socket.write("1\r\nx\r\n")) await Promise.race([once(socket, "drain"), closed]);
        chunks++;
        // Let the loop turn now and then, so that this process keeps up with its own sockets.
        if (chunks % 256 === 0) await new Promise((r) => setImmediate(r));
      }
      socket.destroy();
      await closed;
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    what: `chunks: ${clients} clients sending 1-byte chunks to /api/echo`,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
      console.error(`  (${chunks.toLocaleString("en")} chunks written)`);
    },
  };
}

/** `clients` clients each sending a request head at a byte a second. */
async function slowHeads(port: number, clients: number): Promise<Load> {
  const head = Buffer.from("GET /api/v2/status HTTP/1.1\r\nHost: x\r\nUser-Agent: a-client-that-types-slowly\r\n\r\n", "latin1");
  const sockets: net.Socket[] = [];
  for (let i = 0; i < clients; i++) {
    const socket = connect(port);
    sockets.push(socket);
    if (i % 100 === 99) await once(socket, "connect");
  }
  let sent = 0;
  const timer = setInterval(() => {
    for (const socket of sockets) if (!socket.destroyed) socket.write(head.subarray(sent % head.length, (sent % head.length) + 1));
    sent++;
  }, 1000);
  return {
    what: `heads: ${clients} clients sending a request head a byte a second`,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(sockets.map((s) => (s.destroy(), s.closed ? undefined : once(s, "close"))));
    },
  };
}

/** `clients` clients each waiting on GET /api/lab/delay/`seconds`. */
async function delays(port: number, clients: number, seconds: number): Promise<Load> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < clients; i++) {
    const socket = connect(port);
    socket.resume();
    socket.write(`GET /api/lab/delay/${seconds} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    sockets.push(socket);
    if (i % 100 === 99) await once(socket, "connect");
  }
  return {
    what: `delays: ${clients} clients waiting on /api/lab/delay/${seconds}`,
    stop: async () => {
      await Promise.all(sockets.map((s) => (s.destroy(), s.closed ? undefined : once(s, "close"))));
    },
  };
}

/** One request on a connection of its own; resolves with the status code. */
async function exchange(port: number, request: Buffer): Promise<number> {
  const socket = connect(port);
  let answer = "";
  socket.setEncoding("latin1");
  socket.on("data", (d: string) => (answer += d));
  socket.end(request);
  await once(socket, "close");
  return Number(answer.slice(9, 12));
}

function patchRequest(id: string, patch: string): Buffer {
  const body = Buffer.from(patch, "utf8");
  return Buffer.concat([
    Buffer.from(`PATCH /api/v1/post/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/merge-patch+json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, "latin1"),
    body,
  ]);
}

/** `clients` clients each patching one post again and again: a 100,000-character body (accepted), then about 1 MiB (refused). */
async function patches(port: number, clients: number): Promise<Load> {
  const post = JSON.stringify({ title: "patched", body: "b" });
  const created = await exchange(
    port,
    Buffer.from(`POST /api/v1/post/patched HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${post.length}\r\nConnection: close\r\n\r\n${post}`, "latin1"),
  );
  if (created !== 201) throw new Error(`could not publish the post to patch: ${created}`);
  const accepted = patchRequest("patched", JSON.stringify({ body: "p".repeat(100_000) }));
  const refused = patchRequest("patched", JSON.stringify({ body: "q", extra: Array.from({ length: 150_000 }, (_, i) => i % 1000) }));
  if (refused.length > 1024 * 1024) throw new Error("the refused patch must stay within MAX_BODY_BYTES");
  let stopped = false;
  const seen = new Map<number, number>();
  const client = async () => {
    for (let i = 0; !stopped; i++) {
      const status = await exchange(port, i % 2 === 0 ? accepted : refused);
      seen.set(status, (seen.get(status) ?? 0) + 1);
    }
  };
  const running = Array.from({ length: clients }, client);
  return {
    what: `patches: ${clients} clients patching a post with 100,000 characters, then about 1 MiB`,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
      console.error(`  (answers: ${[...seen].map(([status, n]) => `${n}x ${status}`).join(", ")})`);
    },
  };
}

const CASES: ReadonlyArray<readonly [name: string, start: (port: number) => Load | Promise<Load>]> = [
  ["chunks", (port) => oneByteChunks(port, 8)],
  ["heads", (port) => slowHeads(port, 1000)],
  ["delays", (port) => delays(port, 2000, 10)],
  ["patches", (port) => patches(port, 4)],
];

let failed = false;
for (const [name, start] of CASES) {
  if (!only.includes(name)) continue;
  const server: Server = await launch("startline", { DATA_DIR: ":memory:", QUIET: "1", ADMIN_TOKEN }, { stderr: "inherit" });
  try {
    // Warm the server up (JIT, first allocations): the waits are of a server at work.
    for (let i = 0; i < 20; i++) await timedStatus(server.port);
    const load = await start(server.port);
    console.error(`${load.what}: timing the status for ${holdMs} ms`);
    const waits = await probeStatus(server.port, holdMs, probeMs);
    await load.stop();
    const max = waits.at(-1) ?? NaN;
    const ok = max < BOUND_MS;
    failed ||= !ok;
    console.log(load.what);
    console.log(`  status beside them: ${waits.length} requests, median ${fmt(percentile(waits, 50))} ms, p99 ${fmt(percentile(waits, 99))} ms, max ${fmt(max)} ms (bound ${BOUND_MS} ms): ${ok ? "within bounds" : "OUT OF BOUNDS"}`);
  } finally {
    await server.stop();
  }
}
process.exit(failed ? 1 : 0);
