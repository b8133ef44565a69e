// Shared by the hardening bench scripts: run the built server (dist/src/main.js)
// as a child process on 127.0.0.1, and look at it from outside through /proc
// (Linux): its open sockets and its memory.

import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { withoutSettings } from "../../src/config.js";

/** utime + stime of a process in clock ticks, and ticks per second: the bench's own /proc readers. */
export { clockTicksPerSecond as clockTicks, cpuTicks } from "../proc.js";

/** dist/bench/hardening/ -> dist/src/main.js */
export const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "src", "main.js");

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  readonly lines: string[];
  /** SIGTERM, then the exit code and how long the exit took (ms). */
  stop(): Promise<{ code: number | null; ms: number }>;
}

/** Start the server with PORT=0 on 127.0.0.1, in-memory data, no access log, plus `env`. */
export async function startServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  // No startline setting from the caller's shell, and no NODE_OPTIONS hook (a test runner's) in the measured process.
  const { NODE_OPTIONS: _hook, ...clean } = withoutSettings(process.env);
  const child = spawn(process.execPath, [MAIN], {
    env: { ...clean, PORT: "0", HOST: "127.0.0.1", DATA_DIR: ":memory:", QUIET: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  const onText = (d: Buffer) => {
    partial += d.toString();
    let nl: number;
    while ((nl = partial.indexOf("\n")) !== -1) {
      lines.push(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
  };
  child.stdout!.on("data", onText);
  child.stderr!.on("data", onText);
  const exited = once(child, "exit");
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = lines.find((l) => l.startsWith("listening on "));
      if (line !== undefined) {
        clearInterval(timer);
        resolve(line.slice("listening on ".length).trim());
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`the server exited with ${child.exitCode}: ${lines.join("\n")}`));
      }
    }, 20);
  });
  return {
    child,
    pid: child.pid!,
    port: Number(new URL(url).port),
    url,
    lines,
    async stop() {
      const t0 = performance.now();
      child.kill("SIGTERM");
      await exited;
      return { code: child.exitCode, ms: performance.now() - t0 };
    },
  };
}

/** Open sockets of a process: entries of /proc/<pid>/fd that are sockets. */
export function socketCount(pid: number): number {
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

/** VmRSS and VmHWM (peak RSS) of a process, in MiB. */
export function memory(pid: number): { rssMiB: number; peakMiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

/** Poll `probe` every `everyMs` until it returns true or `timeoutMs` passes; returns the time it took, or null. */
export async function waitFor(probe: () => boolean, timeoutMs: number, everyMs = 50): Promise<number | null> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (probe()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return probe() ? performance.now() - t0 : null;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface LoadResult {
  readonly requests: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
}

/**
 * A normal client: autocannon's programmatic API, GET `url`, keep-alive, one
 * request at a time per connection. Latencies (ms) come from autocannon's
 * per-response hrtime figure, not its whole-millisecond histogram.
 */
export function load(url: string, seconds: number, connections = 10): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const instance = autocannon({ url, connections, pipelining: 1, duration: seconds, timeout: 10 }, (error: unknown, result: autocannon.Result) => {
      if (error) return reject(error);
      latencies.sort((a, b) => a - b);
      resolve({
        requests: latencies.length,
        reqPerSec: latencies.length / seconds,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] ?? NaN,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
      });
    });
    instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
  });
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
