// Clients that ask for a large response and never read it, against the real
// server process on 127.0.0.1: what they cost the server (RSS, from
// /proc/<pid>/status) and what they cost everybody else (how long a status
// request waits beside them).
//
//   npm run attack -- stalled-readers [--only echo,list,list-yaml,lists] [--hold-ms 4000] [--probe-ms 20]
//   (that is: npm run --silent build && node dist/bench/hardening/stalled-readers.js ...)
//
//   echo       40 clients each POST /api/echo a 1 MiB body of control bytes
//              (each one is six bytes of JSON, so the answer is about 6 MB)
//              and never read a byte of it.
//   list       50 clients each GET /api/v1/posts (600 posts of 30 KB: about
//              18 MB, streamed) and stop reading.
//   list-yaml  the same 50 clients, asking for the list in YAML.
//   lists      (not stalled) six clients read full lists of 3,000 posts of
//              30 KB (about 90 MB each; three JSON, three YAML) again and
//              again while the status is timed: no bound on RSS, the status
//              bound only (what a list holds the event loop for).
//   drip       (npm run bench:drip; not in the default) 200 clients each ask
//              /api/lab/drip for 1 MiB at once and read nothing: the server
//              stops at each connection's output budget (docs/lab.md).
//
// While they hold on, GET /api/v2/status is timed every 20 ms (--probe-ms) on
// a fresh connection by a process of its own (the clients' own work would
// count as the server's delay). Per case: RSS before (list, list-yaml: after
// one whole read of the list, so what the server keeps for every reader is
// in it), at its highest while they held
// on (sampled every 50 ms) and after; the status waits (median, max); and,
// once the server cuts them (--send-timeout-ms, its SEND_TIMEOUT_MS, default
// 3000), how: reset (the kernel drops what was queued) or closed gracefully
// (the kernel keeps sending, in FIN-WAIT-1), with what stays queued.
//
// Exit status 0 when every case stays inside its bound (echo: RSS +96 MiB
// and status under 50 ms; list and list-yaml: RSS +32 MiB; lists: status
// under 50 ms; drip: RSS within the 200 output budgets, status under 50 ms),
// 1 otherwise. A loaded machine can fail the
// status bound: read the figures, not only the verdict.

import { execFileSync } from "node:child_process";
import net from "node:net";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { OUTPUT_BUDGET } from "../../src/http/connection/send-body.js";
import { fillPosts } from "../fill.js";
import { launch, type Server } from "../launch.js";
import { procStatus } from "../proc.js";
import { probeStatus as probeEvery, timedStatus } from "./status-probe.js";
import { option } from "../option.js";

const MiB = 1024 * 1024;
const memory = (pid: number) => ({ rssMiB: procStatus(pid).rssKiB / 1024 });
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

/** The built server on 127.0.0.1 (bench/launch.ts), in-memory data unless `env` says otherwise, no access log. */
const startServer = (env: Record<string, string>) => launch("startline", { DATA_DIR: ":memory:", QUIET: "1", ...env }, { stderr: "inherit" });
type ServerProcess = Server;

/** Open sockets of a process: entries of /proc/<pid>/fd that are sockets. */
function socketCount(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) n++;
    } catch {
      // closed while we looked
    }
  }
  return n;
}

const only = option("--only", "echo,list,list-yaml,lists").split(",");
const holdMs = Number(option("--hold-ms", "4000"));
const probeMs = Number(option("--probe-ms", "20"));
const listClients = Number(option("--list-clients", "50"));
const sendTimeoutMs = Number(option("--send-timeout-ms", "3000"));

interface Stalled {
  readonly socket: net.Socket;
  /** Bytes of response received before the client stopped reading. */
  received: number;
  ended: "reset" | "closed" | null;
  /** Set once the measurement is over: the client reads what reached it. */
  reading: boolean;
}

/** Connect, send `request` (head and body), read `readFirst` bytes at most, then stop reading for good. */
async function stalledClient(port: number, request: Buffer, readFirst: number): Promise<Stalled> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const client: Stalled = { socket, received: 0, ended: null, reading: false };
  socket.on("data", (d: Buffer) => {
    client.received += d.length;
    if (client.received >= readFirst && !client.reading) socket.pause();
  });
  socket.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "ECONNRESET") client.ended = "reset";
  });
  socket.on("close", () => (client.ended ??= "closed"));
  if (readFirst === 0) socket.pause();
  socket.write(request);
  return client;
}

