// The data endpoints side by side (issue 28): startline on its default
// SQLite store, fastify 5 with better-sqlite3 (bench/servers/fastify-data.ts:
// what a user would pick instead) and the data ceiling
// (bench/servers/data-ceiling.ts: node:net, the same SQLite statements,
// JSON.stringify, a SHA-256 ETag).
//
//   npm run bench:data                            # 3 rounds, 4 s after 1 s of warm-up, 50 connections
//   npm run bench:data -- --rounds 1 --duration 1 # a smoke run
//   npm run bench:data -- --servers startline,fastify --scenarios page-50,list-all
//   npm run bench                                 # runs these too, after the engine scenarios (see bench/run.ts)
//
// Every round starts each server fresh on a new database file, fills it
// through HTTP with posts p0 to p999 (title ~25 characters, body 600,
// author, two tags), then runs every scenario against it under wrk (one
// thread, pinned to the load generator's core, the server to its own), a
// warm-up and then the measured run; the server's CPU comes from
// /proc/<pid>/stat. The servers take turns in alternating order from round
// to round, and the table gives medians: req/s, server CPU per request, and
// for startline the ratio to fastify (the median of the rounds' ratios, each
// taken within one round, so that a neighbour's load moves both sides), the
// same ratio of CPU per request (what each would serve on a core of its own:
// on a machine whose other work takes the cores, req/s measures the
// scheduler as much as the server) and its CPU per request against the
// ceiling's.
//
// The new-post scenario runs last, since it adds a post per request (each
// with a new id: WRK_PREFIX and a counter, see wrk.lua).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest, Agent } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { clockTicksPerSecond, cpuTicks, detectPinning, listeningPort, pinPid, pinnedNode, procStatus, systemTicks, type Pinning } from "./proc.js";
import { runWrk } from "./wrk.js";
import { withoutSettings } from "../src/config.js";

export const DATA_SERVERS = ["startline", "fastify", "ceiling"] as const;
export type DataServer = (typeof DATA_SERVERS)[number];

export interface DataScenario {
  readonly name: string;
  readonly label: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Connections, when not the run's own (the whole list: 10). */
  readonly connections?: number;
  /** The ceiling does not take part (YAML: the issue compares it with fastify only). */
  readonly withoutCeiling?: boolean;
  /** Checks one response before the runs; returns what is wrong, if anything. */
  readonly check: (status: number, body: string) => string | undefined;
}

export const POST_COUNT = 1000;

/** Post `p<i>` as the fill sends it: a title of about 25 characters, a body of 600, an author, two tags. */
export function benchPost(i: number): { title: string; body: string; author: string; tags: string[] } {
  const words = "the quick brown fox jumps over a lazy dog while startline serves data ";
  const body = words.repeat(Math.ceil(600 / words.length) + 1).slice(i % 50, (i % 50) + 600);
  return { title: `Bench post number ${String(i).padStart(4, "0")}`, body, author: "Ada Bench", tags: ["bench", `t${i % 7}`] };
}

const NEW_POST_FILE = "new-post.json";

const expectPosts = (count: number) => (status: number, body: string) => {
  if (status !== 200) return `status ${status}`;
  const n = (JSON.parse(body) as { posts: unknown[] }).posts.length;
  return n === count ? undefined : `${n} posts, not ${count}`;
};
const expectYaml = (count: number) => (status: number, body: string) => {
  if (status !== 200) return `status ${status}`;
  const n = body.split("\n").filter((line) => line.startsWith("  - id: ")).length;
  return n === count ? undefined : `${n} posts in the YAML, not ${count}`;
};

