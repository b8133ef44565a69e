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

import autocannon from "autocannon";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import type { RequestSpec } from "./scenarios.js";

export interface LoadJob {
  readonly id: number;
  readonly url: string;
  readonly requests: readonly RequestSpec[];
  readonly connections: number;
  readonly pipelining: number;
  /** Seconds. */
  readonly duration: number;
  /** Seconds without a response before autocannon counts a timeout. */
  readonly timeout: number;
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
  /** autocannon's own (1 ms resolution), for reference. */
  readonly autocannonLatencyMs: { readonly p50: number; readonly p99: number; readonly mean: number };
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly mismatches: number;
  readonly resets: number;
  readonly statusCodes: Record<string, number>;
  /** CPU this process used during the run, as a share of the wall time (1 = one core fully busy). */
  readonly loadgenCpuShare: number;
}

export type LoadReply = { readonly id: number; readonly ok: true; readonly summary: LoadSummary } | { readonly id: number; readonly ok: false; readonly error: string };

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

function runJob(job: LoadJob): Promise<LoadSummary> {
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
        non2xx: result.non2xx,
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
      reply = { id: job.id, ok: true, summary: await runJob(job) };
    } catch (error) {
      reply = { id: job.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}

await main();
