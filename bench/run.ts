// `npm run bench`: every scenario of bench/scenarios.ts against startline and
// the servers a user would run instead, and one table of ratios (see
// bench/README.md): the order of things. Each server is started (launch.ts),
// checked with one request, warmed up and measured (measure.ts), round after
// round; --paired schedules the same measurements with the servers kept up.

import { SETTING_NAMES } from "../src/config.js";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ROOT, fetchOne, startFor, type Answer, type Server, type Workspace } from "./launch.js";
import { idleRun, loadRun, type IdleRun, type Run } from "./measure.js";
import { detectPinning, pinPid } from "./proc.js";
import { LEGEND, figuresTable, idleTable, ratioTable } from "./report.js";
import { LABEL, SCENARIOS, type Scenario, type ServerKind } from "./scenarios.js";
import { pairedOrder, rotated } from "./slice-order.js";
import { wrkUnavailable } from "./wrk.js";

const USAGE = `Usage: npm run bench -- [options]

  --scenarios a,b      only these (default: all): ${SCENARIOS.map((s) => s.name).join(", ")}
  --quick              smoke run: ${SCENARIOS.filter((s) => s.quick).map((s) => s.name).join(", ")}; 1 round of 1 s, no warm-up, 10 connections, 500 idle ones
  --rounds n           rounds (default 3; --paired: 15); each server runs once a round, in an order that rotates
  --duration s         seconds per measured run, whole (default 10; --paired: 2)
  --warmup s           seconds of warm-up before each run (default 2; --paired: once per server)
  --connections n      connections, for scenarios that name none (default 100)
  --paired             servers kept up, loaded in turn in slices (default scenarios: status, status-pipelined);
                       the reference (ceiling) in the middle of each cycle, every other cycle reversed
                       (--cycles and --slice: the same as --rounds and --duration)
  --profile            startline (and startline/node) runs under --cpu-prof; its profiles go to <results-dir>/profiles/
  --results-dir dir    where every run goes as JSON (default bench/results)
  --set A=1,B=2        settings for every startline server of the run (docs/settings.md), e.g. --set KEPT_BYTES=0
  --instructions [--servers startline,node-http,ceiling,app-on-startline,app-on-node] [--app bare|express|koa|fastify] [--varied] [--path P] [--requests N] [--top N] [--cache] [--v8 "V8 flags"]
                       instructions per request under valgrind's callgrind (bench/instructions.ts);
                       --cache adds the simulated cache misses and mispredicted branches per request
  --alloc [--path P] [--requests N] [--warmup N] [--windows N]
                       bytes allocated per request, the real Connection over an in-memory socket (bench/alloc.ts)

Exit status 0 when every server answered as expected; 1 otherwise (see PROBLEMS); 2 for bad options.`;

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

/**
 * The young generation's size for bench/alloc.js: 64 KB for each request of a
 * window (the heaviest, Express on node:http, allocates about 35 KB) and at
 * most 256 MB, which every run of 4,096 requests or more (the default 20,000)
 * gets. Each forced collection costs more with the space larger: with
 * --requests 100, as a test runs it, 256 MB cost about 0.4 s of CPU more.
 */
function semiSpace(argv: readonly string[]): string[] {
  const i = argv.indexOf("--requests");
  const requests = i === -1 ? 20_000 : Number(argv[i + 1]);
  const mb = Number.isFinite(requests) && requests > 0 ? Math.min(256, Math.max(1, Math.ceil((requests * 64) / 1024))) : 256;
  return [`--min-semi-space-size=${mb}`, `--max-semi-space-size=${mb}`];
}