/** The server's sockets that are closed but still sending (FIN-WAIT-1), and the bytes queued in them: `ss`, Linux. */
function kernelQueue(port: number): { finWait: number; queuedMiB: number } {
  const out = execFileSync("ss", ["-tnH", "state", "fin-wait-1", `( sport = :${port} )`], { encoding: "utf8" });
  let finWait = 0;
  let queued = 0;
  for (const line of out.split("\n")) {
    // Recv-Q, then Send-Q: the first two numeric columns (the state column is left out or not, by version).
    const numbers = line.trim().split(/\s+/).filter((f) => /^\d+$/.test(f));
    if (numbers.length < 2) continue;
    finWait++;
    queued += Number(numbers[1]);
  }
  return { finWait, queuedMiB: queued / MiB };
}

interface Outcome {
  readonly name: string;
  readonly before: number;
  readonly peak: number;
  readonly after: number;
  readonly status: number[];
  readonly cut: { reset: number; closed: number; serverSockets: number; cutAfterMs: number; finWait: number; queuedMiB: number };
  readonly rssBound: number;
  readonly statusBound: number;
}

/** Sends `request` once on a connection of its own and reads the whole answer. */
async function readOnce(port: number, request: Buffer): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  socket.end(request);
  socket.resume();
  await once(socket, "close");
}

async function measure(name: string, server: ServerProcess, clients: number, request: Buffer, rssBound: number, statusBound: number, warmWith?: Buffer): Promise<Outcome> {
  // Warm the server up (JIT, first allocations) so that "before" is a server at work, not a fresh one.
  for (let i = 0; i < 20; i++) await timedStatus(server.port);
  // A list is read once first: what the server keeps of it for every reader (its response, within KEPT_BYTES;
  // docs/settings.md) is then in "before", and the bound is on what the stalled clients add to it.
  if (warmWith !== undefined) await readOnce(server.port, warmWith);
  const before = memory(server.pid).rssMiB;
  const baseSockets = socketCount(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, memory(server.pid).rssMiB)), 50);
  const stalled = await Promise.all(Array.from({ length: clients }, () => stalledClient(server.port, request, 0)));
  console.error(`${name}: ${clients} clients sent their requests and stopped reading`);
  const t0 = performance.now();
  const status = await probeEvery(server.port, holdMs, probeMs);
  // Then the server's send timeout cuts them: a paused client sees a reset at once, a graceful close only once it reads.
  // On a loaded machine the server may still be rendering when the hold ends: wait up to 30 s more.
  const cutBy = performance.now() + sendTimeoutMs + 30_000;
  while (performance.now() < cutBy && socketCount(server.pid) > baseSockets) await new Promise((r) => setTimeout(r, 100));
  const cutAfterMs = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, memory(server.pid).rssMiB);
  const serverSockets = socketCount(server.pid);
  console.error(`${name}: the server holds ${serverSockets} sockets; reading what reached the clients`);
  const finWait = kernelQueue(server.port);
  // Now read: what was closed gracefully delivers its queued bytes and ends; what was reset is gone.
  for (const c of stalled) {
    c.reading = true;
    c.socket.resume();
  }
  await Promise.all(stalled.map((c) => (c.socket.closed ? undefined : once(c.socket, "close"))));
  const cut = {
    reset: stalled.filter((c) => c.ended === "reset").length,
    closed: stalled.filter((c) => c.ended === "closed").length,
    serverSockets,
    cutAfterMs,
    ...finWait,
  };
  return { name, before, peak, after: memory(server.pid).rssMiB, status: status.sort((a, b) => a - b), cut, rssBound, statusBound };
}

const outcomes: Outcome[] = [];
const env = { SEND_TIMEOUT_MS: String(sendTimeoutMs) };

if (only.includes("echo")) {
  const server = await startServer(env);
  try {
    const body = Buffer.alloc(MiB, 0x01);
    const head = Buffer.from(`POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`, "latin1");
    outcomes.push(await measure("echo: 40 clients, 1 MiB of control bytes each, never read", server, 40, Buffer.concat([head, body]), 96, 50));
  } finally {
    await server.stop();
  }
}

