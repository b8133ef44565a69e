// `npm run bench`: startline against node:http and a no-parse "ceiling" server
// on node:net, scenario by scenario. See bench/README.md.
//
// For each scenario and round, each server is started fresh (the order
// rotates from round to round), pinned to core 0; the load generator (a child
// process running autocannon) runs on core 1, and so does this process. After
// a warm-up, the server's CPU time and RSS are read from /proc before and
// after the measured run. Prints one markdown table of medians and writes
// every run to bench/results/<timestamp>.json.
//
// Scenarios may also: send setup requests to startline after each start
// (node:http starts with the state startline had after them), run over HTTPS
// (a throwaway certificate made at start in a temporary directory, removed at
// the end), run each server as a cluster of workers (then allowed on every
// core, measured over the whole process tree), or hold idle connections
// instead of a throughput run (RSS per connection; a second table).

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import type { IdleCloseJob, IdleClosed, IdleOpenJob, IdleOpened, LoadReady, LoadReply, LoadSummary, ThroughputJob } from "./loadgen.js";
import { AUTOCANNON_METHODS_MODULE, DEFAULT_RESULTS_DIR, GC_ON_SIGNAL_MODULE, ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { compareResponses, fetchOne, type RawResponse } from "./probe.js";
import { withoutSettings } from "../src/config.js";
import {
  NODE_EXE,
  clockTicksPerSecond,
  cpuTicks,
  descendants,
  detectPinning,
  exePath,
  openFilesLimit,
  pinPid,
  pinnedNode,
  procStatus,
  systemTicks,
  type Pinning,
} from "./proc.js";
import {
  SERVER_LABEL,
  idleLegend,
  idleTable,
  legend,
  markdownTable,
  summarize,
  summarizeIdle,
  type IdleRecord,
  type RunIdentity,
  type IdleSummaryRow,
  type RunRecord,
  type ServerKind,
  type SummaryRow,
} from "./report.js";
import { QUICK_SCENARIOS, SCENARIOS, answersAsExpected, bodyCheck, checkScenarios, extraMethods, type RequestSpec, type Scenario } from "./scenarios.js";

// ---------------------------------------------------------------- options

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number | undefined;
  rounds: number;
  scenarios: string[] | undefined;
  quick: boolean;
  resultsDir: string;
  /** Before each run, wait up to this many seconds for other processes to go quiet (0: do not wait). */
  waitQuiet: number;
  /** How many times a run disturbed by other load is measured again. */
  retries: number;
  /** Overrides the idle connections of idle-* scenarios. */
  idleConnections: number | undefined;
  help: boolean;
}

/** Idle connections per server with --quick (unless --idle-connections says otherwise). */
const QUICK_IDLE_CONNECTIONS = 500;

const USAGE = `Usage: npm run bench -- [options]

Benchmarks startline against node:http and a no-parse node:net "ceiling"
server; prints a markdown table of medians; writes every run as JSON to
bench/results/<timestamp>.json.

Options:
  --duration <s>       seconds per measured run, whole (default 10; autocannon
                       ends runs on whole seconds)
  --warmup <s>         seconds of warm-up before each measured run, whole
                       (default 2; 0: none)
  --connections <n>    concurrent connections (default 100)
  --pipelining <n>     requests in flight per connection, for every scenario
                       (default: each scenario's own)
  --rounds <n>         rounds; each server runs once per round per scenario,
                       in an order that rotates (default 3)
  --scenarios <a,b>    only these scenarios (default all): ${SCENARIOS.map((s) => s.name).join(", ")}
  --quick              smoke run: 1 s runs, no warm-up, 1 round,
                       10 connections, ${QUICK_IDLE_CONNECTIONS} idle connections, and only
                       ${QUICK_SCENARIOS.join(", ")}
                       (explicit options still win)
  --idle-connections <n>
                       idle connections per server in idle-* scenarios
                       (default: the scenario's, 10000)
  --results-dir <dir>  where to write the JSON (default bench/results)
  --retries <n>        measure a run again, up to <n> times, when other
                       processes used over 10% of a core during it (default 2,
                       0 with --quick; a run without a single response is
                       measured again at least once)
  --wait-quiet <s>     before each run, wait up to <s> seconds until other
                       processes use under 10% of a core (default 0: no wait;
                       for shared machines)
  --help               this text

Exit status: 0 when every run succeeded with only 2xx responses, no errors
and the same responses from every server; 1 otherwise; 2 on bad options.`;

class UsageError extends Error {}