async function main(argv: string[]): Promise<number> {
  // Counted or in process: their own files, with their own options.
  if (argv.includes("--instructions")) return (await import("./instructions.js")).countInstructions();
  if (argv.includes("--alloc")) {
    // A young generation large enough that nothing is collected during a run: the heap's growth is what was allocated.
    const flags = ["--expose-gc", ...semiSpace(argv)];
    return spawnSync(process.execPath, [...flags, path.join(here, "alloc.js"), ...argv.filter((a) => a !== "--alloc")], { stdio: "inherit" }).status ?? 1;
  }
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: Object.fromEntries(
        [...["scenarios", "rounds", "cycles", "duration", "slice", "warmup", "connections", "results-dir", "set"].map((o) => [o, { type: "string" }]), ...["quick", "paired", "profile", "help"].map((o) => [o, { type: "boolean" }])],
      ) as Record<string, { type: "string" | "boolean" }>,
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    console.error(`bench: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) return (console.log(USAGE), 0);
  const quick = values.quick === true;
  const paired = values.paired === true;
  const bad = ["rounds", "cycles", "duration", "slice", "warmup", "connections"].filter((o) => values[o] !== undefined && !/^\d+$/.test(String(values[o])));
  if (bad.length > 0) return (console.error(`bench: --${bad[0]} takes a whole number\n\n${USAGE}`), 2);
  const number = (name: string, fallback: number) => Number(values[name] ?? fallback);
  const rounds = number("rounds", number("cycles", quick ? 1 : paired ? 15 : 3)) || 1;
  const duration = number("duration", number("slice", quick ? 1 : paired ? 2 : 10)) || 1;
  const warmup = number("warmup", quick ? 0 : 2);
  const connections = number("connections", quick ? 10 : 100) || 1;
  const names = typeof values.scenarios === "string" ? values.scenarios.split(",") : undefined;
  const unknown = (names ?? []).filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) return (console.error(`bench: unknown scenario ${unknown.join(", ")}\n\n${USAGE}`), 2);
  const scenarios = SCENARIOS.filter((s) => (names !== undefined ? names.includes(s.name) : quick ? s.quick : paired ? s.name.startsWith("status") && !s.tls && !s.workers : true));
  const missing = wrkUnavailable();
  if (missing !== undefined) return (console.error(`bench: ${missing}`), 1);

  const pinning = detectPinning(); // before this process is pinned, which narrows what it sees
  if (pinning.enabled) pinPid(process.pid, pinning.clientCore);
  const settings = typeof values.set === "string" ? Object.fromEntries(values.set.split(",").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])) : {};
  const notSettings = Object.keys(settings).filter((name) => !(SETTING_NAMES as readonly string[]).includes(name));
  if (notSettings.length > 0) {
    console.error(`--set: ${notSettings.join(", ")} is not a setting (docs/settings.md lists them; write NAME=VALUE)`);
    process.exit(2);
  }
  const ws: Workspace = { pinning, dir: mkdtempSync(path.join(tmpdir(), "startline-bench-")), filled: new Map(), settings };
  const resultsDir = typeof values["results-dir"] === "string" ? values["results-dir"] : path.join(ROOT, "bench", "results");
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const profiles = path.join(resultsDir, "profiles", stamp);
  log(
    `bench: ${scenarios.map((s) => s.name).join(", ")}; ${rounds} round(s) of ${duration} s after ${warmup} s of warm-up${paired ? " (paired: servers kept up, in turn)" : ""}; ` +
      (pinning.enabled ? `servers on core ${pinning.serverCore}, wrk on core ${pinning.clientCore}` : `not pinned (${pinning.reason})`),
  );
  const runs: Run[] = [];
  const idleRuns: IdleRun[] = [];
  const problems: string[] = [];
  let checks = 0;

  /** Starts a server of the scenario and checks its answer to one request: startline's status and body, or the scenario's check. */
  const start = async (s: Scenario, kind: ServerKind, reference: Answer | undefined): Promise<Server> => {
    // The app on startline/node is startline's too: a profile of node:http's run would be no one's to read.
    const profiled = values.profile === true && (kind === "startline" || kind === "app-on-startline");
    if (profiled) mkdirSync(profiles, { recursive: true });
    const server = await startFor(ws, kind, s, reference?.raw, profiled ? ["--cpu-prof", "--cpu-prof-dir", profiles] : []);
    const answer = await fetchOne(server.url, s.method, s.path.replace("{n}", `check-${++checks}`), s.headers, s.body);
    const body = answer.body.toString("utf8");
    const wrong = s.check !== undefined ? s.check(answer.status, body) : answer.status !== reference!.status || !answer.body.equals(reference!.body) ? `answered ${answer.status} ${body.slice(0, 200)}` : undefined;
    if (wrong !== undefined) {
      await server.stop();
      throw new Error(`${LABEL[kind]} does not answer as startline does: ${wrong}`);
    }
    return server;
  };
  const stop = async (s: Scenario, server: Server) => {
    const code = await server.stop();
    if (code !== 0) problems.push(`${s.name} / ${LABEL[server.kind]}: exit code ${code} on SIGTERM`);
  };
  const measured = (run: Run) => {
    runs.push(run);
    log(`  ${run.scenario} r${run.round} ${LABEL[run.server].padEnd(12)} ${run.reqPerSec.toFixed(0).padStart(7)} req/s ${run.cpuUsPerRequest.toFixed(1).padStart(7)} µs/req p99 ${run.p99Ms.toFixed(2)} ms errors ${run.errors} other ${run.otherCores.toFixed(2)}`);
    if (run.errors > 0 || run.requests === 0) problems.push(`${run.scenario} / ${LABEL[run.server]} / round ${run.round}: ${run.requests === 0 ? "no response at all" : `${run.errors} errors or answers of status 400 and above`}`);
  };

  for (const s of scenarios) {
    try {
      let reference: Answer | undefined;
      // What the ceiling replays: startline's answer, or, in a scenario checked its own way (the node-* ones), the measured server's.
      if (s.check === undefined || s.servers.includes("ceiling")) {
        const server = await startFor(ws, s.check === undefined ? "startline" : s.servers[0]!, s);
        reference = await fetchOne(server.url, s.method, s.path, s.headers, s.body).finally(() => server.stop());
      }
      if (s.idle !== undefined) {
        for (let round = 1; round <= rounds; round++) {
          for (const kind of rotated(s.servers, round - 1)) {
            const server = await start(s, kind, reference);
            const run = await idleRun(s, server, round, quick ? 500 : s.idle).finally(() => stop(s, server));
            log(`  ${s.name} r${round} ${LABEL[kind].padEnd(12)} ${run.held} held, ${run.kibPerConnection.toFixed(2)} KiB each, ${run.failed} failed`);
            if (run.failed > 0) problems.push(`${s.name} / ${LABEL[kind]} / round ${round}: ${run.failed} idle connections failed or were closed`);
            idleRuns.push(run);
          }
        }
      } else if (paired) {
        const up: Server[] = [];
        try {
          for (const kind of s.servers) {
            up.push(await start(s, kind, reference));
            if (warmup > 0) await loadRun(ws, s, up.at(-1)!, 0, warmup, connections);
          }
          for (let round = 1; round <= rounds; round++) for (const server of pairedOrder(up, round - 1)) measured(await loadRun(ws, s, server, round, duration, connections));
        } finally {
          for (const server of up) await stop(s, server);
        }
      } else {
        for (let round = 1; round <= rounds; round++) {
          for (const kind of rotated(s.servers, round - 1)) {
            const server = await start(s, kind, reference);
            try {
              if (warmup > 0) await loadRun(ws, s, server, round, warmup, connections);
              measured(await loadRun(ws, s, server, round, duration, connections));
            } finally {
              await stop(s, server);
            }
          }
        }
      }
    } catch (error) {
      problems.push(`${s.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  rmSync(ws.dir, { recursive: true, force: true });

  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${stamp}.json`);
  writeFileSync(file, JSON.stringify({ node: process.version, pinning, rounds, duration, warmup, connections, paired, runs, idleRuns, problems }, null, 1));
  const timed = scenarios.filter((s) => s.idle === undefined);
  console.log(`\n${rounds} round(s) of ${duration} s${paired ? " (paired)" : ""}, node ${process.version}; raw runs: ${path.relative(process.cwd(), file)}\n`);
  if (runs.length > 0) console.log(`${figuresTable(timed, runs)}\n\nThe table of ratios:\n\n${ratioTable(timed, runs)}\n\n${LEGEND}\n`);
  if (idleRuns.length > 0) console.log(`Idle connections (RSS after a full collection, with them less before, ÷ connections):\n\n${idleTable(scenarios, idleRuns)}\n`);
  if (values.profile) console.log(`startline's CPU profiles (open in Chrome DevTools): ${profiles}\n`);
  if (problems.length > 0) console.log(`PROBLEMS (${problems.length}):\n${problems.map((p) => `- ${p}`).join("\n")}`);
  return problems.length > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
