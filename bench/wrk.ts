// wrk, the load generator of every timed run: a C client (Debian package
// `wrk`) that keeps up with the ceiling, where autocannon's JavaScript client
// used its whole core first (the ceiling reached 17k req/s under autocannon,
// 55k under wrk). One thread, pinned to the client core, through
// bench/wrk.lua, which writes `depth` requests at once and prints a summary.
// Its CPU is read as this process's reaped children's: wrk's figures exist
// only once it has exited.

import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { HZ, pinned, reapedChildrenTicks, type Pinning } from "./proc.js";

/** bench/wrk.lua, from dist/bench/ or bench/. */
export const WRK_SCRIPT = fileURLToPath(new URL(import.meta.url.includes("/dist/bench/") ? "../../bench/wrk.lua" : "./wrk.lua", import.meta.url));

export interface WrkJob {
  readonly url: string;
  readonly method: string;
  /** "{n}" becomes a counter, new for every request (prefixed with `prefix`). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A file whose bytes every request carries as its body. */
  readonly bodyFile?: string;
  readonly connections: number;
  readonly depth: number;
  /** Whole seconds (wrk's -d takes no fraction). */
  readonly seconds: number;
  readonly prefix: string;
}

export interface LoadSummary {
  readonly requests: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  /** Per batch when depth > 1, corrected for coordinated omission. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Answers of status 400 and above (the only statuses wrk counts), and socket errors and timeouts. */
  readonly errors: number;
  /** wrk's CPU over the wall time (1 = its core fully busy: the figures may be its limit). */
  readonly wrkCpu: number;
}

/** Why wrk cannot run here, or undefined when it can. */
export function wrkUnavailable(): string | undefined {
  const probe = spawnSync("wrk", ["-v"], { stdio: "ignore" });
  return probe.error === undefined ? undefined : `wrk cannot start (${(probe.error as NodeJS.ErrnoException).code}); it is the Debian package wrk`;
}

export function runWrk(pinning: Pinning, job: WrkJob): Promise<LoadSummary> {
  const fields = Object.entries(job.headers).map(([name, value]) => `${name}: ${value}`);
  const args = ["-t1", `-c${job.connections}`, `-d${job.seconds}s`, "--timeout", "10s", "-s", WRK_SCRIPT, job.url, "--", String(job.depth), job.method, job.path, ...fields];
  if (job.bodyFile !== undefined) args.push(`@body=${job.bodyFile}`);
  const [command, argv] = pinned(pinning, String(pinning.clientCore), "wrk", args);
  const ticks = reapedChildrenTicks();
  const wall = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRK_PREFIX: job.prefix } });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.once("error", reject);
    child.once("close", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("WRK_SUMMARY "));
      if (code !== 0 || line === undefined) return reject(new Error(`wrk exited (${code}) without a summary: ${out.trim().slice(0, 500)}`));
      const s = JSON.parse(line.slice("WRK_SUMMARY ".length)) as { requests: number; durationUs: number; errors: Record<string, number>; latencyUs: { p50: number; p99: number } };
      const seconds = s.durationUs / 1e6;
      const wallUs = Number(process.hrtime.bigint() - wall) / 1000;
      resolve({
        requests: s.requests,
        seconds,
        reqPerSec: seconds > 0 ? s.requests / seconds : 0,
        p50Ms: s.latencyUs.p50 / 1000,
        p99Ms: s.latencyUs.p99 / 1000,
        errors: Object.values(s.errors).reduce((a, b) => a + b, 0),
        wrkCpu: ((reapedChildrenTicks() - ticks) * 1e6) / HZ / wallUs,
      });
    });
  });
}
