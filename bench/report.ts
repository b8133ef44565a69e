// From per-run records to the markdown table: medians over rounds, ratios to
// node:http and to the ceiling, and the error counts of every run.

import type { IdleClosed, IdleOpened } from "./idle-client.js";
import type { LoadSummary } from "./wrk.js";

export type ServerKind = "startline" | "node-http" | "ceiling";
export const SERVER_KINDS: readonly ServerKind[] = ["startline", "node-http", "ceiling"];
export const SERVER_LABEL: Readonly<Record<ServerKind, string>> = { startline: "startline", "node-http": "node:http", ceiling: "ceiling" };

/** Which server ran where: the fields every record of a run starts with. */
export interface RunIdentity {
  readonly scenario: string;
  readonly server: ServerKind;
  /** 1-based round, and position of this server in that round's order. */
  readonly round: number;
  readonly position: number;
  readonly pid: number;
  /** The pid's executable: node itself, not a wrapper. */
  readonly exe: string;
  /** Cpus_allowed_list of the server process. */
  readonly cpusAllowed: string;
}

/** wrk's run against a server: its figures, and the server's CPU, RSS and the machine's other load around it. */
export interface LoadRun {
  /** Null with --warmup 0. */
  readonly warmup: LoadSummary | null;
  readonly measured: LoadSummary;
  readonly cpu: {
    readonly ticksBefore: number;
    readonly ticksAfter: number;
    readonly clockTicksPerSecond: number;
    /** utime + stime during the measured run, µs, summed over the processes. */
    readonly totalUs: number;
    readonly usPerRequest: number;
    /** CPU time over the run's duration (1 = one core fully busy). */
    readonly share: number;
  };
  /** VmRSS (summed over the processes) before and after the measured run; VmHWM of the server process. */
  readonly rss: { readonly beforeMiB: number; readonly afterMiB: number; readonly peakMiB: number };
  /**
   * The rest of the machine during the measured run, in cores (1 = one core
   * busy the whole run): CPU used by processes other than the server, the load
   * generator and the runner; interrupt handling; time stolen by the hypervisor.
   */
  readonly machine: { readonly otherCpu: number; readonly irqCpu: number; readonly stealCpu: number };
}

/** One measured run of one server in one scenario, as written to the results JSON. */
export interface RunRecord extends RunIdentity, LoadRun {
  /** The processes measured: the server and its descendants (a cluster primary's workers), with their Cpus_allowed_list. */
  readonly processes: ReadonlyArray<{ readonly pid: number; readonly cpusAllowed: string }>;
  /** Differences from startline's response to the same request (empty: alike). */
  readonly responseDiffs: readonly string[];
  readonly exit: { readonly code: number | null; readonly signal: string | null };
}

export interface SummaryRow {
  readonly scenario: string;
  readonly server: ServerKind;
  /** Set when the server does not take part ("node:http refuses UPDATE"). */
  readonly unsupported?: string;
  readonly runs: number;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
  readonly rssMiB: number;
  readonly serverCpuShare: number;
  readonly loadgenCpuShare: number;
  /** Sums over the runs. */
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly responseMismatch: boolean;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(
  scenario: string,
  server: ServerKind,
  records: readonly RunRecord[],
  unsupported?: string,
): SummaryRow {
  const runs = records;
  const m = (f: (r: LoadRun) => number) => median(runs.map(f));
  const sum = (f: (r: LoadRun) => number) => runs.reduce((acc, r) => acc + f(r), 0);
  return {
    scenario,
    server,
    ...(unsupported === undefined ? {} : { unsupported }),
    runs: runs.length,
    reqPerSec: m((r) => r.measured.reqPerSec),
    p50Ms: m((r) => r.measured.latencyMs.p50),
    p99Ms: m((r) => r.measured.latencyMs.p99),
    cpuUsPerRequest: m((r) => r.cpu.usPerRequest),
    rssMiB: m((r) => r.rss.afterMiB),
    serverCpuShare: m((r) => r.cpu.share),
    loadgenCpuShare: m((r) => r.measured.loadgenCpuShare),
    non2xx: sum((r) => r.measured.non2xx),
    errors: sum((r) => r.measured.errors),
    timeouts: sum((r) => r.measured.timeouts),
    responseMismatch: records.some((r) => r.responseDiffs.length > 0),
  };
}

/** The load generator used at least this share of its core: the figures may be the client's limit, not the server's. */
export const LOADGEN_SATURATED = 0.9;

const int = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "–";
}
function ratio(a: number, b: number | undefined): string {
  return b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? "–" : `${(a / b).toFixed(2)}×`;
}