function parseOptions(argv: readonly string[]): Options {
  const given = new Map<string, string | true>();
  const valued = new Set(["duration", "warmup", "connections", "pipelining", "rounds", "scenarios", "results-dir", "wait-quiet", "retries", "idle-connections"]);
  const flags = new Set(["quick", "help"]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h") {
      given.set("help", true);
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (m === null) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
    const name = m[1]!;
    if (flags.has(name)) {
      if (m[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      given.set(name, true);
    } else if (valued.has(name)) {
      const value = m[2] ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      given.set(name, value);
    } else throw new UsageError(`unknown option --${name}`);
  }
  const quick = given.has("quick");
  const number = (name: string, fallback: number, min: number, integer: boolean): number => {
    const raw = given.get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw === true || raw === "" || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new UsageError(`--${name} must be ${integer ? "a whole number" : "a number"} >= ${min}, got ${JSON.stringify(raw)}`);
    }
    return n;
  };
  const scenarios = given.get("scenarios");
  const resultsDir = given.get("results-dir");
  return {
    // Whole seconds: autocannon checks whether a run is over once a second, so 0.5 s would last 1 s anyway.
    duration: number("duration", quick ? 1 : 10, 1, true),
    warmup: number("warmup", quick ? 0 : 2, 0, true),
    connections: number("connections", quick ? 10 : 100, 1, true),
    pipelining: given.has("pipelining") ? number("pipelining", 1, 1, true) : undefined,
    rounds: number("rounds", quick ? 1 : 3, 1, true),
    scenarios: typeof scenarios === "string" ? scenarios.split(",").map((s) => s.trim()).filter((s) => s !== "") : undefined,
    quick,
    resultsDir: typeof resultsDir === "string" ? resultsDir : DEFAULT_RESULTS_DIR,
    waitQuiet: number("wait-quiet", 0, 0, false),
    retries: number("retries", quick ? 0 : 2, 0, true),
    idleConnections: given.has("idle-connections") ? number("idle-connections", 1, 1, true) : quick ? QUICK_IDLE_CONNECTIONS : undefined,
    help: given.has("help"),
  };
}


// ---------------------------------------------------------------- the bench's own files

/** A temporary directory for the run: the throwaway certificate, node:http's state files, startline's DATA_DIRs under WORKERS. */
interface Workspace {
  readonly dir: string;
  /** The throwaway certificate, when an HTTPS scenario runs. */
  readonly tls: { readonly certPath: string; readonly keyPath: string; readonly cert: Buffer } | undefined;
}

/** A self-signed P-256 certificate for 127.0.0.1, valid one day, made with openssl; never leaves the temporary directory. */
function makeCertificate(dir: string): NonNullable<Workspace["tls"]> {
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-keyout", keyPath, "-out", certPath, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  return { certPath, keyPath, cert: readFileSync(certPath) };
}

let dataDirs = 0;

// ---------------------------------------------------------------- servers

interface RunningServer {
  readonly kind: ServerKind;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** /proc/<pid>/exe once listening: node itself. */
  readonly exe: string;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  output(): string;
}

/** What the reference servers read besides startline's own settings (src/config.ts, SETTING_NAMES). */
const REFERENCE_SETTINGS = ["STATE_FILE", "CEILING_RESPONSE_B64"];

/** The caller's environment without any server setting: each scenario sets exactly the ones it runs with. */
function inheritedEnv(): Record<string, string> {
  const env = withoutSettings(process.env);
  for (const name of REFERENCE_SETTINGS) delete env[name];
  return env;
}

/** The cores a scenario's servers may use: the server core, or every core for cluster workers. */
function serverCores(pinning: Pinning, scenario: Scenario): string {
  return (scenario.workers ?? 1) > 1 ? `${Math.min(pinning.serverCore, pinning.clientCore)}-${Math.max(pinning.serverCore, pinning.clientCore)}` : String(pinning.serverCore);
}

/** Idle connections a scenario holds per server (0: not an idle scenario). */
function idleConnections(ctx: Context, scenario: Scenario): number {
  return scenario.idle === undefined ? 0 : (ctx.options.idleConnections ?? scenario.idle.connections);
}

/** Open files a process needs to hold `connections` sockets, with room for the rest. */
const openFilesFor = (connections: number) => connections + 1024;

async function startServer(ctx: Context, kind: ServerKind, scenario: Scenario, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const workers = scenario.workers ?? 1;
  const env: Record<string, string> = { ...inheritedEnv(), ...scenario.env };
  let script: string;
  switch (kind) {
    case "startline":
      script = STARTLINE_MAIN;
      env.QUIET = "1";
      // WORKERS needs a database on disk; a fresh one per start, like :memory:.
      env.DATA_DIR = workers > 1 ? join(ctx.workspace.dir, `data-${++dataDirs}`) : ":memory:";
      if (workers > 1) mkdirSync(env.DATA_DIR, { recursive: true });
      break;
    case "node-http":
      script = benchScript("servers/node-http");
      break;
    case "ceiling":
      script = benchScript("servers/ceiling");
      break;
  }
  if (scenario.tls) {
    if (ctx.workspace.tls === undefined) throw new Error(`${scenario.name} needs the throwaway certificate, which could not be made`);
    env.TLS_CERT = ctx.workspace.tls.certPath;
    env.TLS_KEY = ctx.workspace.tls.keyPath;
  }
  if (workers > 1) env.WORKERS = String(workers);
  Object.assign(env, extraEnv, { PORT: "0", HOST: "127.0.0.1" });

  const idle = idleConnections(ctx, scenario);
  // Idle scenarios: a full GC on SIGUSR2 before each RSS reading (bench/gc-on-signal.cjs).
  const nodeArgs = idle > 0 ? ["--expose-gc", "--require", GC_ON_SIGNAL_MODULE, script] : [script];
  const [command, args] = pinnedNode(ctx.pinning, serverCores(ctx.pinning, scenario), nodeArgs, idle > 0 ? openFilesFor(idle) : undefined);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (s: string) => (output += s));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not print "listening on" within 10 s:\n${output}`)), 10_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (code ${code}, signal ${signal}) before listening:\n${output}`));
    });
    let buffered = "";
    child.stdout!.on("data", (s: string) => {
      output += s;
      buffered += s;
      const m = /listening on https?:\/\/[^\s]*:(\d+)/.exec(buffered);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const pid = child.pid!;
  // taskset (and bash, when it raises the open-files limit) exec node, so the
  // pid must now be node itself; if it were a wrapper, /proc would measure the wrapper.
  const exe = exePath(pid);
  if (exe !== NODE_EXE) {
    child.kill("SIGKILL");
    throw new Error(`pid ${pid} runs ${exe}, not ${NODE_EXE}: the measurement would miss the server`);
  }
  if (idle > 0) {
    const limit = openFilesLimit(pid);
    if (limit < idle + 100) {
      child.kill("SIGKILL");
      throw new Error(`${SERVER_LABEL[kind]} may open ${limit} files, not enough for ${idle} connections (the hard limit is too low, and could not be raised)`);
    }
  }
  return { kind, child, pid, port, exe, exited, output: () => output };
}

async function stopServer(server: RunningServer): Promise<{ code: number | null; signal: string | null }> {
  server.child.kill("SIGTERM");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), 15_000);
  const result = await server.exited;
  clearTimeout(timer);
  return result;
}

