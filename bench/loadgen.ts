// The load generator: a child process of run.ts, pinned to its own core,
// that runs autocannon (programmatic API) once per job it reads.
//
// Protocol: one JSON LoadJob per line on stdin; one JSON LoadReply per line on
// stdout, in order. It must be started with
//   node --require <repo>/bench/autocannon-methods.cjs dist/bench/loadgen.js
// so that autocannon accepts methods outside its list (UPDATE, ...); the
// methods come from env AUTOCANNON_EXTRA_METHODS.
//
// Latency: autocannon's own histogram has a resolution of 1 ms (it records
// whole milliseconds), too coarse for a local server, so each response's time
// (autocannon's 'response' event, hrtime-based, in ms) also goes into a
// histogram of 10 µs buckets here; those percentiles are the ones reported.
//
// It also holds idle connections for the idle-* scenarios: "idle-open" opens
// that many connections (at most `concurrency` being opened at a time), sends
// one request on each and reads its response, then keeps them all open and
// silent until "idle-close" closes them.

import autocannon from "autocannon";
import { createRequire } from "node:module";
import net from "node:net";
import { createInterface } from "node:readline";
import { formatRequest } from "./probe.js";
import type { RequestSpec } from "./scenarios.js";

export type LoadJob = ThroughputJob | IdleOpenJob | IdleCloseJob;

export interface IdleOpenJob {
  readonly kind: "idle-open";
  readonly id: number;
  readonly port: number;
  readonly request: RequestSpec;
  readonly connections: number;
  /** Connections being opened (connect, request, response) at a time. */
  readonly concurrency: number;
  /** Per connection, for its response. */
  readonly timeoutMs: number;
}

export interface IdleCloseJob {
  readonly kind: "idle-close";
  readonly id: number;
}

export interface IdleOpened {
  /** Connections open and answered, now idle. */
  readonly open: number;
  /** Connections that failed (refused, reset, timed out, closed before their answer). */
  readonly failed: number;
  /** Answers that were not 2xx. */
  readonly non2xx: number;
  /** The first few failures, for the report. */
  readonly errors: readonly string[];
  readonly openingMs: number;
  /** CPU this process used while opening, as a share of the wall time. */
  readonly loadgenCpuShare: number;
}

export interface IdleClosed {
  /** Idle connections that the server closed (or reset) before idle-close. */
  readonly closedEarly: number;
  /** Connections closed by idle-close. */
  readonly closed: number;
}

export interface ThroughputJob {
  readonly kind: "throughput";
  readonly id: number;
  readonly url: string;
  readonly requests: readonly RequestSpec[];
  readonly connections: number;
  readonly pipelining: number;
  /** Seconds. */
  readonly duration: number;
  /** Seconds without a response before autocannon counts a timeout. */
  readonly timeout: number;
  /** The status every answer must have; absent: any 2xx. `non2xx` counts the answers with another. */
  readonly status?: number;
}

export interface LoadSummary {
  /** Completed requests (responses received). */
  readonly requests: number;
  /** Requests sent. */
  readonly sent: number;
  /** Seconds, as measured by autocannon. */
  readonly durationS: number;
  readonly reqPerSec: number;
  /** From the 10 µs histogram, in ms. */
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** autocannon's own (1 ms resolution), for reference; absent from wrk's runs (bench/wrk.ts). */
  readonly autocannonLatencyMs?: { readonly p50: number; readonly p99: number; readonly mean: number };
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly mismatches: number;
  readonly resets: number;
  readonly statusCodes: Record<string, number>;
  /** CPU this process used during the run, as a share of the wall time (1 = one core fully busy). */
  readonly loadgenCpuShare: number;
}

export type LoadReply =
  | { readonly id: number; readonly ok: true; readonly summary?: LoadSummary; readonly opened?: IdleOpened; readonly closed?: IdleClosed }
  | { readonly id: number; readonly ok: false; readonly error: string };

/** The first line the load generator writes, once it is running (taskset has exec'd node by then). */
export interface LoadReady {
  readonly ready: true;
  readonly pid: number;
  /** The methods autocannon accepts in this process (its own list, plus what autocannon-methods.cjs added). */
  readonly methods: readonly string[];
}

/** Latencies in 10 µs buckets up to 100 ms, then 1 ms buckets up to 10 s; above that, the last bucket. */
class LatencyHistogram {
  private readonly fine = new Uint32Array(10_000);
  private readonly coarse = new Uint32Array(9_900);
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;

  record(ms: number): void {
    const us = ms * 1000;
    if (us < 100_000) this.fine[Math.floor(us / 10)]!++;
    else this.coarse[Math.min(9_899, Math.floor((us - 100_000) / 1000))]!++;
    this.count++;
    this.sumMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** The upper edge of the bucket holding the q-quantile, in ms. */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < this.fine.length; i++) {
      seen += this.fine[i]!;
      if (seen >= rank) return ((i + 1) * 10) / 1000;
    }
    for (let i = 0; i < this.coarse.length; i++) {
      seen += this.coarse[i]!;
      if (seen >= rank) return 100 + (i + 1);
    }
    return this.maxMs;
  }

  summary() {
    return {
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
      max: this.maxMs,
      mean: this.count === 0 ? 0 : this.sumMs / this.count,
    };
  }
}

