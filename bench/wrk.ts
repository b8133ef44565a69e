// wrk, the load generator of every measurement: a C client (Debian package
// `wrk`) that keeps up with the ceiling, where autocannon's JavaScript client
// uses its whole core first (the ceiling reached about 17k req/s under
// autocannon and 55k under wrk). It runs pinned to the load generator's core,
// with one thread, through bench/wrk.lua, which pipelines and prints the
// summary read here.
//
// Its CPU time is measured as the runner's reaped children's (cutime +
// cstime): wrk is a child of this process, and its figures exist only once it
// has exited.

import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { BENCH_SOURCE_DIR } from "./paths.js";
import { clockTicksPerSecond, reapedChildrenTicks, type Pinning } from "./proc.js";
import type { RequestSpec } from "./scenarios.js";

export const WRK_SCRIPT = join(BENCH_SOURCE_DIR, "wrk.lua");

/** One wrk run, as the runner records it. */
export interface LoadSummary {
  /** Completed requests (responses received). */
  readonly requests: number;
  readonly durationS: number;
  readonly reqPerSec: number;
  /** wrk's, corrected for coordinated omission; per batch when pipelining. */
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** Answers of status 400 and above (wrk sees no other status). */
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  /** CPU wrk used during the run, as a share of the wall time (1 = one core fully busy). */
  readonly loadgenCpuShare: number;
}

export interface WrkJob {
  readonly url: string;
  readonly request: RequestSpec;
  readonly connections: number;
  /** Requests written at once per connection; the next batch after the last response. */
  readonly pipelining: number;
  /** Whole seconds. */
  readonly duration: number;
  /** Seconds without a response before wrk counts a timeout. */
  readonly timeout: number;
  /** A file whose bytes every request carries as its body (wrk.lua's @body=). */
  readonly bodyFile?: string;
}

/** What bench/wrk.lua prints at the end, after "WRK_SUMMARY ". */
interface WrkSummary {
  readonly requests: number;
  readonly durationUs: number;
  readonly bytes: number;
  readonly errors: { readonly connect: number; readonly read: number; readonly write: number; readonly status: number; readonly timeout: number };
  readonly latencyUs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
}

/** Why wrk cannot run here (not installed), or undefined when it can. */
export function wrkUnavailable(): string | undefined {
  const probe = spawnSync("wrk", ["-v"], { stdio: "ignore" });
  if (probe.error === undefined) return undefined;
  const code = (probe.error as NodeJS.ErrnoException).code;
  return code === "ENOENT" ? "wrk is not installed (Debian package wrk)" : `wrk cannot start (${code ?? probe.error.message})`;
}

/** The command line: `taskset -c <client core> wrk ...` (taskset execs wrk), or wrk alone when nothing is pinned. */
export function wrkCommand(pinning: Pinning, job: WrkJob): [string, string[]] {
  const { method, path, headers, body } = job.request;
  if (body !== undefined) throw new Error("wrk sends a body only from a file (WrkJob.bodyFile)");
  const args = [
    "-t1",
    `-c${job.connections}`,
    `-d${job.duration}s`,
    "--timeout",
    `${job.timeout}s`,
    "-s",
    WRK_SCRIPT,
    job.url,
    "--",
    String(job.pipelining),
    method,
    path,
    ...Object.entries(headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    ...(job.bodyFile === undefined ? [] : [`@body=${job.bodyFile}`]),
  ];
  return pinning.enabled ? ["taskset", ["-c", String(pinning.clientCore), "wrk", ...args]] : ["wrk", args];
}

/** One wrk run. */
export function runWrk(pinning: Pinning, job: WrkJob, env?: NodeJS.ProcessEnv): Promise<LoadSummary> {
  const [command, args] = wrkCommand(pinning, job);
  const ticksBefore = reapedChildrenTicks();
  const wallBefore = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...(env === undefined ? {} : { env }) });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1000;
      const cpuUs = ((reapedChildrenTicks() - ticksBefore) * 1e6) / clockTicksPerSecond();
      const line = stdout.split("\n").find((l) => l.startsWith("WRK_SUMMARY "));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk exited (code ${code}, signal ${signal}) without a summary: ${(stderr || stdout).trim().slice(0, 500)}`));
        return;
      }
      const s = JSON.parse(line.slice("WRK_SUMMARY ".length)) as WrkSummary;
      const durationS = s.durationUs / 1e6;
      const ms = (us: number) => us / 1000;
      resolve({
        requests: s.requests,
        durationS,
        reqPerSec: durationS > 0 ? s.requests / durationS : 0,
        latencyMs: { p50: ms(s.latencyUs.p50), p90: ms(s.latencyUs.p90), p99: ms(s.latencyUs.p99), max: ms(s.latencyUs.max), mean: ms(s.latencyUs.mean) },
        // wrk counts statuses of 400 and above as errors of their own; nothing else of the status.
        non2xx: s.errors.status,
        errors: s.errors.connect + s.errors.read + s.errors.write + s.errors.timeout,
        timeouts: s.errors.timeout,
        loadgenCpuShare: wallUs > 0 ? cpuUs / wallUs : Number.NaN,
      });
    });
  });
}
