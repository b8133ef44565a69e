// Instructions per request, counted, not timed: each server runs under
// valgrind's callgrind while a client outside it sends an exact number of
// requests; the count of the server's instructions over that window, divided
// by the requests, is the user-space work of one request (the kernel's share
// of a socket write is not counted: valgrind sees only the process).
//
//   npm run bench:instructions -- [--path /api/v1/status] [--requests 10000]
//   (npm run bench -- --instructions ...)
//     [--connections 10] [--servers startline,node-http,ceiling] [--top 30] [--varied] [--cache] [--v8 "V8 flags"]
//   --servers app-on-startline,app-on-node [--app bare|koa|fastify|express]: an app of
//     bench/servers/node-apps.js on startline/node and on node:http (what an adapter change costs,
//     counted where timed runs of the node-* scenarios swing more than the change)
//
// --varied sends two requests in turn on each connection, of one length but
// with a different last byte in the target (?a, ?b) and in the Host's port:
// no head repeats the one before it, so startline's head memory
// (src/http/parse/head-memory.ts) never helps and each head costs it the most a
// miss can (a comparison up to the last byte that differs, then a copy, until
// it is left alone). Without it every request is the same, as under wrk or autocannon.
//
// Why: on a shared machine a timed run of one server swings by 30% from
// minute to minute with the neighbours' load, so CPU time per request cannot
// settle a 10% question. An instruction count does not depend on that load:
// windows of the same server agree within about 3%. It is not the whole
// cost (cache misses, branch mispredictions and the kernel are not in it), so
// it complements the timed runs of `npm run bench`; it does not replace them.
//
// --cache asks valgrind to simulate this machine's caches and branch
// predictor as well (--cache-sim, --branch-sim; about twice as slow) and adds,
// per request, the misses of the first-level instruction and data caches, of
// the last level, and the mispredicted branches. They are a model, not a
// measurement (the kernel, which runs between the reads and writes, is not
// in it, nor are prefetchers), but a deterministic one: it shows what an
// instruction count cannot, why two servers a few percent apart in
// instructions can be farther apart in time. Each miss costs a few to a few
// dozen cycles where an instruction costs under one.
//
// Each server is warmed up first (20,000 requests one at a time, 20,000 ten
// at a time, 10,000 one at a time), under valgrind, which runs about 50 times slower, so that
// V8 has compiled the hot path before the windows are counted. Windows
// alternate depth 1 (one request per read) and depth 10 (10 pipelined), three
// times each; the table gives their median, and every window, so that their
// agreement can be seen (a major collection in one window shows). --top N
// lists, for each server, the N functions with the most instructions in its last
// window of each depth (JavaScript named through node's --perf-basic-prof
// map, native code by its symbol).
//
// --v8 "flags" starts every server with more of V8's flags, e.g.
// --v8 --no-allocation-site-pretenuring: to tell whether a difference
// between two builds' counts comes from their code or from a choice V8 makes
// for each process (docs/benchmarks.md, the twenty-first session: issue 49).

import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendFixedLoad } from "./fixed-load.js";
import { launch } from "./launch.js";
import { LABEL as SERVER_LABEL, type ServerKind } from "./scenarios.js";
import { withoutSettings } from "../src/config.js";
import { option } from "./option.js";


const KINDS: readonly ServerKind[] = ["startline", "node-http", "ceiling", "app-on-startline", "app-on-node"];

interface Counted {
  readonly kind: ServerKind;
  /** Instructions per request, by depth, one entry per window. */
  readonly perRequest: Map<number, number[]>;
  /** --cache: the simulated misses per request, by depth, one entry per window. */
  readonly misses: Map<number, Misses[]>;
  /** --top: the functions of the last window of each depth. */
  readonly top: Map<number, string[]>;
}

/** What --cache adds to a window, per request: valgrind's cache and branch model. */
export interface Misses {
  /** First-level instruction cache: code fetched from farther away. */
  readonly i1: number;
  /** First-level data cache, reads and writes. */
  readonly d1: number;
  /** Last-level cache, code and data: memory. */
  readonly ll: number;
  /** Conditional and indirect branches mispredicted. */
  readonly branches: number;
}

interface Valgrinded {
  readonly pid: number;
  readonly port: number;
  /** Zero callgrind's counters; write them out (returns the file). */
  zero(): void;
  dump(): Promise<string>;
  stop(): Promise<void>;
}