export function markdownTable(rows: readonly SummaryRow[]): string {
  const header = [
    "scenario",
    "server",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU µs/req",
    "RSS MiB",
    "req/s vs node:http",
    "req/s vs ceiling",
    "CPU/req vs node:http",
    "CPU/req vs ceiling",
    "non-2xx / errors",
  ];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((h, i) => (i < 2 ? " --- " : " ---: ")).join("|")}|`];
  for (const row of rows) {
    const peers = rows.filter((r) => r.scenario === row.scenario && r.unsupported === undefined && r.runs > 0);
    const nodeHttp = peers.find((r) => r.server === "node-http");
    const ceiling = peers.find((r) => r.server === "ceiling");
    const nodeHttpNa = rows.find((r) => r.scenario === row.scenario && r.server === "node-http")?.unsupported;
    if (row.unsupported !== undefined || row.runs === 0) {
      const why = row.unsupported === undefined ? "n/a (no run completed)" : `n/a (${row.unsupported})`;
      lines.push(`| ${row.scenario} | ${SERVER_LABEL[row.server]} | ${why} | – | – | – | – | – | – | – | – | – |`);
      continue;
    }
    const vsNode = (a: number, b: number | undefined) => (nodeHttpNa !== undefined ? "n/a" : ratio(a, b));
    const saturated = row.loadgenCpuShare >= LOADGEN_SATURATED ? " ◊" : "";
    const bad = row.non2xx > 0 || row.errors > 0 ? " ⚠" : "";
    const mismatch = row.responseMismatch ? " (response differs!)" : "";
    lines.push(
      `| ${row.scenario} | ${SERVER_LABEL[row.server]}${mismatch} | ${int.format(row.reqPerSec)}${saturated} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ` +
        `${fixed(row.cpuUsPerRequest, 1)} | ${fixed(row.rssMiB, 1)} | ` +
        `${vsNode(row.reqPerSec, nodeHttp?.reqPerSec)} | ${ratio(row.reqPerSec, ceiling?.reqPerSec)} | ` +
        `${vsNode(row.cpuUsPerRequest, nodeHttp?.cpuUsPerRequest)} | ${ratio(row.cpuUsPerRequest, ceiling?.cpuUsPerRequest)} | ` +
        `${int.format(row.non2xx)} / ${int.format(row.errors)}${bad} |`,
    );
  }
  return lines.join("\n");
}

export function legend(rows: readonly SummaryRow[], scenarioNotes: ReadonlyArray<readonly [string, string]> = []): string {
  const notes = [
    "Figures are medians over the rounds; non-2xx / errors are totals over all runs (errors include timeouts).",
    "req/s vs X: this server's req/s ÷ X's (above 1: faster). CPU/req vs X: this server's CPU per request ÷ X's (below 1: cheaper).",
    "CPU µs/req: the server's utime+stime (all threads, /proc/<pid>/stat; with workers, the primary's and the workers') over the measured run ÷ responses received. RSS: VmRSS after the run (summed over the processes).",
  ];
  notes.push(
    "The load: wrk, one thread pinned to the load generator's core, through bench/wrk.lua. With pipelining, wrk writes a batch of requests and the next one " +
      "after the batch's last response, and its latency is per batch (from writing it to its last response). wrk counts statuses of 400 and above; " +
      "the one request checked by hand before each run checks the status and the bytes.",
  );
  if (rows.some((r) => r.runs > 0 && r.loadgenCpuShare >= LOADGEN_SATURATED)) {
    notes.push(`◊: wrk used ≥ ${LOADGEN_SATURATED * 100}% of its core; this req/s may be wrk's limit rather than the server's.`);
  }
  if (rows.some((r) => r.non2xx > 0 || r.errors > 0)) notes.push("⚠: some answers had a status of 400 or above, or requests failed; these figures do not measure the intended work.");
  for (const [scenario, note] of scenarioNotes) if (rows.some((r) => r.scenario === scenario)) notes.push(`${scenario}: ${note}`);
  return notes.map((n) => `- ${n}`).join("\n");
}

/**
 * p50 / p99 / max latency of every run, round by round, for the engine
 * scenarios: the tail varies from run to run far more than the medians, and
 * a median of p99s hides that.
 */
export function latencyTable(runs: readonly RunRecord[], scenarios: readonly string[], rounds: number): string {
  const header = ["scenario", "server", ...Array.from({ length: rounds }, (_, i) => `round ${i + 1}: p50 / p99 / max ms`)];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i < 2 ? " --- " : " ---: ")).join("|")}|`];
  for (const scenario of scenarios) {
    for (const server of SERVER_KINDS) {
      const mine = runs.filter((r) => r.scenario === scenario && r.server === server);
      if (mine.length === 0) continue;
      const cells = Array.from({ length: rounds }, (_, i) => {
        const l = mine.find((r) => r.round === i + 1)?.measured.latencyMs;
        return l === undefined ? "–" : `${fixed(l.p50, 2)} / ${fixed(l.p99, 2)} / ${fixed(l.max, 1)}`;
      });
      lines.push(`| ${scenario} | ${SERVER_LABEL[server]} | ${cells.join(" | ")} |`);
    }
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------- the table of ratios

/**
 * One row of the table of ratios: startline beside the server a user would
 * run instead (node:http, or fastify for the data endpoints) and beside the
 * scenario's ceiling. Ratios above 1 for req/s, below 1 for CPU per request,
 * are startline's advantage.
 */
export interface RatioRow {
  readonly scenario: string;
  readonly comparator: string;
  readonly reqPerSec: number;
  readonly cpuUsPerRequest: number;
  /** A string when the comparator cannot take part ("node:http refuses UPDATE"). */
  readonly vsComparator: { readonly reqPerSec: number; readonly cpu: number } | string;
  readonly vsCeiling: { readonly reqPerSec: number; readonly cpu: number } | undefined;
}

/** The rows of the timed scenarios' table, as ratios of the medians. */
export function engineRatios(rows: readonly SummaryRow[]): RatioRow[] {
  const out: RatioRow[] = [];
  for (const row of rows.filter((r) => r.server === "startline" && r.runs > 0)) {
    const peer = (kind: ServerKind) => rows.find((r) => r.scenario === row.scenario && r.server === kind);
    const versus = (p: SummaryRow | undefined) =>
      p === undefined || p.runs === 0 ? undefined : { reqPerSec: row.reqPerSec / p.reqPerSec, cpu: row.cpuUsPerRequest / p.cpuUsPerRequest };
    const nodeHttp = peer("node-http");
    out.push({
      scenario: row.scenario,
      comparator: "node:http",
      reqPerSec: row.reqPerSec,
      cpuUsPerRequest: row.cpuUsPerRequest,
      vsComparator: nodeHttp?.unsupported ?? versus(nodeHttp) ?? "no run completed",
      vsCeiling: versus(peer("ceiling")),
    });
  }
  return out;
}

export function ratioTable(rows: readonly RatioRow[]): string {
  const header = ["scenario", "beside", "startline req/s", "startline CPU µs/req", "req/s vs it", "CPU/req vs it", "req/s vs ceiling", "CPU/req vs ceiling"];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i < 2 ? " --- " : " ---: ")).join("|")}|`];
  const x = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? "–" : `${n.toFixed(2)}×`);
  for (const r of rows) {
    const vs = typeof r.vsComparator === "string" ? [`n/a (${r.vsComparator})`, "n/a"] : [x(r.vsComparator.reqPerSec), x(r.vsComparator.cpu)];
    lines.push(`| ${r.scenario} | ${r.comparator} | ${int.format(r.reqPerSec)} | ${fixed(r.cpuUsPerRequest, 1)} | ${vs.join(" | ")} | ${x(r.vsCeiling?.reqPerSec)} | ${x(r.vsCeiling?.cpu)} |`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------- idle connections

/** One server holding a scenario's idle connections, as written to the results JSON. */
export interface IdleRecord extends RunIdentity {
  /** The server's soft limit on open files. */
  readonly openFilesLimit: number;
  readonly responseDiffs: readonly string[];
  /** Connections asked for. */
  readonly connections: number;
  readonly opened: IdleOpened;
  readonly closed: IdleClosed;
  /** VmRSS before opening (after one request and a pause) and while holding them all (after a pause). */
  readonly rss: { readonly beforeKiB: number; readonly withKiB: number; readonly peakKiB: number };
  /** (with − before) ÷ connections held. */
  readonly kibPerConnection: number;
  /** The server's utime+stime spent accepting and answering them, ÷ connections. */
  readonly cpuUsPerConnection: number;
  readonly machine: { readonly otherCpu: number; readonly stealCpu: number };
  readonly exit: { readonly code: number | null; readonly signal: string | null };
}

export interface IdleSummaryRow {
  readonly scenario: string;
  readonly server: ServerKind;
  readonly runs: number;
  /** Median of the connections held. */
  readonly connections: number;
  readonly rssBeforeMiB: number;
  readonly rssWithMiB: number;
  readonly kibPerConnection: number;
  readonly cpuUsPerConnection: number;
  /** Sums over the runs. */
  readonly failed: number;
  readonly closedEarly: number;
}

export function summarizeIdle(scenario: string, server: ServerKind, runs: readonly IdleRecord[]): IdleSummaryRow {
  const m = (f: (r: IdleRecord) => number) => median(runs.map(f));
  return {
    scenario,
    server,
    runs: runs.length,
    connections: m((r) => r.opened.open),
    rssBeforeMiB: m((r) => r.rss.beforeKiB / 1024),
    rssWithMiB: m((r) => r.rss.withKiB / 1024),
    kibPerConnection: m((r) => r.kibPerConnection),
    cpuUsPerConnection: m((r) => r.cpuUsPerConnection),
    failed: runs.reduce((n, r) => n + r.opened.failed + r.opened.non2xx, 0),
    closedEarly: runs.reduce((n, r) => n + r.closed.closedEarly, 0),
  };
}

export function idleTable(rows: readonly IdleSummaryRow[]): string {
  const header = ["scenario", "server", "idle connections", "RSS before MiB", "RSS with them MiB", "KiB per connection", "vs node:http", "vs ceiling", "CPU µs per connection", "failed / closed early"];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i < 2 ? " --- " : " ---: ")).join("|")}|`];
  for (const row of rows) {
    if (row.runs === 0) {
      lines.push(`| ${row.scenario} | ${SERVER_LABEL[row.server]} | n/a (no run completed) | – | – | – | – | – | – | – |`);
      continue;
    }
    const peer = (kind: ServerKind) => rows.find((r) => r.scenario === row.scenario && r.server === kind && r.runs > 0);
    const bad = row.failed > 0 || row.closedEarly > 0 ? " ⚠" : "";
    lines.push(
      `| ${row.scenario} | ${SERVER_LABEL[row.server]} | ${int.format(row.connections)} | ${fixed(row.rssBeforeMiB, 1)} | ${fixed(row.rssWithMiB, 1)} | ` +
        `${fixed(row.kibPerConnection, 2)} | ${ratio(row.kibPerConnection, peer("node-http")?.kibPerConnection)} | ${ratio(row.kibPerConnection, peer("ceiling")?.kibPerConnection)} | ` +
        `${fixed(row.cpuUsPerConnection, 1)} | ${int.format(row.failed)} / ${int.format(row.closedEarly)}${bad} |`,
    );
  }
  return lines.join("\n");
}

export function idleLegend(): string {
  return [
    "Medians over the rounds. RSS: the server's VmRSS before opening (after one request and a pause) and while holding every connection idle (after a pause); KiB per connection = (with − before) ÷ connections held (1 KiB = 1024 bytes).",
    "Each connection sent one request and read its answer, then stayed open and silent; none may close before the end (closed early), none may fail.",
    "CPU µs per connection: the server's utime+stime while the connections were opened and answered, ÷ connections (accept + one request each).",
  ]
    .map((n) => `- ${n}`)
    .join("\n");
}
