// `npm run bench:lists`: what a list costs as the collection grows, and what
// full lists cost the other clients. Not a throughput comparison (that is
// bench/run.ts); each figure here is one request, or a few hundred in a row,
// against a startline process on a SQLite file filled directly
// (bench/lists-fill.ts), not through HTTP.
//
// 1. Growth, for each size (default 10^3, 10^4, 10^5, 10^6 posts of about
//    300 bytes of JSON each): a fresh server on the filled file; one full
//    JSON list read as fast as the socket allows (time to the first body
//    byte, total time, bytes) while the server's RSS is sampled every 10 ms
//    (before, and the largest seen during it); the same in YAML up to
//    --yaml-max; then 200 pages of 50 in a row on one keep-alive connection,
//    at the start, the middle and the end of the collection (p50, p99), and
//    200 list requests answered 304 (If-None-Match: *).
// 2. Six concurrent full lists of 3,000 posts of 30 KB (a 90 MB list each,
//    read by six curl processes), while GET /api/v2/status is sent every
//    5 ms on a keep-alive connection of its own: the status requests' wait
//    (p50, p99, max), and the server's RSS before and at its largest.
// 3. The same wait behind one YAML list of 20,000 small posts.
//
// The machine is not pinned or quiet: figures are one run each on whatever
// the machine was doing; the time figures move with its load, the shapes
// (constant page time, flat RSS, a bounded status wait) should not.
//
// Options: --sizes 1000,10000,... --yaml-max N (default 100000) --dir DIR
// (keep the filled files there and reuse them; default a temporary directory,
// removed at the end) --skip-growth --skip-concurrent.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { encodeCursor } from "../src/api/list-query.js";
import { DATABASE_FILE } from "../src/store/open.js";
import { curlList, percentile, readWhole, sampleRss, Sequential, startStartline, type Server } from "./lists-client.js";
import { fillPosts } from "./lists-fill.js";
import { DEFAULT_RESULTS_DIR } from "./paths.js";
import { procStatus } from "./proc.js";

interface Options {
  sizes: number[];
  yamlMax: number;
  dir: string | undefined;
  growth: boolean;
  concurrent: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { sizes: [1_000, 10_000, 100_000, 1_000_000], yamlMax: 100_000, dir: undefined, growth: true, concurrent: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--sizes") options.sizes = argv[++i]!.split(",").map(Number);
    else if (arg === "--yaml-max") options.yamlMax = Number(argv[++i]);
    else if (arg === "--dir") options.dir = argv[++i];
    else if (arg === "--skip-growth") options.growth = false;
    else if (arg === "--skip-concurrent") options.concurrent = false;
    else throw new Error(`unknown option ${arg}`);
  }
  if (options.sizes.some((n) => !Number.isInteger(n) || n < 100)) throw new Error("--sizes: whole numbers of at least 100");
  return options;
}

const MiB = (kib: number) => kib / 1024;
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** A data directory holding `posts` posts (of `bodyChars` each), filled once and reused from --dir. */
async function filled(root: string, name: string, posts: number, bodyChars = 0): Promise<string> {
  const dir = path.join(root, name);
  if (existsSync(path.join(dir, DATABASE_FILE))) return dir;
  const seconds = await fillPosts(dir, { posts, bodyChars });
  console.error(`filled ${name}: ${posts} posts in ${fmt(seconds)} s`);
  return dir;
}

/** `count` requests of `target` in a row on one connection: sorted latencies in ms. */
async function inARow(server: Server, target: string, count: number, headers: Record<string, string> = {}, status = 200): Promise<number[]> {
  const connection = await Sequential.open(server.port);
  try {
    const ms: number[] = [];
    for (let i = 0; i < count; i++) {
      const r = await connection.get(target, headers);
      if (r.status !== status) throw new Error(`${target} answered ${r.status}, expected ${status}`);
      ms.push(r.ms);
    }
    return ms.sort((a, b) => a - b);
  } finally {
    connection.close();
  }
}

