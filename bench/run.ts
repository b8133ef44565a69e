// `npm run bench`: startline against node:http and a no-parse "ceiling" server
// on node:net, scenario by scenario. See bench/README.md.
//
// For each scenario and round, each server is started fresh (the order
// rotates from round to round), pinned to core 0; the load generator (a child
// process running autocannon) runs on core 1, and so does this process. After
// a warm-up, the server's CPU time and RSS are read from /proc before and
// after the measured run. Prints one markdown table of medians and writes
// every run to bench/results/<timestamp>.json.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, availableParallelism } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import type { LoadJob, LoadReady, LoadReply, LoadSummary } from "./loadgen.js";
import { AUTOCANNON_METHODS_MODULE, DEFAULT_RESULTS_DIR, ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { compareResponses, fetchOne, type RawResponse } from "./probe.js";
import {
  NODE_EXE,
  clockTicksPerSecond,
  cpuTicks,
  detectPinning,
  exePath,
  pinPid,
  pinnedNode,
  procStatus,
  systemTicks,
  type Pinning,
} from "./proc.js";
import { SERVER_LABEL, legend, markdownTable, summarize, type RunRecord, type ServerKind, type SummaryRow } from "./report.js";
import { SCENARIOS, checkScenarios, extraMethods, type Scenario } from "./scenarios.js";

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
  help: boolean;
}

const USAGE = `Usage: npm run bench -- [options]

Benchmarks startline against node:http and a no-parse node:net "ceiling"
server; prints a markdown table of medians; writes every run as JSON to
bench/results/<timestamp>.json.

Options:
  --duration <s>       seconds per measured run (default 10)
  --warmup <s>         seconds of warm-up before each measured run (default 2)
  --connections <n>    concurrent connections (default 100)
  --pipelining <n>     requests in flight per connection, for every scenario
                       (default: each scenario's own)
  --rounds <n>         rounds; each server runs once per round per scenario,
                       in an order that rotates (default 3)
  --scenarios <a,b>    only these scenarios (default all): ${SCENARIOS.map((s) => s.name).join(", ")}
  --quick              smoke run: 1 s runs, 0.5 s warm-up, 1 round,
                       10 connections (explicit options still win)
  --results-dir <dir>  where to write the JSON (default bench/results)
  --retries <n>        measure a run again, up to <n> times, when other
                       processes used over 10% of a core during it (default 2)
  --wait-quiet <s>     before each run, wait up to <s> seconds until other
                       processes use under 10% of a core (default 0: no wait;
                       for shared machines)
  --help               this text

Exit status: 0 when every run succeeded with only 2xx responses, no errors
and the same responses from every server; 1 otherwise; 2 on bad options.`;

class UsageError extends Error {}

function parseOptions(argv: readonly string[]): Options {
  const given = new Map<string, string | true>();
  const valued = new Set(["duration", "warmup", "connections", "pipelining", "rounds", "scenarios", "results-dir", "wait-quiet", "retries"]);
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
    duration: number("duration", quick ? 1 : 10, 0.1, false),
    warmup: number("warmup", quick ? 0.5 : 2, 0, false),
    connections: number("connections", quick ? 10 : 100, 1, true),
    pipelining: given.has("pipelining") ? number("pipelining", 1, 1, true) : undefined,
    rounds: number("rounds", quick ? 1 : 3, 1, true),
    scenarios: typeof scenarios === "string" ? scenarios.split(",").map((s) => s.trim()).filter((s) => s !== "") : undefined,
    quick,
    resultsDir: typeof resultsDir === "string" ? resultsDir : DEFAULT_RESULTS_DIR,
    waitQuiet: number("wait-quiet", 0, 0, false),
    retries: number("retries", quick ? 0 : 2, 0, true),
    help: given.has("help"),
  };
}

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

function serverCommand(kind: ServerKind): { script: string; env: Record<string, string> } {
  switch (kind) {
    case "startline":
      return { script: STARTLINE_MAIN, env: { QUIET: "1", DATA_DIR: ":memory:" } };
    case "node-http":
      return { script: benchScript("servers/node-http"), env: {} };
    case "ceiling":
      return { script: benchScript("servers/ceiling"), env: {} };
  }
}

