// 200 connections each holding a slow drip (/api/lab/drip, docs/lab.md),
// against the real server process on 127.0.0.1: what they cost the server
// (RSS from /proc/<pid>/status, against their output budgets: 200 x
// OUTPUT_BUDGET, 128 KiB each, is 25 MiB) and what they cost everybody else
// (how long a status request waits beside them; the goal is under 50 ms).
//
//   npm run bench:drip [-- --clients 200 --hold-ms 6000]
//
//   reading   each client asks for 1 MiB over 30 s and reads it as it comes:
//             the server holds one piece per connection and a timer.
//   stalled   each client asks for 1 MiB at once (duration=0) and reads
//             nothing: the server stops at each connection's output budget.
//
// Once every client has the head of its answer (the drips are under way), a
// status request (GET /api/v2/status) is timed every 100 ms on a fresh
// connection from a process of its own (status-probe.ts), for --hold-ms. Reported per case: RSS before the
// clients came, the highest RSS seen while they held on (sampled every 50
// ms), the bytes the clients had received, and the status waits (median,
// p99, max). Exit status 0 when the growth stays within the budgets and every
// status wait is under 50 ms, 1 otherwise: a loaded machine can fail it, so
// read the figures, not only the verdict.

import net from "node:net";
import { once } from "node:events";
import { OUTPUT_BUDGET } from "../../src/http/connection/send-body.js";
import { fmt, memory, percentile, startServer, type ServerProcess } from "./lib.js";
import { probeStatus, timedStatus } from "./status-probe.js";

const MiB = 1024 * 1024;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1]!;
}
const clients = Number(option("clients", "200"));
const holdMs = Number(option("hold-ms", "6000"));
const STATUS_BOUND_MS = 50;

interface Holder {
  readonly socket: net.Socket;
  received: number;
  /** Resolves once the response's head has arrived: the drip is then under way. */
  readonly started: Promise<void>;
}

/** A client that asks for `target`; once the head is in, it reads on (`read`) or stops reading for good. */
async function holder(port: number, target: string, read: boolean): Promise<Holder> {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  let head = "";
  let started!: () => void;
  const h: Holder = { socket, received: 0, started: new Promise((resolve) => (started = resolve)) };
  socket.on("data", (d: Buffer) => {
    h.received += d.length;
    if (head.length < 4096 && !head.includes("\r\n\r\n")) {
      head += d.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      started();
      if (!read) socket.pause();
    }
  });
  socket.on("error", () => {});
  socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return h;
}

interface Outcome {
  readonly name: string;
  readonly before: number;
  readonly peak: number;
  readonly receivedMiB: number;
  readonly arrivalMs: number;
  readonly status: number[];
}

async function measure(name: string, server: ServerProcess, target: string, read: boolean): Promise<Outcome> {
  for (let i = 0; i < 20; i++) await timedStatus(server.port);
  const before = memory(server.pid).rssMiB;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, memory(server.pid).rssMiB)), 50);
  const arriving = performance.now();
  const held = await Promise.all(Array.from({ length: clients }, () => holder(server.port, target, read)));
  await Promise.all(held.map((h) => h.started));
  const arrivalMs = performance.now() - arriving;
  console.error(`${name}: ${clients} clients hold their drips (every head in after ${fmt(arrivalMs, 0)} ms)`);
  const status = await probeStatus(server.port, holdMs);
  clearInterval(sampler);
  peak = Math.max(peak, memory(server.pid).rssMiB);
  const receivedMiB = held.reduce((n, h) => n + h.received, 0) / MiB;
  for (const h of held) h.socket.destroy();
  return { name, before, peak, receivedMiB, arrivalMs, status: status.sort((a, b) => a - b) };
}

const budgetMiB = (clients * OUTPUT_BUDGET) / MiB;
const cases: [string, string, boolean][] = [
  [`reading: ${clients} clients, 1 MiB over 30 s each, read as it comes`, "/api/lab/drip?numbytes=1048576&duration=30", true],
  [`stalled: ${clients} clients, 1 MiB at once each, never read`, "/api/lab/drip?numbytes=1048576&duration=0", false],
];
let failed = false;
for (const [name, target, read] of cases) {
  const server = await startServer({ SEND_TIMEOUT_MS: String(holdMs + 60_000) });
  let o: Outcome;
  try {
    o = await measure(name, server, target, read);
  } finally {
    await server.stop();
  }
  const grew = o.peak - o.before;
  const max = o.status[o.status.length - 1] ?? NaN;
  const ok = grew <= budgetMiB && max < STATUS_BOUND_MS;
  failed ||= !ok;
  console.log(name);
  console.log(`  RSS MiB: before ${fmt(o.before, 1)}, peak ${fmt(o.peak, 1)} (+${fmt(grew, 1)}; their output budgets: ${clients} x ${OUTPUT_BUDGET / 1024} KiB = ${fmt(budgetMiB, 1)})`);
  console.log(`  every client had its head ${fmt(o.arrivalMs, 0)} ms after the first connected; by the end they had received ${fmt(o.receivedMiB, 1)} MiB in all`);
  console.log(
    `  status beside them: ${o.status.length} requests, median ${fmt(percentile(o.status, 50), 1)} ms, p99 ${fmt(percentile(o.status, 99), 1)} ms, max ${fmt(max, 1)} ms (goal < ${STATUS_BOUND_MS} ms)`,
  );
  console.log(`  ${ok ? "within bounds" : "OUT OF BOUNDS"}`);
}
process.exit(failed ? 1 : 0);
