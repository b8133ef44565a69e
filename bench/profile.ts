// Where the server's time goes under load: startline runs with --cpu-prof,
// pinned like the benchmark's servers, while wrk loads one endpoint; then
// the profile is summed up by function and by part of the stack.
//
//   npm run bench:profile -- [--path /api/v1/status] [--depth 1] [--duration 10] [--top 25] [--keep dir]
//     [--connections 100] [--fill N]
//
// --fill N runs startline on a SQLite file (not :memory:) holding the data
// bench's posts p0 to p<N - 1> (bench/data.ts), published through HTTP before
// the profiled run: `--fill 1000 --path '/api/v1/posts?limit=50' --connections 50`
// profiles a page of 50 as `npm run bench:data` measures it.
//
// Shares are of the server's busy time (the profile's samples, idle ones left
// out). V8's sampler sees JavaScript and the native functions it calls; the
// system call that writes a response shows up as the native function that
// makes it (writeUtf8String, writeBuffer), with the kernel's work for the
// write inside it.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fill } from "./data.js";
import { ROOT, STARTLINE_MAIN } from "./paths.js";
import { detectPinning, listeningPort, pinnedNode } from "./proc.js";
import { runWrk } from "./wrk.js";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  /** µs on the monotonic clock (the one process.hrtime reads), as is each sample's time. */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The parts of the stack a sample is counted in, by the file (or native function) it is in. */
const AREAS: ReadonlyArray<readonly [string, RegExp]> = [
  ["socket writes (system call)", /^(writeUtf8String|writeLatin1String|writeBuffer|writev|writeAsciiString) /],
  ["parser", /src\/http\/parse\//],
  ["connection and writer", /src\/http\/(connection\/|message\/(response|date|status|stream-body|problem)\.js)/],
  ["router and handlers", /src\/(router|api|docs|app|http\/message\/(compression|media|conditional))/],
  ["node streams and events", /node:(internal\/streams|net|internal\/stream_base_commons|events|internal\/process\/task_queues|internal\/timers|buffer)/],
  ["garbage collector", /^\(garbage collector\)/],
];

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1]!;
}

const site = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.replace(/^.*\/(dist|node_modules)\//, "")}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ""}`;

/**
 * Self time by function, and time by area (each sample counted in the
 * innermost area on its stack), of the samples taken in [fromUs, toUs] (the
 * load run, not the server's start).
 */
export function summarize(profile: CpuProfile, top: number, fromUs: number, toUs: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!)!;
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (at < fromUs || at > toUs || node.callFrame.functionName === "(idle)") continue;
    busy += dt;
    self.set(site(node), (self.get(site(node)) ?? 0) + dt);
    let area = "other (native, startup, timers)";
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const found = AREAS.find(([, pattern]) => pattern.test(site(byId.get(id!)!)));
      if (found !== undefined) {
        area = found[0];
        break;
      }
    }
    areas.set(area, (areas.get(area) ?? 0) + dt);
  }
  const share = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `busy ${(busy / 1e6).toFixed(2)} s of samples`,
    "",
    "by part (each sample counted in the innermost part on its stack):",
    ...sorted(areas).map(([a, t]) => `  ${share(t)}  ${a}`),
    "",
    `top ${top} functions by self time:`,
    ...sorted(self)
      .slice(0, top)
      .map(([s, t]) => `  ${share(t)}  ${s}`),
  ].join("\n");
}

async function main(): Promise<void> {
  const path = option("--path", "/api/v1/status");
  const depth = Number(option("--depth", "1"));
  const duration = Number(option("--duration", "10"));
  const top = Number(option("--top", "25"));
  const keep = option("--keep", "");
  const connections = Number(option("--connections", "100"));
  const posts = Number(option("--fill", "0"));
  const dir = keep || mkdtempSync(join(tmpdir(), "startline-profile-"));
  const pinning = detectPinning();
  const [command, args] = pinnedNode(pinning, pinning.serverCore, ["--cpu-prof", "--cpu-prof-dir", dir, STARTLINE_MAIN]);
  const dataDir = posts > 0 ? join(dir, "data") : ":memory:";
  const server = spawn(command, args, { cwd: ROOT, env: { ...process.env, PORT: "0", HOST: "127.0.0.1", QUIET: "1", DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => server.once("exit", resolve));
  const port = await listeningPort(server, "startline");
  if (posts > 0) await fill(port, posts);
  const job = { url: `http://127.0.0.1:${port}`, request: { method: "GET", path }, connections, pipelining: depth, timeout: 10 };
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const result = await runWrk(pinning, { ...job, duration });
  const toUs = Number(process.hrtime.bigint() / 1000n);
  server.kill("SIGTERM");
  await exited;
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no profile was written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
  console.log(
    `GET ${path}, ${depth} request${depth === 1 ? "" : "s"} per batch, ${connections} connections${posts > 0 ? `, ${posts} posts on SQLite` : ""}, ${duration} s under wrk (profiled: slower than unprofiled): ` +
      `${Math.round(result.reqPerSec)} req/s, ${result.non2xx + result.errors} errors${pinning.enabled ? "; server on core 0, wrk on core 1" : ""}\n`,
  );
  console.log(summarize(profile, top, fromUs, toUs));
  if (keep) console.log(`\nprofile: ${join(dir, file)}`);
  else rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