/** Sends the scenario's setup requests to a server, one connection each; each must answer 2xx. */
async function runSetup(ctx: Context, server: RunningServer, setup: readonly RequestSpec[]): Promise<void> {
  for (const request of setup) {
    const response = await fetchOne(server.port, request, { ca: ctx.currentCa });
    if (response.status < 200 || response.status > 299) {
      throw new Error(`setup request ${request.method} ${request.path} answered ${JSON.stringify(response.statusLine)}: ${response.body.toString("utf8").slice(0, 500)}`);
    }
  }
}

// ---------------------------------------------------------------- load generator

class LoadGenerator {
  private readonly pending = new Map<number, { resolve: (r: LoadReply & { ok: true }) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private readonly exited: Promise<void>;
  private readonly ready: Promise<LoadReady>;

  private constructor(readonly child: ChildProcess) {
    const lines = createInterface({ input: child.stdout! });
    let onReady: (ready: LoadReady) => void = () => {};
    this.ready = new Promise((resolve) => (onReady = resolve));
    lines.on("line", (line) => {
      const parsed = JSON.parse(line) as LoadReply | LoadReady;
      if ("ready" in parsed) {
        onReady(parsed);
        return;
      }
      const reply = parsed;
      const waiter = this.pending.get(reply.id);
      if (waiter === undefined) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply);
      else waiter.reject(new Error(`load generator: ${reply.error}`));
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        for (const waiter of this.pending.values()) waiter.reject(new Error(`load generator exited (code ${code}, signal ${signal})`));
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** Resolves once the load generator runs (node itself, after taskset's exec), with the methods autocannon accepts there. */
  async whenReady(): Promise<LoadReady> {
    const exited = this.exited.then(() => {
      throw new Error("the load generator exited before it was ready");
    });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the load generator did not start within 10 s")), 10_000).unref());
    return Promise.race([this.ready, exited, timeout]);
  }

  /** `openFiles`: raise its limit on open files that far (for idle connections). */
  static start(pinning: Pinning, methods: readonly string[], openFiles: number | undefined): LoadGenerator {
    // --require makes autocannon accept the extra methods (bench/autocannon-methods.cjs,
    // found from the repository root, as it is not compiled into dist/).
    const [command, args] = pinnedNode(pinning, pinning.clientCore, ["--require", AUTOCANNON_METHODS_MODULE, benchScript("loadgen")], openFiles);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, AUTOCANNON_EXTRA_METHODS: methods.join(",") },
      stdio: ["pipe", "pipe", "inherit"],
    });
    return new LoadGenerator(child);
  }

  private send(job: Omit<ThroughputJob, "id"> | Omit<IdleOpenJob, "id"> | Omit<IdleCloseJob, "id">): Promise<LoadReply & { ok: true }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(JSON.stringify({ ...job, id }) + "\n");
    });
  }

  async run(job: Omit<ThroughputJob, "id" | "kind">): Promise<LoadSummary> {
    const reply = await this.send({ ...job, kind: "throughput" });
    if (reply.summary === undefined) throw new Error("load generator: no summary");
    return reply.summary;
  }

  async idleOpen(port: number, request: RequestSpec, connections: number): Promise<IdleOpened> {
    const reply = await this.send({ kind: "idle-open", port, request, connections, concurrency: 100, timeoutMs: 10_000 });
    if (reply.opened === undefined) throw new Error("load generator: no idle-open result");
    return reply.opened;
  }

  async idleClose(): Promise<IdleClosed> {
    const reply = await this.send({ kind: "idle-close" });
    if (reply.closed === undefined) throw new Error("load generator: no idle-close result");
    return reply.closed;
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.exited;
  }
}

// ---------------------------------------------------------------- measuring

const KIB_PER_MIB = 1024;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

interface Context {
  readonly options: Options;
  readonly pinning: Pinning;
  readonly loadgen: LoadGenerator;
  readonly workspace: Workspace;
  readonly problems: string[];
  /** Worth knowing, but the figures stand. */
  readonly warnings: string[];
  /** The certificate to verify the current scenario's servers with (HTTPS scenarios). */
  currentCa: Buffer | undefined;
}

/** What startline answered to the scenario's first request, and the state node:http starts with. */
interface Reference {
  readonly response: RawResponse;
  /** JSON {posts, facts} as startline listed them after the setup requests. */
  readonly stateFile: string | undefined;
}

/** The server and its descendants (a cluster primary's workers). */
function processTree(pid: number): number[] {
  return [pid, ...descendants(pid)];
}

/**
 * The process tree once it is complete: a cluster primary says it listens as
 * soon as its first worker does, and the others may still be starting.
 * Gives up after 10 s (the check after the run then reports the count).
 */