interface GrowthRow {
  posts: number;
  json: { bytes: number; firstBodyByteMs: number; totalS: number; rssBeforeMiB: number; rssPeakMiB: number };
  yaml?: { firstBodyByteMs: number; totalS: number; rssPeakMiB: number };
  pageMs: Record<"start" | "middle" | "end", { p50: number; p99: number }>;
  notModifiedMs: { p50: number; p99: number };
}

async function growth(root: string, options: Options): Promise<GrowthRow[]> {
  const rows: GrowthRow[] = [];
  for (const posts of options.sizes) {
    const dir = await filled(root, `posts-${posts}`, posts);
    const server = await startStartline(dir);
    try {
      // Warm the code paths on small requests first, so the list measures the list, not the compiler.
      await inARow(server, "/api/v1/posts?limit=50", 50);
      await readWhole(server.port, "/api/v2/facts");
      const before = procStatus(server.pid).rssKiB;
      const sampler = sampleRss(server.pid);
      const json = await readWhole(server.port, "/api/v1/posts", { Accept: "application/json" });
      const jsonPeak = sampler.stop();
      let yaml: GrowthRow["yaml"];
      if (posts <= options.yamlMax) {
        const s = sampleRss(server.pid);
        const y = await readWhole(server.port, "/api/v1/posts", { Accept: "application/yaml" });
        yaml = { firstBodyByteMs: y.firstBodyByteMs, totalS: y.totalMs / 1000, rssPeakMiB: MiB(s.stop()) };
      }
      // Positions run 1..posts in a freshly filled file: a page after position p starts at post p + 1.
      const page = async (after: number) => {
        const ms = await inARow(server, after === 0 ? "/api/v1/posts?limit=50" : `/api/v1/posts?limit=50&after=${encodeCursor("posts", after)}`, 200);
        return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
      };
      const pageMs = { start: await page(0), middle: await page(Math.floor(posts / 2)), end: await page(posts - 50) };
      const nm = await inARow(server, "/api/v1/posts", 200, { "If-None-Match": "*" }, 304);
      const row: GrowthRow = {
        posts,
        json: { bytes: json.bytes, firstBodyByteMs: json.firstBodyByteMs, totalS: json.totalMs / 1000, rssBeforeMiB: MiB(before), rssPeakMiB: MiB(jsonPeak) },
        ...(yaml === undefined ? {} : { yaml }),
        pageMs,
        notModifiedMs: { p50: percentile(nm, 50), p99: percentile(nm, 99) },
      };
      rows.push(row);
      console.error(`growth ${posts}: ${JSON.stringify(row)}`);
    } finally {
      await server.stop();
    }
  }
  return rows;
}

