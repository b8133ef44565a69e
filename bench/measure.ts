// Measuring one server in one scenario: a throughput run (CPU time and RSS
// from /proc around wrk's run, and what the rest of the
// machine did meanwhile), an idle-connections run (RSS per connection), and
// the reference response every server is compared with.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { log, type Context, type Reference } from "./context.js";
import { holdIdle, idleConnections, runSetup, startServer, stopServer } from "./launch.js";
import type { Options } from "./options.js";
import { compareResponses, fetchOne } from "./probe.js";
import { clockTicksPerSecond, cpuTicks, descendants, openFilesLimit, procStatus, reapedChildrenTicks, systemTicks } from "./proc.js";
import { SERVER_LABEL, type IdleRecord, type LoadRun, type RunIdentity, type RunRecord, type ServerKind } from "./report.js";
import { bodyCheck, type Scenario } from "./scenarios.js";
import { runWrk, type LoadSummary } from "./wrk.js";

const KIB_PER_MIB = 1024;

/** The server and its descendants (a cluster primary's workers). */
export function processTree(pid: number): number[] {
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

/**
 * One load run against the server's processes `pids`, with the server's CPU
 * time and RSS read from /proc around it, and what the rest of the machine
 * did meanwhile: busy time not spent by the server, wrk (counted once it is
 * reaped) or this process.
 */
async function accounted(ctx: Context, pids: readonly number[], warmup: LoadSummary | null, run: () => Promise<LoadSummary>): Promise<LoadRun> {
  const ours = () => cpuTicks(process.pid) + reapedChildrenTicks();
  const othersBefore = ours();
  const systemBefore = systemTicks();
  const ticksBefore = sum(pids.map(cpuTicks));
  const rssBefore = sum(pids.map((pid) => procStatus(pid).rssKiB));
  const wallBefore = process.hrtime.bigint();
  const measured = await run();
  const wallS = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const ticksAfter = sum(pids.map(cpuTicks));
  const rssAfter = sum(pids.map((pid) => procStatus(pid).rssKiB));
  const peak = procStatus(pids[0]!).hwmKiB;
  const systemAfter = systemTicks();
  const othersAfter = ours();
  const hz = clockTicksPerSecond();
  const totalUs = ((ticksAfter - ticksBefore) * 1e6) / hz;
  // Over the wall time between the readings, not wrk's own duration: on a saturated machine wrk may take far
  // longer to start and stop than its -d, and the machine's ticks over that window divided by -d came out at
  // tens of cores on a 2-core machine.
  const cores = (ticks: number) => (wallS > 0 ? ticks / hz / wallS : Number.NaN);
  const mine = ticksAfter - ticksBefore + othersAfter - othersBefore;
  return {
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
      otherCpu: cores(Math.max(0, systemAfter.busy - systemBefore.busy - mine)),
      irqCpu: cores(systemAfter.irq - systemBefore.irq),
      stealCpu: cores(systemAfter.steal - systemBefore.steal),
    },
  };
}