function runJob(job: ThroughputJob): Promise<LoadSummary> {
  return new Promise((resolve, reject) => {
    const histogram = new LatencyHistogram();
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    const options: autocannon.Options = {
      url: job.url,
      connections: job.connections,
      pipelining: job.pipelining,
      duration: job.duration,
      timeout: job.timeout,
      // The method may be one autocannon-methods.cjs added; the typings only know the standard ones.
      requests: job.requests.map((r) => ({ ...r, method: r.method as autocannon.Request["method"], headers: { ...r.headers } })),
    };
    const instance = autocannon(options, (error: unknown, result: autocannon.Result) => {
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      const cpu = process.cpuUsage(cpuBefore);
      const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1000;
      const statusCodes: Record<string, number> = {};
      for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
      const requests = result.requests.total;
      resolve({
        requests,
        sent: result.requests.sent,
        durationS: result.duration,
        reqPerSec: result.duration > 0 ? requests / result.duration : 0,
        latencyMs: histogram.summary(),
        autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.mean },
        non2xx: job.status === undefined ? result.non2xx : requests - (statusCodes[String(job.status)] ?? 0),
        errors: result.errors,
        timeouts: result.timeouts,
        mismatches: result.mismatches,
        resets: result.resets,
        statusCodes,
        loadgenCpuShare: (cpu.user + cpu.system) / wallUs,
      });
    });
    instance.on("response", (_client, _statusCode, _bytes, responseTime) => histogram.record(responseTime));
  });
}

// ---------------------------------------------------------------- idle connections

interface Idle {
  readonly socket: net.Socket;
  closedEarly: boolean;
}

let idle: Idle[] = [];
let closing = false;

/** Opens one connection, sends the request, reads the response (framed by Content-Length); resolves with its status code. */
function openOne(job: IdleOpenJob, raw: Buffer): Promise<{ idle: Idle; status: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(job.port, "127.0.0.1");
    const entry: Idle = { socket, closedEarly: false };
    let received: Buffer = Buffer.alloc(0);
    let answered = false;
    const timer = setTimeout(() => fail(new Error(`no answer within ${job.timeoutMs} ms`)), job.timeoutMs);
    function fail(error: Error): void {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    }
    socket.on("connect", () => socket.write(raw));
    socket.on("error", (error) => {
      if (!answered) fail(error);
    });
    socket.on("close", () => {
      if (!answered) fail(new Error("closed before the answer"));
      else if (!closing) entry.closedEarly = true;
    });
    socket.on("data", (chunk: Buffer) => {
      if (answered) return; // nothing more is expected; counted as early close if the server gives up on us
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString("latin1");
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (length === null) return fail(new Error("an answer without Content-Length"));
      if (received.length < headEnd + 4 + Number(length[1])) return;
      answered = true;
      clearTimeout(timer);
      received = Buffer.alloc(0);
      resolve({ idle: entry, status: Number(head.split(" ", 2)[1]) });
    });
  });
}

async function idleOpen(job: IdleOpenJob): Promise<IdleOpened> {
  if (idle.length > 0) throw new Error(`${idle.length} idle connections are still open`);
  closing = false;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const raw = formatRequest(job.request, `127.0.0.1:${job.port}`);
  let next = 0;
  let failed = 0;
  let non2xx = 0;
  const errors: string[] = [];
  const worker = async () => {
    while (next < job.connections) {
      next++;
      try {
        const { idle: entry, status } = await openOne(job, raw);
        idle.push(entry);
        if (status < 200 || status > 299) non2xx++;
      } catch (error) {
        failed++;
        if (errors.length < 5) errors.push(error instanceof Error ? error.message : String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(job.concurrency, job.connections) }, worker));
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { open: idle.filter((e) => !e.closedEarly).length, failed, non2xx, errors, openingMs: wallUs / 1000, loadgenCpuShare: (cpu.user + cpu.system) / wallUs };
}

async function idleClose(): Promise<IdleClosed> {
  closing = true;
  const all = idle;
  idle = [];
  const closedEarly = all.filter((e) => e.closedEarly).length;
  await Promise.all(
    all.map(
      ({ socket }) =>
        new Promise<void>((resolve) => {
          if (socket.destroyed && socket.closed) return resolve();
          socket.once("close", () => resolve());
          socket.destroy();
        }),
    ),
  );
  return { closedEarly, closed: all.length };
}

async function main(): Promise<void> {
  const methods = createRequire(import.meta.url)("autocannon/lib/httpMethods.js") as string[];
  const ready: LoadReady = { ready: true, pid: process.pid, methods: [...methods] };
  process.stdout.write(JSON.stringify(ready) + "\n");
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const job = JSON.parse(line) as LoadJob;
    let reply: LoadReply;
    try {
      if (job.kind === "idle-open") reply = { id: job.id, ok: true, opened: await idleOpen(job) };
      else if (job.kind === "idle-close") reply = { id: job.id, ok: true, closed: await idleClose() };
      else reply = { id: job.id, ok: true, summary: await runJob(job) };
    } catch (error) {
      reply = { id: job.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}

await main();