async function startUnderCallgrind(kind: ServerKind, dir: string, symbols: boolean, cache: boolean): Promise<Valgrinded> {
  // callgrind names the file with the pid (%p), and each dump adds its part number: <kind>.<pid>.<part>.
  const outFile = join(dir, `${kind}.%p`);
  // V8's memory reducer runs full collections when a process seems idle, judged by bytes allocated per
  // millisecond; under valgrind, 50 to 100 times slower, every server seems idle, and such a collection of
  // startline's heap (its documents, schemas and page) put 2,000 to 10,000 instructions per request into
  // one window of three (seen with --cache). Under wrk, at full speed, it never ran (--trace-gc: scavenges
  // only, over 9 s); here it is off, so that the windows count what a loaded server does.
  // --perf-basic-prof also makes V8 write a log; into the temporary directory with it, not the repository.
  const nodeArgs = ["--no-memory-reducer", ...option("--v8", "").split(" ").filter((flag) => flag !== ""), ...(symbols ? ["--perf-basic-prof", "--no-logfile-per-isolate", `--logfile=${join(dir, `${kind}-v8.log`)}`] : [])];
  const env: Record<string, string> = { ...withoutSettings(process.env), PORT: "0", HOST: "127.0.0.1", QUIET: "1", DATA_DIR: ":memory:" };
  if (kind === "app-on-startline" || kind === "app-on-node") Object.assign(env, { APP: option("--app", "bare"), ON: kind === "app-on-startline" ? "startline" : "node" });
  const simulate = cache ? ["--cache-sim=yes", "--branch-sim=yes"] : [];
  const server = await launch(kind, env, { wrap: ["valgrind", "--tool=callgrind", ...simulate, `--callgrind-out-file=${outFile}`], nodeArgs });
  const pid = server.pid;
  let parts = 0;
  return {
    pid,
    port: server.port,
    // vgdb, which carries the request, finds the server by a file named after USER and HOST: the server's own env says which.
    zero: () => execFileSync("callgrind_control", ["--zero", String(pid)], { env, stdio: "ignore" }),
    dump: async () => {
      execFileSync("callgrind_control", ["--dump", String(pid)], { env, stdio: "ignore" });
      // The request reaches the server through vgdb, and the file may come a moment after callgrind_control returns:
      // wait until the next part is there and whole (its last line, "totals:", is written last).
      parts++;
      const file = join(dir, `${kind}.${pid}.${parts}`);
      for (let waited = 0; !(existsSync(file) && /^totals:/m.test(readFileSync(file, "utf8"))); waited += 50) {
        if (waited > 60_000) throw new Error(`callgrind wrote no ${file} within a minute (files: ${readdirSync(dir).join(", ")})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return file;
    },
    stop: async () => void (await server.stop()),
  };
}

/**
 * The "summary:" line of a callgrind dump, named by its "events:" line:
 * Ir (instructions executed in the window) and, under --cache-sim and
 * --branch-sim, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw (cache misses), Bcm and
 * Bim (mispredicted branches).
 */
export function eventsIn(text: string): Map<string, number> {
  const names = /^events:\s+(.*)$/m.exec(text);
  const counts = /^summary:\s+(.*)$/m.exec(text);
  if (names === null || counts === null) throw new Error("a callgrind dump without its events: or summary: line");
  const values = counts[1]!.trim().split(/\s+/).map(Number);
  return new Map(names[1]!.trim().split(/\s+/).map((name, i) => [name, values[i] ?? 0]));
}

export function missesIn(events: Map<string, number>, requests: number): Misses {
  const sum = (...names: string[]) => names.reduce((total, name) => total + (events.get(name) ?? 0), 0) / requests;
  return { i1: sum("I1mr"), d1: sum("D1mr", "D1mw"), ll: sum("ILmr", "DLmr", "DLmw"), branches: sum("Bcm", "Bim") };
}

/**
 * The perf map node writes with --perf-basic-prof (its text): JIT code ranges
 * and their functions, in the order V8 wrote them. V8 never says when code is
 * freed, and the space of code it dropped (a function optimized while the
 * server started, then thrown away) is reused for code compiled later: an
 * address may lie in several ranges, and only the one written last is what
 * runs there. The name of that one, for an address; undefined outside them all.
 */
export function perfMapNames(text: string): (address: number) => string | undefined {
  const map = text
    .split("\n")
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m, order) => ({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]!, order }))
    .sort((a, b) => a.start - b.start);
  const longest = map.reduce((most, range) => Math.max(most, range.end - range.start), 0);
  return (address) => {
    // The last range that starts at or before the address, then back over those that may still reach it.
    let lo = 0;
    let hi = map.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (map[mid]!.start <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    let found: { name: string; order: number } | undefined;
    for (let i = hi; i >= 0 && map[i]!.start > address - longest; i--) {
      const range = map[i]!;
      if (address < range.end && (found === undefined || range.order > found.order)) found = range;
    }
    return found?.name;
  };
}

/** What callgrind_annotate is asked to show for --top: the instructions, and with --cache the misses too. */
const TOP_EVENTS = ["Ir", "I1mr", "D1mr", "D1mw", "Bcm", "Bim"] as const;

/**
 * callgrind_annotate's table of functions, each with `columns` counts of its
 * own (a count, a count with its share in brackets, or "." for none), as
 * counts by name: JIT code through `find` (the perf map), native code by its
 * symbol without its file or arguments. Also the PROGRAM TOTALS line.
 */
export function ownCounts(text: string, columns: number, find: (address: number) => string | undefined): { totals: number[]; self: Map<string, number[]> } {
  const self = new Map<string, number[]>();
  let totals: number[] = [];
  const cell = /^\s*([\d,]+|\.)(?: \([\s\d.]+%\))?/;
  for (const line of text.split("\n")) {
    const counts: number[] = [];
    let rest = line;
    for (let k = 0; k < columns; k++) {
      const m = cell.exec(rest);
      if (m === null) break;
      counts.push(m[1] === "." ? 0 : Number(m[1]!.replace(/,/g, "")));
      rest = rest.slice(m[0].length);
    }
    if (counts.length < columns || !/^\s+\S/.test(rest)) continue;
    let name = rest.trim();
    if (name.includes("PROGRAM TOTALS")) {
      totals = counts;
      continue;
    }
    const jit = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(name);
    if (jit !== null) name = find(parseInt(jit[1]!, 16)) ?? "(code without a name in the perf map)";
    else {
      name = name
        .replace(/^\?\?\?:/, "")
        .replace(/ \[[^\]]*\]$/, "")
        .replace(/\(anonymous namespace\)::/g, "")
        .replace(/\(.*\)( const)?$/, "");
    }
    // The frames every sample sits under (main, the event loop) carry the whole count; they say nothing.
    if (totals.length > 0 && counts[0]! > 0.9 * totals[0]!) continue;
    const sum = self.get(name);
    if (sum === undefined) self.set(name, counts);
    else for (let k = 0; k < columns; k++) sum[k]! += counts[k]!;
  }
  return { totals, self };
}

/** The functions of a dump with the most instructions of their own, per request; with --cache, their misses beside. */
function topFunctions(file: string, pid: number, requests: number, count: number, cache: boolean): string[] {
  const events = cache ? TOP_EVENTS : TOP_EVENTS.slice(0, 1);
  const args = ["--threshold=100", "--auto=no", "--inclusive=no", `--show=${events.join(",")}`, "--sort=Ir", file];
  const text = execFileSync("callgrind_annotate", args, { encoding: "utf8", maxBuffer: 64 << 20 });
  const mapFile = `/tmp/perf-${pid}.map`;
  const { totals, self } = ownCounts(text, events.length, perfMapNames(existsSync(mapFile) ? readFileSync(mapFile, "utf8") : ""));
  const per = (n: number, digits: number) => (n / requests).toFixed(digits);
  return [...self]
    .sort((a, b) => b[1][0]! - a[1][0]!)
    .slice(0, count)
    .map(([name, [ir, i1 = 0, d1r = 0, d1w = 0, bc = 0, bi = 0]]) => {
      const misses = cache ? `  I1 ${per(i1, 1).padStart(5)}  D1 ${per(d1r + d1w, 1).padStart(5)}  branches ${per(bc + bi, 1).padStart(5)}` : "";
      return `${per(ir!, 0).padStart(7)}  ${((100 * ir!) / (totals[0] ?? ir!)).toFixed(1).padStart(5)}%${misses}  ${name.replace(/file:\/\/.*\/dist\//, "")}`;
    });
}

async function count(kind: ServerKind, dir: string, request: Buffer | readonly Buffer[], requests: number, connections: number, top: number, cache: boolean): Promise<Counted> {
  const server = await startUnderCallgrind(kind, dir, top > 0, cache);
  const load = (total: number, depth: number) => sendFixedLoad({ port: server.port, request, total, connections, depth });
  const counted: Counted = { kind, perRequest: new Map(), misses: new Map(), top: new Map() };
  try {
    await load(20_000, 1);
    await load(20_000, 10);
    // The first window of one depth after the other came out 20% high without this.
    await load(10_000, 1);
    for (const depth of [1, 10, 1, 10, 1, 10]) {
      server.zero();
      await load(requests, depth);
      const file = await server.dump();
      const events = eventsIn(readFileSync(file, "utf8"));
      const list = counted.perRequest.get(depth) ?? [];
      list.push(events.get("Ir")! / requests);
      counted.perRequest.set(depth, list);
      if (cache) counted.misses.set(depth, [...(counted.misses.get(depth) ?? []), missesIn(events, requests)]);
      if (top > 0) counted.top.set(depth, topFunctions(file, server.pid, requests, top, cache));
      rmSync(file);
    }
  } finally {
    await server.stop();
    rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
  }
  return counted;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

/** `npm run bench -- --instructions [options]`: the table, from process.argv; the exit status. */
export async function countInstructions(): Promise<number> {
  try {
    await main();
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  }
}

async function main(): Promise<void> {
  const path = option("--path", "/api/v1/status");
  const requests = Number(option("--requests", "10000"));
  const connections = Number(option("--connections", "10"));
  const top = Number(option("--top", "0"));
  const kinds = option("--servers", "startline,node-http,ceiling").split(",") as ServerKind[];
  for (const kind of kinds) if (!KINDS.includes(kind)) throw new Error(`--servers: unknown server "${kind}" (${KINDS.join(", ")})`);
  const varied = process.argv.includes("--varied");
  const cache = process.argv.includes("--cache");
  const requestTo = (target: string, port: number) => Buffer.from(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, "latin1");
  const sep = path.includes("?") ? "&" : "?";
  const request = varied ? [requestTo(`${path}${sep}a`, 8080), requestTo(`${path}${sep}b`, 8081)] : requestTo(path, 8080);
  const dir = mkdtempSync(join(tmpdir(), "startline-instructions-"));
  const results: Counted[] = [];
  try {
    for (const kind of kinds) {
      console.error(`counting ${SERVER_LABEL[kind]} under callgrind (a minute or two)...`);
      results.push(await count(kind, dir, request, requests, connections, top, cache));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const of = (kind: ServerKind, depth: number) => {
    const r = results.find((c) => c.kind === kind);
    return r === undefined ? undefined : median(r.perRequest.get(depth)!);
  };
  const what = varied ? `GET ${path}${sep}a and ${sep}b in turn (no line repeats)` : `GET ${path}`;
  console.log(`${what}: instructions per request (user space), ${requests} requests per window over ${connections} connections\n`);
  console.log("| server | depth | windows | per request | vs node:http | vs ceiling |");
  console.log("|---|---:|---|---:|---:|---:|");
  for (const depth of [1, 10]) {
    for (const r of results) {
      const windows = r.perRequest.get(depth)!.map(thousands).join(" / ");
      const mine = median(r.perRequest.get(depth)!);
      const node = of("node-http", depth);
      const ceiling = of("ceiling", depth);
      const ratio = (base: number | undefined) => (base === undefined ? "" : `${(mine / base).toFixed(2)}×`);
      console.log(`| ${SERVER_LABEL[r.kind]} | ${depth} | ${windows} | ${thousands(mine)} | ${ratio(node)} | ${ratio(ceiling)} |`);
    }
  }
  if (cache) {
    const missOf = (r: Counted, depth: number, field: keyof Misses) => median(r.misses.get(depth)!.map((m) => m[field]));
    const ceiling = results.find((c) => c.kind === "ceiling");
    console.log(`\nSimulated misses per request (valgrind's model of the caches and branch predictor; medians of the windows${ceiling === undefined ? "" : "; × the ceiling's"})\n`);
    console.log("| server | depth | L1 instruction | L1 data | last level | mispredicted branches |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const depth of [1, 10]) {
      for (const r of results) {
        const cell = (field: keyof Misses) => {
          const mine = missOf(r, depth, field);
          const base = ceiling === undefined || r === ceiling ? undefined : missOf(ceiling, depth, field);
          return `${mine.toFixed(1)}${base === undefined || base === 0 ? "" : ` (${(mine / base).toFixed(2)}×)`}`;
        };
        console.log(`| ${SERVER_LABEL[r.kind]} | ${depth} | ${cell("i1")} | ${cell("d1")} | ${cell("ll")} | ${cell("branches")} |`);
      }
    }
  }
  for (const r of results) {
    for (const [depth, lines] of r.top) {
      console.log(`\n${SERVER_LABEL[r.kind]}, depth ${depth}: instructions per request by function (own, not callees)${cache ? ", and their simulated misses" : ""}`);
      for (const line of lines) console.log(`  ${line}`);
    }
  }
}

