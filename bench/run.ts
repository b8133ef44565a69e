// `npm run bench`: startline against node:http and a no-parse "ceiling" server
// on node:net, scenario by scenario. See bench/README.md.
//
// For each scenario and round, each server is started fresh (the order
// rotates from round to round), pinned to core 0; wrk runs on core 1, and so
// does this process. After
// a warm-up, the server's CPU time and RSS are read from /proc before and
// after the measured run. Prints a markdown table of medians, the data
// endpoints beside fastify, and last one table of ratios of them all; writes
// every run to bench/results/<timestamp>.json.
//
// Scenarios may also: send setup requests to startline after each start
// (node:http starts with the state startline had after them), run over HTTPS
// (a throwaway certificate made at start in a temporary directory, removed at
// the end), run each server as a cluster of workers (then allowed on every
// core, measured over the whole process tree), or hold idle connections
// instead of a throughput run (RSS per connection; a second table).
//
// This file is the order of things; the parts are in options.ts (the command
// line), launch.ts (starting and stopping servers, and the idle connections'
// client), wrk.ts (the load generator), measure.ts (one run of one server),
// checks.ts (what makes a run trustworthy: responses, pinning, the machine's
// other load) and report.ts (the tables).

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { checkIdle, checkMachine, checkRun, disturbed, waitQuiet } from "./checks.js";
import { log, type Context, type Reference, type Workspace } from "./context.js";
import { makeCertificate, serverCores, idleConnections } from "./launch.js";
import { captureReference, logIdle, logRun, measure, measureIdle, settleMs } from "./measure.js";
import { USAGE, UsageError, parseOptions, type Options } from "./options.js";
import { GC_ON_SIGNAL_MODULE, ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { clockTicksPerSecond, detectPinning, pinPid, procStatus } from "./proc.js";
import {
  idleLegend,
  engineRatios,
  idleTable,
  latencyTable,
  ratioTable,
  type RatioRow,
  legend,
  median,
  markdownTable,
  summarize,
  summarizeIdle,
  type IdleRecord,
  type IdleSummaryRow,
  type RunRecord,
  type ServerKind,
  type SummaryRow,
} from "./report.js";
import { ENGINE_SCENARIOS, QUICK_SCENARIOS, SCENARIOS, answersAsExpected, checkScenarios, type Scenario } from "./scenarios.js";
import { WRK_SCRIPT, wrkUnavailable } from "./wrk.js";
import { runMode } from "./modes.js";
import { DATA_SCENARIOS, DATA_SERVERS, dataTable, roundRatio, runData, type DataOptions } from "./data.js";

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

// ---------------------------------------------------------------- main

async function main(argv: readonly string[]): Promise<number> {
  const modeStatus = runMode(argv);
  if (modeStatus !== undefined) return modeStatus;
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
  // The data endpoints beside fastify and the data ceiling (bench/data.ts) run after the others: every one by
  // default, none with --quick, those named with --scenarios.
  let dataScenarios = options.quick ? [] : DATA_SCENARIOS;
  if (options.scenarios !== undefined) {
    const known = [...SCENARIOS.map((s) => s.name), ...DATA_SCENARIOS.map((s) => s.name)];
    const unknown = options.scenarios.filter((n) => !known.includes(n));
    if (unknown.length > 0 || options.scenarios.length === 0) {
      console.error(`bench: unknown scenario ${unknown.join(", ") || "(none given)"}; known: ${known.join(", ")}`);
      return 2;
    }
    scenarios = SCENARIOS.filter((s) => options.scenarios!.includes(s.name));
    dataScenarios = DATA_SCENARIOS.filter((s) => options.scenarios!.includes(s.name));
  }

  for (const file of [STARTLINE_MAIN, benchScript("servers/node-http"), benchScript("servers/ceiling"), benchScript("idle-client"), GC_ON_SIGNAL_MODULE, WRK_SCRIPT]) {
    if (!existsSync(file)) {
      console.error(`bench: missing ${relative(ROOT, file)} (run it with \`npm run bench\`, which builds first)`);
      return 1;
    }
  }

  // wrk is a Debian package (.ci/install-system-packages installs it): nothing is measured without it.
  const wrkMissing = wrkUnavailable();
  if (wrkMissing !== undefined) {
    console.error(`bench: ${wrkMissing}`);
    return 1;
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
  const ctx: Context = { options, pinning, workspace, problems, warnings: [], currentCa: undefined };

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
      (pinning.enabled ? `Servers on core ${pinning.serverCore}, wrk on core ${pinning.clientCore}.` : `Not pinned: ${pinning.reason}.`),
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
        ctx.problems.push(`${scenario.name}: startline answers ${JSON.stringify(template.statusLine)} to ${scenario.request.method} ${scenario.request.path}`);
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
        if (scenario.idle !== undefined) {
          idleRows.push(summarizeIdle(scenario.name, kind, mineIdle.filter((r) => r.server === kind)));
        } else if (kind === "node-http" && scenario.nodeHttpUnsupported !== undefined) {
          rows.push(summarize(scenario.name, kind, [], scenario.nodeHttpUnsupported));
        } else rows.push(summarize(scenario.name, kind, mine.filter((r) => r.server === kind)));
      }
    }
  } catch (error) {
    ctx.problems.push(`aborted: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
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
      wrk: { script: relative(ROOT, WRK_SCRIPT) },
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
    `pipelining ${options.pipelining ?? "per scenario"}; ${pinning.enabled ? `servers pinned to core ${pinning.serverCore} (cluster workers: cores ${serverCores(pinning, { workers: 2 } as Scenario)}), wrk to core ${pinning.clientCore}` : `not pinned (${pinning.reason})`}; ` +
    `node ${process.version}, ${cpu?.model ?? "unknown CPU"}`;
  console.log(`\n${setup}\n`);
  if (discarded.length > 0) console.log(`${discarded.length} run(s) disturbed by other load were measured again (the disturbed ones are in the JSON, not in the table).`);
  const stillDisturbed = runs.filter(disturbed).length;
  if (stillDisturbed > 0) console.log(`Other load disturbed ${stillDisturbed} of the ${runs.length} runs in the table (see WARNINGS): treat these figures with caution.`);
  if (discarded.length > 0 || stillDisturbed > 0) console.log("");
  const notes = scenarios.filter((s) => s.note !== undefined && s.idle === undefined).map((s) => [s.name, s.note!] as const);
  if (rows.length > 0) console.log(`${markdownTable(rows)}\n\n${legend(rows, notes)}\n`);
  const engine = scenarios.filter((s) => ENGINE_SCENARIOS.includes(s.name) && runs.some((r) => r.scenario === s.name)).map((s) => s.name);
  if (engine.length > 0) console.log(`Latency per run (the tail moves from run to run more than the medians show):\n\n${latencyTable(runs, engine, options.rounds)}\n`);
  if (idleRows.length > 0) console.log(`Idle connections:\n\n${idleTable(idleRows)}\n\n${idleLegend()}\n`);
  const shown = relative(process.cwd(), resultsFile);
  console.log(`raw results: ${shown.startsWith("..") ? resultsFile : shown}`);
  const ratios: RatioRow[] = engineRatios(rows);
  if (dataScenarios.length > 0) {
    // As issue 28 measured them: wrk, 50 connections (10 for whole lists), 4 s after 1 s of warm-up.
    const data: DataOptions = { rounds: options.rounds, duration: options.quick ? 1 : 4, warmup: options.quick ? 0 : 1, connections: 50, servers: DATA_SERVERS, scenarios: dataScenarios };
    console.log("\nThe data endpoints beside fastify and the data ceiling (npm run bench:data):\n");
    const measured = await runData(data, console.log, pinning);
    console.log(`\n${dataTable(data, measured)}\n`);
    for (const m of measured.filter((m) => m.errors > 0)) ctx.problems.push(`data ${m.scenario} / ${m.server} / round ${m.round}: ${m.errors} errors`);
    for (const s of dataScenarios) {
      const mine = measured.filter((m) => m.scenario === s.name && m.server === "startline");
      if (mine.length === 0) continue;
      const versus = (other: "fastify" | "ceiling") => {
        if (!measured.some((m) => m.scenario === s.name && m.server === other)) return undefined;
        return { reqPerSec: roundRatio(measured, s.name, other, (m) => m.reqPerSec), cpu: roundRatio(measured, s.name, other, (m) => m.cpuUsPerRequest) };
      };
      ratios.push({
        scenario: s.name,
        comparator: "fastify",
        reqPerSec: median(mine.map((m) => m.reqPerSec)),
        cpuUsPerRequest: median(mine.map((m) => m.cpuUsPerRequest)),
        vsComparator: versus("fastify") ?? "fastify not run",
        vsCeiling: versus("ceiling"),
      });
    }
  }
  if (ratios.length > 0) {
    console.log(
      "\nThe whole table of ratios (startline's medians; ratios of medians for the scenarios above, medians of each round's ratio for the data endpoints; " +
        "ceiling: the no-parse ceiling, or the data ceiling for the data endpoints):\n",
    );
    console.log(ratioTable(ratios));
  }
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