export const DATA_SCENARIOS: readonly DataScenario[] = [
  {
    name: "post-one",
    label: "GET /api/v1/post/:id",
    method: "GET",
    path: "/api/v1/post/p500",
    check: (status, body) => (status === 200 && (JSON.parse(body) as { id: string }).id === "p500" ? undefined : `status ${status}: ${body.slice(0, 100)}`),
  },
  { name: "page-50", label: "GET /api/v1/posts?limit=50", method: "GET", path: "/api/v1/posts?limit=50", check: expectPosts(50) },
  { name: "list-all", label: "GET /api/v1/posts (all 1,000, 10 connections)", method: "GET", path: "/api/v1/posts", connections: 10, check: expectPosts(POST_COUNT) },
  {
    name: "page-50-yaml",
    label: "GET /api/v1/posts?limit=50, YAML",
    method: "GET",
    path: "/api/v1/posts?limit=50",
    headers: { Accept: "application/yaml" },
    withoutCeiling: true,
    check: expectYaml(50),
  },
  {
    name: "list-all-yaml",
    label: "GET /api/v1/posts (all 1,000, 10 connections), YAML",
    method: "GET",
    path: "/api/v1/posts",
    headers: { Accept: "application/yaml" },
    connections: 10,
    withoutCeiling: true,
    check: expectYaml(POST_COUNT),
  },
  {
    name: "post-new",
    label: "POST /api/v1/post/:id",
    method: "POST",
    path: "/api/v1/post/{n}",
    headers: { "Content-Type": "application/json" },
    check: (status) => (status === 201 ? undefined : `status ${status}`),
  },
];

export interface DataOptions {
  readonly rounds: number;
  readonly duration: number;
  readonly warmup: number;
  readonly connections: number;
  readonly servers: readonly DataServer[];
  readonly scenarios: readonly DataScenario[];
  /** The startline to run (default dist/src/main.js): another build, to compare before and after a change. */
  readonly startlineMain?: string;
}

export interface Measurement {
  readonly round: number;
  readonly server: DataServer;
  readonly scenario: string;
  readonly reqPerSec: number;
  readonly cpuUsPerRequest: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly rssMiB: number;
  /** Busy CPU of the whole machine during the run that was neither the server's nor wrk's, in cores. */
  readonly otherCores: number;
}

interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
}

async function startServer(pinning: Pinning, server: DataServer, dir: string, round: number, startlineMain = STARTLINE_MAIN): Promise<Started> {
  const env: Record<string, string> = { ...withoutSettings(process.env), PORT: "0", HOST: "127.0.0.1" };
  let script: string;
  if (server === "startline") {
    script = startlineMain;
    Object.assign(env, { QUIET: "1", DATA_DIR: join(dir, `startline-${round}`) });
  } else {
    script = benchScript(server === "fastify" ? "servers/fastify-data" : "servers/data-ceiling");
    env.DATA_FILE = join(dir, `${server}-${round}.sqlite`);
  }
  const [command, args] = pinnedNode(pinning, pinning.serverCore, [script]);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const port = await listeningPort(child, server, () => `:\n${stderr}`);
  return { child, pid: child.pid!, port };
}

async function stop(started: Started): Promise<void> {
  const exited = new Promise((resolve) => started.child.once("exit", resolve));
  started.child.kill("SIGTERM");
  const timer = setTimeout(() => started.child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/**
 * One request; on a kept-alive connection of the fill's agent, or (fresh: the probe before a scenario, which
 * may follow a run longer than the server's idle timeout) on a connection of its own, so that it never races
 * the server closing an idle one.
 */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string, fresh = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers, agent: fresh ? false : agent }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (s: string) => (text += s));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Posts p0 to p<count - 1> through HTTP, 8 at a time. */
export async function fill(port: number, count = POST_COUNT): Promise<void> {
  for (let i = 0; i < count; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, count - i) }, async (_, k) => {
        const r = await send(port, "POST", `/api/v1/post/p${i + k}`, { "Content-Type": "application/json" }, JSON.stringify(benchPost(i + k)));
        if (r.status !== 201) throw new Error(`filling: POST /api/v1/post/p${i + k} answered ${r.status}: ${r.body.slice(0, 200)}`);
      }),
    );
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `pinning`: npm run bench passes its own, found before it pinned itself to
 * the client core; found here, after that, it would see one core and pin
 * nothing.
 */