async function startServer(kind: ServerKind, pinning: Pinning, extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const { script, env } = serverCommand(kind);
  const [command, args] = pinnedNode(pinning, pinning.serverCore, [script]);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, ...extraEnv, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
      const m = /listening on http:\/\/[^\s]*:(\d+)/.exec(buffered);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  const pid = child.pid!;
  // taskset execs node, so the pid must now be node itself; if it were a
  // wrapper, /proc would measure the wrapper.
  const exe = exePath(pid);
  if (exe !== NODE_EXE) {
    child.kill("SIGKILL");
    throw new Error(`pid ${pid} runs ${exe}, not ${NODE_EXE}: the measurement would miss the server`);
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

// ---------------------------------------------------------------- load generator

class LoadGenerator {
  private readonly pending = new Map<number, { resolve: (s: LoadSummary) => void; reject: (e: Error) => void }>();
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
      if (reply.ok) waiter.resolve(reply.summary);
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

  static start(pinning: Pinning, methods: readonly string[]): LoadGenerator {
    // --require makes autocannon accept the extra methods (bench/autocannon-methods.cjs,
    // found from the repository root, as it is not compiled into dist/).
    const [command, args] = pinnedNode(pinning, pinning.clientCore, ["--require", AUTOCANNON_METHODS_MODULE, benchScript("loadgen")]);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, AUTOCANNON_EXTRA_METHODS: methods.join(",") },
      stdio: ["pipe", "pipe", "inherit"],
    });
    return new LoadGenerator(child);
  }

  run(job: Omit<LoadJob, "id">): Promise<LoadSummary> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(JSON.stringify({ ...job, id }) + "\n");
    });
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
  readonly problems: string[];
  /** Worth knowing, but the figures stand. */
  readonly warnings: string[];
}