interface WaitRow {
  what: string;
  lists: number;
  listSeconds: number[];
  statusIdleMs: { p50: number; p99: number };
  statusMs: { count: number; p50: number; p99: number; max: number };
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

/** The status endpoint's wait while `lists` full lists of `target` stream to curl processes. */
async function statusWait(dir: string, what: string, lists: number, accept: string): Promise<WaitRow> {
  const server = await startStartline(dir);
  try {
    await inARow(server, "/api/v1/posts?limit=50", 50);
    await curlList(server.port, "/api/v1/posts?limit=1000", accept).done; // warm the streaming path
    const idle = await inARow(server, "/api/v2/status", 200);
    const before = procStatus(server.pid).rssKiB;
    const sampler = sampleRss(server.pid);
    const probe = await Sequential.open(server.port);
    const readers = Array.from({ length: lists }, () => curlList(server.port, "/api/v1/posts", accept));
    // Probing starts once the curl processes run: spawning them blocks this process, which would count as the server's wait.
    await Promise.all(readers.map((r) => r.spawned));
    const waits: number[] = [];
    let streaming = true;
    const probing = (async () => {
      while (streaming) {
        waits.push((await probe.get("/api/v2/status")).ms);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const results = await Promise.all(readers.map((r) => r.done));
    streaming = false;
    await probing;
    probe.close();
    const peak = sampler.stop();
    waits.sort((a, b) => a - b);
    const row: WaitRow = {
      what,
      lists,
      listSeconds: results.map((r) => r.totalS),
      statusIdleMs: { p50: percentile(idle, 50), p99: percentile(idle, 99) },
      statusMs: { count: waits.length, p50: percentile(waits, 50), p99: percentile(waits, 99), max: waits.at(-1) ?? NaN },
      rssBeforeMiB: MiB(before),
      rssPeakMiB: MiB(peak),
    };
    console.error(`wait ${what}: ${JSON.stringify(row)}`);
    return row;
  } finally {
    await server.stop();
  }
}

function report(rows: GrowthRow[], waits: WaitRow[]): string {
  const lines: string[] = [];
  if (rows.length > 0) {
    lines.push("Full list (JSON) and pages, by collection size:", "");
    lines.push("| posts | list MB | first body byte ms | whole list s | RSS before MiB | RSS peak MiB | growth MiB | YAML first byte ms | YAML s | YAML growth MiB | page of 50 p50/p99 ms: start | middle | end | 304 p50 ms |");
    lines.push("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) {
      const y = r.yaml;
      const p = (k: "start" | "middle" | "end") => `${fmt(r.pageMs[k].p50, 2)} / ${fmt(r.pageMs[k].p99, 2)}`;
      lines.push(
        `| ${r.posts.toLocaleString("en")} | ${fmt(r.json.bytes / 1e6)} | ${fmt(r.json.firstBodyByteMs)} | ${fmt(r.json.totalS, 2)} | ${fmt(r.json.rssBeforeMiB)} | ${fmt(r.json.rssPeakMiB)} | ${fmt(r.json.rssPeakMiB - r.json.rssBeforeMiB)} | ` +
          `${y === undefined ? "-" : fmt(y.firstBodyByteMs)} | ${y === undefined ? "-" : fmt(y.totalS, 2)} | ${y === undefined ? "-" : fmt(y.rssPeakMiB - r.json.rssBeforeMiB)} | ${p("start")} | ${p("middle")} | ${p("end")} | ${fmt(r.notModifiedMs.p50, 2)} |`,
      );
    }
    lines.push("");
  }
  if (waits.length > 0) {
    lines.push("GET /api/v2/status every 5 ms while full lists stream:", "");
    lines.push("| lists | each list s | status idle p50/p99 ms | status during: n | p50 ms | p99 ms | max ms | RSS before MiB | RSS peak MiB |");
    lines.push("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const w of waits) {
      lines.push(
        `| ${w.what} | ${w.listSeconds.map((s) => fmt(s, 2)).join(", ")} | ${fmt(w.statusIdleMs.p50, 2)} / ${fmt(w.statusIdleMs.p99, 2)} | ${w.statusMs.count} | ${fmt(w.statusMs.p50, 2)} | ${fmt(w.statusMs.p99, 2)} | ${fmt(w.statusMs.max, 2)} | ${fmt(w.rssBeforeMiB)} | ${fmt(w.rssPeakMiB)} |`,
      );
    }
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const root = options.dir ?? mkdtempSync(path.join(tmpdir(), "startline-lists-"));
  mkdirSync(root, { recursive: true });
  try {
    const rows = options.growth ? await growth(root, options) : [];
    const waits: WaitRow[] = [];
    if (options.concurrent) {
      waits.push(await statusWait(await filled(root, "posts-3000x30k", 3_000, 30_000), "6 × JSON, 3,000 posts of 30 KB", 6, "application/json"));
      waits.push(await statusWait(await filled(root, "posts-20000", 20_000), "1 × YAML, 20,000 small posts", 1, "application/yaml"));
    }
    const text = report(rows, waits);
    console.log(text);
    mkdirSync(DEFAULT_RESULTS_DIR, { recursive: true });
    const file = path.join(DEFAULT_RESULTS_DIR, `lists-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, JSON.stringify({ options, rows, waits }, null, 2));
    console.log(`\nraw results: ${path.relative(process.cwd(), file)}`);
  } finally {
    if (options.dir === undefined) rmSync(root, { recursive: true, force: true });
  }
}

await main();