async function waitForProcesses(pid: number, workers: number): Promise<number[]> {
  const expected = workers > 1 ? workers + 1 : 1;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = processTree(pid);
    if (pids.length >= expected || Date.now() > deadline) return pids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

function identity(scenario: Scenario, server: ServerKind, round: number, position: number, proc: { pid: number; exe: string }, cpusAllowed: string): RunIdentity {
  return { scenario: scenario.name, server, round, position, pid: proc.pid, exe: proc.exe, cpusAllowed };
}

async function measure(ctx: Context, scenario: Scenario, kind: ServerKind, reference: Reference, round: number, position: number): Promise<RunRecord> {
  const { options, loadgen } = ctx;
  const extraEnv: Record<string, string> =
    kind === "ceiling"
      ? { CEILING_RESPONSE_B64: reference.response.raw.toString("base64") }
      : kind === "node-http" && reference.stateFile !== undefined
        ? { STATE_FILE: reference.stateFile }
        : {};
  const server = await startServer(ctx, kind, scenario, extraEnv);
  try {
    if (kind === "startline" && scenario.setup !== undefined) await runSetup(ctx, server, scenario.setup);
    const first = scenario.requests[0]!;
    const responseDiffs = compareResponses(reference.response, await fetchOne(server.port, first, { ca: ctx.currentCa }), bodyCheck(scenario, kind));
    const job = {
      url: `${scenario.tls ? "https" : "http"}://127.0.0.1:${server.port}`,
      requests: scenario.requests,
      connections: options.connections,
      pipelining: options.pipelining ?? scenario.pipelining,
      ...(scenario.status === undefined ? { timeout: 10 } : { timeout: 10, status: scenario.status }),
    };
    const warmup = options.warmup > 0 ? await loadgen.run({ ...job, duration: options.warmup }) : null;
    const pids = await waitForProcesses(server.pid, scenario.workers ?? 1);
    const processes = pids.map((pid) => ({ pid, cpusAllowed: procStatus(pid).cpusAllowed }));
    const othersBefore = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const systemBefore = systemTicks();
    const ticksBefore = sum(pids.map(cpuTicks));
    const rssBefore = sum(pids.map((pid) => procStatus(pid).rssKiB));
    const measured = await loadgen.run({ ...job, duration: options.duration });
    const ticksAfter = sum(pids.map(cpuTicks));
    const rssAfter = sum(pids.map((pid) => procStatus(pid).rssKiB));
    const peak = procStatus(server.pid).hwmKiB;
    const systemAfter = systemTicks();
    const othersAfter = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const pidsAfter = processTree(server.pid);
    if (pidsAfter.join(",") !== pids.join(",")) {
      ctx.problems.push(`${scenario.name} / ${SERVER_LABEL[kind]} / round ${round}: its processes changed during the run (${pids.join(", ")} -> ${pidsAfter.join(", ")})`);
    }
    const exit = await stopServer(server);
    const hz = clockTicksPerSecond();
    const totalUs = ((ticksAfter - ticksBefore) * 1e6) / hz;
    const cores = (ticks: number) => (measured.durationS > 0 ? ticks / hz / measured.durationS : Number.NaN);
    const ours = ticksAfter - ticksBefore + othersAfter - othersBefore;
    return {
      ...identity(scenario, kind, round, position, server, processes[0]!.cpusAllowed),
      processes,
      responseDiffs,
      warmup,
      measured,
      cpu: {
        ticksBefore,
        ticksAfter,
        clockTicksPerSecond: hz,
        totalUs,
        usPerRequest: measured.requests > 0 ? totalUs / measured.requests : Number.NaN,
        share: measured.durationS > 0 ? totalUs / 1e6 / measured.durationS : Number.NaN,
      },
      rss: { beforeMiB: rssBefore / KIB_PER_MIB, afterMiB: rssAfter / KIB_PER_MIB, peakMiB: peak / KIB_PER_MIB },
      machine: {
        otherCpu: cores(Math.max(0, systemAfter.busy - systemBefore.busy - ours)),
        irqCpu: cores(systemAfter.irq - systemBefore.irq),
        stealCpu: cores(systemAfter.steal - systemBefore.steal),
      },
      exit: { code: exit.code, signal: exit.signal },
    };
  } catch (error) {
    server.child.kill("SIGKILL");
    await server.exited;
    const out = server.output().trim();
    throw new Error(`${SERVER_LABEL[kind]} in ${scenario.name}: ${error instanceof Error ? error.message : String(error)}${out ? `\nserver output:\n${out}` : ""}`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the server is left alone before each RSS reading, so that what was allocated settles (--quick: less). */
const settleMs = (options: Options) => (options.quick ? 300 : 1000);

/** Its resident memory after a full garbage collection (SIGUSR2: bench/gc-on-signal.cjs) and a pause. */
async function settledStatus(ctx: Context, pid: number) {
  process.kill(pid, "SIGUSR2");
  await sleep(settleMs(ctx.options));
  return procStatus(pid);
}

async function measureIdle(ctx: Context, scenario: Scenario, kind: ServerKind, reference: Reference, round: number, position: number): Promise<IdleRecord> {
  const { loadgen } = ctx;
  const connections = idleConnections(ctx, scenario);
  const extraEnv: Record<string, string> = kind === "ceiling" ? { CEILING_RESPONSE_B64: reference.response.raw.toString("base64") } : {};
  const server = await startServer(ctx, kind, scenario, extraEnv);
  let holding = false;
  try {
    if (kind === "startline" && scenario.setup !== undefined) await runSetup(ctx, server, scenario.setup);
    const responseDiffs = compareResponses(reference.response, await fetchOne(server.port, scenario.requests[0]!), bodyCheck(scenario, kind));
    const cpusAllowed = procStatus(server.pid).cpusAllowed;
    const limit = openFilesLimit(server.pid);
    const before = (await settledStatus(ctx, server.pid)).rssKiB;
    const wallStart = process.hrtime.bigint();
    const othersBefore = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const systemBefore = systemTicks();
    const ticksBefore = cpuTicks(server.pid);
    holding = true;
    const opened = await loadgen.idleOpen(server.port, scenario.requests[0]!, connections);
    const ticksOpened = cpuTicks(server.pid);
    const held = await settledStatus(ctx, server.pid);
    const closed = await loadgen.idleClose();
    holding = false;
    const ticksAfter = cpuTicks(server.pid);
    const systemAfter = systemTicks();
    const othersAfter = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const wallS = Number(process.hrtime.bigint() - wallStart) / 1e9;
    const exit = await stopServer(server);
    const hz = clockTicksPerSecond();
    const ours = ticksAfter - ticksBefore + othersAfter - othersBefore;
    // Those still open when they were closed at the end: every one, unless the server closed some.
    const heldCount = closed.closed - closed.closedEarly;
    return {
      ...identity(scenario, kind, round, position, server, cpusAllowed),
      openFilesLimit: limit,
      responseDiffs,
      connections,
      opened,
      closed,
      rss: { beforeKiB: before, withKiB: held.rssKiB, peakKiB: held.hwmKiB },
      kibPerConnection: heldCount > 0 ? (held.rssKiB - before) / heldCount : Number.NaN,
      cpuUsPerConnection: heldCount > 0 ? ((ticksOpened - ticksBefore) * 1e6) / hz / heldCount : Number.NaN,
      machine: {
        otherCpu: Math.max(0, systemAfter.busy - systemBefore.busy - ours) / hz / wallS,
        stealCpu: (systemAfter.steal - systemBefore.steal) / hz / wallS,
      },
      exit: { code: exit.code, signal: exit.signal },
    };
  } catch (error) {
    if (holding) await loadgen.idleClose().catch(() => undefined);
    server.child.kill("SIGKILL");
    await server.exited;
    const out = server.output().trim();
    throw new Error(`${SERVER_LABEL[kind]} in ${scenario.name}: ${error instanceof Error ? error.message : String(error)}${out ? `\nserver output:\n${out}` : ""}`);
  }
}

/**
 * The response a fresh startline gives to the scenario's first request (after
 * the setup requests): what the others must match, and what the ceiling
 * replays. Also the state node:http starts with: the posts and facts this
 * startline lists right after the setup, before that first request.
 */
async function captureReference(ctx: Context, scenario: Scenario): Promise<Reference> {
  const server = await startServer(ctx, "startline", scenario);
  try {
    let stateFile: string | undefined;
    if (scenario.setup !== undefined) await runSetup(ctx, server, scenario.setup);
    if (scenario.idle === undefined && scenario.nodeHttpUnsupported === undefined) {
      const list = async (path: string) => {
        const r = await fetchOne(server.port, { method: "GET", path, headers: { Accept: "application/json" } }, { ca: ctx.currentCa });
        if (r.status !== 200) throw new Error(`GET ${path} answered ${JSON.stringify(r.statusLine)}`);
        return JSON.parse(r.body.toString("utf8")) as Record<string, unknown>;
      };
      const state = { posts: (await list("/api/v1/posts")).posts, facts: (await list("/api/v2/facts")).facts };
      stateFile = join(ctx.workspace.dir, `state-${scenario.name}.json`);
      writeFileSync(stateFile, JSON.stringify(state));
    }
    return { response: await fetchOne(server.port, scenario.requests[0]!, { ca: ctx.currentCa }), stateFile };
  } catch (error) {
    const out = server.output().trim();
    throw new Error(`startline in ${scenario.name}, capturing its response: ${error instanceof Error ? error.message : String(error)}${out ? `\nserver output:\n${out}` : ""}`);
  } finally {
    await stopServer(server);
  }
}

/** "0-1,3" -> "0,1,3". */
function expandCpuList(list: string): string {
  return list
    .split(",")
    .flatMap((part) => {
      const [from, to] = part.split("-").map(Number);
      if (to === undefined) return [from!];
      return Array.from({ length: to - from! + 1 }, (_, i) => from! + i);
    })
    .join(",");
}

function checkCores(ctx: Context, where: string, scenario: Scenario, processes: ReadonlyArray<{ pid: number; cpusAllowed: string }>): void {
  if (!ctx.pinning.enabled) return;
  const expected = expandCpuList(serverCores(ctx.pinning, scenario));
  for (const p of processes) {
    if (expandCpuList(p.cpusAllowed) !== expected) ctx.problems.push(`${where}: pid ${p.pid} allowed on cores ${p.cpusAllowed}, expected ${serverCores(ctx.pinning, scenario)}`);
  }
}

/** `discarded`: a run measured again; what went wrong still counts, but for having no response at all. */
function checkRun(ctx: Context, scenario: Scenario, run: RunRecord, discarded = false): void {
  const where = `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}`;
  const m = run.measured;
  if (m.non2xx > 0 || m.errors > 0 || m.mismatches > 0) {
    ctx.problems.push(`${where}: ${m.non2xx} non-2xx (status codes ${JSON.stringify(m.statusCodes)}), ${m.errors} errors (${m.timeouts} timeouts), ${m.mismatches} mismatches`);
  }
  if (run.warmup !== null && (run.warmup.non2xx > 0 || run.warmup.errors > 0)) {
    ctx.problems.push(`${where}: warm-up had ${run.warmup.non2xx} non-2xx and ${run.warmup.errors} errors`);
  }
  if (m.requests === 0 && !discarded) ctx.problems.push(`${where}: no response at all`);
  for (const diff of run.responseDiffs) ctx.problems.push(`${where}: response differs from startline's: ${diff}`);
  if (run.exit.code !== 0) ctx.problems.push(`${where}: server exit code ${run.exit.code} (signal ${run.exit.signal}) on SIGTERM`);
  const workers = scenario.workers ?? 1;
  const expectedProcesses = workers > 1 ? workers + 1 : 1;
  if (run.processes.length !== expectedProcesses) {
    ctx.problems.push(`${where}: ${run.processes.length} process(es) measured (${run.processes.map((p) => p.pid).join(", ")}), expected ${expectedProcesses}`);
  }
  checkCores(ctx, where, scenario, run.processes);
}

function checkIdle(ctx: Context, scenario: Scenario, run: IdleRecord): void {
  const where = `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}`;
  const { opened, closed } = run;
  if (opened.failed > 0 || opened.non2xx > 0) {
    ctx.problems.push(`${where}: ${opened.failed} of ${run.connections} connections failed, ${opened.non2xx} answers not 2xx (${opened.errors.join("; ")})`);
  }
  if (closed.closedEarly > 0) ctx.problems.push(`${where}: the server closed ${closed.closedEarly} idle connections during the measurement`);
  if (closed.closed - closed.closedEarly < run.connections) ctx.problems.push(`${where}: held ${closed.closed - closed.closedEarly} connections, not ${run.connections}`);
  for (const diff of run.responseDiffs) ctx.problems.push(`${where}: response differs from startline's: ${diff}`);
  if (run.exit.code !== 0) ctx.problems.push(`${where}: server exit code ${run.exit.code} (signal ${run.exit.signal}) on SIGTERM`);
  checkCores(ctx, where, scenario, [{ pid: run.pid, cpusAllowed: run.cpusAllowed }]);
}

/** Other processes busy above this share of a core during a run: its figures are suspect. */
const BUSY_MACHINE = 0.1;

function disturbed(run: { readonly machine: { readonly otherCpu: number; readonly stealCpu: number } }): boolean {
  return run.machine.otherCpu > BUSY_MACHINE || run.machine.stealCpu > BUSY_MACHINE;
}

function logRun(run: RunRecord, rounds: number): void {
  const m = run.measured;
  log(
    `  ${run.scenario} r${run.round}/${rounds} ${SERVER_LABEL[run.server].padEnd(9)} ${Math.round(m.reqPerSec).toString().padStart(7)} req/s ` +
      `p50 ${m.latencyMs.p50.toFixed(2)} ms p99 ${m.latencyMs.p99.toFixed(2)} ms ${run.cpu.usPerRequest.toFixed(1)} µs/req ` +
      `rss ${run.rss.afterMiB.toFixed(1)} MiB non-2xx ${m.non2xx} errors ${m.errors} ` +
      `(cpu: server ${(run.cpu.share * 100).toFixed(0)}%, client ${(m.loadgenCpuShare * 100).toFixed(0)}%, others ${(run.machine.otherCpu * 100).toFixed(0)}%)`,
  );
}

function logIdle(run: IdleRecord, rounds: number): void {
  log(
    `  ${run.scenario} r${run.round}/${rounds} ${SERVER_LABEL[run.server].padEnd(9)} ${run.closed.closed - run.closed.closedEarly} idle connections ` +
      `(opened in ${(run.opened.openingMs / 1000).toFixed(1)} s): rss ${(run.rss.beforeKiB / 1024).toFixed(1)} -> ${(run.rss.withKiB / 1024).toFixed(1)} MiB, ` +
      `${run.kibPerConnection.toFixed(2)} KiB/connection, ${run.cpuUsPerConnection.toFixed(1)} µs CPU/connection; ` +
      `failed ${run.opened.failed}, closed early ${run.closed.closedEarly} (others ${(run.machine.otherCpu * 100).toFixed(0)}%)`,
  );
}

function checkMachine(ctx: Context, run: { readonly scenario: string; readonly server: ServerKind; readonly round: number; readonly machine: { readonly otherCpu: number; readonly stealCpu: number } }): void {
  const { otherCpu, stealCpu } = run.machine;
  if (disturbed(run)) {
    ctx.warnings.push(
      `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}: the machine was busy with other work ` +
        `(other processes ${(otherCpu * 100).toFixed(0)}% of a core, hypervisor steal ${(stealCpu * 100).toFixed(0)}%)`,
    );
  }
}

/** Waits until the rest of the machine (all but the load generator and this process) is quiet, at most `seconds`. */
async function waitQuiet(ctx: Context, seconds: number): Promise<void> {
  if (seconds <= 0) return;
  const deadline = Date.now() + seconds * 1000;
  const ours = () => cpuTicks(ctx.loadgen.child.pid!) + cpuTicks(process.pid);
  for (;;) {
    const system0 = systemTicks();
    const ours0 = ours();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const other = (systemTicks().busy - system0.busy - (ours() - ours0)) / clockTicksPerSecond();
    if (other <= BUSY_MACHINE) return;
    if (Date.now() >= deadline) {
      log(`  (still ${(other * 100).toFixed(0)}% of a core busy with other work after waiting ${seconds} s; going on)`);
      return;
    }
  }
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

// ---------------------------------------------------------------- main

async function main(argv: readonly string[]): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`bench: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }

  checkScenarios(SCENARIOS);
  let scenarios: readonly Scenario[] = options.quick ? SCENARIOS.filter((s) => QUICK_SCENARIOS.includes(s.name)) : SCENARIOS;
  if (options.scenarios !== undefined) {
    const unknown = options.scenarios.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length > 0 || options.scenarios.length === 0) {
      console.error(`bench: unknown scenario ${unknown.join(", ") || "(none given)"}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
      return 2;
    }
    scenarios = SCENARIOS.filter((s) => options.scenarios!.includes(s.name));
  }

  for (const file of [STARTLINE_MAIN, benchScript("servers/node-http"), benchScript("servers/ceiling"), benchScript("loadgen"), AUTOCANNON_METHODS_MODULE, GC_ON_SIGNAL_MODULE]) {
    if (!existsSync(file)) {
      console.error(`bench: missing ${relative(ROOT, file)} (run it with \`npm run bench\`, which builds first)`);
      return 1;
    }
  }

  const problems: string[] = [];
  const workspaceDir = mkdtempSync(join(tmpdir(), "startline-bench-"));
  let workspaceTls: Workspace["tls"];
  if (scenarios.some((s) => s.tls)) {
    try {
      workspaceTls = makeCertificate(workspaceDir);
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
      problems.push(`cannot make the throwaway certificate with openssl: ${stderr || (error instanceof Error ? error.message : String(error))}`);
      scenarios = scenarios.filter((s) => !s.tls);
    }
  }
  const workspace: Workspace = { dir: workspaceDir, tls: workspaceTls };

  const cores = availableParallelism(); // before pinning this process, which narrows it
  const pinning = detectPinning();
  if (pinning.enabled) pinPid(process.pid, pinning.clientCore);
  const methods = [...new Set(["UPDATE", ...extraMethods(scenarios)])];
  const idleMax = Math.max(0, ...scenarios.map((s) => (s.idle === undefined ? 0 : (options.idleConnections ?? s.idle.connections))));
  const loadgen = LoadGenerator.start(pinning, methods, idleMax > 0 ? openFilesFor(idleMax) : undefined);
  let ready: LoadReady;
  try {
    ready = await loadgen.whenReady();
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    loadgen.child.kill();
    rmSync(workspaceDir, { recursive: true, force: true });
    return 1;
  }
  const loadgenPid = loadgen.child.pid!;
  const loadgenExe = exePath(loadgenPid);
  const ctx: Context = { options, pinning, loadgen, workspace, problems, warnings: [], currentCa: undefined };
  if (loadgenExe !== NODE_EXE) ctx.problems.push(`load generator pid ${loadgenPid} runs ${loadgenExe}, not node`);
  const loadgenCores = procStatus(loadgenPid).cpusAllowed;
  if (pinning.enabled && loadgenCores !== String(pinning.clientCore)) ctx.problems.push(`load generator allowed on cores ${loadgenCores}, expected ${pinning.clientCore}`);
  const loadgenOpenFiles = openFilesLimit(loadgenPid);
  if (idleMax > 0 && loadgenOpenFiles < idleMax + 100) {
    ctx.problems.push(`the load generator may open ${loadgenOpenFiles} files, not enough for ${idleMax} idle connections (the hard limit is too low, and could not be raised)`);
    scenarios = scenarios.filter((s) => s.idle === undefined);
  }
  const refused = methods.filter((m) => !ready.methods.includes(m));
  if (refused.length > 0) ctx.problems.push(`autocannon in the load generator still refuses ${refused.join(", ")} (bench/autocannon-methods.cjs not loaded?)`);

  const startedAt = new Date();
  const perRun = options.warmup + options.duration + (options.warmup > 0 ? 1 : 0.6);
  const estimate = scenarios.reduce((total, s) => {
    const servers = s.nodeHttpUnsupported === undefined ? 3 : 2;
    const perServer = s.idle === undefined ? perRun : 2 * (settleMs(options) / 1000) + 1 + idleConnections(ctx, s) / 4000;
    return total + 1 + servers * perServer * options.rounds;
  }, 0);
  log(
    `bench: ${scenarios.length} scenario(s) (${scenarios.map((s) => s.name).join(", ")}) × ${options.rounds} round(s), ` +
      `${options.duration} s runs after ${options.warmup} s warm-up, ${options.connections} connections; about ${Math.ceil(estimate)} s. ` +
      (pinning.enabled ? `Servers on core ${pinning.serverCore}, load generator on core ${pinning.clientCore}.` : `Not pinned: ${pinning.reason}.`),
  );

  const runs: RunRecord[] = [];
  const idleRuns: IdleRecord[] = [];
  /** Runs disturbed by other load and measured again; kept in the JSON, left out of the table. */
  const discarded: RunRecord[] = [];
  const rows: SummaryRow[] = [];
  const idleRows: IdleSummaryRow[] = [];
  try {
    for (const scenario of scenarios) {
      const servers: ServerKind[] = scenario.nodeHttpUnsupported === undefined ? ["startline", "node-http", "ceiling"] : ["startline", "ceiling"];
      ctx.currentCa = scenario.tls ? workspace.tls?.cert : undefined;
      let reference: Reference;
      try {
        reference = await captureReference(ctx, scenario);
      } catch (error) {
        // One scenario that cannot start is a problem, not the end of the others.
        ctx.problems.push(`${scenario.name}: skipped: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      const template = reference.response;
      if (!answersAsExpected(scenario, template.status)) {
        ctx.problems.push(`${scenario.name}: startline answers ${JSON.stringify(template.statusLine)} to ${scenario.requests[0]!.method} ${scenario.requests[0]!.path}`);
      }
      const mine: RunRecord[] = [];
      const mineIdle: IdleRecord[] = [];
      for (let round = 1; round <= options.rounds; round++) {
        const order = rotate(servers, round - 1);
        for (const [index, kind] of order.entries()) {
          if (scenario.idle !== undefined) {
            // RSS does not suffer from other processes' CPU load the way throughput does: no retries.
            await waitQuiet(ctx, options.waitQuiet);
            const run = await measureIdle(ctx, scenario, kind, reference, round, index + 1);
            checkIdle(ctx, scenario, run);
            logIdle(run, options.rounds);
            idleRuns.push(run);
            mineIdle.push(run);
            continue;
          }
          let run: RunRecord | undefined;
          for (let attempt = 0; ; attempt++) {
            await waitQuiet(ctx, options.waitQuiet);
            run = await measure(ctx, scenario, kind, reference, round, index + 1);
            logRun(run, options.rounds);
            // Other processes took CPU during the run: measure it again, keep this one aside. A run
            // without a single response (the server starved for the whole run on a busy machine) is
            // measured again at least once, even with --retries 0.
            const empty = run.measured.requests === 0;
            const retries = empty ? Math.max(1, options.retries) : options.retries;
            if (!(disturbed(run) || empty) || attempt >= retries) break;
            checkRun(ctx, scenario, run, true);
            discarded.push(run);
            log(`    (${empty ? "no response at all" : "disturbed by other load"}; again, ${retries - attempt} retr${retries - attempt === 1 ? "y" : "ies"} left)`);
          }
          checkRun(ctx, scenario, run);
          checkMachine(ctx, run);
          runs.push(run);
          mine.push(run);
        }
      }
      for (const kind of ["startline", "node-http", "ceiling"] as const) {
        if (scenario.idle !== undefined) idleRows.push(summarizeIdle(scenario.name, kind, mineIdle.filter((r) => r.server === kind)));
        else if (kind === "node-http" && scenario.nodeHttpUnsupported !== undefined) rows.push(summarize(scenario.name, kind, [], scenario.nodeHttpUnsupported));
        else rows.push(summarize(scenario.name, kind, mine.filter((r) => r.server === kind)));
      }
    }
  } catch (error) {
    ctx.problems.push(`aborted: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await loadgen.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  }

  const cpu = cpus()[0];
  const results = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    options,
    environment: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpuModel: cpu?.model ?? "unknown",
      cores,
      clockTicksPerSecond: clockTicksPerSecond(),
      pinning,
      runnerCpusAllowed: procStatus(process.pid).cpusAllowed,
      loadgen: { pid: loadgenPid, exe: loadgenExe, cpusAllowed: loadgenCores, openFilesLimit: loadgenOpenFiles, extraMethods: methods, acceptedMethods: ready.methods },
    },
    // The setup requests are left out (100 posts' bodies): they are in bench/scenarios.ts.
    scenarios: scenarios.map(({ setup, ...s }) => ({ ...s, setupRequests: setup?.length ?? 0, pipelining: options.pipelining ?? s.pipelining })),
    summary: rows,
    idleSummary: idleRows,
    runs,
    idleRuns,
    discarded,
    problems: ctx.problems,
    warnings: ctx.warnings,
  };
  mkdirSync(options.resultsDir, { recursive: true });
  const resultsFile = join(options.resultsDir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");

  const setup =
    `${options.rounds} round(s) × ${options.duration} s (after ${options.warmup} s warm-up), ${options.connections} connections, ` +
    `pipelining ${options.pipelining ?? "per scenario"}; ${pinning.enabled ? `servers pinned to core ${pinning.serverCore} (cluster workers: cores ${serverCores(pinning, { workers: 2 } as Scenario)}), autocannon to core ${pinning.clientCore}` : `not pinned (${pinning.reason})`}; ` +
    `node ${process.version}, ${cpu?.model ?? "unknown CPU"}`;
  console.log(`\n${setup}\n`);
  if (discarded.length > 0) console.log(`${discarded.length} run(s) disturbed by other load were measured again (the disturbed ones are in the JSON, not in the table).`);
  const stillDisturbed = runs.filter(disturbed).length;
  if (stillDisturbed > 0) console.log(`Other load disturbed ${stillDisturbed} of the ${runs.length} runs in the table (see WARNINGS): treat these figures with caution.`);
  if (discarded.length > 0 || stillDisturbed > 0) console.log("");
  const notes = scenarios.filter((s) => s.note !== undefined && s.idle === undefined).map((s) => [s.name, s.note!] as const);
  if (rows.length > 0) console.log(`${markdownTable(rows)}\n\n${legend(rows, notes)}\n`);
  if (idleRows.length > 0) console.log(`Idle connections:\n\n${idleTable(idleRows)}\n\n${idleLegend()}\n`);
  const shown = relative(process.cwd(), resultsFile);
  console.log(`raw results: ${shown.startsWith("..") ? resultsFile : shown}`);
  if (ctx.warnings.length > 0) {
    console.log(`\nWARNINGS (${ctx.warnings.length}):`);
    for (const w of ctx.warnings) console.log(`- ${w}`);
  }
  if (ctx.problems.length > 0) {
    console.log(`\nPROBLEMS (${ctx.problems.length}):`);
    for (const p of ctx.problems) console.log(`- ${p}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