export async function measure(ctx: Context, scenario: Scenario, kind: ServerKind, reference: Reference, round: number, position: number): Promise<RunRecord> {
  const { options } = ctx;
  const extraEnv: Record<string, string> =
    kind === "ceiling"
      ? { CEILING_RESPONSE_B64: reference.response.raw.toString("base64") }
      : kind === "node-http" && reference.stateFile !== undefined
        ? { STATE_FILE: reference.stateFile }
        : {};
  const server = await startServer(ctx, kind, scenario, extraEnv);
  try {
    if (kind === "startline" && scenario.setup !== undefined) await runSetup(ctx, server, scenario.setup);
    const first = scenario.request;
    const responseDiffs = compareResponses(reference.response, await fetchOne(server.port, first, { ca: ctx.currentCa }), bodyCheck(scenario, kind));
    const job = {
      url: `${scenario.tls ? "https" : "http"}://127.0.0.1:${server.port}`,
      request: { ...first, body: undefined },
      connections: options.connections,
      pipelining: options.pipelining ?? scenario.pipelining,
      timeout: 10,
      ...(first.body === undefined ? {} : { bodyFile: bodyFile(ctx, scenario, first.body) }),
    };
    const warmup = options.warmup > 0 ? await runWrk(ctx.pinning, { ...job, duration: options.warmup }) : null;
    const pids = await waitForProcesses(server.pid, scenario.workers ?? 1);
    const processes = pids.map((pid) => ({ pid, cpusAllowed: procStatus(pid).cpusAllowed }));
    const run = await accounted(ctx, pids, warmup, () => runWrk(ctx.pinning, { ...job, duration: options.duration }));
    const pidsAfter = processTree(server.pid);
    if (pidsAfter.join(",") !== pids.join(",")) {
      ctx.problems.push(`${scenario.name} / ${SERVER_LABEL[kind]} / round ${round}: its processes changed during the run (${pids.join(", ")} -> ${pidsAfter.join(", ")})`);
    }
    const exit = await stopServer(server);
    return {
      ...identity(scenario, kind, round, position, server, processes[0]!.cpusAllowed),
      processes,
      responseDiffs,
      ...run,
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
export const settleMs = (options: Options) => (options.quick ? 300 : 1000);

/** Its resident memory after a full garbage collection (SIGUSR2: bench/gc-on-signal.cjs) and a pause. */
async function settledStatus(ctx: Context, pid: number) {
  process.kill(pid, "SIGUSR2");
  await sleep(settleMs(ctx.options));
  return procStatus(pid);
}

export async function measureIdle(ctx: Context, scenario: Scenario, kind: ServerKind, reference: Reference, round: number, position: number): Promise<IdleRecord> {
  const connections = idleConnections(ctx, scenario);
  const extraEnv: Record<string, string> = kind === "ceiling" ? { CEILING_RESPONSE_B64: reference.response.raw.toString("base64") } : {};
  const server = await startServer(ctx, kind, scenario, extraEnv);
  let holding: { close(): Promise<unknown> } | undefined;
  try {
    if (kind === "startline" && scenario.setup !== undefined) await runSetup(ctx, server, scenario.setup);
    const responseDiffs = compareResponses(reference.response, await fetchOne(server.port, scenario.request), bodyCheck(scenario, kind));
    const cpusAllowed = procStatus(server.pid).cpusAllowed;
    const limit = openFilesLimit(server.pid);
    const before = (await settledStatus(ctx, server.pid)).rssKiB;
    const wallStart = process.hrtime.bigint();
    // The client is this process's child, counted once it has exited and been reaped.
    const othersBefore = cpuTicks(process.pid) + reapedChildrenTicks();
    const systemBefore = systemTicks();
    const ticksBefore = cpuTicks(server.pid);
    const client = await holdIdle(ctx, server.port, scenario.request, connections);
    holding = client;
    const opened = client.opened;
    const ticksOpened = cpuTicks(server.pid);
    const held = await settledStatus(ctx, server.pid);
    const closed = await client.close();
    holding = undefined;
    const ticksAfter = cpuTicks(server.pid);
    const systemAfter = systemTicks();
    const othersAfter = cpuTicks(process.pid) + reapedChildrenTicks();
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
    if (holding !== undefined) await holding.close().catch(() => undefined);
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
export async function captureReference(ctx: Context, scenario: Scenario): Promise<Reference> {
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
    return { response: await fetchOne(server.port, scenario.request, { ca: ctx.currentCa }), stateFile };
  } catch (error) {
    const out = server.output().trim();
    throw new Error(`startline in ${scenario.name}, capturing its response: ${error instanceof Error ? error.message : String(error)}${out ? `\nserver output:\n${out}` : ""}`);
  } finally {
    await stopServer(server);
  }
}

export function logRun(run: RunRecord, rounds: number): void {
  const m = run.measured;
  const l = m.latencyMs;
  log(
    `  ${run.scenario} r${run.round}/${rounds} ${SERVER_LABEL[run.server].padEnd(9)} ${Math.round(m.reqPerSec).toString().padStart(7)} req/s ` +
      `p50 ${l.p50.toFixed(2)} ms p99 ${l.p99.toFixed(2)} ms max ${l.max.toFixed(1)} ms ${run.cpu.usPerRequest.toFixed(1)} µs/req ` +
      `rss ${run.rss.afterMiB.toFixed(1)} MiB non-2xx ${m.non2xx} errors ${m.errors} ` +
      `(cpu: server ${(run.cpu.share * 100).toFixed(0)}%, wrk ${(m.loadgenCpuShare * 100).toFixed(0)}%, others ${(run.machine.otherCpu * 100).toFixed(0)}%)`,
  );
}

/** The request's body, in a file of the run's workspace: wrk reads a body from a file (bench/wrk.lua's @body=). */
function bodyFile(ctx: Context, scenario: Scenario, body: string): string {
  const file = join(ctx.workspace.dir, `body-${scenario.name}`);
  writeFileSync(file, body);
  return file;
}

export function logIdle(run: IdleRecord, rounds: number): void {
  log(
    `  ${run.scenario} r${run.round}/${rounds} ${SERVER_LABEL[run.server].padEnd(9)} ${run.closed.closed - run.closed.closedEarly} idle connections ` +
      `(opened in ${(run.opened.openingMs / 1000).toFixed(1)} s): rss ${(run.rss.beforeKiB / 1024).toFixed(1)} -> ${(run.rss.withKiB / 1024).toFixed(1)} MiB, ` +
      `${run.kibPerConnection.toFixed(2)} KiB/connection, ${run.cpuUsPerConnection.toFixed(1)} µs CPU/connection; ` +
      `failed ${run.opened.failed}, closed early ${run.closed.closedEarly} (others ${(run.machine.otherCpu * 100).toFixed(0)}%)`,
  );
}