async function measure(
  ctx: Context,
  scenario: Scenario,
  kind: ServerKind,
  template: RawResponse,
  round: number,
  position: number,
): Promise<RunRecord> {
  const { options, pinning, loadgen } = ctx;
  const extraEnv: Record<string, string> = kind === "ceiling" ? { CEILING_RESPONSE_B64: template.raw.toString("base64") } : {};
  const server = await startServer(kind, pinning, extraEnv);
  try {
    const cpusAllowed = procStatus(server.pid).cpusAllowed;
    const first = scenario.requests[0]!;
    const responseDiffs = compareResponses(template, await fetchOne(server.port, first), scenario.compareBodies ?? true);
    const job = {
      url: `http://127.0.0.1:${server.port}`,
      requests: scenario.requests,
      connections: options.connections,
      pipelining: options.pipelining ?? scenario.pipelining,
      timeout: 10,
    };
    const warmup = await loadgen.run({ ...job, duration: options.warmup });
    const othersBefore = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const systemBefore = systemTicks();
    const ticksBefore = cpuTicks(server.pid);
    const before = procStatus(server.pid);
    const measured = await loadgen.run({ ...job, duration: options.duration });
    const ticksAfter = cpuTicks(server.pid);
    const after = procStatus(server.pid);
    const systemAfter = systemTicks();
    const othersAfter = cpuTicks(loadgen.child.pid!) + cpuTicks(process.pid);
    const exit = await stopServer(server);
    const hz = clockTicksPerSecond();
    const totalUs = ((ticksAfter - ticksBefore) * 1e6) / hz;
    const cores = (ticks: number) => (measured.durationS > 0 ? ticks / hz / measured.durationS : Number.NaN);
    const ours = ticksAfter - ticksBefore + othersAfter - othersBefore;
    return {
      scenario: scenario.name,
      server: kind,
      round,
      position,
      pid: server.pid,
      exe: server.exe,
      cpusAllowed,
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
      rss: { beforeMiB: before.rssKiB / KIB_PER_MIB, afterMiB: after.rssKiB / KIB_PER_MIB, peakMiB: after.hwmKiB / KIB_PER_MIB },
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

/** The response startline gives to the scenario's first request: what the others must match, and what the ceiling replays. */
async function captureTemplate(scenario: Scenario, pinning: Pinning): Promise<RawResponse> {
  const server = await startServer("startline", pinning);
  try {
    return await fetchOne(server.port, scenario.requests[0]!);
  } finally {
    await stopServer(server);
  }
}

function checkRun(ctx: Context, run: RunRecord): void {
  const where = `${run.scenario} / ${SERVER_LABEL[run.server]} / round ${run.round}`;
  const m = run.measured;
  if (m.non2xx > 0 || m.errors > 0 || m.mismatches > 0) {
    ctx.problems.push(`${where}: ${m.non2xx} non-2xx (status codes ${JSON.stringify(m.statusCodes)}), ${m.errors} errors (${m.timeouts} timeouts), ${m.mismatches} mismatches`);
  }
  if (run.warmup.non2xx > 0 || run.warmup.errors > 0) {
    ctx.problems.push(`${where}: warm-up had ${run.warmup.non2xx} non-2xx and ${run.warmup.errors} errors`);
  }
  if (m.requests === 0) ctx.problems.push(`${where}: no response at all`);
  for (const diff of run.responseDiffs) ctx.problems.push(`${where}: response differs from startline's: ${diff}`);
  if (run.exit.code !== 0) ctx.problems.push(`${where}: server exit code ${run.exit.code} (signal ${run.exit.signal}) on SIGTERM`);
  if (ctx.pinning.enabled && run.cpusAllowed !== String(ctx.pinning.serverCore)) {
    ctx.problems.push(`${where}: server allowed on cores ${run.cpusAllowed}, expected ${ctx.pinning.serverCore}`);
  }
}

/** Other processes busy above this share of a core during a run: its figures are suspect. */
const BUSY_MACHINE = 0.1;

function disturbed(run: RunRecord): boolean {
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

function checkMachine(ctx: Context, run: RunRecord): void {
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
  let scenarios: readonly Scenario[] = SCENARIOS;
  if (options.scenarios !== undefined) {
    const unknown = options.scenarios.filter((n) => !SCENARIOS.some((s) => s.name === n));
    if (unknown.length > 0 || options.scenarios.length === 0) {
      console.error(`bench: unknown scenario ${unknown.join(", ") || "(none given)"}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
      return 2;
    }
    scenarios = SCENARIOS.filter((s) => options.scenarios!.includes(s.name));
  }

  for (const file of [STARTLINE_MAIN, benchScript("servers/node-http"), benchScript("servers/ceiling"), benchScript("loadgen"), AUTOCANNON_METHODS_MODULE]) {
    if (!existsSync(file)) {
      console.error(`bench: missing ${relative(ROOT, file)} (run it with \`npm run bench\`, which builds first)`);
      return 1;
    }
  }

  const cores = availableParallelism(); // before pinning this process, which narrows it
  const pinning = detectPinning();
  if (pinning.enabled) pinPid(process.pid, pinning.clientCore);
  const methods = [...new Set(["UPDATE", ...extraMethods(scenarios)])];
  const loadgen = LoadGenerator.start(pinning, methods);
  let ready: LoadReady;
  try {
    ready = await loadgen.whenReady();
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    loadgen.child.kill();
    return 1;
  }
  const loadgenPid = loadgen.child.pid!;
  const loadgenExe = exePath(loadgenPid);
  const ctx: Context = { options, pinning, loadgen, problems: [], warnings: [] };
  if (loadgenExe !== NODE_EXE) ctx.problems.push(`load generator pid ${loadgenPid} runs ${loadgenExe}, not node`);
  const loadgenCores = procStatus(loadgenPid).cpusAllowed;
  if (pinning.enabled && loadgenCores !== String(pinning.clientCore)) ctx.problems.push(`load generator allowed on cores ${loadgenCores}, expected ${pinning.clientCore}`);
  const refused = methods.filter((m) => !ready.methods.includes(m));
  if (refused.length > 0) ctx.problems.push(`autocannon in the load generator still refuses ${refused.join(", ")} (bench/autocannon-methods.cjs not loaded?)`);

  const startedAt = new Date();
  const perRun = options.warmup + options.duration + 0.5;
  const serverRuns = scenarios.reduce((n, s) => n + (s.nodeHttpUnsupported === undefined ? 3 : 2), 0) * options.rounds;
  log(
    `bench: ${scenarios.length} scenario(s) × ${options.rounds} round(s), ${options.duration} s runs after ${options.warmup} s warm-up, ` +
      `${options.connections} connections; about ${Math.ceil(serverRuns * perRun)} s. ` +
      (pinning.enabled ? `Servers on core ${pinning.serverCore}, load generator on core ${pinning.clientCore}.` : `Not pinned: ${pinning.reason}.`),
  );

  const runs: RunRecord[] = [];
  /** Runs disturbed by other load and measured again; kept in the JSON, left out of the table. */
  const discarded: RunRecord[] = [];
  const rows: SummaryRow[] = [];
  try {
    for (const scenario of scenarios) {
      const servers: ServerKind[] = scenario.nodeHttpUnsupported === undefined ? ["startline", "node-http", "ceiling"] : ["startline", "ceiling"];
      const template = await captureTemplate(scenario, pinning);
      if (template.status < 200 || template.status > 299) {
        ctx.problems.push(`${scenario.name}: startline answers ${JSON.stringify(template.statusLine)} to ${scenario.requests[0]!.method} ${scenario.requests[0]!.path}`);
      }
      const mine: RunRecord[] = [];
      for (let round = 1; round <= options.rounds; round++) {
        const order = rotate(servers, round - 1);
        for (const [index, kind] of order.entries()) {
          let run: RunRecord | undefined;
          for (let attempt = 0; ; attempt++) {
            await waitQuiet(ctx, options.waitQuiet);
            run = await measure(ctx, scenario, kind, template, round, index + 1);
            checkRun(ctx, run);
            logRun(run, options.rounds);
            if (!disturbed(run) || attempt >= options.retries) break;
            // Other processes took CPU during the run: measure it again, keep this one aside.
            discarded.push(run);
            log(`    (disturbed by other load; again, ${options.retries - attempt} retr${options.retries - attempt === 1 ? "y" : "ies"} left)`);
          }
          checkMachine(ctx, run);
          runs.push(run);
          mine.push(run);
        }
      }
      for (const kind of ["startline", "node-http", "ceiling"] as const) {
        if (kind === "node-http" && scenario.nodeHttpUnsupported !== undefined) rows.push(summarize(scenario.name, kind, [], scenario.nodeHttpUnsupported));
        else rows.push(summarize(scenario.name, kind, mine.filter((r) => r.server === kind)));
      }
    }
  } catch (error) {
    ctx.problems.push(`aborted: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await loadgen.close();
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
      loadgen: { pid: loadgenPid, exe: loadgenExe, cpusAllowed: loadgenCores, extraMethods: methods, acceptedMethods: ready.methods },
    },
    scenarios: scenarios.map((s) => ({ ...s, pipelining: options.pipelining ?? s.pipelining })),
    summary: rows,
    runs,
    discarded,
    problems: ctx.problems,
    warnings: ctx.warnings,
  };
  mkdirSync(options.resultsDir, { recursive: true });
  const resultsFile = join(options.resultsDir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");

  const setup =
    `${options.rounds} round(s) × ${options.duration} s (after ${options.warmup} s warm-up), ${options.connections} connections, ` +
    `pipelining ${options.pipelining ?? "per scenario"}; ${pinning.enabled ? `servers pinned to core ${pinning.serverCore}, autocannon to core ${pinning.clientCore}` : `not pinned (${pinning.reason})`}; ` +
    `node ${process.version}, ${cpu?.model ?? "unknown CPU"}`;
  console.log(`\n${setup}\n`);
  if (discarded.length > 0) console.log(`${discarded.length} run(s) disturbed by other load were measured again (the disturbed ones are in the JSON, not in the table).`);
  const stillDisturbed = runs.filter(disturbed).length;
  if (stillDisturbed > 0) console.log(`Other load disturbed ${stillDisturbed} of the ${runs.length} runs in the table (see WARNINGS): treat these figures with caution.`);
  if (discarded.length > 0 || stillDisturbed > 0) console.log("");
  if (rows.length > 0) console.log(`${markdownTable(rows)}\n\n${legend(rows)}\n`);
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
