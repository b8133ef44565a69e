// From runs to tables (markdown): the figures of every server, the ratios of
// startline to the server a user would run instead and to the ceiling, and
// the idle connections' cost.

import type { IdleRun, Run } from "./measure.js";
import { median, percentile } from "./proc.js";
import { LABEL, type Scenario } from "./scenarios.js";

/** wrk used this much of its core or more: the figure may be its limit, not the server's. */
const WRK_SATURATED = 0.9;

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), `|${header.map((_, i) => (i < 2 ? " --- " : " ---: ")).join("|")}|`, ...rows.map(line)].join("\n");
}

export const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "–");

/** Per scenario and server: medians over the rounds. */
export function figuresTable(scenarios: readonly Scenario[], runs: readonly Run[]): string {
  const rows: string[][] = [];
  for (const s of scenarios) {
    for (const server of s.servers) {
      const mine = runs.filter((r) => r.scenario === s.name && r.server === server);
      if (mine.length === 0) continue;
      const m = (f: (r: Run) => number) => median(mine.map(f));
      const errors = mine.reduce((n, r) => n + r.errors, 0);
      rows.push([
        s.name,
        LABEL[server],
        `${fixed(m((r) => r.reqPerSec), 0)}${m((r) => r.wrkCpu) >= WRK_SATURATED ? " ◊" : ""}`,
        fixed(m((r) => r.cpuUsPerRequest), 1),
        fixed(m((r) => r.p50Ms), 2),
        fixed(m((r) => r.p99Ms), 2),
        fixed(m((r) => r.rssMiB), 1),
        fixed(m((r) => r.peakMiB), 1),
        `${errors}${errors > 0 ? " ⚠" : ""}`,
        fixed(m((r) => r.otherCores), 2),
      ]);
    }
  }
  return table(["scenario", "server", "req/s", "CPU µs/req", "p50 ms", "p99 ms", "RSS MiB", "peak RSS MiB", "errors", "other load (cores)"], rows);
}

/**
 * The measured server (a scenario's first: startline, or startline/node)
 * ÷ another server, round by round (each ratio taken within one round, so
 * that a neighbour's load moves both sides): median [quartiles].
 */
function ratio(runs: readonly Run[], scenario: string, measured: string, other: string | undefined, pick: (r: Run) => number): string {
  if (other === undefined) return "";
  const of = (server: string) => runs.filter((r) => r.scenario === scenario && r.server === server);
  const ratios = of(measured).flatMap((r) => of(other).filter((o) => o.round === r.round).map((o) => pick(r) / pick(o))).filter(Number.isFinite);
  if (ratios.length === 0) return "–";
  const x = (n: number) => `${n.toFixed(2)}×`;
  return ratios.length < 3 ? x(median(ratios)) : `${x(median(ratios))} [${x(percentile(ratios, 25))}–${x(percentile(ratios, 75))}]`;
}

/** One row per scenario: startline's figures, and its ratios to the server a user would run instead and to the ceiling. */
export function ratioTable(scenarios: readonly Scenario[], runs: readonly Run[]): string {
  const rows: string[][] = [];
  for (const s of scenarios) {
    const [measured, comparator, ceiling] = s.servers;
    const mine = runs.filter((r) => r.scenario === s.name && r.server === measured);
    if (mine.length === 0) continue;
    const cpu = (r: Run) => r.cpuUsPerRequest;
    const rps = (r: Run) => r.reqPerSec;
    rows.push([
      s.name,
      comparator === undefined ? "–" : LABEL[comparator],
      fixed(median(mine.map(rps)), 0),
      fixed(median(mine.map(cpu)), 1),
      ratio(runs, s.name, measured!, comparator, rps),
      ratio(runs, s.name, measured!, comparator, cpu),
      ratio(runs, s.name, measured!, ceiling, rps),
      ratio(runs, s.name, measured!, ceiling, cpu),
    ]);
  }
  return table(["scenario", "beside", "startline req/s", "startline CPU µs/req", "req/s vs it", "CPU/req vs it", "req/s vs ceiling", "CPU/req vs ceiling"], rows);
}

export function idleTable(scenarios: readonly Scenario[], runs: readonly IdleRun[]): string {
  const rows: string[][] = [];
  for (const s of scenarios) {
    const kib = (server: string) => median(runs.filter((r) => r.scenario === s.name && r.server === server).map((r) => r.kibPerConnection));
    for (const server of s.servers) {
      const mine = runs.filter((r) => r.scenario === s.name && r.server === server);
      if (mine.length === 0) continue;
      const failed = mine.reduce((n, r) => n + r.failed, 0);
      const vs = (other: string) => (Number.isFinite(kib(other)) ? `${(kib(server) / kib(other)).toFixed(2)}×` : "–");
      rows.push([s.name, LABEL[server], fixed(median(mine.map((r) => r.held)), 0), fixed(kib(server), 2), vs("node-http"), vs("ceiling"), fixed(median(mine.map((r) => r.cpuUsPerConnection)), 1), `${failed}${failed > 0 ? " ⚠" : ""}`]);
    }
  }
  return table(["scenario", "server", "idle connections", "KiB per connection", "vs node:http", "vs ceiling", "CPU µs per connection", "failed or closed"], rows);
}

export const LEGEND = [
  "- Medians over the rounds. CPU µs/req: the server's utime + stime (/proc/<pid>/stat, summed over its processes) during the run ÷ responses; read it first on a shared machine: req/s also measures how much of a core the server was given.",
  "- Ratios: the measured server (startline; startline/node in the node-* rows) ÷ the other server, taken within each round, median [quartiles] over the rounds; req/s above 1 and CPU/req below 1 are startline's advantage.",
  "- ◊: wrk used 90% of its core or more (perhaps its limit, not the server's). ⚠: answers of status 400 and above, or socket errors: the row is worthless.",
  "- other load: CPU used by everything but the server, wrk and this runner during the run, in cores (over 0.1: the figures are disturbed).",
].join("\n");
