// Paired, interleaved slices: startline, node:http and the ceiling all stay
// up, and wrk loads each in turn for a short slice, cycle after cycle; each
// cycle's ratios compare slices taken seconds apart, and the report gives
// the median ratio over the cycles with its quartiles.
//
//   npm run bench:paired -- [--path /api/v1/status] [--depths 1,10] [--slice 2] [--cycles 15] [--connections 100]
//
// Why: on this project's shared 2-core machines the speed of a core swings
// by up to 1.7× in phases of several seconds (a fixed loop pinned to one
// core ran 29 to 50 times a second, minute to minute, and each core on its
// own schedule). `npm run bench` runs each server for 10 s at a time, so a
// server that happens to meet a slow phase loses a third of its figure and
// a ratio of medians from 3 rounds can move by 30%. Slices of 2 s, taken
// back to back, mostly fall in the same phase; the median over many cycles
// of the ratio within each cycle is what the goals of issue 15 ask about.
//
// Servers on the server core, wrk on the client core, as in `npm run bench`
// (bench/proc.ts); the ceiling replays startline's response to the request.
// Each server is warmed up for 2 s at each depth before the cycles start.

import { spawn, type ChildProcess } from "node:child_process";
import { fetchOne } from "./probe.js";
import { ROOT, STARTLINE_MAIN, benchScript } from "./paths.js";
import { clockTicksPerSecond, cpuTicks, detectPinning, listeningPort, pinnedNode, type Pinning } from "./proc.js";
import { SERVER_LABEL, type ServerKind } from "./report.js";
import { runWrk } from "./wrk.js";
import { withoutSettings } from "../src/config.js";

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1]!;
}

interface Server {
  readonly kind: ServerKind;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
}

async function start(pinning: Pinning, kind: ServerKind, extraEnv: Record<string, string> = {}): Promise<Server> {
  const script = kind === "startline" ? STARTLINE_MAIN : benchScript(kind === "ceiling" ? "servers/ceiling" : "servers/node-http");
  const env = { ...withoutSettings(process.env), ...extraEnv, PORT: "0", HOST: "127.0.0.1", QUIET: "1", DATA_DIR: ":memory:" };
  const [command, args] = pinnedNode(pinning, pinning.serverCore, [script]);
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  const port = await listeningPort(child, SERVER_LABEL[kind]);
  return { kind, child, pid: child.pid!, port };
}

interface Slice {
  readonly reqPerSec: number;
  readonly cpuUsPerReq: number;
  readonly p99Ms: number;
}

async function slice(pinning: Pinning, server: Server, path: string, depth: number, seconds: number, connections: number): Promise<Slice> {
  const before = cpuTicks(server.pid);
  const s = await runWrk(pinning, {
    url: `http://127.0.0.1:${server.port}`,
    request: { method: "GET", path },
    connections,
    pipelining: depth,
    duration: seconds,
    timeout: 10,
  });
  const cpuUs = ((cpuTicks(server.pid) - before) * 1e6) / clockTicksPerSecond();
  if (s.errors > 0 || s.non2xx > 0 || s.requests === 0) throw new Error(`${SERVER_LABEL[server.kind]}: ${s.requests} requests, ${s.errors} errors, ${s.non2xx} non-2xx`);
  return { reqPerSec: s.reqPerSec, cpuUsPerReq: cpuUs / s.requests, p99Ms: s.latencyMs.p99 };
}

/** The p-quantile of xs (nearest rank). */
function quantile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(p * (sorted.length - 1))))]!;
}

const spread = (xs: readonly number[], digits: number) =>
  `${quantile(xs, 0.5).toFixed(digits)} (${quantile(xs, 0.25).toFixed(digits)}–${quantile(xs, 0.75).toFixed(digits)})`;

async function main(): Promise<void> {
  const path = option("--path", "/api/v1/status");
  const depths = option("--depths", "1,10").split(",").map(Number);
  const seconds = Number(option("--slice", "2"));
  const cycles = Number(option("--cycles", "15"));
  const connections = Number(option("--connections", "100"));
  const pinning = detectPinning();
  const servers: Server[] = [];
  try {
    servers.push(await start(pinning, "startline"));
    const reference = await fetchOne(servers[0]!.port, { method: "GET", path });
    if (reference.status < 200 || reference.status > 299) throw new Error(`startline answered ${reference.statusLine} to GET ${path}`);
    servers.push(await start(pinning, "node-http"));
    servers.push(await start(pinning, "ceiling", { CEILING_RESPONSE_B64: reference.raw.toString("base64") }));
    for (const depth of depths) for (const server of servers) await slice(pinning, server, path, depth, 2, connections);

    // slices[depth][kind][cycle]
    const slices = new Map(depths.map((d) => [d, new Map(servers.map((s) => [s.kind, [] as Slice[]]))]));
    for (let cycle = 0; cycle < cycles; cycle++) {
      for (const depth of depths) {
        // The order rotates, so that no server always runs first or last in a cycle.
        for (let k = 0; k < servers.length; k++) {
          const server = servers[(cycle + k) % servers.length]!;
          slices.get(depth)!.get(server.kind)!.push(await slice(pinning, server, path, depth, seconds, connections));
        }
      }
      process.stderr.write(`cycle ${cycle + 1} of ${cycles}\n`);
    }

    console.log(`GET ${path}: ${cycles} cycles of ${seconds} s slices, ${connections} connections, ${pinning.enabled ? `servers on core ${pinning.serverCore}, wrk on core ${pinning.clientCore}` : `not pinned (${pinning.reason})`}`);
    console.log("median (quartiles) over the cycles\n");
    console.log("| depth | server | req/s | CPU µs/req | p99 ms |");
    console.log("|---:|---|---:|---:|---:|");
    for (const depth of depths) {
      for (const server of servers) {
        const xs = slices.get(depth)!.get(server.kind)!;
        console.log(`| ${depth} | ${SERVER_LABEL[server.kind]} | ${spread(xs.map((x) => x.reqPerSec), 0)} | ${spread(xs.map((x) => x.cpuUsPerReq), 1)} | ${spread(xs.map((x) => x.p99Ms), 2)} |`);
      }
    }
    console.log("\nstartline's ratios within each cycle, median (quartiles):\n");
    console.log("| depth | req/s vs ceiling | req/s vs node:http | CPU/req vs node:http |");
    console.log("|---:|---:|---:|---:|");
    for (const depth of depths) {
      const of = (kind: ServerKind) => slices.get(depth)!.get(kind)!;
      const ratio = (a: readonly Slice[], b: readonly Slice[], f: (s: Slice) => number) => a.map((x, i) => f(x) / f(b[i]!));
      const me = of("startline");
      console.log(
        `| ${depth} | ${spread(ratio(me, of("ceiling"), (s) => s.reqPerSec), 2)} | ${spread(ratio(me, of("node-http"), (s) => s.reqPerSec), 2)} | ${spread(ratio(me, of("node-http"), (s) => s.cpuUsPerReq), 2)} |`,
      );
    }
  } finally {
    for (const server of servers) server.child.kill("SIGTERM");
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