export async function runData(options: DataOptions, log: (line: string) => void = console.log, pinning: Pinning = detectPinning()): Promise<Measurement[]> {
  if (pinning.enabled) pinPid(process.pid, pinning.clientCore);
  log(`pinning: ${pinning.enabled ? `servers on core ${pinning.serverCore}, wrk and this runner on core ${pinning.clientCore}` : `off (${pinning.reason})`}`);
  const dir = mkdtempSync(join(tmpdir(), "startline-bench-data-"));
  const bodyFile = join(dir, NEW_POST_FILE);
  writeFileSync(bodyFile, JSON.stringify(benchPost(1234)));
  const results: Measurement[] = [];
  const hz = clockTicksPerSecond();
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? options.servers : [...options.servers].reverse();
      for (const server of order) {
        const started = await startServer(pinning, server, dir, round, options.startlineMain);
        try {
          await fill(started.port);
          for (const scenario of options.scenarios) {
            if (server === "ceiling" && scenario.withoutCeiling) continue;
            const headers = { ...scenario.headers };
            const path = scenario.path.replace("{n}", `check-${round}`);
            const probe = await send(started.port, scenario.method, path, headers, scenario.method === "POST" ? JSON.stringify(benchPost(1234)) : undefined, true);
            const wrong = scenario.check(probe.status, probe.body);
            if (wrong !== undefined) throw new Error(`${server} ${scenario.name}: ${wrong}`);
            const job = {
              url: `http://127.0.0.1:${started.port}`,
              request: { method: scenario.method, path: scenario.path, headers },
              connections: scenario.connections ?? options.connections,
              pipelining: 1,
              timeout: 10,
              ...(scenario.method === "POST" ? { bodyFile } : {}),
            };
            const env = (phase: string) => ({ ...process.env, WRK_PREFIX: `r${round}${phase}` });
            if (options.warmup > 0) await runWrk(pinning, { ...job, duration: options.warmup }, env("w"));
            const ticks = cpuTicks(started.pid);
            const system = systemTicks();
            const ownBefore = process.cpuUsage();
            const wallBefore = process.hrtime.bigint();
            const summary = await runWrk(pinning, { ...job, duration: options.duration }, env("m"));
            const serverTicks = cpuTicks(started.pid) - ticks;
            const after = systemTicks();
            const ownUs = process.cpuUsage(ownBefore);
            const wallS = Number(process.hrtime.bigint() - wallBefore) / 1e9;
            const busyCores = (after.busy - system.busy) / hz / wallS;
            const knownCores = serverTicks / hz / wallS + summary.loadgenCpuShare + (ownUs.user + ownUs.system) / 1e6 / wallS;
            const m: Measurement = {
              round,
              server,
              scenario: scenario.name,
              reqPerSec: summary.reqPerSec,
              cpuUsPerRequest: summary.requests > 0 ? (serverTicks / hz / summary.requests) * 1e6 : Number.NaN,
              p99Ms: summary.latencyMs.p99,
              errors: summary.errors + summary.non2xx,
              rssMiB: procStatus(started.pid).rssKiB / 1024,
              otherCores: Math.max(0, busyCores - knownCores),
            };
            results.push(m);
            log(
              `round ${round} ${server.padEnd(9)} ${scenario.name.padEnd(13)} ${m.reqPerSec.toFixed(0).padStart(7)} req/s  ${m.cpuUsPerRequest.toFixed(1).padStart(7)} µs CPU/req  p99 ${m.p99Ms.toFixed(1)} ms  errors ${m.errors}  other load ${m.otherCores.toFixed(2)} cores`,
            );
          }
        } finally {
          await stop(started);
        }
      }
    }
  } finally {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

const times = (n: number) => (Number.isFinite(n) ? `${fmt(n, 2)}x` : "n/a");
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a");

/** The table of medians, as Markdown. */
/**
 * startline's ratios to another server in one scenario: the median over the
 * rounds of the ratio within each round (each taken within one round, so that
 * a neighbour's load moves both sides).
 */
export function roundRatio(results: readonly Measurement[], scenario: string, other: DataServer, pick: (m: Measurement) => number): number {
  const of = (server: DataServer) => results.filter((m) => m.scenario === scenario && m.server === server);
  return median(
    of("startline")
      .map((m) => {
        const o = of(other).find((x) => x.round === m.round);
        return o === undefined ? Number.NaN : pick(m) / pick(o);
      })
      .filter(Number.isFinite),
  );
}

export function dataTable(options: DataOptions, results: readonly Measurement[]): string {
  const lines = [
    "| endpoint | startline req/s | fastify req/s | ceiling req/s | startline vs fastify | startline CPU µs/req | fastify | ceiling | fastify CPU ÷ startline CPU | CPU vs ceiling | rounds' spread | other load (cores) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const scenario of options.scenarios) {
    const of = (server: DataServer) => results.filter((m) => m.scenario === scenario.name && m.server === server);
    const med = (server: DataServer, pick: (m: Measurement) => number) => (of(server).length === 0 ? Number.NaN : median(of(server).map(pick)));
    const perRound = (pick: (m: Measurement) => number, other: DataServer) => roundRatio(results, scenario.name, other, pick);
    const spread = DATA_SERVERS.map((server) => {
      const values = of(server).map((m) => m.reqPerSec);
      return values.length < 2 ? 0 : (Math.max(...values) - Math.min(...values)) / median(values);
    });
    const others = results.filter((m) => m.scenario === scenario.name).map((m) => m.otherCores);
    lines.push(
      `| ${scenario.label} | ${fmt(med("startline", (m) => m.reqPerSec))} | ${fmt(med("fastify", (m) => m.reqPerSec))} | ${fmt(med("ceiling", (m) => m.reqPerSec))} | ` +
        `${times(perRound((m) => m.reqPerSec, "fastify"))} | ${fmt(med("startline", (m) => m.cpuUsPerRequest), 1)} | ${fmt(med("fastify", (m) => m.cpuUsPerRequest), 1)} | ` +
        `${fmt(med("ceiling", (m) => m.cpuUsPerRequest), 1)} | ${times(1 / perRound((m) => m.cpuUsPerRequest, "fastify"))} | ${times(perRound((m) => m.cpuUsPerRequest, "ceiling"))} | ±${fmt((Math.max(...spread) * 100) / 2)}% | ${others.length === 0 ? "n/a" : fmt(median(others), 2)} |`,
    );
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "3" },
      duration: { type: "string", default: "4" },
      warmup: { type: "string", default: "1" },
      connections: { type: "string", default: "50" },
      servers: { type: "string", default: DATA_SERVERS.join(",") },
      scenarios: { type: "string", default: DATA_SCENARIOS.map((s) => s.name).join(",") },
      "startline-main": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log("npm run bench:data -- [--rounds 3] [--duration 4] [--warmup 1] [--connections 50] [--servers startline,fastify,ceiling] [--scenarios " + DATA_SCENARIOS.map((s) => s.name).join(",") + "] [--startline-main dist/src/main.js]");
    return;
  }
  const servers = values.servers.split(",").map((s) => {
    if (!(DATA_SERVERS as readonly string[]).includes(s)) throw new Error(`unknown server ${s}; one of ${DATA_SERVERS.join(", ")}`);
    return s as DataServer;
  });
  const scenarios = values.scenarios.split(",").map((name) => {
    const found = DATA_SCENARIOS.find((s) => s.name === name);
    if (found === undefined) throw new Error(`unknown scenario ${name}; one of ${DATA_SCENARIOS.map((s) => s.name).join(", ")}`);
    return found;
  });
  const options: DataOptions = {
    rounds: Number(values.rounds),
    duration: Number(values.duration),
    warmup: Number(values.warmup),
    connections: Number(values.connections),
    servers,
    scenarios,
    ...(values["startline-main"] === undefined ? {} : { startlineMain: values["startline-main"] }),
  };
  const results = await runData(options);
  console.log("\n" + dataTable(options, results));
  const errors = results.filter((m) => m.errors > 0);
  if (errors.length > 0) {
    console.log(`\nPROBLEMS: errors in ${errors.map((m) => `${m.server} ${m.scenario} round ${m.round} (${m.errors})`).join(", ")}`);
    process.exitCode = 1;
  }
}

// `npm run bench:data` runs this file; `npm run bench` imports it for its data table.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