if (only.includes("drip")) {
  const server = await startServer(env);
  try {
    const request = Buffer.from("GET /api/lab/drip?numbytes=1048576&duration=0 HTTP/1.1\r\nHost: x\r\n\r\n", "latin1");
    const budget = (200 * OUTPUT_BUDGET) / MiB;
    outcomes.push(await measure(`drip: 200 clients, 1 MiB at once each, never read (output budgets: ${fmt(budget, 1)} MiB)`, server, 200, request, budget, 50));
  } finally {
    await server.stop();
  }
}

for (const [name, accept] of [["list", "application/json"], ["list-yaml", "application/yaml"]] as const) {
  if (!only.includes(name)) continue;
  const dir = mkdtempSync(path.join(tmpdir(), "startline-stalled-"));
  try {
    await fillPosts(dir, { posts: 600, bodyChars: 30_000 });
    const server = await startServer({ ...env, DATA_DIR: dir });
    try {
      const request = Buffer.from(`GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`, "latin1");
      const warm = Buffer.from(`GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`, "latin1");
      outcomes.push(await measure(`${name}: ${listClients} clients, 600 posts of 30 KB as ${accept}, never read`, server, listClients, request, 32, Infinity, warm));
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A client that asks for `request` on a connection of its own, reads the whole answer, and asks again until `stop` says so. */
async function readingClient(port: number, request: string, stop: { stopped: boolean }): Promise<number> {
  let lists = 0;
  while (!stop.stopped) {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.write(request);
    socket.resume();
    await once(socket, "close");
    lists++;
  }
  return lists;
}

if (only.includes("lists")) {
  const dir = mkdtempSync(path.join(tmpdir(), "startline-lists-"));
  try {
    const posts = Number(option("--lists-posts", "3000"));
    await fillPosts(dir, { posts, bodyChars: 30_000 });
    const server = await startServer({ ...env, DATA_DIR: dir });
    try {
      for (let i = 0; i < 20; i++) await timedStatus(server.port);
      const before = memory(server.pid).rssMiB;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, memory(server.pid).rssMiB)), 50);
      const stop = { stopped: false };
      const formats = ["application/json", "application/json", "application/json", "application/yaml", "application/yaml", "application/yaml"];
      const readers = formats.map((accept) => readingClient(server.port, `GET /api/v1/posts HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`, stop));
      console.error(`lists: six clients reading full lists of ${posts} posts of 30 KB (three JSON, three YAML)`);
      const status = await probeEvery(server.port, holdMs, probeMs);
      stop.stopped = true;
      const lists = (await Promise.all(readers)).reduce((a, b) => a + b, 0);
      clearInterval(sampler);
      const none = { reset: 0, closed: 0, serverSockets: socketCount(server.pid), cutAfterMs: 0, finWait: 0, queuedMiB: 0 };
      outcomes.push({
        name: `lists: six clients reading full lists of ${posts} posts of 30 KB, three JSON, three YAML (${lists} lists read)`,
        before,
        peak,
        after: memory(server.pid).rssMiB,
        status: status.sort((a, b) => a - b),
        cut: none,
        rssBound: Infinity,
        statusBound: 50,
      });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let failed = false;
for (const o of outcomes) {
  const grew = o.peak - o.before;
  const median = percentile(o.status, 50);
  const max = o.status[o.status.length - 1] ?? NaN;
  const ok = grew <= o.rssBound && max < o.statusBound;
  failed ||= !ok;
  console.log(`${o.name}`);
  console.log(`  RSS MiB: before ${fmt(o.before, 1)}, peak ${fmt(o.peak, 1)} (+${fmt(grew, 1)}, bound +${o.rssBound}), after ${fmt(o.after, 1)}`);
  console.log(`  status beside them: ${o.status.length} requests, median ${fmt(median, 1)} ms, max ${fmt(max, 1)} ms${Number.isFinite(o.statusBound) ? ` (bound ${o.statusBound} ms)` : ""}`);
  if (o.cut.reset + o.cut.closed > 0) console.log(
    `  cut for not reading (all gone ${fmt(o.cut.cutAfterMs / 1000, 1)} s after the hold began): clients saw ${o.cut.reset} resets, ${o.cut.closed} orderly ends; ` +
      `server sockets then: ${o.cut.serverSockets}; ` +
      `in FIN-WAIT-1: ${o.cut.finWait}, ${fmt(o.cut.queuedMiB, 1)} MiB still queued in the kernel`,
  );
  console.log(`  ${ok ? "within bounds" : "OUT OF BOUNDS"}`);
}
process.exit(failed ? 1 : 0);
